//! System tests of `expeditus`, `expeditus-socc` and `path-oracle` (issue 21), end to end
//! through the public API (the mechanisms' tables are unit tests in `lb/`). Every run here
//! also checks the invariants: `measure.check_invariants` is on by default.

use fabriclb_core::api::{self, RunResult};
use fabriclb_core::error::Error;
use fabriclb_core::scenario::Format;
use fabriclb_core::table::Column;

const SCHEMES: [&str; 3] = ["expeditus", "expeditus-socc", "path-oracle"];

fn run(toml: &str, ov: &[(&str, &str)]) -> RunResult {
    let ov: Vec<(String, String)> = ov
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let sc = api::load_scenario(toml, Format::Toml, &ov).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn col(r: &RunResult, table: &str, c: &str) -> Vec<f64> {
    let t = if table == "flows" { &r.flows } else { &r.ports };
    match t.get(c).unwrap_or_else(|| panic!("no column {c}")) {
        Column::F64(v) => v.clone(),
        Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
        Column::Str(_) => panic!("{c} is text"),
    }
}

fn names(r: &RunResult, table: &str, c: &str) -> Vec<String> {
    let t = if table == "flows" { &r.flows } else { &r.ports };
    match t.get(c).unwrap() {
        Column::Str(v) => v.clone(),
        _ => panic!(),
    }
}

/// Sum of `c` over the ports whose link name matches `pred`.
fn ports_sum(r: &RunResult, c: &str, pred: impl Fn(&str) -> bool) -> f64 {
    names(r, "ports", "link")
        .iter()
        .zip(col(r, "ports", c))
        .filter(|(n, _)| pred(n))
        .map(|(_, v)| v)
        .sum()
}

/// k = 4 fat-tree, 10 Gbps, 1 µs links: H0 and H1 under E0_0, H15 under E3_1.
const FAT_TREE: &str = r#"
duration = "1ms"
drain = "1s"
[topology]
kind = "fat-tree"
k = 4
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[transport]
cc = "newreno"
"#;

#[test]
fn one_flow_pays_its_stamps_and_headers_and_matches_the_ideal_fct() {
    // One flow H0 -> H15 across pods on an idle fabric. The bytes on the destination edge's
    // links from above minus those on its link to H15 are the scheme's southbound overhead:
    // expeditus: an 8-byte stamp on every packet, and the SYN's header (2 + 2·2 bytes);
    // expeditus-socc: the SYN's header only (1 + 2 bytes); path-oracle: none. The ideal FCT
    // counts the stamps, so the flow stays within 1% of it.
    for (scheme, per_pkt, syn_hdr) in [
        ("expeditus", 8.0, 6.0),
        ("expeditus-socc", 0.0, 3.0),
        ("path-oracle", 0.0, 0.0),
    ] {
        for size in [1460u64, 100_000, 10_000_000] {
            let toml = format!(
                "{FAT_TREE}[scheme]\nname = \"{scheme}\"\n[[workload]]\npattern = \"explicit\"\nflows = [{{src = \"H0\", dst = \"H15\", size = \"{size}B\"}}]\n"
            );
            let r = run(&toml, &[]);
            let fct = col(&r, "flows", "fct_ms")[0];
            let ideal = col(&r, "flows", "ideal_fct_ms")[0];
            let err = (fct / ideal - 1.0).abs();
            assert!(err < 0.01, "{scheme} {size}: fct {fct} vs ideal {ideal}");
            let down = ports_sum(&r, "tx_bytes", |n| {
                n.starts_with("A3_") && n.contains("->E3_1")
            });
            let host = ports_sum(&r, "tx_bytes", |n| n.starts_with("E3_1->H15"));
            let pkts = ports_sum(&r, "tx_packets", |n| n.starts_with("E3_1->H15"));
            assert_eq!(down - host, per_pkt * pkts + syn_hdr, "{scheme} {size}");
            assert_eq!(r.summary["drops"].as_u64(), Some(0));
        }
    }
}

#[test]
fn every_handshake_runs_its_stages_and_runs_repeat_exactly() {
    // Poisson flows of 20 KB on average between random hosts on a k = 8 fat-tree with 2:1 at
    // the aggregation layer, light enough that nothing is dropped: every flow between two edges makes one
    // edge choice, every flow between two pods one aggregation choice (expeditus: stage 1 and
    // 2; socc: the same between pods, and within a pod one choice at the sender's edge), the
    // oracle one choice per flow between edges. Same seed, same records.
    let toml = r#"
duration = "2ms"
drain = "1s"
[topology]
kind = "fat-tree"
k = 8
agg_oversubscription = 2
host_rate = "10Gbps"
fabric_rate = "10Gbps"
[transport]
cc = "newreno"
[switch]
buffer = "1000pkt"
[[workload]]
pattern = "poisson"
size = "20KB"
size_dist = "exponential"
load = 0.2
load_basis = "host"
"#;
    for scheme in SCHEMES {
        let r = run(toml, &[("scheme.name", &format!("\"{scheme}\""))]);
        assert_eq!(
            r.summary["drops"].as_u64(),
            Some(0),
            "{scheme}: lower the load"
        );
        let started = r.summary["flows_started"].as_u64().unwrap();
        assert!(started > 50, "{started}");
        assert_eq!(
            r.summary["flows_completed"].as_u64(),
            Some(started),
            "{scheme}"
        );
        // k = 8: 4 hosts per edge switch, 16 per pod.
        let host = |n: &str| n[1..].parse::<u32>().unwrap();
        let (mut inter_edge, mut inter_pod) = (0, 0);
        for (s, d) in names(&r, "flows", "src")
            .iter()
            .zip(names(&r, "flows", "dst"))
        {
            let (s, d) = (host(s), host(&d));
            inter_edge += (s / 4 != d / 4) as u64;
            inter_pod += (s / 16 != d / 16) as u64;
        }
        let lb = &r.summary["lb"];
        let got = |k: &str| lb[k].as_u64().unwrap_or_else(|| panic!("{scheme}: {lb}"));
        match scheme {
            "expeditus" => {
                assert_eq!(
                    (got("stage1_choices"), got("stage2_choices")),
                    (inter_edge, inter_pod),
                    "{lb}"
                );
            }
            "expeditus-socc" => {
                assert_eq!(
                    (got("edge_choices"), got("aggregation_choices")),
                    (inter_edge, inter_pod),
                    "{lb}"
                );
            }
            _ => assert_eq!(got("choices"), inter_edge, "{lb}"),
        }
        assert!(got("pinned_hops") > 0, "{lb}");
        let again = run(toml, &[("scheme.name", &format!("\"{scheme}\""))]);
        assert_eq!(
            col(&r, "flows", "fct_ms"),
            col(&again, "flows", "fct_ms"),
            "{scheme}"
        );
        assert_eq!(r.summary["lb"], again.summary["lb"]);
    }
}

#[test]
fn validation_rejects_fabrics_the_schemes_cannot_serve() {
    let ls = "duration = \"1ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\n";
    let explicit = "duration = \"1ms\"\n[topology]\nkind = \"explicit\"\nswitches = [{name = \"L0\", role = \"leaf\"}, {name = \"L1\", role = \"leaf\"}, {name = \"S0\", role = \"spine\"}]\nhosts = [{name = \"A\", attach = \"L0\", rate = \"10Gbps\"}, {name = \"B\", attach = \"L1\", rate = \"10Gbps\"}]\nlinks = [{a = \"L0\", b = \"S0\", rate = \"10Gbps\"}, {a = \"L1\", b = \"S0\", rate = \"10Gbps\"}]\n";
    // (scenario, overrides) -> (field, words of the message)
    let cases: &[(&str, &[(&str, &str)], &str, &[&str])] = &[
        (
            ls,
            &[("topology.links_per_pair", "2")],
            "topology.links_per_pair",
            &["2 parallel links", "links_per_pair = 1", "fat-tree"],
        ),
        (
            ls,
            &[("topology.spines", "300")],
            "topology.spines",
            &["300 spines", "255"],
        ),
        (
            explicit,
            &[],
            "topology.kind",
            &["explicit", "leaf-spine", "fat-tree"],
        ),
        (
            FAT_TREE,
            &[("topology.k", "16"), ("topology.agg_oversubscription", "3")],
            "topology.agg_oversubscription",
            &["k/2 = 8", "1, 2, 4, 8"],
        ),
    ];
    for scheme in SCHEMES {
        for (text, ov, field, words) in cases {
            let mut ov: Vec<(String, String)> = ov
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            ov.push(("scheme.name".into(), format!("\"{scheme}\"")));
            match api::load_scenario(text, Format::Toml, &ov) {
                Err(Error::Config { path, msg }) => {
                    assert_eq!(&path, field, "{scheme}: {msg}");
                    for w in words.iter() {
                        assert!(msg.contains(w), "{scheme}: {path}: {msg} lacks {w:?}");
                    }
                    if *field != "topology.agg_oversubscription" {
                        assert!(msg.contains(scheme), "{msg}");
                    }
                }
                other => panic!(
                    "{scheme} {field}: expected a config error, got {:?}",
                    other.map(|_| ())
                ),
            }
        }
        // What they can serve.
        for (text, ov) in [
            (ls, vec![]),
            (FAT_TREE, vec![("topology.agg_oversubscription", "2")]),
        ] {
            let mut ov: Vec<(String, String)> = ov
                .iter()
                .map(|(a, b): &(&str, &str)| (a.to_string(), b.to_string()))
                .collect();
            ov.push(("scheme.name".into(), format!("\"{scheme}\"")));
            api::load_scenario(text, Format::Toml, &ov).unwrap_or_else(|e| panic!("{scheme}: {e}"));
        }
    }
    // Other schemes run on any fabric.
    api::load_scenario(
        explicit,
        Format::Toml,
        &[("scheme.name".into(), "\"ecmp\"".into())],
    )
    .unwrap();
}

#[test]
fn persistent_connections_are_warned_about() {
    // Flows on pre-established connections have no handshake, so these schemes route them by
    // ECMP: validation says so (a warning: the run is allowed).
    let cs = "duration = \"1ms\"\n[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nhost_rate = \"10Gbps\"\nfabric_rate = \"10Gbps\"\n[[workload]]\npattern = \"poisson\"\nsize = \"10KB\"\nload = 0.1\nload_basis = \"host\"\n[[workload]]\npattern = \"client-server\"\ncdf = \"web-search\"\nload = 0.1\nload_basis = \"fabric\"\n";
    for (scheme, warned) in [
        ("expeditus", true),
        ("expeditus-socc", true),
        ("path-oracle", true),
        ("ecmp", false),
    ] {
        let sc = api::load_scenario(
            cs,
            Format::Toml,
            &[("scheme.name".into(), format!("\"{scheme}\""))],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let w = sc.warnings();
        let hit = w
            .iter()
            .any(|m| m.starts_with("workload[1]") && m.contains(scheme) && m.contains("ECMP"));
        assert_eq!(hit, warned, "{scheme}: {w:?}");
        assert!(!w.iter().any(|m| m.starts_with("workload[0]")), "{w:?}");
    }
}
