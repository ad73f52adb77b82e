//! Host transport: TCP endpoints (`tcp`) and their congestion controllers (`cc`).
//! This layer produces and consumes packets at hosts; it never looks inside the network.

pub mod cc;
pub mod tcp;

use crate::error::Error;
use crate::units::{Bytes, Duration, Time, PS_PER_MS, PS_PER_S};
use cc::CcKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// TCP settings shared by all connections of a run.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransportConfig {
    /// Congestion control: "newreno", "cubic" or "dctcp".
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
    /// Receive window (flow-control limit on bytes in flight).
    #[serde(default = "rwnd")]
    pub rcv_window: Bytes,
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
}
