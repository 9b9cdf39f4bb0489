//! Exact decoders for first- and second-order arc-factored dependency parsing.
//!
//! Every decoder is a pure function on a row-major score slice with the ecosystem convention
//! `scores[dep * n1 + head]`, `n1 = n + 1`, index 0 = ROOT (the ROOT row and the diagonal are
//! ignored). Arcs scored `-inf` are pruned; `+inf` and NaN are rejected. Heads come back with
//! `heads[0] = -1`.
//!
//! - [`cle`]: maximum spanning arborescence (Tarjan 1977 / Camerini et al. 1979), O(n²), with the
//!   exact single-root constraint of Zmigrod, Vieira & Cotterell (2020).
//! - [`eisner`]: first-order projective (Eisner 1996), O(n³).
//! - [`eisner2`]: second-order projective with adjacent siblings (McDonald & Pereira 2006), O(n³).
//! - [`eisner_kbest`]: k best first-order projective trees (Huang & Chiang 2005, Algorithm 3).
//! - [`arc_max_marginals`]: the best projective tree through each arc (Viterbi inside-outside).
//!
//! Each decoder has a reusable workspace (`CleWorkspace`, `EisnerWorkspace`, ...) so that a parser
//! calling it once per sentence does not allocate; the free functions are convenience wrappers.

pub mod cle;
pub mod eisner;
pub mod eisner2;
pub mod kbest;
pub mod max_marginals;

pub use cle::{cle, CleWorkspace};
pub use eisner::{eisner, EisnerWorkspace};
pub use eisner2::{eisner2, Eisner2Workspace};
pub use kbest::{eisner_kbest, KBestWorkspace};
pub use max_marginals::{arc_max_marginals, MaxMarginals};

use std::borrow::Cow;

use crate::error::{Error, Result};

/// Finite scores beyond ±CLAMP are clamped to ±CLAMP before decoding: masks such as
/// `np.finfo(np.float64).min` would otherwise overflow to `-inf` ("no arc") in the chart sums
/// (n·1e300 stays finite for any n that fits in memory), so every decoder finds the trees CLE
/// finds. Scores within ±1e300 are used as given.
pub const CLAMP: f64 = 1e300;

/// Work (chart cells) between two polls of a decoder's `poll` hook: about 10 ms, so a
/// sentence below ~200 words never polls and a huge one stops within a fraction of a second.
const POLL_WORK: usize = 1 << 24;

/// Counts chart work and calls `poll` every [`POLL_WORK`] cells; `poll` returning true
/// stops the decoder (Ctrl-C from Python), which then returns [`stopped`].
pub(crate) struct Poller<'a> {
    poll: &'a mut dyn FnMut() -> bool,
    work: usize,
}

impl<'a> Poller<'a> {
    pub fn new(poll: &'a mut dyn FnMut() -> bool) -> Self {
        Self { poll, work: 0 }
    }
    /// Adds `cells` of work (called once per chart width, so O(n) calls per O(n³) decode).
    #[inline]
    pub fn add(&mut self, what: &str, cells: usize) -> Result<()> {
        self.work += cells;
        if self.work >= POLL_WORK {
            self.work = 0;
            if (self.poll)() {
                return Err(Error::InvalidArgument(format!("{what}: stopped by the caller")));
            }
        }
        Ok(())
    }
}

/// `buf` cleared and filled with `len` copies of `value`; an error naming n (not a process
/// abort) when the memory cannot be had.
pub(crate) fn fill<T: Clone>(what: &str, n1: usize, buf: &mut Vec<T>, len: usize, value: T) -> Result<()> {
    buf.clear();
    buf.try_reserve_exact(len)
        .map_err(|_| too_large(what, n1, len.saturating_mul(std::mem::size_of::<T>())))?;
    buf.resize(len, value);
    Ok(())
}

/// The error of a workspace that cannot be allocated for a sentence of n1 - 1 words.
pub fn too_large(what: &str, n1: usize, bytes: usize) -> Error {
    Error::InvalidArgument(format!(
        "{what}: a sentence of n = {} words needs {:.1} GB that cannot be allocated",
        n1.saturating_sub(1),
        bytes as f64 / 1e9
    ))
}

/// Sum of `scores[dep * n1 + heads[dep]]` over the words (heads[0], the ROOT, is skipped).
/// Heads outside `0..n1` contribute `-inf`.
pub fn tree_score(scores: &[f64], heads: &[i32]) -> f64 {
    let n1 = heads.len();
    let mut total = 0.0;
    for (dep, &head) in heads.iter().enumerate().skip(1) {
        match usize::try_from(head) {
            Ok(h) if h < n1 && dep * n1 + h < scores.len() => total += scores[dep * n1 + h],
            _ => return f64::NEG_INFINITY,
        }
    }
    total
}

