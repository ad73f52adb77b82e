//! Host transport: TCP endpoints (`tcp`), their congestion controllers (`cc`) and the named
//! Linux kernel profiles (`profile`). This layer produces and consumes packets at hosts; it
//! never looks inside the network.
//!
//! Every behaviour beyond the RFC baseline is an option of [`TransportConfig`] that is off by
//! default, so that a scenario without a profile runs exactly as before the options existed
//! (the behaviour golden test checks it). A profile (`transport.profile`) sets a whole
//! kernel's transport at once; docs/TRANSPORT.md describes each behaviour and its source.

pub mod cc;
pub mod mptcp;
pub mod profile;
pub mod ranges;
pub mod tcp;

use crate::error::Error;
use crate::units::{Bytes, Duration, Time, PS_PER_MS, PS_PER_S};
use cc::CcKind;
pub use profile::Profile;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// TCP settings shared by all connections of a run.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransportConfig {
    /// Congestion control: "newreno", "cubic", "dctcp", or CUBIC as a Linux kernel implements
    /// it: "cubic-linux-2.6.26", "cubic-linux-3.10".
    #[serde(default)]
    pub cc: CcKind,
    /// IP MTU in bytes, 576..=9216 (1500 and 9000 are the usual). MSS = MTU − 40.
    #[serde(default = "mtu")]
    pub mtu: u32,
    /// Initial congestion window in segments, 1..=1000.
    #[serde(default = "iw")]
    pub init_cwnd: u32,
    /// Minimum retransmission timeout (RFC 6298's 1 s floor is replaced by this; Linux: 200 ms).
    #[serde(default = "min_rto")]
    pub min_rto: Duration,
    /// Retransmission timeout before any RTT sample, also the SYN timeout (RFC 6298: 1 s).
    #[serde(default = "initial_rto")]
    pub initial_rto: Duration,
    /// Upper bound of the backed-off RTO.
    #[serde(default = "max_rto")]
    pub max_rto: Duration,
    /// Delayed ACKs: acknowledge every second full segment or after `delayed_ack_timeout`.
    #[serde(default)]
    pub delayed_ack: bool,
    #[serde(default = "delack_to")]
    pub delayed_ack_timeout: Duration,
    /// Selective acknowledgements (RFC 2018 / 6675). Without SACK, recovery is NewReno's.
    #[serde(default = "yes")]
    pub sack: bool,
    /// ECN-capable transport. Default: on for DCTCP, off otherwise.
    #[serde(default)]
    pub ecn: Option<bool>,
    /// DCTCP's gain g, in (0, 1].
    #[serde(default = "dctcp_g")]
    pub dctcp_g: f64,
    /// TSO-style bursts: when > 0, a sender with data in flight waits until it can send this
    /// many bytes (or all it has) at once, so segments leave back to back ("0B" = off).
    #[serde(default = "zero_bytes")]
    pub tso: Bytes,
    /// TCP Small Queues (Linux since 3.6, `tcp_limit_output_bytes` = 128 KiB there): a sender
    /// sends new data only while less than this many bytes of its data wait in its host's NIC
    /// queue, and resumes when the NIC transmits them ("0B" = off: the NIC queue, which never
    /// drops, holds whatever the congestion window allows).
    #[serde(default = "zero_bytes")]
    pub tsq: Bytes,
    /// Receive window (flow-control limit on bytes in flight): Linux's autotuning bound,
    /// `tcp_rmem[2]` less the `tcp_adv_win_scale` share kept for overhead.
    #[serde(default = "rwnd")]
    pub rcv_window: Bytes,
    /// A named kernel's TCP ("linux-2.6.26" or "linux-3.10"): sets every field below that the
    /// kernel determines; a field written beside it overrides it (validation warns when the
    /// override is something that kernel cannot do). See docs/TRANSPORT.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// Early Retransmit (RFC 5827, Linux 3.5+): with fewer than four segments outstanding and
    /// nothing new to send, a SACK is enough to retransmit. "off", "on", or "delayed" (Linux's
    /// default: wait max(SRTT/4, 2 ms) first, RFC 5827 App. A.3).
    #[serde(default)]
    pub early_retransmit: EarlyRetransmit,
    /// Tail Loss Probe (Linux 3.10, draft-dukkipati-tcpm-tcp-loss-probe-01): after
    /// max(2 SRTT, 10 ms) without an ACK, send new data or resend the last segment, so that
    /// a tail loss is repaired by fast recovery instead of the retransmission timeout.
    #[serde(default)]
    pub tail_loss_probe: bool,
    /// How cwnd falls during fast recovery: "rfc6675" (to ssthresh at once, then the pipe
    /// limits sending), "prr" (Proportional Rate Reduction, RFC 6937, Linux 3.2+) or
    /// "rate-halving" (Linux 2.6: one segment less every second ACK, down to ssthresh).
    #[serde(default)]
    pub cwnd_reduction: CwndReduction,
    /// The receiver reports duplicate segments in a D-SACK block (RFC 2883).
    #[serde(default)]
    pub dsack: bool,
    /// Undo of spurious fast recoveries (RFC 3708-like, as Linux does it): when every
    /// retransmission of an episode is D-SACKed, or an ACK echoes a timestamp older than the
    /// first retransmission (Eifel, RFC 3522), cwnd and ssthresh go back to their values before
    /// the reduction.
    #[serde(default)]
    pub undo: bool,
    /// Largest duplicate threshold (segments). 3 = fixed (RFC 5681); above 3, observed
    /// reordering raises the threshold up to this value, as Linux's `tcp_reordering` adapts up
    /// to 127 (reset to 3 by a timeout). 3..=1000.
    #[serde(default = "dupthresh")]
    #[schemars(range(min = 3, max = 1000))]
    pub max_reordering: u32,
    /// Forward acknowledgement (Linux `tcp_fack`, on until 4.15): a SACK more than
    /// `reordering` segments above the first hole starts recovery, and every hole below
    /// that point counts as lost. Turned off for the connection once reordering is seen.
    #[serde(default)]
    pub fack: bool,
    /// cwnd after an idle period longer than the RTO: "off" (kept), "linux"
    /// (`tcp_cwnd_restart`: halved once per RTO of idle, not below min(IW, cwnd); ssthresh
    /// raised to 3/4 of the old cwnd) or "rfc5681" (§4.1: reset to min(IW, cwnd)).
    #[serde(default)]
    pub idle_restart: IdleRestart,
    /// RTO estimator: "rfc6298" (SRTT + max(G, 4 RTTVAR), floored at `min_rto`) or "linux"
    /// (`tcp_rtt_estimator`: SRTT + max(4 mdev, `min_rto`) with its once-per-RTT decay of
    /// the variance, RTT samples in jiffies of `clock_hz`).
    #[serde(default)]
    pub rto_estimator: RtoEstimator,
    /// The kernel's clock rate HZ (jiffies per second) for the Linux RTO estimator and the
    /// Linux CUBIC variants, whose RTT samples and epochs count jiffies. 100..=10000.
    #[serde(default = "hz")]
    #[schemars(range(min = 100, max = 10000))]
    pub clock_hz: u32,
    /// Receiver ACK rules: "simple" (an ACK every second segment or after
    /// `delayed_ack_timeout`, at once on out-of-order data) or "linux" (adds quick-ACK mode at
    /// the start and after an idle gap, an adaptive delayed-ACK timeout of at least
    /// `delayed_ack_timeout`, an ACK once more than one full segment is unacknowledged, and at
    /// once for a short segment that ends what the application can read).
    #[serde(default)]
    pub ack_rules: AckRules,
    /// Initial receive window offered, in segments (Linux: 4 in 2.6.26, 10 from 2.6.39). Only
    /// the Linux ACK rules read it: it sets the number of quick ACKs at the start
    /// (window / 2 segments, 2..=16). 1..=1000.
    #[serde(default = "init_rwnd")]
    #[schemars(range(min = 1, max = 1000))]
    pub initial_rcv_window: u32,
}

