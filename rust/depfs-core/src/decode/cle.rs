//! Maximum spanning arborescence: Chu-Liu-Edmonds as organised by Tarjan (1977, "Finding optimum
//! branchings", dense O(n²) variant) with the expansion of Camerini, Fratta & Maffioli (1979, "A
//! note on finding optimum branchings"), and the exact single-root constraint of Zmigrod, Vieira &
//! Cotterell (2020, "Please Mind the Root: Decoding Arborescences for Dependency Parsing").
//!
//! Contraction phase: grow paths along best incoming arcs; a path that bites its own tail is a
//! cycle, contracted into one super-node whose incoming weights are `w(s→x) - w(in(x))` (the gain
//! of entering the cycle at member `x`), maximised over members. Every node keeps a dense row of
//! incoming weights, so a contraction of `c` nodes costs O(n·c) and the phase O(n²).
//!
//! Root constraint (Zmigrod, Vieira & Cotterell 2020, after Gabow & Tarjan 1984): a single-root
//! tree is an arc ROOT → r plus an arborescence of the words rooted at r. So with `single_root`
//! the greedy choice ignores ROOT: every node follows its best arc from another node, and only a
//! node with no such arc left (a "source") takes its ROOT arc. Cycles of best non-root arcs can
//! still be contracted: in an optimal single-root tree T, walk the cycle C from the member x
//! closest to ROOT; the first other member y whose T-arc is not its C-arc has a non-root T-arc
//! (only x can be ROOT's child) and swapping it for its C-arc keeps a single-root tree and does
//! not lower the score. When no cycle is left, exactly one source must remain (two sources
//! would both need ROOT) and the greedy graph is optimal. Same O(n²) as without the constraint.
//! In practice the unconstrained pass runs first and is kept when ROOT gets one child (the
//! usual case with trained scores); otherwise its contractions (cycles of arcs that are also
//! best among non-root arcs) are kept and only ROOT's children choose again.
//!
//! Expansion (Camerini et al.): the contractions form a forest; the arc chosen for a top-level
//! node enters one original node `v`; every super-node on the forest path from `v` up to it is
//! broken and the subtrees hanging off that path become top-level with their own chosen arcs.

use super::{check_scores, no_tree, too_large};
use crate::error::Result;

const UNVISITED: u8 = 0;
const ON_PATH: u8 = 1;
const DONE: u8 = 2;
const DEAD: u8 = 3;
const NONE: usize = usize::MAX;

/// Reusable buffers of [`cle`]; keep one per thread and call [`CleWorkspace::decode`].
#[derive(Default, Debug, Clone)]
pub struct CleWorkspace {
    n1: usize,
    /// `w[t * n1 + s]`: (reduced) weight of the best arc from slot `s` into slot `t`; `-inf` on
    /// the diagonal and in the columns of dead slots (rows of active slots).
    w: Vec<f64>,
    /// `arc[t * n1 + s]`: the original arc (`dep * n1 + head`) behind `w[t * n1 + s]`.
    arc: Vec<u32>,
    /// Slots (non-root) that are still top-level nodes of the contracted graph.
    active: Vec<usize>,
    state: Vec<u8>,
    /// Slot a dead slot was merged into (itself while active): resolves arcs kept from the
    /// unconstrained pass that point into a cycle contracted later.
    rep: Vec<usize>,
    best_src: Vec<usize>,
    in_w: Vec<f64>,
    single_root: bool,
    /// Nodes that took their ROOT arc because no other arc enters them (single-root mode).
    sources: usize,
    /// Forest node currently held by each slot.
    slot_node: Vec<usize>,
    // Contraction forest over nodes 0..n1 (original words) and n1.. (cycles).
    parent: Vec<usize>,
    first_child: Vec<usize>,
    next_sibling: Vec<usize>,
    in_arc: Vec<u32>,
    next_node: usize,
    // Scratch.
    path: Vec<usize>,
    members: Vec<usize>,
    in_cycle: Vec<bool>,
    row_w: Vec<f64>,
    row_arc: Vec<u32>,
}

impl CleWorkspace {
    pub fn new() -> Self {
        Self::default()
    }

