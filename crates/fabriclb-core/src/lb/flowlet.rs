//! Flowlet tables, shared by the schemes that switch flowlets (CONGA, LetFlow).
//!
//! A table has one row per deciding switch (a leaf for CONGA, any switch for LetFlow) of
//! `size` entries, indexed by a multiply-shift of `hash64(5-tuple)` (collisions are possible,
//! as in hardware). An entry caches a port and the first instant at which it no longer holds
//! a flowlet; two expiry rules:
//! - [`Expiry::AgeBit`]: CONGA's Algorithm 2 (papers/conga.md §3.4), valid and age bits and
//!   an aging timer ticking every T_fl, kept lazily: a packet in tick interval k keeps the
//!   entry valid through interval k + 1 (tick k+1 sets the age bit, tick k+2 clears valid). A
//!   gap below T_fl never ends a flowlet, one of 2·T_fl or more always does, in between it
//!   depends on the phase against the timer. A tick and a packet at the same instant: tick
//!   first.
//! - [`Expiry::Gap`]: a packet after an idle gap longer than T_fl starts a new flowlet, a gap
//!   of exactly T_fl does not (SCHEMES.md §6 for LetFlow; the same test as its authors'
//!   ns-3 code, `now − activeTime ≤ timeout`).
//!
//! The table does not decide: a scheme looks an entry up, decides on a new flowlet, and
//! records the port. It counts the decisions and those that left the cached port.
//! Allocated at build (rows × size × 12 B; zeroed pages cost nothing until touched); the
//! per-packet path allocates nothing.

use crate::net::packet::Packet;
use crate::rng::hash64;
use crate::units::Time;

/// When an entry stops holding a flowlet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// CONGA's valid and age bits with a timer of period T_fl: expiry after T_fl to 2·T_fl.
    AgeBit,
    /// Exactly after an idle gap longer than T_fl.
    Gap,
}

/// What a lookup found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A live flowlet whose port is among the candidates: keep it.
    Active(u32),
    /// A new flowlet; the port the entry cached, if it was ever used (an expired flowlet's
    /// port, or a live one's that is no longer a candidate).
    New(Option<u32>),
}

pub struct FlowletTable {
    size: usize,
    t_fl: Time,
    expiry: Expiry,
    /// Per entry: the first instant at which it no longer holds a flowlet (0 = never used).
    until: Vec<Time>,
    port: Vec<u32>,
    /// Decisions (new flowlets), and those that changed the cached port.
    flowlets: u64,
    moves: u64,
}

impl FlowletTable {
    /// `rows` × `size` entries; `t_fl` > 0 and `size` > 0 (checked by the schemes' validation).
    pub fn new(rows: usize, size: usize, t_fl: Time, expiry: Expiry) -> FlowletTable {
        FlowletTable {
            size,
            t_fl,
            expiry,
            until: vec![0; rows * size],
            port: vec![0; rows * size],
            flowlets: 0,
            moves: 0,
        }
    }

    #[cfg(test)]
    pub fn t_fl(&self) -> Time {
        self.t_fl
    }

