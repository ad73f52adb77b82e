//! The receiving end: cumulative ACKs with SACK blocks (RFC 2018), D-SACK (RFC 2883), and when
//! to acknowledge.
//!
//! ACK rules (`transport.ack_rules`, with `delayed_ack` on):
//! - "simple": an ACK for every second segment or after `delayed_ack_timeout`; at once for
//!   out-of-order or duplicate data and on a change of the CE state (DCTCP, RFC 8257 §3.2).
//! - "linux" (`__tcp_ack_snd_check`, `tcp_event_data_recv`, `tcp_send_delayed_ack`,
//!   `tcp_cleanup_rbuf`; identical in 2.6.26 and 3.10, LINUX_TCP.md §3): at once when more than
//!   one full segment is unacknowledged, in quick-ACK mode, while out-of-order data is held,
//!   for duplicate data (which also re-enters quick-ACK mode), and for a short segment that
//!   ends what the application can read (the application reads at once). Quick-ACK mode
//!   starts with the first data (window / 2 segments of the offered window, 2..=16 ACKs) and
//!   again after a gap longer than the RTO. The delayed-ACK timeout `ato` starts at
//!   `delayed_ack_timeout` (ATO_MIN, 40 ms) and adapts to the arrival gaps; it is capped at
//!   max(SRTT, ATO_MIN), so in a datacenter it stays at 40 ms. The receiver's SRTT and RTO
//!   are taken from the connection's sender side (one record holds both ends).

use super::{Conn, Events, TcpParams, NEVER};
use crate::net::packet::{flags, frame_bytes, Packet};
use crate::transport::ranges::insert_range;
use crate::transport::AckRules;
use crate::units::{Time, PS_PER_MS};

/// Linux TCP_MAX_QUICKACKS.
const MAX_QUICKACKS: u32 = 16;
/// Linux TCP_DELACK_MAX: the delayed-ACK cap for short (pushed) segments.
const DELACK_MAX_PS: Time = 200 * PS_PER_MS;

impl Conn {
    /// A SYN arrives at the receiver: answer with a SYN-ACK.
    pub fn on_syn(&mut self, now: Time, pk: &Packet, out: &mut Vec<Packet>) {
        let mut a = Packet {
            src: self.dst,
            dst: self.src,
            sport: self.dport,
            dport: self.sport,
            ts: pk.ts,
            ..Default::default()
        };
        let _ = now;
        a.flags = flags::SYN | flags::ACK;
        a.size = frame_bytes(0);
        a.tx_count = 1;
        out.push(a);
    }

