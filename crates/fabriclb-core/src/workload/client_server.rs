//! The CONGA testbed application (§5.2): every client keeps `connections_per_pair` persistent
//! TCP connections to every server it may use; requests arrive as one Poisson process for the
//! whole workload entry at the rate that gives the target `load`; each request picks a client
//! uniformly, then a server uniformly among the servers it may use (by default those under
//! another leaf), and the response — a flow whose size is drawn from the CDF — goes from the
//! server to the client (`src` = server, `dst` = client). The request message itself is not
//! simulated.
//!
//! With the defaults (every host is client and server, `cross_tor = true`) and
//! `load_basis = "fabric"`, this is the paper's setup: all traffic crosses the spine, and the
//! load is a fraction of the leaves' uplink capacity.

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
pub struct ClientServerConfig {
    /// Target offered load, a fraction in (0, 1] of the capacity named by `load_basis`.
    pub load: f64,
    /// "fabric": `load` is a fraction of the uplink capacity of the servers' leaves and counts
    /// the flows that cross leaves (CONGA §5.2); "host": a fraction of the servers' host-link
    /// capacity. See workloads/README.md for the formulas.
    pub load_basis: LoadBasis,
    /// Capacity that `load` is a fraction of (e.g. "320Gbps" for the CONGA testbed's two
    /// leaves × 160 Gbps), replacing the one computed from the topology. Use it to keep the
    /// baseline capacity when links are missing or failed.
    #[serde(default)]
    pub capacity: Option<Rate>,
    /// Which bytes `load` counts: "payload" (default) or "wire" (see workloads/README.md).
    #[serde(default)]
    pub load_bytes: LoadBytes,
    /// Flow-size CDF: "web-search", "data-mining", "data-mining-ns3", "enterprise", "hadoop",
    /// or a file path (relative to the current directory). Exactly one of `cdf` and `size`.
    #[serde(default)]
    pub cdf: Option<String>,
    /// Fixed response size instead of a CDF (or the mean, with `size_dist = "exponential"`).
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
    /// Hosts that run clients (names, indices, or leaf names standing for all their hosts);
    /// empty (default) = every host.
    #[serde(default)]
    pub clients: Vec<String>,
    /// Hosts that run servers, as `clients`; empty (default) = every host.
    #[serde(default)]
    pub servers: Vec<String>,
    /// Clients use only servers under other leaves (ToRs), as in the CONGA testbed
    /// (default true). When false, any server other than the client itself.
    #[serde(default = "yes")]
    pub cross_tor: bool,
    /// Persistent connections each client keeps to each server, 1..=255 (default 3, as in
    /// CONGA). A response takes an idle one, or queues behind the least-loaded one.
    #[serde(default = "three")]
    #[schemars(range(min = 1))]
    pub connections_per_pair: u8,
}
fn yes() -> bool {
    true
}
fn three() -> u8 {
    3
}

impl ClientServerConfig {
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

impl Pattern for ClientServerConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        arrivals::check_load(path, self.load)?;
        arrivals::check_capacity(path, self.capacity)?;
        if self.connections_per_pair == 0 {
            return Err(Error::config(
                &format!("{path}.connections_per_pair"),
                "must be in 1..=255",
            ));
        }
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
        let clients = arrivals::hosts_of(ctx.g, &self.clients, &format!("{path}.clients"))?;
        let servers = arrivals::hosts_of(ctx.g, &self.servers, &format!("{path}.servers"))?;
        let pairs = PairSampler::new(
            ctx.g,
            clients,
            servers,
            self.cross_tor,
            path,
            ("client", "server"),
        )?;
        let target = arrivals::Load {
            load: self.load,
            basis: self.load_basis,
            capacity: self.capacity,
            bytes: self.load_bytes,
        };
        let rate =
            arrivals::arrival_rate(ctx, path, &target, pairs.seconds(), pairs.p_cross(), &law)?;
        // Each (client, server) pair that gets a request opens its pool of connections.
        let expected = rate * ctx.duration_ps as f64 / crate::units::PS_PER_S as f64;
        let used = (pairs.firsts().len() as f64 * pairs.seconds().len() as f64).min(expected + 1.0);
        crate::limits::check(
            &format!("{path}.connections_per_pair"),
            "the persistent connections (pairs used × connections_per_pair)",
            (used * self.connections_per_pair as f64).min(u64::MAX as f64) as u128,
            crate::limits::MAX_CONNECTIONS,
        )?;
        let conn = ConnPolicy::Persistent {
            per_pair: self.connections_per_pair,
        };
        // The pair is (client, server); the response flows server -> client.
        arrivals::poisson_flows(ctx, path, rng, rate, &pairs, &law, conn, |c, s| (s, c), out)
    }
}
