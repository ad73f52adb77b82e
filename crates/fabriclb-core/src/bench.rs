//! Named benchmark scenarios (issue 2 / docs/BENCHMARKS.md). A benchmark, not a timed test:
//! it reports packet-hops per second (one data or ACK packet crossing one link), events per
//! second and peak memory; speed is judged as a ratio to `../shared/probe` measured alongside.

use crate::error::Error;
use crate::scenario::{Format, Scenario};
use serde::Serialize;

const COMMON: &str = r#"
[switch]
buffer = "100pkt"
ecn_threshold = "15pkt"
[transport]
cc = "dctcp"
min_rto = "1ms"
[scheme]
name = "ecmp"
[[workload]]
pattern = "permutation"
[measure]
window = "10ms"
"#;

/// FT2048 (issue 22): the Expeditus Fig. 2 fabric and traffic (`scenarios/expeditus/fig2.toml`,
/// `../shared/SCHEMES.md` §2.7-2.8): a k = 16 fat-tree at 4:1, 2:1 at the edge (16 hosts per
/// edge switch, 2048 hosts) and 2:1 at the aggregation layer (4 of 8 core ports used), 10 Gbps,
/// 5 ns links, 100-packet drop-tail ports; the authors' TCP (NewReno without SACK, IW 1, an ACK
/// per segment, 1400-byte segments, 128 KB windows); web search at 60% of the core (bisection)
/// capacity, 2048 x 10 Gbps / 4 = 5.12 Tbps, one new connection per flow, Expeditus. The
/// largest fabric of the seed papers, and the one where memory per host and port shows.
const FT2048: &str = r#"
name = "FT2048"
duration = "100ms"
[topology]
kind = "fat-tree"
k = 16
oversubscription = 2
agg_oversubscription = 2
host_rate = "10Gbps"
fabric_rate = "10Gbps"
delay = "5ns"
[transport]
cc = "newreno"
sack = false
init_cwnd = 1
min_rto = "200us"
initial_rto = "3s"
delayed_ack = false
mtu = 1440
rcv_window = "131072B"
[switch]
buffer = "100pkt"
[scheme]
name = "expeditus"
[[workload]]
pattern = "poisson"
cdf = "web-search"
load = 0.6
load_basis = "host"
capacity = "5120Gbps"
[measure]
window = "10ms"
"#;

/// The CONGA testbed scenario the lab's Figs. 9-12 start from.
const TESTBED_TOML: &str = include_str!("../../../scenarios/conga/testbed.toml");

/// `TESTBED`: what a user of the lab waits for, the CONGA testbed as Fig. 10 runs it
/// (data-mining at 60%, CONGA, the `linux-3.10` hosts, 12 MB shared buffers), 1 s measured
/// after a 1 s warm-up, no drain.
fn testbed() -> String {
    let mut t = TESTBED_TOML.to_string();
    for (from, to) in [
        ("name = \"conga-testbed\"", "name = \"TESTBED\""),
        (
            "duration = \"20ms\"\nwarmup = \"2ms\"\ndrain = \"20ms\"",
            "duration = \"2s\"\nwarmup = \"1s\"\ndrain = \"0s\"",
        ),
        ("cdf = \"enterprise\"", "cdf = \"data-mining\""),
    ] {
        // A test loads every benchmark and checks TESTBED's settings, so an edit of the
        // scenario file that breaks a replacement fails there.
        t = t.replacen(from, to, 1);
    }
    t
}

