//! Limits on everything a scenario can make the simulator allocate or compute, checked with
//! overflow-safe arithmetic while the scenario is validated, before anything is built. A
//! scenario within these limits validates in seconds and runs without exhausting memory; one
//! beyond them is rejected with an error naming the field. The scenario reference lists them
//! (generated from [`LIMITS`]).

use crate::error::Error;

/// Hosts of the fabric.
pub const MAX_HOSTS: u64 = 1_000_000;
/// Switches of the fabric.
pub const MAX_SWITCHES: u64 = 100_000;
/// Physical links (cables), host links included; each is two output ports.
pub const MAX_LINKS: u64 = 2_000_000;
/// Uplinks of one leaf-spine leaf (`spines * links_per_pair`).
pub const MAX_UPLINKS_PER_LEAF: u64 = 4096;
/// Fat-tree radix: the largest whose routing table stays within [`MAX_ROUTING_ENTRIES`]
/// (k = 44: 968 ToRs × (2,420 switches + 85,184 ports) ≈ 8.5e7).
pub const MAX_FAT_TREE_K: u64 = 44;
/// Routing table size: ToRs × (switches + switch-to-switch ports). Routing keeps one ECMP
/// group per (switch, ToR) and recomputes them by one search per ToR.
pub const MAX_ROUTING_ENTRIES: u64 = 100_000_000;
/// Routing work of a run: routing table size × (1 + link state changes), each change
/// recomputing the tables.
pub const MAX_ROUTING_WORK: u64 = 10_000_000_000;
/// Link state changes of all `[[failures]]` entries (a flap makes one per half period).
pub const MAX_LINK_CHANGES: u64 = 1_000_000;
/// Flows of all workload entries together (the expected number for Poisson patterns).
pub const MAX_FLOWS: u64 = 5_000_000;
/// TCP connections (one per flow, or the persistent pools of `client-server`).
pub const MAX_CONNECTIONS: u64 = 5_000_000;
/// Rows of windows.csv: windows × (ports + leaves).
pub const MAX_WINDOW_ROWS: u64 = 5_000_000;
/// Rows of traces.csv: samples × traced flows.
pub const MAX_TRACE_ROWS: u64 = 5_000_000;
/// Rows of queues.csv: histogram bins over all recorded ports.
pub const MAX_QUEUE_BINS: u64 = 5_000_000;
/// CONGA's flowlet tables: leaves × `flowlet_table_size`; and its congestion tables:
/// leaves² × uplinks per leaf.
pub const MAX_SCHEME_TABLE_ENTRIES: u64 = 50_000_000;
/// Any duration (`duration`, `drain`, `at`, timers, ...), in seconds: one day.
pub const MAX_DURATION_S: u64 = 86_400;
/// Any rate, bits per second: 1 Pbps.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;
/// Any size in bytes (flow sizes, CDF sizes, TCP windows): 100 GB.
pub const MAX_BYTES: u64 = 100_000_000_000;
/// Buffers and thresholds given in packets.
pub const MAX_BUFFER_PKTS: u64 = 10_000_000;
/// Scenario and CDF files, bytes (read by the Python layer and the core).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The limits as (name, value, what it bounds), for the scenario reference.
pub const LIMITS: &[(&str, u64, &str)] = &[
    ("hosts", MAX_HOSTS, "hosts of the fabric"),
    ("switches", MAX_SWITCHES, "switches of the fabric"),
    (
        "links",
        MAX_LINKS,
        "physical links (cables), host links included",
    ),
    (
        "uplinks per leaf",
        MAX_UPLINKS_PER_LEAF,
        "leaf-spine `spines * links_per_pair`",
    ),
    (
        "fat-tree k",
        MAX_FAT_TREE_K,
        "fat-tree radix (the largest within the routing table limit)",
    ),
    (
        "routing entries",
        MAX_ROUTING_ENTRIES,
        "ToRs × (switches + switch-to-switch ports)",
    ),
    (
        "routing work",
        MAX_ROUTING_WORK,
        "routing entries × (1 + link state changes)",
    ),
    (
        "link changes",
        MAX_LINK_CHANGES,
        "link state changes of all failures (a flap: one per half period)",
    ),
    (
        "flows",
        MAX_FLOWS,
        "flows of all workloads together (expected number for Poisson patterns)",
    ),
    (
        "connections",
        MAX_CONNECTIONS,
        "TCP connections (one per flow, or client-server's persistent pools)",
    ),
    (
        "window rows",
        MAX_WINDOW_ROWS,
        "windows × (ports + leaves): rows of windows.csv",
    ),
    (
        "trace rows",
        MAX_TRACE_ROWS,
        "trace samples × traced flows: rows of traces.csv",
    ),
    (
        "queue bins",
        MAX_QUEUE_BINS,
        "histogram bins of all `queue_ports`: rows of queues.csv",
    ),
    (
        "scheme table entries",
        MAX_SCHEME_TABLE_ENTRIES,
        "CONGA: leaves × flowlet_table_size, and leaves² × uplinks",
    ),
    (
        "duration (s)",
        MAX_DURATION_S,
        "any duration field, and `duration` + `drain`",
    ),
    ("rate (bps)", MAX_RATE_BPS, "any rate"),
    (
        "size (bytes)",
        MAX_BYTES,
        "any size (flow sizes, CDF sizes, TCP windows)",
    ),
    (
        "buffer (pkt)",
        MAX_BUFFER_PKTS,
        "buffers and thresholds in packets",
    ),
    (
        "file size (bytes)",
        MAX_FILE_BYTES,
        "scenario and CDF files",
    ),
];

/// `Err` naming `path` when `value` exceeds `max` (`what` says what was counted).
pub fn check(path: &str, what: &str, value: u128, max: u64) -> Result<(), Error> {
    if value > max as u128 {
        return Err(Error::config(
            path,
            format!(
                "{what} would be {}, above the limit of {} (see \"Limits\" in the scenario reference)",
                group(value),
                group(max as u128)
            ),
        ));
    }
    Ok(())
}

/// 1234567 -> "1,234,567".
pub fn group(v: u128) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
