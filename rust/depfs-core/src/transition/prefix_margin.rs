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
//!   loss class its best-scoring other valid move. The update rule is the averaged
//!   AdaGrad step of the paper (learning rate 1), without its ℓ2 term, and the
//!   weights are averaged over the updates as everywhere in depfs. (A perceptron step
//!   does not work here: template j's gradient grows with the number of violating
//!   prefixes after it, up to T, so one update of the first templates overshoots any
//!   margin and training stops at prefix 1; AdaGrad's per-weight step is at most 1.)
//!
//! Cost per decision: O(i) row reads for a decision stopped after i templates; in
//! training O(i*) reads and updates.

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
/// added (see [`ArcEagerParser::kind_scores_lazy`]).
const LOOKAHEAD: usize = 3;

/// The parse-time margins a dynamic model keeps, chosen on dev after training:
/// `accurate` (the default: the cheapest margin within 0.1 LAS of the model using
/// every template) and `fast` (the cheapest within 1.0 LAS).
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
fn column_leads_by(scores: &[f32], margin: f32) -> bool {
    let (mut best, mut second) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
    for &s in scores {
        if s > best {
            (best, second) = (s, best);
        } else if s > second {
            second = s;
        }
    }
    best - second >= margin
}

impl<W: WeightTable> ArcEagerParser<W> {
    /// Move scores summed template by template in set order, each feature computed when
    /// its template is reached; after each template `stop` sees the running sums and
    /// may end there. `w.lazy` must have been started on `c`
    /// ([`crate::templates::config_feats::ConfigFeatures::begin_lazy`]). Returns the
    /// sums and the number of templates added. O(templates added).
    pub(crate) fn kind_scores_lazy(
        &self,
        c: &Configuration,
        w: &mut Work,
        mut stop: impl FnMut(&[f32; N_KINDS]) -> bool,
    ) -> ([f32; N_KINDS], usize) {
        let mut acc = [0f32; N_KINDS];
        let n = self.n_templates();
        let weights = self.move_weights();
        // Rows are read one template at a time, so each would wait for its cache miss:
        // the next LOOKAHEAD templates' features are computed and their rows prefetched
        // ahead, so the misses overlap; `ring` keeps those features until their turn
        // (slot t % LOOKAHEAD holds template t's). A decision that stops after i
        // templates computes at most i + LOOKAHEAD features, each once, and reads i rows.
        let ahead = |t: usize, w: &mut Work| {
            let f = self.features().feature(t, c, &w.attrs, &mut w.lazy);
            weights.prefetch_rows(&[RowAt { start: weights.row_start(t, f), template: t }]);
            f
        };
        let mut ring = [0u64; LOOKAHEAD];
        for (t, slot) in ring.iter_mut().enumerate().take(n) {
            *slot = ahead(t, w);
        }
        for t in 0..n {
            let f = ring[t % LOOKAHEAD];
            if t + LOOKAHEAD < n {
                ring[t % LOOKAHEAD] = ahead(t + LOOKAHEAD, w);
            }
            weights.add_row(t, f, &mut acc);
            if stop(&acc) {
                return (acc, t + 1);
            }
        }
        (acc, n)
    }

