//! MPTCP at the connection level (RFC 6824, as Linux MPTCP v0.8x does it; SCHEMES.md §1):
//! the data sequence space, the scheduler that maps it onto subflows, reassembly at the
//! receiver, reinjection, and the receive-buffer optimisations.
//!
//! A connection ([`Meta`]) has n subflows, each an ordinary TCP connection ([`Conn`]) with its
//! own 5-tuple (same hosts, distinct source ports, so ECMP hashes each on its own), its own
//! sequence space, windows, RTO and recovery (the profile's TCP), and LIA's coupled increase
//! (`cc::Lia`). This module never sends a packet itself: it maps data onto subflows and lets
//! them send; the host layer owns the subflows and carries what this module decides.
//!
//! - **Data sequence space**: 64-bit DSNs from 0. A mapping (the DSS option) binds a subflow's
//!   byte range to a DSN range; the receiver learns it with the data (here: reads it from the
//!   sender's map, which is immutable once made).
//! - **Scheduler** (Linux's default, lowest RTT): the next segment goes to the established
//!   subflow, not potentially failed, with window room for it and the smallest SRTT; new data
//!   only within the connection-level receive window (relative to the data ACK).
//! - **Receiver**: in-order subflow bytes are mapped back to DSNs and reassembled in one
//!   connection-level queue; the application gets them in DSN order, each byte once. The data
//!   ACK (cumulative, connection level) rides on every subflow ACK.
//! - **Reinjection**: on a subflow's RTO, its unacknowledged data is queued to go out on
//!   another subflow as well, and the subflow is "potentially failed" until it gets an ACK.
//! - **Receive-buffer optimisations** (Linux `mptcp_rcv_buf_optimization`, on by default): when
//!   the receive window blocks new data, the subflow holding the head-of-line segment is
//!   penalised (cwnd halved, at most once per its SRTT) if it is slower, and the head-of-line
//!   segment is sent again on the chosen subflow if it was not sent there and the other is
//!   small or slow (opportunistic retransmission).
//! Not modelled: the connection-level retransmission timer, DSS checksums, MP_FASTCLOSE and
//! subflow teardown, address advertisement (one address per host: all subflows share it).

use super::cc::{lia_alpha, Cc};
use super::ranges::insert_range;
use super::tcp::{Conn, Events, Msg};
use super::TcpParams;
use crate::error::Error;
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How the subflows' windows grow (`scheme.coupling` of `mptcp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Coupling {
    /// LIA, RFC 6356, counted in bytes.
    #[default]
    Lia,
    /// LIA as Linux MPTCP counts it: ACKs and whole segments.
    LiaAcks,
    /// Each subflow on its own, with the transport's congestion control.
    Uncoupled,
}

/// The `mptcp` scheme: MPTCP in the hosts, ECMP in the fabric (CONGA §5 ran Linux MPTCP v0.87
/// with 8 subflows per connection over ECMP). Every flow uses an MPTCP connection.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MptcpConfig {
    /// Subflows per connection, 1..=32 (same hosts, distinct source ports; Linux
    /// `mptcp_ndiffports`). The CONGA paper used 8.
    #[serde(default = "eight")]
    #[schemars(range(min = 1, max = 32))]
    pub subflows: u32,
    /// The subflows' window growth: "lia" (RFC 6356, byte-counted), "lia-acks" (counted in
    /// ACKs as Linux MPTCP does) or "uncoupled".
    #[serde(default)]
    pub coupling: Coupling,
    /// The connection-level receive buffer (window); default: the transport's `rcv_window`.
    #[serde(default)]
    pub rcv_buffer: Option<Bytes>,
    /// Halve the cwnd of a slow subflow holding up the receive window (Linux `rbuf_penal`).
    #[serde(default = "yes")]
    pub penalization: bool,
    /// Resend the head-of-line segment on a faster subflow when the receive window blocks
    /// (Linux `rbuf_retr`).
    #[serde(default = "yes")]
    pub opportunistic_retransmission: bool,
    /// Indices of the `[[workload]]` entries whose flows use MPTCP; the others use plain TCP
    /// (e.g. MPTCP beside TCP on a shared bottleneck). Default: all.
    #[serde(default)]
    pub workloads: Option<Vec<u16>>,
}

