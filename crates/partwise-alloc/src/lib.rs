//! A global allocator that keeps a hostile array count from aborting the
//! process.
//!
//! kafka-protocol 0.18 reserves an array's announced element count before it
//! decodes one element (`Vec::with_capacity` in its array decoders). A
//! response that is well framed, answers the right correlation id and
//! announces 2^31 - 1 elements therefore asks for tens of gigabytes at once;
//! the system allocator refuses, and Rust aborts on a failed allocation, so a
//! hostile or broken broker could kill a group member with 40 bytes. (Upstream
//! has bounded the capacity by the bytes remaining, unreleased at 0.18.)
//!
//! [`ReserveHuge`] serves every allocation of [`HUGE`] bytes or more with an
//! anonymous `MAP_NORESERVE` mapping: address space is reserved, memory is
//! not, and only the pages written are ever backed. The decoder then fails as
//! it should (the bytes run out after a few elements) and the mapping is
//! returned. Everything smaller goes to the system allocator unchanged.
//! Nothing partwise does legitimately needs a gigabyte in one block: inputs
//! are capped well below it and frames at `partwise_wire::frame::MAX_FRAME`.
//!
//! Binaries install it (`partwise`, `ticker`, the test binaries that decode
//! hostile responses, the fuzz target):
//!
//! ```
//! #[global_allocator]
//! static ALLOC: partwise_alloc::ReserveHuge = partwise_alloc::ReserveHuge;
//! ```
//!
//! It is a crate of its own, not a module of each binary, because it is
//! unsafe code that four kinds of binary install and one copy is tested
//! (below); and not a module of `partwise-wire`, whose job is Kafka's bytes,
//! so that a binary installs it without depending on the wire crate.
//! Unix only: elsewhere (the KafkaJS WebAssembly build) it is empty.
//!
//! It relies on Linux's default overcommit policy (`vm.overcommit_memory`
//! 0 or 1); under strict accounting (2) such a mapping is refused and the
//! allocation fails as before.

#![cfg(unix)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

/// The size from which an allocation is a reserved mapping, not a heap block.
pub const HUGE: usize = 1 << 30;

/// The allocator: the system's, with blocks of [`HUGE`] bytes or more served
/// from reserved address space.
pub struct ReserveHuge;

fn huge(layout: Layout) -> bool {
    // A mapping is page-aligned; a stricter alignment stays with System.
    layout.size() >= HUGE && layout.align() <= 4096
}

unsafe fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping touches no existing memory.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        ptr::null_mut()
    } else {
        p.cast()
    }
}

unsafe impl GlobalAlloc for ReserveHuge {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if huge(layout) {
            // SAFETY: see `map`.
            unsafe { map(layout.size()) }
        } else {
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if huge(layout) {
            // An anonymous mapping is zero-filled already.
            // SAFETY: see `map`.
            unsafe { map(layout.size()) }
        } else {
            // SAFETY: forwarded with the caller's guarantees.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if huge(layout) {
            // SAFETY: a huge layout was mapped by `alloc` with this size.
            unsafe { libc::munmap(ptr.cast(), layout.size()) };
        } else {
            // SAFETY: a small layout came from System.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with this alignment is a
        // valid layout (GlobalAlloc::realloc's contract).
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if !huge(layout) && !huge(new) {
            // SAFETY: both sides are System's.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // Crossing between heap and mapping (or mapping to mapping): move.
        // SAFETY: `new` is a valid non-zero layout (new_size >= 1 by contract).
        let to = unsafe { self.alloc(new) };
        if !to.is_null() {
            // SAFETY: both blocks are live and at least this long; they are
            // distinct allocations, so they do not overlap.
            unsafe {
                ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        to
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_blocks_are_reserved_not_backed_and_small_ones_are_the_systems() {
        let a = ReserveHuge;
        // 64 GiB: more than this machine's memory; reserved, so it succeeds,
        // and writing its ends backs only two pages.
        let layout = Layout::from_size_align(64 << 30, 8).unwrap();
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            *p = 7;
            *p.add(layout.size() - 1) = 9;
            assert_eq!((*p, *p.add(layout.size() - 1)), (7, 9));
            // Shrinking to a heap block keeps the head.
            let q = a.realloc(p, layout, 16);
            assert!(!q.is_null());
            assert_eq!(*q, 7);
            a.dealloc(q, Layout::from_size_align(16, 8).unwrap());

            let z = a.alloc_zeroed(Layout::from_size_align(HUGE, 8).unwrap());
            assert!(!z.is_null());
            assert_eq!(*z.add(HUGE / 2), 0);
            // Growing a heap block into a mapping keeps its bytes.
            let small = Layout::from_size_align(32, 8).unwrap();
            let s = a.alloc(small);
            *s.add(31) = 5;
            let g = a.realloc(s, small, HUGE);
            assert_eq!(*g.add(31), 5);
            a.dealloc(g, Layout::from_size_align(HUGE, 8).unwrap());
            a.dealloc(z, Layout::from_size_align(HUGE, 8).unwrap());
        }
    }
}
