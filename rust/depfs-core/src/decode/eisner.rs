//! First-order projective decoding: Eisner (1996), "Three new probabilistic models for
//! dependency parsing: an exploration", in the complete/incomplete span formulation (McDonald,
//! Crammer & Pereira 2005). O(n³) time, O(n²) space.
//!
//! Spans `(s, t)` with `s < t` over positions 0..=n (0 = ROOT). ROOT may only be a head. With
//! `single_root`, the incomplete span `ROOT → t` may only be built from the empty span at ROOT,
//! so ROOT gets exactly one child.

use super::{check_scores, fill, no_tree, Poller};
use crate::error::Result;

/// One chart: values in both orientations (`v[s * n1 + t]` and `vt[t * n1 + s]`) so the inner
/// max-plus loops read contiguous memory, plus the best split point of each span.
#[derive(Default, Debug, Clone)]
pub(crate) struct Chart {
    pub v: Vec<f64>,
    pub vt: Vec<f64>,
    pub bp: Vec<u32>,
}

impl Chart {
    pub fn reset(&mut self, what: &str, n1: usize) -> Result<()> {
        for buf in [&mut self.v, &mut self.vt] {
            fill(what, n1, buf, n1 * n1, f64::NEG_INFINITY)?;
        }
        fill(what, n1, &mut self.bp, n1 * n1, 0)
    }
    #[inline]
    pub fn set(&mut self, n1: usize, s: usize, t: usize, value: f64, split: usize) {
        self.v[s * n1 + t] = value;
        self.vt[t * n1 + s] = value;
        self.bp[s * n1 + t] = split as u32;
    }
}

/// Max over `i` of `a[i] + b[i]` and its first arg-max (`-inf`, 0 when empty or all `-inf`).
/// Runs on four independent lanes, each keeping its best value and index, so the additions and
/// compare-selects pipeline (and vectorise); the lanes are merged keeping the first index on
/// ties. O(len).
#[inline]
pub(crate) fn max_plus(a: &[f64], b: &[f64]) -> (f64, usize) {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut best = [f64::NEG_INFINITY; 4];
    let mut arg = [0usize; 4];
    let chunks = len / 4;
    for c in 0..chunks {
        let i = 4 * c;
        let (x, y) = (&a[i..i + 4], &b[i..i + 4]);
        for k in 0..4 {
            let v = x[k] + y[k];
            let better = v > best[k];
            best[k] = if better { v } else { best[k] };
            arg[k] = if better { i + k } else { arg[k] };
        }
    }
    let (mut top, mut at) = (f64::NEG_INFINITY, 0);
    for k in 0..4 {
        if best[k] > top || (best[k] == top && arg[k] < at) {
            top = best[k];
            at = arg[k];
        }
    }
    for i in 4 * chunks..len {
        let v = a[i] + b[i];
        if v > top {
            top = v;
            at = i;
        }
    }
    if top == f64::NEG_INFINITY {
        return (top, 0);
    }
    (top, at)
}

/// `acc[i] = max(acc[i], a[i] + b[i])`: the inner loop of the chart, over all spans of one
/// width at once (contiguous in the by-width layout, so it compiles to packed adds and maxes).
#[inline(always)]
fn max_into(acc: &mut [f64], a: &[f64], b: &[f64]) {
    for ((o, x), y) in acc.iter_mut().zip(a).zip(b) {
        let v = x + y;
        *o = if v > *o { v } else { *o };
    }
}

/// [`max_into`] for each split offset `j` in `js`, on the `m` entries at
/// `(acc, a, b)[at(j)]`: all the offsets of one chart row in one call. A call per
/// (row, offset) cost more than its work on short sentences, whose rows are a few
/// entries long (a 13-word sentence's average is 5). O(|js| · m).
#[inline(never)]
pub(crate) fn max_into_each(
    acc: &mut [f64],
    a: &[f64],
    b: &[f64],
    m: usize,
    js: std::ops::Range<usize>,
    at: impl Fn(usize) -> (usize, usize, usize),
) {
    for j in js {
        let (o, x, y) = at(j);
        max_into(&mut acc[o..o + m], &a[x..x + m], &b[y..y + m]);
    }
}

/// Reusable charts of [`eisner`]; keep one per thread and call [`EisnerWorkspace::decode`].
///
/// Charts are stored by width: `chart[w * n1 + s]` is the span `(s, s + w)`. For a fixed width
/// and split offset, the operands of all spans `s` are then contiguous, so the O(n³) work runs
/// as long vector loops, one per (width, offset) pair.
#[derive(Default, Debug, Clone)]
pub struct EisnerWorkspace {
    n1: usize,
    /// Complete span headed at its left end.
    pub(crate) cr: Vec<f64>,
    /// Complete span headed at its right end.
    pub(crate) cl: Vec<f64>,
    /// Incomplete span with arc left end → right end.
    pub(crate) ir: Vec<f64>,
    /// Incomplete span with arc right end → left end.
    pub(crate) il: Vec<f64>,
    /// Best `cr[s][r] + cl[r+1][t]` of each span (an incomplete span before its arc score).
    join: Vec<f64>,
    stack: Vec<(u8, usize, usize)>,
}

