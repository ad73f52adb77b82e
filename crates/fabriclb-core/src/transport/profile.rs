//! Named kernel profiles: one `transport.profile` value sets a whole Linux kernel's TCP.
//!
//! A profile is applied to the scenario's value tree before it is read: every transport field
//! the scenario does not write is filled with the kernel's value, so the validated (canonical)
//! scenario spells out the whole transport and runs the same without the profile. A field the
//! scenario writes beside the profile wins; when its value is something the named kernel
//! cannot do (a mechanism it does not have, or a compile-time constant changed), validation
//! reports a warning and the run goes ahead as written. Because a canonical scenario holds
//! every field, the warnings follow from it alone ([`Profile::contradictions`]).
//!
//! The values and their sources (kernel files, version brackets) are in docs/TRANSPORT.md and
//! ../shared/LINUX_TCP.md. The testbed's kernel is not in the CONGA paper: 3.10 is an
//! inference from the MPTCP release it used (v0.87).

use super::TransportConfig;
use crate::error::Error;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A Linux kernel whose TCP a profile reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Profile {
    /// Linux 2.6.26, the TCP of the CONGA paper's simulations (run inside the simulator
    /// through the Network Simulation Cradle).
    #[serde(rename = "linux-2.6.26")]
    Linux2626,
    /// Linux 3.10, our inference for the CONGA testbed's hosts (MPTCP v0.87's kernel).
    #[serde(rename = "linux-3.10")]
    Linux310,
}

const NAMES: [(&str, Profile); 2] = [
    ("linux-2.6.26", Profile::Linux2626),
    ("linux-3.10", Profile::Linux310),
];

