//! The arc-eager transition system of Nivre (2003), *An Efficient Algorithm for
//! Projective Dependency Parsing* (IWPT), with labelled arcs, as used by Nilsson &
//! Nugues (2010) and by the dynamic oracle of Goldberg & Nivre (2012).
//!
//! **ROOT handling (the "ROOT first" variant).** ROOT (word 0) starts at the
//! bottom of the stack, as in Goldberg & Nivre (2012). This keeps their
//! arc-decomposable move costs exact (see `oracle.rs`), which the tree-constrained
//! variants do not (ROOT at the end of the buffer, Ballesteros & Nivre 2013, or the
//! UNSHIFT move of Nivre & Fernández-González 2014 make costs depend on future
//! obligations). A single root is enforced by validity:
//! - RIGHT-ARC from ROOT only while ROOT has no dependent;
//! - REDUCE never pops ROOT's dependent (it stays at stack position 1), so every
//!   word headless at the end can still be attached below it;
//! - SHIFT never empties the buffer (the last word is attached by RIGHT-ARC), so
//!   the final word always gets a head from the transitions.
//!
//! The parse ends when the buffer is empty. Words still headless then (impossible
//! on the gold path of a projective tree, rare after errors) are attached by
//! [`Configuration::finish`] to ROOT's dependent, which keeps one root.
//!
//! Word indices are 1-based sentence positions; 0 is ROOT. The buffer is an index
//! (`buffer_front ..= n`), never a queue.

use crate::templates::view::ConfigView;

/// "No word" in the u32 arrays of a configuration.
pub const NONE: u32 = u32::MAX;

/// A parser state: stack, buffer front, and the partial tree with the
/// navigation arrays that feature templates read (all O(1) to query and update).
#[derive(Debug, Clone, Default)]
pub struct Configuration {
    n: u32,
    stack: Vec<u32>,
    /// Front of the buffer; the buffer is `buffer_front ..= n` (empty when > n).
    buffer_front: u32,
    head: Vec<u32>,
    label: Vec<u32>,
    leftmost: Vec<u32>,
    rightmost: Vec<u32>,
    left_sib: Vec<u32>,
    right_sib: Vec<u32>,
    n_left: Vec<u32>,
    n_right: Vec<u32>,
}

impl Configuration {
    /// Initial configuration for an `n`-word sentence: stack `[ROOT]`, buffer `1..=n`.
    pub fn new(n: u32) -> Self {
        let mut c = Configuration::default();
        c.reset(n);
        c
    }

    /// Reuses the allocations for a new sentence of `n` words. O(n).
    pub fn reset(&mut self, n: u32) {
        let len = n as usize + 1;
        self.n = n;
        self.stack.clear();
        self.stack.push(0);
        self.buffer_front = 1;
        for v in [
            &mut self.head,
            &mut self.label,
            &mut self.leftmost,
            &mut self.rightmost,
            &mut self.left_sib,
            &mut self.right_sib,
        ] {
            v.clear();
            v.resize(len, NONE);
        }
        for v in [&mut self.n_left, &mut self.n_right] {
            v.clear();
            v.resize(len, 0);
        }
    }

