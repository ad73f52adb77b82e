//! System tests of EMAN, the bandwidth oracle and the traffic tools their experiments use
//! (stop times, constant-rate pinned flows, per-path traces, BDP-sized ports), each through
//! the public API with the invariants checked on every run.

use fabriclb_core::api::{self, RunResult};
use fabriclb_core::error::Error;
use fabriclb_core::scenario::Format;
use fabriclb_core::table::{Column, Table};

/// EMAN's Fig. 1(a): A under L0, B under L1, paths via S0 and S1 of 6 Gbps, S0-L1 at
/// `left` (e.g. "3Gbps"), §V-A settings.
fn fig1a(scheme: &str, left: &str, duration: &str, extra: &str) -> String {
    format!(
        r#"
        duration = "{duration}"
        warmup = "20ms"
        [topology]
        kind = "explicit"
        switches = [{{ name = "L0", role = "leaf" }}, {{ name = "L1", role = "leaf" }},
                    {{ name = "S0", role = "spine" }}, {{ name = "S1", role = "spine" }}]
        hosts = [{{ name = "A", attach = "L0", rate = "100Gbps", delay = "20us" }},
                 {{ name = "A2", attach = "L0", rate = "100Gbps", delay = "20us" }},
                 {{ name = "B", attach = "L1", rate = "100Gbps", delay = "20us" }}]
        links = [{{ a = "L0", b = "S0", rate = "6Gbps", delay = "20us" }},
                 {{ a = "S0", b = "L1", rate = "6Gbps", delay = "20us" }},
                 {{ a = "L0", b = "S1", rate = "6Gbps", delay = "20us" }},
                 {{ a = "S1", b = "L1", rate = "6Gbps", delay = "20us" }}]
        [transport]
        cc = "newreno"
        ecn = true
        sack = false
        min_rto = "5ms"
        [switch]
        base_rtt = "160us"
        ecn_threshold = "1bdp"
        buffer = "3bdp"
        [scheme]
        name = "{scheme}"
        [[failures]]
        link = "S0-L1"
        kind = "degrade"
        rate = "{left}"
        [measure]
        trace_flows = [0]
        trace_paths = true
        trace_interval = "1ms"
        {extra}
        "#
    )
}