fn eight() -> u32 {
    8
}
fn yes() -> bool {
    true
}

impl MptcpConfig {
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        if !(1..=32).contains(&self.subflows) {
            return Err(Error::config(
                &format!("{path}.subflows"),
                format!("{} is out of range; allowed 1..=32 subflows", self.subflows),
            ));
        }
        if let Some(b) = self.rcv_buffer {
            if b.0 < 65_536 {
                return Err(Error::config(
                    &format!("{path}.rcv_buffer"),
                    format!("{b} is too small; allowed at least 64KiB"),
                ));
            }
        }
        Ok(())
    }

    pub fn params(&self, rcv_window_bytes: u64) -> MptcpParams {
        MptcpParams {
            subflows: self.subflows,
            coupling: self.coupling,
            rcv_buf_bytes: self.rcv_buffer.map_or(rcv_window_bytes, |b| b.0),
            penalize: self.penalization,
            opportunistic: self.opportunistic_retransmission,
            workloads: self.workloads.clone(),
        }
    }
}

/// MPTCP settings in engine units.
#[derive(Clone, Debug)]
pub struct MptcpParams {
    pub subflows: u32,
    pub coupling: Coupling,
    /// The connection-level receive buffer (window) in bytes.
    pub rcv_buf_bytes: u64,
    pub penalize: bool,
    pub opportunistic: bool,
    /// The workload entries whose flows use MPTCP (None: all).
    pub workloads: Option<Vec<u16>>,
}

/// DSS option bytes on a data segment (a mapping and a data ACK), and on a pure ACK (a data
/// ACK): they count on the wire like the overlay (TCP's own options do not).
pub const DSS_DATA_BYTES: u32 = 20;
pub const DSS_ACK_BYTES: u32 = 8;

/// A DSS mapping: subflow bytes [sub_seq, sub_seq + len) carry DSNs [dsn, dsn + len).
#[derive(Clone, Copy, Debug)]
struct Map {
    sub_seq: u64,
    dsn: u64,
    len: u64,
}

#[derive(Clone, Debug)]
pub struct Subflow {
    /// The subflow's connection id.
    pub conn: u32,
    maps: VecDeque<Map>,
    /// After an RTO, until an ACK moves its snd_una ("potentially failed").
    pf: bool,
    timeouts_seen: u64,
    penalized_at: Option<Time>,
}

#[derive(Clone, Debug, Default)]
pub struct MptcpStats {
    pub subflows_opened: u64,
    pub joins: u64,
    pub reinjected_segments: u64,
    pub penalizations: u64,
    pub opportunistic_retransmissions: u64,
}

#[derive(Clone, Debug)]
pub struct Meta {
    pub subs: Vec<Subflow>,
    // ---- sender ----
    /// Data bytes the application has written.
    pub app_end: u64,
    /// Of those, the bytes handed over so far when something else feeds the connection
    /// (`Conn::feed_end`; `u64::MAX`: all). Only full segments are mapped while it limits.
    pub feed_end: u64,
    /// The next new DSN to map.
    dsn_next: u64,
    /// The cumulative data ACK received.
    pub data_ack: u64,
    /// DSN ranges to send again (reinjection), sorted.
    reinject: Vec<(u64, u64)>,
    /// The head-of-line DSN last sent opportunistically (once per head).
    opportunistic_dsn: Option<u64>,
    // ---- receiver ----
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    pub msgs: VecDeque<Msg>,
    pub stats: MptcpStats,
}

impl Meta {
    pub fn new() -> Meta {
        Meta {
            subs: Vec::new(),
            app_end: 0,
            feed_end: u64::MAX,
            dsn_next: 0,
            data_ack: 0,
            reinject: Vec::new(),
            opportunistic_dsn: None,
            rcv_nxt: 0,
            ooo: Vec::new(),
            msgs: VecDeque::new(),
            stats: MptcpStats::default(),
        }
    }

