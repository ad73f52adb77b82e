//! System tests of the kernel profiles and the Linux transport options: every profile, and
//! every option on at once, runs a loaded fabric with the invariants checked (packet
//! conservation, queue <= capacity, no event in the past: `measure.check_invariants` is on by
//! default, a violation fails the run) and gives byte-identical records when run twice.

use fabriclb_core::api;
use fabriclb_core::scenario::Format;

const BASE: &str = r#"
name = "profiles"
duration = "6ms"
warmup = "1ms"
drain = "1s"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
host_rate = "10Gbps"
fabric_rate = "40Gbps"
links_per_pair = 2
[switch]
overlay = "always"
buffer = "80pkt"
[scheme]
name = "conga"
[[failures]]
link = "L1-S1#1"
kind = "down"
[[workload]]
pattern = "client-server"
cdf = "web-search"
load = 0.7
load_basis = "fabric"
capacity = "320Gbps"
cross_tor = true
connections_per_pair = 2
"#;

fn run_twice(transport: &str) -> (serde_json::Value, String) {
    // (Packet conservation is an invariant of every run: a violation fails `api::run`.)
    let toml = format!("{BASE}\n[transport]\n{transport}\n");
    let sc = api::load_scenario(&toml, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}"));
    let a = api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{transport}: {e}"));
    let b = api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{transport}: {e}"));
    assert_eq!(
        a.flows.to_csv(),
        b.flows.to_csv(),
        "{transport}: flows differ"
    );
    assert_eq!(
        a.ports.to_csv(),
        b.ports.to_csv(),
        "{transport}: ports differ"
    );
    (a.summary, a.flows.to_csv())
}

#[test]
fn profiles_and_all_options_are_deterministic_and_conserve_packets() {
    let cases = [
        r#"profile = "linux-2.6.26""#,
        r#"profile = "linux-3.10""#,
        // Every option on (with the 3.10 controller), losses from the small buffers.
        r#"cc = "cubic-linux-3.10"
early_retransmit = "on"
tail_loss_probe = true
cwnd_reduction = "prr"
dsack = true
undo = true
max_reordering = 127
fack = true
idle_restart = "linux"
rto_estimator = "linux"
ack_rules = "linux"
delayed_ack = true
delayed_ack_timeout = "40ms"
min_rto = "5ms"
tsq = "128KiB""#,
        r#"cc = "cubic-linux-2.6.26"
cwnd_reduction = "rate-halving"
dsack = true
undo = true
max_reordering = 127
idle_restart = "rfc5681"
min_rto = "5ms""#,
    ];
    for t in cases {
        let (s, _) = run_twice(t);
        let done = s["flows_completed"].as_u64().unwrap();
        assert!(done > 50, "{t}: {done} flows finished");
        assert_eq!(s["flows_unfinished"].as_u64(), Some(0), "{t}");
        assert!(
            s["warnings"].as_array().unwrap().is_empty(),
            "{t}: {}",
            s["warnings"]
        );
    }
}

#[test]
fn the_profiles_drive_their_mechanisms_in_a_loaded_fabric() {
    // With 80-packet buffers and a failed link the fabric drops packets: 3.10 repairs some
    // tails with loss probes and early retransmits and undoes spurious recoveries; 2.6.26 has
    // neither mechanism.
    let (s310, _) = run_twice(r#"profile = "linux-3.10""#);
    let (s2626, _) = run_twice(r#"profile = "linux-2.6.26""#);
    assert!(
        s310["tcp"]["recoveries"].as_u64().unwrap() > 0,
        "{}",
        s310["tcp"]
    );
    assert!(
        s310["tcp"]["loss_probes"].as_u64().unwrap()
            + s310["tcp"]["early_retransmits"].as_u64().unwrap()
            > 0,
        "{}",
        s310["tcp"]
    );
    assert_eq!(s2626["tcp"]["loss_probes"].as_u64(), Some(0));
    assert_eq!(s2626["tcp"]["early_retransmits"].as_u64(), Some(0));
}
