//! A cascade for the arc-eager parser: Algorithm 1 of Strubell et al. (2015) with a
//! full-model fallback.
//!
//! Each stage is an ordinary model of the full model's first k templates (a fixed-prefix
//! model, trained the ordinary way on those templates); stages have k1 < k2 < ... < T
//! templates. A decision goes to the stages in turn: a stage scores it in one batch (no
//! lazy, template-by-template extraction) and settles it when its best valid class
//! leads every other valid class by the margin m, as Algorithm 1's stop; a decision no
//! stage settles goes to the full model, trained the ordinary way, whose sum of all
//! templates decides. So at m = ∞ the parse is the full model's (no ceiling below it),
//! and m trades accuracy for speed.
//!
//! How this departs from the paper: Algorithm 1 checks the margin after every template
//! of one model whose prefixes were trained together (Algorithm 2); here it is checked
//! after each stage, on a model of its own, and a stage extracts its templates from the
//! first again (batch extraction evaluates a set's atoms in one pass; templates added in
//! a batch cost ~1/4 of templates added lazily, docs/methods.md, which is what the
//! cascade buys).
//!
//! The move decision and an arc's label decision each take the cascade, with the same
//! margin: the label first by the first stage's label rows (on the features at hand,
//! whichever stage extracted them: a stage's templates are a prefix of every later
//! one's), then by later stages', then the full model's. Cost per decision: O(k1)
//! hashes and rows when the first stage settles it, O(k1 + k2) at the second, ..., +
//! O(T) at the full model.

use std::sync::Arc;

use super::guide::{leads_by, Guide, Step, Work};
use super::parser::{best_kind, dir_index, ArcEagerParser, LEFT, N_KINDS, RIGHT};
use super::prefix_margin::PrefixCounts;
use super::system::Configuration;
use crate::templates::config_feats::ConfigFeatures;
use crate::weights::WeightTable;
use crate::{Error, Result};

/// One stage of a cascade: a parser of the full model's first k templates, with its
/// features compiled in the full model's attribute slots (it reads the same sentence
/// attributes).
#[derive(Debug)]
pub struct Stage {
    pub parser: ArcEagerParser,
    feats: ConfigFeatures,
}

impl Stage {
    /// The number of templates of the stage (k).
    pub fn len(&self) -> usize {
        self.feats.len()
    }

    pub fn is_empty(&self) -> bool {
        self.feats.is_empty()
    }

    /// The stage's features of `c` into `w.feats` (one batch). O(k).
    #[inline]
    fn extract(&self, c: &Configuration, w: &mut Work) {
        w.feats.clear();
        self.feats.extract(c, &w.attrs, None, &mut w.scratch, &mut w.feats);
    }
}

/// The stages before a cascade's full model, in order of their template counts.
#[derive(Debug)]
pub struct Cascade {
    pub stages: Vec<Stage>,
}

impl Cascade {
    /// The stages `stages` before `full`: their templates must be the first k1 < k2 <
    /// ... < T of `full`'s, in order, with the same labels and pseudo-projective encoding.
    pub fn new<W: WeightTable>(full: &ArcEagerParser<W>, stages: Vec<ArcEagerParser>) -> Result<Cascade> {
        if stages.is_empty() {
            return Err(Error::InvalidArgument("a cascade needs a stage before the full model".into()));
        }
        let n = full.set.len();
        let mut out: Vec<Stage> = Vec::with_capacity(stages.len());
        for parser in stages {
            let k = parser.set.len();
            let after = out.last().map_or(0, |s| s.len());
            let ids = |p: &[crate::templates::Template]| p.iter().map(|t| t.id).collect::<Vec<_>>();
            if k <= after || k >= n || ids(&parser.set.templates) != ids(&full.set.templates[..k]) {
                return Err(Error::InvalidArgument(format!(
                    "a cascade's stages must have the first k1 < k2 < ... < {n} templates of the full \
                     model in its order ({k} templates after {after})"
                )));
            }
            if parser.labels != full.labels || parser.pseudo_projective != full.pseudo_projective {
                return Err(Error::InvalidArgument(
                    "a cascade's stages must be trained on the same treebank (labels) as the full model"
                        .into(),
                ));
            }
            if parser.cascade.is_some() || parser.dynamic.is_some() {
                return Err(Error::InvalidArgument("a cascade's stages must be ordinary models".into()));
            }
            let feats = ConfigFeatures::compile_in(&parser.set, &full.features().attrs)?;
            if feats.attrs.len() != full.features().attrs.len() {
                return Err(Error::InvalidArgument(
                    "a cascade's stage reads attributes the full model does not".into(),
                ));
            }
            out.push(Stage { parser, feats });
        }
        Ok(Cascade { stages: out })
    }
}

