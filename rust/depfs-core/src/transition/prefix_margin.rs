//! Prefix-margin dynamic feature selection for the arc-eager parser.
//!
//! Strubell, Vilnis, Silverstein & McCallum (2015), *Learning Dynamic Feature Selection
//! for Fast Sequential Prediction* (ACL), §4. Templates are added in a fixed, learned
//! order (the parser's template set order: the forward wrapper's, §4.5.2); the i-th
//! *prefix score* of a class is the sum of the first i templates' weights for it.
//!
//! - **Inference (Algorithm 1)**: add one template at a time and stop as soon as the
//!   best valid class leads every other valid class by at least the margin m; a
//!   decision that never reaches the margin uses every template. Features are computed
//!   lazily ([`ConfigFeatures::feature`]): a decision that stops after three templates
//!   pays for three (atoms, hashes, rows), not for the rest. The rule applies to the
//!   move decision and, for an arc move, to its label decision, both with the same m
//!   and the same order (the label templates are a subsequence of the move order, so a
//!   label decision first reuses the features its move decision computed; both
//!   classifiers are trained with the same margin, so one m means the same confidence
//!   in both).
//! - **Training (§4.4, Algorithm 2)**: every prefix is trained as a classifier of its
//!   own. For a decision, prefixes are added until the gold class leads by m (i*);
//!   each prefix i < i* where it does not contributes the loss-augmented hinge
//!   gradient Φ(y_loss(P_i)) − Φ(y) to each of its templates, so template j receives
//!   one update per violating prefix i ≥ j. With several zero-cost moves (dynamic
//!   oracle) the gold class of a prefix is its best-scoring zero-cost move and the
//!   loss class its best-scoring other valid move. Two update rules
//!   ([`PrefixStep`]): the AdaGrad step of the paper (learning rate 1) with its ℓ2
//!   term (`prefix_l2`), or a perceptron step (±1 per violating prefix, so template j
//!   moves by its count of violating prefixes, up to T: margins are then in those
//!   units, ~100× AdaGrad's, whose per-weight step is at most 1); the weights are
//!   averaged over the updates as everywhere in depfs. Optionally (`full` > 0) the sum
//!   of all templates also takes the full model's perceptron update on every decision,
//!   so the sum Algorithm 1 falls back on is trained on every decision rather than only
//!   on those no earlier prefix settled (on en_ewt dev it lifts the model at every
//!   template from 78.3 to 86.8 LAS, and with it every margin: docs/methods.md).
//!
//! Cost per decision: O(i) row reads for a decision stopped after i templates (and at
//! most max(1, i) features computed ahead, see [`ahead`]); in training O(i*) reads and
//! updates (O(T) with the full sum).

use serde::{Deserialize, Serialize};

use super::guide::{leads_by, Work};
use super::parser::{best_kind, dir_index, ArcEagerParser, LEFT, LEFT_SALT, N_KINDS, RIGHT_SALT};
use super::system::Configuration;
use crate::templates::hash::combine;
use crate::weights::{RowAt, WeightTable, Weights};
use crate::{Error, Result};

/// The starting score of a label column an arc may not carry: far below any sum of
/// weights, far above −∞ (so that differences stay finite).
pub(super) const BARRED: f32 = -1e30;

/// A prefix that met the margin (no gradient), kept when every prefix is trained.
const NO_LOSS: u32 = u32::MAX;

/// Templates whose features are computed and rows prefetched ahead of the one being
/// added, at least (see [`ahead`]).
const LOOKAHEAD: usize = 1;

/// How many templates past template t (0-based, being added) have their features
/// computed and rows prefetched: LOOKAHEAD, then t. Stop points are skewed (most
/// decisions stop within a few templates, the rest run long), so the window grows
/// with t and keeps ~t cache misses in flight, as the batch path does, while a
/// decision that stops after i templates computes at most max(LOOKAHEAD, i) features
/// it does not use. Where the rule stops is unchanged. (Measured on en_ewt, m = 30:
/// a fixed window of 3, or 3 label rows prefetched at the start of each decision, cost
/// 8% more instructions and were no faster.)
#[inline]
fn ahead(t: usize) -> usize {
    t.max(LOOKAHEAD)
}

/// The parse-time margins a dynamic model keeps, chosen on dev after training
/// (`depfs.dynamic.strubell2015.choose_presets`): `accurate` (the default: the cheapest
/// margin of the dev sweep within 0.1 LAS of the sweep's best score — of the full model's,
/// for a cascade) and `fast` (the cheapest within 1.0 LAS).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MarginPresets {
    pub train: f32,
    pub accurate: f32,
    pub fast: f32,
}

impl MarginPresets {
    /// Whether every margin is a finite number ≥ 0 (a model file's are checked).
    pub fn is_valid(&self) -> bool {
        [self.train, self.accurate, self.fast].iter().all(|m| m.is_finite() && *m >= 0.0)
    }
}

