//! Traffic: what flows start when, between which hosts, how large, over which connections.
//!
//! Each pattern is one file with one config struct implementing [`Pattern`], registered by
//! one variant of [`WorkloadConfig`] (its serde tag `pattern` is the name scenarios use).
//! Generation happens once, before the run, into a list of [`FlowSpec`] sorted by start time;
//! the simulation feeds them in lazily. A pattern may read the fabric graph (hosts, ToRs,
//! rates) but nothing of the running simulation.

pub mod arrivals;
mod bulk;
pub mod cbr;
pub mod cdf;
mod client_server;
mod explicit;
pub mod hdfs;
mod incast;
mod matrix;
mod permutation;
mod poisson;

pub use arrivals::{LoadBasis, SizeDist};
pub use bulk::BulkConfig;
pub use cbr::{CbrConfig, CbrFlow};
pub use cdf::{Cdf, CdfOptions, CdfScale, CdfUnit, SizeLaw};
pub use client_server::ClientServerConfig;
pub use explicit::{ExplicitConfig, ExplicitFlow};
pub use hdfs::{HdfsConfig, JobPlan};
pub use incast::IncastConfig;
pub use matrix::{MatrixConfig, MatrixEntry};
pub use permutation::PermutationConfig;
pub use poisson::PoissonConfig;

use crate::error::Error;
use crate::net::topology::Graph;
use crate::rng::Rng;
use crate::units::Time;

/// Size of a flow that never ends (long-lived).
pub const UNBOUNDED: u64 = u64::MAX / 4;

/// How a flow gets its TCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnPolicy {
    /// A new connection (with handshake) per flow.
    New,
    /// One of `per_pair` persistent, pre-established connections between the pair; the flow
    /// goes to an idle one, or queues behind the one with the least data outstanding.
    Persistent { per_pair: u8 },
}

/// An application that produces data at `rate_bps` on average: continuously (`write_bytes` =
/// 0: the sender sends each full segment as soon as it exists, a paced stream), or
/// `write_bytes` at a time, every `write_bytes / rate` (on/off traffic with idle gaps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppLimit {
    pub rate_bps: u64,
    pub write_bytes: u64,
}

/// One flow to start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSpec {
    pub start_ps: Time,
    /// Data goes from `src` to `dst` (host ids).
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub conn: ConnPolicy,
    /// Application rate limit (bulk flows).
    pub app: Option<AppLimit>,
    /// Index of the workload entry that made it.
    pub workload: u16,
    /// Flows that belong together (an incast request), 0 = none.
    pub group: u32,
    /// When the application stops writing (`NO_STOP`: never): what it wrote by then is the
    /// flow's size (a long-lived flow with a stop time).
    pub stop_ps: Time,
    /// A constant-rate flow without congestion control (UDP-like) instead of a TCP flow.
    pub cbr: Option<CbrSpec>,
}

/// `FlowSpec::stop_ps` of a flow without a stop time.
pub const NO_STOP: Time = Time::MAX;

/// A constant-rate (UDP-like) flow: full-size packets at `rate_bps` on the wire, from the
/// flow's start to its stop, and the switches its path must cross (`u32::MAX`: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrSpec {
    pub rate_bps: u64,
    pub via: [u32; cbr::MAX_VIA],
    /// Its UDP source port, chosen when the simulation is built (to pin it to `via`).
    pub sport: u16,
}

/// What a pattern may read.
pub struct GenCtx<'a> {
    pub g: &'a Graph,
    /// Arrivals stop at this time.
    pub duration_ps: Time,
    pub workload: u16,
    /// Path of the scenario file, to resolve relative CDF paths (None for dicts).
    pub base_dir: Option<&'a std::path::Path>,
    /// What a data segment costs on the wire (for loads counted in wire bytes).
    pub wire: arrivals::WireCost,
}

/// A traffic pattern.
pub trait Pattern {
    /// Range checks; `path` is the config's location (`workload[0]`).
    fn validate(&self, path: &str) -> Result<(), Error>;
    /// Append this pattern's flows (any order; the caller sorts).
    fn generate(
        &self,
        path: &str,
        ctx: &GenCtx,
        rng: &mut Rng,
        out: &mut Vec<FlowSpec>,
    ) -> Result<(), Error>;
}

crate::tagged_enum! {
    /// One traffic source.
    pub enum WorkloadConfig tag = "pattern" {
        /// A random permutation: every host sends to one other host (long or fixed-size flows).
        "permutation" => Permutation(PermutationConfig),
        /// Flows listed one by one.
        "explicit" => Explicit(ExplicitConfig),
        /// Long-lived flows between named hosts, optionally rate-limited by the application.
        "bulk" => Bulk(BulkConfig),
        /// The CONGA testbed application: Poisson requests from clients to servers under other
        /// leaves, responses (sizes from a CDF) on persistent connections, at a target load.
        "client-server" => ClientServer(ClientServerConfig),
        /// Poisson flows between random hosts, one new connection each, at a target load.
        "poisson" => Poisson(PoissonConfig),
        /// Incast: a client's request striped over N servers that answer at once, repeated.
        "incast" => Incast(IncastConfig),
        /// An explicit traffic matrix between leaves or hosts: Poisson flows at given rates.
        "matrix" => Matrix(MatrixConfig),
        /// Constant-rate flows without congestion control (UDP-like), optionally pinned to a path.
        "cbr" => Cbr(CbrConfig),
        /// An HDFS-like replicated write job (TestDFSIO): files written block by block through
        /// pipelines of DataNodes, limited by the disks; reports its completion time.
        "hdfs" => Hdfs(HdfsConfig),
    }
}