impl Profile {
    pub fn name(self) -> &'static str {
        NAMES.iter().find(|(_, p)| *p == self).unwrap().0
    }

    /// The transport fields the profile sets, as a scenario would write them.
    pub fn fields(self) -> serde_json::Map<String, Value> {
        // Shared by both kernels (LINUX_TCP.md §2, §3, §4.1, §4.3, §4.8, §6, §9, §10).
        let mut m = json!({
            "min_rto": "200ms",      // TCP_RTO_MIN = HZ/5
            "max_rto": "120s",       // TCP_RTO_MAX
            "delayed_ack": true,
            "delayed_ack_timeout": "40ms", // TCP_DELACK_MIN = TCP_ATO_MIN = HZ/25
            "ack_rules": "linux",
            "sack": true,            // tcp_sack = 1
            "dsack": true,           // tcp_dsack = 1
            "undo": true,
            "fack": true,            // tcp_fack = 1 until 4.15
            "max_reordering": 127,   // TCP_MAX_REORDERING
            "idle_restart": "linux", // tcp_slow_start_after_idle = 1
            "rto_estimator": "linux",
            "clock_hz": 1000,
            "ecn": false,            // 2.6.26: 0; 3.10: 2 (never asks, so never negotiated)
            "rcv_window": "3MiB",    // tcp_rmem[2] less the adv_win_scale share: 4 MB x 3/4, 6 MB x 1/2
            "tso": "0B",
        })
        .as_object()
        .cloned()
        .unwrap();
        let own = match self {
            Profile::Linux2626 => json!({
                "cc": "cubic-linux-2.6.26",  // CUBIC v2.2, no HyStart
                "init_cwnd": 3,              // RFC 3390 at MSS 1448
                "initial_rto": "3s",         // TCP_TIMEOUT_INIT = 3*HZ
                "initial_rcv_window": 4,
                "early_retransmit": "off",   // from 3.5
                "tail_loss_probe": false,    // from 3.10
                "cwnd_reduction": "rate-halving",
                "tsq": "0B",                 // from 3.6
            }),
            Profile::Linux310 => json!({
                "cc": "cubic-linux-3.10",    // CUBIC v2.3 with HyStart
                "init_cwnd": 10,             // TCP_INIT_CWND
                "initial_rto": "1s",         // RFC 6298 (from 3.1)
                "initial_rcv_window": 10,    // TCP_DEFAULT_INIT_RCVWND
                "early_retransmit": "delayed", // tcp_early_retrans = 3
                "tail_loss_probe": true,
                "cwnd_reduction": "prr",     // from 3.2
                "tsq": "128KiB",             // tcp_limit_output_bytes
            }),
        };
        m.extend(own.as_object().cloned().unwrap());
        m
    }

    /// What `t` does that this kernel cannot: fields set to a mechanism the kernel lacks or a
    /// compile-time constant it does not have. Tunables (sysctls, route metrics, socket
    /// options) may differ silently: `min_rto`, `init_cwnd`, `initial_rcv_window`,
    /// `rcv_window`, `sack`, `dsack`, `fack`, `ecn`, `mtu`, `tso`, `idle_restart = "off"`,
    /// and in 3.10 `early_retransmit`, `tail_loss_probe` and `tsq`.
    pub fn contradictions(self, t: &TransportConfig, path: &str) -> Vec<String> {
        let want: TransportConfig =
            serde_json::from_value(Value::Object(self.fields())).expect("profile fields");
        let name = self.name();
        let mut out = vec![];
        let mut say = |field: &str, why: &str| {
            out.push(format!(
                "{path}.{field} contradicts transport.profile = \"{name}\": {why}"
            ));
        };
        if t.cc != want.cc {
            say("cc", "the kernel's congestion control is its own CUBIC; others are not modelled as this kernel implements them");
        }
        if t.initial_rto != want.initial_rto {
            say("initial_rto", "TCP_TIMEOUT_INIT is a compile-time constant");
        }
        if t.max_rto != want.max_rto {
            say("max_rto", "TCP_RTO_MAX is a compile-time constant (120 s)");
        }
        if t.delayed_ack_timeout != want.delayed_ack_timeout {
            say(
                "delayed_ack_timeout",
                "TCP_DELACK_MIN is a compile-time constant (40 ms)",
            );
        }
        if !t.delayed_ack {
            say(
                "delayed_ack",
                "Linux always delays ACKs (TCP_QUICKACK suspends it only for a while)",
            );
        }
        if t.ack_rules != want.ack_rules {
            say(
                "ack_rules",
                "the kernel's receiver follows its own ACK rules",
            );
        }
        if t.rto_estimator != want.rto_estimator {
            say(
                "rto_estimator",
                "the kernel's RTO comes from tcp_rtt_estimator",
            );
        }
        if t.max_reordering != want.max_reordering {
            say(
                "max_reordering",
                "TCP_MAX_REORDERING is a compile-time constant (127)",
            );
        }
        if !t.undo {
            say("undo", "the kernel always undoes spurious recoveries");
        }
        if t.cwnd_reduction != want.cwnd_reduction {
            say(
                "cwnd_reduction",
                match self {
                    Profile::Linux2626 => "PRR arrived in Linux 3.2; 2.6.26 halves the rate",
                    Profile::Linux310 => {
                        "3.10 reduces the window by PRR (rate halving was removed in 3.2)"
                    }
                },
            );
        }
        if t.idle_restart == super::IdleRestart::Rfc5681 {
            say("idle_restart", "the kernel decays cwnd by tcp_cwnd_restart (or not at all, with tcp_slow_start_after_idle = 0)");
        }
        if ![100, 250, 300, 1000].contains(&t.clock_hz) {
            say("clock_hz", "the kernel's HZ is 100, 250, 300 or 1000");
        }
        if self == Profile::Linux2626 {
            if t.tsq.0 > 0 {
                say("tsq", "TCP Small Queues arrived in Linux 3.6");
            }
            if t.early_retransmit != super::EarlyRetransmit::Off {
                say("early_retransmit", "Early Retransmit arrived in Linux 3.5");
            }
            if t.tail_loss_probe {
                say("tail_loss_probe", "Tail Loss Probe arrived in Linux 3.10");
            }
        }
        out
    }
}