/// Checks the options of prefix-margin training (the parser's and the tagger's): a
/// margin, if any, positive and finite; an ℓ2 strength in [0, 1).
pub fn check_training(margin: Option<f32>, l2: f32) -> Result<()> {
    if margin.is_some_and(|m| !(m.is_finite() && m > 0.0)) {
        return Err(Error::InvalidArgument(format!(
            "the prefix margin must be a positive number, got {margin:?}"
        )));
    }
    if !(0.0..1.0).contains(&l2) {
        return Err(Error::InvalidArgument(format!("l2 must be in [0, 1), got {l2}")));
    }
    Ok(())
}

/// Templates computed by the prefix-margin rule: for move decisions (configurations
/// with more than one valid move kind) and for label decisions (arc moves whose label
/// needed scores).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PrefixCounts {
    pub move_templates: u64,
    pub move_decisions: u64,
    pub label_templates: u64,
    pub label_decisions: u64,
}

impl PrefixCounts {
    pub fn add(&mut self, o: &PrefixCounts) {
        self.move_templates += o.move_templates;
        self.move_decisions += o.move_decisions;
        self.label_templates += o.label_templates;
        self.label_decisions += o.label_decisions;
    }
}

/// Whether the best column of `scores` leads every other column by at least `margin`
/// (barred columns start at [`BARRED`], so they never lead and always trail: with one
/// allowed column the lead is ~1e30). O(columns).
#[inline]
pub(super) fn column_leads_by(scores: &[f32], margin: f32) -> bool {
    // Each of LANES lanes keeps the top two of its columns without branches (compiled
    // to vector max/min: a label row is ~64 columns, checked after every template);
    // the overall top two are among the lanes' top twos.
    const LANES: usize = 8;
    let (chunks, rest) = scores.as_chunks::<LANES>();
    let (mut top, mut next) = ([f32::NEG_INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
    for ch in chunks {
        for k in 0..LANES {
            let (s, t) = (ch[k], top[k]);
            let low = if s < t { s } else { t };
            next[k] = if low > next[k] { low } else { next[k] };
            top[k] = if s > t { s } else { t };
        }
    }
    // Halve the lanes, merging the top twos of lanes k and k + w, down to one lane.
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for k in 0..w {
            let (a, b) = (top[k], top[k + w]);
            let (low, runner) =
                (if a < b { a } else { b }, if next[k] > next[k + w] { next[k] } else { next[k + w] });
            next[k] = if low > runner { low } else { runner };
            top[k] = if a > b { a } else { b };
        }
    }
    let (mut best, mut second) = (top[0], next[0]);
    for &s in rest {
        if s > best {
            (best, second) = (s, best);
        } else if s > second {
            second = s;
        }
    }
    best - second >= margin
}

/// The allowed column with the highest score, the first on ties (+0 above −0, as
/// `f32::total_cmp` orders them; scores are finite sums), None when none is allowed.
/// The maximum is taken per lane of 8 (vector max over ~64 label columns, once per
/// prefix in training), then the columns are scanned for its first occurrence. O(columns).
fn best_allowed(scores: &[f32], allowed: &[bool]) -> Option<usize> {
    const LANES: usize = 8;
    let n = scores.len().min(allowed.len());
    let (scores, allowed) = (&scores[..n], &allowed[..n]);
    let mut top = [f32::NEG_INFINITY; LANES];
    let (chunks, rest) = scores.as_chunks::<LANES>();
    for (ch, ok) in chunks.iter().zip(allowed.chunks_exact(LANES)) {
        for k in 0..LANES {
            let s = if ok[k] { ch[k] } else { f32::NEG_INFINITY };
            top[k] = if s > top[k] { s } else { top[k] };
        }
    }
    let mut max = top.iter().fold(f32::NEG_INFINITY, |m, &s| if s > m { s } else { m });
    for (&s, &ok) in rest.iter().zip(&allowed[n - rest.len()..]) {
        if ok && s > max {
            max = s;
        }
    }
    let first = |want: &dyn Fn(f32) -> bool| (0..n).find(|&k| allowed[k] && want(scores[k]));
    if max == 0.0 {
        // Both zeros compare equal: +0 first, as total_cmp would.
        return first(&|s| s == 0.0 && s.is_sign_positive()).or_else(|| first(&|s| s == 0.0));
    }
    first(&|s| s == max)
}

impl<W: WeightTable> ArcEagerParser<W> {
    /// Move scores summed template by template in set order, each feature computed when
    /// its template is reached; after each template `stop` sees the running sums and
    /// may end there (Algorithm 1 exactly: the stop is checked after every template).
    /// `w.lazy` must have been started on `c`
    /// ([`crate::templates::config_feats::ConfigFeatures::begin_lazy`]). Returns the
    /// sums and the number of templates added. O(templates added) reads; at most
    /// max(LOOKAHEAD, templates added) more features computed and rows prefetched.
    pub(crate) fn kind_scores_lazy(
        &self,
        c: &Configuration,
        w: &mut Work,
        mut stop: impl FnMut(&[f32; N_KINDS]) -> bool,
    ) -> ([f32; N_KINDS], usize) {
        let mut acc = [0f32; N_KINDS];
        // (The running sum ends on the full model's bits: see `add_row_running`.)
        let (mut ints, mut base) = ([0i32; N_KINDS], [0f32; N_KINDS]);
        let n = self.n_templates();
        let weights = self.move_weights();
        let Work { attrs, lazy, feats, .. } = w;
        feats.clear();
        for t in 0..n {
            // Features computed and rows prefetched `ahead` of the template being
            // added, so their cache misses overlap as in the batch path.
            let want = (t + 1 + ahead(t)).min(n);
            for u in feats.len()..want {
                let f = self.features().feature(u, c, attrs, lazy);
                weights.prefetch_rows(&[RowAt { start: weights.row_start(u, f), template: u }]);
                feats.push(f);
            }
            weights.add_row_running(t, feats[t], t, &mut ints, &mut base, &mut acc);
            if stop(&acc) {
                return (acc, t + 1);
            }
        }
        (acc, n)
    }

    /// The label of an arc move of kind `dir` from `c` by the prefix-margin rule: label
    /// templates added in order until the best allowed label leads every other allowed
    /// label by `margin`. Returns the label and the templates added (0 when the arc
    /// admits one label). O(templates added · row width).
    pub(crate) fn label_lazy(
        &self,
        c: &Configuration,
        dir: usize,
        w: &mut Work,
        margin: f32,
    ) -> (u32, usize) {
        let to_root = dir == super::parser::RIGHT && c.s0() == 0;
        if let Some(l) = if to_root { self.sole_label(dir, true) } else { None } {
            return (l, 0);
        }
        w.label_scores.clear();
        w.label_scores.extend_from_slice(&self.label_bias[2 * dir_index(dir) + usize::from(to_root)]);
        let salt = if dir == LEFT { LEFT_SALT } else { RIGHT_SALT };
        let (lt, weights) = (&self.label_templates, self.label_weights());
        let Work { attrs, lazy, feats, label_scores, label_ints, label_base, .. } = w;
        label_base.clone_from(label_scores);
        label_ints.clear();
        label_ints.resize(label_scores.len(), 0);
        // As for moves: features computed and rows prefetched `ahead` of the one added.
        feats.clear();
        let mut used = lt.len();
        for i in 0..lt.len() {
            let want = (i + 1 + ahead(i)).min(lt.len());
            for (j, &t) in lt.iter().enumerate().take(want).skip(feats.len()) {
                let f = combine(self.features().feature(t, c, attrs, lazy), salt);
                weights.prefetch_rows(&[RowAt { start: weights.row_start(j, f), template: j }]);
                feats.push(f);
            }
            weights.add_row_running(i, feats[i], i, label_ints, label_base, label_scores);
            if column_leads_by(label_scores, margin) {
                used = i + 1;
                break;
            }
        }
        (self.best_label(&w.label_scores, dir, to_root), used)
    }

    /// `out[c]`: whether column c of a label row of direction `dir` names a label such
    /// an arc may carry (padding columns never).
    fn allowed_columns(&self, dir: usize, to_root: bool, out: &mut Vec<bool>) {
        let ok = if to_root { &self.root_ok } else { &self.nonroot_ok };
        out.clear();
        out.resize(self.label_weights().width(), false);
        for (c, &l) in self.label_cols[dir_index(dir)].iter().enumerate() {
            out[c] = ok[l as usize];
        }
    }
}

/// What one prefix-trained move decision found.
pub(crate) struct PrefixMove {
    /// The move the test-time rule (Algorithm 1) would choose at the training margin.
    pub predicted: usize,
    /// The best-scoring zero-cost move at the last prefix computed.
    pub target: usize,
}

/// How a prefix-margin training step learns (Algorithm 2 and the options around it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrefixStep {
    /// The margin every prefix is trained to reach.
    pub margin: f32,
    /// Train every prefix on every decision (the hinge of each, 0 where it meets the
    /// margin), not only those before the first that meets it.
    pub all_prefixes: bool,
    /// Averaged perceptron steps (±1 per violating prefix, summed per template) in
    /// place of AdaGrad with ℓ2.
    pub perceptron: bool,
    /// With `full` > 0, also train the full sum the ordinary way on every decision:
    /// when the best valid class of all templates has a cost, +`full` to the best
    /// zero-cost class and −`full` to it on every template (the full model's update),
    /// so the sum Algorithm 1 falls back on when no prefix reaches the margin is
    /// trained on every decision, not only on hard ones. Features then come from one
    /// batch extraction per decision (`Work::feats`, filled by the caller), which the
    /// prefix loop reads too. 0: off.
    pub full: f32,
}

