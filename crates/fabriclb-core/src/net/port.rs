//! Output ports: a byte-limited FIFO queue in front of one direction of a link.
//!
//! A FIFO port serves packets in arrival order at the link rate, so when a packet is accepted
//! its transmission start (`max(now, free_at)`) and end are known at once; the caller schedules
//! the packet's arrival at the far end (end + propagation) immediately: one event per hop.
//! The queue content is kept as (end time, bytes) of packets not yet fully sent: the oldest
//! inline in the port (most ports hold at most one packet, and then never touch the ring, a
//! separate allocation and a cache miss at scale), the others in a ring. It is trimmed lazily
//! whenever the port is touched, which gives the exact instantaneous queue
//! (packets not yet fully transmitted, including the one on the wire) at any event time, and
//! the exact time integral of the queue length.
//!
//! Drop-tail on `cap_bytes`; ECN: CE is set on an ECT packet when the queue it joins is
//! above K bytes (instantaneous, DCTCP style). A port may not touch packets or other ports.

use super::dre::Dre;
use super::packet::PREAMBLE_IFG;
use crate::units::{ser_ps, Time};
use std::collections::VecDeque;

/// A port's counters (a snapshot: see [`Port::stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Packets / bytes fully transmitted (serialised onto the link), including those then lost
    /// on the wire.
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Packets / bytes accepted into the queue.
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    /// Largest queue seen, bytes.
    pub max_q_bytes: u64,
    pub ecn_marks: u64,
    /// ∫ queue bytes dt, in byte-picoseconds.
    pub q_integral: u128,
    pub drops: u64,
    pub drop_bytes: u64,
    /// Packets lost on the wire (gray failure) or cut by a link failure.
    pub wire_losses: u64,
}

/// What a port's time averages need at one instant (see [`Port::mark`]): the averages over an
/// interval are differences of two marks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortMark {
    /// ∫ queue bytes dt from time 0 up to the mark, byte-picoseconds.
    pub q_area: u128,
    /// Bytes fully transmitted up to the mark.
    pub tx_bytes: u64,
    /// Bytes of the packet on the wire at the mark already sent (its frame bytes times the
    /// share of its transmission time elapsed, rounded down): with it, the bytes sent between
    /// two marks never exceed what the rate allows in that time.
    pub tx_partial_bytes: u64,
    /// The histogram's time per bin up to the mark (empty without a histogram).
    pub hist_ps: Vec<u64>,
}

/// Time-weighted histogram of the queue length, in bins of `bin_bytes`.
#[derive(Clone, Debug)]
pub struct QueueHist {
    pub bin_bytes: u64,
    /// Picoseconds spent with the queue in each bin.
    pub time_ps: Vec<u64>,
}

/// `repr(C, align(64))`, laid out by use: an offer reads and writes the first two cache lines
/// only (unless the port holds two packets or more, marks, drops or is lossy), and an arrival
/// at the far end, when DREs are kept, reads the delay in the first and the DRE in the second.
/// The simulator prefetches these lines one event ahead.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Port {
    // ---- line 1 ----
    /// Bumped on every failure: packets carrying an older epoch were cut.
    pub epoch: u32,
    head_bytes: u32,
    pub up: bool,
    /// `hist` is set (checked without touching it).
    has_hist: bool,
    /// `loss > 0`.
    lossy: bool,
    /// The link ends at a host (set by whoever builds the world; the port does not use it):
    /// in the line an offer reads, where the simulator needs it for the packet's arrival event.
    pub to_host: bool,
    /// End time of the oldest packet not fully sent (`Time::MAX`: none); its bytes are
    /// `head_bytes`.
    head_end: Time,
    /// When the link finishes sending everything accepted so far.
    pub free_at: Time,
    /// Bytes accepted and not yet fully sent.
    pub q_bytes: u64,
    pub rate_bps: u64,
    pub delay_ps: Time,
    pub cap_bytes: u64,
    // ---- line 2 ----
    pub ecn_k_bytes: u64,
    enq_pkts: u64,
    enq_bytes: u64,
    max_q_bytes: u64,
    q_integral: u128,
    pub dre: Dre,
    // ---- cold ----
    /// The packets queued behind the head, in order: (end time, bytes).
    ring: VecDeque<(Time, u32)>,
    /// Gray-failure loss probability.
    loss: f64,
    ecn_marks: u64,
    drops: u64,
    drop_bytes: u64,
    pub wire_losses: u64,
    /// Packets / bytes accepted but never sent: flushed by a failure, or queued at the end.
    unsent_pkts: u64,
    unsent_bytes: u64,
    hist: Option<Box<QueueHist>>,
    /// Time up to which `hist` is accounted.
    hist_t: Time,
}

