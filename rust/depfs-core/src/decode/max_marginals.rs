//! Arc max-marginals of first-order projective parsing: for every arc, the score of the
//! best projective tree that contains it. Viterbi inside-outside over Eisner's
//! complete/incomplete spans (the max-product counterpart of the inside-outside
//! algorithm; max-marginals as confidence and pruning scores: Weiss & Taskar 2010,
//! "Structured prediction cascades"). O(n³) time, O(n²) space.
//!
//! Used for confidence (a word's tree margin: the best tree's score minus the best tree in
//! which the word has another head) and for pruning (DynFS's tree margin, which rules out
//! the arcs of no good tree after round 1). The inside pass is [`EisnerWorkspace::forward`]'s;
//! the outside pass uses the same by-width layout, so its O(n³) work also runs as vector
//! loops, one per (width, split offset): about three Eisner passes in all.

use super::eisner::{max_into, EisnerWorkspace};
use super::{check_scores, fill, no_tree, Poller};
use crate::error::Result;

const NEG: f64 = f64::NEG_INFINITY;

/// Arc max-marginals `mm[dep * n1 + head]` (`-inf` where no projective tree, with ROOT
/// limited to one child when `single_root`, contains the arc) and the best tree's score.
/// Same conventions as [`super::eisner`].
pub fn arc_max_marginals(scores: &[f64], n1: usize, single_root: bool) -> Result<(Vec<f64>, f64)> {
    let mut ws = MaxMarginals::default();
    let best = ws.compute(scores, n1, single_root)?;
    Ok((std::mem::take(&mut ws.mm), best))
}

/// Reusable charts of [`arc_max_marginals`] (keep one per thread): the inside charts and
/// their outside counterparts, by width (`chart[w * n1 + s]` is the span (s, s + w)).
#[derive(Default, Debug, Clone)]
pub struct MaxMarginals {
    inside: EisnerWorkspace,
    ocr: Vec<f64>,
    ocl: Vec<f64>,
    oir: Vec<f64>,
    oil: Vec<f64>,
    ojoin: Vec<f64>,
    /// `mm[dep * n1 + head]` after [`Self::compute`].
    pub mm: Vec<f64>,
}

