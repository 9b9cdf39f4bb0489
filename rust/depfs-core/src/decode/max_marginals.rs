//! Arc max-marginals of first-order projective parsing: for every arc, the score of the
//! best projective tree that contains it. Viterbi inside-outside over Eisner's
//! complete/incomplete spans (the max-product counterpart of the inside-outside
//! algorithm; max-marginals as confidence and pruning scores: Weiss & Taskar 2010,
//! "Structured prediction cascades"). O(n³) time, O(n²) space.
//!
//! Used for confidence: a word's tree margin is the best tree's score minus the best
//! tree in which the word has another head. Written for clarity, not speed (plain
//! (s, t) loops): it runs only when margins are asked for.

use super::{check_scores, no_tree};
use crate::error::Result;

const NEG: f64 = f64::NEG_INFINITY;

/// Arc max-marginals `mm[dep * n1 + head]` (`-inf` where no projective tree, with ROOT
/// limited to one child when `single_root`, contains the arc) and the best tree's score.
/// Same conventions as [`super::eisner`].
pub fn arc_max_marginals(scores: &[f64], n1: usize, single_root: bool) -> Result<(Vec<f64>, f64)> {
    let scores = &*check_scores("max-marginals", scores, n1)?;
    let mut mm = vec![NEG; n1 * n1];
    if n1 == 1 {
        return Ok((mm, 0.0));
    }
    let at = |s: usize, t: usize| s * n1 + t;
    // Inside: cr/cl complete spans headed at the left/right end; ir/il incomplete spans
    // with the arc left→right / right→left; join = cr(s, r) + cl(r+1, t) before the arc.
    let (mut cr, mut cl, mut ir, mut il, mut join) =
        (vec![NEG; n1 * n1], vec![NEG; n1 * n1], vec![NEG; n1 * n1], vec![NEG; n1 * n1], vec![NEG; n1 * n1]);
    for s in 0..n1 {
        cr[at(s, s)] = 0.0;
        cl[at(s, s)] = 0.0;
    }
    // Split points r of join(s, t): ROOT's single child comes from the empty span at ROOT.
    let join_splits = |s: usize, t: usize| if s == 0 && single_root { 0..1 } else { s..t };
    for w in 1..n1 {
        for s in 0..n1 - w {
            let t = s + w;
            let j = join_splits(s, t).map(|r| cr[at(s, r)] + cl[at(r + 1, t)]).fold(NEG, f64::max);
            join[at(s, t)] = j;
            ir[at(s, t)] = j + scores[t * n1 + s];
            il[at(s, t)] = if s == 0 { NEG } else { j + scores[s * n1 + t] };
            cr[at(s, t)] = (s + 1..=t).map(|r| ir[at(s, r)] + cr[at(r, t)]).fold(NEG, f64::max);
            cl[at(s, t)] =
                if s == 0 { NEG } else { (s..t).map(|r| cl[at(s, r)] + il[at(r, t)]).fold(NEG, f64::max) };
        }
    }
    let best = cr[at(0, n1 - 1)];
    if best == NEG {
        return Err(no_tree("max-marginals", single_root));
    }
    // Outside, pushed from each item to its parts, widest spans first; within a width,
    // complete spans feed incomplete ones, which feed their join.
    let (mut ocr, mut ocl, mut oir, mut oil, mut ojoin) =
        (vec![NEG; n1 * n1], vec![NEG; n1 * n1], vec![NEG; n1 * n1], vec![NEG; n1 * n1], vec![NEG; n1 * n1]);
    ocr[at(0, n1 - 1)] = 0.0;
    let up = |v: &mut f64, x: f64| *v = v.max(x);
    for w in (1..n1).rev() {
        for s in 0..n1 - w {
            let t = s + w;
            let o = ocr[at(s, t)];
            if o > NEG {
                for r in s + 1..=t {
                    up(&mut oir[at(s, r)], o + cr[at(r, t)]);
                    up(&mut ocr[at(r, t)], o + ir[at(s, r)]);
                }
            }
            let o = ocl[at(s, t)];
            if o > NEG {
                for r in s..t {
                    up(&mut ocl[at(s, r)], o + il[at(r, t)]);
                    up(&mut oil[at(r, t)], o + cl[at(s, r)]);
                }
            }
        }
        for s in 0..n1 - w {
            let t = s + w;
            let o = (oir[at(s, t)] + scores[t * n1 + s]).max(oil[at(s, t)] + scores[s * n1 + t]);
            ojoin[at(s, t)] = o;
            if o > NEG {
                for r in join_splits(s, t) {
                    up(&mut ocr[at(s, r)], o + cl[at(r + 1, t)]);
                    up(&mut ocl[at(r + 1, t)], o + cr[at(s, r)]);
                }
            }
        }
    }
    for s in 0..n1 {
        for t in s + 1..n1 {
            mm[t * n1 + s] = ir[at(s, t)] + oir[at(s, t)];
            if s > 0 {
                mm[s * n1 + t] = il[at(s, t)] + oil[at(s, t)];
            }
        }
    }
    Ok((mm, best))
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