/// What happened to an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    /// Accepted; the last bit leaves the port at `end` (arrival at the far end is `end + delay`).
    Sent { end: Time, marked: bool },
    /// Dropped: queue full or link down.
    Dropped,
}

impl Port {
    pub fn new(rate_bps: u64, delay_ps: Time, cap_bytes: u64, ecn_k_bytes: u64) -> Port {
        Port {
            epoch: 0,
            head_bytes: 0,
            up: true,
            has_hist: false,
            lossy: false,
            to_host: false,
            head_end: Time::MAX,
            free_at: 0,
            q_bytes: 0,
            rate_bps,
            delay_ps,
            cap_bytes,
            ecn_k_bytes,
            enq_pkts: 0,
            enq_bytes: 0,
            max_q_bytes: 0,
            q_integral: 0,
            dre: Dre::default(),
            ring: VecDeque::new(),
            loss: 0.0,
            ecn_marks: 0,
            drops: 0,
            drop_bytes: 0,
            wire_losses: 0,
            unsent_pkts: 0,
            unsent_bytes: 0,
            hist: None,
            hist_t: 0,
        }
    }

    /// The counters. Packets still queued count as not transmitted.
    pub fn stats(&self) -> PortStats {
        let queued = if self.head_end == Time::MAX {
            0
        } else {
            1 + self.ring.len() as u64
        };
        PortStats {
            tx_pkts: self.enq_pkts - self.unsent_pkts - queued,
            tx_bytes: self.enq_bytes - self.unsent_bytes - self.q_bytes,
            enq_pkts: self.enq_pkts,
            enq_bytes: self.enq_bytes,
            max_q_bytes: self.max_q_bytes,
            ecn_marks: self.ecn_marks,
            q_integral: self.q_integral,
            drops: self.drops,
            drop_bytes: self.drop_bytes,
            wire_losses: self.wire_losses,
        }
    }

    /// The counters behind the time averages, as of `now` (no earlier than the last event seen).
    /// `q_integral` already holds each queued packet's share up to its end time: take back
    /// what lies beyond `now`.
    pub fn mark(&mut self, now: Time) -> PortMark {
        self.advance(now);
        let tx_partial_bytes = if self.head_end == Time::MAX {
            0
        } else {
            let ser = ser_ps(self.head_bytes as u64 + PREAMBLE_IFG as u64, self.rate_bps).max(1);
            let left = (self.head_end - now).min(ser);
            (self.head_bytes as u128 * (ser - left) as u128 / ser as u128) as u64
        };
        PortMark {
            q_area: self.q_integral - self.area_beyond(now),
            tx_bytes: self.stats().tx_bytes,
            tx_partial_bytes,
            hist_ps: self.hist.as_ref().map_or(vec![], |h| h.time_ps.clone()),
        }
    }

    /// Gray failure: each packet sent is lost on the wire with probability `p` (0 = healthy).
    pub fn set_loss(&mut self, p: f64) {
        self.loss = p;
        self.lossy = p > 0.0;
    }

    /// Whether a packet sent now is lost on the wire: a draw from `draw` only on lossy links.
    #[inline]
    pub fn corrupts(&self, draw: impl FnOnce() -> f64) -> bool {
        self.lossy && draw() < self.loss
    }

    /// Record the time-weighted histogram of this port's queue, in bins of `bin_bytes`.
    pub fn record_histogram(&mut self, bin_bytes: u64, bins: usize) {
        self.hist = Some(Box::new(QueueHist {
            bin_bytes,
            time_ps: vec![0; bins],
        }));
        self.has_hist = true;
    }

    pub fn histogram(&self) -> Option<&QueueHist> {
        self.hist.as_deref()
    }

