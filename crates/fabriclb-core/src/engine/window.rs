//! The look-ahead window: the next events, in order, already taken out of the heap, so the
//! simulator can see a few events ahead (see `EventQueue`). A fixed ring of `CAP` entries
//! (a few instructions per event), with a spill queue behind it for the rare case of more.

use super::Time;
use std::collections::VecDeque;

const CAP: usize = 8;

pub(super) struct Window<E: Copy> {
    ring: [(Time, E); CAP],
    head: usize,
    /// Entries in the ring.
    n: usize,
    /// Entries after the ring's, once it is full (pushes landing among the taken-out events).
    spill: VecDeque<(Time, E)>,
}

impl<E: Copy + Default> Window<E> {
    pub(super) fn new() -> Self {
        Window {
            ring: [(0, E::default()); CAP],
            head: 0,
            n: 0,
            spill: VecDeque::new(),
        }
    }
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.n + self.spill.len()
    }
    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<&(Time, E)> {
        if i < self.n {
            Some(&self.ring[(self.head + i) % CAP])
        } else {
            self.spill.get(i - self.n)
        }
    }
    #[inline]
    pub(super) fn push_back(&mut self, x: (Time, E)) {
        if self.n < CAP && self.spill.is_empty() {
            self.ring[(self.head + self.n) % CAP] = x;
            self.n += 1;
        } else {
            self.spill.push_back(x);
        }
    }
    #[inline]
    pub(super) fn pop_front(&mut self) -> Option<(Time, E)> {
        if self.n == 0 {
            return None;
        }
        let x = self.ring[self.head];
        self.head = (self.head + 1) % CAP;
        self.n -= 1;
        if let Some(y) = self.spill.pop_front() {
            self.ring[(self.head + self.n) % CAP] = y;
            self.n += 1;
        }
        Some(x)
    }
    /// Insert after the last entry at or before `x.0`.
    pub(super) fn insert_sorted(&mut self, x: (Time, E)) {
        let mut i = self.len();
        while i > 0 && self.get(i - 1).is_some_and(|y| y.0 > x.0) {
            i -= 1;
        }
        if i > self.n || (i == self.n && (self.n == CAP || !self.spill.is_empty())) {
            // After the ring's entries, and the ring is full or the spill already holds some.
            self.spill.insert(i - self.n, x);
            return;
        }
        if self.n == CAP {
            // The ring's last entry moves to the front of the spill queue.
            let last = self.ring[(self.head + CAP - 1) % CAP];
            self.spill.push_front(last);
            self.n -= 1;
        }
        // Shift the entries from `i` on one place back.
        let mut j = self.n;
        while j > i {
            self.ring[(self.head + j) % CAP] = self.ring[(self.head + j - 1) % CAP];
            j -= 1;
        }
        self.ring[(self.head + i) % CAP] = x;
        self.n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_through_the_spill() {
        // Against a sorted Vec with the same "after equal times" rule, past the ring's size.
        let mut w: Window<u32> = Window::new();
        let mut reference: Vec<(Time, u32)> = vec![];
        let times = [5u64, 9, 9, 20, 3, 9, 30, 1, 25, 9, 40, 2, 9, 50, 0, 7];
        for (k, &t) in times.iter().enumerate() {
            let x = (t, k as u32);
            if k % 3 == 0 && reference.last().is_none_or(|l| l.0 <= t) {
                w.push_back(x);
                reference.push(x);
            } else {
                w.insert_sorted(x);
                let i = reference.partition_point(|y| y.0 <= t);
                reference.insert(i, x);
            }
            assert_eq!(w.len(), reference.len());
            let got: Vec<_> = (0..w.len()).map(|i| *w.get(i).unwrap()).collect();
            assert_eq!(got, reference);
            if k % 5 == 4 {
                assert_eq!(w.pop_front(), Some(reference.remove(0)));
            }
        }
        while let Some(x) = w.pop_front() {
            assert_eq!(x, reference.remove(0));
        }
        assert!(reference.is_empty());
        // An insertion into the empty window is popped (not left behind in the spill).
        w.insert_sorted((3, 99));
        assert_eq!(w.pop_front(), Some((3, 99)));
        assert_eq!(w.len(), 0);
    }
}