pub(crate) const CR: u8 = 0;
pub(crate) const CL: u8 = 1;
pub(crate) const IR: u8 = 2;
pub(crate) const IL: u8 = 3;

impl EisnerWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// Best projective tree of `scores[dep * n1 + head]`; see [`eisner`].
    pub fn decode(&mut self, scores: &[f64], n1: usize, single_root: bool) -> Result<Vec<i32>> {
        self.decode_polled(scores, n1, single_root, &mut || false)
    }

    /// [`Self::decode`] that calls `poll` every few million chart cells and stops with an
    /// error when it returns true (a caller's Ctrl-C).
    pub fn decode_polled(
        &mut self,
        scores: &[f64],
        n1: usize,
        single_root: bool,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<i32>> {
        let scores = check_scores("eisner", scores, n1)?;
        let mut heads = vec![-1i32; n1];
        if n1 == 1 {
            return Ok(heads);
        }
        self.forward("eisner", &scores, n1, single_root, &mut Poller::new(poll))?;
        if self.cr[(n1 - 1) * n1] == f64::NEG_INFINITY {
            return Err(no_tree("eisner", single_root));
        }
        self.backtrack(single_root, &mut heads);
        Ok(heads)
    }

    /// Best score of chart item `kind` (0 = complete right, 1 = complete left, 2 = incomplete
    /// right, 3 = incomplete left) over span (s, t), after [`Self::forward`].
    pub(crate) fn value(&self, kind: u8, s: usize, t: usize) -> f64 {
        let at = (t - s) * self.n1 + s;
        match kind {
            CR => self.cr[at],
            CL => self.cl[at],
            IR => self.ir[at],
            _ => self.il[at],
        }
    }

    /// Fills the charts (values only) for checked scores with `n1 >= 2`. O(n³).
    pub(crate) fn forward(
        &mut self,
        what: &str,
        scores: &[f64],
        n1: usize,
        single_root: bool,
        poller: &mut Poller<'_>,
    ) -> Result<()> {
        self.n1 = n1;
        for chart in [&mut self.cr, &mut self.cl, &mut self.ir, &mut self.il, &mut self.join] {
            fill(what, n1, chart, n1 * n1, f64::NEG_INFINITY)?;
        }
        self.cr[..n1].fill(0.0);
        self.cl[..n1].fill(0.0);
        let neg = f64::NEG_INFINITY;
        // O(n³): for each width w and split offset j, one pass over the n + 1 - w spans.
        for w in 1..n1 {
            let m = n1 - w;
            let row = w * n1;
            poller.add(what, 3 * m * w)?;
            // Incomplete spans (s, s+w): cr(s, s+j) + cl(s+j+1, s+w), 0 <= j < w.
            let acc = &mut self.join[row..row + m];
            max_into_each(acc, &self.cr, &self.cl, m, 0..w, |j| (0, j * n1, (w - 1 - j) * n1 + j + 1));
            if single_root {
                acc[0] = self.cl[(w - 1) * n1 + 1]; // ROOT's only child: empty span at ROOT
            }
            for s in 0..m {
                self.ir[row + s] = acc[s] + scores[(s + w) * n1 + s];
                self.il[row + s] = acc[s] + scores[s * n1 + s + w];
            }
            self.il[row] = neg; // ROOT is never a dependent
                                // Complete right (s, s+w): ir(s, s+j) + cr(s+j, s+w), 0 < j <= w.
            let (lower, upper) = self.cr.split_at_mut(row);
            let acc = &mut upper[..m];
            max_into_each(acc, &self.ir, lower, m, 1..w + 1, |j| (0, j * n1, (w - j) * n1 + j));
            // Complete left (s, s+w): cl(s, s+j) + il(s+j, s+w), 0 <= j < w.
            let (lower, upper) = self.cl.split_at_mut(row);
            let acc = &mut upper[..m];
            max_into_each(acc, lower, &self.il, m, 0..w, |j| (0, j * n1, (w - j) * n1 + j));
            acc[0] = neg;
        }
        Ok(())
    }

    /// First split offset `j` in `range` with `a(j) + b(j) == value` (the same sums as in the
    /// forward pass, so the comparison is exact).
    fn first_split(range: std::ops::Range<usize>, value: f64, sum: impl Fn(usize) -> f64) -> usize {
        let start = range.start;
        range.into_iter().find(|&j| sum(j) == value).unwrap_or(start)
    }

    /// Follows the best tree down from the whole sentence, finding each split again. O(n²).
    fn backtrack(&mut self, single_root: bool, heads: &mut [i32]) {
        let n1 = self.n1;
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push((CR, 0, n1 - 1));
        while let Some((kind, s, w)) = stack.pop() {
            if w == 0 {
                continue;
            }
            let at = w * n1 + s;
            match kind {
                CR => {
                    let j = Self::first_split(1..w + 1, self.cr[at], |j| {
                        self.ir[j * n1 + s] + self.cr[(w - j) * n1 + s + j]
                    });
                    stack.extend([(IR, s, j), (CR, s + j, w - j)]);
                }
                CL => {
                    let j = Self::first_split(0..w, self.cl[at], |j| {
                        self.cl[j * n1 + s] + self.il[(w - j) * n1 + s + j]
                    });
                    stack.extend([(CL, s, j), (IL, s + j, w - j)]);
                }
                _ => {
                    if kind == IR {
                        heads[s + w] = s as i32;
                    } else {
                        heads[s] = (s + w) as i32;
                    }
                    let j = if s == 0 && single_root {
                        0
                    } else {
                        Self::first_split(0..w, self.join[at], |j| {
                            self.cr[j * n1 + s] + self.cl[(w - 1 - j) * n1 + s + j + 1]
                        })
                    };
                    stack.extend([(CR, s, j), (CL, s + j + 1, w - 1 - j)]);
                }
            }
        }
        self.stack = stack;
    }
}

