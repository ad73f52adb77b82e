//! The HDFS-like write job (`pattern = "hdfs"`, issue 27): its completion time against hand
//! calculations on an idle fabric, disk-bound and network-bound, the disk shared by the
//! replicas a node writes at once, and the errors for bad input. Every run checks the
//! simulator's invariants.

use fabriclb_core::api::{self, RunResult};
use fabriclb_core::scenario::Format;
use fabriclb_core::Error;

/// 2 leaves × 4 hosts (H0–H3 under L0, H4–H7 under L1), 2 spines, 10 Gbps everywhere
/// (`HOST_RATE` is replaced for the network-bound cases).
const FABRIC: &str = r#"
name = "hdfs-test"
duration = "1s"
drain = "10s"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate = "HOST_RATE"
fabric_rate = "10Gbps"
[measure]
window = "1s"
"#;

fn text(scheme: &str, job: &str) -> String {
    text_at("10Gbps", scheme, job)
}

fn text_at(host_rate: &str, scheme: &str, job: &str) -> String {
    let fabric = FABRIC.replace("HOST_RATE", host_rate);
    format!("{fabric}\n[scheme]\nname = \"{scheme}\"\n[[workload]]\npattern = \"hdfs\"\n{job}\n")
}

fn run(scheme: &str, job: &str) -> RunResult {
    run_at("10Gbps", scheme, job)
}

