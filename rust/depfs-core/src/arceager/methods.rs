//! Arrays for the feature-selection methods built on the arc-eager parser.
//!
//! - Prefix scores (Strubell et al. 2015): per-template partial move scores of a
//!   configuration, `[n_configs, T, 4]`; a cumulative sum over templates in any
//!   order gives the prefix scores.
//! - DAgger (Ross et al. 2011, as used by He et al. 2013): configurations reached
//!   by a mixture of oracle and model (`beta` = probability of the oracle's move
//!   per decision, seeded), each with its features and the dynamic oracle's
//!   zero-cost moves.
//! - SAMME (Bawden & Crabbé 2016): a local classifier trained on weighted
//!   (configuration, zero-cost moves) examples over a template subset, returning
//!   its predictions.
//!
//! A configuration crosses the boundary as its row of T feature hashes (u64), so
//! Python holds plain arrays and every loop stays here.

use super::oracle::kind_costs;
use super::parser::{
    apply_kind, best_kind, gold_tree, valid_mask, ArcEagerParser, Rng, LEFT, N_KINDS, RIGHT,
};
use super::projective;
use super::system::Configuration;
use crate::templates::attrs::{SentAttrs, VocabHashes};
use crate::templates::config_feats::ExtractScratch;
use crate::treebank::Treebank;
use crate::weights::{rows_for, WeightTable, Weights};
use crate::{Error, Result};

/// Configurations visited along trajectories, flat row-major arrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectories {
    pub n_templates: usize,
    /// Sentence index of each configuration.
    pub sentence: Vec<u32>,
    /// `features[i * T + t]`: feature hash of template t in configuration i.
    pub features: Vec<u64>,
    /// `valid[i * 4 + k]`, `zero_cost[i * 4 + k]` for move kinds k.
    pub valid: Vec<bool>,
    pub zero_cost: Vec<bool>,
    /// The model's best valid move kind, and the kind followed.
    pub model_move: Vec<u8>,
    pub followed: Vec<u8>,
}

impl Trajectories {
    pub fn len(&self) -> usize {
        self.sentence.len()
    }
    pub fn is_empty(&self) -> bool {
        self.sentence.is_empty()
    }
}

impl<W: WeightTable> ArcEagerParser<W> {
    /// Follows, in every sentence of `tb` (or of `sentences`) with a complete tree,
    /// the oracle's best-scoring zero-cost move with probability `beta` and the
    /// model's move otherwise, recording every configuration. Seeded and
    /// deterministic. O(decisions · (T + |stack| + |buffer|)).
    pub fn trajectories(
        &self,
        tb: &Treebank,
        beta: f64,
        seed: u64,
        sentences: Option<&[usize]>,
    ) -> Result<Trajectories> {
        if !(0.0..=1.0).contains(&beta) {
            return Err(Error::InvalidArgument(format!("beta must be in [0, 1], got {beta}")));
        }
        let proj;
        let tb = if self.pseudo_projective {
            proj = projective::projectivize(tb).0;
            &proj
        } else {
            tb
        };
        let ids: Vec<u32> = tb
            .vocabs
            .deprel
            .strings()
            .iter()
            .map(|s| self.labels.iter().position(|l| **l == **s).map_or(super::NONE, |i| i as u32))
            .collect();
        let all: Vec<usize>;
        let sents = match sentences {
            Some(s) => {
                if let Some(&bad) = s.iter().find(|&&i| i >= tb.len()) {
                    return Err(Error::InvalidArgument(format!(
                        "sentence index {bad} out of range ({})",
                        tb.len()
                    )));
                }
                s
            }
            None => {
                all = (0..tb.len()).collect();
                &all
            }
        };
        let vh = VocabHashes::new(tb, &self.features().attrs);
        let mut out = Trajectories { n_templates: self.n_templates(), ..Default::default() };
        let mut rng = Rng::new(seed);
        let mut c = Configuration::default();
        let mut attrs = SentAttrs::default();
        let (mut scratch, mut feats, mut ls, mut rows) =
            (ExtractScratch::default(), Vec::new(), Vec::new(), Vec::new());
        for &s in sents {
            let Some(gold) = gold_tree(tb, s, &ids) else { continue };
            c.reset(gold.len());
            attrs.fill(&vh, tb, s);
            while !c.is_terminal() {
                feats.clear();
                self.features().extract(&c, &attrs, None, &mut scratch, &mut feats);
                let scores = self.kind_scores(&feats);
                let valid = valid_mask(&c);
                let k = kind_costs(&c, &gold);
                let zero =
                    [k.shift == Some(0), k.reduce == Some(0), k.left_arc == Some(0), k.right_arc == Some(0)];
                let (Some(model), Some(oracle)) = (best_kind(&scores, &valid), best_kind(&scores, &zero))
                else {
                    break;
                };
                let follow = if rng.unit() < beta { oracle } else { model };
                let gold_label = match follow {
                    LEFT => k.left_label,
                    RIGHT => k.right_label,
                    _ => None,
                };
                let label = match gold_label {
                    Some(g) => g,
                    None if follow == LEFT || follow == RIGHT => {
                        self.predict_label(&c, &feats, follow, &mut rows, &mut ls)
                    }
                    None => 0,
                };
                out.sentence.push(s as u32);
                out.features.extend_from_slice(&feats);
                out.valid.extend_from_slice(&valid);
                out.zero_cost.extend_from_slice(&zero);
                out.model_move.push(model as u8);
                out.followed.push(follow as u8);
                apply_kind(&mut c, follow, label);
            }
        }
        Ok(out)
    }

