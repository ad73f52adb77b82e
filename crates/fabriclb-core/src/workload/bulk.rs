//! Long-lived bulk flows: `count` flows from each host of `src` to hosts of `dst` (round robin),
//! optionally limited by the application to `rate` each (CONGA Fig. 2: many 1 Gbps flows).

use super::{host_by_name, AppLimit, ConnPolicy, FlowSpec, GenCtx, Pattern, UNBOUNDED};
use crate::error::Error;
use crate::rng::Rng;
use crate::units::{Bytes, Duration, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkConfig {
    /// Sending hosts (names or indices).
    pub src: Vec<String>,
    /// Receiving hosts.
    pub dst: Vec<String>,
    /// Flows per sending host, >= 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub flows_per_src: u32,
    /// Application rate limit per flow (omit for unlimited).
    #[serde(default)]
    pub rate: Option<Rate>,
    /// With `rate`: the application writes this many bytes at a time, every `write / rate`,
    /// so the flow alternates line-rate bursts and idle gaps (gaps longer than the flowlet
    /// timeout start new flowlets). Omit for a continuous stream, sent as each full segment
    /// becomes available (paced, no gaps).
    #[serde(default)]
    pub write: Option<Bytes>,
    /// Start time; flows are spread over [start, start + stagger) to avoid lock-step.
    #[serde(default)]
    pub start: Duration,
    #[serde(default)]
    pub stagger: Duration,
}
fn one() -> u32 {
    1
}

impl Pattern for BulkConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        if self.src.is_empty() || self.dst.is_empty() {
            return Err(Error::config(
                path,
                "bulk flows need at least one src and one dst host",
            ));
        }
        if self.flows_per_src == 0 {
            return Err(Error::config(
                &format!("{path}.flows_per_src"),
                "must be >= 1",
            ));
        }
        match (self.write, self.rate) {
            (Some(w), _) if w.0 == 0 => {
                return Err(Error::config(
                    &format!("{path}.write"),
                    "must be > 0 (omit it for a continuous stream)",
                ))
            }
            (Some(_), None) => {
                return Err(Error::config(
                    &format!("{path}.write"),
                    "needs a rate: the application writes `write` bytes every write / rate",
                ))
            }
            _ => {}
        }
        if self.rate.map(|r| r.0 == 0).unwrap_or(false) {
            return Err(Error::config(
                &format!("{path}.rate"),
                "must be > 0 (omit it for no limit)",
            ));
        }
        Ok(())
    }
    fn generate(
        &self,
        path: &str,
        ctx: &GenCtx,
        rng: &mut Rng,
        out: &mut Vec<FlowSpec>,
    ) -> Result<(), Error> {
        let srcs = self
            .src
            .iter()
            .enumerate()
            .map(|(i, s)| host_by_name(ctx.g, s, &format!("{path}.src[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let dsts = self
            .dst
            .iter()
            .enumerate()
            .map(|(i, s)| host_by_name(ctx.g, s, &format!("{path}.dst[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        super::check_flow_count(path, out, srcs.len() as u128 * self.flows_per_src as u128)?;
        let mut k = 0usize;
        for &s in &srcs {
            for _ in 0..self.flows_per_src {
                let d = dsts[k % dsts.len()];
                k += 1;
                if s == d {
                    return Err(Error::config(
                        path,
                        "a bulk flow would go from a host to itself",
                    ));
                }
                let jitter = if self.stagger.0 > 0 {
                    rng.below(self.stagger.0)
                } else {
                    0
                };
                out.push(FlowSpec {
                    start_ps: self.start.0 + jitter,
                    src: s,
                    dst: d,
                    size_bytes: UNBOUNDED,
                    conn: ConnPolicy::New,
                    app: self.rate.map(|r| AppLimit {
                        rate_bps: r.0,
                        write_bytes: self.write.map(|w| w.0).unwrap_or(0),
                    }),
                    workload: ctx.workload,
                    group: 0,
                });
            }
        }
        Ok(())
    }
}
