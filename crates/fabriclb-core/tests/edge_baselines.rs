//! System tests of the edge baselines Clove, Clove-ns3, Hermes and Presto (issue 20,
//! docs/CLOVE_HERMES.md), through the public API with the invariants checked on every run:
//! web-search flows on an asymmetric leaf-spine all finish and the runs are deterministic;
//! each scheme's mechanism shows in its counters; Presto spreads one flow over both paths;
//! the ECN-driven schemes refuse a run without marks, naming the field.

use fabriclb_core::api::{self, RunResult};
use fabriclb_core::error::Error;
use fabriclb_core::scenario::Format;
use fabriclb_core::table::Column;

/// 2 leaves x 2 spines x 4 hosts at 10 G, L0-S0 degraded to 2.5 G; DCTCP, K = 65 packets.
fn fabric(scheme: &str, extra: &str) -> String {
    format!(
        r#"
        duration = "6ms"
        # Clove hides ECN from TCP until every path is marked: a flow that overflows a queue
        # meanwhile can back its RTO off past 200 ms (seen with a 200 ms drain).
        drain = "2s"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 4
        host_rate = "10Gbps"
        fabric_rate = "10Gbps"
        host_delay = "5us"
        fabric_delay = "5us"
        [transport]
        cc = "dctcp"
        min_rto = "5ms"
        [switch]
        ecn_threshold = "65pkt"
        [scheme]
        name = "{scheme}"
        [[failures]]
        link = "L0-S0"
        kind = "degrade"
        rate = "2.5Gbps"
        {extra}
        "#
    )
}

fn run(toml: &str) -> RunResult {
    let sc = api::load_scenario(toml, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn u64s(r: &RunResult, table: &str, name: &str) -> Vec<u64> {
    let t = match table {
        "flows" => &r.flows,
        _ => &r.ports,
    };
    match t.get(name).unwrap_or_else(|| panic!("{name}")) {
        Column::U64(v) => v.clone(),
        Column::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
        _ => panic!("{name}"),
    }
}

#[test]
fn web_search_flows_finish_and_runs_repeat() {
    let traffic = r#"
        [[workload]]
        pattern = "poisson"
        cdf = "web-search"
        load = 0.4
        load_basis = "host"
        cross_tor = true
    "#;
    // (scheme, a counter its mechanism must have moved)
    let cases = [
        ("clove", "clove_flowlets"),
        ("clove-ns3", "clove_flowlets"),
        ("hermes", "hermes_reports"),
        ("presto", "presto_flowcells"),
    ];
    for (scheme, counter) in cases {
        let text = fabric(scheme, traffic);
        let a = run(&text);
        let started = a.summary["flows_started"].as_u64().unwrap();
        assert!(started > 10, "{scheme}: {started} flows");
        assert_eq!(
            a.summary["flows_completed"].as_u64().unwrap(),
            started,
            "{scheme}: every flow finishes: {}",
            a.summary
        );
        let lb = &a.summary["lb"];
        assert!(lb[counter].as_u64().unwrap() > 0, "{scheme}: {lb}");
        assert!(lb["encapsulated"].as_u64().unwrap() > 0, "{scheme}: {lb}");
        assert_eq!(a.summary["host_encap_bytes"], 40, "{scheme}");
        let b = run(&text);
        for col in ["fct_ms", "size_bytes"] {
            assert_eq!(
                u64s(&a, "flows", col),
                u64s(&b, "flows", col),
                "{scheme}: same seed, same {col}"
            );
        }
    }
}

/// One long flow between two hosts under different leaves: Presto's 64 KB flowcells go round
/// robin over both spines, whatever their capacities (L0-S0 runs at 2.5 G).
#[test]
fn presto_spreads_one_flow_over_both_paths() {
    let traffic = r#"
        [[workload]]
        pattern = "explicit"
        flows = [{ src = "H0", dst = "H4", size = "20MB" }]
    "#;
    let r = run(&fabric("presto", traffic));
    assert_eq!(r.summary["flows_completed"], 1);
    let links = match r.ports.get("link").unwrap() {
        Column::Str(v) => v.clone(),
        _ => unreachable!(),
    };
    let tx = u64s(&r, "ports", "tx_bytes");
    let up = |s: usize| {
        tx[links
            .iter()
            .position(|l| *l == format!("L0->S{s}#0"))
            .unwrap()]
    };
    let (a, b) = (up(0) as f64, up(1) as f64);
    // Cells alternate over the two paths: the bytes split evenly (retransmissions count too).
    assert!(a > 9e6 && b > 9e6, "uplinks carried {a} and {b} bytes");
    assert!((a - b).abs() < 0.05 * (a + b), "{a} vs {b}");
    let lb = &r.summary["lb"];
    assert!(
        lb["presto_flowcells"].as_u64().unwrap() >= 20_000_000 / 65_536,
        "{lb}"
    );
}

#[test]
fn ecn_driven_schemes_need_marks() {
    for scheme in ["clove", "clove-ns3", "hermes"] {
        for (set, field) in [
            ("transport.cc=\"newreno\"", "transport.ecn"),
            ("switch.ecn_threshold=\"0B\"", "switch.ecn_threshold"),
        ] {
            let text = fabric(scheme, "");
            let (k, v) = set.split_once('=').unwrap();
            let e = api::load_scenario(&text, Format::Toml, &[(k.to_string(), v.to_string())])
                .and_then(|sc| api::run(&sc, Default::default()).map(|_| ()));
            match e {
                Err(Error::Config { path, msg }) => {
                    assert_eq!(path, field, "{scheme}: {msg}");
                    assert!(msg.contains(scheme), "{msg}");
                }
                other => panic!("{scheme} {set}: {:?}", other.err()),
            }
        }
    }
    // Presto needs none.
    let sc = api::load_scenario(
        &fabric("presto", ""),
        Format::Toml,
        &[("transport.cc".into(), "\"newreno\"".into())],
    );
    assert!(sc.is_ok(), "{:?}", sc.err());
}
