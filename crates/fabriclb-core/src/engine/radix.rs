//! Monotone radix heap keyed by time, FIFO among equal times.
//!
//! Buckets by the highest bit in which an entry's time differs from the last popped time
//! (Ahuja et al.). In front of them, the *run*: the entries next in line, sorted, popped from
//! the front. Taking the lowest bucket either spreads it over the (empty) buckets below, the
//! entries at its minimum time going to the run, or, when it holds at most `SORT_MAX` entries,
//! sorts it into the run whole: the run then covers the bucket's block of times, and a push
//! into that block is inserted in order (a run that such pushes have grown past `RUN_MAX` is
//! spread first, so no insertion shifts more). A small bucket spread bit by bit costs each
//! entry a move per level or two it descends; sorting it costs one. (FT2048: a packet's
//! arrival, scheduled a serialisation or a queue ahead, 2^20-2^24 ps, in a world with an event
//! every 2^10 ps, moved 5.5 times, at about 34 instructions a move; sorting small buckets took
//! 5% off FT2048's instructions: docs/BENCHMARKS.md.)
//!
//! FIFO ties need no sequence number: every bucket is kept in insertion order. A push appends
//! (it is the newest entry); a bucket is spread, in order, into buckets that are all empty
//! (they are below it), or sorted stably into the empty run; a push into the run goes after
//! every entry at or before its time. So the order survives. Entries are therefore just
//! (time, payload), and in the buckets that hold nearly every entry, 8 bytes: an entry of
//! bucket i agrees with `last` from bit i on, so in buckets 1..=32 (times less than 2^32 ps,
//! 4.3 ms, past `last`) the low 32 bits of its time and a 32-bit payload ([`Payload`]) say it
//! all. The moves, most of the heap's work, then carry half the bytes, and the heap's share
//! of the cache halves (at LS2048, 1-3% faster than with 16-byte entries everywhere; 24-byte
//! entries ran 11% slower: docs/BENCHMARKS.md, the twentieth session). The run and buckets
//! 33..=64 keep (time, payload) whole.
//!
//! Each bucket also keeps a copy of its earliest entry (the first one at its minimum time), so
//! the next event is known without reorganising the heap ([`RadixQueue::peek_ready`]), and a
//! refill does not scan for the minimum.

const NB: usize = 65;
/// Buckets 1..=NARROW keep 8-byte entries: (time's low 32 bits) << 32 | payload bits.
const NARROW: usize = 32;
const LOW: u64 = (1 << 32) - 1;

/// An event's payload as the heap keeps it in its narrow buckets: 32 bits.
pub trait Payload: Copy {
    fn bits(self) -> u32;
    fn from_bits(bits: u32) -> Self;
}

impl Payload for u32 {
    #[inline(always)]
    fn bits(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits
    }
}

/// A narrow bucket's entry.
#[inline(always)]
fn pack<E: Payload>(t: u64, e: E) -> u64 {
    t << 32 | e.bits() as u64
}
/// A narrow bucket's entry `n` whole again, `high` the high half of its time (`last`'s).
#[inline(always)]
fn unpack<E: Payload>(high: u64, n: u64) -> (u64, E) {
    (high | n >> 32, E::from_bits(n as u32))
}
/// A bucket of at most this many entries is sorted into the run when taken, not spread.
const SORT_MAX: usize = 16;
/// A push inside a run longer than this spreads the run over the buckets first (see
/// `RadixQueue::insert_run_inside`).
const RUN_MAX: usize = 64;

