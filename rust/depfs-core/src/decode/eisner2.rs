//! Second-order projective decoding with adjacent siblings: McDonald & Pereira (2006), "Online
//! learning of approximate dependency parsing algorithms" (EACL), §3. O(n³) time, O(n²) space.
//!
//! A tree scores `Σ arc[dep, head] + Σ sib[dep, head, prev]` where `prev` is the child of `head`
//! adjacent to `dep` on the same side, between them (`prev == head` for the innermost child).
//! Besides the complete and incomplete spans of Eisner's algorithm, "sibling" spans `(r, t)`
//! join the right half of `r`'s subtree and the left half of `t`'s, so that an incomplete span
//! `s → t` is built from the previous incomplete span `s → r` plus the sibling span `(r, t)`.

use super::eisner::{max_plus, Chart};
use super::{check_scores, check_values, no_tree, Poller};
use crate::error::{Error, Result};

/// Reusable charts of [`eisner2`].
#[derive(Default, Debug, Clone)]
pub struct Eisner2Workspace {
    cr: Chart,
    cl: Chart,
    ir: Chart,
    il: Chart,
    /// Sibling spans.
    sq: Chart,
    stack: Vec<(u8, usize, usize)>,
}

const CR: u8 = 0;
const CL: u8 = 1;
const IR: u8 = 2;
const IL: u8 = 3;
const SQ: u8 = 4;

