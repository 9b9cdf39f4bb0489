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

const LINE: usize = 64;

/// Prefetches every cache line of `slice[start .. start + len]` (`len` ≥ 1), one
/// prefetch per line. O(len / line).
#[inline(always)]
pub fn prefetch_range<T>(slice: &[T], start: usize, len: usize) {
    let size = std::mem::size_of::<T>();
    let first_byte = slice.as_ptr() as usize + start * size;
    let last_byte = first_byte + (len.max(1) - 1) * size;
    if first_byte / LINE == last_byte / LINE {
        // The common case of a short row: one line, no loop.
        prefetch(slice, start);
    } else {
        for_each_line(first_byte, size, start, len, |i| prefetch(slice, i));
    }
}

/// Calls `f` with one index per cache line that elements `start .. start + len`
/// reach (`len` ≥ 1; elements of `size` bytes, a divisor of 64, the first at address
/// `first_byte`): `start`, then the first element of each later line.
#[inline(always)]
fn for_each_line(first_byte: usize, size: usize, start: usize, len: usize, mut f: impl FnMut(usize)) {
    let size = size.clamp(1, LINE);
    f(start);
    let mut next = start + (LINE - first_byte % LINE).div_ceil(size);
    while next < start + len {
        f(next);
        next += LINE / size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_a_range_is_named_once() {
        for size in [1usize, 2, 4, 8] {
            for first_byte in (0..192).step_by(size) {
                for len in 1..100 {
                    let line_of = |i: usize| (first_byte + (i - 7) * size) / LINE;
                    let mut lines = vec![];
                    for_each_line(first_byte, size, 7, len, |i| {
                        assert!(i == 7 || (first_byte + (i - 7) * size) % LINE == 0, "starts its line");
                        lines.push(line_of(i));
                    });
                    let want: Vec<usize> = (line_of(7)..=line_of(7 + len - 1)).collect();
                    assert_eq!(lines, want, "size {size} first {first_byte} len {len}");
                }
            }
        }
    }
}