impl<W: WeightTable + Clone> ArcEagerParser<W> {
    /// This parser as the full model of a cascade with `stages` before it and margin
    /// presets all at `train` (until chosen on dev); see [`Cascade::new`].
    pub fn with_stages(&self, stages: Vec<ArcEagerParser>, train: f32) -> Result<ArcEagerParser<W>> {
        let presets = super::prefix_margin::MarginPresets { train, accurate: train, fast: train };
        if !presets.is_valid() {
            return Err(Error::InvalidArgument(format!("a margin must be a finite number ≥ 0, got {train}")));
        }
        if self.cascade.is_some() || self.dynamic.is_some() {
            return Err(Error::InvalidArgument("a cascade's full model must be an ordinary model".into()));
        }
        let mut p = self.clone();
        p.cascade = Some(Arc::new(Cascade::new(self, stages)?));
        p.dynamic = Some(presets);
        Ok(p)
    }
}

/// Parses by the cascade at `margin` (see the module doc); counts templates as the
/// prefix-margin rule does: the k of each stage a decision reaches, + T when it falls
/// through to the full model (labels: the label templates of each stage reached).
pub struct CascadeGuide<'a, W> {
    pub full: &'a ArcEagerParser<W>,
    pub cascade: &'a Cascade,
    pub work: &'a mut Work,
    pub margin: f32,
    pub counts: PrefixCounts,
    /// As [`super::guide::ModelGuide::margins`] (the deciding stage's scores).
    pub margins: Option<&'a mut Vec<f32>>,
}

impl<'a, W> CascadeGuide<'a, W> {
    pub fn new(full: &'a ArcEagerParser<W>, cascade: &'a Cascade, work: &'a mut Work, margin: f32) -> Self {
        CascadeGuide { full, cascade, work, margin, counts: PrefixCounts::default(), margins: None }
    }
}

impl<W: WeightTable> Guide for CascadeGuide<'_, W> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let (full, cas, w, m) = (self.full, self.cascade, &mut *self.work, self.margin);
        let n = &mut self.counts;
        let t = full.n_templates();
        // The first `have` templates' features are in w.feats (every stage's templates
        // are a prefix of the full model's: their features agree).
        let mut have = 0;
        let forced = valid.iter().filter(|&&v| v).count() == 1;
        let (kind, scores) = if forced {
            (valid.iter().position(|&v| v)?, [0f32; N_KINDS])
        } else {
            n.move_decisions += 1;
            let mut settled = None;
            for st in &cas.stages {
                st.extract(c, w);
                have = st.len();
                n.move_templates += have as u64;
                let scores = st.parser.kind_scores_with(&w.feats, &mut w.rows);
                if leads_by(&scores, valid, m) {
                    settled = Some((best_kind(&scores, valid)?, scores));
                    break;
                }
            }
            match settled {
                Some(s) => s,
                None => {
                    w.extract(full, c);
                    have = t;
                    n.move_templates += t as u64;
                    let scores = full.kind_scores_with(&w.feats, &mut w.rows);
                    (best_kind(&scores, valid)?, scores)
                }
            }
        };
        super::guide::record_margin(self.margins.as_deref_mut(), c, kind, &scores, valid);
        if kind != LEFT && kind != RIGHT {
            return Some(Step { kind, label: 0 });
        }
        let to_root = kind == RIGHT && c.s0() == 0;
        if let Some(label) = full.sole_label(kind, true).filter(|_| to_root) {
            return Some(Step { kind, label });
        }
        n.label_decisions += 1;
        for st in &cas.stages {
            if have < st.len() {
                st.extract(c, w);
                have = st.len();
            }
            let p = &st.parser;
            p.label_scores(&w.feats, kind, &mut w.rows, &mut w.label_scores);
            // Columns such an arc may not carry start barred (as the prefix-margin rule's).
            let bias = &p.label_bias[2 * dir_index(kind) + usize::from(to_root)];
            for (s, b) in w.label_scores.iter_mut().zip(bias) {
                *s += b;
            }
            n.label_templates += p.label_templates.len() as u64;
            if super::prefix_margin::column_leads_by(&w.label_scores, m) {
                return Some(Step { kind, label: p.best_label(&w.label_scores, kind, to_root) });
            }
        }
        if have < t {
            w.extract(full, c);
        }
        n.label_templates += full.label_templates.len() as u64;
        Some(Step { kind, label: full.model_label(c, kind, w) })
    }
}
