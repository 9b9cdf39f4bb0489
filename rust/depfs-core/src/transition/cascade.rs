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
//! after each stage, on a model of its own, and each stage reads all of its k rows
//! again (its own weights). Features are extracted in batches, one per segment of
//! templates between two stages (batch extraction evaluates a segment's atoms in one
//! pass; templates added in a batch cost ~1/4 of templates added lazily,
//! docs/methods.md, which is what the cascade buys), so a decision computes each
//! feature once.
//!
//! The move decision and an arc's label decision each take the cascade, with the same
//! margin: the label first by the first stage's label rows (on the features at hand,
//! whichever stage extracted them: a stage's templates are a prefix of every later
//! one's), then by later stages', then the full model's. Cost per decision: O(k1)
//! hashes and rows when the first stage settles it; at the second O(k2) hashes and
//! O(k1 + k2) rows; ...; at the full model O(T) hashes and O(k1 + k2 + ... + T) rows.

use std::sync::Arc;

use super::guide::{leads_by, Guide, Step, Work};
use super::parser::{best_kind, dir_index, ArcEagerParser, LEFT, N_KINDS, RIGHT};
use super::prefix_margin::PrefixCounts;
use super::system::Configuration;
use crate::templates::config_feats::ConfigFeatures;
use crate::weights::WeightTable;
use crate::{Error, Result};

/// One stage of a cascade: a parser of the full model's first k templates.
#[derive(Debug)]
pub struct Stage {
    pub parser: ArcEagerParser,
}

