//! The labeler with the prefix-margin stop, for the dynamic (DynFS) graph parser.
//!
//! The prefix-margin rule of Strubell et al. (2015), Algorithm 1, applied to the graph
//! parser's label decision ("Methods 3/8"; He et al. 2013 parse unlabeled): a word's
//! label scores add the labeler's templates one at a time in a fixed order and stop as
//! soon as the best label leads every other by more than a margin, so a word whose label
//! is clear after a few templates pays for a few. By default the weights are the full
//! model's labeler (no second table): the order puts first the templates whose rows move the
//! scores most ([`GraphModel::label_spreads`]), so that a prefix's sum is near the full
//! one, and the margin is chosen on dev with a LAS tolerance
//! (`depfs.dynamic.he2013.choose_label_stop`). An infinite margin is the full labeler.
//!
//! The stop may instead add the rows of a labeler of its own whose every prefix of that
//! order was trained as a labeler (Strubell et al.'s Algorithm 2, perceptron steps:
//! [`super::GraphTrainer::set_label_prefix`]; [`LabelStop::weights`]): the full model's
//! weights are trained only as a sum, so a short prefix of them is a poor labeler.

use super::{GraphModel, Prepared, Scratch};
use crate::templates::arc::Second;
use crate::templates::attrs::SentAttrs;
use crate::weights::{QuantizedWeights, RowAt, WeightTable};
use crate::{Error, Result, Treebank};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// An entry of a [`LabelDict`]: head UPOS hash, modifier UPOS hash, head before
/// modifier, the label indices seen.
pub type DictEntry = (u64, u64, bool, Vec<u32>);

/// The label dictionary of the DynFS labeler (issue 16; not in He et al.): the labels
/// seen in training per (head UPOS hash, modifier UPOS hash, head before modifier),
/// keyed as [`super::LengthDict`]. Only those labels are scored for an arc of that
/// triple (an unseen triple: every label); a triple with one label needs no template.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelDict {
    map: FxHashMap<(u64, u64, bool), Vec<u32>>,
}

impl LabelDict {
    /// The labels (indices into `labels`) of `tb`'s gold arcs per triple; words without
    /// a head or with a label not in `labels` are skipped. O(words).
    pub fn build(tb: &Treebank, labels: &[String]) -> LabelDict {
        let index: FxHashMap<&str, u32> =
            labels.iter().enumerate().map(|(i, l)| (l.as_str(), i as u32)).collect();
        let of_vocab: Vec<Option<u32>> =
            tb.vocabs.deprel.strings().iter().map(|s| index.get(&**s).copied()).collect();
        let vh = super::LengthDict::upos_hashes(tb);
        let mut sa = SentAttrs::default();
        let mut map: FxHashMap<(u64, u64, bool), Vec<u32>> = FxHashMap::default();
        for s in 0..tb.len() {
            sa.fill(&vh, tb, s);
            for (i, (&h, &d)) in tb.heads(s).iter().zip(tb.deprels(s)).enumerate() {
                let m = i + 1;
                let Some(Some(l)) = of_vocab.get(d as usize) else { continue };
                if h < 0 || h as usize > sa.n {
                    continue;
                }
                let h = h as usize;
                let e = map.entry((sa.get(0, h as i64), sa.get(0, m as i64), h < m)).or_default();
                if !e.contains(l) {
                    e.push(*l);
                }
            }
        }
        map.values_mut().for_each(|v| v.sort_unstable());
        LabelDict { map }
    }

    /// Entries as sorted tuples (for model files and Python).
    pub fn entries(&self) -> Vec<DictEntry> {
        let mut v: Vec<_> = self.map.iter().map(|(&(a, b, d), l)| (a, b, d, l.clone())).collect();
        v.sort_unstable();
        v
    }