    /// Maximum spanning tree of `scores[dep * n1 + head]`; see [`cle`].
    pub fn decode(&mut self, scores: &[f64], n1: usize, single_root: bool) -> Result<Vec<i32>> {
        let scores = &*check_scores("cle", scores, n1)?;
        if n1 > u32::MAX as usize / n1.max(1) {
            return Err(crate::Error::InvalidArgument(format!("cle: n1 = {n1} is too large")));
        }
        let mut heads = vec![-1i32; n1];
        if n1 == 1 {
            return Ok(heads);
        }
        self.reset(scores, n1)?;
        // First without the constraint: usually ROOT gets one child and that tree is optimal.
        self.single_root = false;
        self.contract_all()?;
        let root_children = self.active.iter().filter(|&&v| self.best_src[v] == 0).count();
        if single_root && root_children > 1 {
            // The cycles contracted so far are cycles of best non-root arcs too, so they stay;
            // the other nodes keep their arcs, ROOT's children choose again under the rule.
            self.single_root = true;
            self.sources = 0;
            for &v in &self.active {
                self.state[v] = UNVISITED;
                if self.best_src[v] == 0 {
                    self.best_src[v] = NONE;
                }
            }
            self.contract_all()?;
        }
        self.expand(&mut heads);
        Ok(heads)
    }

    /// The n²-sized copies are reserved with `try_reserve` so that a huge n is an error.
    fn reset(&mut self, scores: &[f64], n1: usize) -> Result<()> {
        self.n1 = n1;
        let bytes = scores.len() * 12;
        self.w.clear();
        self.arc.clear();
        self.w.try_reserve_exact(scores.len()).map_err(|_| too_large("cle", n1, bytes))?;
        self.arc.try_reserve_exact(scores.len()).map_err(|_| too_large("cle", n1, bytes))?;
        self.w.extend_from_slice(scores);
        for t in 0..n1 {
            self.w[t * n1 + t] = f64::NEG_INFINITY;
        }
        self.arc.extend(0..(n1 * n1) as u32);
        self.active.clear();
        self.active.extend(1..n1);
        self.state.clear();
        self.state.resize(n1, UNVISITED);
        self.state[0] = DONE;
        self.rep.clear();
        self.rep.extend(0..n1);
        self.best_src.clear();
        self.best_src.resize(n1, NONE);
        self.in_w.clear();
        self.in_w.resize(n1, f64::NEG_INFINITY);
        self.slot_node.clear();
        self.slot_node.extend(0..n1);
        let nodes = 2 * n1;
        self.parent.clear();
        self.parent.resize(nodes, NONE);
        self.first_child.clear();
        self.first_child.resize(nodes, NONE);
        self.next_sibling.clear();
        self.next_sibling.resize(nodes, NONE);
        self.in_arc.clear();
        self.in_arc.resize(nodes, u32::MAX);
        self.next_node = n1;
        self.in_cycle.clear();
        self.in_cycle.resize(n1, false);
        self.row_w.clear();
        self.row_w.resize(n1, f64::NEG_INFINITY);
        self.row_arc.clear();
        self.row_arc.resize(n1, u32::MAX);
        Ok(())
    }

    /// Picks the best incoming arc of slot `t` (first on ties) among ROOT and the active slots;
    /// in single-root mode ROOT only when no other arc enters `t`. O(n). Fails when every
    /// incoming arc is `-inf`, or when a second node can only hang from ROOT.
    fn select_in(&mut self, t: usize) -> Result<usize> {
        let n1 = self.n1;
        let row = &self.w[t * n1..(t + 1) * n1];
        // Dead slots and the diagonal hold -inf, so the whole row can be scanned contiguously.
        let mut alt_w = f64::NEG_INFINITY;
        let mut alt = 0;
        for (s, &v) in row.iter().enumerate().skip(1) {
            if v > alt_w {
                alt_w = v;
                alt = s;
            }
        }
        let (best, best_w) = if alt_w > row[0] || (self.single_root && alt_w > f64::NEG_INFINITY) {
            (alt, alt_w)
        } else {
            (0, row[0])
        };
        if best_w == f64::NEG_INFINITY {
            return Err(no_tree("cle", false));
        }
        if best == 0 && self.single_root {
            self.sources += 1;
            if self.sources > 1 {
                return Err(no_tree("cle", true));
            }
        }
        self.best_src[t] = best;
        self.in_w[t] = best_w;
        self.in_arc[self.slot_node[t]] = self.arc[t * n1 + best];
        Ok(best)
    }