impl PrefixStep {
    /// Whether the full sum is trained too (and features come in a batch).
    #[inline]
    pub fn full_sum(&self) -> bool {
        self.full > 0.0
    }
}

impl ArcEagerParser<Weights> {
    /// Template t's feature in `c`: from the batch in `w.feats` (`batch`) or lazily.
    #[inline]
    fn train_feature(&self, t: usize, c: &Configuration, w: &mut Work, batch: bool) -> u64 {
        if batch {
            w.feats[t]
        } else {
            self.features().feature(t, c, &w.attrs, &mut w.lazy)
        }
    }

    /// One prefix-hinge step of the move weights (Algorithm 2) in `c`, whose valid move
    /// kinds are `valid` and zero-cost ones `zero` (⊆ valid, not empty): prefixes are
    /// added until the best zero-cost move leads the best other valid move by the
    /// margin, then template j is moved by +1 towards the gold and −1 from the loss
    /// class of each violating prefix i ≥ j (and with `step.full`, the full sum's
    /// ordinary update on top). O(i*) reads and updates (O(T) with `step.full`).
    pub(crate) fn learn_moves_prefix(
        &mut self,
        c: &Configuration,
        valid: &[bool; N_KINDS],
        zero: &[bool; N_KINDS],
        w: &mut Work,
        step: PrefixStep,
    ) -> Option<PrefixMove> {
        let wrong: [bool; N_KINDS] = std::array::from_fn(|k| valid[k] && !zero[k]);
        let mut acc = [0f32; N_KINDS];
        let mut predicted = None;
        w.violations.clear();
        let mut target = best_kind(&acc, zero)?;
        let mut settled = false;
        for t in 0..self.n_templates() {
            let f = self.train_feature(t, c, w, step.full_sum());
            self.move_weights().add_row(t, f, &mut acc);
            if predicted.is_none() && leads_by(&acc, valid, step.margin) {
                predicted = best_kind(&acc, valid);
            }
            if settled {
                continue; // with `full`: on to the full sum
            }
            target = best_kind(&acc, zero)?;
            match best_kind(&acc, &wrong) {
                Some(loss) if acc[target] - acc[loss] < step.margin => {
                    w.violations.push((target as u32, loss as u32))
                }
                Some(_) if step.all_prefixes => w.violations.push((target as u32, NO_LOSS)),
                _ if step.full_sum() => settled = true,
                _ => break,
            }
        }
        let predicted = predicted.or_else(|| best_kind(&acc, valid))?;
        // With `full`, `acc` is now the full sum: its update is the full model's.
        let mut full_update = None;
        if step.full_sum() {
            let pred = best_kind(&acc, valid)?;
            if !zero[pred] {
                full_update = Some((best_kind(&acc, zero)?, pred));
            }
        }
        // The updates below are random writes to the training arrays (weights,
        // averaging; AdaGrad and ℓ2 state): their lines are requested first, so the
        // misses overlap.
        for j in 0..w.violations.len() {
            let (gold, loss) = w.violations[j];
            let f = self.train_feature(j, c, w, step.full_sum());
            for k in [gold, loss].into_iter().filter(|&k| k != NO_LOSS) {
                self.move_w.prefetch_update(j, f, k as usize);
            }
        }
        // Template j's update is the sum over violating prefixes i ≥ j: a suffix sum.
        let mut delta = [0f32; N_KINDS];
        for j in (0..w.violations.len()).rev() {
            let (gold, loss) = w.violations[j];
            if loss != NO_LOSS {
                delta[gold as usize] += 1.0;
                delta[loss as usize] -= 1.0;
            }
            let f = self.train_feature(j, c, w, step.full_sum());
            for (k, &d) in delta.iter().enumerate() {
                if d != 0.0 {
                    self.move_w.step(step.perceptron, j, f, k, d);
                }
            }
        }
        if let Some((gold, pred)) = full_update {
            for t in 0..self.n_templates() {
                let f = w.feats[t];
                self.move_w.step(step.perceptron, t, f, gold, step.full);
                self.move_w.step(step.perceptron, t, f, pred, -step.full);
            }
        }
        self.move_w.tick();
        Some(PrefixMove { predicted, target })
    }