    /// An error unless every entry holds labels, each below `n_labels`, once.
    pub fn from_entries(entries: Vec<DictEntry>, n_labels: usize) -> Result<LabelDict> {
        let mut map = FxHashMap::default();
        for (a, b, d, mut l) in entries {
            l.sort_unstable();
            let dup = l.windows(2).any(|w| w[0] == w[1]);
            if l.is_empty() || dup || l.iter().any(|&x| x as usize >= n_labels) {
                return Err(Error::InvalidArgument(format!(
                    "label dictionary: an entry needs distinct labels below {n_labels}, got {l:?}"
                )));
            }
            if map.insert((a, b, d), l).is_some() {
                return Err(Error::InvalidArgument("label dictionary: a triple appears twice".into()));
            }
        }
        Ok(LabelDict { map })
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The labels allowed on arc h → m (None: every label), `sa` the sentence's UPOS
    /// values (slot 0). One hash lookup.
    #[inline]
    fn allowed(&self, sa: &SentAttrs, h: usize, m: usize) -> Option<&[u32]> {
        self.map.get(&(sa.get(0, h as i64), sa.get(0, m as i64), h < m)).map(Vec::as_slice)
    }
}

/// The labeler's stop rule of a DynFS model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelStop {
    /// The labeler's templates in the order they are added: a permutation of its indices.
    pub order: Vec<u32>,
    /// A word's label is kept as soon as, after the k-th template of the order, the best
    /// label leads every other by more than `margin · scale[k − 1]` (score units of the
    /// labeler; inf: every template, the full labeler).
    pub margin: f32,
    /// Per position of the order, how far the templates after it can still move a
    /// decision (see [`tail_scales`]); all 1: a fixed margin (Strubell et al.).
    pub scale: Vec<f32>,
    /// The lead is checked after every `every`-th template of the order only (1: after
    /// each, Algorithm 1 exactly). A check costs about as much as a template's row (a
    /// pass over the labels for the best, one to count the labels near it), so checking
    /// every few templates saves more than the templates it adds past a stop.
    pub every: u32,
    /// Only the labels seen in training for the arc's POS triple are scored (None:
    /// every label). Stored in its own model-file variant; not in the stop rule's bytes.
    #[serde(skip)]
    pub dict: Option<LabelDict>,
    /// The labeler weights the stop adds (same templates, block sizes and labels as the
    /// model's labeler): a prefix-trained labeler ([`super::GraphTrainer::set_label_prefix`]).
    /// None: the model's own labeler. An infinite margin is always the model's own full
    /// labeler. Stored in its own model-file variant. Shared, as [`super::Dynfs::arc_w`].
    #[serde(skip)]
    pub weights: Option<std::sync::Arc<QuantizedWeights>>,
}

/// Per position k of `order`, the root of the sum of the squared spreads of the templates
/// after it (`spreads` per template, [`GraphModel::label_spreads`]), relative to all of
/// them: the rest of the order moves a lead like a sum of independent steps of those
/// sizes, so a lead late in the order needs less to be safe. 0 after the last template.
pub fn tail_scales(order: &[u32], spreads: &[f64]) -> Vec<f32> {
    let sq: Vec<f64> = order.iter().map(|&t| spreads[t as usize].powi(2)).collect();
    let total: f64 = sq.iter().sum::<f64>().sqrt().max(f64::MIN_POSITIVE);
    (0..sq.len()).map(|k| (sq[k + 1..].iter().sum::<f64>().sqrt() / total) as f32).collect()
}

impl LabelStop {
    /// An error unless `order` is a permutation of 0..n_lab and the margin is ≥ 0.
    pub fn check(&self, n_lab: usize) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(format!("label stop: {m}")));
        if let Some(w) = &self.weights {
            if w.n_templates() != n_lab {
                return bad(format!(
                    "its weights have {} blocks for {n_lab} labeler templates",
                    w.n_templates()
                ));
            }
        }
        let mut seen = vec![false; n_lab];
        for &t in &self.order {
            match seen.get_mut(t as usize) {
                None => return bad(format!("template index {t} out of range ({n_lab} labeler templates)")),
                Some(true) => return bad(format!("template {t} appears twice in the order")),
                Some(s) => *s = true,
            }
        }
        if seen.iter().any(|s| !s) {
            return bad(format!("the order must hold each of the {n_lab} labeler templates"));
        }
        if self.margin.is_nan() || self.margin < 0.0 {
            return bad("the margin must be a number >= 0 (inf: the full labeler)".into());
        }
        if self.every == 0 {
            return bad("every must be >= 1 (check the lead after every `every`-th template)".into());
        }
        if self.scale.len() != n_lab || self.scale.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
            return bad(format!("the scale needs {n_lab} finite numbers >= 0"));
        }
        Ok(())
    }

    /// [`LabelStop::check`], and the dictionary's labels below `n_labels`.
    pub fn check_labels(&self, n_lab: usize, n_labels: usize) -> Result<()> {
        self.check(n_lab)?;
        if let Some(d) = &self.dict {
            LabelDict::from_entries(d.entries(), n_labels)?;
        }
        Ok(())
    }
}

/// Templates located and prefetched ahead of the one being added (their rows are cache
/// misses; a decision that stops early wastes at most this many prefetches).
const AHEAD: usize = 4;

/// Lanes of [`settled`]; the label scores are padded to a multiple with −inf.
const LANES: usize = 8;

