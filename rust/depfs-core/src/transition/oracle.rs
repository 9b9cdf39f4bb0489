//! Oracles for arc-eager.
//!
//! - Static oracle (Nivre 2003 style): the canonical move sequence that rebuilds
//!   a projective gold tree (LEFT-ARC, else RIGHT-ARC, else REDUCE once s0 has all
//!   its dependents, else SHIFT).
//! - Dynamic oracle of Goldberg & Nivre (2012), *A Dynamic Oracle for Arc-Eager
//!   Dependency Parsing* (COLING): arc-eager is arc-decomposable, so the cost of a
//!   move (gold arcs it makes unreachable) is a local count, and the zero-cost
//!   moves from ANY configuration lead to the best tree still reachable. Costs are
//!   on the move types in `system.rs`; the tests check them against a brute-force
//!   search over every move sequence.
//!
//! The oracle returns both the moves to learn (all zero-cost moves) and the move to
//! follow (chosen by the caller: the model's best move when exploring, or the
//! best-scoring zero-cost move).

use super::system::{Configuration, GoldTree, LeftArc, Move, Reduce, RightArc, Shift, Transition};

/// The static oracle's move; `None` at a terminal configuration.
/// Requires a projective gold tree for the result to be exact. O(|buffer|).
pub fn static_move(c: &Configuration, gold: &GoldTree) -> Option<Move> {
    let b = c.b0()?;
    let s0 = c.s0();
    if s0 != 0 && !c.has_head(s0) && gold.head[s0 as usize] == b {
        return Some(Move::LeftArc(gold.label[s0 as usize]));
    }
    if gold.head[b as usize] == s0 {
        return Some(Move::RightArc(gold.label[b as usize]));
    }
    if Reduce.is_valid(c) && Reduce.cost(c, gold) == 0 {
        return Some(Move::Reduce);
    }
    Some(Move::Shift)
}

/// Costs of the four move kinds, unlabelled part only (`None` = invalid). The
/// labelled cost adds one for an arc move whose arc is gold but whose label is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindCosts {
    pub shift: Option<u32>,
    pub reduce: Option<u32>,
    /// Cost of LEFT-ARC with the gold label (if b is s0's gold head) or any label.
    pub left_arc: Option<u32>,
    pub right_arc: Option<u32>,
    /// The label that LEFT-ARC must use to keep `left_arc` (None = any label).
    pub left_label: Option<u32>,
    /// Likewise for RIGHT-ARC.
    pub right_label: Option<u32>,
}

/// Costs of every move kind from `c`. O(|stack| + |buffer|).
pub fn kind_costs(c: &Configuration, gold: &GoldTree) -> KindCosts {
    let mut k = KindCosts {
        shift: None,
        reduce: None,
        left_arc: None,
        right_arc: None,
        left_label: None,
        right_label: None,
    };
    let Some(b) = c.b0() else { return k };
    let s0 = c.s0();
    if Shift.is_valid(c) {
        k.shift = Some(Shift.cost(c, gold));
    }
    if Reduce.is_valid(c) {
        k.reduce = Some(Reduce.cost(c, gold));
    }
    if LeftArc(0).is_valid(c) {
        let gold_arc = gold.head[s0 as usize] == b;
        let l = gold.label[s0 as usize];
        k.left_label = gold_arc.then_some(l);
        k.left_arc = Some(LeftArc(if gold_arc { l } else { 0 }).cost(c, gold));
    }
    if RightArc(0).is_valid(c) {
        let gold_arc = gold.head[b as usize] == s0;
        let l = gold.label[b as usize];
        k.right_label = gold_arc.then_some(l);
        k.right_arc = Some(RightArc(if gold_arc { l } else { 0 }).cost(c, gold));
    }
    k
}

/// Marks the zero-cost moves in `out` (length `Move::count(n_labels)`, indexed by
/// `Move::index`). Returns how many there are (≥ 1 in a non-terminal
/// configuration for a projective gold tree). O(|stack| + |buffer| + labels).
pub fn zero_cost_moves(c: &Configuration, gold: &GoldTree, n_labels: u32, out: &mut [bool]) -> usize {
    out.iter_mut().for_each(|x| *x = false);
    let k = kind_costs(c, gold);
    let mut count = 0;
    let mut mark = |m: Move, out: &mut [bool]| {
        out[m.index(n_labels)] = true;
        count += 1;
    };
    if k.shift == Some(0) {
        mark(Move::Shift, out);
    }
    if k.reduce == Some(0) {
        mark(Move::Reduce, out);
    }
    if k.left_arc == Some(0) {
        match k.left_label {
            Some(l) => mark(Move::LeftArc(l), out),
            None => (0..n_labels).for_each(|l| mark(Move::LeftArc(l), out)),
        }
    }
    if k.right_arc == Some(0) {
        match k.right_label {
            Some(l) => mark(Move::RightArc(l), out),
            None => (0..n_labels).for_each(|l| mark(Move::RightArc(l), out)),
        }
    }
    count
}

/// Follows the static oracle from the initial configuration; returns the move
/// sequence, or `None` if a move is invalid (non-projective or malformed gold).
pub fn static_sequence(gold: &GoldTree) -> Option<(Vec<Move>, Configuration)> {
    let mut c = Configuration::new(gold.len());
    let mut moves = Vec::with_capacity(2 * gold.len() as usize + 1);
    while let Some(m) = static_move(&c, gold) {
        if !m.is_valid(&c) {
            return None;
        }
        m.apply(&mut c);
        moves.push(m);
    }
    Some((moves, c))
}
