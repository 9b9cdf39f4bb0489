//! Prefix-margin dynamic feature selection for the tagger's columns.
//!
//! Strubell, Vilnis, Silverstein & McCallum (2015), *Learning Dynamic Feature Selection
//! for Fast Sequential Prediction* (ACL), §4 and §6.1 (their Table 1 is a greedy POS
//! tagger). Each column's templates are added in their set order (the forward
//! wrapper's, §4.5.2); the i-th prefix score of a class is the sum of the first i
//! templates' weights for it. The same rules as the arc-eager parser's
//! ([`crate::transition::prefix_margin`]):
//!
//! - **Inference (Algorithm 1)**: add one template at a time, each feature computed
//!   when its template is reached, and stop as soon as the best candidate leads every
//!   other candidate by the margin m; a decision that never does uses every template.
//! - **Training (§4.4, Algorithm 2)**: prefixes are added until the gold class leads
//!   by m (i*); each prefix i < i* contributes the loss-augmented hinge gradient
//!   Φ(y_loss(P_i)) − Φ(y) to each of its templates, so template j receives one update
//!   per violating prefix i ≥ j, by the parser's rules ([`PrefixStep`]): an AdaGrad step
//!   (learning rate 1, ℓ2 `prefix_l2`) or a perceptron step (±1 per violating prefix,
//!   so margins are in units of up to T), the weights averaged; optionally (`full` > 0)
//!   the sum of all templates also takes the ordinary tagger's update of size `full` on
//!   every decision, so the sum Algorithm 1 falls back on is trained on every decision
//!   (on en_ewt dev it lifts the mean of the four columns at every template from 94.42
//!   to 95.03: docs/methods.md). Training follows the class Algorithm 1 picks at the
//!   training margin, as tagging will.
//!
//! Cost per decision: O(i · candidates) weight reads for a decision stopped after i
//! templates; in training O(i* · candidates) reads and O(i*²)-free updates (suffix
//! sums, O(i* · loss classes)); O(T · candidates) with the full sum.

use super::features::{History, N_COLUMNS};
use super::{ColumnModel, LINE_MASK};
use crate::transition::prefix_margin::PrefixStep;
use crate::util::prefetch::prefetch;
use crate::weights::{RowAt, WeightTable, Weights};

/// Templates the prefix-margin rule computed, per column (decisions with more than one
/// candidate only).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TagCounts {
    pub templates: [u64; N_COLUMNS],
    pub decisions: [u64; N_COLUMNS],
}

impl TagCounts {
    pub fn add(&mut self, o: &TagCounts) {
        for c in 0..N_COLUMNS {
            self.templates[c] += o.templates[c];
            self.decisions[c] += o.decisions[c];
        }
    }
}

/// Buffers of one prefix-margin decision.
#[derive(Default)]
pub(super) struct PrefixScratch {
    /// Running prefix score of each candidate.
    scores: Vec<f32>,
    /// Feature value of each template added.
    feats: Vec<u64>,
    /// Loss class of each violating prefix, in order.
    losses: Vec<u32>,
    /// Per-class gradient of the template being updated (suffix sums).
    delta: Vec<(u32, f32)>,
    /// Per candidate: its row multiplier under line-local hashing of more than 64
    /// classes ([`ColumnModel::key`]).
    mults: Vec<u64>,
}

/// Index of the best score (first on ties) and whether it leads every other by
/// `margin` (a single candidate always leads). O(candidates).
fn best_and_lead(scores: &[f32], margin: f32) -> (usize, bool) {
    let (mut best, mut second) = (0, f32::NEG_INFINITY);
    for (k, &s) in scores.iter().enumerate().skip(1) {
        if s > scores[best] {
            second = scores[best];
            best = k;
        } else if s > second {
            second = s;
        }
    }
    (best, scores[best] - second >= margin)
}

/// [`best_and_lead`] kept while the scores are added, one at a time in order.
struct Top {
    best: usize,
    score: f32,
    second: f32,
}

impl Default for Top {
    fn default() -> Self {
        Top { best: 0, score: f32::NEG_INFINITY, second: f32::NEG_INFINITY }
    }
}

