//! FlowBender (Kabbani et al., CoNEXT'14; SCHEMES.md §9): each TCP sender measures, per RTT,
//! the fraction F of its acknowledged bytes that came back ECN-marked; when F exceeds T (0.05)
//! for N (1) consecutive RTTs it changes a header field V that the switches' ECMP hash covers,
//! and so moves the flow to another (random) path. The fabric is plain ECMP: the switches hash
//! the 5-tuple and V (`lb::flow_hash` covers `overlay.path`, where V is written), so a flow that
//! never reroutes takes exactly ECMP's path. Nothing is encapsulated (the paper rehashes on an
//! existing field such as the TTL or a VLAN tag), so no bytes are added.
//!
//! Choices, written down in docs/COMPANIONS.md:
//! - "per RTT" is DCTCP's observation window, as in the paper (FlowBender sits on DCTCP's
//!   marking counters): a window ends when the cumulative ACK passes the highest sequence sent
//!   when it began; F is marked bytes over acknowledged bytes in it (the peers' ns-3 code
//!   counts ACK packets over a fixed 100 µs timer instead);
//! - a retransmission timeout also moves the flow (`reroute_on_timeout`, on by default): the
//!   paper's answer to failures, which stop the ACKs that would carry marks. This is from the
//!   paper's text as we recall it; it is not in our material;
//! - per TCP connection: a persistent connection carrying several flows keeps one V;
//! - the ACKs' path is ECMP's (the receiver does not change V).
//!
//! The shim reads and writes only the packets' `overlay.path` and the TCP fields it observes;
//! it never touches the transport's state.

use super::shim::EdgeShim;
use crate::error::Error;
use crate::net::packet::{flags, Packet};
use crate::units::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// FlowBender's parameters (`[scheme]` with `name = "flowbender"`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowBenderConfig {
    /// T: the fraction of ECN-marked bytes in one RTT above which the RTT counts as congested,
    /// in (0, 1) (paper: 0.05).
    #[serde(default = "t")]
    pub threshold: f64,
    /// N: consecutive congested RTTs before the flow moves, 1..=1000 (paper: 1).
    #[serde(default = "n")]
    #[schemars(range(min = 1, max = 1000))]
    pub rtts: u32,
    /// Also move the flow on a retransmission timeout (a failed path returns no marks).
    #[serde(default = "yes")]
    pub reroute_on_timeout: bool,
}

fn t() -> f64 {
    0.05
}
fn n() -> u32 {
    1
}
fn yes() -> bool {
    true
}

impl Default for FlowBenderConfig {
    fn default() -> Self {
        FlowBenderConfig {
            threshold: t(),
            rtts: n(),
            reroute_on_timeout: yes(),
        }
    }
}

impl FlowBenderConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if !(self.threshold > 0.0 && self.threshold < 1.0) {
            return Err(Error::config(
                &format!("{path}.threshold"),
                format!(
                    "{} is not allowed; use a fraction of marked bytes in (0, 1) (the paper's T is 0.05)",
                    self.threshold
                ),
            ));
        }
        if !(1..=1000).contains(&self.rtts) {
            return Err(Error::config(
                &format!("{path}.rtts"),
                format!(
                    "{} is not allowed; use 1..=1000 consecutive RTTs (the paper's N is 1)",
                    self.rtts
                ),
            ));
        }
        Ok(())
    }

    pub fn build(&self) -> FlowBender {
        FlowBender {
            threshold: self.threshold,
            rtts: self.rtts,
            on_timeout: self.reroute_on_timeout,
            conns: Vec::new(),
            windows: 0,
            ecn_moves: 0,
            timeout_moves: 0,
        }
    }
}

/// One connection's sender state.
#[derive(Clone, Copy, Debug, Default)]
struct Sender {
    /// The hashed field V.
    v: u16,
    /// Highest sequence sent, the cumulative ACK seen last, and the ACK that ends the window.
    snd_max: u64,
    una: u64,
    window_end: u64,
    /// Bytes acknowledged, and of them ECN-marked, in the current window.
    acked: u64,
    marked: u64,
    /// Consecutive congested windows.
    congested: u32,
}

