//! One decision loop for the arc-eager system, and the guides that steer it.
//!
//! After dpar's greedy parser (de Kok): a [`Guide`] chooses the next move of a
//! configuration, and [`run`] applies moves until the configuration is terminal, showing
//! each (configuration, move) to a collector first. Parsing, training, DAgger-style
//! trajectories and model-free oracle walks are the same loop with different guides:
//!
//! - [`ModelGuide`]: the model's best valid move and label (parsing);
//! - [`LearnGuide`]: learns the best-scoring zero-cost move of the dynamic oracle
//!   (Goldberg & Nivre 2012), follows the model's move with probability `explore_p`
//!   when exploring (training);
//! - [`MixtureGuide`]: follows the oracle with probability `beta`, else the model, and
//!   records every decision (DAgger, Ross et al. 2011, as He et al. 2013 use it);
//! - [`WalkGuide`]: follows the oracle with probability `beta`, else a random valid
//!   move, with no model at all (tests and error analysis);
//! - [`MarginGuide`]: adds template scores in order, computing each feature when its
//!   template is reached, and stops once the best valid move leads every other valid
//!   move by a margin (the prefix-margin rule of Strubell et al. 2015, Algorithm 1);
//! - [`PrefixLearnGuide`]: trains every prefix of the templates (Strubell et al. 2015,
//!   Algorithm 2) with dynamic-oracle exploration.
//!
//! The oracle is a guide's data, not a special loop; a new policy is a new guide.

use super::oracle::{kind_costs, static_move, KindCosts};
use super::parser::{apply_kind, best_kind, valid_mask, ArcEagerParser, LEFT, N_KINDS, REDUCE, RIGHT, SHIFT};
use super::prefix_margin::{PrefixCounts, PrefixStep};
use super::system::{Configuration, GoldTree, Move};
use super::trajectories::OracleTrajectories;
use super::trajectories::Trajectories;
use crate::templates::attrs::{SentAttrs, VocabHashes};
use crate::templates::config_feats::{ExtractScratch, LazyScratch};
use crate::treebank::Treebank;
use crate::util::Rng;
use crate::weights::{RowAt, WeightTable, Weights};

/// One move: its kind (SHIFT, REDUCE, LEFT, RIGHT) and, for arcs, its label id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub kind: usize,
    pub label: u32,
}

/// Chooses the next move of a non-terminal configuration.
pub trait Guide {
    /// The move to apply from `c`, whose valid move kinds are `valid`; `None` stops the
    /// loop (no move can be chosen).
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step>;
}

/// Applies `guide`'s moves to `c` until it is terminal (or the guide gives up); each
/// configuration and its move are shown to `seen` before the move is applied.
/// O(moves · cost of a choice).
pub fn run(c: &mut Configuration, guide: &mut impl Guide, mut seen: impl FnMut(&Configuration, Step)) {
    while !c.is_terminal() {
        let valid = valid_mask(c);
        let Some(step) = guide.choose(c, &valid) else { break };
        seen(c, step);
        apply_kind(c, step.kind, step.label);
    }
}

/// Per-thread buffers of feature extraction and scoring, reused across sentences.
#[derive(Default)]
pub struct Work {
    pub attrs: SentAttrs,
    pub scratch: ExtractScratch,
    pub feats: Vec<u64>,
    pub label_scores: Vec<f32>,
    /// The lazy label sum's integer part and scaled base (`WeightTable::add_row_running`).
    pub label_ints: Vec<i32>,
    pub label_base: Vec<f32>,
    pub rows: Vec<RowAt>,
    /// Lazy, template-by-template features (the prefix-margin rule).
    pub lazy: LazyScratch,
    /// Label columns an arc may carry; (gold, loss) classes of violating prefixes.
    pub allowed: Vec<bool>,
    pub violations: Vec<(u32, u32)>,
}

impl Work {
    /// Features of every template of `p` in configuration `c`, into `self.feats`.
    #[inline]
    pub fn extract<W: WeightTable>(&mut self, p: &ArcEagerParser<W>, c: &Configuration) {
        self.feats.clear();
        p.features().extract(c, &self.attrs, None, &mut self.scratch, &mut self.feats);
    }
}