impl Top {
    /// Candidate k's score (k = 0, 1, ...). O(1).
    #[inline(always)]
    fn push(&mut self, k: usize, s: f32) {
        if s > self.score {
            (self.second, self.score, self.best) = (self.score, s, k);
        } else if s > self.second {
            self.second = s;
        }
    }
    fn leads(&self, margin: f32) -> bool {
        self.score - self.second >= margin
    }
}

/// The loss-augmented class of a prefix whose gold candidate is `g`: its best rival
/// (the first one on ties), when the gold score does not lead it by `margin`; None
/// when the hinge is 0. O(candidates).
fn violating_rival(scores: &[f32], g: usize, margin: f32) -> Option<usize> {
    (0..scores.len())
        .filter(|&k| k != g)
        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)))
        .filter(|&r| scores[g] - scores[r] < margin)
}

impl<W: WeightTable> ColumnModel<W> {
    /// Adds template t's weight for each candidate to `scores`, computing its feature
    /// at word i (returned). O(candidates).
    fn add_template(&self, t: usize, hist: &History, i: usize, cands: &[u32], scores: &mut [f32]) -> u64 {
        let f = self.feats.feature(t, hist, i);
        for (s, &c) in scores.iter_mut().zip(cands) {
            *s += self.weights.get(t, self.key(f, c));
        }
        f
    }

    /// The candidate of `cands` that Algorithm 1 chooses at word i with `margin`, and
    /// the templates it added. O(templates added · candidates).
    pub(super) fn best_by_margin(
        &self,
        hist: &History,
        i: usize,
        cands: &[u32],
        margin: f32,
        ps: &mut PrefixScratch,
    ) -> (u32, usize) {
        ps.scores.clear();
        ps.scores.resize(cands.len(), 0.0);
        if let Some((q, scales)) = self.weights.quantized_parts().filter(|_| self.lines && self.whole_lines) {
            return self.best_by_margin_in_lines(hist, i, cands, margin, q, scales, ps);
        }
        let n = self.feats.len();
        // Each template's weights are one random read per candidate: the next
        // template's feature is computed and its reads prefetched while this one's
        // are added, so the cache misses overlap (a decision stopped after i templates
        // computes i + 1 features).
        let ahead = |t: usize| {
            let f = self.feats.feature(t, hist, i);
            for &c in cands {
                let start = self.weights.row_start(t, self.key(f, c));
                self.weights.prefetch_rows(&[RowAt { start, template: t }]);
            }
            f
        };
        let mut next = if n > 0 { ahead(0) } else { 0 };
        for t in 0..n {
            let f = next;
            if t + 1 < n {
                next = ahead(t + 1);
            }
            for (s, &c) in ps.scores.iter_mut().zip(cands) {
                *s += self.weights.get(t, self.key(f, c));
            }
            let (best, leads) = best_and_lead(&ps.scores, margin);
            if leads {
                return (cands[best], t + 1);
            }
        }
        (cands[best_and_lead(&ps.scores, margin).0], n)
    }

