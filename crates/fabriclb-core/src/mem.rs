//! Memory backing: 2 MiB pages for the whole heap of a large world. Changes where memory
//! comes from, never what a run computes; touches no simulation state.
//!
//! On this machine a random read beyond a footprint of 4-16 MB costs 100-190 ns, and with
//! 4 KiB pages a large world's reads also miss the TLB (docs/BENCHMARKS.md). The kernel's THP
//! mode is usually `madvise`: a process gets 2 MiB pages only where it asks. [`HugeHeap`], when
//! a binary makes it its global allocator (the bench binary and the Python module do), asks
//! for them on everything the heap grows by once [`prefer_huge_pages`] has been called (by
//! `Sim::run` in a large world, one whose ports alone exceed a core's L2 cache):
//! glibc's heap then grows in 64 MiB steps, each advised as it appears, and every block of
//! 1 MiB or more is advised where it lies. Small worlds are left alone: their footprint is in
//! the fast region, and there 2 MiB pages measured slower and add resident memory. Off Linux
//! with glibc, nothing changes.

use std::alloc::{GlobalAlloc, Layout, System};
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub(crate) const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The 2 MiB pages wholly inside `[addr, addr + bytes)`, as a start and a length (none when
/// the range holds no whole one).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn huge_page_span(addr: usize, bytes: usize) -> Option<(usize, usize)> {
    let start = addr.next_multiple_of(HUGE_PAGE_BYTES);
    let end = (addr + bytes) & !(HUGE_PAGE_BYTES - 1);
    (end > start).then(|| (start, end - start))
}

/// Ask for transparent huge pages on the 2 MiB pages wholly inside `[p, p + bytes)`. Pages
/// touched from then on come as huge pages where the kernel can; pages already touched stay
/// as they are. A hint: where the kernel's THP mode is `never`, or off Linux, nothing changes.
pub(crate) fn advise_huge_pages(p: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if let Some((start, len)) = huge_page_span(p as usize, bytes) {
        // SAFETY: madvise only changes how the kernel backs pages of this process;
        // MADV_HUGEPAGE never changes their contents or validity.
        unsafe {
            libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, bytes);
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
static ON: AtomicBool = AtomicBool::new(false);
/// The end of the main heap as last advised.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static ADVISED_TOP: AtomicUsize = AtomicUsize::new(0);

/// Blocks at least this large are advised where they lie (glibc maps them on their own).
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
const BIG_BYTES: usize = 1 << 20;
/// How far glibc's heap grows at a time once huge pages are preferred.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TOP_PAD_BYTES: i32 = 64 << 20;

/// From now on, back what the heap grows by with 2 MiB pages (with [`HugeHeap`] as the global
/// allocator, on Linux with glibc; otherwise nothing). Idempotent; never undone.
pub fn prefer_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if !ON.swap(true, Ordering::Relaxed) {
        // SAFETY: mallopt and sbrk(0) only read or tune the C allocator's own state.
        unsafe {
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD_BYTES);
            ADVISED_TOP.store(libc::sbrk(0) as usize, Ordering::Relaxed);
        }
    }
}

/// The system allocator, which after [`prefer_huge_pages`] advises the heap's growth for 2 MiB
/// pages (see the module's docs).
pub struct HugeHeap;

impl HugeHeap {
    #[inline]
    fn grown(p: *mut u8, bytes: usize) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if ON.load(Ordering::Relaxed) && !p.is_null() {
            if bytes >= BIG_BYTES {
                advise_huge_pages(p, bytes);
            }
            // SAFETY: sbrk(0) reads the current end of the heap (no change).
            let top = unsafe { libc::sbrk(0) } as usize;
            let seen = ADVISED_TOP.load(Ordering::Relaxed);
            if top > seen
                && ADVISED_TOP
                    .compare_exchange(seen, top, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                // The growth's whole 2 MiB pages (the one glibc's chunk header landed in was
                // touched before this advice, and stays on 4 KiB pages).
                let from = seen & !(HUGE_PAGE_BYTES - 1);
                advise_huge_pages(from as *const u8, top - from);
            }
        }
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        let _ = (p, bytes);
    }
}

// SAFETY: every call is the system allocator's, with the same arguments; `grown` only gives
// the kernel a hint about pages the allocator already owns.
unsafe impl GlobalAlloc for HugeHeap {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        Self::grown(p, layout.size());
        p
    }
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        Self::grown(p, layout.size());
        p
    }
    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout)
    }
    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        Self::grown(q, new_size);
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_page_span_is_the_whole_pages_inside() {
        const H: usize = HUGE_PAGE_BYTES;
        for (addr, bytes, want) in [
            (0, H, Some((0, H))),
            (H, 3 * H, Some((H, 3 * H))),
            (16, H, None),
            (16, 2 * H, Some((H, H))),
            (H - 64, 3 * H + 64, Some((H, 3 * H))),
            (H + 4096, 3 * H, Some((2 * H, 2 * H))),
            (0, H - 1, None),
            (H, 0, None),
        ] {
            assert_eq!(
                huge_page_span(addr, bytes),
                want,
                "addr {addr}, bytes {bytes}"
            );
        }
    }

    #[test]
    fn the_heap_keeps_every_block_once_huge_pages_are_preferred() {
        // Blocks below and above `BIG_BYTES`, written, grown, shrunk and freed through
        // `HugeHeap` after the switch: their bytes survive.
        prefer_huge_pages();
        prefer_huge_pages(); // idempotent
        let a = HugeHeap;
        let fill = |p: *mut u8, n: usize, k: u8| {
            for i in (0..n).step_by(4093) {
                // SAFETY: i < n, inside the block.
                unsafe { *p.add(i) = (i as u8) ^ k };
            }
        };
        let check = |p: *const u8, n: usize, k: u8| {
            for i in (0..n).step_by(4093) {
                // SAFETY: i < n, inside the block.
                assert_eq!(unsafe { *p.add(i) }, (i as u8) ^ k, "byte {i} of {n}");
            }
        };
        let mut blocks = Vec::new();
        for (k, n) in [24usize, 4096, 300_000, BIG_BYTES, 3 * HUGE_PAGE_BYTES + 7]
            .into_iter()
            .enumerate()
        {
            let layout = Layout::from_size_align(n, 64).unwrap();
            // SAFETY: a non-zero size; the block is freed below with the layout it has then.
            let p = unsafe {
                if k % 2 == 0 {
                    a.alloc(layout)
                } else {
                    a.alloc_zeroed(layout)
                }
            };
            assert!(!p.is_null());
            if k % 2 == 1 {
                // SAFETY: inside the block.
                assert_eq!(unsafe { *p.add(n - 1) }, 0);
            }
            fill(p, n, k as u8);
            blocks.push((p, layout, k as u8));
        }
        for (p, layout, k) in blocks.iter_mut() {
            let (old, new) = (layout.size(), 2 * layout.size() + 5);
            // SAFETY: `p` was allocated by `a` with `layout`; `new` is non-zero.
            *p = unsafe { a.realloc(*p, *layout, new) };
            check(*p, old, *k);
            fill(*p, new, *k);
            *layout = Layout::from_size_align(new, 64).unwrap();
        }
        for (p, layout, k) in blocks {
            let small = layout.size() / 3;
            // SAFETY: as above.
            let p = unsafe { a.realloc(p, layout, small) };
            check(p, small, k);
            // SAFETY: `p` holds `small` bytes at alignment 64, allocated by `a`.
            unsafe { a.dealloc(p, Layout::from_size_align(small, 64).unwrap()) };
        }
    }
}
