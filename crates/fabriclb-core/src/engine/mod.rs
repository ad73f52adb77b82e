//! The discrete-event engine: simulated time and the pending-event set.
//!
//! # Ordering contract
//! - Time is an integer number of picoseconds ([`Time`]).
//! - Events run in non-decreasing time order. Events scheduled for the *same* picosecond run
//!   in the order they were scheduled (insertion order, FIFO), whatever the component that
//!   scheduled them. The radix heap keeps every bucket in insertion order (see `radix`), and
//!   the unit tests below check the order against a (time, sequence number) sort.
//! - Scheduling an event in the past (before the time of the event being run) is an invariant
//!   violation; [`EventQueue::push`] refuses it in debug builds and the simulation checks it on
//!   every run when invariant checks are on.
//! - There is no global state: each simulation owns its queue; two simulations in one process
//!   never see each other.
//! - The next event (with the look-ahead window on, the next [`LOOKAHEAD`] that are due
//!   within `LOOKAHEAD_PS`) is visible ([`EventQueue::peek_ready`]) as things stand: an event
//!   scheduled before it runs may come first. Peeking is for prefetching only; the order is the
//!   same with the window or without (the unit tests run both).
//!
//! # Why a radix heap, and one event per packet-hop
//! The pending set is a monotone radix heap keyed by time. Measured on the 2-core dev
//! machine (`../shared/probe`): `std::BinaryHeap` does about 8 M hold operations/s at 100 k
//! pending events, a radix heap 27–60 M/s. A radix heap fits because the simulator never
//! schedules into the past, which is exactly the monotone-priority condition it needs.
//! Packets cost one event per hop, not two: a FIFO output port knows, when a packet is
//! enqueued, when it will finish serialising (`max(now, port_free) + size/rate`), so its arrival
//! at the far end is scheduled at once (see `net::port`). The pending set therefore holds one
//! entry per packet in flight plus timers.
//!
//! # Why a look-ahead window
//! At scale the loop waits on memory: the next events' packets, ports and connections are
//! scattered over tens of megabytes, and one event (~150-250 ns) is not long enough for a
//! prefetch issued one event ahead to land. So the queue can keep the next [`LOOKAHEAD`]
//! events pulled out of the heap, in order, and the simulator then prefetches in stages: a
//! packet several events before it is needed, then the port and connection that packet names.
//! The window costs instructions on every event, so the simulator turns it on only for worlds
//! whose state does not fit in the cache (LS2048: 17% faster; LS128 would be 10% slower:
//! docs/BENCHMARKS.md).
//!
//! This layer knows nothing about packets, links or TCP: an event is an opaque 32-bit payload
//! ([`Payload`]; the simulator packs its events into it).

mod radix;
mod window;
pub use radix::{Payload, RadixQueue};
use window::Window;

pub use crate::units::Time;

/// A cache prefetch hint for the data of events to come (no effect on results; a no-op off
/// x86-64).
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never faults, even for an invalid address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// How many events past the one running are kept out of the heap, visible to `peek_ready`,
/// when the window is on ([`EventQueue::set_lookahead`]). The simulator loads a packet this
/// many events before it runs. Four measured faster than three at LS2048 and FT2048 once the
/// whole heap of a large world was on 2 MiB pages, and five no faster than four
/// (docs/BENCHMARKS.md, the nineteenth session).
pub const LOOKAHEAD: usize = 4;
/// ... when they are due within this long of the last one popped (100 ns): far enough for the
/// window to fill wherever events are dense enough to be memory-bound, near enough that
/// events scheduled while it is out rarely land in it (a hop is at least a serialisation
/// plus a propagation delay away).
pub const LOOKAHEAD_PS: Time = 100_000;

/// The pending-event set with the ordering contract above.
pub struct EventQueue<E: Payload> {
    heap: RadixQueue<E>,
    /// The next events, in order, already taken from the heap: every entry here comes before
    /// every entry in the heap (by time, then insertion). Refilled on each pop (up to
    /// `LOOKAHEAD` entries, due within `LOOKAHEAD_PS` of the popped one); a push earlier than
    /// the last time the heap gave out is inserted here (a monotone heap cannot take it).
    ahead: Window<E>,
    /// The window's size: 0 (off: the heap alone) or `LOOKAHEAD`.
    depth: usize,
    now: Time,
}

