//! Flows listed one by one (the papers' small examples, tests).

use super::{host_by_name, AppLimit, ConnPolicy, FlowSpec, GenCtx, Pattern, UNBOUNDED};
use crate::error::Error;
use crate::rng::Rng;
use crate::units::{Bytes, Duration, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplicitFlow {
    /// Sending host (name such as "H3", or index).
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// Size; omit for a flow that lasts the whole run.
    #[serde(default)]
    pub size: Option<Bytes>,
    #[serde(default)]
    pub start: Duration,
    /// Application rate limit.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// Repeat this flow `count` times (separate connections).
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub count: u32,
}
fn one() -> u32 {
    1
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplicitConfig {
    pub flows: Vec<ExplicitFlow>,
}

impl Pattern for ExplicitConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        for (i, f) in self.flows.iter().enumerate() {
            if f.size.map(|s| s.0 == 0).unwrap_or(false) {
                return Err(Error::config(
                    &format!("{path}.flows[{i}].size"),
                    "must be > 0",
                ));
            }
            if f.rate.map(|r| r.0 == 0).unwrap_or(false) {
                return Err(Error::config(
                    &format!("{path}.flows[{i}].rate"),
                    "must be > 0",
                ));
            }
        }
        Ok(())
    }
    fn generate(
        &self,
        path: &str,
        ctx: &GenCtx,
        _rng: &mut Rng,
        out: &mut Vec<FlowSpec>,
    ) -> Result<(), Error> {
        let total: u128 = self.flows.iter().map(|f| f.count as u128).sum();
        super::check_flow_count(path, out, total)?;
        for (i, f) in self.flows.iter().enumerate() {
            let src = host_by_name(ctx.g, &f.src, &format!("{path}.flows[{i}].src"))?;
            let dst = host_by_name(ctx.g, &f.dst, &format!("{path}.flows[{i}].dst"))?;
            if src == dst {
                return Err(Error::config(
                    &format!("{path}.flows[{i}]"),
                    "src and dst are the same host",
                ));
            }
            for _ in 0..f.count {
                out.push(FlowSpec {
                    start_ps: f.start.0,
                    src,
                    dst,
                    size_bytes: f.size.map(|s| s.0).unwrap_or(UNBOUNDED),
                    conn: ConnPolicy::New,
                    app: f.rate.map(|r| AppLimit {
                        rate_bps: r.0,
                        write_bytes: 0,
                    }),
                    workload: ctx.workload,
                    group: 0,
                });
            }
        }
        Ok(())
    }
}
