//! k best first-order projective trees: Huang & Chiang (2005), "Better k-best parsing" (IWPT),
//! Algorithm 3 (lazy k-best), run over the hypergraph of Eisner's algorithm (see `eisner.rs`).
//!
//! Every chart item keeps its derivations found so far, best first, and a heap of candidates;
//! a derivation is a hyperedge (split point) plus the rank of the derivation used in each of
//! its two tails. After popping `(e, j1, j2)`, the next request pushes its neighbours
//! `(e, j1 + 1, j2)` (only when `j2 == 0`) and `(e, j1, j2 + 1)`: every rank pair then has
//! exactly one predecessor, so no set of seen candidates is needed. Eisner's hypergraph has
//! exactly one derivation per projective tree, so the k best derivations are k distinct trees.
//!
//! The 1-best value of every item comes from the fast Eisner forward pass (O(n³)); heaps are
//! only built for the items a request reaches, O(n) hyperedges each, so the k - 1 further
//! trees cost O(k · n² · log n) at worst and usually far less.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::eisner::{EisnerWorkspace, CL, CR, IL, IR};
use super::{check_scores, no_tree, tree_score, Poller};
use crate::error::{Error, Result};

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
    /// Derivations whose neighbours were pushed.
    expanded: usize,
    found: Vec<Derivation>,
    cand: BinaryHeap<Candidate>,
}