/// Whether the best of `xs` leads every other by more than `margin`: exactly one score is
/// ≥ best − margin (a tie for best is no lead). `xs.len()` a multiple of [`LANES`]. O(L).
/// It is checked every few templates added, so it must cost less than adding rows: a
/// maximum over 4 lanes (compiled to one vector max per 4 scores: compares, not f32::max,
/// whose NaN rule blocks that; scores are never NaN), then a flat count (vector compares
/// and subtracts). A scan keeping the top two per lane of 8 took ~460 instructions per
/// check (callgrind; the compiler vectorized it across lanes with shuffles), more than
/// the rest of the labeler.
#[inline]
fn settled(xs: &[f32], margin: f32) -> bool {
    let (quads, _) = xs.as_chunks::<4>();
    let mut top = [f32::NEG_INFINITY; 4];
    for q in quads {
        for k in 0..4 {
            top[k] = if q[k] > top[k] { q[k] } else { top[k] };
        }
    }
    let best = top.iter().fold(f32::NEG_INFINITY, |a, &x| if x > a { x } else { a });
    let cut = best - margin;
    xs.iter().map(|&x| u32::from(x >= cut)).sum::<u32>() == 1
}

impl<W: WeightTable> GraphModel<W> {
    /// Labels of the arcs of `heads` (as [`GraphModel::label`]) under `stop`, and the
    /// labeler templates evaluated (one per template added per word). An infinite margin
    /// is [`GraphModel::label`] itself (the same sums; no dictionary). With the stop's
    /// dictionary, labels not seen for an arc's POS triple start at −inf (they never
    /// lead, come near nor win) and a word with one label left takes it with no
    /// template. O(n · T_lab · L) at worst.
    pub fn label_stopped(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        heads: &[i32],
        stop: &LabelStop,
        sc: &mut Scratch,
    ) -> (Vec<u32>, u64) {
        if !stop.margin.is_finite() {
            let n_t = self.lab.len() as u64;
            return (self.label(tb, prep, s, heads, sc), self.labelled_words(heads) * n_t);
        }
        match &stop.weights {
            Some(w) => self.label_stopped_with(&**w, tb, prep, s, heads, stop, sc),
            None => self.label_stopped_with(&self.lab_w, tb, prep, s, heads, stop, sc),
        }
    }

    /// [`Self::label_stopped`] adding the rows of `w`, a finite margin.
    #[allow(clippy::too_many_arguments)]
    fn label_stopped_with<V: WeightTable>(
        &self,
        w: &V,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        heads: &[i32],
        stop: &LabelStop,
        sc: &mut Scratch,
    ) -> (Vec<u32>, u64) {
        let n_t = self.lab.len();
        self.lab.prepare(&prep.lab, tb, s, &mut sc.lab);
        // Scores padded to whole lanes with −inf, which never leads nor comes near.
        let width = w.width();
        let padded = width.div_ceil(LANES) * LANES;
        sc.label_scores.clear();
        sc.label_scores.resize(padded, f32::NEG_INFINITY);
        let (rows, starts) = (&mut sc.label_rows, &mut sc.label_starts);
        let every = stop.every as usize;
        let mut out = vec![0u32; heads.len()];
        let mut used = 0u64;
        if stop.dict.is_some() {
            sc.upos.fill(&prep.upos, tb, s);
        }
        // UD's root rule, as `label` applies it: an arc from ROOT takes `root` with no
        // template; another arc never does (its score starts at −inf).
        let root = self.root_label();
        for (m, &h) in heads.iter().enumerate().skip(1) {
            if let (Some(r), 0) = (root, h) {
                out[m] = r;
                continue;
            }
            let allowed = stop.dict.as_ref().and_then(|d| d.allowed(&sc.upos, h as usize, m));
            // (a triple seen with `root` alone says nothing of this arc's label)
            let allowed = allowed.filter(|ls| root.is_none() || *ls != [root.unwrap_or(0)]);
            if let Some(&[only]) = allowed {
                out[m] = only;
                continue;
            }
            // rows[starts[j]..starts[j + 1]]: the rows of the j-th template of the order,
            // located (and prefetched) AHEAD templates before they are added.
            rows.clear();
            starts.clear();
            starts.push(0);
            let scores = &mut sc.label_scores[..];
            match allowed {
                None => scores[..width].fill(0.0),
                Some(ls) => {
                    scores[..width].fill(f32::NEG_INFINITY);
                    ls.iter().for_each(|&l| scores[l as usize] = 0.0);
                }
            }
            if let Some(r) = root {
                scores[r as usize] = f32::NEG_INFINITY;
            }
            // Templates are added `every` at a time (one sum of their rows), the lead
            // checked after each piece but the last (no template is left to save).
            let mut j = 0;
            while j < n_t {
                let end = (j + every).min(n_t);
                while starts.len() <= (end + AHEAD).min(n_t) {
                    let t = stop.order[starts.len() - 1] as usize;
                    let first = rows.len();
                    self.lab.for_each(&sc.lab, t, h as usize, m, Second::default(), |f| {
                        rows.push(RowAt { start: w.row_start(t, f), template: t })
                    });
                    starts.push(rows.len());
                    w.prefetch_rows(&rows[first..]);
                }
                w.add_located_rows(&rows[starts[j]..starts[end]], &mut scores[..width]);
                used += (end - j) as u64;
                if end < n_t && settled(scores, stop.margin * stop.scale[end - 1]) {
                    break;
                }
                j = end;
            }
            out[m] = super::score::argmax(&sc.label_scores[..width]) as u32;
        }
        (out, used)
    }

