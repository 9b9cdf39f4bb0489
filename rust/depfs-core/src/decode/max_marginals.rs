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
//!
//! Pruning needs only the arcs of good trees. [`MaxMarginals::compute_within`] takes the
//! margin `delta` and pushes outside scores only from the items of some tree within `delta`
//! of the best (an item whose best tree is worse passes on nothing that matters): the arcs
//! within `delta` get their exact max-marginal, the others a value below `best - delta`.
//! A row with few items left pushes them one by one. On DynFS's round-1 scores (en_ewt
//! test, `delta` = 2) the max-marginals then take 174 M instructions against 284 M with
//! the whole outside pass, about 100 M of them the inside pass (callgrind).

use super::eisner::{max_into_each, EisnerWorkspace};
use super::{check_scores, fill, no_tree, Poller};
use crate::error::Result;

const NEG: f64 = f64::NEG_INFINITY;

/// Arc max-marginals `mm[dep * n1 + head]` (`-inf` where no projective tree, with ROOT
/// limited to one child when `single_root`, contains the arc) and the best tree's score.
/// Same conventions as [`super::eisner`].
pub fn arc_max_marginals(scores: &[f64], n1: usize, single_root: bool) -> Result<(Vec<f64>, f64)> {
    let mut ws = MaxMarginals::default();
    let best = ws.compute_within(scores, n1, single_root, f64::INFINITY)?;
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
    /// One row's outside scores, those of items of no good tree set to -inf.
    orow: Vec<f64>,
    /// The items of one row that are in a good tree.
    live: Vec<usize>,
    /// `mm[dep * n1 + head]` after [`Self::compute_within`].
    pub mm: Vec<f64>,
}