    /// The start of a label step for an arc of kind `dir` from `c` with gold label
    /// `gold`: `w.allowed` set to the gold label's rivals, `w.label_scores` to zeros;
    /// returns the gold column and the direction's salt. None (the averaging clock
    /// ticked, nothing to learn) when the gold label has no column here.
    fn label_step_start(
        &mut self,
        c: &Configuration,
        dir: usize,
        gold: u32,
        w: &mut Work,
    ) -> Option<(usize, u64)> {
        let to_root = dir == super::parser::RIGHT && c.s0() == 0;
        let gc = self.label_col_of[dir_index(dir)].get(gold as usize).copied().unwrap_or(super::NONE);
        if gc == super::NONE {
            self.label_w.tick();
            return None;
        }
        let gc = gc as usize;
        self.allowed_columns(dir, to_root, &mut w.allowed);
        w.allowed[gc] = false; // the rivals of the gold label
        w.label_scores.clear();
        w.label_scores.resize(self.label_weights().width(), 0.0);
        Some((gc, if dir == LEFT { LEFT_SALT } else { RIGHT_SALT }))
    }

    /// One prefix-hinge step of the label weights for an arc of kind `dir` from `c`
    /// whose gold label is `gold` (the label rows' counterpart of
    /// [`Self::learn_moves_prefix`]). O(i* · row width) (every label template with
    /// `step.full`).
    pub(crate) fn learn_label_prefix(
        &mut self,
        c: &Configuration,
        dir: usize,
        gold: u32,
        w: &mut Work,
        step: PrefixStep,
    ) {
        let Some((gc, salt)) = self.label_step_start(c, dir, gold, w) else { return };
        w.violations.clear();
        let mut settled = false;
        for i in 0..self.label_templates.len() {
            let t = self.label_templates[i];
            let f = combine(self.train_feature(t, c, w, step.full_sum()), salt);
            self.label_weights().add_row(i, f, &mut w.label_scores);
            if settled {
                continue; // with `full`: on to the full sum
            }
            match best_allowed(&w.label_scores, &w.allowed) {
                Some(r) if w.label_scores[gc] - w.label_scores[r] < step.margin => {
                    w.violations.push((gc as u32, r as u32))
                }
                Some(_) if step.all_prefixes => w.violations.push((gc as u32, NO_LOSS)),
                _ if step.full_sum() => settled = true,
                _ => break,
            }
        }
        // With `full`, the full sum's rival; its update when it is not below the gold.
        let full_rival = if step.full_sum() {
            best_allowed(&w.label_scores, &w.allowed).filter(|&r| w.label_scores[r] >= w.label_scores[gc])
        } else {
            None
        };
        // As for moves, the updated lines are requested first: template i's columns
        // are the gold one and the loss columns of prefixes i and later (a few).
        for i in 0..w.violations.len() {
            let loss = w.violations[i].1;
            let f = combine(self.train_feature(self.label_templates[i], c, w, step.full_sum()), salt);
            self.label_w.prefetch_update(i, f, gc);
            if loss != NO_LOSS {
                self.label_w.prefetch_update(i, f, loss as usize);
            }
        }
        // Suffix sums over the violating prefixes, as for moves; the loss columns of a
        // decision are few, so the deltas are kept as a short list.
        let mut delta: Vec<(usize, f32)> = Vec::new();
        for i in (0..w.violations.len()).rev() {
            let loss = w.violations[i].1;
            for (col, d) in [(gc, 1.0), (loss as usize, -1.0)].into_iter().filter(|_| loss != NO_LOSS) {
                match delta.iter_mut().find(|(c, _)| *c == col) {
                    Some(e) => e.1 += d,
                    None => delta.push((col, d)),
                }
            }
            let t = self.label_templates[i];
            let f = combine(self.train_feature(t, c, w, step.full_sum()), salt);
            for &(col, d) in &delta {
                if d != 0.0 {
                    self.label_w.step(step.perceptron, i, f, col, d);
                }
            }
        }
        if let Some(r) = full_rival {
            for i in 0..self.label_templates.len() {
                let f = combine(w.feats[self.label_templates[i]], salt);
                self.label_w.step(step.perceptron, i, f, gc, step.full);
                self.label_w.step(step.perceptron, i, f, r, -step.full);
            }
        }
        self.label_w.tick();
    }
}

