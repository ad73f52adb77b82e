//! Incast (CONGA §5.3, after Vasudevan et al.): a client repeatedly requests a file of `size`
//! bytes striped over N servers, which all answer at once. Each request is N flows from the
//! servers to the client with the same start time and the same `group` id (1, 2, ... per
//! request; together with the `workload` column it identifies the request). Server i sends
//! `size / N` bytes, the first `size mod N` servers one byte more.
//!
//! Flows are generated before the run, so "the next request once the previous one completes"
//! cannot be expressed: requests start at `start + k·interval`, k = 0..requests−1, and those
//! at or after the end of `duration` are not generated. Pick `interval` longer than a
//! request takes (10 MB at 10 Gbps is 8 ms plus timeouts) to keep them apart.

use super::{host_by_name, ConnPolicy, FlowSpec, GenCtx, Pattern};
use crate::error::Error;
use crate::rng::Rng;
use crate::units::{Bytes, Duration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// At most this many requests per incast entry.
const MAX_REQUESTS: u32 = 1_000_000;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    /// The requesting host (name or index); omitted = a host drawn at random.
    #[serde(default)]
    pub client: Option<String>,
    /// Fan-in N: number of servers, drawn at random (once, for all requests) among the other
    /// hosts; 1..=hosts−1. May be omitted when `server_hosts` is given.
    #[serde(default)]
    pub servers: Option<u32>,
    /// The servers, by name or index, instead of a random draw (must not include the client).
    #[serde(default)]
    pub server_hosts: Vec<String>,
    /// Total bytes per request, split evenly over the servers (default "10MB", as in CONGA);
    /// at least one byte per server.
    #[serde(default = "ten_mb")]
    pub size: Bytes,
    /// Number of requests, 1..=1000000 (default 1).
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub requests: u32,
    /// Time between the starts of consecutive requests; required (> 0) when `requests` > 1.
    #[serde(default)]
    pub interval: Duration,
    /// Start of the first request (default 0).
    #[serde(default)]
    pub start: Duration,
    /// Responses use one persistent connection per server (default true, as incast
    /// applications do); false = a new connection (with handshake) per response.
    #[serde(default = "yes")]
    pub persistent: bool,
}
fn ten_mb() -> Bytes {
    Bytes(10_000_000)
}
fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}

impl Pattern for IncastConfig {
    fn validate(&self, path: &str) -> Result<(), Error> {
        let n = match (self.servers, self.server_hosts.len()) {
            (None, 0) => {
                return Err(Error::config(
                    &format!("{path}.servers"),
                    "is missing: give the fan-in N (>= 1) or the list `server_hosts`",
                ))
            }
            (Some(0), _) => return Err(Error::config(&format!("{path}.servers"), "must be >= 1")),
            (Some(n), 0) => n as u64,
            (None, k) => k as u64,
            (Some(n), k) if n as usize == k => k as u64,
            (Some(n), k) => {
                return Err(Error::config(
                    &format!("{path}.servers"),
                    format!("is {n} but `server_hosts` lists {k} hosts; omit one of them"),
                ))
            }
        };
        if self.size.0 < n {
            return Err(Error::config(
                &format!("{path}.size"),
                format!(
                    "{} is less than one byte per server ({n} servers)",
                    self.size
                ),
            ));
        }
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return Err(Error::config(
                &format!("{path}.requests"),
                format!("must be in 1..={MAX_REQUESTS}"),
            ));
        }
        if self.requests > 1 && self.interval.0 == 0 {
            return Err(Error::config(
                &format!("{path}.interval"),
                "must be > 0 when requests > 1 (e.g. \"20ms\")",
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
        let nh = ctx.g.n_hosts;
        let client = match &self.client {
            Some(c) => host_by_name(ctx.g, c, &format!("{path}.client"))?,
            None => rng.below(nh as u64) as u32,
        };
        let servers: Vec<u32> = if self.server_hosts.is_empty() {
            let n = self.servers.unwrap_or(1);
            if n >= nh {
                return Err(Error::config(
                    &format!("{path}.servers"),
                    format!(
                        "fan-in {n} needs {n} hosts besides the client; the topology has {} hosts",
                        nh
                    ),
                ));
            }
            let mut others: Vec<u32> = (0..nh).filter(|&h| h != client).collect();
            // Partial Fisher-Yates: the first n of a random permutation.
            for i in 0..n as usize {
                let j = i + rng.below((others.len() - i) as u64) as usize;
                others.swap(i, j);
            }
            others.truncate(n as usize);
            others
        } else {
            let mut v = vec![];
            for (i, s) in self.server_hosts.iter().enumerate() {
                let p = format!("{path}.server_hosts[{i}]");
                let h = host_by_name(ctx.g, s, &p)?;
                if h == client {
                    return Err(Error::config(
                        &p,
                        "is the client; a server must be another host",
                    ));
                }
                if v.contains(&h) {
                    return Err(Error::config(&p, format!("'{s}' is listed twice")));
                }
                v.push(h);
            }
            v
        };
        let n = servers.len() as u64;
        super::check_flow_count(path, out, self.requests as u128 * n as u128)?;
        let (base, extra) = (self.size.0 / n, self.size.0 % n);
        let conn = if self.persistent {
            ConnPolicy::Persistent { per_pair: 1 }
        } else {
            ConnPolicy::New
        };
        for r in 0..self.requests as u64 {
            let t = self
                .start
                .0
                .saturating_add(r.saturating_mul(self.interval.0));
            if t >= ctx.duration_ps {
                break;
            }
            for (i, &s) in servers.iter().enumerate() {
                out.push(FlowSpec {
                    start_ps: t,
                    src: s,
                    dst: client,
                    size_bytes: base + ((i as u64) < extra) as u64,
                    conn,
                    app: None,
                    workload: ctx.workload,
                    group: r as u32 + 1,
                });
            }
        }
        Ok(())
    }
}
