//! Arrays for the feature-selection methods built on the arc-eager parser.
//!
//! - Prefix scores (Strubell et al. 2015): per-template partial move scores of a
//!   configuration, `[n_configs, T, 4]`; a cumulative sum over templates in any
//!   order gives the prefix scores.
//! - DAgger (Ross et al. 2011, as used by He et al. 2013): configurations reached
//!   by a mixture of oracle and model (`beta` = probability of the oracle's move
//!   per decision, seeded), stored as replayable move histories with the dynamic
//!   oracle's zero-cost moves ([`super::trajectories`]).
//! - SAMME (Bawden & Crabbé 2016): local classifiers trained on weighted decisions
//!   of trajectories, in [`super::local`].

use std::sync::Arc;

use super::guide::{begin, run, MixtureGuide, Work};
use super::local::LabelSet;
use super::parser::{gold_tree, ArcEagerParser, Rng, N_KINDS};
use super::projective;
use super::system::Configuration;
use super::trajectories::Trajectories;
use crate::templates::attrs::VocabHashes;
use crate::treebank::Treebank;
use crate::weights::WeightTable;
use crate::{Error, Result};

impl<W: WeightTable> ArcEagerParser<W> {
    /// Follows, in every sentence of `tb` (or of `sentences`) with a complete tree,
    /// the oracle's best-scoring zero-cost move with probability `beta` and the
    /// model's move otherwise, recording every configuration. Seeded and
    /// deterministic. O(decisions · (T + |stack| + |buffer|)).
    pub fn trajectories(
        &self,
        tb: &Arc<Treebank>,
        beta: f64,
        seed: u64,
        sentences: Option<&[usize]>,
    ) -> Result<Trajectories> {
        if !(0.0..=1.0).contains(&beta) {
            return Err(Error::InvalidArgument(format!("beta must be in [0, 1], got {beta}")));
        }
        let shared =
            if self.pseudo_projective { Arc::new(projective::projectivize(tb).0) } else { Arc::clone(tb) };
        let tb: &Treebank = &shared;
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
        let labels = LabelSet {
            labels: self.labels.clone(),
            root_label: self.root_label,
            fallback_label: self.fallback_label,
            pseudo_projective: self.pseudo_projective,
        };
        let mut out = Trajectories::new(Arc::clone(&shared), labels);
        let mut rng = Rng::new(seed);
        let mut c = Configuration::default();
        let mut work = Work::default();
        for &s in sents {
            let Some(gold) = gold_tree(tb, s, &ids) else { continue };
            begin(tb, &vh, s, &mut c, &mut work);
            let mut g = MixtureGuide {
                parser: self,
                work: &mut work,
                gold: &gold,
                beta,
                rng: &mut rng,
                sentence: s as u32,
                out: &mut out,
            };
            run(&mut c, &mut g, |_, _| {});
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