/// The zero-cost move kinds of the dynamic oracle, from its costs.
#[inline]
pub fn zero_cost(k: &KindCosts) -> [bool; N_KINDS] {
    [k.shift == Some(0), k.reduce == Some(0), k.left_arc == Some(0), k.right_arc == Some(0)]
}

/// The gold label an arc move of kind `kind` must carry to keep its cost, if any.
#[inline]
pub fn gold_label(k: &KindCosts, kind: usize) -> Option<u32> {
    match kind {
        LEFT => k.left_label,
        RIGHT => k.right_label,
        _ => None,
    }
}

/// The model's best valid move and label. With `margins` (indexed by word position),
/// each scored decision also lowers the margins of the words whose head it could
/// settle to its own (see `record_margin`).
pub struct ModelGuide<'a, W> {
    pub parser: &'a ArcEagerParser<W>,
    pub work: &'a mut Work,
    pub margins: Option<&'a mut Vec<f32>>,
}

impl<W: WeightTable> Guide for ModelGuide<'_, W> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let (p, w) = (self.parser, &mut *self.work);
        // A forced SHIFT or REDUCE (e.g. emptying the stack at the end) needs no
        // features: same result, no row reads.
        if let [true, false, false, false] | [false, true, false, false] = *valid {
            return Some(Step { kind: if valid[SHIFT] { SHIFT } else { REDUCE }, label: 0 });
        }
        w.extract(p, c);
        let scores = p.kind_scores_with(&w.feats, &mut w.rows);
        let kind = best_kind(&scores, valid)?;
        let label = if kind == LEFT || kind == RIGHT { p.model_label(c, kind, w) } else { 0 };
        record_margin(self.margins.as_deref_mut(), c, kind, &scores, valid);
        Some(Step { kind, label })
    }
}

/// Online training of the move and label weights (Goldberg & Nivre 2012, Algorithm 3):
/// learn the best-scoring zero-cost move; follow it, or when exploring a wrong model
/// move with probability `explore_p`.
pub struct LearnGuide<'a> {
    pub parser: &'a mut ArcEagerParser<Weights>,
    pub work: &'a mut Work,
    pub gold: &'a GoldTree,
    pub explore: bool,
    pub explore_p: f64,
    pub rng: &'a mut Rng,
    /// Decisions where the model's move had zero cost, and all decisions.
    pub right: u64,
    pub total: u64,
}

impl Guide for LearnGuide<'_> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let (p, w) = (&mut *self.parser, &mut *self.work);
        w.extract(p, c);
        let scores = p.kind_scores_with(&w.feats, &mut w.rows);
        let costs = kind_costs(c, self.gold);
        let zero = zero_cost(&costs);
        let pred = best_kind(&scores, valid)?;
        let target = best_kind(&scores, &zero)?;
        self.total += 1;
        if zero[pred] {
            self.right += 1;
        } else {
            p.update_moves(&w.feats, target, pred);
        }
        p.tick_moves();
        let follow =
            if self.explore && !zero[pred] && self.rng.unit() < self.explore_p { pred } else { target };
        let gold = gold_label(&costs, target);
        if let Some(g) = gold {
            p.learn_label(c, target, g, w);
        }
        let label = match (follow, gold) {
            (k, Some(g)) if k == target => g,
            (LEFT | RIGHT, _) => p.model_label(c, follow, w),
            _ => 0,
        };
        Some(Step { kind: follow, label })
    }
}

/// Follows the oracle's best-scoring zero-cost move with probability `beta` and the
/// model's move otherwise (one draw per decision), and records every decision.
pub struct MixtureGuide<'a, W> {
    pub parser: &'a ArcEagerParser<W>,
    pub work: &'a mut Work,
    pub gold: &'a GoldTree,
    pub beta: f64,
    pub rng: &'a mut Rng,
    pub sentence: u32,
    pub out: &'a mut Trajectories,
}

