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
//! This layer knows nothing about packets, links or TCP: an event is an opaque `Copy` payload.

mod radix;
pub use radix::RadixQueue;

pub use crate::units::Time;

/// The pending-event set with the ordering contract above.
pub struct EventQueue<E: Copy> {
    heap: RadixQueue<E>,
    now: Time,
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: RadixQueue::new(),
            now: 0,
        }
    }
    /// Time of the event being run (or last run).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }
    /// Schedule `ev` at `t`. Returns false (and schedules nothing) if `t` is in the past.
    #[inline]
    pub fn push(&mut self, t: Time, ev: E) -> bool {
        if t < self.now {
            debug_assert!(false, "event scheduled in the past: {t} < {}", self.now);
            return false;
        }
        self.heap.push(t, ev);
        true
    }
    /// Remove and return the earliest event, advancing `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let (t, e) = self.heap.pop()?;
        debug_assert!(t >= self.now);
        self.now = t;
        Some((t, e))
    }
    /// The next event as things stand (an event pushed before the next pop may come first): a
    /// hint for prefetching its data, never needed for correctness.
    #[inline]
    pub fn peek_ready(&self) -> Option<&E> {
        self.heap.peek_ready()
    }
    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.heap.peek_time()
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.len() == 0
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn same_time_events_run_in_insertion_order() {
        let mut q = EventQueue::new();
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
        // Against a (time, seq) sort: the contract, not the structure, defines the order.
        let mut rng = Rng::new(3, 3);
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut seq = 0u64;
        for _ in 0..2000 {
            let t = rng.below(50);
            seq += 1;
            q.push(t, seq);
            reference.insert((t, seq));
        }
        let mut popped = 0;
        loop {
            let peeked = q.peek_ready().copied();
            let Some((t, e)) = q.pop() else { break };
            let first = *reference.iter().next().unwrap();
            assert_eq!((t, e), first);
            // The peek names exactly the event that pops next.
            assert_eq!(peeked, Some(e));
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