pub struct RadixQueue<E: Payload> {
    last: u64,
    len: usize,
    /// The run: every entry whose time agrees with `last` above bit `run_shift`, sorted by
    /// time, FIFO among equal times, from `run_head` on (a vector read from the front and
    /// cleared when used up). No bucket holds such an entry.
    run: Vec<(u64, E)>,
    run_head: usize,
    run_shift: u32,
    /// Bucket i (i >= 1): entries whose time differs from `last` first at bit i-1; for i up to
    /// `NARROW` in `narrow[i]` (packed), above in `wide[i]`. Arrays, so that indexing by a
    /// bucket number needs no bounds check (the unused ends stay empty).
    narrow: [Vec<u64>; NARROW + 1],
    wide: [Vec<(u64, E)>; NB],
    /// Per bucket: its minimum time and the first entry at that time (a copy: peeking reads
    /// this small array, not a random place in a large bucket).
    min: [(u64, Option<E>); NB],
    /// Bit i-1 set when buckets[i] is non-empty (i in 1..=64).
    nonempty: u64,
    /// A spread's minimum of each narrow bucket it fills (see `refill`): `u64::MAX` between
    /// spreads, but for the unused index 0 (kept here, not on the stack, so that a spread
    /// initialises nothing).
    spread_min: [u64; NARROW + 1],
    spread_payload: [u32; NARROW + 1],
}

