//! Random permutation traffic: hosts are paired by a random derangement (nobody sends to
//! itself); each sends one flow to its partner at `start`. The benchmarks use long flows.

use super::{ConnPolicy, FlowSpec, GenCtx, Pattern, UNBOUNDED};
use crate::error::Error;
use crate::rng::Rng;
use crate::units::{Bytes, Duration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermutationConfig {
    /// Flow size; omit for flows that last the whole run.
    #[serde(default)]
    pub size: Option<Bytes>,
    /// When the flows start.
    #[serde(default)]
    pub start: Duration,
    /// Only pair hosts under different ToRs.
    #[serde(default)]
    pub cross_tor: bool,
}

impl Pattern for PermutationConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        if self.size.map(|s| s.0 == 0).unwrap_or(false) {
            return Err(Error::config(
                &format!("{path}.size"),
                "must be > 0 (omit it for unbounded flows)",
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
        let n = ctx.g.n_hosts as usize;
        super::check_flow_count(path, out, n as u128)?;
        if n < 2 {
            return Err(Error::config(
                path,
                "a permutation needs at least two hosts",
            ));
        }
        let ok = |perm: &[u32]| {
            perm.iter().enumerate().all(|(i, &p)| {
                i as u32 != p
                    && (!self.cross_tor || ctx.g.host_tor[i] != ctx.g.host_tor[p as usize])
            })
        };
        let mut perm: Vec<u32> = (0..n as u32).collect();
        let mut tries = 0;
        loop {
            rng.shuffle(&mut perm);
            if ok(&perm) {
                break;
            }
            tries += 1;
            if tries > 10_000 {
                return Err(Error::config(path, "could not find a permutation with the requested constraints (cross_tor needs at least two ToRs)"));
            }
        }
        for (src, &dst) in perm.iter().enumerate() {
            out.push(FlowSpec {
                start_ps: self.start.0,
                src: src as u32,
                dst,
                size_bytes: self.size.map(|s| s.0).unwrap_or(UNBOUNDED),
                conn: ConnPolicy::New,
                app: None,
                workload: ctx.workload,
                group: 0,
            });
        }
        Ok(())
    }
}
