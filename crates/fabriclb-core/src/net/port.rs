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
use crate::units::{ser_ps, Time};
use std::collections::VecDeque;

/// Counters. `repr(C)`: the ones updated on every packet fill the first 64 bytes.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct PortStats {
    /// Packets / bytes fully transmitted (counted on arrival at the far end).
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

/// Time-weighted histogram of the queue length, in bins of `bin_bytes`.
#[derive(Clone, Debug)]
pub struct QueueHist {
    pub bin_bytes: u64,
    /// Picoseconds spent with the queue in each bin.
    pub time_ps: Vec<u64>,
}

/// `repr(C, align(64))` so that a packet's two visits (offer here, arrival at the far end)
/// touch the first three cache lines only: the queue state, then the ring and the DRE, then
/// the per-packet counters (the simulator prefetches these lines). The histogram is cold.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Port {
    /// Bumped on every failure: packets carrying an older epoch were cut.
    pub epoch: u32,
    head_bytes: u32,
    pub up: bool,
    /// `hist` is set (checked without touching it).
    has_hist: bool,
    /// End time of the oldest packet not fully sent (`Time::MAX`: none); its bytes are
    /// `head_bytes`.
    head_end: Time,
    pub delay_ps: Time,
    pub rate_bps: u64,
    /// When the link finishes sending everything accepted so far.
    pub free_at: Time,
    /// Bytes accepted and not yet fully sent.
    pub q_bytes: u64,
    pub cap_bytes: u64,
    pub ecn_k_bytes: u64,
    /// Gray-failure loss probability.
    pub loss: f64,
    /// The packets queued behind the head, in order: (end time, bytes).
    ring: VecDeque<(Time, u32)>,
    pub dre: Dre,
    pub stats: PortStats,
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
            head_end: Time::MAX,
            delay_ps,
            rate_bps,
            free_at: 0,
            q_bytes: 0,
            cap_bytes,
            ecn_k_bytes,
            loss: 0.0,
            ring: VecDeque::new(),
            dre: Dre::default(),
            stats: PortStats::default(),
            hist: None,
            hist_t: 0,
        }
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

    /// Bring the queue up to time `now` (drop finished packets).
    #[inline]
    pub fn advance(&mut self, now: Time) {
        while self.head_end <= now {
            if self.has_hist {
                self.account_hist(self.head_end);
            }
            self.q_bytes -= self.head_bytes as u64;
            (self.head_end, self.head_bytes) = self.ring.pop_front().unwrap_or((Time::MAX, 0));
        }
        if self.has_hist {
            self.account_hist(now);
        }
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
            self.stats.drops += 1;
            self.stats.drop_bytes += frame as u64;
            return Enqueue::Dropped;
        }
        let marked = ect && self.ecn_k_bytes > 0 && self.q_bytes > self.ecn_k_bytes;
        if marked {
            self.stats.ecn_marks += 1;
        }
        let start = now.max(self.free_at);
        let end = start + ser_ps(wire as u64, self.rate_bps);
        self.free_at = end;
        self.q_bytes += frame as u64;
        self.stats.max_q_bytes = self.stats.max_q_bytes.max(self.q_bytes);
        // The packet holds `frame` bytes of queue from now until its last bit leaves: its whole
        // share of the integral is known now (`settle` takes back what lies beyond the run).
        self.stats.q_integral += frame as u128 * (end - now) as u128;
        if self.head_end == Time::MAX {
            (self.head_end, self.head_bytes) = (end, frame);
        } else {
            self.ring.push_back((end, frame));
        }
        self.stats.enq_pkts += 1;
        self.stats.enq_bytes += frame as u64;
        Enqueue::Sent { end, marked }
    }

    /// Empty the queue at `now` (after `advance(now)`): take the queued packets' shares beyond
    /// `now` back out of the integral. Returns the bytes removed.
    fn clear_queue(&mut self, now: Time) -> u64 {
        let mut beyond = 0u128;
        if self.head_end != Time::MAX {
            beyond += self.head_bytes as u128 * (self.head_end - now) as u128;
        }
        for &(end, bytes) in &self.ring {
            beyond += bytes as u128 * (end - now) as u128;
        }
        self.stats.q_integral -= beyond;
        self.head_end = Time::MAX;
        self.ring.clear();
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
        assert_eq!(p.stats.drops, 1);
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
        assert_eq!(p.stats.q_integral, (2 * 1518 * ser + 1518 * ser) as u128);
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
            assert_eq!(p.stats.q_integral, want, "fail={fail}");
            assert_eq!(p.q_bytes, 0);
        }
    }

    #[test]
    fn hot_fields_fill_three_cache_lines() {
        let p = Port::new(G10, 0, 0, 0);
        let base = &p as *const Port as usize;
        let off = |a: usize| a - base;
        assert!(
            off(&p.ring as *const _ as usize) + std::mem::size_of::<VecDeque<(Time, u32)>>() <= 128
        );
        assert!(off(&p.dre as *const _ as usize) + std::mem::size_of::<Dre>() <= 128);
        assert_eq!(off(&p.stats as *const _ as usize), 128);
        assert!(off(&p.stats.q_integral as *const _ as usize) < 192);
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