    /// Prefetches the rows of the first label templates of both arc directions that
    /// `valid` allows, at the start of a move decision: the label stage of an arc move
    /// then finds them in the cache instead of waiting for a miss after the move's own.
    /// O(LOOKAHEAD) features (computed anyway by most decisions) and prefetches.
    pub(crate) fn prefetch_labels_ahead(&self, c: &Configuration, valid: &[bool; N_KINDS], w: &mut Work) {
        let weights = self.label_weights();
        for (i, &t) in self.label_templates.iter().take(LOOKAHEAD).enumerate() {
            let f = self.features().feature(t, c, &w.attrs, &mut w.lazy);
            for (kind, salt) in [(LEFT, LEFT_SALT), (super::parser::RIGHT, RIGHT_SALT)] {
                if valid[kind] {
                    let at = weights.row_start(i, combine(f, salt));
                    weights.prefetch_rows(&[RowAt { start: at, template: i }]);
                }
            }
        }
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
        // As for moves: a few label rows prefetched ahead of the one being added, their
        // features kept in `ring` until their turn.
        let ahead = |i: usize, w: &mut Work| {
            let f = combine(self.features().feature(lt[i], c, &w.attrs, &mut w.lazy), salt);
            weights.prefetch_rows(&[RowAt { start: weights.row_start(i, f), template: i }]);
            f
        };
        let mut ring = [0u64; LOOKAHEAD];
        for (i, slot) in ring.iter_mut().enumerate().take(lt.len()) {
            *slot = ahead(i, w);
        }
        let mut used = 0;
        for i in 0..lt.len() {
            let f = ring[i % LOOKAHEAD];
            if i + LOOKAHEAD < lt.len() {
                ring[i % LOOKAHEAD] = ahead(i + LOOKAHEAD, w);
            }
            weights.add_row(i, f, &mut w.label_scores);
            used = i + 1;
            if column_leads_by(&w.label_scores, margin) {
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

impl ArcEagerParser<Weights> {
    /// One prefix-hinge step of the move weights (Algorithm 2) in `c`, whose valid move
    /// kinds are `valid` and zero-cost ones `zero` (⊆ valid, not empty): prefixes are
    /// added until the best zero-cost move leads the best other valid move by `margin`,
    /// then template j is moved by +1 towards the gold and −1 from the loss class of
    /// each violating prefix i ≥ j. O(i*) reads and updates.
    pub(crate) fn learn_moves_prefix(
        &mut self,
        c: &Configuration,
        valid: &[bool; N_KINDS],
        zero: &[bool; N_KINDS],
        w: &mut Work,
        margin: f32,
        all_prefixes: bool,
    ) -> Option<PrefixMove> {
        let wrong: [bool; N_KINDS] = std::array::from_fn(|k| valid[k] && !zero[k]);
        let mut acc = [0f32; N_KINDS];
        let mut predicted = None;
        w.violations.clear();
        let mut target = best_kind(&acc, zero)?;
        for t in 0..self.n_templates() {
            let f = self.features().feature(t, c, &w.attrs, &mut w.lazy);
            self.move_weights().add_row(t, f, &mut acc);
            if predicted.is_none() && leads_by(&acc, valid, margin) {
                predicted = best_kind(&acc, valid);
            }
            target = best_kind(&acc, zero)?;
            match best_kind(&acc, &wrong) {
                Some(loss) if acc[target] - acc[loss] < margin => {
                    w.violations.push((target as u32, loss as u32))
                }
                Some(_) if all_prefixes => w.violations.push((target as u32, NO_LOSS)),
                _ => break,
            }
        }
        let predicted = predicted.or_else(|| best_kind(&acc, valid))?;
        // Template j's update is the sum over violating prefixes i ≥ j: a suffix sum.
        let mut delta = [0f32; N_KINDS];
        for j in (0..w.violations.len()).rev() {
            let (gold, loss) = w.violations[j];
            if loss != NO_LOSS {
                delta[gold as usize] += 1.0;
                delta[loss as usize] -= 1.0;
            }
            let f = self.features().feature(j, c, &w.attrs, &mut w.lazy);
            for (k, &d) in delta.iter().enumerate() {
                if d != 0.0 {
                    self.move_w.update_adagrad(j, f, k, d);
                }
            }
        }
        self.move_w.tick();
        Some(PrefixMove { predicted, target })
    }

    /// One prefix-hinge step of the label weights for an arc of kind `dir` from `c`
    /// whose gold label is `gold` (the label rows' counterpart of
    /// [`Self::learn_moves_prefix`]). O(i* · row width).
    pub(crate) fn learn_label_prefix(
        &mut self,
        c: &Configuration,
        dir: usize,
        gold: u32,
        w: &mut Work,
        margin: f32,
        all_prefixes: bool,
    ) {
        let to_root = dir == super::parser::RIGHT && c.s0() == 0;
        let gc = self.label_col_of[dir_index(dir)].get(gold as usize).copied().unwrap_or(super::NONE);
        if gc == super::NONE {
            self.label_w.tick();
            return;
        }
        let gc = gc as usize;
        self.allowed_columns(dir, to_root, &mut w.allowed);
        w.allowed[gc] = false; // the rivals of the gold label
        w.label_scores.clear();
        w.label_scores.resize(self.label_weights().width(), 0.0);
        let salt = if dir == LEFT { LEFT_SALT } else { RIGHT_SALT };
        w.violations.clear();
        for (i, &t) in self.label_templates.iter().enumerate() {
            let f = combine(self.features().feature(t, c, &w.attrs, &mut w.lazy), salt);
            self.label_weights().add_row(i, f, &mut w.label_scores);
            let rival = (0..w.allowed.len())
                .filter(|&k| w.allowed[k])
                .max_by(|&a, &b| w.label_scores[a].total_cmp(&w.label_scores[b]).then(b.cmp(&a)));
            match rival {
                Some(r) if w.label_scores[gc] - w.label_scores[r] < margin => {
                    w.violations.push((gc as u32, r as u32))
                }
                Some(_) if all_prefixes => w.violations.push((gc as u32, NO_LOSS)),
                _ => break,
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
            let f = combine(self.features().feature(t, c, &w.attrs, &mut w.lazy), salt);
            for &(col, d) in &delta {
                if d != 0.0 {
                    self.label_w.update_adagrad(i, f, col, d);
                }
            }
        }
        self.label_w.tick();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_leads_over_the_others_and_a_barred_column_never_leads() {
        assert!(column_leads_by(&[5.0, 1.0, BARRED, BARRED], 3.0));
        assert!(!column_leads_by(&[5.0, 1.0, 4.5, BARRED], 3.0));
        assert!(column_leads_by(&[BARRED, BARRED, 4.5, BARRED], 1e20), "one allowed column");
        assert!(column_leads_by(&[5.0, BARRED, BARRED, 9.0], 4.0));
        assert!(!column_leads_by(&[5.0, BARRED, BARRED, 9.0], 4.5));
    }
}
