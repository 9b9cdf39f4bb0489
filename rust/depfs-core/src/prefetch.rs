//! Software prefetch: the crate's one use of `unsafe`.
//!
//! Scoring a decision reads a few hundred rows scattered over tables of tens of
//! megabytes, so most reads miss the cache. Asking for all of them first and using
//! them later keeps many misses in flight at once; unlike an ordinary load, a
//! prefetch does not hold up the instructions after it while it waits.

/// Starts loading the cache line that holds `slice[i]`, without waiting for it.
/// Out of range `i` or a non-x86_64 target: does nothing.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = slice.get(i) {
        let p = (x as *const T).cast::<i8>();
        // SAFETY: PREFETCHT0 is only a hint: it cannot fault, changes no program-visible
        // state, and SSE (its target feature) is part of the x86_64 baseline. `p` points
        // into a live slice.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, i);
}

/// Prefetches every cache line of `slice[start .. start + len]` (`len` ≥ 1). O(len / line).
#[inline(always)]
pub fn prefetch_range<T>(slice: &[T], start: usize, len: usize) {
    let per_line = (64 / std::mem::size_of::<T>().max(1)).max(1);
    let mut i = start;
    while i < start + len {
        prefetch(slice, i);
        i += per_line;
    }
    // The last element may sit on one more line when `start` is not line-aligned.
    prefetch(slice, start + len - 1);
}
