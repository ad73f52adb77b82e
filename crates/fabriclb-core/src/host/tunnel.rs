//! What edge schemes that tunnel every packet on a path of their choice share (EMAN, the
//! bandwidth oracle, Clove, Hermes, Presto): the per-pair tunnel (outer header with a sequence
//! number, 40 bytes on the wire), smooth weighted round robin over a pair's paths, and the
//! receiver's reorder buffer.
//!
//! Header fields live in `Packet::overlay`: the outer source port (the path) in `path`, the
//! sequence number in the low 24 bits of `aux[0]` (EMAN §III-B), a scheme's own fields in the
//! rest of `aux` and in `aux_flags`. [`ENCAPSULATED`] marks a packet that carries the header
//! (a real receiver knows it by the tunnel's UDP port; the simulation by this bit).

use crate::net::packet::Packet;
use crate::units::Time;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Bytes of encapsulation on the wire: outer IP 20 + UDP 8 + EMAN header 12 (EMAN §III-B, §IV).
pub const ENCAP_BYTES: u32 = 40;
/// `overlay.aux_flags` bit: the packet carries a tunnel header (set by the sending shim).
pub const ENCAPSULATED: u8 = 0x80;
/// Sequence numbers are 24 bits on the wire (EMAN §III-B) and wrap.
pub const SEQ_MASK: u32 = (1 << 24) - 1;

/// The tunnels between host pairs: each ordered pair (src → dst) has an id, a packet counter
/// at its sender and a reorder buffer at its receiver; each host a reorder timer.
#[derive(Debug)]
pub struct Tunnel {
    limit: u64,
    t_reorder: Time,
    reorder: bool,
    index: HashMap<(u32, u32), u32>,
    /// Per pair: (src, dst), the next sequence number, the reorder buffer.
    pub ends: Vec<(u32, u32)>,
    seq: Vec<u32>,
    bufs: Vec<Reorder>,
    /// Per host: the pairs it receives for, and its reorder timer (may be early; `Time::MAX`:
    /// none).
    rx: Vec<Vec<u32>>,
    timer: Vec<Time>,
    encapsulated: u64,
}

impl Tunnel {
    /// Tunnels whose receivers hold at most `limit` bytes for at most `t_reorder` (either 0:
    /// no reordering).
    pub fn new(limit: u64, t_reorder: Time) -> Tunnel {
        Tunnel {
            limit,
            t_reorder,
            reorder: limit > 0 && t_reorder > 0,
            index: HashMap::new(),
            ends: Vec::new(),
            seq: Vec::new(),
            bufs: Vec::new(),
            rx: Vec::new(),
            timer: Vec::new(),
            encapsulated: 0,
        }
    }

    /// The id of pair (src → dst), made on first use.
    pub fn pair(&mut self, src: u32, dst: u32) -> usize {
        if let Some(&i) = self.index.get(&(src, dst)) {
            return i as usize;
        }
        let i = self.ends.len();
        self.index.insert((src, dst), i as u32);
        self.ends.push((src, dst));
        self.seq.push(0);
        self.bufs.push(Reorder::default());
        let h = dst as usize;
        if self.rx.len() <= h {
            self.rx.resize(h + 1, Vec::new());
            self.timer.resize(h + 1, Time::MAX);
        }
        self.rx[h].push(i as u32);
        i
    }

    /// The id of pair (src → dst), if it has one.
    pub fn find(&self, src: u32, dst: u32) -> Option<usize> {
        self.index.get(&(src, dst)).map(|&i| i as usize)
    }

    /// Put `pk` of pair `i` in the tunnel on outer port `port`: the next sequence number in
    /// `aux[0]` (the rest of `aux` cleared), the marker, the bytes on the wire.
    pub fn encapsulate(&mut self, i: usize, pk: &mut Packet, port: u16) {
        pk.overlay.path = port;
        pk.overlay.aux = [self.seq[i], 0, 0];
        pk.overlay.aux_flags = ENCAPSULATED;
        pk.size += ENCAP_BYTES;
        self.seq[i] = self.seq[i].wrapping_add(1) & SEQ_MASK;
        self.encapsulated += 1;
    }