    /// [`Self::best_by_margin`] for a tagging model under line-local hashing (every
    /// class of a feature in one line, [`ColumnModel::key`]): a template costs its
    /// feature, one line located, and one read per candidate straight from the 8-bit
    /// table `q` (the sums of `get`: same order, same values). The lines of the next
    /// [`AHEAD`] templates are located and prefetched while this one's are summed, so a
    /// template seldom waits on memory; the per-candidate part of each row (the class,
    /// or its multiplier beyond 64 classes) is taken once per decision.
    /// O(templates added · candidates) adds, O(templates added + AHEAD) features.
    #[allow(clippy::too_many_arguments)]
    fn best_by_margin_in_lines(
        &self,
        hist: &History,
        i: usize,
        cands: &[u32],
        margin: f32,
        q: &[i8],
        scales: &[f32],
        ps: &mut PrefixScratch,
    ) -> (u32, usize) {
        let (n, layout) = (self.feats.len(), self.weights.layout());
        let few = self.classes.len() <= LINE_MASK as usize + 1;
        ps.mults.clear();
        if !few {
            ps.mults.extend(cands.iter().map(|&c| self.salts[c as usize] | 1));
        }
        let locate = |t: usize| {
            let f = self.feats.feature(t, hist, i);
            let start = layout.row_start(t, f & !LINE_MASK);
            prefetch(q, start);
            prefetch(q, start + LINE_MASK as usize);
            (f, start)
        };
        // ring[t % RING]: template t's feature and line, located AHEAD templates early.
        let mut ring = [(0u64, 0usize); RING];
        for (t, r) in ring.iter_mut().enumerate().take(AHEAD.min(n)) {
            *r = locate(t);
        }
        for t in 0..n {
            let (f, start) = ring[t % RING];
            if t + AHEAD < n {
                ring[(t + AHEAD) % RING] = locate(t + AHEAD);
            }
            let (line, scale) = (&q[start..start + LINE_MASK as usize + 1], scales[t]);
            // The sums and, in the same pass, `best_and_lead`'s best and second.
            let mut top = Top::default();
            if few {
                let offset = f >> 58;
                for (k, (s, &c)) in ps.scores.iter_mut().zip(cands).enumerate() {
                    *s += scale * line[((c as u64 + offset) & LINE_MASK) as usize] as f32;
                    top.push(k, *s);
                }
            } else {
                for (k, (s, &m)) in ps.scores.iter_mut().zip(&ps.mults).enumerate() {
                    *s += scale * line[(f.wrapping_mul(m) >> 58) as usize] as f32;
                    top.push(k, *s);
                }
            }
            if top.leads(margin) {
                return (cands[top.best], t + 1);
            }
        }
        (cands[best_and_lead(&ps.scores, margin).0], n)
    }
}

/// Templates whose lines [`ColumnModel::best_by_margin_in_lines`] locates and prefetches
/// ahead of the one being summed.
const AHEAD: usize = 2;
/// Slots of its ring of located templates (> AHEAD).
const RING: usize = 4;

impl ColumnModel<Weights> {
    /// One step of template t's weight for (feature f, class) by `d`: a perceptron or an
    /// AdaGrad step.
    #[inline]
    fn step(&mut self, perceptron: bool, t: usize, f: u64, class: u32, d: f32) {
        let key = self.key(f, class);
        self.weights.step(perceptron, t, key, 0, d);
    }