impl Stage {
    /// The number of templates of the stage (k).
    pub fn len(&self) -> usize {
        self.parser.n_templates()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The stages before a cascade's full model, in order of their template counts.
#[derive(Debug)]
pub struct Cascade {
    pub stages: Vec<Stage>,
    /// The full model's templates in segments: stage i's templates after stage i − 1's,
    /// then the full model's after the last stage's; compiled in the full model's
    /// attribute slots (they read the same sentence attributes).
    segments: Vec<ConfigFeatures>,
}

impl Cascade {
    /// Appends the features of the next segments to `w.feats` until `*have` segments
    /// are there (`*have` counts those done in this configuration). O(templates added).
    #[inline]
    fn extract_to(&self, segments: usize, c: &Configuration, w: &mut Work, have: &mut usize) {
        while *have < segments {
            self.segments[*have].extract(c, &w.attrs, None, &mut w.scratch, &mut w.feats);
            *have += 1;
        }
    }
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
        let mut segments = Vec::with_capacity(stages.len() + 1);
        let mut segment = |from: usize, to: usize| -> Result<()> {
            let set = full.set.subset(&(from..to).collect::<Vec<_>>())?;
            let feats = ConfigFeatures::compile_in(&set, &full.features().attrs)?;
            if feats.attrs.len() != full.features().attrs.len() {
                return Err(Error::InvalidArgument(
                    "a segment reads attributes the full model does not".into(),
                ));
            }
            segments.push(feats);
            Ok(())
        };
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
            segment(after, k)?;
            out.push(Stage { parser });
        }
        segment(out.last().map_or(0, |s| s.len()), n)?;
        Ok(Cascade { stages: out, segments })
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

impl ArcEagerParser {
    /// The same parser cut to its first `k` templates (their move and label rows as
    /// trained; an ordinary model, without presets): e.g. a prefix of a model trained
    /// by Algorithm 2 as a cascade's stage. O(rows kept).
    pub fn prefix(&self, k: usize) -> Result<ArcEagerParser> {
        if k == 0 || k > self.n_templates() {
            return Err(Error::InvalidArgument(format!(
                "a prefix of 1 to {} templates, not {k}",
                self.n_templates()
            )));
        }
        let keep: Vec<usize> = (0..k).collect();
        let labels: Vec<usize> =
            (0..self.label_templates.len()).filter(|&i| self.label_templates[i] < k).collect();
        let set = self.set.subset(&keep)?;
        let mut p = self.with_weights(self.move_w.select(&keep)?, self.label_w.select(&labels)?);
        p.feats = ConfigFeatures::compile(&set)?;
        p.set = set;
        p.label_templates = labels.iter().map(|&i| self.label_templates[i]).collect();
        (p.dynamic, p.cascade) = (None, None);
        if !p.feats.reads_clusters() {
            p.clusters = None;
        }
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
        // The first `have` segments' features are in w.feats: every stage's templates are
        // a prefix of the full model's, so their features agree.
        let mut have = 0;
        w.feats.clear();
        let forced = valid.iter().filter(|&&v| v).count() == 1;
        let (kind, scores) = if forced {
            (valid.iter().position(|&v| v)?, [0f32; N_KINDS])
        } else {
            n.move_decisions += 1;
            let mut settled = None;
            for (i, st) in cas.stages.iter().enumerate() {
                cas.extract_to(i + 1, c, w, &mut have);
                n.move_templates += st.len() as u64;
                let scores = st.parser.kind_scores_with(&w.feats, &mut w.rows);
                if leads_by(&scores, valid, m) {
                    settled = Some((best_kind(&scores, valid)?, scores));
                    break;
                }
            }
            match settled {
                Some(s) => s,
                None => {
                    cas.extract_to(cas.segments.len(), c, w, &mut have);
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
        for (i, st) in cas.stages.iter().enumerate() {
            cas.extract_to(i + 1, c, w, &mut have);
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
        cas.extract_to(cas.segments.len(), c, w, &mut have);
        n.label_templates += full.label_templates.len() as u64;
        Some(Step { kind, label: full.model_label(c, kind, w) })
    }
}

#[cfg(test)]
mod tests {
    use super::super::guide::{begin, run, ModelGuide};
    use super::super::parser::TrainOptions;
    use super::*;
    use crate::templates::attrs::VocabHashes;
    use crate::templates::TemplateSet;
    use crate::treebank::Treebank;

    fn toy() -> Treebank {
        let mut tb = Treebank::new();
        for _ in 0..4 {
            for s in super::super::testing::toy_sentences() {
                tb.push_sentence(&s, vec![]);
            }
        }
        tb
    }

    fn trained(set: TemplateSet, tb: &Treebank) -> ArcEagerParser {
        let opts = TrainOptions { epochs: 3, ..TrainOptions::default() };
        ArcEagerParser::train(set, tb, &opts, |_| true).unwrap()
    }

    /// The full model (the `arc_eager` set) and ordinary models of its first 3 and 8 templates.
    fn models(tb: &Treebank) -> (ArcEagerParser, Vec<ArcEagerParser>) {
        let set = crate::templates::defaults::load("arc_eager").unwrap();
        let prefix = |k: usize| set.subset(&(0..k).collect::<Vec<_>>()).unwrap();
        let stages = vec![trained(prefix(3), tb), trained(prefix(8), tb)];
        (trained(set, tb), stages)
    }

    /// The cascade computed from the full model's batch features (a stage's features are
    /// the first k of them), one decision at a time: what [`CascadeGuide`] must parse
    /// exactly as (moves, labels and templates counted); `decided` records which stage
    /// (or the full model, `stages.len()`) settled each move.
    struct Reference<'a> {
        full: &'a ArcEagerParser,
        stages: &'a [ArcEagerParser],
        w: Work,
        margin: f32,
        counts: PrefixCounts,
        decided: std::collections::HashSet<usize>,
    }

    impl Guide for Reference<'_> {
        fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
            let (full, m) = (self.full, self.margin);
            self.w.extract(full, c);
            let feats = self.w.feats.clone();
            let n = &mut self.counts;
            let kind = if valid.iter().filter(|&&v| v).count() == 1 {
                valid.iter().position(|&v| v)?
            } else {
                n.move_decisions += 1;
                let mut kind = None;
                for (i, st) in self.stages.iter().enumerate() {
                    let k = st.n_templates();
                    n.move_templates += k as u64;
                    let scores = st.kind_scores(&feats[..k]);
                    if leads_by(&scores, valid, m) {
                        (kind, _) = (best_kind(&scores, valid), self.decided.insert(i));
                        break;
                    }
                }
                if kind.is_none() {
                    n.move_templates += feats.len() as u64;
                    self.decided.insert(self.stages.len());
                }
                kind.or_else(|| best_kind(&full.kind_scores(&feats), valid))?
            };
            if kind != LEFT && kind != RIGHT {
                return Some(Step { kind, label: 0 });
            }
            let to_root = kind == RIGHT && c.s0() == 0;
            if let Some(label) = full.sole_label(kind, true).filter(|_| to_root) {
                return Some(Step { kind, label });
            }
            n.label_decisions += 1;
            let mut rows = Vec::new();
            for st in self.stages {
                let mut sc = Vec::new();
                st.label_scores(&feats, kind, &mut rows, &mut sc);
                let bias = &st.label_bias[2 * dir_index(kind) + usize::from(to_root)];
                sc.iter_mut().zip(bias).for_each(|(s, b)| *s += b);
                n.label_templates += st.label_templates.len() as u64;
                if super::super::prefix_margin::column_leads_by(&sc, m) {
                    return Some(Step { kind, label: st.best_label(&sc, kind, to_root) });
                }
            }
            n.label_templates += full.label_templates.len() as u64;
            Some(Step { kind, label: full.model_label(c, kind, &mut self.w) })
        }
    }

    /// Whole parses by the cascade equal the reference at margins where the first stage,
    /// the second or the full model settles decisions; at a margin no stage reaches they
    /// are the full model's parses.
    #[test]
    fn cascade_parses_equal_the_rule_on_the_full_model_s_batch_features() {
        let tb = toy();
        let (full, stages) = models(&tb);
        let p = full.with_stages(stages.clone(), 1.0).unwrap();
        let cas = p.cascade.as_deref().unwrap();
        let vh = VocabHashes::new(&tb, &full.features().attrs);
        let (mut c, mut work) = (Configuration::default(), Work::default());
        let mut reference = Reference {
            full: &full,
            stages: &stages,
            w: Work::default(),
            margin: 0.0,
            counts: PrefixCounts::default(),
            decided: Default::default(),
        };
        let mut moves = 0;
        for margin in [0.0, 0.5, 2.0, 5.0, 20.0, 1e30] {
            (reference.margin, reference.counts) = (margin, PrefixCounts::default());
            let mut counts = PrefixCounts::default();
            for s in 0..tb.len() {
                let mut want = Vec::new();
                begin(&tb, &vh, s, &mut c, &mut reference.w);
                run(&mut c, &mut reference, |_, m| want.push((m.kind, m.label)));
                let mut got = Vec::new();
                begin(&tb, &vh, s, &mut c, &mut work);
                let mut g = CascadeGuide::new(&p, cas, &mut work, margin);
                run(&mut c, &mut g, |_, m| got.push((m.kind, m.label)));
                assert_eq!(got, want, "sentence {s} at margin {margin}");
                counts.add(&g.counts);
                if margin == 1e30 {
                    let mut by_full = Vec::new();
                    begin(&tb, &vh, s, &mut c, &mut work);
                    let mut g = ModelGuide { parser: &full, work: &mut work, margins: None };
                    run(&mut c, &mut g, |_, m| by_full.push((m.kind, m.label)));
                    assert_eq!(got, by_full, "sentence {s}: no stage reaches the margin");
                }
                moves += got.len();
            }
            assert_eq!(counts, reference.counts, "templates counted at margin {margin}");
        }
        assert!(moves > 100, "{moves} moves");
        assert_eq!(reference.decided.len(), 3, "stage 1, stage 2 and the full model each decide");
    }

    /// A cascade model file keeps its stages and presets and parses as before saving.
    #[test]
    fn a_cascade_file_parses_as_the_cascade_it_was_saved_from() {
        let tb = toy();
        let (full, stages) = models(&tb);
        let p = full.with_stages(stages, 3.0).unwrap();
        let dir = std::env::temp_dir().join(format!("depfs-cascade-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.depfs");
        p.save(&path).unwrap();
        let loaded = ArcEagerParser::load(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(loaded.dynamic, p.dynamic);
        let lens = |p: &ArcEagerParser| {
            p.cascade.as_ref().map(|c| c.stages.iter().map(|s| s.len()).collect::<Vec<_>>())
        };
        assert_eq!(lens(&loaded), Some(vec![3, 8]));
        for m in [None, Some(0.0), Some(2.0), Some(f32::INFINITY)] {
            let (a, b) =
                (p.parse_with(&tb, 1, false, m).unwrap(), loaded.parse_with(&tb, 1, false, m).unwrap());
            let trees = |t: &Treebank| (t.words.head.clone(), t.words.deprel.clone());
            assert_eq!((trees(&a.0), a.2), (trees(&b.0), b.2), "margin {m:?}");
        }
    }

    /// A model cut to its first k templates scores a configuration as the sum of the
    /// whole model's first k move rows, and its label rows as the whole model's label
    /// templates below k; its label templates are those; it is an ordinary model.
    #[test]
    fn a_prefix_of_a_model_keeps_its_first_rows() {
        let tb = toy();
        let (_, stages) = models(&tb);
        let p = &stages[1]; // 8 templates
        let vh = VocabHashes::new(&tb, &p.features().attrs);
        let (mut c, mut work, mut w) = (Configuration::default(), Work::default(), Work::default());
        for k in [1, 3, 8] {
            let q = p.prefix(k).unwrap();
            assert_eq!((q.n_templates(), q.dynamic.is_none()), (k, true));
            assert_eq!(
                q.label_templates,
                p.label_templates.iter().copied().filter(|&t| t < k).collect::<Vec<_>>()
            );
            let vq = VocabHashes::new(&tb, &q.features().attrs);
            let mut wq = Work::default();
            let mut seen = 0;
            for s in 0..tb.len() {
                begin(&tb, &vh, s, &mut c, &mut work);
                w.attrs.fill(&vh, &tb, s);
                wq.attrs.fill(&vq, &tb, s);
                run(&mut c, &mut ModelGuide { parser: p, work: &mut work, margins: None }, |cf, _| {
                    w.extract(p, cf);
                    wq.extract(&q, cf);
                    assert_eq!(wq.feats[..], w.feats[..k]);
                    let mut want = [0f32; N_KINDS];
                    for t in 0..k {
                        p.move_weights().add_row(t, w.feats[t], &mut want);
                    }
                    assert_eq!(q.kind_scores(&wq.feats), want, "{k} templates");
                    let (mut a, mut b, mut rows) = (Vec::new(), Vec::new(), Vec::new());
                    q.label_scores(&wq.feats, LEFT, &mut rows, &mut a);
                    let lt = p.label_templates.iter().filter(|&&t| t < k).count();
                    b.resize(p.label_weights().width(), 0.0);
                    let salt = super::super::parser::LEFT_SALT;
                    let fs = p.label_templates[..lt]
                        .iter()
                        .map(|&t| crate::templates::hash::combine(w.feats[t], salt));
                    p.label_weights().add_template_rows(fs, &mut rows, &mut b);
                    assert_eq!(a, b, "label rows of {k} templates");
                    seen += 1;
                });
            }
            assert!(seen > 20);
        }
        assert!(p.prefix(0).is_err() && p.prefix(9).is_err());
    }

    /// Stages must be ordinary models of the full model's first k1 < k2 < ... < T templates.
    #[test]
    fn stages_that_are_no_prefixes_of_the_full_model_are_refused() {
        let tb = toy();
        let (full, stages) = models(&tb);
        let set = full.set.clone();
        let shifted = trained(set.subset(&[1, 2, 3]).unwrap(), &tb);
        let mut dynamic = stages[0].clone();
        dynamic.dynamic =
            Some(super::super::prefix_margin::MarginPresets { train: 1.0, accurate: 1.0, fast: 1.0 });
        for (bad, why) in [
            (vec![], "no stage"),
            (vec![shifted], "not the first templates"),
            (vec![stages[1].clone(), stages[0].clone()], "not increasing"),
            (vec![stages[0].clone(), stages[0].clone()], "twice"),
            (vec![full.clone()], "all templates"),
            (vec![dynamic], "not an ordinary model"),
        ] {
            assert!(full.with_stages(bad, 1.0).is_err(), "{why}");
        }
        assert!(full.with_stages(stages.clone(), f32::NAN).is_err(), "a margin must be a number");
        let p = full.with_stages(stages.clone(), 1.0).unwrap();
        assert!(p.with_stages(stages, 1.0).is_err(), "a cascade is no full model");
    }
}