impl<W: WeightTable> Guide for MixtureGuide<'_, W> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let (p, w) = (self.parser, &mut *self.work);
        w.extract(p, c);
        let scores = p.kind_scores_with(&w.feats, &mut w.rows);
        let costs = kind_costs(c, self.gold);
        let zero = zero_cost(&costs);
        let (model, oracle) = (best_kind(&scores, valid)?, best_kind(&scores, &zero)?);
        let follow = if self.rng.unit() < self.beta { oracle } else { model };
        let label = match gold_label(&costs, follow) {
            Some(g) => g,
            None if follow == LEFT || follow == RIGHT => p.model_label(c, follow, w),
            None => 0,
        };
        let step = Step { kind: follow, label };
        self.out.push(self.sentence, step, valid, &zero, &costs, model);
        Some(step)
    }
}

/// Follows the oracle with probability `beta`, else a uniformly random valid move; no
/// model. The oracle's move is the static oracle's when that has zero cost, else the
/// first zero-cost kind. Arcs carry their gold label when they are gold arcs, else 0.
/// Records every decision.
pub struct WalkGuide<'a> {
    pub gold: &'a GoldTree,
    pub beta: f64,
    pub rng: &'a mut Rng,
    pub sentence: u32,
    pub out: &'a mut OracleTrajectories,
}

impl Guide for WalkGuide<'_> {
    fn choose(&mut self, c: &Configuration, _valid: &[bool; N_KINDS]) -> Option<Step> {
        let stat = static_move(c, self.gold)?;
        let k = kind_costs(c, self.gold);
        let costs = [k.shift, k.reduce, k.left_arc, k.right_arc];
        let first_zero = costs.iter().position(|&x| x == Some(0))?;
        let stat_kind = match stat {
            Move::Shift => SHIFT,
            Move::Reduce => REDUCE,
            Move::LeftArc(_) => LEFT,
            Move::RightArc(_) => RIGHT,
        };
        let oracle = if costs[stat_kind] == Some(0) { stat_kind } else { first_zero };
        let kind = if self.rng.unit() < self.beta {
            oracle
        } else {
            let valid: Vec<usize> = (0..N_KINDS).filter(|&i| costs[i].is_some()).collect();
            valid[self.rng.below(valid.len() as u64) as usize]
        };
        let out = &mut *self.out;
        out.sentence.push(self.sentence);
        out.s0.push(c.s0());
        out.b0.push(c.b0().unwrap_or(0));
        out.cost.extend(costs.iter().map(|x| x.map_or(-1, |v| v as i32)));
        out.followed.push(kind as u8);
        out.oracle.push(oracle as u8);
        let label = match kind {
            LEFT => k.left_label.unwrap_or(0),
            RIGHT => k.right_label.unwrap_or(0),
            _ => 0,
        };
        Some(Step { kind, label })
    }
}

/// The prefix-margin rule of Strubell et al. (2015, Algorithm 1; see
/// [`super::prefix_margin`]): move scores are summed template by template in the set's
/// order, each feature computed when its template is reached, and the decision stops as
/// soon as the best valid move kind leads every other valid kind by at least `margin`;
/// an arc's label likewise over the label templates. An infinite margin uses every
/// template, summed as [`ModelGuide`] sums them: the same parse. Counts the templates
/// computed.
pub struct MarginGuide<'a, W> {
    pub parser: &'a ArcEagerParser<W>,
    pub work: &'a mut Work,
    pub margin: f32,
    pub counts: PrefixCounts,
    /// As [`ModelGuide::margins`].
    pub margins: Option<&'a mut Vec<f32>>,
}

impl<'a, W> MarginGuide<'a, W> {
    pub fn new(parser: &'a ArcEagerParser<W>, work: &'a mut Work, margin: f32) -> Self {
        MarginGuide { parser, work, margin, counts: PrefixCounts::default(), margins: None }
    }
}

impl<W: WeightTable> Guide for MarginGuide<'_, W> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        if self.margin == f32::INFINITY {
            return self.choose_with_every_template(c, valid);
        }
        let (p, w) = (self.parser, &mut *self.work);
        p.features().begin_lazy(&mut w.lazy);
        let margin = self.margin;
        let n = &mut self.counts;
        // A forced move (one valid kind) needs no move scores; an arc still needs its label.
        let (kind, scores) = if valid.iter().filter(|&&v| v).count() == 1 {
            (valid.iter().position(|&v| v)?, [0f32; N_KINDS])
        } else {
            let (scores, used) = p.kind_scores_lazy(c, w, |acc| leads_by(acc, valid, margin));
            (n.move_templates, n.move_decisions) = (n.move_templates + used as u64, n.move_decisions + 1);
            (best_kind(&scores, valid)?, scores)
        };
        let mut label = 0;
        if kind == LEFT || kind == RIGHT {
            let (l, used) = p.label_lazy(c, kind, w, margin);
            label = l;
            if used > 0 {
                (n.label_templates, n.label_decisions) =
                    (n.label_templates + used as u64, n.label_decisions + 1);
            }
        }
        record_margin(self.margins.as_deref_mut(), c, kind, &scores, valid);
        Some(Step { kind, label })
    }
}