    pub fn len(&self) -> u32 {
        self.n
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// The parse is over when every word has left the buffer.
    pub fn is_terminal(&self) -> bool {
        self.buffer_front > self.n
    }
    /// The stack, bottom (ROOT) first.
    pub fn stack_slice(&self) -> &[u32] {
        &self.stack
    }
    /// Top of the stack (the stack is never empty: ROOT stays at the bottom).
    pub fn s0(&self) -> u32 {
        self.stack[self.stack.len() - 1]
    }
    /// Second word of the stack, if any.
    pub fn s1(&self) -> Option<u32> {
        let l = self.stack.len();
        (l >= 2).then(|| self.stack[l - 2])
    }
    /// Front of the buffer, if the buffer is not empty.
    pub fn b0(&self) -> Option<u32> {
        (self.buffer_front <= self.n).then_some(self.buffer_front)
    }
    pub fn buffer_front(&self) -> u32 {
        self.buffer_front
    }
    /// Number of words left in the buffer.
    pub fn buffer_len(&self) -> u32 {
        (self.n + 1).saturating_sub(self.buffer_front)
    }
    /// Head of `w` or `NONE`.
    pub fn head_of(&self, w: u32) -> u32 {
        self.head[w as usize]
    }
    pub fn label_of(&self, w: u32) -> u32 {
        self.label[w as usize]
    }
    pub fn has_head(&self, w: u32) -> bool {
        self.head[w as usize] != NONE
    }
    /// Whether ROOT already has its (single) dependent.
    pub fn root_has_dependent(&self) -> bool {
        self.rightmost[0] != NONE
    }
    /// Heads, index 0 = ROOT (`NONE`), `NONE` for words without a head yet.
    pub fn heads(&self) -> &[u32] {
        &self.head
    }
    pub fn labels(&self) -> &[u32] {
        &self.label
    }

    /// Adds the arc `h -> d` with label `l`. Arc-eager adds a head's left
    /// dependents nearest first and its right dependents left to right, so a new
    /// left dependent is always the new leftmost child and a new right dependent
    /// the new rightmost: siblings and valencies update in O(1).
    fn add_arc(&mut self, h: u32, d: u32, l: u32) {
        let (hu, du) = (h as usize, d as usize);
        self.head[du] = h;
        self.label[du] = l;
        if d < h {
            let old = self.leftmost[hu];
            if old != NONE {
                self.left_sib[old as usize] = d;
                self.right_sib[du] = old;
            }
            self.leftmost[hu] = d;
            if self.rightmost[hu] == NONE {
                self.rightmost[hu] = d;
            }
            self.n_left[hu] += 1;
        } else {
            let old = self.rightmost[hu];
            if old != NONE {
                self.right_sib[old as usize] = d;
                self.left_sib[du] = old;
            }
            self.rightmost[hu] = d;
            if self.leftmost[hu] == NONE {
                self.leftmost[hu] = d;
            }
            self.n_right[hu] += 1;
        }
    }

    /// Attaches every word still without a head once the buffer is empty: to
    /// ROOT's dependent (or, if ROOT has none, the first such word becomes it),
    /// with label `fallback`; ROOT's dependent gets `root_label`. Keeps one root.
    /// Returns the number of words attached this way. O(n).
    pub fn finish(&mut self, root_label: u32, fallback: u32) -> u32 {
        let mut attached = 0;
        for w in 1..=self.n {
            if self.head[w as usize] != NONE {
                continue;
            }
            attached += 1;
            let r = self.rightmost[0];
            if r == NONE {
                self.add_arc(0, w, root_label);
            } else {
                self.add_arc(r, w, fallback);
            }
        }
        attached
    }
}

impl ConfigView for Configuration {
    fn stack(&self, i: usize) -> Option<u32> {
        // ROOT at the bottom is part of the stack (STACK_i may be 0 = ROOT).
        let l = self.stack.len();
        (i < l).then(|| self.stack[l - 1 - i])
    }
    fn queue(&self, i: usize) -> Option<u32> {
        let w = self.buffer_front as u64 + i as u64;
        (w <= self.n as u64).then_some(w as u32)
    }
    fn head(&self, w: u32) -> Option<u32> {
        opt(*self.head.get(w as usize)?)
    }
    fn label(&self, w: u32) -> Option<u32> {
        opt(*self.label.get(w as usize)?)
    }
    fn leftmost_child(&self, w: u32) -> Option<u32> {
        opt(*self.leftmost.get(w as usize)?)
    }
    fn rightmost_child(&self, w: u32) -> Option<u32> {
        opt(*self.rightmost.get(w as usize)?)
    }
    fn left_sibling(&self, w: u32) -> Option<u32> {
        opt(*self.left_sib.get(w as usize)?)
    }
    fn right_sibling(&self, w: u32) -> Option<u32> {
        opt(*self.right_sib.get(w as usize)?)
    }
    fn n_left_children(&self, w: u32) -> u32 {
        self.n_left.get(w as usize).copied().unwrap_or(0)
    }
    fn n_right_children(&self, w: u32) -> u32 {
        self.n_right.get(w as usize).copied().unwrap_or(0)
    }
    fn n_words(&self) -> u32 {
        self.n
    }
}

#[inline]
fn opt(v: u32) -> Option<u32> {
    (v != NONE).then_some(v)
}

/// The gold tree a cost is measured against: `head[d]`, `label[d]` for d in
/// 1..=n (index 0 unused), labels as ids of the parser's label set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoldTree {
    pub head: Vec<u32>,
    pub label: Vec<u32>,
}

