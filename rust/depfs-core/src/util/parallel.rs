//! The one parallelism helper of the core: items split into chunks, each worker with
//! its own reusable state, results in item order whatever the thread count (so a
//! parse is the same on 1 or 8 threads).

use std::ops::Range;

use rayon::prelude::*;

use crate::{Error, Result};

/// Maps `f` over the items `0..n` in chunks of `chunk` items on `threads` threads
/// (0 = all cores; more than the cores or the chunks are capped: a pool of a million
/// threads would never start; 1, or a single chunk, runs on the calling thread).
/// Each worker gets its own state from `init` (scratch buffers); `f` returns the
/// results of one chunk, and the chunks' results are concatenated in item order.
pub fn map_chunks<S, T, I, F>(threads: usize, n: usize, chunk: usize, init: I, f: F) -> Result<Vec<T>>
where
    T: Send,
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, Range<usize>) -> Vec<T> + Sync + Send,
{
    let chunk = chunk.max(1);
    let n_chunks = n.div_ceil(chunk);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let threads = if threads == 0 { cores } else { threads.min(cores).min(n_chunks.max(1)) };
    let range = |i: usize| i * chunk..((i + 1) * chunk).min(n);
    if threads == 1 || n_chunks <= 1 {
        let mut state = init();
        return Ok((0..n_chunks).flat_map(|i| f(&mut state, range(i))).collect());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start {threads} threads: {e}")))?;
    Ok(pool.install(|| {
        (0..n_chunks)
            .into_par_iter()
            .map_init(&init, |state, i| f(state, range(i)))
            .collect::<Vec<Vec<T>>>()
            .into_iter()
            .flatten()
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_in_item_order_for_any_thread_count() {
        let want: Vec<usize> = (0..1000).map(|i| i * i).collect();
        for threads in [0, 1, 2, 3] {
            for chunk in [1, 7, 64, 5000] {
                let got =
                    map_chunks(threads, 1000, chunk, || 0usize, |_, r| r.map(|i| i * i).collect()).unwrap();
                assert_eq!(got, want, "threads {threads} chunk {chunk}");
            }
        }
        assert!(map_chunks(2, 0, 8, || (), |_, r| r.collect::<Vec<_>>()).unwrap().is_empty());
    }

    #[test]
    fn each_worker_reuses_its_state() {
        // On one thread the state is shared by every chunk: it counts them.
        let got = map_chunks(
            1,
            10,
            3,
            || 0usize,
            |n, _| {
                *n += 1;
                vec![*n]
            },
        )
        .unwrap();
        assert_eq!(got, vec![1, 2, 3, 4]);
    }
}
