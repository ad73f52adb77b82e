//! Output ports: a byte-limited FIFO queue in front of one direction of a link.
//!
//! A FIFO port serves packets in arrival order at the link rate, so when a packet is accepted
//! its transmission start (`max(now, free_at)`) and end are known at once; the caller schedules
//! the packet's arrival at the far end (end + propagation) immediately: one event per hop.
//! The queue content is kept as a ring of (end time, bytes) of packets not yet fully sent; it
//! is trimmed lazily whenever the port is touched, which gives the exact instantaneous queue
//! (packets not yet fully transmitted, including the one on the wire) at any event time, and
//! the exact time integral of the queue length.
//!
//! Drop-tail on `cap_bytes`; ECN: CE is set on an ECT packet when the queue it joins is
//! above K bytes (instantaneous, DCTCP style). A port may not touch packets or other ports.

use super::dre::Dre;
use crate::units::{ser_ps, Time};
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct PortStats {
    /// Packets / bytes accepted into the queue.
    pub enq_pkts: u64,
    pub enq_bytes: u64,
    /// Packets / bytes fully transmitted (counted on arrival at the far end).
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub drops: u64,
    pub drop_bytes: u64,
    pub ecn_marks: u64,
    /// Packets lost on the wire (gray failure) or cut by a link failure.
    pub wire_losses: u64,
    /// Largest queue seen, bytes.
    pub max_q_bytes: u64,
    /// ∫ queue bytes dt, in byte-picoseconds.
    pub q_integral: u128,
}

/// Time-weighted histogram of the queue length, in bins of `bin_bytes`.
#[derive(Clone, Debug)]
pub struct QueueHist {
    pub bin_bytes: u64,
    /// Picoseconds spent with the queue in each bin.
    pub time_ps: Vec<u64>,
}

#[derive(Clone, Debug)]
pub struct Port {
    pub rate_bps: u64,
    pub delay_ps: Time,
    pub cap_bytes: u64,
    pub ecn_k_bytes: u64,
    pub up: bool,
    /// Bumped on every failure: packets carrying an older epoch were cut.
    pub epoch: u32,
    /// Gray-failure loss probability.
    pub loss: f64,
    /// When the link finishes sending everything accepted so far.
    pub free_at: Time,
    /// Bytes accepted and not yet fully sent.
    pub q_bytes: u64,
    ring: VecDeque<(Time, u32)>,
    last_t: Time,
    pub dre: Dre,
    pub stats: PortStats,
    pub hist: Option<Box<QueueHist>>,
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
            rate_bps,
            delay_ps,
            cap_bytes,
            ecn_k_bytes,
            up: true,
            epoch: 0,
            loss: 0.0,
            free_at: 0,
            q_bytes: 0,
            ring: VecDeque::new(),
            last_t: 0,
            dre: Dre::default(),
            stats: PortStats::default(),
            hist: None,
        }
    }

    #[inline]
    fn account(&mut self, t: Time) {
        let dt = t - self.last_t;
        if dt > 0 {
            self.stats.q_integral += self.q_bytes as u128 * dt as u128;
            if let Some(h) = self.hist.as_deref_mut() {
                let b = ((self.q_bytes / h.bin_bytes) as usize).min(h.time_ps.len() - 1);
                h.time_ps[b] += dt;
            }
            self.last_t = t;
        }
    }

    /// Bring the queue up to time `now` (drop finished packets from the ring).
    #[inline]
    pub fn advance(&mut self, now: Time) {
        while let Some(&(end, bytes)) = self.ring.front() {
            if end > now {
                break;
            }
            self.account(end);
            self.q_bytes -= bytes as u64;
            self.ring.pop_front();
        }
        self.account(now);
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
        self.ring.push_back((end, frame));
        self.stats.enq_pkts += 1;
        self.stats.enq_bytes += frame as u64;
        Enqueue::Sent { end, marked }
    }

    /// The link goes down at `now`: everything queued or on the wire is lost (callers drop
    /// those packets on arrival by their epoch). Returns the number of bytes flushed.
    pub fn fail(&mut self, now: Time) -> u64 {
        self.advance(now);
        let flushed = self.q_bytes;
        self.ring.clear();
        self.q_bytes = 0;
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
        p.hist = Some(Box::new(QueueHist {
            bin_bytes: 1518,
            time_ps: vec![0; 4],
        }));
        let ser = ser_ps(1538, G10);
        p.offer(0, 1518, 1538, false, p.cap_bytes);
        p.offer(0, 1518, 1538, false, p.cap_bytes);
        p.advance(10 * ser);
        // 2 packets for one ser time, then 1 for one more
        assert_eq!(p.stats.q_integral, (2 * 1518 * ser + 1518 * ser) as u128);
        let h = p.hist.as_ref().unwrap();
        assert_eq!(h.time_ps, vec![8 * ser, ser, ser, 0]);
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
