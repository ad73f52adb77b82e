//! The look-ahead window: the next events, in order, already taken out of the heap, so the
//! simulator can see a few events ahead (see `EventQueue`). A vector read from a head index
//! (no wrap-around arithmetic on the three reads and two updates of every event). It is cleared
//! when read to the end; otherwise the part already read is dropped at the next insertion once
//! it holds `COMPACT_AT` entries or more, which moves the few live entries to the front.

use super::Time;

/// Entries read before the vector is compacted.
const COMPACT_AT: usize = 32;

pub(super) struct Window<E: Copy> {
    /// The entries from `head` on, in order.
    buf: Vec<(Time, E)>,
    head: usize,
}

impl<E: Copy> Window<E> {
    pub(super) fn new() -> Self {
        Window {
            buf: Vec::with_capacity(2 * COMPACT_AT),
            head: 0,
        }
    }
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.buf.len() - self.head
    }
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&(Time, E)> {
        self.buf.get(self.head + i)
    }
    #[inline]
    pub(super) fn push_back(&mut self, x: (Time, E)) {
        self.drop_read();
        self.buf.push(x);
    }
    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<(Time, E)> {
        let x = *self.buf.get(self.head)?;
        self.head += 1;
        if self.head == self.buf.len() {
            self.buf.clear();
            self.head = 0;
        }
        Some(x)
    }
    /// Before an insertion: drop the entries already read once there are `COMPACT_AT` or more.
    #[inline]
    fn drop_read(&mut self) {
        if self.head >= COMPACT_AT {
            self.compact();
        }
    }
    #[cold]
    fn compact(&mut self) {
        self.buf.drain(..self.head);
        self.head = 0;
    }
    /// Insert after the last entry at or before `x.0`. Rare (a push among the events already
    /// taken out), so out of line: `EventQueue::push` stays small enough to inline.
    #[inline(never)]
    pub(super) fn insert_sorted(&mut self, x: (Time, E)) {
        self.drop_read();
        let i = self.buf[self.head..].partition_point(|y| y.0 <= x.0);
        self.buf.insert(self.head + i, x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn keeps_order_through_compaction() {
        // Against a sorted Vec with the same "after equal times" rule, over many more reads
        // than `COMPACT_AT`, with the window sometimes emptied and sometimes long.
        let mut rng = Rng::new(11, 0);
        let mut w: Window<u32> = Window::new();
        let mut reference: Vec<(Time, u32)> = vec![];
        let mut now = 0;
        let mut emptied = 0;
        for k in 0..5_000u32 {
            let t = now + rng.below(20);
            let x = (t, k);
            if rng.below(2) == 0 && reference.last().is_none_or(|l| l.0 <= t) {
                w.push_back(x);
                reference.push(x);
            } else {
                w.insert_sorted(x);
                let i = reference.partition_point(|y| y.0 <= t);
                reference.insert(i, x);
            }
            // Pop more often than push in one phase (the window empties), less in the other
            // (it grows past `COMPACT_AT`).
            let pops = if (k / 500) % 2 == 0 {
                rng.below(4)
            } else {
                rng.below(2)
            };
            for _ in 0..pops {
                let got = w.pop_front();
                assert_eq!(got, (!reference.is_empty()).then(|| reference.remove(0)));
                match got {
                    Some((t, _)) => now = t,
                    None => emptied += 1,
                }
            }
            assert_eq!(w.len(), reference.len());
            let got: Vec<_> = (0..w.len()).map(|i| *w.get(i).unwrap()).collect();
            assert_eq!(got, reference);
            assert_eq!(w.get(w.len()), None);
            // What was read is dropped at the next insertion past `COMPACT_AT` (and at most
            // three pops followed it here).
            assert!(w.head < COMPACT_AT + 4, "{} entries read and kept", w.head);
        }
        assert!(emptied > 100, "the window emptied {emptied} times");
        while let Some(x) = w.pop_front() {
            assert_eq!(x, reference.remove(0));
        }
        assert!(reference.is_empty());
        // An insertion into the empty window is the next popped.
        w.insert_sorted((3, 99));
        assert_eq!(w.pop_front(), Some((3, 99)));
        assert_eq!(w.len(), 0);
    }
}