fn run(toml: &str) -> RunResult {
    let sc = api::load_scenario(toml, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn f64s(t: &Table, name: &str) -> Vec<f64> {
    match t.get(name).unwrap_or_else(|| panic!("{name}")) {
        Column::F64(v) => v.clone(),
        Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("{name}"),
    }
}

fn strs(t: &Table, name: &str) -> Vec<String> {
    match t.get(name).unwrap() {
        Column::Str(v) => v.clone(),
        _ => panic!("{name}"),
    }
}

/// Bytes a port sent over the whole run.
fn tx(r: &RunResult, link: &str) -> f64 {
    let i = strs(&r.ports, "link")
        .iter()
        .position(|l| l == link)
        .unwrap_or_else(|| panic!("{link}"));
    f64s(&r.ports, "tx_bytes")[i]
}

/// Flow `flow`'s mean rate (Gbps) on each path from the per-path traces, over samples in
/// [from_ms, to_ms).
fn path_rates(r: &RunResult, flow: u64, from_ms: f64, to_ms: f64) -> Vec<(String, f64)> {
    let (t, f, p, g) = (
        f64s(&r.traces, "t_ms"),
        f64s(&r.traces, "flow"),
        strs(&r.traces, "path"),
        f64s(&r.traces, "rate_gbps"),
    );
    let mut acc: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
    for i in 0..t.len() {
        if f[i] as u64 == flow && !p[i].is_empty() && t[i] > from_ms && t[i] <= to_ms {
            let e = acc.entry(p[i].clone()).or_default();
            e.0 += g[i];
            e.1 += 1.0;
        }
    }
    acc.into_iter().map(|(k, (s, n))| (k, s / n)).collect()
}

fn left_right(rates: &[(String, f64)]) -> f64 {
    let get = |s: &str| {
        rates
            .iter()
            .find(|(p, _)| p.contains(s))
            .map_or(0.0, |x| x.1)
    };
    get(">S0>") / get(">S1>")
}

/// Fig. 1(a): the oracle splits 1:2 from the start, EMAN starts at 1:1 (nominal 6:6) and
/// converges to 1:2; both get close to the 9 Gbps, ECMP (one path) at most 6.
#[test]
fn fig1a_eman_converges_to_the_oracles_split() {
    // Payload share of the wire for a full tunneled segment: 1460 / (1518 + 40 + 20).
    let payload = 1460.0 / 1578.0;
    // (scheme, left:right over 20-60 ms, goodput as a share of 9 Gbps x payload share)
    let cases = [
        ("bw-oracle", (0.45, 0.55), 0.9),
        ("eman", (0.4, 0.62), 0.85),
    ];
    for (scheme, (lo, hi), min_share) in cases {
        let r = run(&fig1a(
            scheme,
            "3Gbps",
            "60ms",
            "[[workload]]\npattern = \"explicit\"\nflows = [{ src = \"A\", dst = \"B\" }]",
        ));
        let lr = left_right(&path_rates(&r, 0, 20.0, 60.0));
        let share = r.summary["goodput_gbps"].as_f64().unwrap() / (9.0 * payload);
        assert!(lr > lo && lr < hi, "{scheme}: left:right {lr:.2}");
        assert!(share > min_share, "{scheme}: {share:.3} of the optimum");
        if scheme == "eman" {
            // The first millisecond with traffic on both paths splits 1:1.
            let early = left_right(&path_rates(&r, 0, 0.0, 2.0));
            assert!((early - 1.0).abs() < 0.2, "eman starts at {early:.2}");
            let lb = &r.summary["lb"];
            assert!(lb["eman_ecn_updates"].as_u64().unwrap() > 0, "{lb}");
            assert!(lb["eman_probes"].as_u64().unwrap() > 0, "{lb}");
        }
    }
    let r = run(&fig1a(
        "ecmp",
        "3Gbps",
        "60ms",
        "[[workload]]\npattern = \"explicit\"\nflows = [{ src = \"A\", dst = \"B\" }]",
    ));
    assert!(r.summary["goodput_gbps"].as_f64().unwrap() < 6.0);
}

/// A flow's rate per window on `link` (Gbps), over windows starting in [from_ms, to_ms).
fn link_gbps(r: &RunResult, link: &str, from_ms: f64, to_ms: f64) -> f64 {
    let (t, n, g) = (
        f64s(&r.windows, "t_start_ms"),
        strs(&r.windows, "name"),
        f64s(&r.windows, "throughput_gbps"),
    );
    let v: Vec<f64> = (0..t.len())
        .filter(|&i| n[i] == link && t[i] >= from_ms && t[i] < to_ms)
        .map(|i| g[i])
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

/// The oracle reads the rates in force: S0-L1 degraded from 6 to 3 Gbps at 20 ms turns its
/// 1:1 into 1:2; EMAN follows through ECN feedback.
#[test]
fn a_degradation_mid_run_moves_the_split() {
    let extra = r#"
        [[workload]]
        pattern = "explicit"
        flows = [{ src = "A", dst = "B" }]
    "#;
    for (scheme, before, after) in [
        ("bw-oracle", (0.95, 1.05), (0.45, 0.55)),
        ("eman", (0.8, 1.2), (0.4, 0.65)),
    ] {
        let toml = fig1a(scheme, "3Gbps", "60ms", extra).replace(
            "rate = \"3Gbps\"",
            "rate = \"3Gbps\"\n        at = \"20ms\"",
        );
        let r = run(&toml);
        let b = left_right(&path_rates(&r, 0, 12.0, 20.0));
        let a = left_right(&path_rates(&r, 0, 40.0, 60.0));
        assert!(b > before.0 && b < before.1, "{scheme}: before {b:.2}");
        assert!(a > after.0 && a < after.1, "{scheme}: after {a:.2}");
    }
}

/// A constant-rate flow pinned through S0 takes capacity from EMAN's left path, as EMAN's
/// testbed does with UDP (§V-B2): the TCP flow moves most of its traffic to the right.
#[test]
fn a_pinned_constant_rate_flow_takes_one_path_and_eman_moves_away() {
    let extra = r#"
        [[workload]]
        pattern = "explicit"
        flows = [{ src = "A", dst = "B" }]
        [[workload]]
        pattern = "cbr"
        flows = [{ src = "A2", dst = "B", rate = "4Gbps", start = "10ms", via = ["S0"] }]
    "#;
    // (scheme, TCP left:right over 30-60 ms)
    for (scheme, lo, hi) in [("eman", 0.1, 0.45), ("bw-oracle", 0.9, 1.1)] {
        let r = run(&fig1a(scheme, "6Gbps", "60ms", extra));
        let cbr = &r.summary["cbr"];
        // 4 Gbps of 1538-byte wire packets from 10 to 60 ms.
        let want = (4e9f64 * 0.05 / (1538.0 * 8.0)).ceil();
        assert_eq!(cbr["sent_packets"].as_f64().unwrap(), want, "{cbr}");
        // Pinned: on the wire only through S0 (TCP's own bytes are its own; the CBR's frames
        // carry no tunnel header).
        let s0 = link_gbps(&r, "L0->S0#0", 30.0, 60.0);
        assert!(s0 >= 4.0 * 1518.0 / 1538.0 - 0.01, "{scheme}: {s0}");
        let lr = left_right(&path_rates(&r, 0, 30.0, 60.0));
        assert!(lr > lo && lr < hi, "{scheme}: TCP left:right {lr:.2}");
    }
    // Pinned through S1 instead, under ECMP (the 5-tuple hash): nothing of it through S0.
    let extra = extra
        .replace("\"S0\"", "\"S1\"")
        .replace("start = \"10ms\", ", "");
    let r = run(&fig1a(
        "ecmp",
        "6Gbps",
        "30ms",
        &extra.replace("flows = [{ src = \"A\", dst = \"B\" }]", "flows = []"),
    ));
    assert_eq!(tx(&r, "L0->S0#0"), 0.0);
    assert!(tx(&r, "L0->S1#0") > 0.0);
}

/// Stop times: the application stops writing; the flow carries what it wrote and finishes.
#[test]
fn a_stopped_flow_ends_with_what_it_wrote() {
    // (flow, expected size in bytes (None: what was sent by 10 ms), end within ms of the stop)
    let cases = [
        ("{ src = \"A\", dst = \"B\", stop = \"10ms\" }", None),
        // Rate-limited at 1 Gbps from 2 ms: 8 ms of writing.
        (
            "{ src = \"A\", dst = \"B\", start = \"2ms\", stop = \"10ms\", rate = \"1Gbps\" }",
            Some(1_000_000.0),
        ),
    ];
    for (flow, size) in cases {
        let extra = format!("[[workload]]\npattern = \"explicit\"\nflows = [{flow}]\n");
        let toml = fig1a("eman", "3Gbps", "40ms", &extra).replace("warmup = \"20ms\"", "");
        let r = run(&toml);
        let got = f64s(&r.flows, "size_bytes")[0];
        let end = f64s(&r.flows, "end_ms")[0];
        assert_eq!(f64s(&r.flows, "finished")[0], 1.0, "{flow}");
        assert!(end > 10.0 && end < 12.0, "{flow}: ended at {end} ms");
        match size {
            Some(s) => assert!((got - s).abs() <= 1460.0, "{flow}: {got}"),
            None => {
                // Everything sent by the stop, nothing after: the rate trace goes to 0.
                let after = path_rates(&r, 0, 13.0, 40.0)
                    .iter()
                    .map(|x| x.1)
                    .sum::<f64>();
                assert_eq!(after, 0.0);
                assert!(got > 1e6, "{got}");
                assert_eq!(f64s(&r.flows, "delivered_bytes")[0], got);
            }
        }
    }
}

/// Per-path traces: the rates over all paths add up to what the flow's data brought, and a
/// parallel link is named.
#[test]
fn per_path_traces_add_up_and_name_parallel_links() {
    let r = run(r#"
        duration = "20ms"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        links_per_pair = 2
        hosts_per_leaf = 1
        host_rate = "100Gbps"
        fabric_rate = "10Gbps"
        [scheme]
        name = "spray"
        [[workload]]
        pattern = "explicit"
        flows = [{ src = "H0", dst = "H1", size = "5MB" }]
        [measure]
        trace_flows = [0]
        trace_paths = true
        trace_interval = "500us"
    "#);
    let paths: std::collections::BTreeSet<String> = strs(&r.traces, "path")
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    // 2 spines x 2 links up x 2 links down.
    assert_eq!(paths.len(), 8, "{paths:?}");
    assert!(
        paths.contains("L0>S0>L1") && paths.contains("L0>S1#1>L1#1"),
        "{paths:?}"
    );
    let total: f64 = f64s(&r.traces, "rate_gbps")
        .iter()
        .zip(strs(&r.traces, "path"))
        .filter(|(_, p)| !p.is_empty())
        .map(|(g, _)| g * 1e9 / 8.0 * 500e-6)
        .sum();
    let sent = 5e6 + f64s(&r.flows, "retransmissions")[0] * 1460.0;
    assert!((total - sent).abs() < 1.0, "{total} vs {sent}");
}

#[test]
fn same_seed_same_records() {
    let toml = fig1a(
        "eman",
        "3Gbps",
        "30ms",
        "[[workload]]\npattern = \"explicit\"\nflows = [{ src = \"A\", dst = \"B\" }]",
    );
    let (a, b) = (run(&toml), run(&toml));
    for t in ["flows", "ports", "windows", "traces"] {
        let get = |r: &RunResult| match t {
            "flows" => format!("{:?}", r.flows),
            "ports" => format!("{:?}", r.ports),
            "windows" => format!("{:?}", r.windows),
            _ => format!("{:?}", r.traces),
        };
        assert_eq!(get(&a), get(&b), "{t}");
    }
    assert_eq!(a.summary["lb"], b.summary["lb"]);
}

/// Bad input: a clear error naming the field.
#[test]
fn bad_input_names_the_field() {
    let flow = "[[workload]]\npattern = \"explicit\"\nflows = [{ src = \"A\", dst = \"B\" }]\n";
    let base = fig1a("eman", "3Gbps", "30ms", flow);
    // (change to the base scenario, field, a word of the message)
    let cases: Vec<(String, &str, &str)> = vec![
        (base.replace("name = \"eman\"", "name = \"eman\"\nc_ratecalc = 1"), "scheme.c_ratecalc", "2..=10000"),
        (base.replace("name = \"eman\"", "name = \"eman\"\nt_explore = \"0us\""), "scheme.t_explore", "1us"),
        (base.replace("name = \"eman\"", "name = \"eman\"\nt_reorder = \"-1ms\""), "scheme.t_reorder", "negative"),
        (base.replace("name = \"eman\"", "name = \"bw-oracle\"\nc_ratecalc = 10"), "scheme.c_ratecalc", "t_reorder"),
        (base.replace("base_rtt = \"160us\"", ""), "switch.buffer", "base_rtt"),
        (base.replace("base_rtt = \"160us\"", "base_rtt = \"0us\""), "switch.base_rtt", "> 0"),
        (base.replace("buffer = \"3bdp\"", "buffer = \"3bdp\"\nshared_buffer = \"1bdp\""), "switch.shared_buffer", "bytes"),
        (base.replace("buffer = \"3bdp\"", "buffer = \"3bdq\""), "switch.buffer", "bdp"),
        (base.replace("buffer = \"3bdp\"", "buffer = \"0.001bdp\""), "switch.buffer", "slowest switch port"),
        (base.replace("trace_flows = [0]", "trace_flows = []"), "measure.trace_paths", "trace_flows"),
        (base.replace("dst = \"B\" }", "dst = \"B\", start = \"5ms\", stop = \"5ms\" }"), "workload[0].flows[0].stop", "after"),
        (base.replace(flow, "[[workload]]\npattern = \"bulk\"\nsrc = [\"A\"]\ndst = [\"B\"]\nstagger = \"2ms\"\nstop = \"1ms\"\n"), "workload[0].stop", "stagger"),
        (base.replace(flow, "[[workload]]\npattern = \"cbr\"\nflows = [{ src = \"A\", dst = \"B\", rate = \"0Gbps\" }]\n"), "workload[0].flows[0].rate", "> 0"),
        (base.replace(flow, "[[workload]]\npattern = \"cbr\"\nflows = [{ src = \"A\", dst = \"B\", rate = \"1Gbps\", start = \"2ms\", stop = \"1ms\" }]\n"), "workload[0].flows[0].stop", "after"),
        (base.replace(flow, "[[workload]]\npattern = \"cbr\"\nflows = [{ src = \"A\", dst = \"B\", rate = \"1Gbps\", via = [\"S0\", \"S1\", \"L0\", \"L1\", \"S0\"] }]\n"), "workload[0].flows[0].via", "at most 4"),
        (base.replace(flow, "[[workload]]\npattern = \"cbr\"\nflows = [{ src = \"A\", dst = \"B\", rate = \"1Gbps\", via = [\"S7\"] }]\n"), "workload[0].flows[0].via[0]", "S7"),
        (base.replace(flow, "[[workload]]\npattern = \"cbr\"\nflows = [{ src = \"A\", dst = \"B\", rate = \"1Gbps\", via = [\"S0\", \"S1\"] }]\n"), "workload[0]", "no path from A to B crosses S0, S1"),
        (base.replace("name = \"eman\"", "name = \"spray\"").replace(flow, "[[workload]]\npattern = \"cbr\"\nflows = [{ src = \"A\", dst = \"B\", rate = \"1Gbps\", via = [\"S0\"] }]\n"), "workload[0]", "hash of the header"),
        (base.replace("name = \"eman\"", "name = \"mptcp\"").replace("dst = \"B\" }", "dst = \"B\", stop = \"5ms\" }"), "workload[0]", "mptcp"),
    ];
    for (toml, field, word) in cases {
        let res = api::load_scenario(&toml, Format::Toml, &[]).and_then(|sc| api::check(&sc));
        match res {
            Err(Error::Config { path, msg }) => {
                assert_eq!(path, field, "{msg}");
                assert!(msg.contains(word), "{field}: {msg}");
            }
            other => panic!("{field}: expected an error, got {other:?}"),
        }
    }
    // An edge scheme on a fabric where no two hosts have two paths.
    let one_spine = base
        .replace("{ name = \"S1\", role = \"spine\" }", "")
        .replace("{ a = \"L0\", b = \"S1\", rate = \"6Gbps\", delay = \"20us\" },", "")
        .replace("{ a = \"S1\", b = \"L1\", rate = \"6Gbps\", delay = \"20us\" }", "")
        .replace("switches = [{ name = \"L0\", role = \"leaf\" }, { name = \"L1\", role = \"leaf\" },\n                    { name = \"S0\", role = \"spine\" }, ]", "switches = [{ name = \"L0\", role = \"leaf\" }, { name = \"L1\", role = \"leaf\" }, { name = \"S0\", role = \"spine\" }]");
    for scheme in ["eman", "bw-oracle"] {
        let sc = api::load_scenario(
            &one_spine.replace("name = \"eman\"", &format!("name = \"{scheme}\"")),
            Format::Toml,
            &[],
        )
        .unwrap();
        match api::check(&sc) {
            Err(Error::Config { path, msg }) => {
                assert_eq!(path, "scheme.name");
                assert!(
                    msg.contains(scheme) && msg.contains("more than one"),
                    "{msg}"
                );
            }
            other => panic!("{scheme}: {other:?}"),
        }
    }
}