impl ArcEagerParser<Weights> {
    /// One step of the stagewise baseline (Strubell et al. §6.1) at stage `stage`: the
    /// prefix of move templates 0..=stage scores the moves (earlier templates frozen by
    /// the trainer) and only template `stage` is moved, by the hinge step of
    /// [`Self::learn_moves_prefix`], when the best zero-cost move does not lead the best
    /// other valid move by `margin`. O(stage) reads, two updates at most.
    pub(crate) fn learn_moves_stage(
        &mut self,
        c: &Configuration,
        valid: &[bool; N_KINDS],
        zero: &[bool; N_KINDS],
        w: &mut Work,
        margin: f32,
        stage: usize,
    ) -> Option<PrefixMove> {
        let wrong: [bool; N_KINDS] = std::array::from_fn(|k| valid[k] && !zero[k]);
        let last = stage.min(self.n_templates() - 1);
        let mut acc = [0f32; N_KINDS];
        let mut predicted = None;
        let mut f = 0;
        for t in 0..=last {
            f = self.features().feature(t, c, &w.attrs, &mut w.lazy);
            self.move_weights().add_row(t, f, &mut acc);
            if predicted.is_none() && leads_by(&acc, valid, margin) {
                predicted = best_kind(&acc, valid);
            }
        }
        let target = best_kind(&acc, zero)?;
        if let Some(loss) = best_kind(&acc, &wrong).filter(|&l| acc[target] - acc[l] < margin) {
            self.move_w.update_adagrad(last, f, target, 1.0);
            self.move_w.update_adagrad(last, f, loss, -1.0);
        }
        self.move_w.tick();
        let predicted = predicted.or_else(|| best_kind(&acc, valid))?;
        Some(PrefixMove { predicted, target })
    }

