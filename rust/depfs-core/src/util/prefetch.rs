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

/// Asks the kernel to back the 2 MiB-aligned part of `v`'s allocation (its spare
/// capacity included) with transparent huge pages (`MADV_HUGEPAGE`): the pages of it
/// that are first touched afterwards come as huge pages, so call it before filling `v`
/// (a fresh zeroed `vec!` of this size is not touched yet either). Pages touched before
/// stay small: collapsing them (`MADV_COLLAPSE`) cost up to 0.3 s of a model's load on
/// this machine, more than a parse of a small file saves. A hint only: where THP is
/// off, on another OS, or for an allocation under 2 MiB it does nothing, and errors are
/// ignored; the environment variable `DEPFS_NO_HUGE_PAGES` (any value) turns it off.
/// Measured in docs/design.md § "Huge pages". O(1).
pub fn huge_pages<T>(v: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if *OFF.get_or_init(|| std::env::var_os("DEPFS_NO_HUGE_PAGES").is_some()) {
            return;
        }
        let start = v.as_mut_ptr() as usize;
        let end = start + v.capacity() * std::mem::size_of::<T>();
        let (first, last) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if last <= first {
            return;
        }
        // SAFETY: `first..last` lies inside `v`'s allocation, memory this process owns
        // that stays mapped for the call (borrowed mutably: no one frees it meanwhile).
        // The advice only changes how the range is backed, never what it holds.
        #[allow(unsafe_code)]
        let _ = unsafe { libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// A vector of `items`, its allocation advised onto huge pages before it is filled
/// ([`huge_pages`]). O(n).
pub fn huge_vec<T>(items: impl ExactSizeIterator<Item = T>) -> Vec<T> {
    let mut v = Vec::with_capacity(items.len());
    huge_pages(&mut v);
    v.extend(items);
    v
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

    /// The value of field `field` (e.g. `VmFlags:`) of the mapping that holds address
    /// `at`, from /proc/self/smaps; None where there is no such file.
    #[cfg(target_os = "linux")]
    fn smaps_field_at(at: usize, field: &str) -> Option<String> {
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
            if let Some(value) = line.strip_prefix(field).filter(|_| inside) {
                return Some(value.trim().to_string());
            }
        }
        None
    }

    #[test]
    fn a_huge_vec_holds_its_values_on_huge_pages() {
        // 9 MiB of distinct values: the vector's mapping is advised onto transparent
        // huge pages (`hg` in its VmFlags; planted: without the advice it is not). Whether
        // the kernel then finds free huge pages depends on the machine's memory at the
        // time, so AnonHugePages is not asserted. A small one and an empty one are left
        // alone.
        let v = huge_vec(0..9u32 << 18);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
        #[cfg(target_os = "linux")]
        {
            let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
            if thp.is_ok_and(|t| !t.contains("[never]")) {
                let flags = smaps_field_at(v.as_ptr() as usize + (4 << 20), "VmFlags:");
                assert!(
                    flags.as_deref().is_some_and(|f| f.split_whitespace().any(|x| x == "hg")),
                    "VmFlags {flags:?}"
                );
            }
        }
        assert_eq!(huge_vec([7u8; 100].into_iter()), vec![7u8; 100]);
        assert!(huge_vec(std::iter::empty::<f32>()).is_empty());
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