impl Eisner2Workspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// Best projective tree under arc + adjacent-sibling scores; see [`eisner2`].
    pub fn decode(&mut self, arc: &[f64], sib: &[f64], n1: usize, single_root: bool) -> Result<Vec<i32>> {
        self.decode_polled(arc, sib, n1, single_root, &mut || false)
    }

    /// [`Self::decode`] that polls once per chart width (see
    /// [`super::EisnerWorkspace::decode_polled`]).
    pub fn decode_polled(
        &mut self,
        arc: &[f64],
        sib: &[f64],
        n1: usize,
        single_root: bool,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<i32>> {
        let arc = &*check_scores("eisner2 arc", arc, n1)?;
        if sib.len() != n1 * n1 * n1 {
            return Err(Error::InvalidArgument(format!(
                "eisner2: expected {n1}x{n1}x{n1} = {} sibling scores, got {}",
                n1 * n1 * n1,
                sib.len()
            )));
        }
        let sib = &*check_values("eisner2 sib", sib, n1)?;
        let mut heads = vec![-1i32; n1];
        if n1 == 1 {
            return Ok(heads);
        }
        for chart in [&mut self.cr, &mut self.cl, &mut self.ir, &mut self.il, &mut self.sq] {
            chart.reset("eisner2", n1)?;
        }
        let mut poller = Poller::new(poll);
        for s in 0..n1 {
            self.cr.set(n1, s, s, 0.0, s);
            self.cl.set(n1, s, s, 0.0, s);
        }
        let sib_of = |dep: usize, head: usize| (dep * n1 + head) * n1;
        // O(n³): n² spans of each kind, O(n) split points each.
        for width in 1..n1 {
            poller.add("eisner2", 6 * (n1 - width) * width)?;
            for s in 0..n1 - width {
                let t = s + width;
                // Sibling span: cr[s][r] + cl[r+1][t], s <= r < t.
                let (v, i) =
                    max_plus(&self.cr.v[s * n1 + s..s * n1 + t], &self.cl.vt[t * n1 + s + 1..t * n1 + t + 1]);
                self.sq.set(n1, s, t, v, s + i);
                // Arc s -> t: t is s's innermost right child (split s) or follows r (s < r < t).
                // A ruled-out arc (-inf): its span is -inf whatever the split, so the O(n)
                // split search is skipped (the same value; no tree uses the span).
                let base = sib_of(t, s);
                let innermost = self.cl.vt[t * n1 + s + 1] + sib[base + s];
                let (best, split) = if arc[t * n1 + s] == f64::NEG_INFINITY {
                    (f64::NEG_INFINITY, s)
                } else if !(s == 0 && single_root) && t > s + 1 {
                    best_sibling_split(
                        (innermost, s),
                        &self.ir.v[s * n1 + s + 1..s * n1 + t],
                        &self.sq.vt[t * n1 + s + 1..t * n1 + t],
                        &sib[base + s + 1..base + t],
                        s + 1,
                    )
                } else {
                    (innermost, s)
                };
                self.ir.set(n1, s, t, best + arc[t * n1 + s], split);
                // Arc t -> s (never into ROOT): s is t's innermost left child (split t) or
                // precedes r (s < r < t).
                if s > 0 {
                    let base = sib_of(s, t);
                    let innermost = self.cr.v[s * n1 + t - 1] + sib[base + t];
                    let (best, split) = if arc[s * n1 + t] == f64::NEG_INFINITY {
                        (f64::NEG_INFINITY, t)
                    } else if t > s + 1 {
                        best_sibling_split(
                            (innermost, t),
                            &self.sq.v[s * n1 + s + 1..s * n1 + t],
                            &self.il.vt[t * n1 + s + 1..t * n1 + t],
                            &sib[base + s + 1..base + t],
                            s + 1,
                        )
                    } else {
                        (innermost, t)
                    };
                    self.il.set(n1, s, t, best + arc[s * n1 + t], split);
                }
                let (v, i) = max_plus(
                    &self.ir.v[s * n1 + s + 1..s * n1 + t + 1],
                    &self.cr.vt[t * n1 + s + 1..t * n1 + t + 1],
                );
                self.cr.set(n1, s, t, v, s + 1 + i);
                if s > 0 {
                    let (v, i) =
                        max_plus(&self.cl.v[s * n1 + s..s * n1 + t], &self.il.vt[t * n1 + s..t * n1 + t]);
                    self.cl.set(n1, s, t, v, s + i);
                }
            }
        }
        if self.cr.v[n1 - 1] == f64::NEG_INFINITY {
            return Err(no_tree("eisner2", single_root));
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
            let at = s * n1 + t;
            match kind {
                CR => {
                    let r = self.cr.bp[at] as usize;
                    self.stack.extend([(IR, s, r), (CR, r, t)]);
                }
                CL => {
                    let r = self.cl.bp[at] as usize;
                    self.stack.extend([(CL, s, r), (IL, r, t)]);
                }
                SQ => {
                    let r = self.sq.bp[at] as usize;
                    self.stack.extend([(CR, s, r), (CL, r + 1, t)]);
                }
                IR => {
                    heads[t] = s as i32;
                    let r = self.ir.bp[at] as usize;
                    if r == s {
                        self.stack.push((CL, s + 1, t));
                    } else {
                        self.stack.extend([(IR, s, r), (SQ, r, t)]);
                    }
                }
                IL => {
                    heads[s] = t as i32;
                    let r = self.il.bp[at] as usize;
                    if r == t {
                        self.stack.push((CR, s, t - 1));
                    } else {
                        self.stack.extend([(SQ, s, r), (IL, r, t)]);
                    }
                }
                _ => unreachable!("chart kinds are CR, CL, IR, IL, SQ"),
            }
        }
    }
}

/// Best projective tree under arc scores `arc[dep * n1 + head]` plus adjacent-sibling scores
/// `sib[(dep * n1 + head) * n1 + sibling]` (`sibling == head` for the innermost child on that
/// side), ROOT restricted to one child when `single_root`. Returns heads with `heads[0] = -1`.
/// O(n³).
pub fn eisner2(arc: &[f64], sib: &[f64], n1: usize, single_root: bool) -> Result<Vec<i32>> {
    Eisner2Workspace::new().decode(arc, sib, n1, single_root)
}

/// The best incomplete-span split of an arc: `innermost` (the dependent is the head's
/// innermost child on that side, at its split) against every sibling split `r`, worth
/// `row[i] + col[i] + sib[i]` at `r = offset + i`; the earliest wins ties. O(len).
fn best_sibling_split(
    innermost: (f64, usize),
    row: &[f64],
    col: &[f64],
    sib: &[f64],
    offset: usize,
) -> (f64, usize) {
    let (mut best, mut split) = innermost;
    for (i, ((a, b), c)) in row.iter().zip(col).zip(sib).enumerate() {
        let v = a + b + c;
        if v > best {
            best = v;
            split = offset + i;
        }
    }
    (best, split)
}