impl<E: Payload> RadixQueue<E> {
    pub fn new() -> Self {
        RadixQueue {
            last: 0,
            len: 0,
            run: Vec::new(),
            run_head: 0,
            run_shift: 0,
            narrow: std::array::from_fn(|_| Vec::new()),
            wide: std::array::from_fn(|_| Vec::new()),
            min: [(u64::MAX, None); NB],
            nonempty: 0,
            spread_min: [u64::MAX; NARROW + 1],
            spread_payload: [0; NARROW + 1],
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    fn put(&mut self, t: u64, e: E) {
        let x = t ^ self.last;
        if x >> self.run_shift == 0 {
            self.insert_run(t, e);
        } else {
            // The highest differing bit, plus one (`ilog2` of a non-zero value: one `bsr`).
            let b = x.ilog2() as usize + 1;
            // Strictly earlier only: the first entry at the minimum time stays the FIFO head.
            if t < self.min[b].0 {
                self.min[b] = (t, Some(e));
            }
            if b <= NARROW {
                self.narrow[b].push(pack(t, e));
            } else {
                self.wide[b].push((t, e));
            }
            self.nonempty |= 1 << (b - 1);
        }
    }
    #[inline(always)]
    pub fn push(&mut self, t: u64, e: E) {
        debug_assert!(t >= self.last);
        self.len += 1;
        self.put(t, e);
    }
    /// Insert into the run after every entry at or before `t` (at the end, unless the run
    /// holds a small bucket's block and `t` falls inside it).
    #[inline(always)]
    fn insert_run(&mut self, t: u64, e: E) {
        match self.run.last() {
            Some(&(u, _)) if u > t => self.insert_run_inside(t, e),
            _ => self.run.push((t, e)),
        }
    }
    /// A push before the run's last entry. The run's block can be long (a small bucket taken
    /// high up, after a quiet spell) and then fill with pushes: past `RUN_MAX` entries it is
    /// spread over the buckets below its block (all empty, so their order is the run's), so
    /// an insertion never shifts more than that.
    #[inline(never)]
    fn insert_run_inside(&mut self, t: u64, e: E) {
        if self.run.len() - self.run_head > RUN_MAX {
            self.spread_run();
            return self.put(t, e);
        }
        let mut i = self.run.len() - 1;
        while i > self.run_head && self.run[i - 1].0 > t {
            i -= 1;
        }
        self.run.insert(i, (t, e));
    }
    /// Spread what is left of the run over the buckets, the run keeping only the entries at
    /// the last popped time.
    #[cold]
    fn spread_run(&mut self) {
        let rest = self.run.split_off(self.run_head);
        self.run.clear();
        self.run_head = 0;
        self.run_shift = 0;
        for (t, e) in rest {
            self.put(t, e);
        }
    }
    /// The lowest non-empty bucket. Requires one.
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
    /// The number of entries in bucket `i`.
    #[inline(always)]
    fn bucket_len(&self, i: usize) -> usize {
        if i <= NARROW {
            self.narrow[i].len()
        } else {
            self.wide[i].len()
        }
    }
    /// Take the lowest non-empty bucket, `i`, which holds two entries or more, into the run:
    /// sorted, when it holds at most `SORT_MAX`; else spread over the buckets below, the run
    /// taking the entries at its minimum time. Requires the run empty.
    fn refill(&mut self, i: usize) {
        if i > NARROW {
            return self.refill_wide(i);
        }
        let mut v = std::mem::take(&mut self.narrow[i]);
        self.take_lowest(i);
        // The run is already empty and read from its start (`pop_until` clears it when read to
        // the end); saying so lets the compiler drop its length checks below (without these two
        // lines FT2048 at 5 ms took 18 M more instructions).
        debug_assert!(self.run.is_empty() && self.run_head == 0);
        self.run.clear();
        self.run_head = 0;
        // Every entry here, and below, agrees with `last` from bit 32 on.
        let high = self.last & !LOW;
        if v.len() <= SORT_MAX {
            // The bucket's entries agree with `last` from bit i-1 up; no bucket below holds
            // anything.
            self.run_shift = i as u32 - 1;
            self.run.extend(v.iter().map(|&n| unpack(high, n)));
            // Stable: FIFO among equal times.
            self.run.sort_by_key(|x| x.0);
            v.clear();
            self.narrow[i] = v;
            return;
        }
        self.run_shift = 0;
        // A move keeps the packed entry as it is. The entries at the new `last` (x = 0) go to
        // `narrow[0]`, otherwise unused, and from there to the run after the loop: every entry
        // takes the same path, with no branch and no registers for the run. With no call in
        // the loop: a full bucket ends it, is grown outside it, and the loop resumes. (With a
        // call to grow in it, the last time, the bitmap and the entry being moved went through
        // memory on every move: LS2048 at 1 ms took 1.5% more instructions.)
        // An entry's bucket is one more than the highest bit in which its time's low half
        // differs from `last`'s, 0 where they agree: with both in the top half, the highest set
        // bit of their difference shifted down by 31, with bit 0 set (no zero case).
        let last = (self.last & LOW) << 32;
        // Bit b set: narrow[b] was given an entry.
        let mut given = 0u64;
        // Per bucket b >= 1, its earliest entry so far: `mk` the last packed value before its
        // time (its time's low half << 32, less one) and `mp` its payload. An entry's time is
        // then strictly earlier exactly when the entry is at most `mk`, so a move compares
        // packed entries and rebuilds no time (5 instructions a move less: 3.6% of LS2048's).
        // `u64::MAX` while the bucket is empty: every entry is at most that. An entry here has
        // a time's low half above `last`'s, so at least 1: `mk` never wraps. (Index 0 is
        // scratch, its entries at `last`: there it may, and nothing reads it.)
        let (narrow, mk, mp) = (
            &mut self.narrow,
            &mut self.spread_min,
            &mut self.spread_payload,
        );
        let mut k = 0;
        while k < v.len() {
            for &n in &v[k..] {
                let b = ((n ^ last) >> 31 | 1).ilog2() as usize;
                if n <= mk[b] {
                    mk[b] = (n & !LOW).wrapping_sub(1);
                    mp[b] = n as u32;
                }
                given |= 1 << b;
                let bk = &mut narrow[b];
                let len = bk.len();
                if len == bk.capacity() {
                    break;
                }
                // SAFETY: `len` is below the capacity.
                unsafe {
                    bk.as_mut_ptr().add(len).write(n);
                    bk.set_len(len + 1);
                }
                k += 1;
            }
            // Entry k's bucket is full. (Its minimum and bit are set already: setting them
            // again when the loop resumes changes nothing.)
            if let Some(&n) = v.get(k) {
                narrow[((n ^ last) >> 31 | 1).ilog2() as usize].reserve(1);
            }
        }
        self.nonempty |= given >> 1;
        let mut rest = given & !1;
        while rest != 0 {
            let b = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let m = std::mem::replace(&mut self.spread_min[b], u64::MAX);
            self.min[b] = (
                high | (m + 1) >> 32,
                Some(E::from_bits(self.spread_payload[b])),
            );
        }
        if given & 1 != 0 {
            self.run
                .extend(self.narrow[0].iter().map(|&n| unpack(high, n)));
            self.narrow[0].clear();
        }
        v.clear();
        // Every entry went below bucket i, so it is still the empty vector left by `take`.
        self.narrow[i] = v;
    }
    /// `refill` for a bucket above `NARROW` (events 4.3 ms or more ahead: rare).
    #[cold]
    #[inline(never)]
    fn refill_wide(&mut self, i: usize) {
        let mut v = std::mem::take(&mut self.wide[i]);
        self.take_lowest(i);
        self.run.clear();
        self.run_head = 0;
        if v.len() <= SORT_MAX {
            self.run_shift = i as u32 - 1;
            self.run.extend_from_slice(&v);
            self.run.sort_by_key(|x| x.0);
        } else {
            // With `run_shift` 0, the entries at `last` go to the run, in order.
            self.run_shift = 0;
            for &(t, e) in &v {
                self.put(t, e);
            }
        }
        v.clear();
        self.wide[i] = v;
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
        if self.run_head == self.run.len() {
            if self.len == 0 {
                return None;
            }
            let i = self.lowest();
            if self.min[i].0 > horizon {
                return None;
            }
            if self.bucket_len(i) == 1 {
                // The one entry of the lowest bucket is the next: no redistribution (the
                // common case when events are spread out in time). It is its minimum.
                let (t, e) = self.min[i];
                if i <= NARROW {
                    self.narrow[i].clear();
                } else {
                    self.wide[i].clear();
                }
                self.take_lowest(i);
                self.run_shift = 0;
                self.len -= 1;
                return e.map(|e| (t, e));
            }
            self.refill(i);
        }
        let x = self.run[self.run_head];
        if x.0 > horizon {
            return None;
        }
        self.run_head += 1;
        if self.run_head == self.run.len() {
            self.run.clear();
            self.run_head = 0;
        }
        self.last = x.0;
        self.len -= 1;
        Some(x)
    }
    /// The next entry (as things stand: an earlier push would come first), found without
    /// reorganising the heap; a hint for prefetching its data.
    #[inline]
    pub fn peek_ready(&self) -> Option<&E> {
        if let Some(x) = self.run.get(self.run_head) {
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
        if let Some(x) = self.run.get(self.run_head) {
            Some(x.0)
        } else if self.nonempty != 0 {
            Some(self.min[self.lowest()].0)
        } else {
            None
        }
    }
}

impl<E: Payload> Default for RadixQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// Against a (time, insertion) sort, with increments from 0 to far beyond a level, so that
    /// buckets are both sorted into the run and spread over the buckets below, and pushes land
    /// in the run.
    #[test]
    fn matches_a_sorted_reference_across_levels() {
        for (seed, burst) in [(1u64, 1usize), (2, 40), (3, 300)] {
            let mut rng = Rng::new(seed, 7);
            let mut q = RadixQueue::new();
            let mut reference = std::collections::BTreeSet::new();
            let mut seq = 0u32;
            // Around 2^32 too, where entries change from packed (8 bytes) to whole.
            let incs = [
                0u64,
                1,
                3,
                255,
                256,
                300,
                70_000,
                1 << 20,
                1 << 24,
                (1 << 32) - 1,
                1 << 32,
                (1 << 32) + 1,
                1 << 40,
            ];
            let mut now = 0u64;
            for round in 0..3000 {
                for _ in 0..burst {
                    let t = now + incs[rng.below(incs.len() as u64) as usize] * (1 + rng.below(3));
                    // Payloads with their top bits set as well (a packed entry's bucket must
                    // not depend on them).
                    seq += 1;
                    let e = if seq % 2 == 0 { seq } else { u32::MAX - seq };
                    q.push(t, e);
                    reference.insert((t, seq, e));
                }
                let n = if round % 7 == 0 { burst * 2 } else { burst };
                for _ in 0..n {
                    let peeked = q.peek_ready().copied();
                    let pt = q.peek_time();
                    let Some((t, e)) = q.pop() else { break };
                    let first = *reference.iter().next().unwrap();
                    assert_eq!((t, e), (first.0, first.2));
                    assert_eq!(peeked, Some(e));
                    assert_eq!(pt, Some(t));
                    reference.remove(&first);
                    now = t;
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some((t, e)) = q.pop() {
                let first = *reference.iter().next().unwrap();
                assert_eq!((t, e), (first.0, first.2));
                reference.remove(&first);
            }
            assert!(reference.is_empty());
        }
    }

    /// A spread bucket's minimum is tracked on packed entries: entries whose packed form is
    /// `u64::MAX` (time's low half and payload all ones), alone in a bucket and among others,
    /// keep their time order and FIFO ties.
    #[test]
    fn entries_packed_to_all_ones_keep_their_order() {
        let top = (1u64 << 32) - 1;
        let cases: [&[(u64, u32)]; 4] = [
            // After the spread from 2^31, the entries at 2^32 - 1 share their bucket with no
            // other time.
            &[
                (1 << 31, 1),
                (top, u32::MAX),
                (top, 3),
                (top, u32::MAX),
                ((1 << 31) + 5, 7),
            ],
            // Equal to `u64::MAX` after entries of the same time, and the reverse.
            &[
                (1 << 31, 1),
                (top, 2),
                (top, u32::MAX),
                ((1 << 31) + 1, u32::MAX),
                (top, 4),
            ],
            // A bucket of such entries alone, after the spread from 2^31.
            &[(1 << 31, 1), (top, u32::MAX)],
            // Only such entries (all at the minimum: they go to the run).
            &[(top, u32::MAX), (top, u32::MAX - 1), (top, u32::MAX)],
        ];
        for (c, case) in cases.iter().enumerate() {
            let mut q = RadixQueue::new();
            // Repeated past `SORT_MAX`, so that the bucket is spread, not sorted.
            let rounds = 2 * SORT_MAX;
            for _ in 0..rounds {
                for &(t, e) in case.iter() {
                    q.push(t, e);
                }
            }
            let mut got = vec![];
            while let Some(peeked) = q.peek_ready().copied() {
                let (t, e) = q.pop().unwrap();
                assert_eq!(peeked, e, "case {c}");
                got.push((t, e));
            }
            // By time; within a time, in push order.
            let mut times: Vec<u64> = case.iter().map(|x| x.0).collect();
            times.sort();
            times.dedup();
            let mut want = vec![];
            for t in times {
                for _ in 0..rounds {
                    want.extend(case.iter().filter(|x| x.0 == t));
                }
            }
            assert_eq!(got, want, "case {c}");
        }
    }

    #[test]
    fn pop_until_stops_at_the_horizon() {
        let mut q = RadixQueue::new();
        let [a, b, c, d] = [1u32, 2, 3, 4];
        for (t, e) in [(5u64, a), (5, b), (1 << 30, c)] {
            q.push(t, e);
        }
        assert_eq!(q.pop_until(4), None);
        assert_eq!(q.pop_until(5), Some((5, a)));
        assert_eq!(q.pop_until(5), Some((5, b)));
        assert_eq!(q.pop_until(1 << 29), None);
        // Nothing moved: an earlier push still comes first.
        q.push(6, d);
        assert_eq!(q.pop(), Some((6, d)));
        assert_eq!(q.pop(), Some((1 << 30, c)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_long_run_is_spread_before_pushes_shift_it() {
        let mut q = RadixQueue::new();
        let base = 1u64 << 40;
        let mut reference = std::collections::BTreeSet::new();
        for (t, e) in [(base, 0u32), (base + 3, 1)] {
            q.push(t, e);
            reference.insert((t, e));
        }
        // Taking the small bucket high up makes its whole block (2^40 ps) the run.
        assert_eq!(q.pop(), Some((base, 0)));
        reference.remove(&(base, 0));
        assert!(q.run_shift >= 40, "{}", q.run_shift);
        // Pushes inside the block, later ones earlier (pairs at equal times): each would go
        // before the run's last entry.
        for k in 0..1000u64 {
            let t = base + 10 + (1000 - k / 2) * 100;
            q.push(t, 2 + k as u32);
            reference.insert((t, 2 + k as u32));
            assert!(q.run.len() - q.run_head <= RUN_MAX + 1);
        }
        assert_eq!(q.run_shift, 0);
        while let Some((t, e)) = q.pop() {
            let first = *reference.iter().next().unwrap();
            assert_eq!((t, e), first);
            reference.remove(&first);
        }
        assert!(reference.is_empty());
    }
}