/// Second-order score of a tree: arc scores plus, for every arc, the score of its adjacent
/// sibling on the head's side (`sib[(dep * n1 + head) * n1 + sibling]`, `sibling == head` for
/// the innermost child on each side).
pub fn tree_score2(arc: &[f64], sib: &[f64], heads: &[i32]) -> f64 {
    let n1 = heads.len();
    if arc.len() != n1 * n1 || sib.len() != n1 * n1 * n1 || !is_tree(heads) {
        return f64::NEG_INFINITY;
    }
    let mut total = tree_score(arc, heads);
    for head in 0..n1 {
        // Right children, innermost first.
        let mut prev = head;
        for dep in head + 1..n1 {
            if heads[dep] as usize == head {
                total += sib[(dep * n1 + head) * n1 + prev];
                prev = dep;
            }
        }
        let mut prev = head;
        for dep in (1..head).rev() {
            if heads[dep] as usize == head {
                total += sib[(dep * n1 + head) * n1 + prev];
                prev = dep;
            }
        }
    }
    total
}

/// True when `heads` (with `heads[0] = -1`) is a tree rooted at 0: every word has a head in
/// `0..n1` other than itself and following heads from any word reaches 0.
pub fn is_tree(heads: &[i32]) -> bool {
    let n1 = heads.len();
    if n1 == 0 || heads[0] != -1 {
        return false;
    }
    // 0 = unvisited, 1 = on the current walk, 2 = reaches the root.
    let mut state = vec![0u8; n1];
    state[0] = 2;
    for start in 1..n1 {
        let mut walk = Vec::new();
        let mut node = start;
        while state[node] == 0 {
            state[node] = 1;
            walk.push(node);
            match usize::try_from(heads[node]) {
                Ok(h) if h < n1 && h != node => node = h,
                _ => return false,
            }
        }
        if state[node] == 1 {
            return false; // a cycle
        }
        for w in walk {
            state[w] = 2;
        }
    }
    true
}

/// Number of words whose head is ROOT.
pub fn root_children(heads: &[i32]) -> usize {
    heads.iter().skip(1).filter(|&&h| h == 0).count()
}

/// Checks a square score matrix: `n1 >= 1`, `len == n1 * n1`, no NaN, no `+inf` (ROOT row and
/// diagonal included, so that bad input never hides there). Returns the scores to decode:
/// borrowed, or a copy clamped to ±[`CLAMP`] when some finite score lies beyond it.
pub(crate) fn check_scores<'a>(what: &str, scores: &'a [f64], n1: usize) -> Result<Cow<'a, [f64]>> {
    if n1 == 0 {
        return Err(Error::InvalidArgument(format!("{what}: n1 must be at least 1 (ROOT)")));
    }
    let want = n1.checked_mul(n1).ok_or_else(|| Error::InvalidArgument(format!("{what}: n1 too large")))?;
    if scores.len() != want {
        return Err(Error::InvalidArgument(format!(
            "{what}: expected {n1}x{n1} = {want} scores, got {}",
            scores.len()
        )));
    }
    check_values(what, scores, n1)
}

/// Rejects NaN and `+inf`, naming the first bad entry as `[dep, head, ...]` in `n1`-radix;
/// returns the values, clamped to ±[`CLAMP`] (a copy) when some finite value lies beyond.
pub(crate) fn check_values<'a>(what: &str, values: &'a [f64], n1: usize) -> Result<Cow<'a, [f64]>> {
    let bad = |v: f64| v.is_nan() | (v == f64::INFINITY);
    let huge = |v: f64| (v.abs() > CLAMP) & (v != f64::NEG_INFINITY);
    // NaN, +inf and huge values in one test of two comparisons (as cheap as the NaN and +inf
    // test alone), one pass with no early exit (bitwise `|`), so the all-good scan vectorises.
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // the negated compare is what is true for NaN
    let odd = |v: f64| !(v.abs() <= CLAMP) & (v != f64::NEG_INFINITY);
    if !values.iter().fold(false, |any, &v| any | odd(v)) {
        return Ok(Cow::Borrowed(values));
    }
    if let Some(pos) = values.iter().position(|&v| bad(v)) {
        let mut idx = Vec::new();
        let mut rest = pos;
        let dims = if values.len() == n1 * n1 { 2 } else { 3 };
        for _ in 0..dims {
            idx.push(rest % n1);
            rest /= n1;
        }
        idx.reverse();
        let bad = if values[pos].is_nan() { "NaN" } else { "+inf" };
        return Err(Error::InvalidArgument(format!(
            "{what}: score {idx:?} is {bad} (scores must be finite or -inf)"
        )));
    }
    let mut clamped = Vec::new();
    clamped.try_reserve_exact(values.len()).map_err(|_| too_large(what, n1, values.len() * 8))?;
    clamped.extend(values.iter().map(|&v| if huge(v) { CLAMP.copysign(v) } else { v }));
    Ok(Cow::Owned(clamped))
}