pub struct FlowBender {
    threshold: f64,
    rtts: u32,
    on_timeout: bool,
    /// Per connection index.
    conns: Vec<Sender>,
    windows: u64,
    ecn_moves: u64,
    timeout_moves: u64,
}

impl FlowBender {
    fn sender(&mut self, conn: u32) -> &mut Sender {
        let i = conn as usize;
        if i >= self.conns.len() {
            self.conns.resize(i + 1, Sender::default());
        }
        &mut self.conns[i]
    }

    /// An ACK reached the sender: count its newly acknowledged bytes; at the window's end,
    /// judge the window (§3 of the paper: F > T for N RTTs moves the flow).
    fn on_ack(&mut self, pk: &Packet) {
        let (threshold, rtts) = (self.threshold, self.rtts);
        let s = self.sender(pk.conn);
        if pk.ack <= s.una {
            return;
        }
        let newly = pk.ack - s.una;
        s.una = pk.ack;
        s.acked += newly;
        if pk.is(flags::ECE) {
            s.marked += newly;
        }
        if s.una < s.window_end {
            return;
        }
        let congested = s.marked as f64 > threshold * s.acked as f64;
        s.congested = if congested { s.congested + 1 } else { 0 };
        let moved = s.congested >= rtts;
        if moved {
            s.v = s.v.wrapping_add(1);
            s.congested = 0;
        }
        s.acked = 0;
        s.marked = 0;
        s.window_end = s.snd_max;
        self.windows += 1;
        self.ecn_moves += moved as u64;
    }
}

impl EdgeShim for FlowBender {
    fn on_send(&mut self, _now: Time, pk: &mut Packet) {
        // Only the sender's packets (SYN and data) carry V; ACKs and SYN-ACKs keep 0.
        if pk.is(flags::ACK) {
            return;
        }
        let s = self.sender(pk.conn);
        s.snd_max = s.snd_max.max(pk.seq + pk.payload as u64);
        pk.overlay.path = s.v;
    }

    fn on_receive(&mut self, _now: Time, pk: Packet, deliver: &mut Vec<Packet>) {
        if pk.is(flags::ACK) && !pk.is(flags::SYN) && pk.payload == 0 {
            self.on_ack(&pk);
        }
        deliver.push(pk);
    }