impl GoldTree {
    /// From 1-based heads/labels given for words 1..=n (slices of length n).
    pub fn new(heads: &[u32], labels: &[u32]) -> Self {
        let mut head = Vec::with_capacity(heads.len() + 1);
        head.push(NONE);
        head.extend_from_slice(heads);
        let mut label = Vec::with_capacity(labels.len() + 1);
        label.push(NONE);
        label.extend_from_slice(labels);
        GoldTree { head, label }
    }
    pub fn len(&self) -> u32 {
        self.head.len().saturating_sub(1) as u32
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The words whose gold head is ROOT.
    pub fn root_dependents(&self) -> impl Iterator<Item = u32> + '_ {
        (1..self.head.len() as u32).filter(move |&d| self.head[d as usize] == 0)
    }
}

/// What every move offers: validity, the update, and the Goldberg & Nivre
/// (2012) cost = number of gold arcs reachable before the move and not after.
pub trait Transition {
    fn is_valid(&self, c: &Configuration) -> bool;
    /// Applies the move; the caller checks `is_valid` first.
    fn apply(&self, c: &mut Configuration);
    /// Cost against a projective single-rooted `gold`; only meaningful for a
    /// valid move. O(|stack| + |buffer|).
    fn cost(&self, c: &Configuration, gold: &GoldTree) -> u32;
}

/// The gold arc `k -> b` with k on the stack is still reachable, except from ROOT
/// once ROOT has its dependent.
#[inline]
fn stack_head_reachable(c: &Configuration, k: u32) -> bool {
    k != 0 || !c.root_has_dependent()
}

/// SHIFT: push the buffer front onto the stack.
///
/// Valid iff the buffer holds at least two words (the last word is never shifted,
/// it is attached by RIGHT-ARC so that it always gets a head).
/// Cost: gold arcs between b and the stack that b can no longer get: its head
/// k in the stack (from ROOT only while ROOT is free) and its dependents k in the
/// stack that have no head yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shift;

impl Transition for Shift {
    fn is_valid(&self, c: &Configuration) -> bool {
        c.buffer_len() >= 2
    }
    fn apply(&self, c: &mut Configuration) {
        c.stack.push(c.buffer_front);
        c.buffer_front += 1;
    }
    fn cost(&self, c: &Configuration, gold: &GoldTree) -> u32 {
        let b = c.buffer_front;
        let gh = gold.head[b as usize];
        let mut cost = 0;
        for &k in &c.stack {
            if gh == k && stack_head_reachable(c, k) {
                cost += 1;
            }
            if k != 0 && gold.head[k as usize] == b && !c.has_head(k) {
                cost += 1;
            }
        }
        cost
    }
}

/// REDUCE: pop the stack top s0.
///
/// Valid iff s0 has a head and is not ROOT's dependent (s1 ≠ ROOT), and the
/// buffer is not empty. Cost: the gold dependents of s0 still in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reduce;

impl Transition for Reduce {
    fn is_valid(&self, c: &Configuration) -> bool {
        let s0 = c.s0();
        !c.is_terminal() && s0 != 0 && c.has_head(s0) && c.s1() != Some(0)
    }
    fn apply(&self, c: &mut Configuration) {
        c.stack.pop();
    }
    fn cost(&self, c: &Configuration, gold: &GoldTree) -> u32 {
        let s0 = c.s0();
        (c.buffer_front..=c.n).filter(|&k| gold.head[k as usize] == s0).count() as u32
    }
}

/// LEFT-ARC(l): add the arc b -> s0 with label l and pop s0.
///
/// Valid iff the buffer is not empty, s0 is not ROOT and s0 has no head.
/// Cost: s0's gold dependents still in the buffer, plus its gold head if that is
/// in the buffer after b, plus one if b is its gold head but l the wrong label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeftArc(pub u32);

impl Transition for LeftArc {
    fn is_valid(&self, c: &Configuration) -> bool {
        let s0 = c.s0();
        !c.is_terminal() && s0 != 0 && !c.has_head(s0)
    }
    fn apply(&self, c: &mut Configuration) {
        let s0 = c.s0();
        c.add_arc(c.buffer_front, s0, self.0);
        c.stack.pop();
    }
    fn cost(&self, c: &Configuration, gold: &GoldTree) -> u32 {
        let s0 = c.s0();
        let b = c.buffer_front;
        let mut cost = Reduce.cost(c, gold);
        let gh = gold.head[s0 as usize];
        if gh > b && gh <= c.n {
            cost += 1;
        }
        if gh == b && gold.label[s0 as usize] != self.0 {
            cost += 1;
        }
        cost
    }
}