impl MaxMarginals {
    /// Fills [`Self::mm`] for `scores[dep * n1 + head]` and returns the best tree's score
    /// `best`; an error when no projective tree exists. Exact for every arc whose best tree
    /// is within `delta` of `best` (all of them when `delta` is +inf); for the other arcs,
    /// some value below `best - delta` (the best tree through the arc that passes only
    /// through items of trees within `delta`; -inf when there is none). O(n³) (the inside
    /// pass), the outside pass O(n) per item of a good tree.
    pub fn compute_within(
        &mut self,
        scores: &[f64],
        n1: usize,
        single_root: bool,
        delta: f64,
    ) -> Result<f64> {
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
        // An item is in a good tree when its inside plus outside reaches `cut`. The slack
        // keeps an arc whose sum rounds a hair below in (its tree is scored in another
        // order); exactness is only promised at or above `best - delta`.
        let cut = best - delta - 1e-9 * (1.0 + best.abs());
        for chart in [&mut self.ocr, &mut self.ocl, &mut self.oir, &mut self.oil, &mut self.ojoin] {
            fill(WHAT, n1, chart, n1 * n1, NEG)?;
        }
        fill(WHAT, n1, &mut self.orow, n1, NEG)?;
        let (ocr, ocl, oir, oil, ojoin) =
            (&mut self.ocr, &mut self.ocl, &mut self.oir, &mut self.oil, &mut self.ojoin);
        let (orow, live) = (&mut self.orow, &mut self.live);
        // One row's live outside scores into `orow[..m]` (-inf for the others) and their
        // spans into `live`; true when few enough are live to push them one by one (a
        // judgement, not tuned: a vector pass over a row costs about four single pushes).
        let keep = |orow: &mut [f64], live: &mut Vec<usize>, out: &[f64], inside: &[f64]| {
            live.clear();
            for s in 0..orow.len() {
                let ok = out[s] + inside[s] >= cut;
                orow[s] = if ok { out[s] } else { NEG };
                if ok {
                    live.push(s);
                }
            }
            4 * live.len() < orow.len()
        };
        // The whole sentence, headed at ROOT.
        ocr[(n1 - 1) * n1] = 0.0;
        // Outside, pushed from each item to its parts, widest spans first; within a width,
        // complete spans feed incomplete ones, which feed their join. For a width w and
        // split offset j, the parts of all spans s are contiguous slices (a row's vector
        // pass); a row with few live items pushes each alone, O(w) each.
        for w in (1..n1).rev() {
            let m = n1 - w;
            let row = w * n1;
            // cr(s, s+w) = ir(s, s+j) + cr(s+j, s+w), 0 < j <= w.
            let o = &mut orow[..m];
            if keep(o, live, &ocr[row..row + m], &cr[row..row + m]) {
                for &s in live.iter() {
                    let v = o[s];
                    for j in 1..=w {
                        let at = j * n1 + s;
                        oir[at] = oir[at].max(v + cr[(w - j) * n1 + s + j]);
                        if j < w {
                            let b = (w - j) * n1 + s + j;
                            ocr[b] = ocr[b].max(v + ir[at]);
                        }
                    }
                }
            } else {
                // (The two charts' updates read only inside scores: in either order, the
                // same maxima.)
                max_into_each(oir, o, cr, m, 1..w + 1, |j| (j * n1, 0, (w - j) * n1 + j));
                let narrow = &mut ocr[..row];
                max_into_each(narrow, o, ir, m, 1..w, |j| ((w - j) * n1 + j, 0, j * n1));
            }
            // cl(s, s+w) = cl(s, s+j) + il(s+j, s+w), 0 <= j < w.
            if keep(o, live, &ocl[row..row + m], &cl[row..row + m]) {
                for &s in live.iter() {
                    let v = o[s];
                    for j in 0..w {
                        let b = (w - j) * n1 + s + j;
                        oil[b] = oil[b].max(v + cl[j * n1 + s]);
                        if j > 0 {
                            let at = j * n1 + s;
                            ocl[at] = ocl[at].max(v + il[b]);
                        }
                    }
                }
            } else {
                max_into_each(oil, o, cl, m, 0..w, |j| ((w - j) * n1 + j, 0, j * n1));
                let narrow = &mut ocl[..row];
                max_into_each(narrow, o, il, m, 1..w, |j| (j * n1, 0, (w - j) * n1 + j));
            }
            // An incomplete span's outside, less its arc, is its join's; the join is in a
            // good tree when either arc's incomplete span is.
            let mut inside_join = |s: usize| {
                let right = oir[row + s] + scores[(s + w) * n1 + s];
                let left = if s == 0 { NEG } else { oil[row + s] + scores[s * n1 + s + w] };
                ojoin[row + s] = right.max(left);
                let good = oir[row + s] + ir[row + s] >= cut || (s > 0 && oil[row + s] + il[row + s] >= cut);
                if good {
                    ojoin[row + s]
                } else {
                    NEG
                }
            };
            live.clear();
            for (s, v) in o.iter_mut().enumerate() {
                *v = inside_join(s);
                if *v > NEG {
                    live.push(s);
                }
            }
            // join(s, s+w) = cr(s, s+j) + cl(s+j+1, s+w), 0 <= j < w; with a single root,
            // ROOT's span (s = 0) only from j = 0 (the empty span at ROOT). Empty spans
            // (width 0) have no parts: their outside is not needed.
            let first = usize::from(single_root);
            if 4 * live.len() < m {
                for &s in live.iter() {
                    let v = o[s];
                    if s == 0 && single_root {
                        if w > 1 {
                            let b = (w - 1) * n1 + 1;
                            ocl[b] = ocl[b].max(v + cr[0]);
                        }
                        continue;
                    }
                    for j in 0..w {
                        let b = (w - 1 - j) * n1 + s + j + 1;
                        if j > 0 {
                            let at = j * n1 + s;
                            ocr[at] = ocr[at].max(v + cl[b]);
                        }
                        if j + 1 < w {
                            ocl[b] = ocl[b].max(v + cr[j * n1 + s]);
                        }
                    }
                }
            } else {
                let (rest, k) = (&o[first..m], m - first);
                let b = |j: usize| (w - 1 - j) * n1 + j + 1 + first;
                max_into_each(ocr, rest, cl, k, 1..w, |j| (j * n1 + first, 0, b(j)));
                max_into_each(ocl, rest, cr, k, 0..w - 1, |j| (b(j), 0, j * n1 + first));
                if single_root && w > 1 {
                    let b = (w - 1) * n1 + 1;
                    ocl[b] = ocl[b].max(o[0] + cr[0]);
                }
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

    /// With a margin: exact for the arcs within `delta` of the best tree, below
    /// `best - delta` for the others; against the whole pass (`delta` = +inf, itself
    /// checked against every projective tree below).
    fn check_within(n1: usize, scores: &[f64], single_root: bool, delta: f64) {
        let Ok((exact, best)) = arc_max_marginals(scores, n1, single_root) else { return };
        let mut ws = MaxMarginals::default();
        let got_best = ws.compute_within(scores, n1, single_root, delta).unwrap();
        assert_eq!(got_best, best);
        compare_within(&ws.mm, &exact, best, delta);
    }

    fn compare_within(got: &[f64], exact: &[f64], best: f64, delta: f64) {
        for (i, (&g, &want)) in got.iter().zip(exact).enumerate() {
            if want == NEG {
                assert_eq!(g, NEG, "arc {i}: in no tree");
            } else if want >= best - delta {
                assert!((g - want).abs() < 1e-9, "arc {i}: {g} vs {want} within {delta} of {best}");
            } else {
                assert!(g < best - delta && g <= want + 1e-9, "arc {i}: {g} vs {want} ({best} - {delta})");
            }
        }
    }

    proptest! {
        #[test]
        fn max_marginals_within_a_margin_are_exact_there(
            (n1, s) in square(2..8, false),
            single_root: bool,
            delta in prop_oneof![Just(0.0), 0.0..3.0f64, Just(f64::INFINITY)],
        ) {
            check_within(n1, &s, single_root, delta);
        }

        /// Sentences long enough that rows are pushed both ways (a vector pass, items one
        /// by one), against the exact max-marginals.
        #[test]
        fn max_marginals_within_a_margin_on_long_sentences(
            n1 in 10usize..40,
            seed: u64,
            single_root: bool,
            delta in 0.0..4.0f64,
        ) {
            let mut state = seed;
            let scores: Vec<f64> = (0..n1 * n1)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((state >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
                })
                .collect();
            let (exact, best) = arc_max_marginals(&scores, n1, single_root).unwrap();
            let mut ws = MaxMarginals::default();
            prop_assert_eq!(ws.compute_within(&scores, n1, single_root, delta).unwrap(), best);
            compare_within(&ws.mm, &exact, best, delta);
        }

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