macro_rules! each {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            WorkloadConfig::Permutation($c) => $e,
            WorkloadConfig::Explicit($c) => $e,
            WorkloadConfig::Bulk($c) => $e,
            WorkloadConfig::ClientServer($c) => $e,
            WorkloadConfig::Poisson($c) => $e,
            WorkloadConfig::Incast($c) => $e,
            WorkloadConfig::Matrix($c) => $e,
            WorkloadConfig::Cbr($c) => $e,
            WorkloadConfig::Hdfs($c) => $e,
        }
    };
}

impl WorkloadConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        each!(self, c => c.validate(path))
    }
    pub fn generate(
        &self,
        path: &str,
        ctx: &GenCtx,
        rng: &mut Rng,
        out: &mut Vec<FlowSpec>,
    ) -> Result<(), Error> {
        each!(self, c => c.generate(path, ctx, rng, out))
    }
    /// The job of an `hdfs` entry, if this is one.
    pub fn job(&self) -> Option<&HdfsConfig> {
        match self {
            WorkloadConfig::Hdfs(c) => Some(c),
            _ => None,
        }
    }
    /// Whether some flow of this workload has a stop time.
    pub fn has_stop(&self) -> bool {
        match self {
            WorkloadConfig::Explicit(c) => c.flows.iter().any(|f| f.stop.is_some()),
            WorkloadConfig::Bulk(c) => c.stop.is_some(),
            _ => false,
        }
    }
    /// Whether the flows run on pre-established (persistent) connections, without a handshake.
    pub fn persistent(&self) -> bool {
        match self {
            WorkloadConfig::ClientServer(_) => true,
            WorkloadConfig::Incast(c) => c.persistent,
            _ => false,
        }
    }
    /// Warnings when the entry offers more than the links it names can carry (a `capacity`
    /// above the topology's, matrix rates above the hosts' links): such a run never reaches a
    /// steady state, but it is not an error.
    pub fn capacity_warnings(&self, path: &str, g: &Graph) -> Result<Vec<String>, Error> {
        use crate::units::Rate;
        let load = |load: f64, basis: LoadBasis, cap: Option<Rate>, senders: Vec<u32>| {
            let Some(cap) = cap else {
                return Ok(vec![]);
            };
            let topo = arrivals::basis_capacity_bps(g, basis, &senders, None, path)?;
            let offered = load * cap.0 as f64;
            Ok(if offered > topo * (1.0 + 1e-9) {
                let b = serde_json::to_value(basis).expect("basis");
                vec![format!(
                    "{path}: load {load} of capacity {cap} offers {}, more than the {} that                      load_basis = {b} gives for its senders: queues will grow for the whole run",
                    Rate(offered as u64),
                    Rate(topo as u64)
                )]
            } else {
                vec![]
            })
        };
        match self {
            WorkloadConfig::Poisson(c) => load(
                c.load,
                c.load_basis,
                c.capacity,
                arrivals::hosts_of(g, &c.src, &format!("{path}.src"))?,
            ),
            WorkloadConfig::ClientServer(c) => load(
                c.load,
                c.load_basis,
                c.capacity,
                arrivals::hosts_of(g, &c.servers, &format!("{path}.servers"))?,
            ),
            WorkloadConfig::Matrix(c) => {
                let host_bps = |hs: &[u32]| -> u64 {
                    hs.iter()
                        .map(|&h| g.links[g.host_uplink[h as usize] as usize].rate_bps)
                        .sum()
                };
                let mut out = vec![];
                for (i, e) in c.entries.iter().enumerate() {
                    let p = format!("{path}.entries[{i}]");
                    let src = arrivals::hosts_of_one(g, &e.src, &format!("{p}.src"))?;
                    let dst = arrivals::hosts_of_one(g, &e.dst, &format!("{p}.dst"))?;
                    let cap = host_bps(&src).min(host_bps(&dst));
                    if e.rate.0 > cap {
                        out.push(format!(
                            "{p}.rate: {} is more than the {} of the host links at its ends: \
                             queues will grow for the whole run",
                            e.rate,
                            Rate(cap)
                        ));
                    }
                }
                Ok(out)
            }
            _ => Ok(vec![]),
        }
    }
    /// Pattern names, read from the schema of this enum (the enum is the only list).
    pub fn patterns() -> Vec<String> {
        crate::lb::tag_names::<WorkloadConfig>("pattern")
    }
}

/// The flow limit (`limits::MAX_FLOWS`, all workload entries together): `more` flows on top of
/// the `out` already generated, checked before they are.
pub fn check_flow_count(path: &str, out: &[FlowSpec], more: u128) -> Result<(), Error> {
    crate::limits::check(
        path,
        "the number of flows (of all workloads)",
        out.len() as u128 + more,
        crate::limits::MAX_FLOWS,
    )
}

/// Resolve a host given by name ("H3") or index ("3").
pub fn host_by_name(g: &Graph, name: &str, path: &str) -> Result<u32, Error> {
    if let Ok(i) = name.parse::<u32>() {
        if i < g.n_hosts {
            return Ok(i);
        }
        return Err(Error::config(
            path,
            format!("host index {i} is out of range (0..{})", g.n_hosts),
        ));
    }
    match g.node_id(name) {
        Some(id) if g.is_host(id) => Ok(id),
        Some(_) => Err(Error::config(
            path,
            format!("'{name}' is a switch, not a host"),
        )),
        None => Err(Error::config(
            path,
            format!("there is no host named '{name}'"),
        )),
    }
}
