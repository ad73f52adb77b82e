//! Monotone radix heap keyed by time, FIFO among equal times.
//!
//! Buckets by the highest bit in which an entry's time differs from the last popped time
//! (Ahuja et al.). Bucket 0 holds entries whose time equals the last popped time.
//!
//! FIFO ties need no sequence number: every bucket is kept in insertion order. A push appends
//! (it is the newest entry), and a refill redistributes the lowest non-empty bucket, in order,
//! into buckets that are all empty (they are below it), so the order survives. Entries are
//! therefore just (time, payload): 16 bytes for the simulator's packed events.
//!
//! Each bucket also keeps a copy of its earliest entry (the first one at its minimum time), so
//! the next event is known without reorganising the heap ([`RadixQueue::peek_ready`]), and a
//! refill does not scan for the minimum.

use std::collections::VecDeque;

const NB: usize = 65;

pub struct RadixQueue<E: Copy> {
    last: u64,
    len: usize,
    /// Entries with time == last, in insertion order.
    b0: VecDeque<(u64, E)>,
    /// buckets[i] (i >= 1): entries whose time differs from `last` first at bit i-1.
    buckets: Vec<Vec<(u64, E)>>,
    /// Per bucket: its minimum time and the first entry at that time (a copy: peeking reads
    /// this small array, not a random place in a large bucket).
    min: [(u64, Option<E>); NB],
    /// Bit i set when buckets[i] is non-empty (i >= 1).
    nonempty: u128,
}

#[inline]
fn bucket(t: u64, last: u64) -> usize {
    (64 - (t ^ last).leading_zeros()) as usize
}

impl<E: Copy> RadixQueue<E> {
    pub fn new() -> Self {
        RadixQueue {
            last: 0,
            len: 0,
            b0: VecDeque::new(),
            buckets: (0..NB).map(|_| Vec::new()).collect(),
            min: [(u64::MAX, None); NB],
            nonempty: 0,
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    fn put(&mut self, t: u64, e: E) {
        let b = bucket(t, self.last);
        if b == 0 {
            self.b0.push_back((t, e));
        } else {
            let v = &mut self.buckets[b];
            // Strictly earlier only: the first entry at the minimum time stays the FIFO head.
            if t < self.min[b].0 {
                self.min[b] = (t, Some(e));
            }
            v.push((t, e));
            self.nonempty |= 1 << b;
        }
    }
    #[inline]
    pub fn push(&mut self, t: u64, e: E) {
        debug_assert!(t >= self.last);
        self.len += 1;
        self.put(t, e);
    }
    /// The lowest non-empty bucket above 0. Requires one.
    #[inline]
    fn lowest(&self) -> usize {
        self.nonempty.trailing_zeros() as usize
    }
    /// Refill bucket 0 from the lowest non-empty bucket. Requires len > 0 and b0 empty.
    fn refill(&mut self) {
        let i = self.lowest();
        let mut v = std::mem::take(&mut self.buckets[i]);
        self.last = self.min[i].0;
        self.min[i] = (u64::MAX, None);
        self.nonempty &= !(1 << i);
        for &(t, e) in &v {
            self.put(t, e);
        }
        v.clear();
        if self.buckets[i].capacity() < v.capacity() {
            self.buckets[i] = v;
        }
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        if self.len == 0 {
            return None;
        }
        if self.b0.is_empty() {
            self.refill();
        }
        self.len -= 1;
        self.b0.pop_front()
    }
    /// The next entry (as things stand: an earlier push would come first), found without
    /// reorganising the heap; a hint for prefetching its data.
    #[inline]
    pub fn peek_ready(&self) -> Option<&E> {
        if let Some(x) = self.b0.front() {
            return Some(&x.1);
        }
        if self.nonempty == 0 {
            return None;
        }
        self.min[self.lowest()].1.as_ref()
    }
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        if self.b0.is_empty() {
            self.refill();
        }
        self.b0.front().map(|x| x.0)
    }
}

impl<E: Copy> Default for RadixQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}
