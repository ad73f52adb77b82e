//! Workload tests (issue 3, item 1): CDF parsing, offered load against the target for every
//! shipped CDF and both load conventions, the structure of each pattern, and an analytic check
//! of the whole simulator against processor sharing.
//!
//! Generation-only tests build the flow list with `WorkloadConfig::generate` on the graph of
//! the scenario's topology, without simulating.

use fabriclb_core::api::{self, RunResult};
use fabriclb_core::net::topology::Graph;
use fabriclb_core::rng::{stream, Rng};
use fabriclb_core::scenario::{Format, Scenario};
use fabriclb_core::table::Column;
use fabriclb_core::workload::arrivals::WireCost;
use fabriclb_core::workload::{Cdf, CdfOptions, CdfScale, CdfUnit, ConnPolicy, FlowSpec, GenCtx};
use fabriclb_core::Error;

// ---------------------------------------------------------------------------------------------
// Helpers

/// The CONGA testbed (§5.1): 2 leaves × 32 hosts at 10 Gbps, 2 spines, 2 × 40 Gbps per pair.
const TESTBED: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 32
host_rate = "10Gbps"
fabric_rate = "40Gbps"
links_per_pair = 2
"#;

/// MSS 1460; 78 bytes per segment on a host link (Ethernet, TCP/IP, preamble and gap), 128 on
/// a fabric link (plus the 50-byte overlay header).
const WIRE: WireCost = WireCost {
    mss_bytes: 1460,
    host_overhead_bytes: 78,
    fabric_overhead_bytes: 128,
};