impl<E: Payload + Default> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: RadixQueue::new(),
            ahead: Window::new(),
            depth: 0,
            now: 0,
        }
    }
    /// Turn the look-ahead window on or off. It costs instructions on every event (about a
    /// tenth of a small run's), which pay back only when the next events' data is not in
    /// cache. Only while no event is out of the heap (before the first pop); the order of
    /// events is the same either way.
    pub fn set_lookahead(&mut self, on: bool) {
        assert!(
            self.ahead.len() == 0,
            "set_lookahead after events were taken out"
        );
        self.depth = if on { LOOKAHEAD } else { 0 };
    }
    /// Whether the look-ahead window is on.
    #[inline]
    pub fn lookahead(&self) -> bool {
        self.depth != 0
    }
    /// Time of the event being run (or last run).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }
    /// Schedule `ev` at `t`. Returns false (and schedules nothing) if `t` is in the past.
    #[inline(always)]
    pub fn push(&mut self, t: Time, ev: E) -> bool {
        if t < self.now {
            debug_assert!(false, "event scheduled in the past: {t} < {}", self.now);
            return false;
        }
        if t < self.heap.last() {
            // Among the events already taken out: after the last one at or before `t`, so
            // same-time events stay in insertion order (the heap holds none before `t`).
            self.ahead.insert_sorted((t, ev));
        } else {
            // After everything taken out (all at or before the heap's last time).
            self.heap.push(t, ev);
        }
        true
    }
    /// Remove and return the earliest event, advancing `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.depth == 0 {
            let (t, e) = self.heap.pop()?;
            debug_assert!(t >= self.now);
            self.now = t;
            return Some((t, e));
        }
        let (t, e) = match self.ahead.pop_front() {
            Some(x) => x,
            None => self.heap.pop()?,
        };
        // Refill the window with what is due soon after.
        let horizon = t.saturating_add(LOOKAHEAD_PS);
        while self.ahead.len() < self.depth {
            let Some(x) = self.heap.pop_until(horizon) else {
                break;
            };
            self.ahead.push_back(x);
        }
        debug_assert!(t >= self.now);
        self.now = t;
        Some((t, e))
    }
    /// The `n`-th next event (0: the one the next pop returns) as things stand: the events
    /// out of the heap (with the window: up to [`LOOKAHEAD`] due within `LOOKAHEAD_PS` of the
    /// last popped, more when pushes landed among them), then the heap's next. An event pushed
    /// before then may come first. A hint for prefetching its data, never needed for
    /// correctness.
    #[inline]
    pub fn peek_ready(&self, n: usize) -> Option<&E> {
        if self.depth == 0 {
            // The window is empty: the heap's next only.
            return if n == 0 { self.heap.peek_ready() } else { None };
        }
        match self.ahead.get(n) {
            Some(x) => Some(&x.1),
            None if n == self.ahead.len() => self.heap.peek_ready(),
            None => None,
        }
    }
    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        match self.ahead.get(0) {
            Some(&(t, _)) => Some(t),
            None => self.heap.peek_time(),
        }
    }
    pub fn len(&self) -> usize {
        self.heap.len() + self.ahead.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<E: Payload + Default> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    impl Payload for char {
        fn bits(self) -> u32 {
            self as u32
        }
        fn from_bits(bits: u32) -> Self {
            char::from_u32(bits).unwrap()
        }
    }

    impl Payload for u8 {
        fn bits(self) -> u32 {
            self as u32
        }
        fn from_bits(bits: u32) -> Self {
            bits as u8
        }
    }

    #[test]
    fn same_time_events_run_in_insertion_order() {
        for on in [false, true] {
            same_time_order(on);
        }
    }

    fn same_time_order(on: bool) {
        let mut q = EventQueue::new();
        q.set_lookahead(on);
        // Interleave times so that same-time events pass through bucket redistribution.
        let times = [50u64, 10, 50, 10, 1000, 50, 10, 1000, 7];
        for (i, &t) in times.iter().enumerate() {
            q.push(t, i as u32);
        }
        let mut out = vec![];
        while let Some((t, e)) = q.pop() {
            out.push((t, e));
            if e == 1 {
                // scheduled while running, same time as now: runs after the earlier ones at 10
                q.push(10, 100);
                q.push(50, 101);
            }
        }
        assert_eq!(
            out,
            vec![
                (7, 8),
                (10, 1),
                (10, 3),
                (10, 6),
                (10, 100),
                (50, 0),
                (50, 2),
                (50, 5),
                (50, 101),
                (1000, 4),
                (1000, 7)
            ]
        );
    }

    #[test]
    fn matches_a_sorted_reference_on_random_hold_model() {
        // Against a (time, seq) sort: the contract, not the structure, defines the order; with
        // the look-ahead window and without.
        for on in [false, true] {
            let mut rng = Rng::new(3, 3);
            let mut q = EventQueue::new();
            q.set_lookahead(on);
            let mut reference = std::collections::BTreeSet::new();
            let mut seq = 0u32;
            for _ in 0..2000 {
                let t = rng.below(50);
                seq += 1;
                q.push(t, seq);
                reference.insert((t, seq));
            }
            let mut popped = 0;
            loop {
                let peeked = q.peek_ready(0).copied();
                let Some((t, e)) = q.pop() else { break };
                let first = *reference.iter().next().unwrap();
                assert_eq!((t, e), first);
                // The peek names exactly the event that pops next (with the window, none
                // before the first pop).
                assert!((on && peeked.is_none()) || peeked == Some(e));
                // What can be peeked is a prefix of the next events of the reference, cut
                // short (with the window) only by the end or by the time horizon.
                let window: Vec<u32> = (0..LOOKAHEAD)
                    .filter_map(|n| q.peek_ready(n).copied())
                    .collect();
                let next: Vec<(u64, u32)> =
                    reference.iter().skip(1).take(LOOKAHEAD).copied().collect();
                let k = window.len();
                assert_eq!(window, next[..k].iter().map(|x| x.1).collect::<Vec<_>>());
                assert!(!on || k == next.len() || next[k].0 > t + LOOKAHEAD_PS);
                assert!(on || k == next.len().min(1));
                reference.remove(&first);
                popped += 1;
                if popped < 20_000 {
                    // hold: one new event at now + increment (sometimes 0)
                    let inc = [0u64, 0, 1, 3, 1_000, 1 << 40][rng.below(6) as usize];
                    seq += 1;
                    q.push(t + inc, seq);
                    reference.insert((t + inc, seq));
                }
            }
            assert!(reference.is_empty());
        }
    }

    #[test]
    fn pushes_inside_the_window_keep_the_order() {
        // Fill the window with events at 10, 20, 30, then push at 15, 20 (after the 20 already
        // taken out), 5 (refused: in the past once 10 has run) and 40 (to the heap).
        let mut q = EventQueue::new();
        q.set_lookahead(true);
        for (t, e) in [(10u64, 'a'), (20, 'b'), (30, 'c'), (30, 'd'), (50, 'e')] {
            q.push(t, e);
        }
        assert_eq!(q.pop(), Some((10, 'a')));
        assert_eq!(q.peek_ready(0), Some(&'b'));
        q.push(15, 'f');
        q.push(20, 'g');
        assert!(std::panic::catch_unwind(move || {
            let mut q2: EventQueue<char> = EventQueue::new();
            q2.push(10, 'x');
            q2.pop();
            q2.push(5, 'y')
        })
        .map_or(true, |ok| !ok));
        q.push(40, 'h');
        assert_eq!(q.len(), 7);
        let order: Vec<(u64, char)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (15, 'f'),
                (20, 'b'),
                (20, 'g'),
                (30, 'c'),
                (30, 'd'),
                (40, 'h'),
                (50, 'e')
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn peeking_at_the_time_moves_nothing() {
        // A push after a peek at the next time, earlier than it, still runs first.
        for on in [false, true] {
            let mut q = EventQueue::new();
            q.set_lookahead(on);
            q.push(10u64, 'a');
            q.push(1_000_000, 'b');
            assert_eq!(q.pop(), Some((10, 'a')));
            assert_eq!(q.peek_time(), Some(1_000_000));
            q.push(20, 'c');
            assert_eq!(q.peek_time(), Some(20));
            let order: Vec<(u64, char)> = std::iter::from_fn(|| q.pop()).collect();
            assert_eq!(order, vec![(20, 'c'), (1_000_000, 'b')], "window {on}");
        }
    }

    #[test]
    fn refuses_the_past() {
        let mut q: EventQueue<u8> = EventQueue::new();
        q.push(10, 1);
        q.pop();
        let r = std::panic::catch_unwind(move || q.push(5, 2));
        // debug builds assert; release builds refuse with `false`
        assert!(r.is_err() || !r.unwrap());
    }

    #[test]
    fn independent_queues() {
        let mut a = EventQueue::new();
        let mut b = EventQueue::new();
        a.push(5, 'a');
        b.push(3, 'b');
        assert_eq!(a.pop(), Some((5, 'a')));
        assert_eq!(b.pop(), Some((3, 'b')));
        assert_eq!(a.now(), 5);
        assert_eq!(b.now(), 3);
    }
}