    /// One prefix-hinge step (Algorithm 2) at word i for the decision among `cands`
    /// whose gold class is `gold` (no update when `gold` is not a candidate), by
    /// `step`'s rule (perceptron or AdaGrad; `step.all_prefixes` is the parser's only).
    /// With `step.full` > 0 every template is added and the full sum also takes the
    /// full model's update (±`step.full` on every template when its best candidate is
    /// not the gold one). Returns the class Algorithm 1 picks at the margin with the
    /// weights before the step. O(i* · candidates) (O(T · candidates) with the full sum).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn learn_prefix(
        &mut self,
        hist: &History,
        i: usize,
        cands: &[u32],
        gold: u32,
        step: PrefixStep,
        ps: &mut PrefixScratch,
    ) -> u32 {
        let margin = step.margin;
        let g = cands.iter().position(|&c| c == gold);
        ps.scores.clear();
        ps.scores.resize(cands.len(), 0.0);
        ps.feats.clear();
        ps.losses.clear();
        let mut predicted = None;
        // Prefixes past the first where the gold leads are added only for the full sum.
        let mut settled = g.is_none();
        for t in 0..self.feats.len() {
            let f = self.add_template(t, hist, i, cands, &mut ps.scores);
            ps.feats.push(f);
            let (best, leads) = best_and_lead(&ps.scores, margin);
            if leads && predicted.is_none() {
                predicted = Some(cands[best]);
            }
            if !settled {
                match violating_rival(&ps.scores, g.unwrap_or(0), margin) {
                    Some(rival) => ps.losses.push(cands[rival]),
                    None => settled = true,
                }
            }
            if settled && predicted.is_some() && !step.full_sum() {
                break;
            }
        }
        let predicted = predicted.unwrap_or_else(|| cands[best_and_lead(&ps.scores, margin).0]);
        // With the full sum, `ps.scores` now holds it: the full model's update when its
        // best candidate is not the gold one.
        let full_rival = match g {
            Some(g) if step.full_sum() => {
                Some(best_and_lead(&ps.scores, 0.0).0).filter(|&b| b != g).map(|b| cands[b])
            }
            _ => None,
        };
        // Template j's gradient sums the violating prefixes i ≥ j: a suffix sum.
        ps.delta.clear();
        for j in (0..ps.losses.len()).rev() {
            for (class, d) in [(gold, 1.0), (ps.losses[j], -1.0)] {
                match ps.delta.iter_mut().find(|(c, _)| *c == class) {
                    Some(e) => e.1 += d,
                    None => ps.delta.push((class, d)),
                }
            }
            for k in 0..ps.delta.len() {
                let (class, d) = ps.delta[k];
                if d != 0.0 {
                    self.step(step.perceptron, j, ps.feats[j], class, d);
                }
            }
        }
        if let Some(rival) = full_rival {
            for t in 0..ps.feats.len() {
                self.step(step.perceptron, t, ps.feats[t], gold, step.full);
                self.step(step.perceptron, t, ps.feats[t], rival, -step.full);
            }
        }
        predicted
    }

    /// One step of the stagewise baseline (Strubell et al. §6.1) at stage `stage`: the
    /// prefix of templates 0..=stage scores the candidates (earlier templates frozen) and
    /// only template `stage` is moved, by the same hinge and step as
    /// [`Self::learn_prefix`], when the gold class does not lead that prefix by
    /// `margin`. Returns the class Algorithm 1 picks at `margin` within the prefix.
    /// O(stage · candidates).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn learn_stage(
        &mut self,
        hist: &History,
        i: usize,
        cands: &[u32],
        gold: u32,
        margin: f32,
        stage: usize,
        ps: &mut PrefixScratch,
    ) -> u32 {
        let last = stage.min(self.feats.len() - 1);
        ps.scores.clear();
        ps.scores.resize(cands.len(), 0.0);
        let mut predicted = None;
        let mut f = 0;
        for t in 0..=last {
            f = self.add_template(t, hist, i, cands, &mut ps.scores);
            let (best, leads) = best_and_lead(&ps.scores, margin);
            if leads && predicted.is_none() {
                predicted = Some(cands[best]);
            }
        }
        if let Some(g) = cands.iter().position(|&c| c == gold) {
            if let Some(r) = violating_rival(&ps.scores, g, margin) {
                self.weights.update_adagrad(last, self.key(f, gold), 0, 1.0);
                self.weights.update_adagrad(last, self.key(f, cands[r]), 0, -1.0);
            }
        }
        predicted.unwrap_or_else(|| cands[best_and_lead(&ps.scores, margin).0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_score_leads_only_by_its_distance_to_the_second() {
        assert_eq!(best_and_lead(&[1.0, 5.0, 2.0], 3.0), (1, true));
        assert_eq!(best_and_lead(&[1.0, 5.0, 2.5], 3.0), (1, false));
        assert_eq!(best_and_lead(&[4.0, 4.0], 0.0), (0, true), "first on ties");
        assert_eq!(best_and_lead(&[4.0, 4.0], 0.1), (0, false));
        assert_eq!(best_and_lead(&[7.0], 1e30), (0, true), "one candidate always leads");
    }

    #[test]
    fn the_running_best_is_best_and_lead() {
        let cases: [&[f32]; 6] = [
            &[1.0, 5.0, 2.0],
            &[1.0, 5.0, 2.5],
            &[4.0, 4.0],
            &[3.0, 1.0, 3.0, 2.9],
            &[-2.0, -1.0, -3.0],
            &[0.5, 0.25],
        ];
        for scores in cases {
            for margin in [0.0, 0.1, 0.75, 3.0] {
                let mut top = Top::default();
                for (k, &s) in scores.iter().enumerate() {
                    top.push(k, s);
                }
                assert_eq!(
                    (top.best, top.leads(margin)),
                    best_and_lead(scores, margin),
                    "{scores:?} at {margin}"
                );
            }
        }
    }
}