/// Best projective tree of `scores[dep * n1 + head]` (n1 = n + 1, index 0 = ROOT), with ROOT
/// restricted to one child when `single_root`. Returns heads with `heads[0] = -1`. O(n³).
pub fn eisner(scores: &[f64], n1: usize, single_root: bool) -> Result<Vec<i32>> {
    EisnerWorkspace::new().decode(scores, n1, single_root)
}

#[cfg(test)]
mod tests {
    use super::super::brute::{all_trees, square};
    use super::super::tree_score;
    use super::*;
    use crate::Error;
    use proptest::prelude::*;

    fn check(scores: &[f64], n1: usize, single_root: bool) {
        let trees = all_trees(n1, true, single_root);
        let want = trees.iter().map(|t| tree_score(scores, t)).fold(f64::NEG_INFINITY, f64::max);
        match eisner(scores, n1, single_root) {
            Ok(heads) => {
                assert!(trees.contains(&heads), "{heads:?} is not a valid projective tree");
                assert_eq!(tree_score(scores, &heads), want, "scores {scores:?}");
            }
            Err(Error::NoSpanningTree(_)) => assert_eq!(want, f64::NEG_INFINITY, "scores {scores:?}"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn hand_example() {
        // The non-projective optimum 1 <- 3, 2 <- 0, 3 <- 0... is not reachable; check a fixed case.
        let n1 = 4;
        let mut s = vec![0.0; 16];
        s[n1 + 3] = 5.0; // 1 <- 3
        s[2 * n1] = 5.0; // 2 <- 0
        s[3 * n1 + 2] = 1.0; // 3 <- 2
                             // 1 <- 3 crosses 2 <- 0 ... with ROOT at 0 an arc 0->2 and 3->1 cross.
        let heads = eisner(&s, n1, false).unwrap();
        assert!(crate::heads::is_projective(&heads[1..]));
        assert_eq!(tree_score(&s, &heads), 6.0);
    }

    #[test]
    fn errors_and_trivial() {
        assert!(matches!(eisner(&[0.0; 3], 2, true), Err(Error::InvalidArgument(_))));
        assert_eq!(eisner(&[0.0], 1, true).unwrap(), vec![-1]);
        let ni = f64::NEG_INFINITY;
        let s = [0.0, 0.0, 0.0, 1.0, 0.0, ni, 1.0, ni, 0.0];
        assert!(matches!(eisner(&s, 3, true), Err(Error::NoSpanningTree(_))));
        assert_eq!(eisner(&s, 3, false).unwrap(), vec![-1, 0, 0]);
    }

    #[test]
    fn max_plus_keeps_the_first_arg_max() {
        // Eleven entries: two chunks on the four lanes, then a tail of three. The maximum 3 is
        // tied within lane 2 (indices 2 and 6), across lanes 2 and 3 (3 at 7) and in the tail
        // (10): the first index, 2, wins.
        let zeros = [0.0; 11];
        let a = [0.0, 1.0, 3.0, 1.0, 0.0, 2.0, 3.0, 3.0, 3.0, 0.0, 3.0];
        assert_eq!(max_plus(&a, &zeros), (3.0, 2));
        assert_eq!(max_plus(&zeros, &a), (3.0, 2));
        // A later lane holding the earlier index: lane 0 finds 3 at 4, lane 1 at 1.
        let a = [0.0, 3.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0];
        assert_eq!(max_plus(&a, &zeros), (3.0, 1));
        // The sum decides, not either operand; all -inf (or empty) gives (-inf, 0).
        let b = [0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5];
        assert_eq!(max_plus(&a, &b), (3.0, 4));
        let ni = f64::NEG_INFINITY;
        assert_eq!(max_plus(&[ni; 6], &a), (ni, 0));
        assert_eq!(max_plus(&[], &a), (ni, 0));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn matches_brute_force_ties((n1, scores) in square(2..7, true), single_root in any::<bool>()) {
            check(&scores, n1, single_root);
        }

        #[test]
        fn matches_brute_force_real((n1, scores) in square(2..7, false)) {
            check(&scores, n1, true);
            check(&scores, n1, false);
        }
    }
}