fn no_tree(what: &str, single_root: bool) -> Error {
    let extra = if single_root { " with a single root" } else { "" };
    Error::NoSpanningTree(format!("{what}: the arcs that are not -inf admit no tree{extra}"))
}

#[cfg(test)]
pub(crate) mod brute {
    //! Brute-force enumeration of every tree of a small sentence, for the tests.
    use super::{is_tree, root_children};
    use crate::heads::is_projective;
    use proptest::prelude::*;

    /// `(n1, scores)` with n1 in `sizes`: small integers with many ties and some `-inf` when
    /// `ties`, else reals in [-10, 10).
    pub fn square(sizes: std::ops::Range<usize>, ties: bool) -> impl Strategy<Value = (usize, Vec<f64>)> {
        sizes.prop_flat_map(move |n1| (Just(n1), values(n1 * n1, ties)))
    }

    pub fn values(len: usize, ties: bool) -> BoxedStrategy<Vec<f64>> {
        if ties {
            let v = prop_oneof![8 => (-3i32..4).prop_map(f64::from), 1 => Just(f64::NEG_INFINITY)];
            proptest::collection::vec(v, len).boxed()
        } else {
            proptest::collection::vec(-10.0f64..10.0, len).boxed()
        }
    }

    /// Every tree over `n1` nodes (heads[0] = -1), optionally only projective / single-root ones.
    pub fn all_trees(n1: usize, projective: bool, single_root: bool) -> Vec<Vec<i32>> {
        let n = n1 - 1;
        let mut out = Vec::new();
        let mut heads = vec![0i32; n1];
        heads[0] = -1;
        let total = n1.pow(n as u32);
        for code in 0..total {
            let mut c = code;
            for h in heads.iter_mut().skip(1) {
                *h = (c % n1) as i32;
                c /= n1;
            }
            if !is_tree(&heads) {
                continue;
            }
            if single_root && root_children(&heads) != 1 {
                continue;
            }
            if projective && !is_projective(&heads[1..]) {
                continue;
            }
            out.push(heads.clone());
        }
        out
    }
}

#[cfg(test)]
mod limits {
    use super::*;

    #[test]
    fn an_allocation_that_cannot_be_had_is_an_error_naming_n() {
        let mut buf: Vec<f64> = vec![1.0];
        let err = fill("eisner", 3, &mut buf, usize::MAX / 8, 0.0).unwrap_err();
        assert!(err.to_string().contains("eisner: a sentence of n = 2 words needs"), "{err}");
        fill("eisner", 3, &mut buf, 9, -1.0).unwrap();
        assert_eq!(buf, vec![-1.0; 9]);
    }

    #[test]
    fn scores_beyond_the_clamp_are_clamped_in_a_copy() {
        let plain = [0.0, f64::NEG_INFINITY, -1e300, 1e300];
        assert!(matches!(check_scores("t", &plain, 2).unwrap(), Cow::Borrowed(_)));
        let masked = [f64::MIN, f64::NEG_INFINITY, -1e301, f64::MAX];
        let got = check_scores("t", &masked, 2).unwrap();
        assert_eq!(&*got, &[-CLAMP, f64::NEG_INFINITY, -CLAMP, CLAMP]);
        assert!(check_scores("t", &[f64::MIN, f64::NAN, 0.0, 0.0], 2)
            .unwrap_err()
            .to_string()
            .contains("NaN"));
        // Masked rows: every arc into words 2 and 3 at the float64 minimum still has trees.
        let n1 = 5;
        let mut s: Vec<f64> = (0..n1 * n1).map(|i| (i % 7) as f64).collect();
        s[2 * n1..4 * n1].fill(f64::MIN);
        for single_root in [true, false] {
            let heads = eisner(&s, n1, single_root).unwrap();
            assert!(is_tree(&heads));
            assert!(is_tree(&eisner2(&s, &vec![0.0; n1 * n1 * n1], n1, single_root).unwrap()));
            assert_eq!(eisner_kbest(&s, n1, 2, single_root).unwrap().len(), 2);
        }
    }

