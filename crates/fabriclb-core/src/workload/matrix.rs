//! An explicit traffic matrix: for each entry, Poisson flows (sizes from the CDF, one new
//! connection each) from random hosts of `src` to random hosts of `dst` at the average rate
//! `rate` (λ = rate / (8·E[S]) flows/s). `src` and `dst` name a leaf (ToR: all its hosts) or a
//! single host. A flow never goes from a host to itself. Entries are generated one after
//! another from the same random stream.

use super::arrivals::{self, default_packet_size, PairSampler, SizeDist, SizeFields};
use super::cdf::{CdfScale, CdfUnit};
use super::{ConnPolicy, FlowSpec, GenCtx, Pattern};
use crate::error::Error;
use crate::rng::Rng;
use crate::units::{Bytes, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One matrix entry.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixEntry {
    /// Source: a leaf / ToR name ("L0", all hosts under it) or a host ("H3" or an index).
    pub src: String,
    /// Destination, as `src`.
    pub dst: String,
    /// Average offered rate from `src` to `dst` (payload bits per second, e.g. "40Gbps"), > 0.
    pub rate: Rate,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixConfig {
    /// The matrix, one entry per (src, dst) with traffic.
    pub entries: Vec<MatrixEntry>,
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
    /// Scale of the cdf column of a CDF file: "auto" (default), "fraction" or "percent".
    #[serde(default)]
    pub cdf_scale: CdfScale,
    /// Bytes per packet for `cdf_unit = "packets"` (the MSS; default "1460B").
    #[serde(default = "default_packet_size")]
    pub packet_size: Bytes,
}

impl MatrixConfig {
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

impl Pattern for MatrixConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        if self.entries.is_empty() {
            return Err(Error::config(
                &format!("{path}.entries"),
                "the matrix needs at least one entry (src, dst, rate)",
            ));
        }
        for (i, e) in self.entries.iter().enumerate() {
            if e.rate.0 == 0 {
                return Err(Error::config(
                    &format!("{path}.entries[{i}].rate"),
                    "must be > 0 (leave the entry out for no traffic)",
                ));
            }
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
        for (i, e) in self.entries.iter().enumerate() {
            let p = format!("{path}.entries[{i}]");
            let srcs = arrivals::hosts_of_one(ctx.g, &e.src, &format!("{p}.src"))?;
            let dsts = arrivals::hosts_of_one(ctx.g, &e.dst, &format!("{p}.dst"))?;
            let pairs = PairSampler::new(ctx.g, srcs, dsts, false, &p, ("source", "destination"))?;
            let rate = e.rate.0 as f64 / (8.0 * law.mean());
            arrivals::poisson_flows(
                ctx,
                &p,
                rng,
                rate,
                &pairs,
                &law,
                ConnPolicy::New,
                |a, b| (a, b),
                out,
            )?;
        }
        Ok(())
    }
}