/// Fill the transport fields a scenario's value tree does not write from its
/// `transport.profile`, if it names one. An unknown name is an error that lists the profiles.
pub fn apply(tree: &mut Value) -> Result<(), Error> {
    let Some(t) = tree.get_mut("transport").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let Some(v) = t.get("profile") else {
        return Ok(());
    };
    let allowed = NAMES.map(|(n, _)| format!("\"{n}\"")).join(", ");
    let profile = match v.as_str().and_then(|s| NAMES.iter().find(|(n, _)| *n == s)) {
        Some((_, p)) => *p,
        None => {
            return Err(Error::config(
                "transport.profile",
                format!("unknown profile {v}; allowed: {allowed}"),
            ))
        }
    };
    for (k, v) in profile.fields() {
        t.entry(k).or_insert(v);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(fields: Value) -> TransportConfig {
        let mut tree = json!({ "transport": fields });
        apply(&mut tree).unwrap();
        serde_json::from_value(tree["transport"].clone()).unwrap()
    }

    #[test]
    fn profiles_set_their_kernels_and_fields_beside_them_win() {
        // (profile, field, value expected after applying the profile)
        let cases = [
            ("linux-2.6.26", "init_cwnd", json!(3)),
            ("linux-2.6.26", "initial_rto", json!("3s")),
            ("linux-2.6.26", "cwnd_reduction", json!("rate-halving")),
            ("linux-2.6.26", "tsq", json!("0B")),
            ("linux-2.6.26", "tail_loss_probe", json!(false)),
            ("linux-3.10", "init_cwnd", json!(10)),
            ("linux-3.10", "initial_rto", json!("1s")),
            ("linux-3.10", "cwnd_reduction", json!("prr")),
            ("linux-3.10", "tsq", json!("128KiB")),
            ("linux-3.10", "early_retransmit", json!("delayed")),
            ("linux-3.10", "cc", json!("cubic-linux-3.10")),
        ];
        for (p, field, v) in cases {
            let t = load(json!({ "profile": p }));
            let got = serde_json::to_value(&t).unwrap()[field].clone();
            let want: TransportConfig = serde_json::from_value(json!({ field: v })).unwrap();
            assert_eq!(
                got,
                serde_json::to_value(&want).unwrap()[field],
                "{p} {field}"
            );
            assert!(t.warnings("transport").is_empty(), "{p}: the profile alone");
        }
        let t = load(json!({"profile": "linux-3.10", "min_rto": "1ms", "init_cwnd": 4}));
        assert_eq!(t.min_rto.0, 1_000_000_000);
        assert_eq!(t.init_cwnd, 4);
        assert!(t.warnings("transport").is_empty(), "tunables do not warn");
    }

    #[test]
    fn overrides_a_kernel_cannot_do_warn() {
        // (profile, override, field the warning names)
        let cases = [
            ("linux-2.6.26", json!({"tsq": "128KiB"}), "tsq"),
            (
                "linux-2.6.26",
                json!({"tail_loss_probe": true}),
                "tail_loss_probe",
            ),
            (
                "linux-2.6.26",
                json!({"early_retransmit": "on"}),
                "early_retransmit",
            ),
            (
                "linux-2.6.26",
                json!({"cwnd_reduction": "prr"}),
                "cwnd_reduction",
            ),
            (
                "linux-3.10",
                json!({"cwnd_reduction": "rate-halving"}),
                "cwnd_reduction",
            ),
            ("linux-3.10", json!({"cc": "dctcp"}), "cc"),
            ("linux-3.10", json!({"initial_rto": "3s"}), "initial_rto"),
            ("linux-3.10", json!({"max_reordering": 3}), "max_reordering"),
        ];
        for (p, over, field) in cases {
            let mut f = over.as_object().unwrap().clone();
            f.insert("profile".into(), json!(p));
            let w = load(Value::Object(f)).warnings("transport");
            assert_eq!(w.len(), 1, "{p} {over}: {w:?}");
            assert!(w[0].starts_with(&format!("transport.{field} ")), "{w:?}");
            assert!(w[0].contains(p), "{w:?}");
        }
        // 3.10 has these as sysctls: no warning.
        let t = load(
            json!({"profile": "linux-3.10", "tsq": "0B", "tail_loss_probe": false, "early_retransmit": "off"}),
        );
        assert!(t.warnings("transport").is_empty());
    }

    #[test]
    fn an_unknown_profile_names_the_allowed_ones() {
        let mut tree = json!({"transport": {"profile": "linux-9.99"}});
        let e = apply(&mut tree).unwrap_err().to_string();
        assert!(e.contains("transport.profile"), "{e}");
        assert!(
            e.contains("linux-9.99") && e.contains("\"linux-2.6.26\", \"linux-3.10\""),
            "{e}"
        );
    }
}
