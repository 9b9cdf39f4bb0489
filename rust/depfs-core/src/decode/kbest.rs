//! k best first-order projective trees: Huang & Chiang (2005), "Better k-best parsing" (IWPT),
//! Algorithm 3 (lazy k-best), run over the hypergraph of Eisner's algorithm (see `eisner.rs`).
//!
//! Every chart item keeps its derivations found so far, best first, and a heap of candidates;
//! a derivation is a hyperedge (split point) plus the rank of the derivation used in each of
//! its two tails. Popping a derivation `(e, j1, j2)` pushes its neighbours `(e, j1 + 1, j2)` and
//! `(e, j1, j2 + 1)`, asking the tails lazily for their next derivations. Eisner's hypergraph has
//! exactly one derivation per projective tree, so the k best derivations are k distinct trees.
//! Cost: O(n³) for the 1-best pass plus O(k · n · log(n + k)) for the k - 1 further trees.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

use super::{check_scores, no_tree, tree_score};
use crate::error::{Error, Result};

const CR: usize = 0;
const CL: usize = 1;
const IR: usize = 2;
const IL: usize = 3;

#[derive(Clone, Copy, Debug)]
struct Derivation {
    score: f64,
    split: u32,
    j1: u32,
    j2: u32,
}

#[derive(Clone, Copy, Debug)]
struct Candidate(Derivation);

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// Higher score first; ties go to the smaller (split, j1, j2) for determinism.
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.0, other.0);
        a.score.total_cmp(&b.score).then_with(|| (b.split, b.j1, b.j2).cmp(&(a.split, a.j1, a.j2)))
    }
}

#[derive(Default, Debug, Clone)]
struct Item {
    started: bool,
    /// Derivations that were followed by an expansion of their neighbours.
    expanded: usize,
    found: Vec<Derivation>,
    cand: BinaryHeap<Candidate>,
}

/// Reusable state of [`eisner_kbest`].
#[derive(Default, Debug, Clone)]
pub struct KBestWorkspace {
    n1: usize,
    single_root: bool,
    items: Vec<Item>,
    /// Candidates ever pushed: (item, split, j1, j2).
    seen: HashSet<(u32, u32, u32, u32)>,
}

impl KBestWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// The `k` best projective trees, best first, with their scores; see [`eisner_kbest`].
    pub fn decode(
        &mut self,
        scores: &[f64],
        n1: usize,
        k: usize,
        single_root: bool,
    ) -> Result<Vec<(Vec<i32>, f64)>> {
        check_scores("eisner_kbest", scores, n1)?;
        if k == 0 {
            return Err(Error::InvalidArgument("eisner_kbest: k must be at least 1".into()));
        }
        if n1 == 1 {
            return Ok(vec![(vec![-1], 0.0)]);
        }
        self.n1 = n1;
        self.single_root = single_root;
        self.items.clear();
        self.items.resize_with(4 * n1 * n1, Item::default);
        self.seen.clear();
        let goal = self.id(CR, 0, n1 - 1);
        let mut out = Vec::with_capacity(k);
        for rank in 0..k {
            self.kth(scores, goal, rank + 1);
            if self.items[goal].found.len() <= rank {
                break;
            }
            let mut heads = vec![-1i32; n1];
            self.extract(goal, rank, &mut heads);
            let score = tree_score(scores, &heads);
            out.push((heads, score));
        }
        if out.is_empty() {
            return Err(no_tree("eisner_kbest", single_root));
        }
        Ok(out)
    }

    fn id(&self, kind: usize, s: usize, t: usize) -> usize {
        (kind * self.n1 + s) * self.n1 + t
    }

    fn unpack(&self, id: usize) -> (usize, usize, usize) {
        let n1 = self.n1;
        (id / (n1 * n1), (id / n1) % n1, id % n1)
    }

    /// Range of split points of an item (hyperedges into it).
    fn splits(&self, kind: usize, s: usize, t: usize) -> std::ops::Range<usize> {
        match kind {
            IR if s == 0 && self.single_root => 0..1,
            IR => s..t,
            IL | CL if s == 0 => 0..0, // ROOT is never a dependent
            IL | CL => s..t,
            _ => s + 1..t + 1, // CR
        }
    }

    /// The two tails of the hyperedge with split point `r` into item (kind, s, t).
    fn tails(&self, kind: usize, s: usize, t: usize, r: usize) -> (usize, usize) {
        match kind {
            IR | IL => (self.id(CR, s, r), self.id(CL, r + 1, t)),
            CR => (self.id(IR, s, r), self.id(CR, r, t)),
            _ => (self.id(CL, s, r), self.id(IL, r, t)),
        }
    }

    /// Arc score added by a hyperedge into (kind, s, t): only incomplete spans add an arc.
    fn weight(&self, scores: &[f64], kind: usize, s: usize, t: usize) -> f64 {
        match kind {
            IR => scores[t * self.n1 + s],
            IL => scores[s * self.n1 + t],
            _ => 0.0,
        }
    }

    /// Pushes derivation (split, j1, j2) of item `v` if its tails have those ranks and it is new.
    fn push(&mut self, scores: &[f64], v: usize, split: usize, j1: usize, j2: usize) {
        let (kind, s, t) = self.unpack(v);
        let (a, b) = self.tails(kind, s, t, split);
        let w = self.weight(scores, kind, s, t);
        self.kth(scores, a, j1 + 1);
        self.kth(scores, b, j2 + 1);
        let (Some(da), Some(db)) = (self.items[a].found.get(j1), self.items[b].found.get(j2)) else {
            return;
        };
        let score = w + da.score + db.score;
        if score == f64::NEG_INFINITY || !self.seen.insert((v as u32, split as u32, j1 as u32, j2 as u32)) {
            return;
        }
        let d = Derivation { score, split: split as u32, j1: j1 as u32, j2: j2 as u32 };
        self.items[v].cand.push(Candidate(d));
    }

    /// Makes sure item `v` has its `k` best derivations (or all it has). Algorithm 3 of Huang &
    /// Chiang: candidates start as the 1-best of every hyperedge; each popped derivation is
    /// followed, on the next request, by its neighbours.
    fn kth(&mut self, scores: &[f64], v: usize, k: usize) {
        let (kind, s, t) = self.unpack(v);
        if !self.items[v].started {
            self.items[v].started = true;
            if s == t {
                // Empty span: one derivation of score 0.
                self.items[v].found.push(Derivation { score: 0.0, split: s as u32, j1: 0, j2: 0 });
                self.items[v].expanded = 1;
                return;
            }
            for r in self.splits(kind, s, t) {
                self.push(scores, v, r, 0, 0);
            }
        }
        while self.items[v].found.len() < k {
            if self.items[v].expanded < self.items[v].found.len() {
                let last = self.items[v].found[self.items[v].expanded];
                self.items[v].expanded += 1;
                let (r, j1, j2) = (last.split as usize, last.j1 as usize, last.j2 as usize);
                self.push(scores, v, r, j1 + 1, j2);
                self.push(scores, v, r, j1, j2 + 1);
            }
            match self.items[v].cand.pop() {
                Some(Candidate(d)) => self.items[v].found.push(d),
                None => break,
            }
        }
    }

    /// Writes the heads of derivation `rank` of item `v`.
    fn extract(&self, v: usize, rank: usize, heads: &mut [i32]) {
        let mut stack = vec![(v, rank)];
        while let Some((v, rank)) = stack.pop() {
            let (kind, s, t) = self.unpack(v);
            if s == t {
                continue;
            }
            let d = self.items[v].found[rank];
            let r = d.split as usize;
            match kind {
                IR => heads[t] = s as i32,
                IL => heads[s] = t as i32,
                _ => {}
            }
            let (a, b) = self.tails(kind, s, t, r);
            stack.push((a, d.j1 as usize));
            stack.push((b, d.j2 as usize));
        }
    }
}