    /// Add subflow `conn` (its handshake is the host layer's business).
    pub fn add_subflow(&mut self, conn: u32, join: bool) {
        self.subs.push(Subflow {
            conn,
            maps: VecDeque::new(),
            pf: false,
            timeouts_seen: 0,
            penalized_at: None,
        });
        self.stats.subflows_opened += 1;
        if join {
            self.stats.joins += 1;
        }
    }

    /// The application writes a message of `bytes` as flow `flow`.
    pub fn write(&mut self, flow: u32, bytes: u64) {
        self.app_end = self.app_end.saturating_add(bytes);
        self.msgs.push_back(Msg {
            flow,
            end: self.app_end,
        });
    }

    /// Data not yet acknowledged at the connection level.
    pub fn backlog(&self) -> u64 {
        self.app_end - self.data_ack
    }

    /// Set LIA's coupling terms on subflow `conn` before an ACK reaches it.
    pub fn couple(&self, conns: &mut [Conn], conn: u32, p: &TcpParams) {
        if !matches!(conns[conn as usize].cc, Cc::Lia(_)) {
            return;
        }
        let counted = |c: &Conn| c.is_established() && c.srtt_ps(p) > 0.0;
        let it = self
            .subs
            .iter()
            .map(|s| &conns[s.conn as usize])
            .filter(|c| counted(c))
            .map(|c| (c.w.cwnd, c.srtt_ps(p)));
        let (alpha, total) = lia_alpha(it);
        if let Cc::Lia(l) = &mut conns[conn as usize].cc {
            l.couple(alpha, total);
        }
    }

    /// Map data onto subflows and let them send (`out` gets (connection, packet) pairs).
    pub fn push(
        &mut self,
        now: Time,
        conns: &mut [Conn],
        p: &TcpParams,
        mp: &MptcpParams,
        out: &mut Vec<(u32, crate::net::packet::Packet)>,
    ) {
        let mss = p.mss as u64;
        let mut pkts = Vec::new();
        loop {
            let (dsn, avail, reinjecting) = match self.reinject.first() {
                Some(&(a, b)) => (a, b - a, true),
                None if self.dsn_next < self.app_end.min(self.feed_end) => {
                    let end = self.app_end.min(self.feed_end);
                    (self.dsn_next, end - self.dsn_next, false)
                }
                None => break,
            };
            let mut len = avail.min(mss);
            if !reinjecting
                && len < mss
                && self.feed_end < self.app_end
                && dsn + len == self.feed_end
                && !self.msgs.iter().any(|m| m.end == self.feed_end)
            {
                // Fed data in the middle of a message: full segments only, as `Conn::try_send`.
                break;
            }
            if !reinjecting {
                // The connection-level receive window, relative to the data ACK.
                let limit = self.data_ack + mp.rcv_buf_bytes;
                if dsn >= limit {
                    if let Some(c) = self.window_blocked(now, conns, p, mp, &mut pkts) {
                        out.extend(pkts.drain(..).map(|pk| (c, pk)));
                    }
                    break;
                }
                len = len.min(limit - dsn);
            }
            let again = reinjecting.then_some(dsn);
            let Some(i) = self.pick(conns, p, len, again) else {
                break;
            };
            self.map_onto(i, conns, dsn, len);
            if reinjecting {
                self.reinject[0].0 += len;
                if self.reinject[0].0 >= self.reinject[0].1 {
                    self.reinject.remove(0);
                }
                self.stats.reinjected_segments += 1;
            } else {
                self.dsn_next += len;
            }
            let c = self.subs[i].conn;
            conns[c as usize].try_send(now, p, &mut pkts);
            out.extend(pkts.drain(..).map(|pk| (c, pk)));
        }
    }

    /// The first subflow a DSN was mapped onto.
    fn sent_on(&self, dsn: u64) -> Option<usize> {
        (0..self.subs.len()).find(|&i| self.holds(i, dsn))
    }