    fn on_timeout(&mut self, _now: Time, conn: u32) {
        if self.on_timeout {
            let s = self.sender(conn);
            s.v = s.v.wrapping_add(1);
            s.congested = 0;
            self.timeout_moves += 1;
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("flowbender_windows", self.windows),
            ("flowbender_ecn_moves", self.ecn_moves),
            ("flowbender_timeout_moves", self.timeout_moves),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(conn: u32, seq: u64) -> Packet {
        Packet {
            conn,
            seq,
            payload: 1000,
            ..Default::default()
        }
    }
    fn ack(conn: u32, ack: u64, ece: bool) -> Packet {
        Packet {
            conn,
            ack,
            flags: flags::ACK | if ece { flags::ECE } else { 0 },
            ..Default::default()
        }
    }

    /// A sender that keeps 20 segments in flight: before the last ACK of one batch it sends
    /// the next batch, so each batch of 20 ACKs is one window. `marks[k]` holds how many of
    /// window k's ACKs echo ECN; returns V after each window.
    fn windows(fb: &mut FlowBender, conn: u32, marks: &[usize]) -> Vec<u16> {
        let mut out = Vec::new();
        let mut seq = 0;
        let mut send = |fb: &mut FlowBender, n: u64| {
            for _ in 0..n {
                fb.on_send(0, &mut data(conn, seq));
                seq += 1000;
            }
        };
        // One segment, then the first batch; the segment's ACK closes a first window.
        send(fb, 1);
        send(fb, 20);
        fb.on_receive(0, ack(conn, 1000, false), &mut out);
        let mut una = 1000;
        let mut vs = Vec::new();
        for &m in marks {
            let v0 = fb.conns[conn as usize].v;
            for i in 0..20 {
                if i == 19 {
                    send(fb, 20);
                }
                una += 1000;
                fb.on_receive(0, ack(conn, una, i < m), &mut out);
                if i < 19 {
                    assert_eq!(
                        fb.conns[conn as usize].v, v0,
                        "V changes only at a window's end"
                    );
                }
            }
            vs.push(fb.conns[conn as usize].v);
        }
        vs
    }

    /// Windows end when the ACK passes the highest sequence sent when they began; F is
    /// compared strictly with T; N congested windows in a row move the flow once.
    #[test]
    fn marked_fraction_per_window_moves_the_flow() {
        // (T, N, marked ACKs of 20 in each window, V after each window)
        let cases: &[(f64, u32, &[usize], &[u16])] = &[
            // 1 of 20 marked = 0.05, not above T; 2 of 20 is.
            (0.05, 1, &[1, 2, 0, 2], &[0, 1, 1, 2]),
            (0.05, 2, &[2, 2, 2, 0, 2, 2], &[0, 1, 1, 1, 1, 2]),
            (0.05, 2, &[2, 0, 2, 0], &[0, 0, 0, 0]),
            (0.5, 1, &[10, 11, 20], &[0, 1, 2]),
        ];
        for &(t, n, marks, want) in cases {
            let mut fb = FlowBenderConfig {
                threshold: t,
                rtts: n,
                reroute_on_timeout: true,
            }
            .build();
            assert_eq!(
                windows(&mut fb, 3, marks),
                want,
                "T={t} N={n} marks={marks:?}"
            );
            assert_eq!(fb.windows, 1 + marks.len() as u64);
            assert_eq!(fb.ecn_moves, *want.last().unwrap() as u64);
        }
    }

    /// Data carries V; ACKs are left alone; duplicate ACKs count nothing; connections are
    /// independent; a timeout moves the flow unless disabled.
    #[test]
    fn header_field_dupacks_connections_and_timeouts() {
        let mut fb = FlowBenderConfig::default().build();
        windows(&mut fb, 0, &[20]);
        assert_eq!(fb.conns[0].v, 1);
        let mut p = data(0, 10_000_000);
        fb.on_send(0, &mut p);
        assert_eq!(p.overlay.path, 1);
        let mut a = ack(0, 0, false);
        a.overlay.path = 9;
        fb.on_send(0, &mut a);
        assert_eq!(a.overlay.path, 9, "ACKs keep their field");
        let mut q = data(5, 0);
        fb.on_send(0, &mut q);
        assert_eq!(q.overlay.path, 0, "another connection is unaffected");
        let before = (fb.conns[0].acked, fb.conns[0].marked);
        let mut out = Vec::new();
        fb.on_receive(0, ack(0, fb.conns[0].una, true), &mut out);
        assert_eq!((fb.conns[0].acked, fb.conns[0].marked), before);
        assert_eq!(out.len(), 1, "the ACK is passed up");
        fb.on_timeout(0, 5);
        assert_eq!((fb.conns[5].v, fb.timeout_moves), (1, 1));
        let mut off = FlowBenderConfig {
            reroute_on_timeout: false,
            ..Default::default()
        }
        .build();
        off.on_timeout(0, 5);
        assert_eq!(off.sender(5).v, 0);
    }

    #[test]
    fn bad_fields_are_named() {
        for (cfg, field) in [
            (
                FlowBenderConfig {
                    threshold: 0.0,
                    ..Default::default()
                },
                "scheme.threshold",
            ),
            (
                FlowBenderConfig {
                    threshold: f64::NAN,
                    ..Default::default()
                },
                "scheme.threshold",
            ),
            (
                FlowBenderConfig {
                    rtts: 0,
                    ..Default::default()
                },
                "scheme.rtts",
            ),
        ] {
            let e = cfg.validate("scheme").unwrap_err().to_string();
            assert!(e.contains(field), "{e}");
        }
        assert!(FlowBenderConfig::default().validate("scheme").is_ok());
    }
}