    #[test]
    fn a_poll_that_says_stop_stops_a_long_decode() {
        let n1 = 400; // n³/2 chart cells: several poll blocks
        let s: Vec<f64> = (0..n1 * n1).map(|i| ((i * 7919) % 13) as f64).collect();
        let mut polls = 0;
        let mut ws = EisnerWorkspace::new();
        let err = ws
            .decode_polled(&s, n1, true, &mut || {
                polls += 1;
                true
            })
            .unwrap_err();
        assert!(err.to_string().contains("eisner: stopped"), "{err}");
        assert_eq!(polls, 1);
        let mut polls = 0;
        let got = ws.decode_polled(&s, n1, true, &mut || {
            polls += 1;
            false
        });
        assert_eq!(got.unwrap(), eisner(&s, n1, true).unwrap());
        assert!(polls >= 1);
    }
}

#[cfg(test)]
mod sweep {
    //! Deterministic sweep: for every n <= 6, many random matrices of three kinds (small
    //! integers with ties, reals, reals with a `-inf` mask), every decoder against brute force.
    use super::brute::all_trees;
    use super::*;

    /// Random score values of three kinds from the core's one generator.
    trait Values {
        fn value(&mut self, kind: u64) -> f64;
    }
    impl Values for crate::util::Rng {
        fn value(&mut self, kind: u64) -> f64 {
            let r = self.next_u64();
            match kind {
                0 => (r % 3) as f64,
                1 => (r >> 11) as f64 / (1u64 << 53) as f64 * 10.0 - 5.0,
                _ if r.is_multiple_of(4) => f64::NEG_INFINITY,
                _ => (r % 5) as f64 - 2.0,
            }
        }
    }

    fn best_of(trees: &[Vec<i32>], score: impl Fn(&[i32]) -> f64) -> f64 {
        trees.iter().map(|t| score(t)).fold(f64::NEG_INFINITY, f64::max)
    }

    fn agree(got: Result<Vec<i32>>, trees: &[Vec<i32>], want: f64, score: impl Fn(&[i32]) -> f64) {
        match got {
            Ok(h) => {
                assert!(trees.contains(&h), "{h:?} not in the class");
                assert!((score(&h) - want).abs() <= 1e-9, "{} vs {want}", score(&h));
            }
            Err(Error::NoSpanningTree(_)) => assert_eq!(want, f64::NEG_INFINITY),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn every_decoder_matches_brute_force_up_to_six_words() {
        let mut rng = crate::util::Rng::new(7);
        let (mut cle_ws, mut eis_ws, mut e2_ws, mut kb_ws) =
            (CleWorkspace::new(), EisnerWorkspace::new(), Eisner2Workspace::new(), KBestWorkspace::new());
        for n1 in 2..=7 {
            for single_root in [true, false] {
                let all = all_trees(n1, false, single_root);
                let proj = all_trees(n1, true, single_root);
                for trial in 0..120 {
                    let kind = trial % 3;
                    let scores: Vec<f64> = (0..n1 * n1).map(|_| rng.value(kind)).collect();
                    let sib: Vec<f64> = (0..n1 * n1 * n1).map(|_| rng.value(kind)).collect();
                    let arc_score = |h: &[i32]| tree_score(&scores, h);
                    agree(cle_ws.decode(&scores, n1, single_root), &all, best_of(&all, arc_score), arc_score);
                    let want = best_of(&proj, arc_score);
                    agree(eis_ws.decode(&scores, n1, single_root), &proj, want, arc_score);
                    let score2 = |h: &[i32]| tree_score2(&scores, &sib, h);
                    let want2 = best_of(&proj, score2);
                    agree(e2_ws.decode(&scores, &sib, n1, single_root), &proj, want2, score2);
                    let mut ranked: Vec<f64> =
                        proj.iter().map(|t| arc_score(t)).filter(|s| *s > f64::NEG_INFINITY).collect();
                    ranked.sort_by(|a, b| b.total_cmp(a));
                    let k = 1 + (trial % 25) as usize;
                    ranked.truncate(k);
                    match kb_ws.decode(&scores, n1, k, single_root) {
                        Ok(list) => {
                            let got: Vec<f64> = list.iter().map(|(_, s)| *s).collect();
                            assert_eq!(got.len(), ranked.len());
                            for (g, w) in got.iter().zip(&ranked) {
                                assert!((g - w).abs() <= 1e-9, "{got:?} vs {ranked:?}");
                            }
                        }
                        Err(Error::NoSpanningTree(_)) => assert!(ranked.is_empty()),
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }
    }
}