    /// For shims that read nothing on receive: a packet without the tunnel header goes up as it
    /// is; an encapsulated one goes through [`Tunnel::receive`].
    pub fn receive_or_pass(&mut self, now: Time, pk: Packet, up: &mut Vec<Packet>) {
        if pk.overlay.aux_flags & ENCAPSULATED == 0 {
            up.push(pk);
            return;
        }
        let i = self.pair(pk.src, pk.dst);
        self.receive(now, i, pk, up);
    }

    /// Take the tunnel header off `pk` (of pair `i`, seen as encapsulated), then pass it up, or
    /// hold it until the packets before it have come.
    pub fn receive(&mut self, now: Time, i: usize, mut pk: Packet, up: &mut Vec<Packet>) {
        pk.size -= ENCAP_BYTES;
        pk.overlay.aux_flags = 0;
        if !self.reorder {
            up.push(pk);
            return;
        }
        let h = pk.dst as usize;
        let r = &mut self.bufs[i];
        r.push(now, pk.overlay.aux[0] & SEQ_MASK, pk, self.limit, up);
        self.timer[h] = self.timer[h].min(r.deadline(self.t_reorder));
    }

    /// The reorder timer of `host` fired: release what has waited `t_reorder`.
    pub fn on_timer(&mut self, now: Time, host: u32, up: &mut Vec<Packet>) {
        let h = host as usize;
        let mut next = Time::MAX;
        for &i in self.rx.get(h).into_iter().flatten() {
            let r = &mut self.bufs[i as usize];
            r.on_timer(now, self.t_reorder, up);
            next = next.min(r.deadline(self.t_reorder));
        }
        if let Some(t) = self.timer.get_mut(h) {
            *t = next;
        }
    }

    pub fn next_timer(&self, host: u32) -> Time {
        self.timer.get(host as usize).copied().unwrap_or(Time::MAX)
    }

    /// The tunnels' counters for the summary.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut s = ReorderStats::default();
        for b in &self.bufs {
            s.held += b.stats.held;
            s.timeouts += b.stats.timeouts;
            s.overflows += b.stats.overflows;
            s.late += b.stats.late;
        }
        vec![
            ("encapsulated", self.encapsulated),
            ("reorder_held", s.held),
            ("reorder_timeouts", s.timeouts),
            ("reorder_overflows", s.overflows),
            ("reorder_late", s.late),
        ]
    }
}

/// Smooth weighted round robin (nginx's upstream selection): each pick adds every member's
/// weight to its running value, takes the largest (the first on ties) and subtracts the sum of
/// the weights from it. Over any Σw consecutive picks with fixed weights, member i is picked
/// w_i times, interleaved as evenly as possible (EMAN §III-C: "a smooth weighted round-robin
/// manner using the path's available bandwidth as its weight").
#[derive(Clone, Debug, Default)]
pub struct Swrr {
    current: Vec<i64>,
}

impl Swrr {
    /// Pick a member; `weights` are non-negative (all zero: every member weighs the same). The
    /// running values restart when the number of members changes.
    pub fn pick(&mut self, weights: &[u64]) -> usize {
        if self.current.len() != weights.len() {
            self.current = vec![0; weights.len()];
        }
        let zero = weights.iter().all(|&w| w == 0);
        let w = |i: usize| if zero { 1 } else { weights[i] as i64 };
        let mut total = 0i64;
        let mut best = 0;
        for i in 0..weights.len() {
            self.current[i] += w(i);
            total += w(i);
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= total;
        best
    }
}

/// The receiver's reorder buffer for one host pair (EMAN §III-D): packets are passed up in
/// sequence order; one that arrives ahead of a gap waits, at most `t_reorder` (then everything
/// held is passed up and the gap left to TCP) and within `limit` bytes (a packet that would
/// overflow it passes everything held up with it: §III leaves overflow open).
#[derive(Clone, Debug, Default)]
pub struct Reorder {
    /// The next sequence number expected, unwrapped to 64 bits.
    next: u64,
    held: BTreeMap<u64, Packet>,
    held_bytes: u64,
    /// (arrival, sequence) of held packets in arrival order; entries already passed up are
    /// dropped lazily.
    arrivals: VecDeque<(Time, u64)>,
    pub stats: ReorderStats,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReorderStats {
    /// Packets that waited in the buffer.
    pub held: u64,
    /// Flushes because a gap outlasted `t_reorder`, or because the buffer was full.
    pub timeouts: u64,
    pub overflows: u64,
    /// Packets that arrived after their place had been given up (passed up at once).
    pub late: u64,
}

impl Reorder {
    /// The 64-bit sequence number of a 24-bit `seq` near the expected one (within 2^23).
    fn unwrap(&self, seq: u32) -> u64 {
        let d = seq.wrapping_sub(self.next as u32) & SEQ_MASK;
        if d < 1 << 23 {
            self.next + d as u64
        } else {
            self.next.wrapping_sub(((1 << 24) - d) as u64)
        }
    }