/// The `k` best projective trees of `scores[dep * n1 + head]` (n1 = n + 1, index 0 = ROOT), best
/// first, each with its score; fewer when fewer trees exist. ROOT has one child when
/// `single_root`. Errors as [`super::eisner`]; `k = 0` is an `InvalidArgument`.
pub fn eisner_kbest(scores: &[f64], n1: usize, k: usize, single_root: bool) -> Result<Vec<(Vec<i32>, f64)>> {
    KBestWorkspace::new().decode(scores, n1, k, single_root)
}

#[cfg(test)]
mod tests {
    use super::super::brute::{all_trees, square};
    use super::*;
    use proptest::prelude::*;

    fn check(scores: &[f64], n1: usize, k: usize, single_root: bool) {
        let trees = all_trees(n1, true, single_root);
        let mut want: Vec<f64> =
            trees.iter().map(|t| tree_score(scores, t)).filter(|s| *s > f64::NEG_INFINITY).collect();
        want.sort_by(|a, b| b.total_cmp(a));
        want.truncate(k);
        match eisner_kbest(scores, n1, k, single_root) {
            Ok(list) => {
                assert_eq!(list.len(), want.len());
                for (i, ((heads, score), w)) in list.iter().zip(&want).enumerate() {
                    assert!(trees.contains(heads), "{heads:?} is not a valid projective tree");
                    assert_eq!(*score, tree_score(scores, heads));
                    assert!((score - w).abs() <= 1e-9, "rank {i}: got {score}, want {w}");
                    assert!(!list[..i].iter().any(|(h, _)| h == heads), "duplicate tree {heads:?}");
                }
            }
            Err(Error::NoSpanningTree(_)) => assert!(want.is_empty()),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn all_trees_of_three_words() {
        // Zero scores: every projective tree ties; asking for more than exist returns them all.
        let n1 = 4;
        let scores = vec![0.0; 16];
        let all = all_trees(n1, true, false).len();
        assert_eq!(eisner_kbest(&scores, n1, 1000, false).unwrap().len(), all);
        assert!(matches!(eisner_kbest(&scores, n1, 0, false), Err(Error::InvalidArgument(_))));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn matches_brute_force_ties((n1, scores) in square(2..7, true), k in 1usize..40, single_root in any::<bool>()) {
            check(&scores, n1, k, single_root);
        }

        #[test]
        fn matches_brute_force_real((n1, scores) in square(2..7, false), k in 1usize..40) {
            check(&scores, n1, k, true);
            check(&scores, n1, k, false);
        }
    }
}