/// Early Retransmit mode (`transport.early_retransmit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EarlyRetransmit {
    #[default]
    Off,
    /// Retransmit at once (Linux `tcp_early_retrans = 1`).
    On,
    /// Wait max(SRTT/4, 2 ms) first (Linux `tcp_early_retrans` = 2 or 3).
    Delayed,
}

/// Window reduction during recovery (`transport.cwnd_reduction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CwndReduction {
    #[default]
    Rfc6675,
    Prr,
    RateHalving,
}

/// cwnd after idle (`transport.idle_restart`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IdleRestart {
    #[default]
    Off,
    Linux,
    Rfc5681,
}

/// RTO estimator (`transport.rto_estimator`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RtoEstimator {
    #[default]
    Rfc6298,
    Linux,
}

/// Receiver ACK rules (`transport.ack_rules`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AckRules {
    #[default]
    Simple,
    Linux,
}

fn mtu() -> u32 {
    1500
}
fn iw() -> u32 {
    10
}
fn min_rto() -> Duration {
    Duration(200 * PS_PER_MS)
}
fn initial_rto() -> Duration {
    Duration(PS_PER_S)
}
fn max_rto() -> Duration {
    Duration(60 * PS_PER_S)
}
fn delack_to() -> Duration {
    Duration(PS_PER_MS)
}
fn yes() -> bool {
    true
}
fn dctcp_g() -> f64 {
    1.0 / 16.0
}
fn zero_bytes() -> Bytes {
    Bytes(0)
}
fn rwnd() -> Bytes {
    Bytes(16 << 20)
}
fn dupthresh() -> u32 {
    3
}
fn hz() -> u32 {
    1000
}
fn init_rwnd() -> u32 {
    10
}