    /// Entries per row.
    #[cfg(test)]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Entries in all rows.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.until.len()
    }

    /// The entry of `pkt`'s flow in row `row`.
    #[inline]
    pub fn slot(&self, row: usize, pkt: &Packet) -> usize {
        let h = hash64(pkt.five_tuple());
        row * self.size + (((h >> 32) * self.size as u64) >> 32) as usize
    }

    #[inline]
    pub fn lookup(&self, slot: usize, now: Time, cands: &[u32]) -> Lookup {
        let until = self.until[slot];
        let port = self.port[slot];
        if now < until && cands.contains(&port) {
            Lookup::Active(port)
        } else {
            Lookup::New((until != 0).then_some(port))
        }
    }

    /// A packet of the entry's flow leaves on `port` at `now`; `found` is what the lookup said.
    #[inline]
    pub fn record(&mut self, slot: usize, now: Time, port: u32, found: Lookup) {
        if let Lookup::New(cached) = found {
            self.flowlets += 1;
            self.moves += u64::from(cached.is_some_and(|p| p != port));
        }
        self.until[slot] = match self.expiry {
            Expiry::AgeBit => (now / self.t_fl + 2).saturating_mul(self.t_fl),
            Expiry::Gap => now.saturating_add(self.t_fl + 1),
        };
        self.port[slot] = port;
    }

    /// The summary counters (`lb` in summary.json).
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("flowlets", self.flowlets), ("flowlet_moves", self.moves)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::testutil::Fx;
    use crate::units::PS_PER_US;
    const US: u64 = PS_PER_US;

    fn pkt(sport: u16) -> Packet {
        Fx::pkt(sport)
    }

    /// Two packets of one flow at `t1` and `t1 + gap` (µs): does the second start a flowlet?
    fn second_is_new(expiry: Expiry, t1: u64, gap: u64) -> bool {
        let mut t = FlowletTable::new(1, 64, 500 * US, expiry);
        let s = t.slot(0, &pkt(9));
        let cands = [7, 8];
        let first = t.lookup(s, t1 * US, &cands);
        assert_eq!(first, Lookup::New(None));
        t.record(s, t1 * US, 7, first);
        let second = t.lookup(s, (t1 + gap) * US, &cands);
        t.record(s, (t1 + gap) * US, 7, second);
        matches!(second, Lookup::New(_))
    }

    #[test]
    fn expiry_table() {
        // T_fl = 500 us. (first packet at, gap, new flowlet under AgeBit, under Gap)
        let cases = [
            (0u64, 499u64, false, false),
            (0, 500, false, false), // a gap of exactly T_fl keeps the flowlet
            (0, 501, false, true),
            (0, 999, false, true), // age bit set at 500, not yet cleared
            (0, 1_000, true, true),
            (499, 500, false, false),
            (499, 501, true, true), // crossed ticks 500 and 1000
            (500, 999, false, true),
            (250, 750, true, true),
            (100, 1_500, true, true),
            (0, 2_000, true, true),
        ];
        for (t1, gap, age_bit, gap_rule) in cases {
            assert_eq!(
                second_is_new(Expiry::AgeBit, t1, gap),
                age_bit,
                "age bit t1={t1}us gap={gap}us"
            );
            assert_eq!(
                second_is_new(Expiry::Gap, t1, gap),
                gap_rule,
                "gap t1={t1}us gap={gap}us"
            );
        }
    }

    #[test]
    fn every_packet_refreshes_the_entry() {
        // Packets every 400 us keep one flowlet alive forever under both rules.
        for expiry in [Expiry::AgeBit, Expiry::Gap] {
            let mut t = FlowletTable::new(1, 64, 500 * US, expiry);
            let s = t.slot(0, &pkt(5));
            for k in 0..20u64 {
                let f = t.lookup(s, k * 400 * US, &[3, 4]);
                assert_eq!(matches!(f, Lookup::New(_)), k == 0, "{expiry:?} k={k}");
                t.record(s, k * 400 * US, 3, f);
            }
            assert_eq!(t.counters()[0], ("flowlets", 1));
        }
    }

    #[test]
    fn counters_and_vanished_ports() {
        let mut t = FlowletTable::new(2, 64, 500 * US, Expiry::Gap);
        let s = t.slot(1, &pkt(1));
        assert!(s >= 64, "row 1 lies after row 0");
        // (time us, candidates, port the scheme picks on a new flowlet, expected lookup)
        let steps: &[(u64, &[u32], u32, Lookup)] = &[
            (0, &[1, 2], 1, Lookup::New(None)),
            (100, &[1, 2], 2, Lookup::Active(1)),
            (200, &[2, 3], 2, Lookup::New(Some(1))), // port 1 is gone: decided anew, a move
            (1_000, &[2, 3], 2, Lookup::New(Some(2))), // expired, same port again: no move
            (1_100, &[2, 3], 3, Lookup::Active(2)),
        ];
        for &(us, cands, pick, want) in steps {
            let f = t.lookup(s, us * US, cands);
            assert_eq!(f, want, "t={us}us");
            let out = match f {
                Lookup::Active(p) => p,
                Lookup::New(_) => pick,
            };
            t.record(s, us * US, out, f);
        }
        assert_eq!(t.counters(), vec![("flowlets", 3), ("flowlet_moves", 1)]);
        // Rows are separate: the same flow in row 0 is new.
        let s0 = t.slot(0, &pkt(1));
        assert_eq!(t.lookup(s0, 1_100 * US, &[2, 3]), Lookup::New(None));
    }

    #[test]
    fn flows_spread_over_the_slots() {
        let t = FlowletTable::new(1, 16, US, Expiry::Gap);
        let mut hit = [0u32; 16];
        for sport in 0..1600u16 {
            hit[t.slot(0, &pkt(sport))] += 1;
        }
        assert!(hit.iter().all(|&n| (60..140).contains(&n)), "{hit:?}");
    }
}