fn scenario(duration: &str, topology: &str, workload: &str) -> Scenario {
    // One throughput window for the whole run: these scenarios are generated, not run, and
    // long ones would pass the windows.csv row limit with the default 10 ms.
    let text = format!(
        "duration = \"{duration}\"\n{topology}\n[measure]\nwindow = \"{duration}\"\n[[workload]]\n{workload}\n"
    );
    api::load_scenario(&text, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn gen_sc(sc: &Scenario, seed: u64) -> Result<(Graph, Vec<FlowSpec>), Error> {
    let g = sc.topology.build()?;
    let mut out = vec![];
    for (i, w) in sc.workload.iter().enumerate() {
        let ctx = GenCtx {
            g: &g,
            duration_ps: sc.duration.0,
            workload: i as u16,
            base_dir: None,
            wire: WIRE,
        };
        let mut rng = Rng::new(seed, stream::WORKLOAD + i as u64);
        w.generate(&format!("workload[{i}]"), &ctx, &mut rng, &mut out)?;
    }
    Ok((g, out))
}

fn generate(duration: &str, topology: &str, workload: &str) -> (Graph, Vec<FlowSpec>) {
    let sc = scenario(duration, topology, workload);
    gen_sc(&sc, 1).unwrap_or_else(|e| panic!("{e}"))
}

fn load_err(topology: &str, workload: &str) -> Error {
    let text = format!("duration = \"10ms\"\n{topology}\n[[workload]]\n{workload}\n");
    match api::load_scenario(&text, Format::Toml, &[]) {
        Err(e) => e,
        Ok(sc) => gen_sc(&sc, 1)
            .err()
            .unwrap_or_else(|| panic!("no error for\n{workload}")),
    }
}

fn tor(g: &Graph, h: u32) -> u32 {
    g.host_tor[h as usize]
}

// ---------------------------------------------------------------------------------------------
// CDF parser

#[test]
fn cdf_bad_files_give_cdf_errors_with_line_numbers() {
    // (what, text, expected line, a word the message must contain)
    let cases: &[(&str, &str, usize, &str)] = &[
        ("empty", "", 1, "no data points"),
        ("only comments", "# a\n\n# b\n", 3, "no data points"),
        (
            "non-numeric size",
            "0 0\nabc 0.5\n10 1\n",
            2,
            "not a finite number",
        ),
        (
            "non-numeric cdf",
            "# header\n0 0\n10 x\n",
            3,
            "not a finite number",
        ),
        ("one column", "0 0\n10\n", 2, "two numbers"),
        ("three columns", "0 0 0\n10 1\n", 1, "two numbers"),
        ("negative size", "0 0\n-5 0.5\n10 1\n", 2, "negative"),
        ("negative cdf", "0 -0.1\n10 1\n", 1, "negative"),
        ("cdf above 1", "0 0\n5 0.5\n10 1.5\n", 3, "outside"),
        ("percent above 100", "0 0\n5 150\n10 100\n", 2, "outside"),
        (
            "size decreasing",
            "0 0\n10 0.5\n5 0.7\n20 1\n",
            3,
            "non-decreasing",
        ),
        (
            "cdf decreasing",
            "0 0\n10 0.5\n\n20 0.4\n30 1\n",
            4,
            "non-decreasing",
        ),
        ("last cdf not 1", "0 0\n10 0.5\n20 0.9\n", 3, "must be 1"),
        ("last percent not 100", "0 0\n10 50\n20 90\n", 2, "outside"),
        ("all sizes zero", "0 0\n0 1\n", 2, "> 0"),
        ("infinite", "0 0\ninf 1\n", 2, "finite"),
    ];
    for &(what, text, line, word) in cases {
        match Cdf::parse(text, "t.cdf", CdfOptions::default()) {
            Err(Error::Cdf {
                source,
                line: l,
                msg,
            }) => {
                assert_eq!(source, "t.cdf", "{what}");
                assert_eq!(l, line, "{what}: {msg}");
                assert!(
                    msg.contains(word),
                    "{what}: '{msg}' should contain '{word}'"
                );
            }
            other => panic!("{what}: expected a CDF error, got {other:?}"),
        }
    }
    // Explicit scales are enforced.
    let e = Cdf::parse(
        "0 0\n10 1\n",
        "t",
        CdfOptions {
            scale: CdfScale::Percent,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, Error::Cdf { line: 2, .. }), "{e:?}");
    let e = Cdf::parse(
        "0 0\n10 100\n",
        "t",
        CdfOptions {
            scale: CdfScale::Fraction,
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, Error::Cdf { line: 2, .. }), "{e:?}");
}

#[test]
fn cdf_percent_and_packets_units() {
    let frac = Cdf::parse("# c\n1 0\n3 0.5\n5 1\n", "a", CdfOptions::default()).unwrap();
    let pct = Cdf::parse("1 0\n3 50   # comment\n5 100\n", "b", CdfOptions::default()).unwrap();
    assert_eq!(frac.points, pct.points, "auto-detected percent");
    let pct2 = Cdf::parse(
        "1 0\n3 50\n5 100\n",
        "b",
        CdfOptions {
            scale: CdfScale::Percent,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(frac.points, pct2.points);
    assert!((frac.mean() - 3.0).abs() < 1e-12);
    let pk = Cdf::parse(
        "1 0\n3 0.5\n5 1\n",
        "c",
        CdfOptions {
            unit: CdfUnit::Packets,
            packet_bytes: 1460,
            scale: CdfScale::Auto,
        },
    )
    .unwrap();
    assert_eq!(pk.points, vec![(1460.0, 0.0), (4380.0, 0.5), (7300.0, 1.0)]);
    assert!((pk.mean() - 3.0 * 1460.0).abs() < 1e-9);
}

#[test]
fn cdf_interpolation_sampling_and_the_readme_means() {
    // README means (linear interpolation): 1.711 MB, 7.47 MB, 12.66 MB, 216 KB, 122 KB.
    let cases = [
        ("web-search", 1.711e6, 0.001),
        ("data-mining", 7.47e6, 0.001),
        ("data-mining-ns3", 12.66e6, 0.001),
        ("enterprise", 216e3, 0.002),
        ("hadoop", 122e3, 0.002),
    ];
    for (name, mean, tol) in cases {
        let c = Cdf::builtin(name).unwrap();
        assert!(
            (c.mean() - mean).abs() / mean < tol,
            "{name}: mean {} vs README {mean}",
            c.mean()
        );
    }
    // Linear interpolation between points: web-search (10000, 0.15) .. (20000, 0.2).
    let w = Cdf::builtin("web-search").unwrap();
    assert!((w.quantile(0.175) - 15_000.0).abs() < 1e-6);
    assert!((w.quantile(0.0) - 0.0).abs() < 1e-9);
    assert!((w.quantile(0.999_999) - 30e6).abs() < 1e3);
    // Enterprise starts at (250, 0): nothing below 250 bytes.
    assert!(Cdf::builtin("enterprise").unwrap().quantile(0.0) >= 250.0);
    // Sampling follows the CDF: empirical fractions below each web-search point.
    let mut rng = Rng::new(3, 0);
    let n = 200_000;
    let xs: Vec<u64> = (0..n).map(|_| w.sample(&mut rng)).collect();
    for &(s, p) in &w.points[1..] {
        let frac = xs.iter().filter(|&&x| (x as f64) <= s).count() as f64 / n as f64;
        assert!(
            (frac - p).abs() < 0.005,
            "P(S <= {s}) = {frac}, CDF says {p}"
        );
    }
    assert!(xs.iter().all(|&x| x >= 1));
    // A hand-made CDF: uniform on [100, 200] has mean 150 and sample mean close to it.
    let u = Cdf::parse("100 0\n200 1\n", "u", CdfOptions::default()).unwrap();
    let m = (0..100_000).map(|_| u.sample(&mut rng) as f64).sum::<f64>() / 100_000.0;
    assert!(
        (m - 150.0).abs() < 0.5 && (u.mean() - 150.0).abs() < 1e-12,
        "{m}"
    );
}

#[test]
fn cdf_files_are_read_and_bad_names_are_config_errors() {
    let dir = std::env::temp_dir().join(format!("fabriclb-cdf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("ok.cdf");
    std::fs::write(&good, "# packets, percent\n1 0\n10 50\n100 100\n").unwrap();
    let bad = dir.join("bad.cdf");
    std::fs::write(&bad, "1 0\n10 0.5\n5 1\n").unwrap();
    let w = |cdf: &std::path::Path, extra: &str| {
        format!(
            "pattern = \"poisson\"\nload = 0.5\nload_basis = \"host\"\ncdf = \"{}\"\n{extra}",
            cdf.display()
        )
    };
    let (_, flows) = generate(
        "20ms",
        TESTBED,
        &w(&good, "cdf_unit = \"packets\"\npacket_size = \"1000B\""),
    );
    assert!(!flows.is_empty());
    assert!(
        flows
            .iter()
            .all(|f| (1000..=100_000).contains(&f.size_bytes)),
        "sizes in packets of 1000 B"
    );
    match load_err(TESTBED, &w(&bad, "")) {
        Error::Cdf {
            line: 3, source, ..
        } => assert!(source.ends_with("bad.cdf")),
        e => panic!("{e:?}"),
    }
    let e = load_err(
        TESTBED,
        "pattern = \"poisson\"\nload = 0.5\nload_basis = \"host\"\ncdf = \"web_search\"",
    );
    match e {
        Error::Config { path, msg } => {
            assert_eq!(path, "workload[0].cdf");
            assert!(
                msg.contains("web-search") && msg.contains("built-in"),
                "{msg}"
            );
        }
        e => panic!("{e:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------------------------------------
// Config errors

#[test]
fn config_errors_name_the_field() {
    let cs = |extra: &str| {
        format!(
            "pattern = \"client-server\"\nload_basis = \"fabric\"\ncdf = \"web-search\"\n{extra}"
        )
    };
    // (workload, expected path, a word of the message)
    let cases: Vec<(String, &str, &str)> = vec![
        (cs("load = 1.2"), "workload[0].load", "(0, 1]"),
        (cs("load = 0"), "workload[0].load", "(0, 1]"),
        (cs("load = -0.5"), "workload[0].load", "(0, 1]"),
        (cs("load = 0.5\ncapacity = \"0Gbps\""), "workload[0].capacity", "> 0"),
        (cs("load = 0.5\nconnections_per_pair = 0"), "workload[0].connections_per_pair", "1..=255"),
        (cs("load = 0.5\nsize = \"10KB\""), "workload[0]", "not both"),
        (cs("load = 0.5\ncdf_unit = \"packets\""), "workload[0].cdf", "built-in"),
        (cs("load = 0.5\nclients = [\"H99\"]"), "workload[0].clients[0]", "no host"),
        (cs("load = 0.5\nclients = [\"L0\"]\nservers = [\"L0\"]"), "workload[0]", "under another ToR"),
        ("pattern = \"poisson\"\nload = 0.5\nload_basis = \"host\"".into(), "workload[0]", "missing"),
        ("pattern = \"poisson\"\nload = 0.5\nload_basis = \"host\"\nsize = \"0B\"".into(), "workload[0].size", "> 0"),
        ("pattern = \"matrix\"\ncdf = \"web-search\"\nentries = []".into(), "workload[0].entries", "at least one"),
        ("pattern = \"matrix\"\ncdf = \"web-search\"\n[[workload.entries]]\nsrc = \"L0\"\ndst = \"L9\"\nrate = \"1Gbps\"".into(), "workload[0].entries[0].dst", "no host"),
        ("pattern = \"matrix\"\ncdf = \"web-search\"\n[[workload.entries]]\nsrc = \"L0\"\ndst = \"L1\"\nrate = \"0Gbps\"".into(), "workload[0].entries[0].rate", "> 0"),
        ("pattern = \"incast\"\nclient = \"H0\"".into(), "workload[0].servers", "missing"),
        ("pattern = \"incast\"\nclient = \"H0\"\nservers = 64".into(), "workload[0].servers", "64 hosts"),
        ("pattern = \"incast\"\nclient = \"H0\"\nservers = 4\nrequests = 3".into(), "workload[0].interval", "> 0"),
        ("pattern = \"incast\"\nclient = \"H0\"\nservers = 4\nsize = \"3B\"".into(), "workload[0].size", "one byte per server"),
        ("pattern = \"incast\"\nclient = \"H0\"\nserver_hosts = [\"H1\", \"H0\"]".into(), "workload[0].server_hosts[1]", "client"),
    ];
    for (w, path, word) in cases {
        match load_err(TESTBED, &w) {
            Error::Config { path: p, msg } => {
                assert_eq!(p, path, "{w}\n{msg}");
                assert!(msg.contains(word), "{w}\n'{msg}' should contain '{word}'");
            }
            e => panic!("{w}: {e:?}"),
        }
    }
    // A fabric load on a single-switch fabric is undefined (unless the capacity is given).
    let one_switch = r#"
[topology]
kind = "explicit"
switches = [{ name = "S", role = "leaf" }]
hosts = [{ name = "H", attach = "S", rate = "10Gbps", count = 4 }]
links = []
"#;
    match load_err(
        one_switch,
        "pattern = \"poisson\"\nload = 0.5\nload_basis = \"fabric\"\ncdf = \"web-search\"",
    ) {
        Error::Config { path, .. } => assert_eq!(path, "workload[0].load_basis"),
        e => panic!("{e:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Offered load

/// Offered load (bits/s) of the flows that count for the basis, over the duration.
fn offered_bps(g: &Graph, flows: &[FlowSpec], fabric_only: bool, duration_s: f64) -> f64 {
    let bytes: u64 = flows
        .iter()
        .filter(|f| !fabric_only || tor(g, f.src) != tor(g, f.dst))
        .map(|f| f.size_bytes)
        .sum();
    bytes as f64 * 8.0 / duration_s
}

#[test]
fn offered_load_matches_target_for_every_cdf_and_both_bases() {
    // Durations give about N flows, where N makes the standard error of the sample mean about
    // 1% for each CDF (coefficient of variation: web-search 2.3, data-mining 8.0,
    // enterprise 19.8, hadoop 5.4; N ≈ (cv / 0.01)²).
    let rho = 0.6;
    let mut report = vec![];
    let mut seed = 0;
    for (cdf, flows_wanted) in [
        ("web-search", 200_000.0),
        ("data-mining", 1_000_000.0),
        ("enterprise", 4_000_000.0),
        ("hadoop", 600_000.0),
    ] {
        let mean = Cdf::builtin(cdf).unwrap().mean();
        // (basis, C bits/s): host = 64 servers × 10 Gbps; fabric = 2 leaves × 4 × 40 Gbps.
        for (basis, cap) in [("host", 640e9), ("fabric", 320e9)] {
            let lambda = rho * cap / (8.0 * mean);
            let dur_s = (flows_wanted / lambda).ceil();
            let w = format!("pattern = \"client-server\"\nload = {rho}\nload_basis = \"{basis}\"\ncdf = \"{cdf}\"");
            seed += 1;
            let (g, flows) = gen_sc(&scenario(&format!("{dur_s}s"), TESTBED, &w), seed).unwrap();
            let got = offered_bps(&g, &flows, basis == "fabric", dur_s);
            let err = got / (rho * cap) - 1.0;
            report.push(format!("{cdf:12} {basis:6} flows {:>8} offered {:7.2} Gbps target {:7.2} Gbps error {:+.2}%", flows.len(), got / 1e9, rho * cap / 1e9, err * 100.0));
            assert!(err.abs() < 0.03, "{}", report.last().unwrap());
            assert!(
                flows.iter().all(|f| f.start_ps < (dur_s * 1e12) as u64),
                "arrivals stop at the duration"
            );
        }
    }
    println!("{}", report.join("\n"));
}

#[test]
fn wire_loads_count_each_segments_headers_on_the_basis_links() {
    // (flow sizes, basis, C bits/s, wire bytes per segment beyond the payload, duration in s
    // for ~10^5 flows). 10 kB flows are 7 segments: on the fabric 10 000 + 7 × 128 bytes, 9%
    // above their payload; 700 B exponential flows are mostly one segment, 20% above.
    let cases = [
        ("size = \"10KB\"", "fabric", 320e9, 128u64, 0.05),
        ("size = \"10KB\"", "host", 640e9, 78, 0.03),
        ("cdf = \"web-search\"", "fabric", 320e9, 128, 20.0),
        (
            "size = \"700B\"\nsize_dist = \"exponential\"",
            "fabric",
            320e9,
            128,
            0.02,
        ),
    ];
    for (sizes, basis, cap, overhead, dur) in cases {
        let w = format!("pattern = \"client-server\"\nload = 0.5\nload_basis = \"{basis}\"\nload_bytes = \"wire\"\n{sizes}");
        let (_, flows) = gen_sc(&scenario(&format!("{dur}s"), TESTBED, &w), 7).unwrap();
        let wire_bytes: u64 = flows
            .iter()
            .map(|f| f.size_bytes + f.size_bytes.div_ceil(1460) * overhead)
            .sum();
        let err = wire_bytes as f64 * 8.0 / dur / (0.5 * cap) - 1.0;
        println!(
            "{sizes:40?} {basis:6} flows {:>8} error {:+.2}%",
            flows.len(),
            err * 100.0
        );
        assert!(
            err.abs() < 0.02,
            "{sizes} {basis}: wire load off by {:+.2}%",
            err * 100.0
        );
    }
}

#[test]
fn fabric_basis_counts_only_inter_leaf_flows_and_capacity_overrides() {
    // Poisson with intra-leaf pairs allowed: only the cross-leaf part is held to the target.
    // Topology: 4 leaves × 8 hosts, 2 spines × 1 link of 40 Gbps: C_fabric = 4 × 80 Gbps.
    let topo = r#"
[topology]
kind = "leaf-spine"
leaves = 4
spines = 2
hosts_per_leaf = 8
host_rate = "10Gbps"
fabric_rate = "40Gbps"
"#;
    let dur = 60.0;
    let cases = [
        // (extra fields, counted C in bits/s, fabric only?)
        ("load_basis = \"fabric\"", 320e9, true),
        ("load_basis = \"fabric\"\ncross_tor = true", 320e9, true),
        ("load_basis = \"host\"", 320e9, false),
        (
            "load_basis = \"fabric\"\ncapacity = \"100Gbps\"",
            100e9,
            true,
        ),
        ("load_basis = \"host\"\nsrc = [\"L0\", \"H8\"]", 90e9, false),
        (
            "load_basis = \"fabric\"\nsrc = [\"L0\", \"H8\"]",
            160e9,
            true,
        ),
    ];
    for (extra, cap, fabric_only) in cases {
        let w = format!("pattern = \"poisson\"\nload = 0.5\ncdf = \"web-search\"\n{extra}");
        let (g, flows) = generate(&format!("{dur}s"), topo, &w);
        let got = offered_bps(&g, &flows, fabric_only, dur);
        let err = got / (0.5 * cap) - 1.0;
        println!(
            "{extra:45?} flows {:>7} error {:+.2}%",
            flows.len(),
            err * 100.0
        );
        assert!(err.abs() < 0.03, "{extra}: offered {got} vs {}", 0.5 * cap);
        assert!(flows
            .iter()
            .all(|f| f.src != f.dst && f.conn == ConnPolicy::New));
        if extra.contains("cross_tor") {
            assert!(flows.iter().all(|f| tor(&g, f.src) != tor(&g, f.dst)));
        } else {
            assert!(
                flows.iter().any(|f| tor(&g, f.src) == tor(&g, f.dst)),
                "intra-leaf flows exist"
            );
        }
        if extra.contains("src") {
            assert!(
                flows.iter().all(|f| f.src < 9),
                "only L0's hosts and H8 send"
            );
        }
    }
}

#[test]
fn generation_is_deterministic_given_the_seed() {
    let sc = scenario(
        "50ms",
        TESTBED,
        "pattern = \"client-server\"\nload = 0.5\nload_basis = \"fabric\"\ncdf = \"enterprise\"",
    );
    let a = gen_sc(&sc, 7).unwrap().1;
    let b = gen_sc(&sc, 7).unwrap().1;
    let c = gen_sc(&sc, 8).unwrap().1;
    assert_eq!(a, b);
    assert_ne!(a, c);
}

// ---------------------------------------------------------------------------------------------
// Pattern structure

#[test]
fn client_server_pairs_cross_leaves_and_use_persistent_connections() {
    let (g, flows) = generate(
        "200ms",
        TESTBED,
        "pattern = \"client-server\"\nload = 0.5\nload_basis = \"fabric\"\ncdf = \"data-mining\"",
    );
    assert!(flows.len() > 100);
    for f in &flows {
        assert_ne!(
            tor(&g, f.src),
            tor(&g, f.dst),
            "client and server under different leaves"
        );
        assert_eq!(f.conn, ConnPolicy::Persistent { per_pair: 3 });
        assert_eq!(f.group, 0);
    }
    // Every host is both client and server: all 64 appear on both sides.
    let mut srcs: Vec<u32> = flows.iter().map(|f| f.src).collect();
    let mut dsts: Vec<u32> = flows.iter().map(|f| f.dst).collect();
    srcs.sort_unstable();
    srcs.dedup();
    dsts.sort_unstable();
    dsts.dedup();
    assert_eq!((srcs.len(), dsts.len()), (64, 64));

    // Clients only under L0, servers only under L1: responses flow server (L1) -> client (L0).
    let (g, flows) = generate(
        "100ms",
        TESTBED,
        "pattern = \"client-server\"\nload = 0.5\nload_basis = \"host\"\ncdf = \"web-search\"\nclients = [\"L0\"]\nservers = [\"L1\"]\nconnections_per_pair = 5",
    );
    let l0 = g.node_id("L0").unwrap();
    let l1 = g.node_id("L1").unwrap();
    assert!(!flows.is_empty());
    for f in &flows {
        assert_eq!(
            (tor(&g, f.src), tor(&g, f.dst)),
            (l1, l0),
            "src = server, dst = client"
        );
        assert_eq!(f.conn, ConnPolicy::Persistent { per_pair: 5 });
    }
}

#[test]
fn incast_groups_are_synchronised_stripes() {
    let (g, flows) = generate(
        "100ms",
        TESTBED,
        "pattern = \"incast\"\nclient = \"H5\"\nservers = 7\nsize = \"10MB\"\nrequests = 10\ninterval = \"15ms\"\nstart = \"1ms\"",
    );
    // Requests at 1, 16, ..., 91 ms: 7 of them fit in 100 ms.
    assert_eq!(flows.len(), 7 * 7);
    let client = g.node_id("H5").unwrap();
    let mut servers: Vec<u32> = flows
        .iter()
        .filter(|f| f.group == 1)
        .map(|f| f.src)
        .collect();
    servers.sort_unstable();
    servers.dedup();
    assert_eq!(servers.len(), 7, "N distinct servers");
    for r in 1..=7u32 {
        let grp: Vec<&FlowSpec> = flows.iter().filter(|f| f.group == r).collect();
        assert_eq!(grp.len(), 7);
        let t = 1_000_000_000 + (r as u64 - 1) * 15_000_000_000;
        assert!(grp
            .iter()
            .all(|f| f.start_ps == t && f.dst == client && f.src != client));
        assert_eq!(
            grp.iter().map(|f| f.size_bytes).sum::<u64>(),
            10_000_000,
            "the file is split exactly"
        );
        let (mn, mx) = (
            grp.iter().map(|f| f.size_bytes).min().unwrap(),
            grp.iter().map(|f| f.size_bytes).max().unwrap(),
        );
        assert!(mx - mn <= 1);
        let mut s: Vec<u32> = grp.iter().map(|f| f.src).collect();
        s.sort_unstable();
        assert_eq!(s, servers, "the same servers for every request");
        assert!(grp
            .iter()
            .all(|f| f.conn == ConnPolicy::Persistent { per_pair: 1 }));
    }
    // Given servers, new connections.
    let (_, flows) = generate("10ms", TESTBED, "pattern = \"incast\"\nclient = \"H0\"\nserver_hosts = [\"H40\", \"H41\", \"3\"]\nsize = \"1MB\"\npersistent = false");
    let mut s: Vec<u32> = flows.iter().map(|f| f.src).collect();
    s.sort_unstable();
    assert_eq!(s, vec![3, 40, 41]);
    assert!(flows
        .iter()
        .all(|f| f.conn == ConnPolicy::New && f.group == 1 && f.dst == 0));
}

#[test]
fn matrix_entries_get_their_rates() {
    let topo = r#"
[topology]
kind = "leaf-spine"
leaves = 3
spines = 2
hosts_per_leaf = 4
host_rate = "10Gbps"
fabric_rate = "40Gbps"
"#;
    let w = r#"pattern = "matrix"
cdf = "web-search"
[[workload.entries]]
src = "L0"
dst = "L1"
rate = "20Gbps"
[[workload.entries]]
src = "L1"
dst = "L2"
rate = "5Gbps"
[[workload.entries]]
src = "H0"
dst = "L0"
rate = "2Gbps"
"#;
    let dur = 40.0;
    let (g, flows) = generate(&format!("{dur}s"), topo, w);
    let l = |n: &str| g.node_id(n).unwrap();
    // Entries are told apart by their (src leaf, dst leaf) and, for the third, by src = H0 inside L0.
    let sum = |pred: &dyn Fn(&FlowSpec) -> bool| {
        flows
            .iter()
            .filter(|f| pred(f))
            .map(|f| f.size_bytes)
            .sum::<u64>() as f64
            * 8.0
            / dur
    };
    let r01 = sum(&|f| tor(&g, f.src) == l("L0") && tor(&g, f.dst) == l("L1"));
    let r12 = sum(&|f| tor(&g, f.src) == l("L1") && tor(&g, f.dst) == l("L2"));
    let r00 = sum(&|f| f.src == 0 && tor(&g, f.dst) == l("L0"));
    for (got, want, what) in [
        (r01, 20e9, "L0->L1"),
        (r12, 5e9, "L1->L2"),
        (r00, 2e9, "H0->L0"),
    ] {
        println!("{what}: {:.3} Gbps (target {:.0})", got / 1e9, want / 1e9);
        assert!((got / want - 1.0).abs() < 0.03, "{what}: {got} vs {want}");
    }
    assert_eq!(
        flows
            .iter()
            .filter(
                |f| !((tor(&g, f.src) == l("L0") && tor(&g, f.dst) == l("L1"))
                    || (tor(&g, f.src) == l("L1") && tor(&g, f.dst) == l("L2"))
                    || (f.src == 0 && tor(&g, f.dst) == l("L0")))
            )
            .count(),
        0
    );
    assert!(flows
        .iter()
        .all(|f| f.src != f.dst && f.conn == ConnPolicy::New));
    // Random hosts under the leaves: all 4 of L0 send to L1.
    let mut s: Vec<u32> = flows
        .iter()
        .filter(|f| tor(&g, f.dst) == l("L1"))
        .map(|f| f.src)
        .collect();
    s.sort_unstable();
    s.dedup();
    assert_eq!(s, vec![0, 1, 2, 3]);
}

#[test]
fn pattern_names_are_registered() {
    let names = api::workload_patterns();
    for p in ["client-server", "poisson", "incast", "matrix"] {
        assert!(names.iter().any(|n| n == p), "{names:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Analytic check: processor sharing

fn col(r: &RunResult, c: &str) -> Vec<f64> {
    match r.flows.get(c).unwrap_or_else(|| panic!("no column {c}")) {
        Column::F64(v) => v.clone(),
        Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::Str(_) => panic!("{c} is text"),
    }
}

/// One bottleneck: 8 senders at 100 Gbps -> one switch -> a receiver behind a 10 Gbps link.
/// Poisson arrivals of fixed-size flows whose wire load on the 10 Gbps link is `rho`.
/// Returns (mean of FCT / size-proportional ideal, mean of FCT / simulator ideal, flows counted).
fn ps_run(rho: f64, size: u64, duration_ms: u64, net: &str) -> (f64, f64, usize) {
    // Wire bytes per payload byte at MTU 1500: (1460 + 78) / 1460 (headers, FCS, preamble, IFG).
    let wire = 1538.0 / 1460.0;
    let payload_load = rho / wire;
    let toml = format!(
        r#"
duration = "{duration_ms}ms"
warmup = "{warm}ms"
drain = "200ms"
seed = {seed}
[topology]
kind = "explicit"
switches = [{{ name = "S", role = "leaf" }}]
hosts = [
  {{ name = "A", attach = "S", rate = "100Gbps", delay = "1us", count = 8 }},
  {{ name = "R", attach = "S", rate = "10Gbps", delay = "1us" }},
]
links = []
{net}
[[workload]]
pattern = "poisson"
load = {payload_load}
load_basis = "host"
capacity = "10Gbps"
size = "{size}B"
src = ["A0", "A1", "A2", "A3", "A4", "A5", "A6", "A7"]
dst = ["R"]
"#,
        warm = duration_ms / 10,
        seed = 11
    );
    let sc = api::load_scenario(&toml, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
    let r = api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{e}"));
    let (fct, ideal, sz, fin, warm) = (
        col(&r, "fct_ms"),
        col(&r, "ideal_fct_ms"),
        col(&r, "size_bytes"),
        col(&r, "finished"),
        col(&r, "warmup"),
    );
    let (mut s_prop, mut s_ideal, mut n) = (0.0, 0.0, 0usize);
    for i in 0..fct.len() {
        if warm[i] == 1.0 {
            continue;
        }
        assert_eq!(fin[i], 1.0, "flow {i} did not finish");
        // Size-proportional ideal: the flow's wire bytes at 10 Gbps.
        let t_prop_ms = sz[i] * wire * 8.0 / 10e9 * 1e3;
        s_prop += fct[i] / t_prop_ms;
        s_ideal += fct[i] / ideal[i];
        n += 1;
    }
    (s_prop / n as f64, s_ideal / n as f64, n)
}

#[test]
fn short_flows_on_one_bottleneck_approach_processor_sharing() {
    // M/G/1-PS: the mean slowdown (FCT / service time) is 1/(1-ρ) for any size law. Fixed
    // 100 KB flows (69 segments), new connections, Poisson arrivals; service time = wire bytes
    // at 10 Gbps; the first 10% of the run is warm-up. TCP is not exactly PS: handshake, slow
    // start from 10 segments, whole packets, and a shared FIFO queue split by window size rather
    // than a fair scheduler. DCTCP with a shallow marking threshold keeps windows near the fair
    // share, so it is the transport that should come close. Measured with seeds 11 / 12 / 13
    // (3,200-11,400 flows per point): ρ = 0.3: 1.356 / 1.365 / 1.344 (PS 1.429);
    // ρ = 0.5: 1.841 / 1.877 / 1.836 (PS 2.000); ρ = 0.7: 3.278 / 3.164 / 3.127 (PS 3.333):
    // 2-8% below PS, consistently (a little seniority: older flows hold larger windows).
    // Tolerance 12%, and the result must be nearer PS than FIFO (M/D/1: 1 + ρ/(2(1-ρ)) =
    // 1.214 / 1.500 / 2.167). NewReno over a deep drop-tail buffer lands in between
    // (1.357 / 1.760 / 2.567 with shorter runs): see workloads/README.md.
    const NET: &str = "[switch]\nbuffer = \"10MB\"\necn_threshold = \"30pkt\"\n[transport]\ncc = \"dctcp\"\nmin_rto = \"1ms\"";
    let size = 100_000;
    let mut lines = vec![];
    let mut ok = true;
    for (rho, dur) in [(0.3, 1000), (0.5, 1000), (0.7, 1500)] {
        let (prop, ideal, n) = ps_run(rho, size, dur, NET);
        let ps = 1.0 / (1.0 - rho);
        let fifo = 1.0 + rho / (2.0 * (1.0 - rho));
        let err = prop / ps - 1.0;
        lines.push(format!(
            "rho {rho}: flows {n}, mean FCT/size-ideal {prop:.3} (PS {ps:.3}, error {:+.1}%; FIFO {fifo:.3}), mean FCT/sim-ideal {ideal:.3}",
            err * 100.0
        ));
        ok &= err.abs() < 0.12 && (prop - ps).abs() < (prop - fifo).abs() && n > 1000;
    }
    println!("{}", lines.join("\n"));
    assert!(ok, "{}", lines.join("\n"));
}
