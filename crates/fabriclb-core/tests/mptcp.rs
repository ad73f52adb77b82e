//! System tests of MPTCP (the `mptcp` scheme: MPTCP with LIA in the hosts, ECMP in the fabric),
//! each through the public API with the invariants checked on every run.

use fabriclb_core::api::{self, RunResult};
use fabriclb_core::scenario::Format;
use fabriclb_core::table::Column;

fn run(toml: &str) -> RunResult {
    let sc = api::load_scenario(toml, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn col(r: &RunResult, table: &str, name: &str) -> Vec<f64> {
    let t = if table == "flows" { &r.flows } else { &r.ports };
    match t.get(name).unwrap() {
        Column::F64(v) => v.clone(),
        Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("{name}"),
    }
}

fn port(r: &RunResult, link: &str, name: &str) -> f64 {
    let links = match r.ports.get("link").unwrap() {
        Column::Str(v) => v.clone(),
        _ => panic!(),
    };
    let i = links
        .iter()
        .position(|l| l == link)
        .unwrap_or_else(|| panic!("{link}"));
    col(r, "ports", name)[i]
}

/// One connection over two disjoint paths of 10 and 5 Gbps: 15 Gbps on the wire, both used.
#[test]
fn one_connection_fills_two_disjoint_paths() {
    let r = run(r#"
        duration = "60ms"
        warmup = "20ms"
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 1
        host_rate = "40Gbps"
        fabric_rate = "10Gbps"
        [transport]
        cc = "newreno"
        min_rto = "1ms"
        [switch]
        buffer = "300pkt"
        [scheme]
        name = "mptcp"
        subflows = 8
        [[failures]]
        link = "L0-S1"
        kind = "degrade"
        rate = "5Gbps"
        [[failures]]
        link = "S1-L1"
        kind = "degrade"
        rate = "5Gbps"
        [[workload]]
        pattern = "explicit"
        flows = [{ src = "H0", dst = "H1" }]
    "#);
    let s = &r.summary;
    // Wire bytes per payload byte: a 1440-byte segment (the MSS less the DSS option) is a
    // 1518-byte frame with the 20-byte DSS, plus 20 bytes of preamble and gap.
    let payload_per_wire = 1440.0 / 1538.0;
    let want = 15.0 * payload_per_wire;
    let got = s["goodput_gbps"].as_f64().unwrap();
    assert!(
        (got / want - 1.0).abs() < 0.05,
        "goodput {got:.2} Gbps, want {want:.2}"
    );
    for l in ["L0->S0#0", "L0->S1#0"] {
        assert!(port(&r, l, "tx_bytes") > 1e6, "{l} carried nothing");
    }
    let m = &s["mptcp"];
    assert_eq!(m["connections"], 1);
    assert_eq!(m["subflows_opened"], 8);
}

/// RFC 6356's "do no harm": an 8-subflow LIA connection against one NewReno flow through one
/// shared bottleneck takes about the TCP flow's share (0.7x to 1.3x of it).
///
/// The bottleneck marks ECN (NewReno halves once per window on ECN-Echo, RFC 3168), or has a
/// deep drop-tail buffer. With a shallow drop-tail buffer the outcome is decided by traffic
/// phase (Floyd and Jacobson, 1992), not by the congestion control: with 100 packets, whichever
/// flow's packets reach the queue in its full phase loses almost everything, and 8 bytes more
/// or less per ACK decide which one that is (docs/MPTCP.md).
#[test]
fn lia_does_no_harm_at_a_shared_bottleneck() {
    // (transport lines, switch lines)
    let cases = [
        (
            "ecn = true",
            "buffer = \"100pkt\"\necn_threshold = \"20pkt\"",
        ),
        ("ecn = false", "buffer = \"1000pkt\""),
    ];
    for (t, sw) in cases {
        let r = run(&format!(
            r#"
            duration = "300ms"
            [topology]
            kind = "leaf-spine"
            leaves = 2
            spines = 1
            hosts_per_leaf = 2
            host_rate = "10Gbps"
            fabric_rate = "10Gbps"
            [transport]
            cc = "newreno"
            min_rto = "1ms"
            {t}
            [switch]
            {sw}
            [scheme]
            name = "mptcp"
            subflows = 8
            workloads = [1]
            [[workload]]
            pattern = "explicit"
            flows = [{{ src = "H0", dst = "H2" }}]
            [[workload]]
            pattern = "explicit"
            flows = [{{ src = "H1", dst = "H3" }}]
        "#
        ));
        let case = format!("{t}, {sw}");
        let d = col(&r, "flows", "delivered_bytes");
        let (tcp, mp) = (d[0], d[1]);
        let ratio = mp / tcp;
        assert!(
            (0.7..=1.3).contains(&ratio),
            "{case}: MPTCP {mp} bytes, TCP {tcp} bytes, ratio {ratio:.2}"
        );
        // Both together fill the bottleneck.
        let total_gbps = (tcp + mp) * 8.0 / 0.3 / 1e9;
        assert!(total_gbps > 8.5, "{case}: {total_gbps:.2} Gbps");
    }
}

/// New connections per flow (MP_CAPABLE, then joins), a lossy link: every flow completes with
/// every byte delivered; the same seed gives the same records.
#[test]
fn new_connections_and_losses_complete_deterministically() {
    let toml = r#"
        duration = "5ms"
        drain = "3s"  # a lost SYN waits 1 s (linux-3.10)
        [topology]
        kind = "leaf-spine"
        leaves = 2
        spines = 2
        hosts_per_leaf = 4
        host_rate = "10Gbps"
        fabric_rate = "10Gbps"
        [transport]
        profile = "linux-3.10"
        min_rto = "5ms"
        [switch]
        buffer = "60pkt"
        [scheme]
        name = "mptcp"
        subflows = 4
        [[failures]]
        link = "L0-S1"
        kind = "lossy"
        loss = 0.02
        [[workload]]
        pattern = "poisson"
        cdf = "web-search"
        load = 0.5
        load_basis = "host"
        cross_tor = true
    "#;
    let a = run(toml);
    let b = run(toml);
    assert_eq!(a.flows.to_csv(), b.flows.to_csv());
    assert_eq!(a.ports.to_csv(), b.ports.to_csv());
    let s = &a.summary;
    assert_eq!(s["flows_unfinished"], 0, "{}", s["fct"]);
    let sizes = col(&a, "flows", "size_bytes");
    let got = col(&a, "flows", "delivered_bytes");
    assert_eq!(sizes, got);
    let m = &s["mptcp"];
    let conns = m["connections"].as_u64().unwrap();
    assert!(conns >= 10, "{m}");
    assert_eq!(m["subflows_opened"].as_u64().unwrap(), 4 * conns, "{m}");
    assert!(
        s["retransmissions"].as_u64().unwrap() > 0,
        "the lossy link lost packets"
    );
}

#[test]
fn bad_mptcp_fields_name_the_field() {
    let base = |extra: &str| {
        format!(
            r#"
            duration = "1ms"
            [topology]
            kind = "leaf-spine"
            leaves = 2
            spines = 2
            hosts_per_leaf = 1
            host_rate = "10Gbps"
            fabric_rate = "10Gbps"
            [scheme]
            name = "mptcp"
            {extra}
            [[workload]]
            pattern = "permutation"
            "#
        )
    };
    // (extra field, words the error must contain)
    let cases = [
        ("subflows = 0", vec!["scheme.subflows", "1..=32"]),
        ("subflows = 33", vec!["scheme.subflows", "1..=32"]),
        (
            "coupling = \"olia\"",
            vec!["scheme.coupling", "olia", "lia"],
        ),
        ("workloads = [3]", vec!["scheme.workloads[0]", "0..=0"]),
        ("rcv_buffer = \"1KB\"", vec!["scheme.rcv_buffer", "64KiB"]),
    ];
    for (extra, words) in cases {
        let e = api::load_scenario(&base(extra), Format::Toml, &[])
            .err()
            .unwrap_or_else(|| panic!("{extra} was accepted"))
            .to_string();
        for w in words {
            assert!(e.contains(w), "{extra}: {e}");
        }
    }
}
