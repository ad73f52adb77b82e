//! Constant-rate flows without congestion control (UDP-like): full-size packets at a fixed
//! rate on the wire from `start` to `stop`, whatever the network does to them (no ACKs, no
//! retransmission). EMAN's testbed takes capacity from one path with such a flow (§V-B2: a
//! 500 Mbps UDP flow on path 1). `via` pins the flow to a path: its UDP source port is chosen,
//! as a testbed would, so that the fabric's hash takes a path through those switches.

use super::{host_by_name, CbrSpec, ConnPolicy, FlowSpec, GenCtx, Pattern, NO_STOP};
use crate::error::Error;
use crate::rng::Rng;
use crate::units::{Duration, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most switches `via` may name.
pub const MAX_VIA: usize = 4;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CbrFlow {
    /// Sending host (name such as "H3", or index).
    pub src: String,
    /// Receiving host.
    pub dst: String,
    /// Rate on the wire (frames with preamble and gap), > 0.
    pub rate: Rate,
    #[serde(default)]
    pub start: Duration,
    /// When it stops (omit: at the end of the run).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Switches its path must cross (e.g. ["S0"]), at most 4; empty: wherever the hash of
    /// its header sends it. Pinning needs a scheme that picks paths by a hash of the header:
    /// ecmp, wcmp, or an edge scheme (eman, bw-oracle, clove, hermes, presto, ...: the fabric
    /// hashes the outer header).
    #[serde(default)]
    pub via: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CbrConfig {
    pub flows: Vec<CbrFlow>,
}

impl Pattern for CbrConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("{path}.flows[{i}]");
            if f.rate.0 == 0 {
                return Err(Error::config(&format!("{p}.rate"), "must be > 0"));
            }
            if let Some(stop) = f.stop.filter(|s| s.0 <= f.start.0) {
                return Err(Error::config(
                    &format!("{p}.stop"),
                    format!(
                        "{stop} is not after the flow's start ({}); allowed: later than start",
                        f.start
                    ),
                ));
            }
            if f.via.len() > MAX_VIA {
                return Err(Error::config(
                    &format!("{p}.via"),
                    format!("names {} switches; allowed: at most {MAX_VIA}", f.via.len()),
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
        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("{path}.flows[{i}]");
            let src = host_by_name(ctx.g, &f.src, &format!("{p}.src"))?;
            let dst = host_by_name(ctx.g, &f.dst, &format!("{p}.dst"))?;
            if src == dst {
                return Err(Error::config(&p, "src and dst are the same host"));
            }
            let mut via = [u32::MAX; MAX_VIA];
            for (k, name) in f.via.iter().enumerate() {
                via[k] = match ctx.g.node_id(name) {
                    Some(n) if !ctx.g.is_host(n) => n,
                    _ => {
                        return Err(Error::config(
                            &format!("{p}.via[{k}]"),
                            format!("there is no switch named '{name}'"),
                        ))
                    }
                };
            }
            out.push(FlowSpec {
                start_ps: f.start.0,
                src,
                dst,
                size_bytes: 0,
                conn: ConnPolicy::New,
                app: None,
                workload: ctx.workload,
                group: 0,
                stop_ps: f.stop.map_or(NO_STOP, |d| d.0),
                cbr: Some(CbrSpec {
                    rate_bps: f.rate.0,
                    via,
                    sport: 0,
                }),
            });
        }
        Ok(())
    }
}