impl<W: WeightTable> MarginGuide<'_, W> {
    /// An infinite margin: every template, summed as [`ModelGuide`] sums them (exactly,
    /// in integers, on an 8-bit table; a float sum template by template could turn a
    /// near-tie the other way), counted as the rule counts them.
    fn choose_with_every_template(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let (p, w, n) = (self.parser, &mut *self.work, &mut self.counts);
        w.extract(p, c);
        let (kind, scores) = if valid.iter().filter(|&&v| v).count() == 1 {
            (valid.iter().position(|&v| v)?, [0f32; N_KINDS])
        } else {
            let scores = p.kind_scores_with(&w.feats, &mut w.rows);
            (n.move_templates, n.move_decisions) =
                (n.move_templates + p.n_templates() as u64, n.move_decisions + 1);
            (best_kind(&scores, valid)?, scores)
        };
        let mut label = 0;
        if kind == LEFT || kind == RIGHT {
            label = p.model_label(c, kind, w);
            let sole = kind == RIGHT && c.s0() == 0 && p.sole_label(kind, true).is_some();
            if !sole {
                let used = p.label_templates.len() as u64;
                (n.label_templates, n.label_decisions) = (n.label_templates + used, n.label_decisions + 1);
            }
        }
        record_margin(self.margins.as_deref_mut(), c, kind, &scores, valid);
        Some(Step { kind, label })
    }
}

/// Prefix-margin training (Strubell et al. 2015, Algorithm 2; see
/// [`super::prefix_margin`]) with dynamic-oracle exploration: every prefix learns
/// until the best zero-cost move leads by the training `margin`; the loop follows
/// that move, or when exploring the wrong move the test-time rule would choose, with
/// probability `explore_p`.
pub struct PrefixLearnGuide<'a> {
    pub parser: &'a mut ArcEagerParser<Weights>,
    pub work: &'a mut Work,
    pub gold: &'a GoldTree,
    /// The margin and how each step learns.
    pub step: PrefixStep,
    pub explore: bool,
    pub explore_p: f64,
    pub rng: &'a mut Rng,
    pub right: u64,
    pub total: u64,
    /// The stagewise baseline (Strubell et al. §6.1): only this template (of the move
    /// and of the label order) learns, over the prefix that ends with it.
    pub stage: Option<usize>,
}

impl Guide for PrefixLearnGuide<'_> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let (p, w) = (&mut *self.parser, &mut *self.work);
        let costs = kind_costs(c, self.gold);
        let zero = zero_cost(&costs);
        p.features().begin_lazy(&mut w.lazy);
        if self.step.full_sum() {
            w.extract(p, c); // the full sum's update needs every feature
        }
        let forced = valid.iter().filter(|&&v| v).count() == 1;
        let margin = self.step.margin;
        let (pred, target) = if forced {
            let k = valid.iter().position(|&v| v)?;
            (k, k)
        } else {
            let m = match self.stage {
                Some(st) => p.learn_moves_stage(c, valid, &zero, w, margin, st)?,
                None => p.learn_moves_prefix(c, valid, &zero, w, self.step)?,
            };
            self.total += 1;
            self.right += u64::from(zero[m.predicted]);
            (m.predicted, m.target)
        };
        let follow =
            if self.explore && !zero[pred] && self.rng.unit() < self.explore_p { pred } else { target };
        let gold = gold_label(&costs, target);
        match (gold, self.stage) {
            (Some(g), Some(st)) => p.learn_label_stage(c, target, g, w, margin, st),
            (Some(g), None) => p.learn_label_prefix(c, target, g, w, self.step),
            (None, _) => {}
        }
        let label = match (follow, gold) {
            (k, Some(g)) if k == target => g,
            (LEFT | RIGHT, _) => p.label_lazy(c, follow, w, margin).0,
            _ => 0,
        };
        Some(Step { kind: follow, label })
    }
}