    /// Whether subflow `i` carries (or carried, not yet acknowledged) `dsn`.
    fn holds(&self, i: usize, dsn: u64) -> bool {
        self.subs[i]
            .maps
            .iter()
            .any(|m| m.dsn <= dsn && dsn < m.dsn + m.len)
    }

    /// The lowest-SRTT usable subflow with room for `len` bytes. For a reinjection or a
    /// second copy (`again` = the DSN), never one that already carries it (Linux's
    /// `path_mask`): the data waits until another subflow can take it.
    fn pick(&self, conns: &[Conn], p: &TcpParams, len: u64, again: Option<u64>) -> Option<usize> {
        let usable = |i: usize| {
            let c = &conns[self.subs[i].conn as usize];
            !self.subs[i].pf
                && c.is_established()
                && c.send_room(p) >= len
                && again.is_none_or(|d| !self.holds(i, d))
        };
        let by_rtt = |i: &usize| {
            let r = conns[self.subs[*i].conn as usize].srtt_ps(p);
            // Subflows without a sample yet go last, in order.
            (r == 0.0, (r * 1e3) as u64)
        };
        (0..self.subs.len())
            .filter(|&i| usable(i))
            .min_by_key(by_rtt)
    }

    fn map_onto(&mut self, i: usize, conns: &mut [Conn], dsn: u64, len: u64) {
        let c = &mut conns[self.subs[i].conn as usize];
        let sub_seq = c.write_mapped(len);
        self.subs[i].maps.push_back(Map { sub_seq, dsn, len });
    }

    /// The receive window blocks new data (Linux `mptcp_rcv_buf_optimization`). Returns the
    /// connection that sent an opportunistic retransmission into `pkts`, if one did.
    fn window_blocked(
        &mut self,
        now: Time,
        conns: &mut [Conn],
        p: &TcpParams,
        mp: &MptcpParams,
        pkts: &mut Vec<crate::net::packet::Packet>,
    ) -> Option<u32> {
        if !mp.penalize && !mp.opportunistic {
            return None;
        }
        let head = self.data_ack;
        let holder = self.sent_on(head)?;
        let len = (p.mss as u64).min(self.app_end - head);
        let me = self.pick(conns, p, len, Some(head))?;
        let (hc, mc) = (self.subs[holder].conn as usize, self.subs[me].conn as usize);
        let (h_rtt, m_rtt) = (conns[hc].srtt_ps(p), conns[mc].srtt_ps(p));
        let rate = |c: &Conn, r: f64| if r > 0.0 { c.w.cwnd / r } else { 0.0 };
        if mp.penalize && rate(&conns[hc], h_rtt) < rate(&conns[mc], m_rtt) {
            let due = match self.subs[holder].penalized_at {
                Some(t) => now >= t + h_rtt as Time,
                None => true,
            };
            if due {
                let w = &mut conns[hc].w;
                w.cwnd = (w.cwnd / 2.0).max(w.mss);
                if w.ssthresh.is_finite() {
                    w.ssthresh = (w.ssthresh / 2.0).max(2.0 * w.mss);
                }
                self.subs[holder].penalized_at = Some(now);
                self.stats.penalizations += 1;
            }
        }
        if mp.opportunistic && self.opportunistic_dsn != Some(head) {
            let small = conns[hc].w.cwnd <= 4.0 * conns[hc].w.mss;
            if small || 4.0 * m_rtt < h_rtt {
                self.map_onto(me, conns, head, len);
                self.opportunistic_dsn = Some(head);
                self.stats.opportunistic_retransmissions += 1;
                conns[mc].try_send(now, p, pkts);
                return Some(mc as u32);
            }
        }
        None
    }

    /// A subflow ACK reached the sender carrying the data ACK `data_ack`; `sub` is the
    /// subflow's index and `una` its new snd_una.
    pub fn on_ack(&mut self, sub: usize, una: u64, data_ack: u64) {
        if data_ack > self.data_ack {
            self.data_ack = data_ack;
            let a = self.data_ack;
            self.reinject.retain(|r| r.1 > a);
            if let Some(f) = self.reinject.first_mut() {
                f.0 = f.0.max(a);
            }
        }
        let s = &mut self.subs[sub];
        while let Some(m) = s.maps.front() {
            if m.sub_seq + m.len > una {
                break;
            }
            s.maps.pop_front();
        }
        s.pf = false;
    }