impl MaxMarginals {
    /// Fills [`Self::mm`] for `scores[dep * n1 + head]` and returns the best tree's score;
    /// an error when no projective tree exists. O(n³).
    pub fn compute(&mut self, scores: &[f64], n1: usize, single_root: bool) -> Result<f64> {
        const WHAT: &str = "max-marginals";
        let scores = &*check_scores(WHAT, scores, n1)?;
        fill(WHAT, n1, &mut self.mm, n1 * n1, NEG)?;
        if n1 == 1 {
            return Ok(0.0);
        }
        let ins = &mut self.inside;
        ins.forward(WHAT, scores, n1, single_root, &mut Poller::new(&mut || false))?;
        let (cr, cl, ir, il) = (&ins.cr, &ins.cl, &ins.ir, &ins.il);
        let best = cr[(n1 - 1) * n1];
        if best == NEG {
            return Err(no_tree(WHAT, single_root));
        }
        for chart in [&mut self.ocr, &mut self.ocl, &mut self.oir, &mut self.oil, &mut self.ojoin] {
            fill(WHAT, n1, chart, n1 * n1, NEG)?;
        }
        let (ocr, ocl, oir, oil, ojoin) =
            (&mut self.ocr, &mut self.ocl, &mut self.oir, &mut self.oil, &mut self.ojoin);
        // The whole sentence, headed at ROOT.
        ocr[(n1 - 1) * n1] = 0.0;
        // Outside, pushed from each item to its parts, widest spans first; within a width,
        // complete spans feed incomplete ones, which feed their join. For a width w and
        // split offset j, the parts of all spans s are contiguous slices.
        for w in (1..n1).rev() {
            let m = n1 - w;
            let row = w * n1;
            let (narrow, wide) = ocr.split_at_mut(row);
            let o = &wide[..m];
            // cr(s, s+w) = ir(s, s+j) + cr(s+j, s+w), 0 < j <= w.
            for j in 1..=w {
                max_into(&mut oir[j * n1..j * n1 + m], o, &cr[(w - j) * n1 + j..(w - j) * n1 + j + m]);
                if j < w {
                    let b = (w - j) * n1 + j;
                    max_into(&mut narrow[b..b + m], o, &ir[j * n1..j * n1 + m]);
                }
            }
            let (narrow, wide) = ocl.split_at_mut(row);
            let o = &wide[..m];
            // cl(s, s+w) = cl(s, s+j) + il(s+j, s+w), 0 <= j < w.
            for j in 0..w {
                let b = (w - j) * n1 + j;
                max_into(&mut oil[b..b + m], o, &cl[j * n1..j * n1 + m]);
                if j > 0 {
                    max_into(&mut narrow[j * n1..j * n1 + m], o, &il[b..b + m]);
                }
            }
            // An incomplete span's outside, less its arc, is its join's.
            for s in 0..m {
                let right = oir[row + s] + scores[(s + w) * n1 + s];
                let left = if s == 0 { NEG } else { oil[row + s] + scores[s * n1 + s + w] };
                ojoin[row + s] = right.max(left);
            }
            // join(s, s+w) = cr(s, s+j) + cl(s+j+1, s+w), 0 <= j < w; with a single root,
            // ROOT's span (s = 0) only from j = 0 (the empty span at ROOT). Empty spans
            // (width 0) have no parts: their outside is not needed.
            let first = usize::from(single_root);
            let o = &ojoin[row..row + m];
            for j in 0..w {
                let b = (w - 1 - j) * n1 + j + 1;
                if j > 0 {
                    max_into(&mut ocr[j * n1 + first..j * n1 + m], &o[first..], &cl[b + first..b + m]);
                }
                if j + 1 < w {
                    max_into(&mut ocl[b + first..b + m], &o[first..], &cr[j * n1 + first..j * n1 + m]);
                }
            }
            if single_root && w > 1 {
                let b = (w - 1) * n1 + 1;
                ocl[b] = ocl[b].max(o[0] + cr[0]);
            }
        }
        for w in 1..n1 {
            for s in 0..n1 - w {
                let (t, at) = (s + w, w * n1 + s);
                self.mm[t * n1 + s] = ir[at] + oir[at];
                if s > 0 {
                    self.mm[s * n1 + t] = il[at] + oil[at];
                }
            }
        }
        Ok(best)
    }
}

#[cfg(test)]
mod tests {
    use super::super::brute::{all_trees, square};
    use super::super::tree_score;
    use super::*;
    use proptest::prelude::*;

    /// The max-marginals against every projective tree: for each arc, the best score
    /// of a tree containing it (-inf when none does).
    fn check(n1: usize, scores: &[f64], single_root: bool) {
        let trees = all_trees(n1, true, single_root);
        let got = arc_max_marginals(scores, n1, single_root);
        let scored: Vec<(Vec<i32>, f64)> = trees
            .into_iter()
            .map(|h| {
                let s = tree_score(scores, &h);
                (h, s)
            })
            .filter(|(_, s)| *s > NEG)
            .collect();
        let Ok((mm, best)) = got else {
            assert!(scored.is_empty(), "no tree found but one exists");
            return;
        };
        let top = scored.iter().map(|(_, s)| *s).fold(NEG, f64::max);
        assert!((best - top).abs() < 1e-9, "best {best} vs {top}");
        for d in 1..n1 {
            for h in 0..n1 {
                let want =
                    scored.iter().filter(|(t, _)| t[d] == h as i32).map(|(_, s)| *s).fold(NEG, f64::max);
                let g = mm[d * n1 + h];
                assert!(
                    (g == NEG && want == NEG) || (g - want).abs() < 1e-9,
                    "arc {h}->{d}: {g} vs {want} (single_root {single_root})"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn max_marginals_are_the_best_tree_through_each_arc((n1, s) in square(2..6, true), single_root: bool) {
            check(n1, &s, single_root);
        }

        #[test]
        fn max_marginals_on_real_valued_scores((n1, s) in square(2..7, false), single_root: bool) {
            check(n1, &s, single_root);
        }
    }
}