/// The benchmark scenarios: (name, description, TOML).
pub fn scenarios() -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "LS128",
            "leaf-spine 16 leaves x 8 hosts, 8 spines, 10G, 1us/link, MTU 1500, DCTCP permutation, 200 ms",
            format!(
                "name = \"LS128\"\nduration = \"200ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 16\nspines = 8\nhosts_per_leaf = 8\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\nhost_delay = \"1us\"\nfabric_delay = \"1us\"\n{COMMON}"
            ),
        ),
        (
            "FT432",
            "k=12 fat-tree (432 hosts), 10G, 1us/link, MTU 9000, DCTCP permutation, 100 ms",
            format!(
                "name = \"FT432\"\nduration = \"100ms\"\n[topology]\nkind = \"fat-tree\"\nk = 12\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\ndelay = \"1us\"\n{}",
                COMMON.replace("cc = \"dctcp\"", "cc = \"dctcp\"\nmtu = 9000")
            ),
        ),
        (
            "LS2048",
            "leaf-spine 64 leaves x 32 hosts, 32 spines, 10G, 1us/link, MTU 1500, DCTCP permutation, 10 ms",
            format!(
                "name = \"LS2048\"\nduration = \"10ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 64\nspines = 32\nhosts_per_leaf = 32\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\nhost_delay = \"1us\"\nfabric_delay = \"1us\"\n{COMMON}"
            ),
        ),
        (
            "FT2048",
            "k=16 fat-tree at 4:1 (2048 hosts, 16 per edge, 4 of 8 core ports), 10G, 5ns/link, 150 KB drop-tail, NewReno (Expeditus authors' TCP), web search at 60% of the 5.12 Tbps core, new connection per flow, Expeditus, 100 ms",
            FT2048.to_string(),
        ),
        (
            "TESTBED",
            "CONGA testbed (64 hosts, 2x40G per leaf-spine pair, 12 MB shared buffers), linux-3.10 hosts, CONGA, data-mining at 60%, 1 s measured after 1 s warm-up",
            testbed(),
        ),
    ]
}

pub fn bench_names() -> &'static [&'static str] {
    &["LS128", "FT432", "LS2048", "FT2048", "TESTBED"]
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    pub name: String,
    pub description: String,
    pub sim_time_s: f64,
    pub packet_hops: u64,
    pub events: u64,
    pub wall_time_s: f64,
    pub packet_hops_per_s: f64,
    pub events_per_s: f64,
    /// Peak resident set of the whole process during the run (with Python's interpreter
    /// and libraries when run from the binding).
    pub peak_rss_mb: f64,
    /// The core's own peak: the process's peak during the run less its resident set just
    /// before it (null where the kernel cannot reset the peak, i.e. off Linux).
    pub core_peak_mb: Option<f64>,
    pub goodput_gbps: f64,
}

/// A size field of this process's `/proc/self/status` (Linux), MB; 0 where unknown.
fn status_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// Return the allocator's free memory to the kernel (glibc's `malloc_trim`; a no-op
/// elsewhere), so that the resident set counts only memory in use.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only releases free heap pages; it takes no pointers.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Peak resident set of this process (Linux VmHWM), MB; 0 where unknown.
pub fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}

/// Run one named benchmark.
pub fn bench(name: &str) -> Result<BenchResult, Error> {
    bench_for(name, None)
}

/// A named benchmark (any case): its name, description and scenario as TOML (which `fabriclb
/// run` takes, to look at a benchmark's tables or run a variant of it).
pub fn bench_scenario(name: &str) -> Result<(&'static str, &'static str, String), Error> {
    scenarios()
        .into_iter()
        .find(|s| s.0.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            Error::config(
                "bench",
                format!(
                    "unknown benchmark '{name}'; allowed: {}",
                    bench_names().join(", ")
                ),
            )
        })
}

/// [`bench`] with the simulated time replaced (`duration`, e.g. `"2ms"`, and no warm-up): a
/// short run, for counting instructions under callgrind (counts do not move with the
/// machine's noise).
pub fn bench_for(name: &str, duration: Option<&str>) -> Result<BenchResult, Error> {
    bench_with(name, &duration.map_or(vec![], shortened))
}

/// The overrides that replace a benchmark's simulated time with `duration` and drop its
/// warm-up (see [`bench_for`]).
pub fn shortened(duration: &str) -> Vec<(String, String)> {
    vec![
        ("duration".to_string(), format!("{duration:?}")),
        ("warmup".to_string(), "\"0s\"".to_string()),
    ]
}