#[cfg(test)]
mod tests {
    use super::super::brute::{all_trees, values};
    use super::super::tree_score2;
    use super::*;
    use proptest::prelude::*;

    fn check(arc: &[f64], sib: &[f64], n1: usize, single_root: bool) {
        let trees = all_trees(n1, true, single_root);
        let want = trees.iter().map(|t| tree_score2(arc, sib, t)).fold(f64::NEG_INFINITY, f64::max);
        match eisner2(arc, sib, n1, single_root) {
            Ok(heads) => {
                assert!(trees.contains(&heads), "{heads:?} is not a valid projective tree");
                let got = tree_score2(arc, sib, &heads);
                assert!((got - want).abs() <= 1e-9, "got {got}, want {want}");
            }
            Err(Error::NoSpanningTree(_)) => assert_eq!(want, f64::NEG_INFINITY),
            Err(e) => panic!("{e}"),
        }
    }

    fn case(ties: bool) -> impl Strategy<Value = (usize, Vec<f64>, Vec<f64>)> {
        (2usize..7).prop_flat_map(move |n1| (Just(n1), values(n1 * n1, ties), values(n1 * n1 * n1, ties)))
    }

    #[test]
    fn sibling_scores_change_the_tree() {
        // Flat arcs; a bonus for 2 following 1 as right children of ROOT picks the flat tree.
        let n1 = 3;
        let arc = vec![0.0; 9];
        let mut sib = vec![0.0; 27];
        sib[(2 * n1) * n1 + 1] = 1.0;
        assert_eq!(eisner2(&arc, &sib, n1, false).unwrap(), vec![-1, 0, 0]);
        assert!(matches!(eisner2(&arc, &sib[..26], n1, false), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn polls_follow_the_cubic_work_and_a_stop_stops() {
        // The decode counts (n1 - 1) n1 (n1 + 1) chart cells (6 per split, summed over the
        // widths): at n1 = 257 that is just past one POLL_WORK block, so one poll.
        let n1 = 257;
        let arc: Vec<f64> = (0..n1 * n1).map(|i| ((i * 7919) % 13) as f64).collect();
        let sib: Vec<f64> = (0..n1 * n1 * n1).map(|i| ((i * 104_729) % 5) as f64 - 2.0).collect();
        let blocks = (n1 * n1 * n1 - n1) / super::super::POLL_WORK;
        assert_eq!(blocks, 1);
        let mut ws = Eisner2Workspace::new();
        let mut polls = 0;
        let got = ws.decode_polled(&arc, &sib, n1, true, &mut || {
            polls += 1;
            false
        });
        assert_eq!(polls, blocks);
        assert_eq!(got.unwrap(), eisner2(&arc, &sib, n1, true).unwrap());
        let mut polls = 0;
        let err = ws
            .decode_polled(&arc, &sib, n1, true, &mut || {
                polls += 1;
                true
            })
            .unwrap_err();
        assert!(err.to_string().contains("eisner2: stopped"), "{err}");
        assert_eq!(polls, 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn matches_brute_force_ties((n1, arc, sib) in case(true), single_root in any::<bool>()) {
            check(&arc, &sib, n1, single_root);
        }

        #[test]
        fn best_sibling_split_is_the_first_arg_max(
            parts in (0usize..9)
                .prop_flat_map(|len| (values(1, true), values(len, true), values(len, true), values(len, true))),
            at in 0usize..50,
        ) {
            // The innermost split first, then r = offset + i: the earliest best wins ties.
            let (innermost, row, col, sib) = parts;
            let mut cands = vec![(innermost[0], at)];
            cands.extend((0..row.len()).map(|i| (row[i] + col[i] + sib[i], at + 1 + i)));
            let best = cands.iter().map(|c| c.0).fold(f64::NEG_INFINITY, f64::max);
            let want = *cands.iter().find(|c| c.0 == best).unwrap();
            prop_assert_eq!(best_sibling_split((innermost[0], at), &row, &col, &sib, at + 1), want);
        }

        #[test]
        fn matches_brute_force_real((n1, arc, sib) in case(false)) {
            check(&arc, &sib, n1, true);
            check(&arc, &sib, n1, false);
        }
    }
}