/// Reusable state of [`eisner_kbest`].
#[derive(Default, Debug, Clone)]
pub struct KBestWorkspace {
    n1: usize,
    single_root: bool,
    chart: EisnerWorkspace,
    items: Vec<Item>,
    /// Items started in this call (reset before the next one, keeping their buffers).
    touched: Vec<usize>,
    scratch: Vec<Candidate>,
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
        self.decode_polled(scores, n1, k, single_root, &mut || false)
    }

    /// [`Self::decode`] that polls during the chart pass (see [`EisnerWorkspace::decode_polled`]).
    pub fn decode_polled(
        &mut self,
        scores: &[f64],
        n1: usize,
        k: usize,
        single_root: bool,
        poll: &mut dyn FnMut() -> bool,
    ) -> Result<Vec<(Vec<i32>, f64)>> {
        let scores = &*check_scores("eisner_kbest", scores, n1)?;
        if k == 0 {
            return Err(Error::InvalidArgument("eisner_kbest: k must be at least 1".into()));
        }
        if n1 == 1 {
            return Ok(vec![(vec![-1], 0.0)]);
        }
        self.n1 = n1;
        self.single_root = single_root;
        for &v in &self.touched {
            let item = &mut self.items[v];
            item.started = false;
            item.expanded = 0;
            item.found.clear();
            item.cand.clear();
        }
        self.touched.clear();
        let len = 4 * n1 * n1;
        if len > self.items.len() {
            let bytes = len.saturating_mul(std::mem::size_of::<Item>());
            self.items
                .try_reserve_exact(len - self.items.len())
                .map_err(|_| super::too_large("eisner_kbest", n1, bytes))?;
        }
        self.items.resize_with(len, Item::default);
        self.chart.forward("eisner_kbest", scores, n1, single_root, &mut Poller::new(poll))?;
        let goal = self.id(CR, 0, n1 - 1);
        if self.best(goal) == f64::NEG_INFINITY {
            return Err(no_tree("eisner_kbest", single_root));
        }
        let mut out = Vec::new();
        for rank in 0..k {
            self.kth(scores, goal, rank + 1)?;
            if self.items[goal].found.len() <= rank {
                break;
            }
            let mut heads = Vec::new();
            heads.try_reserve_exact(n1).map_err(|_| self.too_large(rank))?;
            heads.resize(n1, -1i32);
            self.extract(scores, goal, rank, &mut heads)?;
            let score = tree_score(scores, &heads);
            self.room(&mut out, rank)?;
            out.push((heads, score));
        }
        Ok(out)
    }

    /// The error of a request that memory cannot hold, at tree `rank` (the derivations
    /// kept grow with k: a huge k on a long sentence is refused, not an abort).
    fn too_large(&self, rank: usize) -> Error {
        Error::InvalidArgument(format!(
            "eisner_kbest: memory ran out after {rank} of the k trees of a sentence of n = {} \
             words: ask for fewer",
            self.n1.saturating_sub(1)
        ))
    }

    /// Room for one more element in `v` (doubling), or the error of [`Self::too_large`].
    fn room<T>(&self, v: &mut Vec<T>, rank: usize) -> Result<()> {
        if v.len() == v.capacity() {
            v.try_reserve(v.len().max(4)).map_err(|_| self.too_large(rank))?;
        }
        Ok(())
    }

    fn id(&self, kind: u8, s: usize, t: usize) -> usize {
        (kind as usize * self.n1 + s) * self.n1 + t
    }

    fn unpack(&self, id: usize) -> (u8, usize, usize) {
        let n1 = self.n1;
        ((id / (n1 * n1)) as u8, (id / n1) % n1, id % n1)
    }

    /// 1-best score of an item, from the Eisner chart.
    fn best(&self, v: usize) -> f64 {
        let (kind, s, t) = self.unpack(v);
        self.chart.value(kind, s, t)
    }

    /// Range of split points of an item (hyperedges into it).
    fn splits(&self, kind: u8, s: usize, t: usize) -> std::ops::Range<usize> {
        match kind {
            IR if s == 0 && self.single_root => 0..1,
            IR => s..t,
            IL | CL if s == 0 => 0..0, // ROOT is never a dependent
            IL | CL => s..t,
            _ => s + 1..t + 1, // CR
        }
    }

    /// The two tails of the hyperedge with split point `r` into item (kind, s, t).
    fn tails(&self, kind: u8, s: usize, t: usize, r: usize) -> (usize, usize) {
        match kind {
            IR | IL => (self.id(CR, s, r), self.id(CL, r + 1, t)),
            CR => (self.id(IR, s, r), self.id(CR, r, t)),
            _ => (self.id(CL, s, r), self.id(IL, r, t)),
        }
    }

    /// Arc score added by a hyperedge into (kind, s, t): only incomplete spans add an arc.
    fn weight(&self, scores: &[f64], kind: u8, s: usize, t: usize) -> f64 {
        match kind {
            IR => scores[t * self.n1 + s],
            IL => scores[s * self.n1 + t],
            _ => 0.0,
        }
    }

    /// Score of derivation `rank` of item `v`, if it exists. Rank 0 comes from the chart.
    fn ranked(&mut self, scores: &[f64], v: usize, rank: usize) -> Result<Option<f64>> {
        if rank == 0 {
            let b = self.best(v);
            return Ok((b > f64::NEG_INFINITY).then_some(b));
        }
        self.kth(scores, v, rank + 1)?;
        Ok(self.items[v].found.get(rank).map(|d| d.score))
    }

    /// Derivation (split, j1, j2) of item `v` as a candidate, if its tails have those ranks.
    /// The sum is ordered as in the Eisner chart, `(tail1 + tail2) + arc`, so rank 0 of every
    /// item reproduces the chart value exactly.
    fn candidate(
        &mut self,
        scores: &[f64],
        v: usize,
        split: usize,
        j1: usize,
        j2: usize,
    ) -> Result<Option<Candidate>> {
        let (kind, s, t) = self.unpack(v);
        let (a, b) = self.tails(kind, s, t, split);
        let (Some(sa), Some(sb)) = (self.ranked(scores, a, j1)?, self.ranked(scores, b, j2)?) else {
            return Ok(None);
        };
        let score = (sa + sb) + self.weight(scores, kind, s, t);
        Ok((score > f64::NEG_INFINITY).then_some(Candidate(Derivation {
            score,
            split: split as u32,
            j1: j1 as u32,
            j2: j2 as u32,
        })))
    }

    /// Makes sure item `v` has its `k` best derivations (or all it has): Algorithm 3 of Huang
    /// & Chiang. The heap starts with the 1-best derivation of every hyperedge (O(n));
    /// each popped derivation has its neighbours pushed on the next request. Every
    /// allocation is fallible (see [`Self::too_large`]).
    fn kth(&mut self, scores: &[f64], v: usize, k: usize) -> Result<()> {
        let oom = |this: &Self| this.too_large(this.items[v].found.len());
        if !self.items[v].started {
            self.items[v].started = true;
            self.touched.try_reserve(1).map_err(|_| oom(self))?;
            self.touched.push(v);
            let (kind, s, t) = self.unpack(v);
            if s == t {
                // Empty span: one derivation of score 0.
                self.items[v].found.try_reserve(1).map_err(|_| oom(self))?;
                self.items[v].found.push(Derivation { score: 0.0, split: s as u32, j1: 0, j2: 0 });
                self.items[v].expanded = 1;
                return Ok(());
            }
            let mut cands = std::mem::take(&mut self.scratch);
            cands.clear();
            for r in self.splits(kind, s, t) {
                if let Some(c) = self.candidate(scores, v, r, 0, 0)? {
                    cands.try_reserve(1).map_err(|_| oom(self))?;
                    cands.push(c);
                }
            }
            let mut heap = std::mem::take(&mut self.items[v].cand);
            heap.clear();
            heap.try_reserve(cands.len()).map_err(|_| oom(self))?;
            heap.extend(cands.drain(..));
            self.items[v].cand = heap;
            self.scratch = cands;
        }
        while self.items[v].found.len() < k {
            if self.items[v].expanded < self.items[v].found.len() {
                let last = self.items[v].found[self.items[v].expanded];
                self.items[v].expanded += 1;
                let (r, j1, j2) = (last.split as usize, last.j1 as usize, last.j2 as usize);
                let next = if j2 == 0 { self.candidate(scores, v, r, j1 + 1, 0)? } else { None };
                let right = self.candidate(scores, v, r, j1, j2 + 1)?;
                for c in [next, right].into_iter().flatten() {
                    self.items[v].cand.try_reserve(1).map_err(|_| oom(self))?;
                    self.items[v].cand.push(c);
                }
            }
            match self.items[v].cand.pop() {
                Some(Candidate(d)) => {
                    self.items[v].found.try_reserve(1).map_err(|_| oom(self))?;
                    self.items[v].found.push(d)
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Writes the heads of derivation `rank` of item `v`.
    fn extract(&mut self, scores: &[f64], v: usize, rank: usize, heads: &mut [i32]) -> Result<()> {
        let mut stack = vec![(v, rank)];
        while let Some((v, rank)) = stack.pop() {
            let (kind, s, t) = self.unpack(v);
            if s == t {
                continue;
            }
            self.kth(scores, v, rank + 1)?;
            let d = self.items[v].found[rank];
            match kind {
                IR => heads[t] = s as i32,
                IL => heads[s] = t as i32,
                _ => {}
            }
            let (a, b) = self.tails(kind, s, t, d.split as usize);
            stack.push((a, d.j1 as usize));
            stack.push((b, d.j2 as usize));
        }
        Ok(())
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

    #[test]
    fn a_reused_workspace_gives_what_a_fresh_one_gives() {
        // Sentences longer and shorter than the one before: the items left by a longer
        // sentence are reset and cut, those of a shorter one grown.
        let mut ws = KBestWorkspace::new();
        for (i, n1) in [6usize, 3, 5, 2, 6, 4].into_iter().enumerate() {
            let scores: Vec<f64> = (0..n1 * n1).map(|x| ((x * 7 + i) % 5) as f64).collect();
            for single_root in [true, false] {
                let got = ws.decode(&scores, n1, 7, single_root).unwrap();
                assert_eq!(got, eisner_kbest(&scores, n1, 7, single_root).unwrap());
                check(&scores, n1, 7, single_root);
            }
        }
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
