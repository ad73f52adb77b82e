//! One flow per request, each on a new TCP connection (with handshake): Poisson arrivals at the
//! rate that gives the target `load`; each flow picks a source uniformly among `src`, then a
//! destination uniformly among the `dst` hosts other than the source (with `cross_tor`, only
//! those under another ToR); sizes come from the CDF (or a fixed / exponential `size`).

use super::arrivals::{
    self, default_packet_size, LoadBasis, LoadBytes, PairSampler, SizeDist, SizeFields,
};
use super::cdf::{CdfScale, CdfUnit};
use super::{ConnPolicy, FlowSpec, GenCtx, Pattern};
use crate::error::Error;
use crate::rng::Rng;
use crate::units::{Bytes, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoissonConfig {
    /// Target offered load, a fraction in (0, 1] of the capacity named by `load_basis`.
    pub load: f64,
    /// "host": `load` is a fraction of the sending hosts' link capacity (all flows count);
    /// "fabric": a fraction of the uplink capacity of the senders' leaves, counting only flows
    /// between different leaves (intra-leaf flows, if allowed, come on top). See
    /// workloads/README.md for the formulas.
    pub load_basis: LoadBasis,
    /// Capacity that `load` is a fraction of, replacing the one computed from the topology.
    #[serde(default)]
    pub capacity: Option<Rate>,
    /// Which bytes `load` counts: "payload" (default) or "wire" (see workloads/README.md).
    #[serde(default)]
    pub load_bytes: LoadBytes,
    /// Flow-size CDF: "web-search", "data-mining", "data-mining-ns3", "enterprise", "hadoop",
    /// or a file path (relative to the current directory). Exactly one of `cdf` and `size`.
    #[serde(default)]
    pub cdf: Option<String>,
    /// Fixed flow size instead of a CDF (or the mean, with `size_dist = "exponential"`).
    #[serde(default)]
    pub size: Option<Bytes>,
    /// With `size`: "fixed" (default) or "exponential".
    #[serde(default)]
    pub size_dist: SizeDist,
    /// Unit of the sizes in a CDF file: "bytes" (default) or "packets" (of `packet_size`).
    #[serde(default)]
    pub cdf_unit: CdfUnit,
    /// Scale of the cdf column of a CDF file: "auto" (default: percent if the last value is
    /// 100), "fraction" or "percent".
    #[serde(default)]
    pub cdf_scale: CdfScale,
    /// Bytes per packet for `cdf_unit = "packets"` (the MSS; default "1460B").
    #[serde(default = "default_packet_size")]
    pub packet_size: Bytes,
    /// Sending hosts (names, indices, or leaf names standing for all their hosts); empty
    /// (default) = every host.
    #[serde(default)]
    pub src: Vec<String>,
    /// Receiving hosts, as `src`; empty (default) = every host.
    #[serde(default)]
    pub dst: Vec<String>,
    /// Only pair hosts under different ToRs (default false).
    #[serde(default)]
    pub cross_tor: bool,
}

impl PoissonConfig {
    fn sizes(&self) -> SizeFields<'_> {
        SizeFields {
            cdf: &self.cdf,
            size: self.size,
            size_dist: self.size_dist,
            cdf_unit: self.cdf_unit,
            cdf_scale: self.cdf_scale,
            packet_size: self.packet_size,
        }
    }
}

impl Pattern for PoissonConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        arrivals::check_load(path, self.load)?;
        arrivals::check_capacity(path, self.capacity)?;
        self.sizes().law(path, None)?;
        Ok(())
    }
    fn generate(
        &self,
        path: &str,
        ctx: &GenCtx,
        rng: &mut Rng,
        out: &mut Vec<FlowSpec>,
    ) -> Result<(), Error> {
        let law = self.sizes().law(path, ctx.base_dir)?;
        let srcs = arrivals::hosts_of(ctx.g, &self.src, &format!("{path}.src"))?;
        let dsts = arrivals::hosts_of(ctx.g, &self.dst, &format!("{path}.dst"))?;
        let pairs = PairSampler::new(
            ctx.g,
            srcs,
            dsts,
            self.cross_tor,
            path,
            ("source", "destination"),
        )?;
        let target = arrivals::Load {
            load: self.load,
            basis: self.load_basis,
            capacity: self.capacity,
            bytes: self.load_bytes,
        };
        let rate =
            arrivals::arrival_rate(ctx, path, &target, pairs.firsts(), pairs.p_cross(), &law)?;
        arrivals::poisson_flows(
            ctx,
            path,
            rng,
            rate,
            &pairs,
            &law,
            ConnPolicy::New,
            |a, b| (a, b),
            out,
        )
    }
}