impl Default for TransportConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("defaults")
    }
}

impl TransportConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if !(576..=9216).contains(&self.mtu) {
            return Err(Error::config(
                &format!("{path}.mtu"),
                format!("{} is out of range; allowed 576..=9216 bytes", self.mtu),
            ));
        }
        if !(1..=1000).contains(&self.init_cwnd) {
            return Err(Error::config(
                &format!("{path}.init_cwnd"),
                "allowed 1..=1000 segments",
            ));
        }
        for (name, d) in [
            ("min_rto", self.min_rto),
            ("initial_rto", self.initial_rto),
            ("max_rto", self.max_rto),
            ("delayed_ack_timeout", self.delayed_ack_timeout),
        ] {
            if d.0 == 0 {
                return Err(Error::config(&format!("{path}.{name}"), "must be > 0"));
            }
        }
        if self.max_rto.0 < self.min_rto.0 {
            return Err(Error::config(
                &format!("{path}.max_rto"),
                "must be >= min_rto",
            ));
        }
        if !(self.dctcp_g > 0.0 && self.dctcp_g <= 1.0) {
            return Err(Error::config(
                &format!("{path}.dctcp_g"),
                "must be in (0, 1]",
            ));
        }
        if self.rcv_window.0 < (self.mtu as u64 - 40) {
            return Err(Error::config(
                &format!("{path}.rcv_window"),
                "must hold at least one segment",
            ));
        }
        for (name, v, lo, hi, unit) in [
            ("max_reordering", self.max_reordering, 3, 1000, "segments"),
            ("clock_hz", self.clock_hz, 100, 10_000, "jiffies per second"),
            (
                "initial_rcv_window",
                self.initial_rcv_window,
                1,
                1000,
                "segments",
            ),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(Error::config(
                    &format!("{path}.{name}"),
                    format!("{v} is out of range; allowed {lo}..={hi} {unit}"),
                ));
            }
        }
        Ok(())
    }

    /// Resolved numbers for the endpoints.
    pub fn params(&self) -> TcpParams {
        TcpParams {
            mss: self.mtu - 40,
            iw_segments: self.init_cwnd,
            min_rto_ps: self.min_rto.0,
            initial_rto_ps: self.initial_rto.0,
            max_rto_ps: self.max_rto.0,
            delack_ps: if self.delayed_ack {
                Some(self.delayed_ack_timeout.0)
            } else {
                None
            },
            sack: self.sack,
            ecn: self.ecn.unwrap_or(self.cc == CcKind::Dctcp),
            cc: self.cc,
            dctcp_g: self.dctcp_g,
            tso_bytes: self.tso.0,
            tsq_bytes: self.tsq.0,
            rwnd_bytes: self.rcv_window.0,
            early_retransmit: self.early_retransmit,
            tlp: self.tail_loss_probe,
            cwnd_reduction: self.cwnd_reduction,
            dsack: self.dsack,
            undo: self.undo,
            max_reordering: self.max_reordering,
            fack: self.fack,
            idle_restart: self.idle_restart,
            rto_estimator: self.rto_estimator,
            tick_ps: PS_PER_S / self.clock_hz as u64,
            ack_rules: self.ack_rules,
            init_rwnd_segments: self.initial_rcv_window,
        }
    }

    /// What this transport does that its named kernel cannot (validation prints these as
    /// warnings; the run goes ahead as written). Empty without a profile.
    pub fn warnings(&self, path: &str) -> Vec<String> {
        match self.profile {
            Some(p) => p.contradictions(self, path),
            None => Vec::new(),
        }
    }
}

/// TCP settings in engine units.
#[derive(Clone, Debug)]
pub struct TcpParams {
    pub mss: u32,
    pub iw_segments: u32,
    pub min_rto_ps: Time,
    pub initial_rto_ps: Time,
    pub max_rto_ps: Time,
    pub delack_ps: Option<Time>,
    pub sack: bool,
    pub ecn: bool,
    pub cc: CcKind,
    pub dctcp_g: f64,
    pub tso_bytes: u64,
    pub tsq_bytes: u64,
    pub rwnd_bytes: u64,
    pub early_retransmit: EarlyRetransmit,
    pub tlp: bool,
    pub cwnd_reduction: CwndReduction,
    pub dsack: bool,
    pub undo: bool,
    pub max_reordering: u32,
    pub fack: bool,
    pub idle_restart: IdleRestart,
    pub rto_estimator: RtoEstimator,
    /// One jiffy of the kernel clock (`clock_hz`).
    pub tick_ps: Time,
    pub ack_rules: AckRules,
    pub init_rwnd_segments: u32,
}