    /// After subflow `sub`'s timer fired: on an RTO, reinject its unacknowledged data and mark
    /// it potentially failed. Returns whether it did.
    pub fn after_timer(&mut self, sub: usize, c: &Conn) -> bool {
        let s = &mut self.subs[sub];
        if c.stats.timeouts == s.timeouts_seen {
            return false;
        }
        s.timeouts_seen = c.stats.timeouts;
        s.pf = true;
        let a = self.data_ack;
        let ranges: Vec<(u64, u64)> = s
            .maps
            .iter()
            .filter(|m| m.dsn + m.len > a)
            .map(|m| (m.dsn.max(a), m.dsn + m.len))
            .collect();
        for (x, y) in ranges {
            insert_range(&mut self.reinject, x, y);
        }
        true
    }

    /// In-order bytes [from, to) of subflow `sub` reached the receiver: reassemble them at the
    /// connection level; completed flows go to `ev`.
    pub fn on_data(&mut self, sub: usize, from: u64, to: u64, ev: &mut Events) {
        let maps = &self.subs[sub].maps;
        let first = maps.partition_point(|m| m.sub_seq + m.len <= from);
        for m in maps.range(first..) {
            if m.sub_seq >= to {
                break;
            }
            let (a, b) = (m.sub_seq.max(from), (m.sub_seq + m.len).min(to));
            if a < b {
                let d = m.dsn + (a - m.sub_seq);
                insert_range(&mut self.ooo, d, d + (b - a));
            }
        }
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(b);
            self.ooo.remove(0);
        }
        while let Some(m) = self.msgs.front() {
            if m.end > self.rcv_nxt {
                break;
            }
            ev.completed.push(m.flow);
            self.msgs.pop_front();
        }
    }
}