    /// The label rows' counterpart of [`Self::learn_moves_stage`]: label templates
    /// 0..=min(stage, last) score the labels of an arc of kind `dir` from `c`, and only
    /// the last of them is moved when the gold label `gold` does not lead by `margin`.
    pub(crate) fn learn_label_stage(
        &mut self,
        c: &Configuration,
        dir: usize,
        gold: u32,
        w: &mut Work,
        margin: f32,
        stage: usize,
    ) {
        if self.label_templates.is_empty() {
            self.label_w.tick();
            return;
        }
        let Some((gc, salt)) = self.label_step_start(c, dir, gold, w) else { return };
        let last = stage.min(self.label_templates.len() - 1);
        let mut f = 0;
        for i in 0..=last {
            let t = self.label_templates[i];
            f = combine(self.features().feature(t, c, &w.attrs, &mut w.lazy), salt);
            self.label_weights().add_row(i, f, &mut w.label_scores);
        }
        if let Some(r) = best_allowed(&w.label_scores, &w.allowed) {
            if w.label_scores[gc] - w.label_scores[r] < margin {
                self.label_w.update_adagrad(last, f, gc, 1.0);
                self.label_w.update_adagrad(last, f, r, -1.0);
            }
        }
        self.label_w.tick();
    }
}

#[cfg(test)]
mod tests {
    use super::super::guide::{begin, run, Guide, MarginGuide, ModelGuide, Step};
    use super::super::parser::{TrainOptions, RIGHT};
    use super::*;
    use crate::templates::attrs::VocabHashes;
    use crate::treebank::Treebank;

    #[test]
    fn a_column_leads_over_the_others_and_a_barred_column_never_leads() {
        assert!(column_leads_by(&[5.0, 1.0, BARRED, BARRED], 3.0));
        assert!(!column_leads_by(&[5.0, 1.0, 4.5, BARRED], 3.0));
        assert!(column_leads_by(&[BARRED, BARRED, 4.5, BARRED], 1e20), "one allowed column");
        assert!(column_leads_by(&[5.0, BARRED, BARRED, 9.0], 4.0));
        assert!(!column_leads_by(&[5.0, BARRED, BARRED, 9.0], 4.5));
    }

    /// The lane-wise argmax against the scalar `max_by` over `total_cmp` it replaced, on
    /// rows of every length up to 70 with ties, both zeros and masked columns.
    #[test]
    fn the_best_allowed_column_is_the_first_total_cmp_maximum() {
        let mut rng = crate::util::rng::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.next_u64();
        for len in 0..=70 {
            for _ in 0..60 {
                let row: Vec<f32> = (0..len)
                    .map(|_| match next() % 6 {
                        0 => 0.0,
                        1 => -0.0,
                        2 => 2.5,
                        _ => (next() % 1000) as f32 / 100.0 - 5.0,
                    })
                    .collect();
                let allowed: Vec<bool> = (0..len).map(|_| next() % 4 != 0).collect();
                let want = (0..len)
                    .filter(|&k| allowed[k])
                    .max_by(|&a, &b| row[a].total_cmp(&row[b]).then(b.cmp(&a)));
                assert_eq!(best_allowed(&row, &allowed), want, "{row:?} {allowed:?}");
            }
        }
    }

    /// The lane-wise check against sorting, on rows of every length up to 70 (whole
    /// lanes and a rest), with ties, barred columns and a lone allowed column.
    #[test]
    fn the_lane_wise_lead_equals_the_lead_of_the_sorted_row() {
        let mut rng = crate::util::rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        for len in 1..=70 {
            for _ in 0..40 {
                let row: Vec<f32> = (0..len)
                    .map(|_| match next() % 8 {
                        0 => BARRED,
                        1 => 3.0, // ties
                        r => (next() % 2000) as f32 / 100.0 - 10.0 + r as f32,
                    })
                    .collect();
                let mut sorted = row.clone();
                sorted.sort_by(|a, b| b.total_cmp(a));
                let lead = if len == 1 { f32::INFINITY } else { sorted[0] - sorted[1] };
                for margin in [0.0, 0.01, 0.5, 2.0, 5.0, 1e20] {
                    assert_eq!(column_leads_by(&row, margin), lead >= margin, "{row:?} at {margin}");
                }
            }
        }
    }