/// RIGHT-ARC(l): add the arc s0 -> b with label l and push b.
///
/// Valid iff the buffer is not empty, and s0 ≠ ROOT or ROOT has no dependent yet.
/// Cost: b's gold head if it is elsewhere in the buffer or elsewhere in the stack
/// (from ROOT only while ROOT is free); b's gold dependents in the stack without a
/// head; one if s0 = ROOT and ROOT's gold dependent is another buffer word; one
/// if s0 is b's gold head but l the wrong label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RightArc(pub u32);

impl Transition for RightArc {
    fn is_valid(&self, c: &Configuration) -> bool {
        !c.is_terminal() && (c.s0() != 0 || !c.root_has_dependent())
    }
    fn apply(&self, c: &mut Configuration) {
        let b = c.buffer_front;
        c.add_arc(c.s0(), b, self.0);
        c.stack.push(b);
        c.buffer_front += 1;
    }
    fn cost(&self, c: &Configuration, gold: &GoldTree) -> u32 {
        let s0 = c.s0();
        let b = c.buffer_front;
        let gh = gold.head[b as usize];
        let mut cost = 0;
        if gh > b && gh <= c.n {
            cost += 1;
        }
        for &k in &c.stack {
            if k != s0 && gh == k && stack_head_reachable(c, k) {
                cost += 1;
            }
            if k != 0 && gold.head[k as usize] == b && !c.has_head(k) {
                cost += 1;
            }
        }
        if s0 == 0 {
            // ROOT takes b as its only dependent: ROOT's gold dependent r is lost
            // if it is still waiting in the buffer.
            cost += gold.root_dependents().filter(|&r| r > b && r <= c.n).count() as u32;
        }
        if gh == s0 && gold.label[b as usize] != self.0 {
            cost += 1;
        }
        cost
    }
}

/// One move of the system, as stored in transition sequences and weight rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    Shift,
    Reduce,
    LeftArc(u32),
    RightArc(u32),
}

impl Move {
    /// Number of moves for `n_labels` labels: SHIFT, REDUCE, LEFT-ARC(l), RIGHT-ARC(l).
    pub fn count(n_labels: u32) -> usize {
        2 + 2 * n_labels as usize
    }
    /// Dense index: 0 SHIFT, 1 REDUCE, 2 + l LEFT-ARC(l), 2 + L + l RIGHT-ARC(l).
    pub fn index(self, n_labels: u32) -> usize {
        match self {
            Move::Shift => 0,
            Move::Reduce => 1,
            Move::LeftArc(l) => 2 + l as usize,
            Move::RightArc(l) => 2 + n_labels as usize + l as usize,
        }
    }
    /// Inverse of [`Move::index`]; `None` out of range.
    pub fn from_index(i: usize, n_labels: u32) -> Option<Move> {
        let nl = n_labels as usize;
        match i {
            0 => Some(Move::Shift),
            1 => Some(Move::Reduce),
            i if i < 2 + nl => Some(Move::LeftArc((i - 2) as u32)),
            i if i < 2 + 2 * nl => Some(Move::RightArc((i - 2 - nl) as u32)),
            _ => None,
        }
    }
    pub fn is_valid(self, c: &Configuration) -> bool {
        match self {
            Move::Shift => Shift.is_valid(c),
            Move::Reduce => Reduce.is_valid(c),
            Move::LeftArc(l) => LeftArc(l).is_valid(c),
            Move::RightArc(l) => RightArc(l).is_valid(c),
        }
    }
    pub fn apply(self, c: &mut Configuration) {
        match self {
            Move::Shift => Shift.apply(c),
            Move::Reduce => Reduce.apply(c),
            Move::LeftArc(l) => LeftArc(l).apply(c),
            Move::RightArc(l) => RightArc(l).apply(c),
        }
    }
    pub fn cost(self, c: &Configuration, gold: &GoldTree) -> u32 {
        match self {
            Move::Shift => Shift.cost(c, gold),
            Move::Reduce => Reduce.cost(c, gold),
            Move::LeftArc(l) => LeftArc(l).cost(c, gold),
            Move::RightArc(l) => RightArc(l).cost(c, gold),
        }
    }
}

/// Validity of the four move kinds at once (labels do not change validity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidKinds {
    pub shift: bool,
    pub reduce: bool,
    pub left_arc: bool,
    pub right_arc: bool,
}

impl Configuration {
    pub fn valid_kinds(&self) -> ValidKinds {
        ValidKinds {
            shift: Shift.is_valid(self),
            reduce: Reduce.is_valid(self),
            left_arc: LeftArc(0).is_valid(self),
            right_arc: RightArc(0).is_valid(self),
        }
    }
}
