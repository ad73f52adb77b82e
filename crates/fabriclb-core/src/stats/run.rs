//! What a finished run hands to this layer ([`Finished`], built by the simulation) and what
//! it gets back ([`RunResult`]), and the records the simulation keeps for it as it runs.
//! This layer reads them; it never sees the simulator itself.

use crate::host::{Hosts, NetRef};
use crate::net::port::PortMark;
use crate::scenario::Scenario;
use crate::table::Table;
use crate::units::Time;
use std::collections::HashMap;

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The content of summary.json (see docs/OUTPUTS.md).
    pub summary: serde_json::Value,
    /// One row per flow (request).
    pub flows: Table,
    /// One row per directed link (output port).
    pub ports: Table,
    /// One row per (window, port) with throughput, plus leaf-uplink imbalance rows.
    pub windows: Table,
    /// Time-weighted queue-length distributions of the ports named in `measure.queue_ports`.
    pub queues: Table,
    /// Sampled cwnd / RTT / rate of the connections named in `measure.trace_flows`.
    pub traces: Table,
    /// Flowlet sizes per gap and size bin, of the links named in `measure.flowlet_links`.
    pub flowlet_sizes: Table,
    /// Active flows and flowlets per 1 ms window, as a distribution, of the same links.
    pub flowlet_concurrency: Table,
}

/// Counters of the whole run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub hops: u64,
    pub events: u64,
    pub app_bytes_at_warmup: u64,
    pub app_bytes_at_end: u64,
    pub no_route_drops: u64,
}

#[derive(Default)]
pub(crate) struct TraceRows {
    pub t_ms: Vec<f64>,
    pub flow: Vec<u64>,
    pub cwnd_bytes: Vec<f64>,
    pub srtt_us: Vec<f64>,
    pub rate_gbps: Vec<f64>,
    pub dctcp_alpha: Vec<f64>,
    /// "" for a flow's own row; a path's name for its per-path rows (`measure.trace_paths`).
    pub path: Vec<String>,
    /// Per traced flow, its receiver's `rcv_nxt` at the last sample.
    pub last_rcv: HashMap<u32, u64>,
}

/// What `collect` reads of a finished run.
pub(crate) struct Finished<'a> {
    pub sc: &'a Scenario,
    /// The fabric as it ended (graph, routes, ports).
    pub net: NetRef<'a>,
    pub hosts: &'a Hosts,
    pub c: &'a Counters,
    pub windows: &'a super::windows::Windows,
    pub traces: &'a TraceRows,
    /// Every port's marks at the start and the end of the measurement interval.
    pub interval_marks: &'a [Vec<PortMark>; 2],
    pub sim_end: Time,
    pub end_arrivals: Time,
    pub wall_s: f64,
    pub warnings: &'a [String],
    /// The scheme's own counters (summary `lb`).
    pub lb_counters: serde_json::Value,
    /// The links the failures act on, by name (summary `failure_links`).
    pub failure_links: Vec<String>,
}