    /// Per labeler template, the mean over the arcs of `tb`'s gold trees of its row's
    /// spread (largest minus smallest label weight): how far the template moves a label
    /// decision. The DynFS labeler adds templates in descending order of it. Words
    /// without a gold head are skipped. O(words · T_lab · L).
    pub fn label_spreads(&self, tb: &Treebank) -> Vec<f64> {
        self.label_spreads_of(&self.lab_w, tb)
    }

    /// [`Self::label_spreads`] of the labeler weights `w` (this model's labeler's shape).
    pub fn label_spreads_of<V: WeightTable>(&self, w: &V, tb: &Treebank) -> Vec<f64> {
        let prep = self.prepare(tb);
        let mut sc = Scratch::default();
        let n_t = self.lab.len();
        let mut sum = vec![0f64; n_t];
        let mut arcs = 0u64;
        let mut row = vec![0f32; w.width()];
        for s in 0..tb.len() {
            let Some(heads) = super::gold_heads(tb, s) else { continue };
            self.lab.prepare(&prep.lab, tb, s, &mut sc.lab);
            for (m, &h) in heads.iter().enumerate().skip(1) {
                arcs += 1;
                for (t, total) in sum.iter_mut().enumerate() {
                    self.lab.for_each(&sc.lab, t, h as usize, m, Second::default(), |f| {
                        row.fill(0.0);
                        w.add_row(t, f, &mut row);
                        let (lo, hi) = row
                            .iter()
                            .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
                        *total += f64::from(hi - lo);
                    });
                }
            }
        }
        sum.iter().map(|&x| x / arcs.max(1) as f64).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `xs` padded with −inf to whole lanes, as the labeler keeps its scores.
    fn padded(xs: &[f32]) -> Vec<f32> {
        let mut v = xs.to_vec();
        v.resize(xs.len().div_ceil(LANES) * LANES, f32::NEG_INFINITY);
        v
    }

    #[test]
    fn settled_when_the_best_leads_every_other_by_more_than_the_margin() {
        assert!(settled(&padded(&[1.0, 5.0, 3.0, 4.5]), 0.4));
        assert!(!settled(&padded(&[1.0, 5.0, 3.0, 4.5]), 0.5));
        assert!(!settled(&padded(&[2.0, 2.0, 1.0]), 0.0));
        assert!(settled(&padded(&[1.0]), 3.0));
        // Across and within lanes of 8, ties included, against a plain sort.
        let mut rng = crate::util::Rng::new(7);
        for n in 2..40 {
            for _ in 0..20 {
                let xs: Vec<f32> = (0..n).map(|_| (rng.below(9) as f32) - 4.0).collect();
                let mut s = xs.clone();
                s.sort_by(|a, b| b.total_cmp(a));
                for margin in [0.0, 0.5, 1.0, 2.5] {
                    assert_eq!(settled(&padded(&xs), margin), s[0] - s[1] > margin, "{xs:?} {margin}");
                }
            }
        }
    }

    #[test]
    fn check_wants_a_permutation_and_a_margin() {
        let ok = |order: Vec<u32>, margin: f32| {
            LabelStop { order, margin, scale: vec![1.0; 3], every: 1, dict: None, weights: None }
                .check(3)
                .is_ok()
        };
        assert!(ok(vec![2, 0, 1], 1.5));
        assert!(ok(vec![0, 1, 2], f32::INFINITY));
        assert!(!ok(vec![0, 1], 1.0));
        assert!(!ok(vec![0, 1, 1], 1.0));
        assert!(!ok(vec![0, 1, 3], 1.0));
        assert!(!ok(vec![0, 1, 2], -1.0));
        assert!(!ok(vec![0, 1, 2], f32::NAN));
        let stop = |scale: Vec<f32>, every: u32| LabelStop {
            order: vec![0, 1, 2],
            margin: 1.0,
            scale,
            every,
            dict: None,
            weights: None,
        };
        assert!(stop(vec![1.0, 0.5, 0.0], 2).check(3).is_ok());
        assert!(stop(vec![1.0, 0.5, 0.0], 0).check(3).is_err());
        assert!(stop(vec![1.0, 0.5], 1).check(3).is_err());
        assert!(stop(vec![1.0, -0.5, 0.0], 1).check(3).is_err());
    }
}