    /// Credit the histogram with the current queue from the last accounted time up to `t`.
    #[inline]
    fn account_hist(&mut self, t: Time) {
        if let Some(h) = self.hist.as_deref_mut() {
            if t > self.hist_t {
                let b = ((self.q_bytes / h.bin_bytes) as usize).min(h.time_ps.len() - 1);
                h.time_ps[b] += t - self.hist_t;
                self.hist_t = t;
            }
        }
    }

    /// Bring the queue up to time `now` (drop finished packets). Runs on every offer: the
    /// histogram's accounting stays out of line, so this inlines without its register saves.
    #[inline(always)]
    pub fn advance(&mut self, now: Time) {
        if self.has_hist {
            return self.advance_with_hist(now);
        }
        while self.head_end <= now {
            self.pop_head();
        }
    }

    #[inline(always)]
    fn pop_head(&mut self) {
        self.q_bytes -= self.head_bytes as u64;
        (self.head_end, self.head_bytes) = self.ring.pop_front().unwrap_or((Time::MAX, 0));
    }

    /// `advance` for a port that records its queue's histogram.
    #[inline(never)]
    fn advance_with_hist(&mut self, now: Time) {
        while self.head_end <= now {
            self.account_hist(self.head_end);
            self.pop_head();
        }
        self.account_hist(now);
    }

    /// Where the oldest packet waiting behind the head is kept, if any: what `advance` reads
    /// when the head has left (a prefetch hint).
    #[inline]
    pub fn waiting_hint(&self) -> Option<*const u8> {
        self.ring
            .front()
            .map(|x| x as *const (Time, u32) as *const u8)
    }

    /// When the oldest queued packet's last bit leaves (`Time::MAX`: the port is empty).
    #[inline]
    pub fn next_departure(&self) -> Time {
        self.head_end
    }

    /// Instantaneous queue at `now`, bytes.
    #[inline]
    pub fn queue_bytes(&mut self, now: Time) -> u64 {
        self.advance(now);
        self.q_bytes
    }

    /// Offer a packet of `frame` bytes (`wire` bytes on the wire) at `now`. `limit` is the
    /// admission limit in bytes (the port's own cap, or a shared-buffer threshold).
    #[inline]
    pub fn offer(&mut self, now: Time, frame: u32, wire: u32, ect: bool, limit: u64) -> Enqueue {
        self.advance(now);
        if !self.up || self.q_bytes + frame as u64 > limit {
            self.drops += 1;
            self.drop_bytes += frame as u64;
            return Enqueue::Dropped;
        }
        let marked = ect && self.ecn_k_bytes > 0 && self.q_bytes > self.ecn_k_bytes;
        if marked {
            self.ecn_marks += 1;
        }
        let start = now.max(self.free_at);
        let end = start + ser_ps(wire as u64, self.rate_bps);
        self.free_at = end;
        self.q_bytes += frame as u64;
        self.max_q_bytes = self.max_q_bytes.max(self.q_bytes);
        // The packet holds `frame` bytes of queue from now until its last bit leaves: its whole
        // share of the integral is known now (`settle` and `fail` take back what lies beyond).
        self.q_integral += frame as u128 * (end - now) as u128;
        if self.head_end == Time::MAX {
            (self.head_end, self.head_bytes) = (end, frame);
        } else {
            self.ring.push_back((end, frame));
        }
        self.enq_pkts += 1;
        self.enq_bytes += frame as u64;
        Enqueue::Sent { end, marked }
    }

    /// The part of `q_integral` that lies after `now` (after `advance(now)`): the queued
    /// packets' bytes times their remaining time in the queue.
    fn area_beyond(&self, now: Time) -> u128 {
        std::iter::once((self.head_end, self.head_bytes))
            .filter(|&(end, _)| end != Time::MAX)
            .chain(self.ring.iter().copied())
            .map(|(end, bytes)| bytes as u128 * (end - now) as u128)
            .sum()
    }