    /// Packet `pk` with sequence number `seq` arrived at `now`: push what may go up to `up`.
    pub fn push(&mut self, now: Time, seq: u32, pk: Packet, limit: u64, up: &mut Vec<Packet>) {
        let s = self.unwrap(seq);
        if s < self.next {
            self.stats.late += 1;
            up.push(pk);
            return;
        }
        if s == self.next {
            up.push(pk);
            self.next += 1;
            self.release(up);
            return;
        }
        if self.held_bytes + pk.size as u64 > limit {
            self.stats.overflows += 1;
            self.held.insert(s, pk);
            self.held_bytes += pk.size as u64;
            self.flush(up);
            return;
        }
        self.stats.held += 1;
        self.held_bytes += pk.size as u64;
        self.held.insert(s, pk);
        self.arrivals.push_back((now, s));
    }

    /// Pass up the held packets that are now in order.
    fn release(&mut self, up: &mut Vec<Packet>) {
        while let Some(e) = self.held.first_entry() {
            if *e.key() != self.next {
                break;
            }
            let pk = e.remove();
            self.held_bytes -= pk.size as u64;
            self.next += 1;
            up.push(pk);
        }
    }

    /// Pass up everything held, in order, and expect what follows the last of it.
    fn flush(&mut self, up: &mut Vec<Packet>) {
        if let Some((&last, _)) = self.held.last_key_value() {
            self.next = last + 1;
        }
        up.extend(std::mem::take(&mut self.held).into_values());
        self.held_bytes = 0;
        self.arrivals.clear();
    }

    /// When the oldest held packet will have waited `t_reorder` (`Time::MAX`: nothing held).
    pub fn deadline(&mut self, t_reorder: Time) -> Time {
        while let Some(&(t, s)) = self.arrivals.front() {
            if s >= self.next && self.held.contains_key(&s) {
                return t + t_reorder;
            }
            self.arrivals.pop_front();
        }
        Time::MAX
    }

    /// The timer at `now`: if the oldest held packet has waited `t_reorder`, pass up all.
    pub fn on_timer(&mut self, now: Time, t_reorder: Time, up: &mut Vec<Packet>) {
        if self.deadline(t_reorder) <= now {
            self.stats.timeouts += 1;
            self.flush(up);
        }
    }