    pub(super) fn make_ack(&mut self, pk_seq: u64, out: &mut Vec<Packet>) {
        let mut a = Packet {
            src: self.dst,
            dst: self.src,
            sport: self.dport,
            dport: self.sport,
            ts: self.last_ts,
            ..Default::default()
        };
        a.flags = flags::ACK | if self.last_ce { flags::ECE } else { 0 };
        a.ack = self.rcv_nxt;
        a.size = frame_bytes(0);
        a.tx_count = 1;
        let mut n = 0;
        // A D-SACK block comes first (RFC 2883 §4); its offsets may lie below `ack`, so they
        // are stored as two's-complement 32-bit offsets.
        let (s, e) = std::mem::take(&mut self.dsack);
        if s < e {
            a.flags |= flags::DSACK;
            a.sack[0] = (
                s.wrapping_sub(self.rcv_nxt) as u32,
                e.wrapping_sub(self.rcv_nxt) as u32,
            );
            n = 1;
        }
        // Then the block holding the segment just received (RFC 2018); then the others.
        let first = n;
        if let Some(r) = self.ooo.iter().find(|r| r.0 <= pk_seq && pk_seq < r.1) {
            a.sack[n] = ((r.0 - self.rcv_nxt) as u32, (r.1 - self.rcv_nxt) as u32);
            n += 1;
        }
        let skip = n > first;
        for r in self.ooo.iter().rev() {
            if n == 3 {
                break;
            }
            if skip && r.0 <= pk_seq && pk_seq < r.1 {
                continue;
            }
            a.sack[n] = ((r.0 - self.rcv_nxt) as u32, (r.1 - self.rcv_nxt) as u32);
            n += 1;
        }
        self.delack_count = 0;
        self.delack_deadline = NEVER;
        // Linux `tcp_event_ack_sent`: one quick ACK used; leaving quick-ACK mode deflates ato.
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato_ps = self.ato_ps.min(self.ato_floor);
            }
        }
        self.rcv_wup = self.rcv_nxt;
        self.pushed = false;
        out.push(a);
    }

    /// The part of [s, e) the receiver already holds (RFC 2883: what a D-SACK reports).
    fn duplicate_part(&self, s: u64, e: u64) -> Option<(u64, u64)> {
        if s < self.rcv_nxt {
            return Some((s, e.min(self.rcv_nxt)));
        }
        self.ooo
            .iter()
            .find(|r| r.0 < e && s < r.1)
            .map(|r| (s.max(r.0), e.min(r.1)))
    }

    /// A data segment arrives at the receiver.
    pub fn on_data(
        &mut self,
        now: Time,
        pk: &Packet,
        p: &TcpParams,
        out: &mut Vec<Packet>,
        ev: &mut Events,
    ) {
        // Data carries a payload (what keeps an empty D-SACK block meaning "none").
        debug_assert!(pk.payload > 0, "a data segment without payload");
        let (s, e) = (pk.seq, pk.seq + pk.payload as u64);
        self.stats.data_pkts_rcvd += 1;
        if self.last_path != u32::MAX && pk.path_hash != self.last_path {
            self.stats.path_changes += 1;
        }
        self.last_path = pk.path_hash;
        if pk.tx_count == 1 && e <= self.rcv_high {
            self.stats.reordered += 1;
        }
        self.rcv_high = self.rcv_high.max(e);
        let ce = pk.is(flags::CE);
        let ce_changed = ce != self.last_ce;
        if ce_changed && p.delack_ps.is_some() && self.delack_count > 0 {
            // DCTCP: ACK what came before with the old CE state first.
            self.make_ack(s, out);
        }
        self.last_ce = ce;
        self.last_ts = pk.ts;
        if p.dsack {
            self.dsack = self.duplicate_part(s, e).unwrap_or_default();
        }
        let linux = p.ack_rules == AckRules::Linux && p.delack_ps.is_some();
        let mut immediate = p.delack_ps.is_none() || ce_changed;
        let mut in_order = false;
        if e <= self.rcv_nxt {
            immediate = true; // duplicate
            if linux {
                self.enter_quickack();
            }
        } else if s <= self.rcv_nxt {
            in_order = true;
            let had_ooo = !self.ooo.is_empty();
            self.rcv_nxt = e;
            while let Some(&(a, b)) = self.ooo.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.remove(0);
            }
            if had_ooo && !linux {
                immediate = true;
            }
            while self.next_msg_end <= self.rcv_nxt {
                if let Some(m) = self.msgs.pop_front() {
                    ev.completed.push(m.flow);
                }
                self.sync_next_msg_end();
            }
        } else {
            insert_range(&mut self.ooo, s, e);
            immediate = true;
        }
        if linux {
            if in_order {
                self.linux_data_recv(now, pk.payload, p);
            }
            let ack_now = immediate
                || self.rcv_nxt - self.rcv_wup > p.mss as u64
                || self.quick > 0
                || !self.ooo.is_empty()
                // `tcp_cleanup_rbuf`: the application read a short segment and the queue is empty.
                || (in_order && self.pushed);
            if ack_now {
                self.make_ack(s, out);
            } else {
                self.linux_delay_ack(now, p, s, out);
            }
            return;
        }
        if immediate {
            self.make_ack(s, out);
        } else {
            self.delack_count += 1;
            if self.delack_count >= 2 {
                self.make_ack(s, out);
            } else if self.delack_deadline == NEVER {
                self.delack_deadline = now + p.delack_ps.unwrap_or(0);
            }
        }
    }

    /// Linux `tcp_incr_quickack`: quick ACKs for half the offered window, 2..=16.
    fn incr_quickack(&mut self) {
        let q = (self.rcv_wnd_segs / 2).clamp(2, MAX_QUICKACKS);
        self.quick = self.quick.max(q);
    }

    /// Linux `tcp_enter_quickack_mode`.
    fn enter_quickack(&mut self) {
        self.incr_quickack();
        if self.ato_floor > 0 {
            self.ato_ps = self.ato_floor;
        }
    }

    /// Linux `tcp_event_data_recv` (and `tcp_measure_rcv_mss`, `tcp_grow_window`) for in-order
    /// data: adapt the delayed-ACK timeout to the gaps between segments.
    fn linux_data_recv(&mut self, now: Time, payload: u32, p: &TcpParams) {
        let ato_min = p.delack_ps.unwrap_or(0);
        if self.ato_ps == 0 {
            // The first data: quick-ACK mode and ato = ATO_MIN.
            self.ato_floor = ato_min;
            self.incr_quickack();
            self.ato_ps = ato_min;
        } else {
            let m = now.saturating_sub(self.lrcv);
            if m <= ato_min / 2 {
                self.ato_ps = self.ato_ps / 2 + ato_min / 2;
            } else if m < self.ato_ps {
                self.ato_ps = (self.ato_ps / 2 + m).min(self.rto_ps);
            } else if m > self.rto_ps {
                // A long gap: the sender restarts its window, so ACK quickly.
                self.incr_quickack();
            }
        }
        self.lrcv = now;
        if payload < p.mss {
            self.pushed = true;
        }
        // The offered window grows by two segments per full segment received.
        let max_segs = (p.rwnd_bytes / p.mss as u64).min(u32::MAX as u64) as u32;
        if payload >= p.mss && self.rcv_wnd_segs < max_segs {
            self.rcv_wnd_segs = (self.rcv_wnd_segs + 2).min(max_segs);
        }
    }

    /// Linux `tcp_send_delayed_ack`: arm the delayed-ACK timer, or ACK now when the pending
    /// one is about to fire anyway.
    fn linux_delay_ack(&mut self, now: Time, p: &TcpParams, seq: u64, out: &mut Vec<Packet>) {
        let ato_min = self.ato_floor;
        let mut ato = self.ato_ps;
        if ato > ato_min {
            let mut max_ato = 500 * PS_PER_MS;
            if self.pushed {
                max_ato = DELACK_MAX_PS;
            }
            let srtt = self.rtt.srtt_ps(p) as Time;
            if srtt > 0 {
                max_ato = max_ato.min(srtt.max(ato_min));
            }
            ato = ato.min(max_ato);
        }
        let timeout = now + ato;
        if self.delack_deadline != NEVER {
            if self.delack_deadline <= now + ato / 4 {
                self.make_ack(seq, out);
            }
            return;
        }
        self.delack_count = 1;
        self.delack_deadline = timeout;
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, p: &TcpParams, out: &mut Vec<Packet>) {
        if p.ack_rules == AckRules::Linux {
            if self.delack_count > 0 || self.rcv_nxt > self.rcv_wup {
                // Linux `tcp_delack_timer_handler`: a missed delayed ACK inflates ato.
                self.ato_ps = (self.ato_ps * 2).min(self.rto_ps);
                let s = self.rcv_nxt;
                self.make_ack(s, out);
            }
            self.delack_deadline = NEVER;
            return;
        }
        if self.delack_count > 0 {
            let s = self.rcv_nxt;
            self.make_ack(s, out);
        }
        self.delack_deadline = NEVER;
    }
}