    /// Current slot of a (possibly merged) slot, with path halving.
    fn find(&mut self, mut x: usize) -> usize {
        while self.rep[x] != x {
            let up = self.rep[self.rep[x]];
            self.rep[x] = up;
            x = up;
        }
        x
    }

    /// Tarjan's path growing: every node follows its best incoming arc until it reaches ROOT or a
    /// finished node; cycles met on the way are contracted. O(n²) in total.
    fn contract_all(&mut self) -> Result<()> {
        for start in 1..self.n1 {
            if self.state[start] != UNVISITED {
                continue;
            }
            self.path.clear();
            let mut cur = start;
            loop {
                self.state[cur] = ON_PATH;
                self.path.push(cur);
                // Arcs chosen in the unconstrained pass are kept (see `decode`).
                let b = match self.best_src[cur] {
                    NONE => self.select_in(cur)?,
                    kept => {
                        let b = self.find(kept);
                        self.best_src[cur] = b;
                        b
                    }
                };
                match self.state[b] {
                    UNVISITED => cur = b,
                    ON_PATH => {
                        let j = self.path.iter().rposition(|&p| p == b).unwrap_or(0);
                        let mut members = std::mem::take(&mut self.members);
                        members.clear();
                        members.extend_from_slice(&self.path[j..]);
                        self.path.truncate(j);
                        self.contract(&members, b);
                        self.members = members;
                        cur = b;
                    }
                    _ => {
                        for &p in &self.path {
                            self.state[p] = DONE;
                        }
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// Merges the cycle `members` (each pointing to the next by its best arc) into slot `into`.
    /// O(n · |members|).
    fn contract(&mut self, members: &[usize], into: usize) {
        let n1 = self.n1;
        let node = self.next_node;
        self.next_node += 1;
        for &x in members {
            self.in_cycle[x] = true;
            let child = self.slot_node[x];
            self.parent[child] = node;
            self.next_sibling[child] = self.first_child[node];
            self.first_child[node] = child;
        }
        // Incoming row of the cycle: the gain of entering it at each member. O(n · |C|).
        let (row_w, row_arc) = (&mut self.row_w[..n1], &mut self.row_arc[..n1]);
        row_w.fill(f64::NEG_INFINITY);
        for &x in members {
            let shift = self.in_w[x];
            let (ws, arcs) = (&self.w[x * n1..(x + 1) * n1], &self.arc[x * n1..(x + 1) * n1]);
            for s in 0..n1 {
                let v = ws[s] - shift;
                if v > row_w[s] {
                    row_w[s] = v;
                    row_arc[s] = arcs[s];
                }
            }
        }
        // Outgoing column of the cycle: best arc from any member into each other node.
        for &t in &self.active {
            if self.in_cycle[t] {
                continue;
            }
            let row = t * n1;
            let (mut bw, mut ba) = (self.w[row + into], self.arc[row + into]);
            for &x in members {
                if self.w[row + x] > bw {
                    bw = self.w[row + x];
                    ba = self.arc[row + x];
                }
                self.w[row + x] = f64::NEG_INFINITY; // dead column (restored for `into` below)
            }
            self.w[row + into] = bw;
            self.arc[row + into] = ba;
        }
        let row = into * n1;
        for s in 0..n1 {
            let keep = s != into && (s == 0 || !self.in_cycle[s]);
            self.w[row + s] = if keep { self.row_w[s] } else { f64::NEG_INFINITY };
            self.arc[row + s] = self.row_arc[s];
        }
        let in_cycle = &self.in_cycle;
        self.active.retain(|&s| s == into || !in_cycle[s]);
        for &x in members {
            self.in_cycle[x] = false;
            if x != into {
                self.state[x] = DEAD;
                self.rep[x] = into;
            }
        }
        self.slot_node[into] = node;
        self.best_src[into] = NONE;
    }

    /// Camerini et al. (1979) expansion of the contraction forest into the tree. O(n).
    fn expand(&mut self, heads: &mut [i32]) {
        let n1 = self.n1;
        let mut stack = std::mem::take(&mut self.path);
        stack.clear();
        stack.extend(self.active.iter().map(|&s| self.slot_node[s]));
        while let Some(top) = stack.pop() {
            let arc = self.in_arc[top] as usize;
            let (dep, head) = (arc / n1, arc % n1);
            heads[dep] = head as i32;
            let mut x = dep;
            while x != top {
                let p = self.parent[x];
                let mut y = self.first_child[p];
                while y != NONE {
                    if y != x {
                        stack.push(y);
                    }
                    y = self.next_sibling[y];
                }
                x = p;
            }
        }
        self.path = stack;
    }
}

/// Maximum spanning arborescence of `scores[dep * n1 + head]` (n1 = n + 1, index 0 = ROOT),
/// with ROOT restricted to one child when `single_root`. Returns heads with `heads[0] = -1`.
/// O(n²). Errors: bad shape, NaN or `+inf` → `InvalidArgument`; no tree among the arcs that are
/// not `-inf` → `NoSpanningTree`.
pub fn cle(scores: &[f64], n1: usize, single_root: bool) -> Result<Vec<i32>> {
    CleWorkspace::new().decode(scores, n1, single_root)
}

#[cfg(test)]
mod tests {
    use super::super::brute::{all_trees, square};
    use super::super::tree_score;
    use super::*;
    use crate::Error;
    use proptest::prelude::*;

    fn best(scores: &[f64], trees: &[Vec<i32>]) -> f64 {
        trees.iter().map(|t| tree_score(scores, t)).fold(f64::NEG_INFINITY, f64::max)
    }

    #[test]
    fn hand_example() {
        // Greedy arcs 1 <-> 3 form a cycle; entering it at 1 from 2 loses least: 10 + 9 + 11.
        let n1 = 4;
        let mut s = vec![f64::NEG_INFINITY; 16];
        let mut set = |d: usize, h: usize, v: f64| s[d * n1 + h] = v;
        set(1, 0, 1.0);
        set(2, 0, 10.0);
        set(3, 0, 1.0);
        set(1, 2, 9.0);
        set(3, 2, 8.0);
        set(1, 3, 11.0);
        set(3, 1, 11.0);
        assert_eq!(cle(&s, n1, true).unwrap(), vec![-1, 2, 0, 1]);
    }

    #[test]
    fn errors() {
        assert!(matches!(cle(&[0.0; 5], 2, true), Err(Error::InvalidArgument(_))));
        assert!(matches!(cle(&[0.0, 0.0, f64::NAN, 0.0], 2, true), Err(Error::InvalidArgument(_))));
        let ni = f64::NEG_INFINITY;
        // Word 2 has no possible head.
        let s = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, ni, ni, 0.0];
        assert!(matches!(cle(&s, 3, false), Err(Error::NoSpanningTree(_))));
        // Both words can only attach to ROOT: a tree exists, a single-root tree does not.
        let s = [0.0, 0.0, 0.0, 1.0, 0.0, ni, 1.0, ni, 0.0];
        assert_eq!(cle(&s, 3, false).unwrap(), vec![-1, 0, 0]);
        assert!(matches!(cle(&s, 3, true), Err(Error::NoSpanningTree(_))));
        assert_eq!(cle(&[0.0], 1, true).unwrap(), vec![-1]);
    }

    fn check(scores: &[f64], n1: usize, single_root: bool) {
        let trees = all_trees(n1, false, single_root);
        let want = best(scores, &trees);
        let mut ws = CleWorkspace::new();
        match ws.decode(scores, n1, single_root) {
            Ok(heads) => {
                assert!(trees.contains(&heads), "{heads:?} is not a valid tree");
                assert_eq!(tree_score(scores, &heads), want, "scores {scores:?}");
            }
            Err(Error::NoSpanningTree(_)) => assert_eq!(want, f64::NEG_INFINITY, "scores {scores:?}"),
            Err(e) => panic!("{e}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
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

    #[test]
    fn exhaustive_small_ties() {
        // Every matrix over {0, 1, -inf} for n = 2 (the ROOT row and diagonal stay 0).
        let n1 = 3;
        let vals = [0.0, 1.0, f64::NEG_INFINITY];
        for code in 0..3usize.pow(6) {
            let mut s = vec![0.0; 9];
            let mut c = code;
            for d in 1..3 {
                for h in 0..3 {
                    if h != d {
                        s[d * n1 + h] = vals[c % 3];
                        c /= 3;
                    }
                }
            }
            check(&s, n1, true);
            check(&s, n1, false);
        }
    }
}