    pub fn held_packets(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swrr_picks_in_proportion_and_smoothly() {
        // (weights, picks, expected counts, longest run of one member allowed)
        let cases: &[(&[u64], usize, &[usize], usize)] = &[
            (&[1, 1], 10, &[5, 5], 1),
            (&[3, 6], 9, &[3, 6], 2),       // EMAN Fig. 1(a) at 1:2
            (&[10, 40], 50, &[10, 40], 4),  // 1:4
            (&[5, 1, 1], 7, &[5, 1, 1], 2), // nginx's example: a a b a c a a
            (&[0, 0, 0], 6, &[2, 2, 2], 1), // no weights: plain round robin
            (&[0, 7], 7, &[0, 7], 7),       // a zero weight is never picked
            (&[3_000_000_000, 6_000_000_000], 3, &[1, 2], 2), // bps-sized weights
        ];
        for (weights, picks, want, run) in cases {
            let mut s = Swrr::default();
            let mut counts = vec![0; weights.len()];
            let (mut longest, mut cur, mut last) = (0, 0, usize::MAX);
            for _ in 0..*picks {
                let i = s.pick(weights);
                counts[i] += 1;
                cur = if i == last { cur + 1 } else { 1 };
                last = i;
                longest = longest.max(cur);
            }
            assert_eq!(&counts, want, "{weights:?}");
            assert!(longest <= *run, "{weights:?}: a run of {longest}");
        }
        // nginx's exact order for 5:1:1.
        let mut s = Swrr::default();
        let order: Vec<usize> = (0..7).map(|_| s.pick(&[5, 1, 1])).collect();
        assert_eq!(order, [0, 0, 1, 0, 2, 0, 0]);
    }

    fn pk(size: u32, tag: u32) -> Packet {
        Packet {
            size,
            conn: tag,
            ..Default::default()
        }
    }

    /// Expecting `first` at the start, feed (time, seq) arrivals and fire timers; the order
    /// packets go up in.
    fn run(
        first: u32,
        arrivals: &[(Time, u32)],
        limit: u64,
        t_reorder: Time,
        timers: &[Time],
    ) -> Vec<u32> {
        let mut r = Reorder {
            next: first as u64,
            ..Default::default()
        };
        let mut up = Vec::new();
        let mut timers = timers.iter().peekable();
        for &(t, s) in arrivals {
            while let Some(&&tt) = timers.peek() {
                if tt > t {
                    break;
                }
                r.on_timer(tt, t_reorder, &mut up);
                timers.next();
            }
            r.push(t, s, pk(1000, s), limit, &mut up);
        }
        for &tt in timers {
            r.on_timer(tt, t_reorder, &mut up);
        }
        up.iter().map(|p| p.conn).collect()
    }

    #[test]
    fn reorder_buffer_orders_waits_and_gives_up() {
        let big = 1 << 30;
        let m = SEQ_MASK;
        // (first expected, arrivals (time, seq), limit, T_reorder, timers, order up)
        #[allow(clippy::type_complexity)]
        let cases: Vec<(u32, Vec<(Time, u32)>, u64, Time, Vec<Time>, Vec<u32>)> = vec![
            // In order: straight through.
            (
                0,
                vec![(1, 0), (2, 1), (3, 2)],
                big,
                100,
                vec![],
                vec![0, 1, 2],
            ),
            // A swap is repaired.
            (
                0,
                vec![(1, 0), (2, 2), (3, 1), (4, 3)],
                big,
                100,
                vec![],
                vec![0, 1, 2, 3],
            ),
            // A gap that never fills: nothing goes up before T_reorder after the oldest held
            // packet (2 + 100)...
            (
                0,
                vec![(1, 0), (2, 2), (3, 3)],
                big,
                100,
                vec![50, 101],
                vec![0],
            ),
            // ...then everything held does, and the late packet goes up at once.
            (
                0,
                vec![(1, 0), (2, 2), (3, 3), (200, 1), (201, 4)],
                big,
                100,
                vec![102],
                vec![0, 2, 3, 1, 4],
            ),
            // Overflow: the third packet held would exceed 2500 bytes: all go up in order.
            (
                0,
                vec![(1, 0), (2, 3), (3, 2), (4, 4), (5, 1), (6, 5)],
                2500,
                100,
                vec![],
                vec![0, 2, 3, 4, 1, 5],
            ),
            // The 24-bit number wraps.
            (
                m - 1,
                vec![(1, m - 1), (2, 0), (3, m), (4, 1)],
                big,
                100,
                vec![],
                vec![m - 1, m, 0, 1],
            ),
        ];
        for (first, arr, limit, t, timers, want) in cases {
            let got = run(first, &arr, limit, t, &timers);
            assert_eq!(got, want, "{arr:?} timers {timers:?}");
        }
    }

    #[test]
    fn deadline_follows_the_oldest_packet_still_held() {
        let mut r = Reorder::default();
        let mut up = Vec::new();
        assert_eq!(r.deadline(100), Time::MAX);
        r.push(10, 2, pk(100, 2), 1 << 20, &mut up); // waits for 0, 1
        r.push(20, 4, pk(100, 4), 1 << 20, &mut up); // waits for 3
        assert_eq!(r.deadline(100), 110);
        r.push(30, 0, pk(100, 0), 1 << 20, &mut up);
        r.push(40, 1, pk(100, 1), 1 << 20, &mut up); // 0, 1, 2 go up; 4 still waits
        assert_eq!(r.deadline(100), 120);
        assert_eq!(r.held_packets(), 1);
        r.on_timer(119, 100, &mut up);
        assert_eq!(r.held_packets(), 1, "not yet due");
        r.on_timer(120, 100, &mut up);
        assert_eq!(r.held_packets(), 0);
        assert_eq!(r.deadline(100), Time::MAX);
        assert_eq!(r.stats.timeouts, 1);
        assert_eq!(up.iter().map(|p| p.conn).collect::<Vec<_>>(), [0, 1, 2, 4]);
    }
}