    /// The rule's sums against the rows added one at a time, in every configuration of
    /// the toy treebank's parses, on a set long enough for the prefetch window to grow.
    #[test]
    fn lazy_sums_stop_where_asked_and_equal_the_rows_added_one_by_one() {
        let mut tb = Treebank::new();
        for s in super::super::testing::toy_sentences() {
            tb.push_sentence(&s, vec![]);
        }
        let set = crate::templates::defaults::load("arc_eager").unwrap();
        let p =
            ArcEagerParser::train(set, &tb, &TrainOptions { epochs: 2, ..TrainOptions::default() }, |_| true)
                .unwrap();
        let n = p.n_templates();
        assert!(n > 4 * LOOKAHEAD && p.label_templates.len() > 4 * LOOKAHEAD, "{n} templates");
        let vh = VocabHashes::new(&tb, &p.features().attrs);
        let (mut c, mut work, mut w) = (Configuration::default(), Work::default(), Work::default());
        let (mut configs, mut label_stops) = (0, std::collections::HashSet::new());
        for s in 0..tb.len() {
            begin(&tb, &vh, s, &mut c, &mut work);
            w.attrs.fill(&vh, &tb, s);
            run(&mut c, &mut ModelGuide { parser: &p, work: &mut work, margins: None }, |cf, _| {
                configs += 1;
                w.extract(&p, cf);
                let feats = w.feats.clone();
                let mut sums = vec![[0f32; N_KINDS]];
                for (t, &f) in feats.iter().enumerate() {
                    let mut acc = sums[t];
                    p.move_weights().add_row(t, f, &mut acc);
                    sums.push(acc);
                }
                for k in 1..=n + 1 {
                    p.features().begin_lazy(&mut w.lazy);
                    let mut calls = 0;
                    let (acc, used) = p.kind_scores_lazy(cf, &mut w, |_| {
                        calls += 1;
                        calls == k
                    });
                    assert_eq!((used, acc), (k.min(n), sums[k.min(n)]), "stop asked after {k}");
                }
                // Labels: the rule added one row at a time, with its margin check after each.
                for (dir, salt) in [(LEFT, LEFT_SALT), (RIGHT, RIGHT_SALT)] {
                    let to_root = dir == RIGHT && cf.s0() == 0;
                    for margin in [0.0, 0.5, 2.0, 8.0, f32::INFINITY] {
                        p.features().begin_lazy(&mut w.lazy);
                        let got = p.label_lazy(cf, dir, &mut w, margin);
                        let want = match p.sole_label(dir, true).filter(|_| to_root) {
                            Some(l) => (l, 0),
                            None => {
                                let mut sc = p.label_bias[2 * dir_index(dir) + usize::from(to_root)].clone();
                                let mut used = 0;
                                for (i, &t) in p.label_templates.iter().enumerate() {
                                    p.label_weights().add_row(i, combine(feats[t], salt), &mut sc);
                                    used = i + 1;
                                    if column_leads_by(&sc, margin) {
                                        break;
                                    }
                                }
                                (p.best_label(&sc, dir, to_root), used)
                            }
                        };
                        assert_eq!(got, want, "dir {dir}, margin {margin}");
                        label_stops.insert(got.1);
                    }
                }
            });
        }
        assert!(configs >= 20, "{configs} configurations");
        assert!(label_stops.len() > 3, "label decisions stop at several points: {label_stops:?}");
    }

    /// The toy treebank `copies` times over and the shipped arc-eager set's (8-bit)
    /// parser trained on it with `opts`.
    fn toy_parser(copies: usize, opts: &TrainOptions) -> (Treebank, ArcEagerParser) {
        let mut tb = Treebank::new();
        for _ in 0..copies {
            for s in super::super::testing::toy_sentences() {
                tb.push_sentence(&s, vec![]);
            }
        }
        let set = crate::templates::defaults::load("arc_eager").unwrap();
        let p = ArcEagerParser::train(set, &tb, opts, |_| true).unwrap();
        (tb, p)
    }

    /// On the 8-bit model a parse reads, a decision that adds every template one at a
    /// time ends on the full model's sums bit for bit (its label rows share one scale
    /// and the batch adds them as integers), so a margin no lead reaches parses exactly
    /// as an infinite one.
    #[test]
    fn running_sums_of_every_template_are_the_full_models_bits() {
        let (tb, p) = toy_parser(3, &TrainOptions { epochs: 2, ..TrainOptions::default() });
        assert!(p.label_weights().quantized_parts().is_some(), "the parse-time model is 8-bit");
        let vh = VocabHashes::new(&tb, &p.features().attrs);
        let (mut c, mut work, mut w) = (Configuration::default(), Work::default(), Work::default());
        let mut compared = 0;
        for s in 0..tb.len() {
            begin(&tb, &vh, s, &mut c, &mut work);
            w.attrs.fill(&vh, &tb, s);
            run(&mut c, &mut ModelGuide { parser: &p, work: &mut work, margins: None }, |cf, _| {
                w.extract(&p, cf);
                let feats = w.feats.clone();
                let full = p.kind_scores_with(&feats, &mut w.rows);
                p.features().begin_lazy(&mut w.lazy);
                let (lazy, used) = p.kind_scores_lazy(cf, &mut w, |_| false);
                assert_eq!(used, p.n_templates());
                assert_eq!(lazy.map(f32::to_bits), full.map(f32::to_bits));
                for dir in [LEFT, RIGHT] {
                    let to_root = dir == RIGHT && cf.s0() == 0;
                    if to_root && p.sole_label(dir, true).is_some() {
                        continue;
                    }
                    let mut batch = Vec::new();
                    p.label_scores(&feats, dir, &mut w.rows, &mut batch);
                    p.features().begin_lazy(&mut w.lazy);
                    let (label, used) = p.label_lazy(cf, dir, &mut w, f32::INFINITY);
                    assert_eq!(used, p.label_templates.len());
                    let bias = &p.label_bias[2 * dir_index(dir) + usize::from(to_root)];
                    for (k, (&b, &x)) in bias.iter().zip(&batch).enumerate() {
                        if b == 0.0 {
                            assert_eq!(w.label_scores[k].to_bits(), x.to_bits(), "column {k}");
                            compared += 1;
                        }
                    }
                    assert_eq!(label, p.best_label(&batch, dir, to_root));
                }
            });
        }
        assert!(compared > 100, "{compared} label scores compared");
        // Whole parses: a margin no lead reaches, and an infinite one.
        let (huge, _, _) = p.parse_with(&tb, 1, false, Some(1e30)).unwrap();
        let (all, _, _) = p.parse_with(&tb, 1, false, Some(f32::INFINITY)).unwrap();
        assert_eq!((&huge.words.head, &huge.words.deprel), (&all.words.head, &all.words.deprel));
    }