/// Records in `margins` (by word position) the closest call so far among the scored
/// decisions that could have given a word its head: a decision with a valid rival
/// counts, by how far the chosen move led the best other valid move, for the buffer
/// front and for a headless stack top (the two words whose head it can settle). The
/// caller starts every word at +inf; a word no such decision concerned gets 0.
pub(super) fn record_margin(
    margins: Option<&mut Vec<f32>>,
    c: &Configuration,
    kind: usize,
    scores: &[f32; N_KINDS],
    valid: &[bool; N_KINDS],
) {
    use crate::templates::view::ConfigView;
    let Some(m) = margins else { return };
    let Some(rival) = (0..N_KINDS)
        .filter(|&k| k != kind && valid[k])
        .map(|k| scores[k])
        .fold(None, |a: Option<f32>, s| Some(a.map_or(s, |a| a.max(s))))
    else {
        return;
    };
    let d = scores[kind] - rival;
    let headless_top = c.stack(0).filter(|&w| w != 0 && !c.has_head(w));
    for w in [c.queue(0), headless_top].into_iter().flatten() {
        m[w as usize] = m[w as usize].min(d);
    }
}

/// Whether the best valid kind leads every other valid kind by at least `margin`
/// (true when only one kind is valid).
pub fn leads_by(scores: &[f32; N_KINDS], valid: &[bool; N_KINDS], margin: f32) -> bool {
    let Some(best) = best_kind(scores, valid) else { return true };
    (0..N_KINDS).all(|k| k == best || !valid[k] || scores[best] - scores[k] >= margin)
}

/// Sets `c` to the initial configuration of sentence `s` of `tb` and `work` to its
/// attribute values (from `vh`, the treebank's vocabulary hashes). O(words).
pub fn begin(tb: &Treebank, vh: &VocabHashes, s: usize, c: &mut Configuration, work: &mut Work) {
    c.reset(tb.sentences[s].len);
    work.attrs.fill(vh, tb, s);
}

#[cfg(test)]
mod margin_tests {
    use super::*;

    /// The closest call counts for the buffer front and a headless stack top, never for
    /// a stack top that has its head, and a decision without a valid rival counts for
    /// nobody.
    #[test]
    fn record_margin_keeps_the_closest_call_of_the_words_a_decision_can_settle() {
        let mut c = Configuration::new(3);
        apply_kind(&mut c, SHIFT, 0); // stack [0, 1], buffer [2, 3]
        let mut m = vec![f32::INFINITY; 4];
        let all = [true; N_KINDS];
        // SHIFT chosen, 1.5 ahead of the best other valid move: words 1 and 2 are concerned.
        record_margin(Some(&mut m), &c, SHIFT, &[4.0, 2.5, 1.0, 0.0], &all);
        assert_eq!(m, [f32::INFINITY, 1.5, 1.5, f32::INFINITY]);
        // A closer call lowers them; a wider one leaves them.
        record_margin(Some(&mut m), &c, LEFT, &[0.0, 0.0, 0.5, 0.0], &all);
        record_margin(Some(&mut m), &c, SHIFT, &[9.0, 0.0, 0.0, 0.0], &all);
        assert_eq!(m, [f32::INFINITY, 0.5, 0.5, f32::INFINITY]);
        // Word 2 attached to 1 (RIGHT): stack [0, 1, 2] with 2 headed, buffer [3].
        apply_kind(&mut c, RIGHT, 0);
        record_margin(Some(&mut m), &c, REDUCE, &[0.0, 0.25, 0.0, 0.0], &all);
        assert_eq!(m, [f32::INFINITY, 0.5, 0.5, 0.25]);
        // Only one valid move: no rival, nothing recorded.
        let only_shift = [true, false, false, false];
        record_margin(Some(&mut m), &c, SHIFT, &[0.0, 9.0, 9.0, 9.0], &only_shift);
        assert_eq!(m, [f32::INFINITY, 0.5, 0.5, 0.25]);
    }
}