    /// Empty the queue at `now` (after `advance(now)`): the queued packets count as never
    /// sent, and their shares of the integral beyond `now` are taken back. Returns the bytes
    /// removed.
    fn clear_queue(&mut self, now: Time) -> u64 {
        if self.head_end != Time::MAX {
            self.unsent_pkts += 1 + self.ring.len() as u64;
        }
        self.q_integral -= self.area_beyond(now);
        self.head_end = Time::MAX;
        self.ring.clear();
        self.unsent_bytes += self.q_bytes;
        std::mem::take(&mut self.q_bytes)
    }

    /// End of the run at `now`: the counters cover the run up to `now` and no further; the
    /// port is left empty.
    pub fn settle(&mut self, now: Time) {
        self.advance(now);
        self.clear_queue(now);
    }

    /// The link goes down at `now`: everything queued or on the wire is lost (callers drop
    /// those packets on arrival by their epoch). Returns the number of bytes flushed.
    pub fn fail(&mut self, now: Time) -> u64 {
        self.advance(now);
        let flushed = self.clear_queue(now);
        self.free_at = now;
        self.up = false;
        self.epoch = self.epoch.wrapping_add(1);
        flushed
    }

    pub fn recover(&mut self) {
        self.up = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const G10: u64 = 10_000_000_000;

    #[test]
    fn fifo_timing_and_drop_tail() {
        let mut p = Port::new(G10, 1_000_000, 3 * 1518, 0);
        let ser = ser_ps(1538, G10);
        // three back-to-back packets fill the queue; the fourth is dropped
        let mut ends = vec![];
        for _ in 0..3 {
            match p.offer(0, 1518, 1538, false, p.cap_bytes) {
                Enqueue::Sent { end, .. } => ends.push(end),
                Enqueue::Dropped => panic!(),
            }
        }
        assert_eq!(ends, vec![ser, 2 * ser, 3 * ser]);
        assert_eq!(p.offer(0, 1518, 1538, false, p.cap_bytes), Enqueue::Dropped);
        assert_eq!(p.stats().drops, 1);
        // after the first finished, one slot is free again
        assert_eq!(p.queue_bytes(ser), 2 * 1518);
        assert!(
            matches!(p.offer(ser, 1518, 1538, false, p.cap_bytes), Enqueue::Sent { end, .. } if end == 4 * ser)
        );
        assert!(p.q_bytes <= p.cap_bytes);
        // an idle port starts at once
        assert_eq!(p.queue_bytes(100 * ser), 0);
        assert!(
            matches!(p.offer(100 * ser, 64, 84, false, p.cap_bytes), Enqueue::Sent { end, .. } if end == 100 * ser + ser_ps(84, G10))
        );
    }

    #[test]
    fn ecn_marks_above_k_only_for_ect() {
        // (packets already queued, ect, expect mark) with K = 2 packets
        let cases = [
            (0, true, false),
            (2, true, false),
            (3, true, true),
            (3, false, false),
            (5, true, true),
        ];
        for (queued, ect, want) in cases {
            let mut p = Port::new(G10, 0, 100 * 1518, 2 * 1518);
            for _ in 0..queued {
                p.offer(0, 1518, 1538, false, p.cap_bytes);
            }
            match p.offer(0, 1518, 1538, ect, p.cap_bytes) {
                Enqueue::Sent { marked, .. } => {
                    assert_eq!(marked, want, "queued={queued} ect={ect}")
                }
                Enqueue::Dropped => panic!(),
            }
        }
    }

    #[test]
    fn time_weighted_queue_integral() {
        let mut p = Port::new(G10, 0, 1 << 30, 0);
        p.record_histogram(1518, 4);
        let ser = ser_ps(1538, G10);
        p.offer(0, 1518, 1538, false, p.cap_bytes);
        p.offer(0, 1518, 1538, false, p.cap_bytes);
        p.advance(10 * ser);
        // 2 packets for one ser time, then 1 for one more
        assert_eq!(p.stats().q_integral, (2 * 1518 * ser + 1518 * ser) as u128);
        let h = p.histogram().unwrap();
        assert_eq!(h.time_ps, vec![8 * ser, ser, ser, 0]);
    }

    #[test]
    fn integral_stops_at_settle_and_failure() {
        // Three packets queued at 0; the run ends (or the link fails) half-way through the
        // second: 3 packets for 1 ser, 2 for half a ser.
        let ser = ser_ps(1538, G10);
        let want = (3 * 1518 * ser + 2 * 1518 * ser / 2) as u128;
        for fail in [false, true] {
            let mut p = Port::new(G10, 0, 1 << 30, 0);
            for _ in 0..3 {
                p.offer(0, 1518, 1538, false, p.cap_bytes);
            }
            if fail {
                assert_eq!(p.fail(ser + ser / 2), 2 * 1518);
            } else {
                p.settle(ser + ser / 2);
            }
            assert_eq!(p.stats().q_integral, want, "fail={fail}");
            assert_eq!(p.q_bytes, 0);
        }
    }

    #[test]
    fn marks_cover_the_queue_up_to_their_instant_only() {
        // Three packets queued at 0 (each one `ser` on the wire). (mark time, area so far,
        // bytes fully sent so far, histogram so far: 0, 1, 2, 3+ packets).
        let ser = ser_ps(1538, G10);
        let f = 1518u128;
        let s = ser as u128;
        let cases = [
            (0, 0, 0, vec![0, 0, 0, 0]),
            (ser / 2, 3 * f * s / 2, 0, vec![0, 0, 0, ser / 2]),
            (ser, 3 * f * s, 1518, vec![0, 0, 0, ser]),
            (
                2 * ser + ser / 2,
                3 * f * s + 2 * f * s + f * s / 2,
                2 * 1518,
                vec![0, ser / 2, ser, ser],
            ),
            (5 * ser, 6 * f * s, 3 * 1518, vec![2 * ser, ser, ser, ser]),
        ];
        for (t, area, tx, hist) in cases {
            let mut p = Port::new(G10, 0, 1 << 30, 0);
            p.record_histogram(1518, 4);
            for _ in 0..3 {
                p.offer(0, 1518, 1538, false, p.cap_bytes);
            }
            let m = p.mark(t);
            assert_eq!((m.q_area, m.tx_bytes, m.hist_ps), (area, tx, hist), "t={t}");
            // A mark changes nothing: the whole-run integral is still complete at the end.
            p.settle(10 * ser);
            assert_eq!(p.stats().q_integral, 6 * f * s, "t={t}");
        }
    }

    #[test]
    fn offer_and_arrival_fields_fill_two_cache_lines() {
        let p = Port::new(G10, 0, 0, 0);
        let base = &p as *const Port as usize;
        let end = |a: usize, size: usize| a - base + size;
        assert!(end(&p.cap_bytes as *const _ as usize, 8) <= 64);
        assert!(end(&p.q_integral as *const _ as usize, 16) <= 128);
        assert!(end(&p.dre as *const _ as usize, std::mem::size_of::<Dre>()) <= 128);
    }

    #[test]
    fn transmitted_counts_exclude_flushed_and_still_queued() {
        let ser = ser_ps(1538, G10);
        let mut p = Port::new(G10, 0, 1 << 30, 0);
        for _ in 0..4 {
            p.offer(0, 1518, 1538, false, p.cap_bytes);
        }
        // two sent (the second's last bit leaves as the link fails), two flushed
        p.fail(2 * ser);
        p.recover();
        p.offer(3 * ser, 1518, 1538, false, p.cap_bytes);
        p.offer(3 * ser, 1518, 1538, false, p.cap_bytes);
        // the run ends with one of these two sent and one queued
        p.settle(4 * ser + ser / 2);
        let st = p.stats();
        assert_eq!((st.enq_pkts, st.tx_pkts), (6, 3));
        assert_eq!(st.tx_bytes, 3 * 1518);
    }

    #[test]
    fn failure_flushes_and_bumps_epoch() {
        let mut p = Port::new(G10, 0, 1 << 30, 0);
        p.offer(0, 1518, 1538, false, p.cap_bytes);
        p.offer(0, 1518, 1538, false, p.cap_bytes);
        let e = p.epoch;
        assert_eq!(p.fail(1), 2 * 1518);
        assert_ne!(p.epoch, e);
        assert_eq!(p.offer(2, 1518, 1538, false, p.cap_bytes), Enqueue::Dropped);
        p.recover();
        assert!(matches!(
            p.offer(3, 1518, 1538, false, p.cap_bytes),
            Enqueue::Sent { .. }
        ));
    }
}