    /// Per-template move scores: `out[(i * T + t) * 4 + k]` = weight of template t's
    /// feature in configuration i for move kind k. O(n · T).
    pub fn template_scores(&self, features: &[u64]) -> Result<Vec<f32>> {
        let t_count = self.n_templates();
        if !features.len().is_multiple_of(t_count) {
            return Err(Error::InvalidArgument(format!(
                "features have {} values, not a multiple of {t_count} templates",
                features.len()
            )));
        }
        let w = self.move_weights();
        let mut out = Vec::with_capacity(features.len() * N_KINDS);
        for row in features.chunks_exact(t_count) {
            for (t, &f) in row.iter().enumerate() {
                let mut acc = [0f32; N_KINDS];
                w.add_row(t, f, &mut acc);
                out.extend_from_slice(&acc);
            }
        }
        Ok(out)
    }
}

/// Options of [`train_local`].
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    pub epochs: usize,
    pub seed: u64,
    pub max_bits: u32,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions { epochs: 5, seed: 1, max_bits: 18 }
    }
}

/// Trains an averaged-perceptron move classifier on weighted examples
/// (configuration i = row i of `features` with `n_templates` columns, its valid
/// and zero-cost move kinds, weight `sample_weight[i]`) using only the template
/// columns `subset`, and returns its predicted move kind for every example.
/// An update is scaled by the example's weight. Seeded and deterministic.
/// O(epochs · n · |subset|).
pub fn train_local(
    features: &[u64],
    n_templates: usize,
    valid: &[bool],
    zero_cost: &[bool],
    sample_weight: &[f32],
    subset: &[usize],
    opts: &LocalOptions,
) -> Result<Vec<u8>> {
    let n = sample_weight.len();
    if n_templates == 0 || features.len() != n * n_templates {
        return Err(Error::InvalidArgument(format!(
            "features have {} values, expected {n} examples × {n_templates} templates",
            features.len()
        )));
    }
    if valid.len() != n * N_KINDS || zero_cost.len() != n * N_KINDS {
        return Err(Error::InvalidArgument(format!("valid and zero_cost need {n} × {N_KINDS} values")));
    }
    if let Some(&bad) = subset.iter().find(|&&t| t >= n_templates) {
        return Err(Error::InvalidArgument(format!("template index {bad} out of range ({n_templates})")));
    }
    if sample_weight.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(Error::InvalidArgument("sample weights must be finite and ≥ 0".into()));
    }
    let rows: Vec<usize> = subset
        .iter()
        .map(|&t| {
            let mut col: Vec<u64> = (0..n).map(|i| features[i * n_templates + t]).collect();
            col.sort_unstable();
            col.dedup();
            rows_for(col.len(), 4, opts.max_bits)
        })
        .collect();
    let mut w = Weights::new(&rows, N_KINDS)?;
    w.start_averaging();
    let mask = |v: &[bool], i: usize| -> [bool; N_KINDS] {
        let r = &v[i * N_KINDS..(i + 1) * N_KINDS];
        [r[0], r[1], r[2], r[3]]
    };
    let score = |w: &Weights, i: usize| -> [f32; N_KINDS] {
        let mut acc = [0f32; N_KINDS];
        for (j, &t) in subset.iter().enumerate() {
            w.add_row(j, features[i * n_templates + t], &mut acc);
        }
        acc
    };
    let mut rng = Rng::new(opts.seed);
    let mut order: Vec<usize> = (0..n).collect();
    for _ in 0..opts.epochs {
        rng.shuffle(&mut order);
        for &i in &order {
            let sc = score(&w, i);
            let (Some(pred), Some(target)) =
                (best_kind(&sc, &mask(valid, i)), best_kind(&sc, &mask(zero_cost, i)))
            else {
                continue;
            };
            if !zero_cost[i * N_KINDS + pred] && sample_weight[i] > 0.0 {
                for (j, &t) in subset.iter().enumerate() {
                    let f = features[i * n_templates + t];
                    w.update(j, f, target, sample_weight[i]);
                    w.update(j, f, pred, -sample_weight[i]);
                }
            }
            w.tick();
        }
    }
    let avg = w.averaged();
    Ok((0..n).map(|i| best_kind(&score(&avg, i), &mask(valid, i)).map_or(0, |k| k as u8)).collect())
}
