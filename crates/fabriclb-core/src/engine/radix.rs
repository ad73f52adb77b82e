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

const NB: usize = 65;

pub struct RadixQueue<E: Copy> {
    last: u64,
    len: usize,
    /// Entries with time == last, in insertion order, from `b0_head` on (a vector read from
    /// the front and cleared when used up: cheaper than a ring for a queue that empties
    /// between refills).
    b0: Vec<(u64, E)>,
    b0_head: usize,
    /// buckets[i] (i >= 1): entries whose time differs from `last` first at bit i-1. An array,
    /// so that indexing by a bucket number (0..=64) needs no bounds check.
    buckets: [Vec<(u64, E)>; NB],
    /// Per bucket: its minimum time and the first entry at that time (a copy: peeking reads
    /// this small array, not a random place in a large bucket).
    min: [(u64, Option<E>); NB],
    /// Bit i-1 set when buckets[i] is non-empty (i in 1..=64).
    nonempty: u64,
}

impl<E: Copy> RadixQueue<E> {
    pub fn new() -> Self {
        RadixQueue {
            last: 0,
            len: 0,
            b0: Vec::new(),
            b0_head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
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
        let x = t ^ self.last;
        if x == 0 {
            self.b0.push((t, e));
        } else {
            // The highest differing bit, plus one (`ilog2` of a non-zero value: one `bsr`).
            let b = x.ilog2() as usize + 1;
            // Strictly earlier only: the first entry at the minimum time stays the FIFO head.
            if t < self.min[b].0 {
                self.min[b] = (t, Some(e));
            }
            self.buckets[b].push((t, e));
            self.nonempty |= 1 << (b - 1);
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
        self.nonempty.trailing_zeros() as usize + 1
    }
    /// Empty bucket `i` (its entries taken) and make its minimum the last popped time. The
    /// buckets above `i` stay valid: their entries differ from the new `last` first at the same
    /// bit as from the old one, since the new `last` agrees with the old above bit i-1.
    #[inline]
    fn take_lowest(&mut self, i: usize) {
        self.last = self.min[i].0;
        self.min[i] = (u64::MAX, None);
        self.nonempty &= !(1 << (i - 1));
    }
    /// Refill bucket 0 from the lowest non-empty bucket. Requires len > 0 and b0 empty.
    fn refill(&mut self) {
        let i = self.lowest();
        let mut v = std::mem::take(&mut self.buckets[i]);
        self.take_lowest(i);
        // `put`, with no call in the loop that moves: a full bucket ends the loop, is grown
        // outside it, and the loop resumes. (With a call to grow in it, the last time, the
        // bitmap and the entry being moved went through memory on every move: LS2048 at 1 ms
        // took 1.5% more instructions.)
        let last = self.last;
        let mut nonempty = self.nonempty;
        let (b0, buckets, min) = (&mut self.b0, &mut self.buckets, &mut self.min);
        let mut k = 0;
        while k < v.len() {
            for &(t, e) in &v[k..] {
                let x = t ^ last;
                let bk = if x == 0 {
                    &mut *b0
                } else {
                    let b = x.ilog2() as usize + 1;
                    if t < min[b].0 {
                        min[b] = (t, Some(e));
                    }
                    nonempty |= 1 << (b - 1);
                    &mut buckets[b]
                };
                let len = bk.len();
                if len == bk.capacity() {
                    break;
                }
                // SAFETY: `len` is below the capacity.
                unsafe {
                    bk.as_mut_ptr().add(len).write((t, e));
                    bk.set_len(len + 1);
                }
                k += 1;
            }
            // Entry k's bucket is full. (Its minimum and bit are set already: setting them
            // again when the loop resumes changes nothing.)
            if let Some(&(t, _)) = v.get(k) {
                let x = t ^ last;
                let bk = if x == 0 {
                    &mut *b0
                } else {
                    &mut buckets[x.ilog2() as usize + 1]
                };
                bk.reserve(1);
            }
        }
        self.nonempty = nonempty;
        v.clear();
        // Every entry went below bucket i, so it is still the empty vector left by `take`.
        self.buckets[i] = v;
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.pop_until(u64::MAX)
    }
    /// Pop the next entry if its time is at most `horizon` (which must not be below the last
    /// time popped: entries at that time are popped whatever the horizon).
    #[inline(always)]
    pub fn pop_until(&mut self, horizon: u64) -> Option<(u64, E)> {
        debug_assert!(horizon >= self.last);
        if self.b0_head == self.b0.len() {
            if self.len == 0 {
                return None;
            }
            let i = self.lowest();
            if self.min[i].0 > horizon {
                return None;
            }
            if self.buckets[i].len() == 1 {
                // The one entry of the lowest bucket is the next: no redistribution (the
                // common case when events are spread out in time).
                let x = self.buckets[i][0];
                self.buckets[i].clear();
                self.take_lowest(i);
                self.len -= 1;
                return Some(x);
            }
            self.refill();
        }
        let x = self.b0[self.b0_head];
        self.b0_head += 1;
        if self.b0_head == self.b0.len() {
            self.b0.clear();
            self.b0_head = 0;
        }
        self.len -= 1;
        Some(x)
    }
    /// The next entry (as things stand: an earlier push would come first), found without
    /// reorganising the heap; a hint for prefetching its data.
    #[inline]
    pub fn peek_ready(&self) -> Option<&E> {
        if let Some(x) = self.b0.get(self.b0_head) {
            return Some(&x.1);
        }
        if self.nonempty == 0 {
            return None;
        }
        self.min[self.lowest()].1.as_ref()
    }
    /// The time the last pop returned (or 0): no push may be earlier.
    #[inline]
    pub fn last(&self) -> u64 {
        self.last
    }
    /// Time of the next entry, without reorganising the heap (a refill would move `last` on,
    /// and a push before it would then be refused).
    pub fn peek_time(&self) -> Option<u64> {
        if self.b0_head < self.b0.len() {
            Some(self.last)
        } else if self.nonempty != 0 {
            Some(self.min[self.lowest()].0)
        } else {
            None
        }
    }
}

impl<E: Copy> Default for RadixQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}