/// [`bench`] with fields of the benchmark's scenario overridden before validation, as
/// `fabriclb run --set PATH=VALUE` does (e.g. `("transport.rcv_window", "30KB")`): a variant
/// of a benchmark, timed and measured the same way.
pub fn bench_with(name: &str, overrides: &[(String, String)]) -> Result<BenchResult, Error> {
    let (n, desc, toml) = bench_scenario(name)?;
    let sc = Scenario::load(&toml, Format::Toml, overrides)?;
    // Writing 5 to clear_refs resets the peak (VmHWM) to the current resident set (Linux
    // >= 4.0), so the peak after the run less the resident set now is the core's own. First
    // hand back to the kernel what the allocator kept from an earlier run in this process
    // (`--repeat`, other benchmarks): the run would reuse it without raising the peak.
    release_free_memory();
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss_before_mb = status_mb("VmRSS:");
    let r = crate::sim::Sim::build(&sc)?.run(Default::default())?;
    let s = &r.summary;
    let wall = s["wall_time_s"].as_f64().unwrap_or(0.0);
    let hops = s["packet_hops"].as_u64().unwrap_or(0);
    let events = s["events"].as_u64().unwrap_or(0);
    Ok(BenchResult {
        name: n.to_string(),
        description: desc.to_string(),
        sim_time_s: s["sim_time_s"].as_f64().unwrap_or(0.0),
        packet_hops: hops,
        events,
        wall_time_s: wall,
        packet_hops_per_s: hops as f64 / wall.max(1e-9),
        events_per_s: events as f64 / wall.max(1e-9),
        peak_rss_mb: peak_rss_mb(),
        core_peak_mb: (reset && rss_before_mb > 0.0)
            .then(|| (peak_rss_mb() - rss_before_mb).max(0.0)),
        goodput_gbps: s["goodput_gbps"].as_f64().unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every benchmark loads, and TESTBED is the testbed as described (its settings are
    /// replacements in the scenario file's text: an edit there must not silently undo them).
    #[test]
    fn every_benchmark_loads_and_testbed_is_fig10s_setting() {
        let all = scenarios();
        assert_eq!(
            all.iter().map(|s| s.0).collect::<Vec<_>>(),
            bench_names().to_vec()
        );
        for (name, _, toml) in &all {
            let sc = Scenario::load(toml, Format::Toml, &[]).unwrap();
            assert_eq!(&sc.name, name);
        }
        let sc = Scenario::load(&testbed(), Format::Toml, &[]).unwrap();
        assert_eq!(sc.duration.0, 2_000_000_000_000);
        assert_eq!(sc.warmup.0, 1_000_000_000_000);
        assert_eq!(sc.drain.0, 0);
        let j = sc.canonical_json();
        for want in [
            "\"cdf\":\"data-mining\"",
            "\"profile\":\"linux-3.10\"",
            "\"name\":\"conga\"",
            "\"load\":0.6",
        ] {
            assert!(j.contains(want), "{want} not in {j}");
        }
    }

    /// The look-ahead window (and the heap's 2 MiB pages) are on where the ports exceed
    /// `LARGE_WORLD_PORT_BYTES`: in the two large benchmarks only (docs/BENCHMARKS.md).
    #[test]
    fn the_window_is_on_in_the_large_benchmarks_only() {
        for (name, _, toml) in &scenarios() {
            let sc = Scenario::load(toml, Format::Toml, &[]).unwrap();
            let on = crate::sim::Sim::build(&sc).unwrap().lookahead();
            assert_eq!(on, ["LS2048", "FT2048"].contains(name), "{name}");
        }
    }

    #[test]
    fn a_benchmark_can_be_shortened() {
        let r = bench_for("LS128", Some("20us")).unwrap();
        // TESTBED's warm-up (1 s) goes with it.
        assert!(bench_for("TESTBED", Some("10us")).is_ok());
        assert!((r.sim_time_s - 20e-6).abs() < 1e-12, "{}", r.sim_time_s);
        assert!(r.packet_hops > 0 && r.events >= r.packet_hops);
        let e = bench_for("LS128", Some("-1ms")).unwrap_err().to_string();
        assert!(e.contains("duration"), "{e}");
    }

    #[test]
    fn a_benchmark_takes_overrides() {
        let set = |p: &str, v: &str| (p.to_string(), v.to_string());
        let short = [set("duration", "50us")];
        let base = bench_with("LS128", &short).unwrap();
        // A receive window of two segments holds every flow back: the same fabric carries less.
        let narrow = bench_with(
            "LS128",
            &[short[0].clone(), set("transport.rcv_window", "2920B")],
        )
        .unwrap();
        assert!(
            narrow.goodput_gbps < 0.8 * base.goodput_gbps,
            "{} vs {}",
            narrow.goodput_gbps,
            base.goodput_gbps
        );
        // The scenario as a file would give it.
        let (name, _, toml) = bench_scenario("ls128").unwrap();
        assert_eq!(name, "LS128");
        let sc = Scenario::load(&toml, Format::Toml, &short).unwrap();
        assert_eq!(sc.duration.0, 50 * 1_000_000);
        assert!(bench_scenario("LS129").is_err());
        // A bad field is named.
        let e = bench_with("LS128", &[set("transport.rcv_windw", "30KB")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("rcv_windw"), "{e}");
    }
}