fn run_at(host_rate: &str, scheme: &str, job: &str) -> RunResult {
    let t = text_at(host_rate, scheme, job);
    let sc = api::load_scenario(&t, Format::Toml, &[]).unwrap_or_else(|e| panic!("{e}\n{t}"));
    api::run(&sc, Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn jct_s(r: &RunResult) -> f64 {
    let h = &r.summary["hdfs"];
    assert_eq!(h["finished"], true, "{h}");
    h["jct_s"].as_f64().unwrap()
}

fn err(job: &str) -> Error {
    let t = text("ecmp", job);
    match api::load_scenario(&t, Format::Toml, &[]) {
        Err(e) => e,
        Ok(sc) => api::check(&sc)
            .err()
            .unwrap_or_else(|| panic!("no error for\n{job}")),
    }
}

fn field(e: &Error) -> String {
    match e {
        Error::Config { path, .. } => path.clone(),
        other => panic!("not a field error: {other}"),
    }
}

/// Three DataNodes: H0 under L0, H4 and H5 under L1. A file written from H0 goes
/// H0 → (H4 or H5) → the other: the second replica on another rack, the third on its rack.
const THREE: &str = r#"datanodes = ["H0", "H4", "H5"]"#;

/// Disk-bound: one file of three 2 MB blocks, disks of 1 Gbps, a 10 Gbps network. The writer
/// hands a block over at the disk rate, so each block takes 2 MB × 8 / 1 Gbps = 16 ms, plus
/// its last packet's way down the pipeline and the acknowledgement's way back (tens of µs
/// at 10 Gbps): 48 ms in all, within 1 %.
#[test]
fn disk_bound_job_takes_the_bytes_over_the_disk_rate() {
    let r = run(
        "ecmp",
        &format!(
            "{THREE}\nfiles = 1\nslots = 1\nfile_size = \"6MB\"\nblock_size = \"2MB\"\ndisk_rate = \"1Gbps\""
        ),
    );
    let hand = 6e6 * 8.0 / 1e9;
    let jct = jct_s(&r);
    assert!(
        jct >= hand && jct <= hand * 1.01,
        "jct {jct} s, hand {hand} s"
    );
    assert_eq!(r.summary["hdfs"]["blocks_done"], 3);
    // Two transfers and two acknowledgements per block.
    assert_eq!(r.summary["flows_completed"], 12);
    // The run ends with the job.
    let end = r.summary["sim_time_s"].as_f64().unwrap();
    assert!(
        (end - jct).abs() < 1e-9,
        "run ended at {end} s, job at {jct} s"
    );
}

/// Two files, one slot per node: H0 writes one (H0 → H4|H5 → the other), H4 the other
/// (H4 → H0, the only node of another rack, → H5, as no other node is on H0's rack). Every
/// node then writes two replicas at once, so each pipeline gets half the disk: 2 × 2 MB × 8
/// / 1 Gbps = 32 ms, within 1 %.
#[test]
fn replicas_written_at_once_share_a_disk() {
    let r = run(
        "ecmp",
        &format!(
            "{THREE}\nfiles = 2\nslots = 1\nfile_size = \"2MB\"\nblock_size = \"2MB\"\ndisk_rate = \"1Gbps\""
        ),
    );
    let hand = 2.0 * 2e6 * 8.0 / 1e9;
    let jct = jct_s(&r);
    assert!(
        jct >= hand && jct <= hand * 1.01,
        "jct {jct} s, hand {hand} s"
    );
}

/// Network-bound: disks of 100 Gbps and 40 Gbps host links, so the 10 Gbps fabric link that
/// stage 0 (H0 → H4) crosses decides; stage 1 (H4 → H5) stays under its leaf, forwarding what
/// arrives at 40 Gbps. (With 10 Gbps host links the middle node's link would carry stage 0's
/// data and stage 1's ACKs at once, and drops there would decide instead.) A block of B bytes
/// takes B / 1460 segments × (1538 B on the wire, plus CONGA's 50-byte overlay header on the
/// fabric) × 8 / 10 Gbps, plus a handshake, slow start from 10 segments, the last segments'
/// way through stage 1 and the acknowledgement (well under 1 % of a 16 MB block): two blocks
/// within 2 %.
#[test]
fn network_bound_job_takes_the_bytes_over_the_line_rate() {
    for (scheme, wire) in [("ecmp", 1538.0), ("conga", 1588.0)] {
        let r = run_at(
            "40Gbps",
            scheme,
            &format!(
                "{THREE}\nfiles = 1\nslots = 1\nfile_size = \"32MB\"\nblock_size = \"16MB\"\ndisk_rate = \"100Gbps\""
            ),
        );
        let hand = 32e6 / 1460.0 * wire * 8.0 / 10e9;
        let jct = jct_s(&r);
        assert!(
            jct >= hand && jct <= hand * 1.02,
            "{scheme}: jct {jct} s, hand {hand} s"
        );
    }
}

/// Persistent connections and MPTCP carry the same job, no faster than the fabric allows:
/// one 10 Gbps path for TCP; for MPTCP, whose 8 subflows spread over both spines, two, with
/// 1440 bytes of payload per 1538-byte frame (its DSS option takes 20).
#[test]
fn persistent_connections_and_mptcp_complete_the_job() {
    let job = format!(
        "{THREE}\nfiles = 1\nslots = 1\nfile_size = \"8MB\"\nblock_size = \"4MB\"\ndisk_rate = \"100Gbps\""
    );
    for (scheme, extra) in [
        ("ecmp", "persistent = true"),
        ("mptcp", ""),
        ("mptcp", "persistent = true"),
    ] {
        let hand = match scheme {
            "mptcp" => 8e6 / 1440.0 * 1538.0 * 8.0 / 20e9,
            _ => 8e6 / 1460.0 * 1538.0 * 8.0 / 10e9,
        };
        let r = run_at("40Gbps", scheme, &format!("{job}\n{extra}"));
        let jct = jct_s(&r);
        assert!(
            jct >= hand && jct <= hand * 1.2,
            "{scheme} {extra}: jct {jct} s, hand {hand} s"
        );
    }
}

/// A job beside background traffic on the default DataNodes (all hosts but the NameNode):
/// it finishes, the same seed gives the same completion time, and it is no faster than the
/// disks allow.
#[test]
fn job_beside_background_traffic_is_repeatable() {
    let job = r#"namenode = "H0"
files = 14
file_size = "2MB"
block_size = "1MB"
disk_rate = "4Gbps"
[[workload]]
pattern = "client-server"
load = 0.5
load_basis = "fabric"
cdf = "enterprise"
"#;
    let a = jct_s(&run("ecmp", job));
    let b = jct_s(&run("ecmp", job));
    assert_eq!(a, b);
    // 7 DataNodes × 2 slots = 14 files at once; each node writes 6 replicas on average, so
    // no pipeline goes faster than 4 Gbps / ... at best a file takes 2 MB at the full disk.
    assert!(a >= 2e6 * 8.0 / 4e9, "jct {a}");
}

#[test]
fn bad_input_names_the_field() {
    let base = "file_size = \"2MB\"\ndisk_rate = \"1Gbps\"\nfiles = 1";
    let cases = [
        (
            format!("{THREE}\n{base}\nreplication = 4"),
            "workload[0].replication",
        ),
        (
            format!("{base}\nreplication = 1"),
            "workload[0].replication",
        ),
        (
            format!("{base}\nblock_size = \"0B\""),
            "workload[0].block_size",
        ),
        (
            "file_size = \"2MB\"\ndisk_rate = \"0Gbps\"\nfiles = 1".to_string(),
            "workload[0].disk_rate",
        ),
        (format!("{base}\nslots = 65"), "workload[0].slots"),
        (format!("{base}\nslots = 0"), "workload[0].slots"),
        (
            "file_size = \"0B\"\ndisk_rate = \"1Gbps\"\nfiles = 1".to_string(),
            "workload[0].file_size",
        ),
        (
            format!("{base}\nblock_size = \"1MB\"\npacket_size = \"4MB\""),
            "workload[0].packet_size",
        ),
        (
            format!("{base}\nnamenode = \"H0\"\ndatanodes = [\"H0\", \"H1\"]"),
            "workload[0].datanodes[0]",
        ),
        (format!("{base}\nstart = \"2s\""), "workload[0].start"),
    ];
    for (job, want) in cases {
        let e = err(&job);
        assert_eq!(field(&e), want, "{e}\n{job}");
    }
    // A negative size or rate does not parse, and the message names the field.
    for job in [
        format!("{base}\nblock_size = \"-1MB\""),
        "file_size = \"2MB\"\ndisk_rate = \"-1Gbps\"\nfiles = 1".to_string(),
    ] {
        let e = err(&job);
        let s = e.to_string();
        assert!(s.contains("block_size") || s.contains("disk_rate"), "{s}");
    }
    // One job per scenario.
    let t = format!(
        "{}\n[[workload]]\npattern = \"hdfs\"\n{base}\n",
        text("ecmp", base)
    );
    let sc = api::load_scenario(&t, Format::Toml, &[]);
    let e = sc.err().expect("two jobs");
    assert_eq!(field(&e), "workload[1].pattern", "{e}");
}
