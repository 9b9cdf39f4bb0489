//! Hints to the hardware and the kernel about weight tables: the crate's only uses of
//! `unsafe`, neither of which changes a value the program can see.
//!
//! - **Software prefetch.** Scoring a decision reads a few hundred rows scattered over
//!   tables of tens of megabytes, so most reads miss the cache. Asking for all of them
//!   first and using them later keeps many misses in flight at once; unlike an
//!   ordinary load, a prefetch does not hold up the instructions after it while it
//!   waits.
//! - **Huge pages** ([`huge_pages`]). With 4 KiB pages each of those scattered reads
//!   also misses the TLB (a 60 MB table spans 15,000 pages, the TLB covers a few MB), so
//!   it first walks the page tables; 2 MiB pages cover such a table with 30 entries.

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

/// Huge-page size of x86_64 and aarch64 Linux (transparent huge pages).
const HUGE: usize = 2 << 20;

/// Asks the kernel to back the 2 MiB-aligned part of `buf` with transparent huge
/// pages: `MADV_HUGEPAGE` (later faults there take huge pages) and `MADV_COLLAPSE`
/// (Linux 6.1+: the pages already there are moved into huge pages now, a copy of at
/// most `buf`). A hint only: where THP is off, on an older kernel or another OS, or for
/// a buffer under 2 MiB it does nothing, and errors are ignored; the environment
/// variable `DEPFS_NO_HUGE_PAGES` (any value) turns it off. Measured on en_ewt test
/// (docs/design.md § "Huge pages"): the parsers, whose time goes to scattered weight
/// reads, run faster with it. O(len) for the collapse.
pub fn huge_pages<T>(buf: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if *OFF.get_or_init(|| std::env::var_os("DEPFS_NO_HUGE_PAGES").is_some()) {
            return;
        }
        let start = buf.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(buf);
        let (first, last) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if last <= first {
            return;
        }
        // MADV_COLLAPSE's value in Linux's ABI (uapi/asm-generic/mman-common.h); the libc
        // crate does not name it yet.
        const MADV_COLLAPSE: libc::c_int = 25;
        for advice in [libc::MADV_HUGEPAGE, MADV_COLLAPSE] {
            // SAFETY: `first..last` lies inside `buf`, memory this process owns and that
            // stays mapped for the call (borrowed mutably: no one frees it meanwhile).
            // Both advices only change how the range is backed, never its contents:
            // the kernel copies every page into its huge page before it swaps them.
            #[allow(unsafe_code)]
            let _ = unsafe { libc::madvise(first as *mut libc::c_void, last - first, advice) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

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

    /// The AnonHugePages (kB) of the mapping that holds address `at`, from
    /// /proc/self/smaps; None where there is no such file.
    #[cfg(target_os = "linux")]
    fn huge_kb_at(at: usize) -> Option<usize> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| r.split_once('-'));
            if let Some((a, b)) = range.filter(|(a, _)| !a.contains(':')) {
                let (a, b) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16));
                if let (Ok(a), Ok(b)) = (a, b) {
                    inside = a <= at && at < b;
                    continue;
                }
            }
            if let Some(kb) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
                return kb.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
        None
    }

    #[test]
    fn huge_page_advice_keeps_every_value_and_backs_the_buffer_with_huge_pages() {
        // 9 MiB of distinct values, written (so its pages exist) before the advice, which
        // is given on an unaligned slice of it: nothing changes, and where the kernel
        // offers transparent huge pages the buffer now lies on them (planted: without
        // MADV_COLLAPSE it does not).
        let mut v: Vec<u32> = (0..(9 << 18)).collect();
        huge_pages(&mut v[3..]);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
        #[cfg(target_os = "linux")]
        {
            let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
            if thp.is_ok_and(|t| !t.contains("[never]")) {
                let kb = huge_kb_at(v.as_ptr() as usize + (4 << 20));
                assert!(kb.is_some_and(|kb| kb >= 2048), "AnonHugePages {kb:?} kB");
            }
        }
        let mut small = vec![7u8; 100];
        huge_pages(&mut small);
        huge_pages::<f32>(&mut []);
        assert_eq!(small, vec![7u8; 100]);
    }

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