    /// Algorithm 1 on the batch features, one decision at a time: what the lazy path
    /// must parse exactly as (moves, labels and where each decision stops, counted as
    /// [`MarginGuide`] counts them).
    struct Reference<'a, W> {
        p: &'a ArcEagerParser<W>,
        w: Work,
        margin: f32,
        counts: PrefixCounts,
        move_stops: std::collections::HashSet<usize>,
    }

    impl<W: WeightTable> Guide for Reference<'_, W> {
        fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
            let (p, margin) = (self.p, self.margin);
            self.w.extract(p, c);
            let feats = &self.w.feats;
            let kind = if valid.iter().filter(|&&v| v).count() == 1 {
                valid.iter().position(|&v| v)?
            } else {
                let (mut acc, mut used) = ([0f32; N_KINDS], feats.len());
                for (t, &f) in feats.iter().enumerate() {
                    p.move_weights().add_row(t, f, &mut acc);
                    if leads_by(&acc, valid, margin) {
                        used = t + 1;
                        break;
                    }
                }
                self.move_stops.insert(used);
                (self.counts.move_templates, self.counts.move_decisions) =
                    (self.counts.move_templates + used as u64, self.counts.move_decisions + 1);
                best_kind(&acc, valid)?
            };
            if kind != LEFT && kind != RIGHT {
                return Some(Step { kind, label: 0 });
            }
            let to_root = kind == RIGHT && c.s0() == 0;
            if let Some(label) = p.sole_label(kind, true).filter(|_| to_root) {
                return Some(Step { kind, label });
            }
            let salt = if kind == LEFT { LEFT_SALT } else { RIGHT_SALT };
            let mut sc = p.label_bias[2 * dir_index(kind) + usize::from(to_root)].clone();
            let mut used = p.label_templates.len();
            for (i, &t) in p.label_templates.iter().enumerate() {
                p.label_weights().add_row(i, combine(feats[t], salt), &mut sc);
                if column_leads_by(&sc, margin) {
                    used = i + 1;
                    break;
                }
            }
            (self.counts.label_templates, self.counts.label_decisions) =
                (self.counts.label_templates + used as u64, self.counts.label_decisions + 1);
            Some(Step { kind, label: p.best_label(&sc, kind, to_root) })
        }
    }

    /// Whole parses of a prefix-trained model by the lazy path (features computed
    /// template by template) equal Algorithm 1 run on the batch features, at margins
    /// where decisions stop after one template, after many, or never.
    #[test]
    fn lazy_parses_are_algorithm_1_on_the_batch_features_move_for_move() {
        let opts = TrainOptions { epochs: 3, prefix_margin: Some(10.0), ..TrainOptions::default() };
        let (tb, p) = toy_parser(4, &opts);
        let vh = VocabHashes::new(&tb, &p.features().attrs);
        let mut reference = Reference {
            p: &p,
            w: Work::default(),
            margin: 0.0,
            counts: PrefixCounts::default(),
            move_stops: Default::default(),
        };
        let (mut c, mut work) = (Configuration::default(), Work::default());
        let mut decided = 0;
        for margin in [0.0, 0.5, 2.0, 5.0, 10.0, 20.0, f32::INFINITY] {
            (reference.margin, reference.counts) = (margin, PrefixCounts::default());
            let mut counts = PrefixCounts::default();
            for s in 0..tb.len() {
                let mut want = Vec::new();
                begin(&tb, &vh, s, &mut c, &mut reference.w);
                run(&mut c, &mut reference, |_, m| want.push((m.kind, m.label)));
                let mut got = Vec::new();
                begin(&tb, &vh, s, &mut c, &mut work);
                let mut g = MarginGuide::new(&p, &mut work, margin);
                run(&mut c, &mut g, |_, m| got.push((m.kind, m.label)));
                assert_eq!(got, want, "sentence {s} at margin {margin}");
                counts.add(&g.counts);
                decided += got.len();
            }
            assert_eq!(counts, reference.counts, "templates added at margin {margin}");
        }
        assert!(decided > 100, "{decided} moves");
        let stops = &reference.move_stops;
        assert!(stops.len() > 5 && stops.contains(&1), "move decisions stop at several points: {stops:?}");
    }
}
