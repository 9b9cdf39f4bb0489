//! First-order projective decoding: Eisner (1996), "Three new probabilistic models for
//! dependency parsing: an exploration", in the complete/incomplete span formulation (McDonald,
//! Crammer & Pereira 2005). O(n³) time, O(n²) space.
//!
//! Spans `(s, t)` with `s < t` over positions 0..=n (0 = ROOT). ROOT may only be a head. With
//! `single_root`, the incomplete span `ROOT → t` may only be built from the empty span at ROOT,
//! so ROOT gets exactly one child.

use super::{check_scores, no_tree};
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
    pub fn reset(&mut self, n1: usize) {
        for buf in [&mut self.v, &mut self.vt] {
            buf.clear();
            buf.resize(n1 * n1, f64::NEG_INFINITY);
        }
        self.bp.clear();
        self.bp.resize(n1 * n1, 0);
    }
    /// Stores a value without a split point (recomputed on backtracking).
    #[inline]
    pub fn put(&mut self, n1: usize, s: usize, t: usize, value: f64) {
        self.v[s * n1 + t] = value;
        self.vt[t * n1 + s] = value;
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

/// Max over `i` of `a[i] + b[i]` (`-inf` when empty), on eight independent lanes so that it
/// compiles to packed adds and maxes. O(len).
#[inline]
pub(crate) fn max_plus_value(a: &[f64], b: &[f64]) -> f64 {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut lanes = [f64::NEG_INFINITY; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for k in 0..8 {
            let v = x[k] + y[k];
            lanes[k] = if v > lanes[k] { v } else { lanes[k] };
        }
    }
    let mut best = f64::NEG_INFINITY;
    for v in lanes.into_iter().chain(ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x + y)) {
        best = if v > best { v } else { best };
    }
    best
}

/// First `i` with `a[i] + b[i] == value` (the same sums as [`max_plus_value`], so the
/// comparison is exact), or 0.
#[inline]
fn first_reaching(a: &[f64], b: &[f64], value: f64) -> usize {
    a.iter().zip(b).position(|(x, y)| x + y == value).unwrap_or(0)
}

/// Reusable charts of [`eisner`]; keep one per thread and call [`EisnerWorkspace::decode`].
#[derive(Default, Debug, Clone)]
pub struct EisnerWorkspace {
    /// Complete span headed at its left end `s`.
    cr: Chart,
    /// Complete span headed at its right end `t`.
    cl: Chart,
    /// Incomplete span, arc `s → t`.
    ir: Chart,
    /// Incomplete span, arc `t → s`.
    il: Chart,
    stack: Vec<(u8, usize, usize)>,
    n1: usize,
}

const CR: u8 = 0;
const CL: u8 = 1;
const IR: u8 = 2;
const IL: u8 = 3;

impl EisnerWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// Best projective tree of `scores[dep * n1 + head]`; see [`eisner`].
    pub fn decode(&mut self, scores: &[f64], n1: usize, single_root: bool) -> Result<Vec<i32>> {
        check_scores("eisner", scores, n1)?;
        let mut heads = vec![-1i32; n1];
        if n1 == 1 {
            return Ok(heads);
        }
        self.n1 = n1;
        for chart in [&mut self.cr, &mut self.cl, &mut self.ir, &mut self.il] {
            chart.reset(n1);
        }
        for s in 0..n1 {
            self.cr.set(n1, s, s, 0.0, s);
            self.cl.set(n1, s, s, 0.0, s);
        }
        // O(n³): n² spans, each maximised over O(n) split points. Only values are kept; the
        // O(n) spans of the best tree find their split points again while backtracking.
        for width in 1..n1 {
            for s in 0..n1 - width {
                let t = s + width;
                let join = if s == 0 && single_root {
                    self.cl.vt[t * n1 + 1]
                } else {
                    max_plus_value(self.join_left(s, t), self.join_right(s, t))
                };
                self.ir.put(n1, s, t, join + scores[t * n1 + s]);
                if s > 0 {
                    self.il.put(n1, s, t, join + scores[s * n1 + t]);
                }
                let (a, b) = self.right_parts(s, t);
                let v = max_plus_value(a, b);
                self.cr.put(n1, s, t, v);
                if s > 0 {
                    let (a, b) = self.left_parts(s, t);
                    let v = max_plus_value(a, b);
                    self.cl.put(n1, s, t, v);
                }
            }
        }
        if self.cr.v[n1 - 1] == f64::NEG_INFINITY {
            return Err(no_tree("eisner", single_root));
        }
        self.backtrack(single_root, &mut heads);
        Ok(heads)
    }

    /// Split-point operands of an incomplete span: `cr[s][r]` and `cl[r+1][t]`, `s <= r < t`.
    fn join_left(&self, s: usize, t: usize) -> &[f64] {
        let n1 = self.n1;
        &self.cr.v[s * n1 + s..s * n1 + t]
    }
    fn join_right(&self, s: usize, t: usize) -> &[f64] {
        let n1 = self.n1;
        &self.cl.vt[t * n1 + s + 1..t * n1 + t + 1]
    }
    /// Operands of a complete right span: `ir[s][r]` and `cr[r][t]`, `s < r <= t`.
    fn right_parts(&self, s: usize, t: usize) -> (&[f64], &[f64]) {
        let n1 = self.n1;
        (&self.ir.v[s * n1 + s + 1..s * n1 + t + 1], &self.cr.vt[t * n1 + s + 1..t * n1 + t + 1])
    }
    /// Operands of a complete left span: `cl[s][r]` and `il[r][t]`, `s <= r < t`.
    fn left_parts(&self, s: usize, t: usize) -> (&[f64], &[f64]) {
        let n1 = self.n1;
        (&self.cl.v[s * n1 + s..s * n1 + t], &self.il.vt[t * n1 + s..t * n1 + t])
    }

    /// Follows the best tree down from the whole sentence, finding each split again. O(n²).
    fn backtrack(&mut self, single_root: bool, heads: &mut [i32]) {
        let n1 = self.n1;
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push((CR, 0, n1 - 1));
        while let Some((kind, s, t)) = stack.pop() {
            if s == t {
                continue;
            }
            match kind {
                CR => {
                    let (a, b) = self.right_parts(s, t);
                    let r = s + 1 + first_reaching(a, b, self.cr.v[s * n1 + t]);
                    stack.extend([(IR, s, r), (CR, r, t)]);
                }
                CL => {
                    let (a, b) = self.left_parts(s, t);
                    let r = s + first_reaching(a, b, self.cl.v[s * n1 + t]);
                    stack.extend([(CL, s, r), (IL, r, t)]);
                }
                IR | IL => {
                    let (dep, head) = if kind == IR { (t, s) } else { (s, t) };
                    heads[dep] = head as i32;
                    let r = if s == 0 && single_root {
                        0
                    } else {
                        let (a, b) = (self.join_left(s, t), self.join_right(s, t));
                        s + first_reaching(a, b, max_plus_value(a, b))
                    };
                    stack.extend([(CR, s, r), (CL, r + 1, t)]);
                }
                _ => unreachable!("chart kinds are CR, CL, IR, IL"),
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
        assert!(super::super::is_projective(&heads));
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
