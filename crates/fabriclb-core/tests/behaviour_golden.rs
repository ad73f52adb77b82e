//! Behaviour golden test: refactors and new options that are off must not move any result.
//!
//! Each case is a small scenario (written out here, not read from `scenarios/`, so that the
//! shipped files can move on) run through the public API. What it produced is reduced to the
//! records that describe behaviour: every flow's endpoints, size, start, end, retransmissions,
//! timeouts, reordering and path changes; every port's packets, bytes, drops, marks, losses and
//! peak queue; the event, hop and packet counters. Derived columns (ideal FCT, slowdown, window
//! throughput) are left out on purpose: their definitions may change without the simulation
//! changing. The digests were recorded by the code before the Linux TCP profiles and the host
//! layer (commit bca9a5b) and are stored in `tests/golden/behaviour.txt`.
//!
//! When a change is *meant* to move results for these scenarios, re-record with
//! `FABRICLB_BLESS=1 cargo test --test behaviour_golden` and say why in the commit.

use fabriclb_core::api;
use fabriclb_core::scenario::Format;
use fabriclb_core::table::{Column, Table};

const TESTBED: &str = r#"
name = "golden-testbed"
duration = "3ms"
warmup = "1ms"
drain = "10ms"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
host_rate = "10Gbps"
fabric_rate = "40Gbps"
links_per_pair = 2
[transport]
cc = "cubic"
min_rto = "200ms"
delayed_ack = true
tsq = "128KiB"
[switch]
overlay = "always"
buffer = "12MB"
shared_buffer = "3MB"
[scheme]
name = "SCHEME"
[[workload]]
pattern = "client-server"
cdf = "enterprise"
load = 0.6
load_basis = "fabric"
capacity = "320Gbps"
load_bytes = "wire"
cross_tor = true
connections_per_pair = 3
"#;

const FAILURE: &str = r#"
name = "golden-failure"
duration = "3ms"
warmup = "1ms"
drain = "10ms"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
host_rate = "10Gbps"
fabric_rate = "40Gbps"
links_per_pair = 2
[transport]
cc = "cubic"
min_rto = "1ms"
delayed_ack = true
[switch]
overlay = "always"
buffer = "60pkt"
[scheme]
name = "SCHEME"
[[failures]]
link = "L1-S1#1"
kind = "down"
[[failures]]
link = "L0-S0#0"
kind = "flap"
at = "1ms"
period = "1ms"
[[failures]]
link = "L0-S1#0"
kind = "lossy"
loss = 0.01
[[workload]]
pattern = "poisson"
cdf = "web-search"
load = 0.7
load_basis = "fabric"
cross_tor = true
"#;

const DCTCP: &str = r#"
name = "golden-dctcp"
duration = "4ms"
drain = "10ms"
[topology]
kind = "leaf-spine"
leaves = 3
spines = 2
hosts_per_leaf = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[transport]
cc = "dctcp"
min_rto = "5ms"
[switch]
buffer = "100pkt"
ecn_threshold = "20pkt"
[scheme]
name = "SCHEME"
[[failures]]
link = "L2-S0"
kind = "degrade"
rate = "2Gbps"
[[workload]]
pattern = "poisson"
cdf = "web-search"
load = 0.8
load_basis = "host"
"#;

const NEWRENO: &str = r#"
name = "golden-newreno"
duration = "4ms"
drain = "20ms"
[topology]
kind = "fat-tree"
k = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[transport]
cc = "newreno"
sack = false
min_rto = "2ms"
init_cwnd = 4
[switch]
buffer = "30pkt"
[scheme]
name = "SCHEME"
[[workload]]
pattern = "poisson"
cdf = "enterprise"
load = 0.9
load_basis = "host"
"#;

const LONG: &str = r#"
name = "golden-long"
duration = "4ms"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[transport]
cc = "cubic"
min_rto = "1ms"
tso = "64KB"
[switch]
buffer = "50pkt"
[scheme]
name = "SCHEME"
[[workload]]
pattern = "permutation"
"#;

/// (name, scenario, schemes)
const CASES: &[(&str, &str, &[&str])] = &[
    ("testbed", TESTBED, &["ecmp", "conga", "local"]),
    ("failure", FAILURE, &["ecmp", "conga", "spray"]),
    ("dctcp", DCTCP, &["ecmp", "conga-flow"]),
    ("newreno", NEWRENO, &["ecmp", "spray"]),
    ("long", LONG, &["ecmp", "conga"]),
];

const FLOW_COLS: &[&str] = &[
    "src",
    "dst",
    "size_bytes",
    "start_ms",
    "end_ms",
    "delivered_bytes",
    "retransmissions",
    "timeouts",
    "reordered",
    "path_changes",
    "conn",
];
const PORT_COLS: &[&str] = &[
    "link",
    "tx_bytes",
    "tx_packets",
    "drops",
    "ecn_marks",
    "wire_losses",
    "max_queue_bytes",
];

fn select(t: &Table, cols: &[&str]) -> String {
    let mut out = Table::default();
    for &c in cols {
        let col: Column = t.get(c).unwrap_or_else(|| panic!("no column {c}")).clone();
        out.push(c, col);
    }
    out.to_csv()
}

/// FNV-1a, 64 bits: stable across platforms and Rust versions.
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn digest(toml: &str, seed: u64) -> String {
    let sc = api::load_scenario(toml, Format::Toml, &[("seed".into(), seed.to_string())])
        .unwrap_or_else(|e| panic!("{e}"));
    let r = api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{e}"));
    let s = &r.summary;
    let counters = format!(
        "events={} hops={} sent={} delivered={} dropped={} flows={}",
        s["events"],
        s["packet_hops"],
        s["packets"]["sent"],
        s["packets"]["delivered"],
        s["packets"]["dropped"],
        s["flows_started"]
    );
    format!(
        "{:016x} {:016x} {}",
        fnv(&select(&r.flows, FLOW_COLS)),
        fnv(&select(&r.ports, PORT_COLS)),
        counters
    )
}

#[test]
fn results_match_the_recorded_behaviour() {
    let mut lines = vec![];
    for (name, toml, schemes) in CASES {
        for scheme in schemes.iter() {
            let text = toml.replace("SCHEME", scheme);
            lines.push(format!("{name} {scheme}: {}", digest(&text, 1)));
        }
    }
    let got = lines.join("\n") + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/behaviour.txt");
    if std::env::var_os("FABRICLB_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (record it with FABRICLB_BLESS=1)", path.display()));
    let (w, g): (Vec<_>, Vec<_>) = (want.lines().collect(), got.lines().collect());
    assert_eq!(w.len(), g.len(), "number of cases");
    let diffs: Vec<String> = w
        .iter()
        .zip(&g)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("  recorded: {a}\n  now:      {b}"))
        .collect();
    assert!(diffs.is_empty(), "behaviour changed:\n{}", diffs.join("\n"));
}
