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
    #[inline]
    pub fn set(&mut self, n1: usize, s: usize, t: usize, value: f64, split: usize) {
        self.v[s * n1 + t] = value;
        self.vt[t * n1 + s] = value;
        self.bp[s * n1 + t] = split as u32;
    }
}

/// Max over `i` of `a[i] + b[i]` and its first arg-max (`-inf`, 0 when empty or all `-inf`).
#[inline]
pub(crate) fn max_plus(a: &[f64], b: &[f64]) -> (f64, usize) {
    let mut best = f64::NEG_INFINITY;
    let mut arg = 0;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let v = x + y;
        if v > best {
            best = v;
            arg = i;
        }
    }
    (best, arg)
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
        for chart in [&mut self.cr, &mut self.cl, &mut self.ir, &mut self.il] {
            chart.reset(n1);
        }
        for s in 0..n1 {
            self.cr.set(n1, s, s, 0.0, s);
            self.cl.set(n1, s, s, 0.0, s);
        }
        // O(n³): n² spans, each maximised over O(n) split points.
        for width in 1..n1 {
            for s in 0..n1 - width {
                let t = s + width;
                // Incomplete spans: cr[s][r] + cl[r+1][t], s <= r < t.
                let (join, r) = if s == 0 && single_root {
                    (self.cl.vt[t * n1 + 1], 0)
                } else {
                    let (v, i) = max_plus(
                        &self.cr.v[s * n1 + s..s * n1 + t],
                        &self.cl.vt[t * n1 + s + 1..t * n1 + t + 1],
                    );
                    (v, s + i)
                };
                self.ir.set(n1, s, t, join + scores[t * n1 + s], r);
                if s > 0 {
                    self.il.set(n1, s, t, join + scores[s * n1 + t], r);
                }
                // Complete right: ir[s][r] + cr[r][t], s < r <= t.
                let (v, i) = max_plus(
                    &self.ir.v[s * n1 + s + 1..s * n1 + t + 1],
                    &self.cr.vt[t * n1 + s + 1..t * n1 + t + 1],
                );
                self.cr.set(n1, s, t, v, s + 1 + i);
                // Complete left: cl[s][r] + il[r][t], s <= r < t (ROOT is never a dependent).
                if s > 0 {
                    let (v, i) =
                        max_plus(&self.cl.v[s * n1 + s..s * n1 + t], &self.il.vt[t * n1 + s..t * n1 + t]);
                    self.cl.set(n1, s, t, v, s + i);
                }
            }
        }
        if self.cr.v[n1 - 1] == f64::NEG_INFINITY {
            return Err(no_tree("eisner", single_root));
        }
        self.backtrack(n1, &mut heads);
        Ok(heads)
    }

    fn backtrack(&mut self, n1: usize, heads: &mut [i32]) {
        self.stack.clear();
        self.stack.push((CR, 0, n1 - 1));
        while let Some((kind, s, t)) = self.stack.pop() {
            if s == t {
                continue;
            }
            match kind {
                CR => {
                    let r = self.cr.bp[s * n1 + t] as usize;
                    self.stack.extend([(IR, s, r), (CR, r, t)]);
                }
                CL => {
                    let r = self.cl.bp[s * n1 + t] as usize;
                    self.stack.extend([(CL, s, r), (IL, r, t)]);
                }
                IR | IL => {
                    let (r, dep, head) = if kind == IR {
                        (self.ir.bp[s * n1 + t], t, s)
                    } else {
                        (self.il.bp[s * n1 + t], s, t)
                    };
                    heads[dep] = head as i32;
                    let r = r as usize;
                    self.stack.extend([(CR, s, r), (CL, r + 1, t)]);
                }
                _ => unreachable!("chart kinds are CR, CL, IR, IL"),
            }
        }
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
