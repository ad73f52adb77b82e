//! Monotone radix heap keyed by (time, seq).
//!
//! Buckets by the highest bit in which an entry's time differs from the last popped time
//! (Ahuja et al.). Bucket 0 holds entries whose time equals the last popped time; it is kept
//! sorted by `seq` (a deque: refills are sorted once, later same-time pushes carry larger seqs
//! and go to the back), which gives the FIFO tie order of the engine contract.

use std::collections::VecDeque;

pub struct RadixQueue<E: Copy> {
    last: u64,
    len: usize,
    /// Entries with time == last, ascending seq.
    b0: VecDeque<(u64, u64, E)>,
    /// buckets[i] (i >= 1): entries whose time differs from `last` first at bit i-1.
    buckets: Vec<Vec<(u64, u64, E)>>,
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
            buckets: (0..65).map(|_| Vec::new()).collect(),
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn push(&mut self, t: u64, seq: u64, e: E) {
        debug_assert!(t >= self.last);
        self.len += 1;
        let b = bucket(t, self.last);
        if b == 0 {
            self.b0.push_back((t, seq, e));
        } else {
            self.buckets[b].push((t, seq, e));
        }
    }
    /// Refill bucket 0 from the lowest non-empty bucket. Requires len > 0 and b0 empty.
    fn refill(&mut self) {
        let mut i = 1;
        while self.buckets[i].is_empty() {
            i += 1;
        }
        let mut v = std::mem::take(&mut self.buckets[i]);
        let m = v.iter().map(|x| x.0).min().unwrap();
        self.last = m;
        for &x in &v {
            let b = bucket(x.0, m);
            if b == 0 {
                self.b0.push_back(x);
            } else {
                self.buckets[b].push(x);
            }
        }
        if self.b0.len() > 1 {
            self.b0.make_contiguous().sort_unstable_by_key(|x| x.1);
        }
        v.clear();
        if self.buckets[i].capacity() < v.capacity() {
            self.buckets[i] = v;
        }
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, u64, E)> {
        if self.len == 0 {
            return None;
        }
        if self.b0.is_empty() {
            self.refill();
        }
        self.len -= 1;
        self.b0.pop_front()
    }
    /// The next entry if it is already in bucket 0 (no reorganisation), for prefetching.
    #[inline]
    pub fn peek_ready(&self) -> Option<&E> {
        self.b0.front().map(|x| &x.2)
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