impl Default for Meta {
    fn default() -> Self {
        Meta::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::transport::TransportConfig;

    fn setup(n: usize, srtt_us: &[u64]) -> (Meta, Vec<Conn>, TcpParams, MptcpParams) {
        let p = serde_json::from_value::<TransportConfig>(serde_json::json!({"cc": "newreno"}))
            .unwrap()
            .params();
        let mp = MptcpParams {
            subflows: n as u32,
            coupling: Coupling::Lia,
            rcv_buf_bytes: 1 << 30,
            penalize: true,
            opportunistic: true,
            workloads: None,
        };
        let mut meta = Meta::new();
        let mut conns = vec![];
        for i in 0..n {
            let mut c = Conn::new(&p, 0, 1, 1000 + i as u16, 80, true);
            c.handshake_sample(srtt_us[i] * 1_000_000, &p);
            c.w.cwnd = 20.0 * p.mss as f64;
            conns.push(c);
            meta.add_subflow(i as u32, i > 0);
        }
        (meta, conns, p, mp)
    }

    #[test]
    fn the_scheduler_fills_the_lowest_rtt_subflow_first() {
        // (SRTTs in µs, segments mapped onto each subflow from one push of 50 segments)
        let cases: &[(&[u64], &[u64])] =
            &[(&[100, 50, 200], &[20, 20, 10]), (&[50, 100], &[20, 20])];
        for (rtts, want) in cases {
            let (mut meta, mut conns, p, mp) = setup(rtts.len(), rtts);
            meta.write(0, 50 * p.mss as u64);
            let mut out = vec![];
            meta.push(1_000_000_000, &mut conns, &p, &mp, &mut out);
            let got: Vec<u64> = conns.iter().map(|c| c.app_end / p.mss as u64).collect();
            assert_eq!(&got, want, "{rtts:?}");
            // Each packet went out on the subflow whose stream holds it.
            for (c, pk) in &out {
                assert_eq!(conns[*c as usize].sport, pk.sport);
            }
            // The lowest-RTT subflow got the first segment (DSN 0).
            let fastest = (0..rtts.len()).min_by_key(|&i| rtts[i]).unwrap();
            assert_eq!(meta.sent_on(0), Some(fastest));
        }
    }

    /// Reassembly: the subflows deliver their in-order bytes in random interleavings, some
    /// data twice (reinjected after a subflow's RTO): every byte reaches the application once
    /// and in DSN order, and every flow completes once.
    #[test]
    fn reassembly_under_reordering_and_reinjection() {
        for seed in 0..20 {
            let (mut meta, mut conns, p, mp) = setup(4, &[50, 60, 70, 80]);
            let mss = p.mss as u64;
            for f in 0..10 {
                meta.write(f, 37 * mss + 111 * f as u64);
            }
            let total = meta.app_end;
            let mut rng = Rng::new(seed, 7);
            let mut out = vec![];
            // Keep mapping until all data is mapped (window room is refilled by "sending").
            let mut guard = 0;
            while meta.dsn_next < total && guard < 1000 {
                meta.push(1_000_000_000, &mut conns, &p, &mp, &mut out);
                for c in conns.iter_mut() {
                    c.snd_una = c.snd_max; // acknowledged at the subflow level
                }
                guard += 1;
            }
            // Subflow 2 "times out": its data is reinjected and mapped onto the others.
            conns[2].stats.timeouts = 1;
            assert!(meta.after_timer(2, &conns[2]));
            meta.push(1_000_000_000, &mut conns, &p, &mp, &mut out);
            assert!(meta.stats.reinjected_segments > 0, "seed {seed}");
            // Each subflow delivers its stream in order, in chunks; subflows interleave.
            let mut pos: Vec<u64> = vec![0; 4];
            let mut ev = Events::default();
            let mut last = 0;
            while (0..4).any(|i| pos[i] < conns[i].app_end) {
                let i = rng.below(4) as usize;
                if pos[i] >= conns[i].app_end {
                    continue;
                }
                let step = (1 + rng.below(5)) * mss;
                let to = (pos[i] + step).min(conns[i].app_end);
                meta.on_data(i, pos[i], to, &mut ev);
                pos[i] = to;
                assert!(meta.rcv_nxt >= last, "in order");
                last = meta.rcv_nxt;
            }
            assert_eq!(meta.rcv_nxt, total, "seed {seed}");
            let mut done = ev.completed.clone();
            done.sort_unstable();
            assert_eq!(done, (0..10).collect::<Vec<u32>>(), "each flow once");
        }
    }

    #[test]
    fn the_receive_window_blocks_new_data_and_penalises_the_slow_holder() {
        // A 4-segment connection window; subflow 0 (slow, 1 ms) holds the head; subflow 1 is
        // fast (50 µs) and idle: new data is blocked, the slow subflow is penalised and the
        // head goes again on the fast one.
        let (mut meta, mut conns, p, mut mp) = setup(2, &[1000, 50]);
        let mss = p.mss as u64;
        mp.rcv_buf_bytes = 4 * mss;
        conns[1].state = crate::transport::tcp::State::SynSent; // not yet usable
        meta.write(0, 100 * mss);
        let mut out = vec![];
        meta.push(1_000_000_000, &mut conns, &p, &mp, &mut out);
        assert_eq!(conns[0].app_end, 4 * mss, "only the window's worth");
        conns[1].state = crate::transport::tcp::State::Established;
        let before = conns[0].w.cwnd;
        meta.push(2_000_000_000, &mut conns, &p, &mp, &mut out);
        assert_eq!(conns[0].w.cwnd, before / 2.0, "penalised");
        assert_eq!(meta.stats.penalizations, 1);
        assert_eq!(meta.stats.opportunistic_retransmissions, 1);
        assert_eq!(conns[1].app_end, mss, "the head again, on the fast subflow");
        assert_eq!(meta.sent_on(0), Some(0));
        // Not twice for the same head, and no penalty again within the slow subflow's SRTT.
        meta.push(2_000_100_000, &mut conns, &p, &mp, &mut out);
        assert_eq!(meta.stats.opportunistic_retransmissions, 1);
        assert_eq!(meta.stats.penalizations, 1);
    }
}
