//! The greedy arc-eager parser: configuration templates, one weight block per
//! template, averaged perceptron trained with dynamic-oracle exploration
//! (Goldberg & Nivre 2012, *A Dynamic Oracle for Arc-Eager Dependency Parsing*,
//! Algorithm 3: learn the best-scoring zero-cost move, follow the model's move).
//!
//! A decision is two-staged, as in Nilsson & Nugues (2010, §2.2): the move kind
//! (SHIFT, REDUCE, LEFT-ARC, RIGHT-ARC) from T rows of 4 scores, then for an arc
//! move its label from rows of label scores. A LEFT-ARC row scores only the labels
//! seen on left arcs in training, a RIGHT-ARC row those seen on right arcs, so a
//! label row is as wide as the larger of the two sets. Rows of width 4 keep the move tables small
//! and cache-friendly (GUIDE §3); width-L rows are kept only for the first 64
//! templates (in set order) with at most 40,000 distinct features
//! (`label_templates`), which bounds the label tables and the label stage's time
//! (on en_ewt, 64 instead of all 89 eligible templates: same LAS, ~1.5× faster).
//! Cost per decision: O(T) hashes and row reads, + O(T_label · L) for arc moves.

use serde::{Deserialize, Serialize};

use super::cascade::{Cascade, CascadeGuide};
use super::guide::{begin, run, LearnGuide, MarginGuide, ModelGuide, PrefixLearnGuide, Work};
use super::prefix_margin::{MarginPresets, PrefixCounts, PrefixStep};
use super::projective;
use super::system::{Configuration, GoldTree, LeftArc, Reduce, RightArc, Shift, Transition};
use super::training_set::TrainingSet;
use crate::tagger::clusters::{Clusters, StoredClusters};
use crate::templates::attrs::VocabHashes;
use crate::templates::config_feats::ConfigFeatures;
use crate::templates::hash::combine;
use crate::templates::{Family, TemplateSet, DEFAULT_MAX_ATOMS};
use crate::treebank::{Treebank, NO_HEAD};
use crate::util::map_chunks;
pub use crate::util::Rng;
use crate::weights::{rows_for, QuantizedWeights, RowAt, WeightBytes, WeightTable, Weights};
use crate::{Error, Result};
use std::sync::Arc;

/// Move kinds, the columns of the move weight rows.
pub const SHIFT: usize = 0;
pub const REDUCE: usize = 1;
pub const LEFT: usize = 2;
pub const RIGHT: usize = 3;
pub const N_KINDS: usize = 4;
pub const KIND_NAMES: [&str; N_KINDS] = ["SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC"];

pub(super) const LEFT_SALT: u64 = 0x6c65_6674_0000_0001;
pub(super) const RIGHT_SALT: u64 = 0x7269_6768_0000_0002;

/// Training options. `Default` gives the settings used for the reported numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainOptions {
    pub epochs: usize,
    pub seed: u64,
    /// First epoch (0-based) in which the parser follows its own moves.
    pub explore_from: usize,
    /// Probability of following the model's move when exploring.
    pub explore_p: f64,
    /// Projectivise training trees (HEAD encoding) and deprojectivise parses.
    pub pseudo_projective: bool,
    /// Lifted labels seen fewer times than this in training become plain labels
    /// (see [`projective::drop_rare_lifted_labels`]); 1 keeps them all. 20 was
    /// chosen on en_ewt dev (UAS/LAS 88.87 / 87.17 vs 88.69 / 86.94 with all 85).
    pub min_lifted_label_count: usize,
    /// Upper bound on the rows of a move block (2^bits).
    pub max_bits: u32,
    /// Templates with at most this many distinct features also score labels.
    pub label_max_features: usize,
    /// Upper bound on the rows of a label block (2^bits).
    pub label_max_bits: u32,
    /// At most this many templates (the first eligible ones in set order) score labels.
    pub label_max_templates: usize,
    /// Train every prefix of the templates (in set order) with this margin
    /// (Strubell et al. 2015; see [`super::prefix_margin`]); None: ordinary training.
    pub prefix_margin: Option<f32>,
    /// With `prefix_margin`: train every prefix on every decision (the hinge of each
    /// prefix, 0 where it meets the margin), not only the prefixes before the first that
    /// meets it (Algorithm 2).
    pub prefix_all: bool,
    /// With `prefix_margin`: ℓ2 strength of the AdaGrad steps, per decision (Strubell
    /// et al. §4.4 add an ℓ2 term; 0: none).
    pub prefix_l2: f32,
    /// With `prefix_margin`: averaged perceptron steps instead of AdaGrad (`prefix_l2`
    /// then unused; see [`super::prefix_margin::PrefixStep`]).
    pub prefix_perceptron: bool,
    /// With `prefix_margin`: also the full model's update of the full sum on every
    /// decision, of this size (0: none; see [`super::prefix_margin::PrefixStep`]).
    pub prefix_full: f32,
    /// The word-cluster table that `cluster` attributes read ([`Trainer::new`]; a
    /// prepared [`TrainingSet`] carries its own). None: no template may read clusters.
    pub clusters: Option<Arc<Clusters>>,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            epochs: 10,
            seed: 1,
            explore_from: 1,
            explore_p: 0.9,
            pseudo_projective: true,
            min_lifted_label_count: 20,
            max_bits: 20,
            label_max_features: 40_000,
            label_max_bits: 15,
            label_max_templates: 64,
            prefix_margin: None,
            prefix_all: false,
            prefix_l2: 0.0,
            prefix_perceptron: false,
            prefix_full: 0.0,
            clusters: None,
        }
    }
}

/// What one training epoch did (for progress bars and dev scores); the graph
/// trainer's [`crate::graph::EpochStats`] has the same first fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochReport {
    /// 1 for the first epoch.
    pub epoch: usize,
    /// Share of training decisions where the model's move kind had zero cost.
    pub train_accuracy: f64,
    pub seconds: f64,
    pub sentences: usize,
}

/// A greedy arc-eager parser: 8-bit frozen weights once trained
/// ([`QuantizedWeights`]), f32 [`Weights`] inside the trainer.
#[derive(Debug, Clone)]
pub struct ArcEagerParser<W = QuantizedWeights> {
    pub set: TemplateSet,
    pub(super) feats: ConfigFeatures,
    /// The parser's label set; label ids index it.
    pub labels: Vec<String>,
    pub(crate) root_label: u32,
    pub(crate) fallback_label: u32,
    /// Labels seen on arcs from ROOT / on other arcs.
    pub(super) root_ok: Vec<bool>,
    pub(super) nonroot_ok: Vec<bool>,
    pub(super) move_w: W,
    /// Indices (into the template set) of the templates that also score labels.
    pub label_templates: Vec<usize>,
    pub(super) label_w: W,
    /// `label_cols[d][c]`: the label scored by column c of a label row of direction d
    /// (0 = LEFT-ARC, 1 = RIGHT-ARC); `label_col_of[d][l]`: label l's column, or NONE.
    pub(super) label_cols: [Vec<u32>; 2],
    pub(super) label_col_of: [Vec<u32>; 2],
    /// Starting label scores of an arc by (direction, from ROOT) (see [`label_bias`]).
    pub(super) label_bias: [Vec<f32>; 4],
    pub pseudo_projective: bool,
    /// Margin presets of a model trained by the prefix-margin rule (None: an ordinary
    /// model, which the rule can still parse with at a given margin).
    pub dynamic: Option<MarginPresets>,
    /// A cascade's stages before this full model (models of its first k templates that
    /// settle the decisions they are sure of; [`super::cascade`]), with `dynamic` its
    /// margin presets.
    pub cascade: Option<Arc<Cascade>>,
    /// The word-cluster table its `cluster` attributes read: Some exactly when a
    /// template reads one (a cascade's stages read the full model's).
    pub clusters: Option<Arc<Clusters>>,
    /// The input columns parsing needs: read by the templates and filled in training
    /// (kept in the model file's container, not in the payload).
    pub inputs: Vec<String>,
    /// Training information kept in the model file (JSON from the Python layer).
    pub info: String,
}

/// Index of an arc move's direction in `label_cols` (LEFT 0, RIGHT 1).
#[inline]
pub(super) fn dir_index(kind: usize) -> usize {
    usize::from(kind == RIGHT)
}

/// Label rows are padded to a multiple of this many weights, so that they add up in
/// whole SIMD registers (the padding columns score no label).
pub(super) const LABEL_ROW_ALIGN: usize = 16;

/// Width of a label row for columns `cols`: the larger direction's column count
/// (at least 1), rounded up to a multiple of `align`.
pub(super) fn label_width(cols: &[Vec<u32>; 2], align: usize) -> usize {
    cols[0].len().max(cols[1].len()).max(1).next_multiple_of(align)
}

/// `col_of[d][l]` for the columns `cols` over `n_labels` labels; None if a column
/// names a label out of range or twice.
fn label_col_of(cols: &[Vec<u32>; 2], n_labels: usize) -> Option<[Vec<u32>; 2]> {
    let one = |cols: &[u32]| {
        let mut of = vec![super::NONE; n_labels];
        for (c, &l) in cols.iter().enumerate() {
            let slot = of.get_mut(l as usize)?;
            if *slot != super::NONE {
                return None;
            }
            *slot = c as u32;
        }
        Some(of)
    };
    Some([one(&cols[0])?, one(&cols[1])?])
}

/// Starting label scores of a label row of `width` columns, by direction d (0 LEFT-ARC,
/// 1 RIGHT-ARC) and arc from ROOT r at index 2d + r: 0 for a column whose label such an
/// arc may carry, a large negative number for the rest and the padding, so that the
/// best column of the summed scores is an allowed one whenever there is one (the
/// prefix-margin rule compares the two best columns without a mask).
pub(super) fn label_bias(
    cols: &[Vec<u32>; 2],
    root_ok: &[bool],
    nonroot_ok: &[bool],
    width: usize,
) -> [Vec<f32>; 4] {
    std::array::from_fn(|i| {
        let (dir, ok) = (i / 2, if i % 2 == 1 { root_ok } else { nonroot_ok });
        let mut b = vec![super::prefix_margin::BARRED; width];
        for (c, &l) in cols[dir].iter().enumerate() {
            if ok.get(l as usize) == Some(&true) {
                b[c] = 0.0;
            }
        }
        b
    })
}

/// An arc-eager parser inside a model file.
#[derive(Serialize, Deserialize)]
pub struct StoredArcEager {
    templates: String,
    labels: Vec<String>,
    root_label: u32,
    fallback_label: u32,
    root_ok: Vec<bool>,
    nonroot_ok: Vec<bool>,
    move_rows: Vec<usize>,
    /// 8-bit weights with one scale per template ([`QuantizedWeights`]).
    move_scales: Vec<f32>,
    move_w: WeightBytes,
    label_templates: Vec<usize>,
    label_rows: Vec<usize>,
    label_scales: Vec<f32>,
    label_w: WeightBytes,
    label_cols: [Vec<u32>; 2],
    pseudo_projective: bool,
}

/// A model trained by the prefix-margin rule inside a model file: the parser and its
/// margin presets (a variant of its own, so older files keep decoding).
#[derive(Serialize, Deserialize)]
pub struct StoredArcEagerDynamic {
    parser: StoredArcEager,
    presets: MarginPresets,
}

/// A cascade inside a model file (see [`super::cascade`]): the full model, the stages
/// before it (models of its first k1 < k2 < ... templates) and the margin presets.
#[derive(Serialize, Deserialize)]
pub struct StoredArcEagerCascade {
    parser: StoredArcEager,
    stages: Vec<StoredArcEager>,
    presets: MarginPresets,
}

/// A parser whose templates read word clusters, inside a model file: the parser (with
/// its margin presets and cascade stages, if any) and its cluster table (a variant of
/// its own, so that a parser without a table is written as before).
#[derive(Serialize, Deserialize)]
pub struct StoredArcEagerClusters {
    parser: StoredArcEager,
    presets: Option<MarginPresets>,
    stages: Option<Vec<StoredArcEager>>,
    /// Always present in a file of this variant (an Option so that a damaged file is
    /// refused by the consistency check, not by a panic).
    clusters: Option<StoredClusters>,
}

/// Model-file kind of an arc-eager model.
pub const MODEL_KIND: &str = "arc-eager";

/// Valid move kinds of `c` as a mask.
#[inline]
pub fn valid_mask(c: &Configuration) -> [bool; N_KINDS] {
    [Shift.is_valid(c), Reduce.is_valid(c), LeftArc(0).is_valid(c), RightArc(0).is_valid(c)]
}

/// Highest-scoring kind among `allowed` (lowest index on ties); None if none allowed.
#[inline]
pub fn best_kind(scores: &[f32; N_KINDS], allowed: &[bool; N_KINDS]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for k in 0..N_KINDS {
        if allowed[k] && best.is_none_or(|b| scores[k] > scores[b]) {
            best = Some(k);
        }
    }
    best
}

/// Gold tree of sentence `s` with labels mapped through `label_ids` (treebank
/// DEPREL id -> parser label id, `NONE` if unknown); None unless the static oracle
/// can build it (complete, projective, single-rooted). O(n).
pub(crate) fn gold_tree(tb: &Treebank, s: usize, label_ids: &[u32]) -> Option<GoldTree> {
    let hs = tb.heads(s);
    let n = hs.len();
    if hs.iter().any(|&h| h == NO_HEAD || h < 0 || h as usize > n) {
        return None;
    }
    let heads: Vec<u32> = hs.iter().map(|&h| h as u32).collect();
    let labels: Vec<u32> = tb.deprels(s).iter().map(|&l| label_ids[l as usize]).collect();
    let gold = GoldTree::new(&heads, &labels);
    super::oracle::static_sequence(&gold).filter(|(_, c)| c.heads()[1..] == gold.head[1..]).map(|_| gold)
}

impl ArcEagerParser {
    /// Parses the template text (configuration family).
    pub fn compile_set(text: &str) -> Result<TemplateSet> {
        TemplateSet::parse(text, Family::Config, DEFAULT_MAX_ATOMS)
    }

    /// Trains for `opts.epochs` epochs; `on_epoch` sees each report and may stop
    /// early by returning false. Returns the averaged parser.
    pub fn train(
        set: TemplateSet,
        train: &Treebank,
        opts: &TrainOptions,
        mut on_epoch: impl FnMut(&EpochReport) -> bool,
    ) -> Result<ArcEagerParser> {
        let mut t = Trainer::new(set, train, opts)?;
        for _ in 0..opts.epochs {
            let r = t.epoch();
            if !on_epoch(&r) {
                break;
            }
        }
        Ok(t.averaged())
    }

    /// Writes the model file (atomically).
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        self.save_with_info(path, &self.info)
    }

    /// [`Self::save`] with other training information.
    pub fn save_with_info(&self, path: &std::path::Path, info: &str) -> Result<()> {
        self.save_with_tagger(path, info, None)
    }

    /// [`Self::save_with_info`], with the tagger that tags the parser's input stored
    /// inside (`tagger`: its model file payload, [`crate::tagger::Tagger::to_file`]).
    pub fn save_with_tagger(
        &self,
        path: &std::path::Path,
        info: &str,
        tagger: Option<crate::io::model::ModelFile>,
    ) -> Result<()> {
        let stored = self.stored();
        let (inputs, info) = (self.inputs.clone(), info.to_string());
        use crate::io::model::Model;
        let model = match (self.dynamic, &self.cascade) {
            _ if self.clusters.is_some() => Model::ArcEagerClusters(Box::new(StoredArcEagerClusters {
                parser: stored,
                presets: self.dynamic,
                stages: self
                    .cascade
                    .as_ref()
                    .map(|cas| cas.stages.iter().map(|s| s.parser.stored()).collect()),
                clusters: self.clusters.as_ref().map(|c| c.to_stored()),
            })),
            (None, _) => Model::ArcEager(stored),
            (Some(presets), None) => {
                Model::ArcEagerDynamic(StoredArcEagerDynamic { parser: stored, presets })
            }
            (Some(presets), Some(cas)) => Model::ArcEagerCascade(Box::new(StoredArcEagerCascade {
                parser: stored,
                stages: cas.stages.iter().map(|s| s.parser.stored()).collect(),
                presets,
            })),
        };
        crate::io::model::save_model(path, inputs, info, crate::io::model::with_tagger(model, tagger))
    }

    /// The parser's weights and settings as a model file stores them.
    fn stored(&self) -> StoredArcEager {
        let (_, move_rows, move_scales, move_w) = self.move_w.to_parts();
        let (_, label_rows, label_scales, label_w) = self.label_w.to_parts();
        StoredArcEager {
            templates: self.set.to_text(),
            labels: self.labels.clone(),
            root_label: self.root_label,
            fallback_label: self.fallback_label,
            root_ok: self.root_ok.clone(),
            nonroot_ok: self.nonroot_ok.clone(),
            move_rows,
            move_scales,
            move_w,
            label_templates: self.label_templates.clone(),
            label_rows,
            label_scales,
            label_w,
            label_cols: self.label_cols.clone(),
            pseudo_projective: self.pseudo_projective,
        }
    }

    /// Reads a model file written by [`ArcEagerParser::save`]; checks every size.
    pub fn load(path: &std::path::Path) -> Result<ArcEagerParser> {
        ArcEagerParser::from_loaded(path, crate::io::model::load_model(path)?)
    }

    /// The arc-eager parser in a model file as read (`path` names it in messages).
    pub fn from_loaded(path: &std::path::Path, file: crate::io::model::Loaded) -> Result<ArcEagerParser> {
        let (inputs, info) = (file.inputs, file.info);
        let bad = |msg: String| Error::Model { file: path.display().to_string(), msg };
        let (st, dynamic, stages, clusters) = match file.model {
            crate::io::model::Model::ArcEager(st) => (st, None, None, None),
            crate::io::model::Model::ArcEagerDynamic(d) => (d.parser, Some(d.presets), None, None),
            crate::io::model::Model::ArcEagerCascade(d) => (d.parser, Some(d.presets), Some(d.stages), None),
            crate::io::model::Model::ArcEagerClusters(d) => {
                let d = *d;
                if d.stages.is_some() && d.presets.is_none() {
                    return Err(bad("cascade stages without margin presets".into()));
                }
                let table = d.clusters.ok_or_else(|| bad("the cluster table is missing".into()))?;
                let table = Clusters::from_stored(table).map_err(|e| bad(e.to_string()))?;
                (d.parser, d.presets, d.stages, Some(Arc::new(table)))
            }
            other => return Err(crate::io::model::wrong_kind(path, &other, MODEL_KIND)),
        };
        if let Some(d) = dynamic {
            if !d.is_valid() {
                return Err(Error::Model {
                    file: path.display().to_string(),
                    msg: format!("bad margin presets {d:?}"),
                });
            }
        }
        let mut parser = Self::from_stored(path, st, dynamic, inputs, info)?;
        if parser.feats.reads_clusters() != clusters.is_some() {
            return Err(bad(if clusters.is_some() {
                "a cluster table that no template reads".into()
            } else {
                "templates read word clusters, but the file has no cluster table".into()
            }));
        }
        parser.clusters = clusters;
        if let Some(stages) = stages {
            let stages = stages
                .into_iter()
                .map(|s| Self::from_stored(path, s, None, Vec::new(), String::new()))
                .collect::<Result<Vec<_>>>()?;
            let bad = |e: Error| Error::Model { file: path.display().to_string(), msg: e.to_string() };
            parser.cascade = Some(Arc::new(Cascade::new(&parser, stages).map_err(bad)?));
        }
        Ok(parser)
    }

    /// The parser of a stored one (`path` names the file in messages); checks every size.
    fn from_stored(
        path: &std::path::Path,
        st: StoredArcEager,
        dynamic: Option<MarginPresets>,
        inputs: Vec<String>,
        info: String,
    ) -> Result<ArcEagerParser> {
        let bad = |msg: String| Error::Model { file: path.display().to_string(), msg };
        let set = Self::compile_set(&st.templates).map_err(|e| bad(format!("bad templates: {e}")))?;
        let feats = ConfigFeatures::compile(&set).map_err(|e| bad(format!("bad templates: {e}")))?;
        let l = st.labels.len();
        if l == 0
            || st.root_ok.len() != l
            || st.nonroot_ok.len() != l
            || st.root_label as usize >= l
            || st.fallback_label as usize >= l
        {
            return Err(bad("inconsistent label set".into()));
        }
        if st.move_rows.len() != set.len()
            || st.label_templates.len() != st.label_rows.len()
            || st.label_templates.iter().any(|&t| t >= set.len())
        {
            return Err(bad("weight blocks do not match the templates".into()));
        }
        let move_w = QuantizedWeights::from_parts(N_KINDS, &st.move_rows, st.move_scales, st.move_w)
            .map_err(|e| bad(e.to_string()))?;
        let label_col_of =
            label_col_of(&st.label_cols, l).ok_or_else(|| bad("inconsistent label columns".into()))?;
        // The row width is what the bytes say (padded or not), and must hold every column.
        let rows: usize = st.label_rows.iter().sum();
        let width = st.label_w.0.len().checked_div(rows).unwrap_or_else(|| label_width(&st.label_cols, 1));
        if width * rows != st.label_w.0.len() || width < label_width(&st.label_cols, 1) {
            return Err(bad("label weight rows do not match the label columns".into()));
        }
        let label_w = QuantizedWeights::from_parts(width, &st.label_rows, st.label_scales, st.label_w)
            .map_err(|e| bad(e.to_string()))?;
        let bias = label_bias(&st.label_cols, &st.root_ok, &st.nonroot_ok, width);
        Ok(ArcEagerParser {
            feats,
            labels: st.labels,
            root_label: st.root_label,
            fallback_label: st.fallback_label,
            root_ok: st.root_ok,
            nonroot_ok: st.nonroot_ok,
            move_w,
            label_templates: st.label_templates,
            label_w,
            label_cols: st.label_cols,
            label_bias: bias,
            label_col_of,
            pseudo_projective: st.pseudo_projective,
            dynamic,
            cascade: None,
            clusters: None,
            // Version-3 files: whatever the templates read.
            inputs: if inputs.is_empty() { crate::io::model::input_columns(&[&set]) } else { inputs },
            info,
            set,
        })
    }
}

impl ArcEagerParser<Weights> {
    /// The parser with averaged weights, frozen to 8 bits for parsing.
    fn frozen(&self) -> ArcEagerParser {
        self.with_weights(
            QuantizedWeights::quantize(&self.move_w.averaged()),
            QuantizedWeights::quantize_shared(&self.label_w.averaged()),
        )
    }

    /// The parser with averaged f32 weights (to measure what quantization costs).
    pub fn averaged_f32(&self) -> ArcEagerParser<Weights> {
        self.with_weights(self.move_w.averaged(), self.label_w.averaged())
    }

    /// One sentence of online training ([`LearnGuide`]); returns (zero-cost
    /// predictions, decisions).
    #[allow(clippy::too_many_arguments)]
    fn train_sentence(
        &mut self,
        tb: &Treebank,
        vh: &VocabHashes,
        s: usize,
        gold: &GoldTree,
        explore: bool,
        explore_p: f64,
        prefix: Option<PrefixStep>,
        stage: Option<usize>,
        rng: &mut Rng,
        c: &mut Configuration,
        work: &mut Work,
    ) -> (u64, u64) {
        begin(tb, vh, s, c, work);
        if let Some(step) = prefix {
            let mut g = PrefixLearnGuide {
                parser: self,
                work,
                gold,
                step,
                explore,
                explore_p,
                rng,
                right: 0,
                total: 0,
                stage,
            };
            run(c, &mut g, |_, _| {});
            return (g.right, g.total);
        }
        let mut g = LearnGuide { parser: self, work, gold, explore, explore_p, rng, right: 0, total: 0 };
        run(c, &mut g, |_, _| {});
        (g.right, g.total)
    }

    /// Perceptron update of the move rows of `feats`: + for `target`, − for `pred`.
    pub(crate) fn update_moves(&mut self, feats: &[u64], target: usize, pred: usize) {
        for (t, &f) in feats.iter().enumerate() {
            self.move_w.update(t, f, target, 1.0);
            self.move_w.update(t, f, pred, -1.0);
        }
    }

    /// One step of the move weights' averaging clock.
    pub(crate) fn tick_moves(&mut self) {
        self.move_w.tick();
    }

    /// Learns the gold label `gold` of an arc move of kind `dir` from `c` (features in
    /// `w.feats`): perceptron update of the label rows if the model's label differs.
    pub(crate) fn learn_label(&mut self, c: &Configuration, dir: usize, gold: u32, w: &mut Work) {
        self.label_scores(&w.feats, dir, &mut w.rows, &mut w.label_scores);
        let lp = self.best_label(&w.label_scores, dir, dir == RIGHT && c.s0() == 0);
        let col_of = &self.label_col_of[dir_index(dir)];
        // Gold labels of training arcs always have a column in their direction.
        let col = |l: u32| col_of.get(l as usize).copied().unwrap_or(super::NONE);
        let (gc, pc) = (col(gold), col(lp));
        if lp != gold && gc != super::NONE {
            let salt = if dir == LEFT { LEFT_SALT } else { RIGHT_SALT };
            for (i, &t) in self.label_templates.iter().enumerate() {
                let f = combine(w.feats[t], salt);
                self.label_w.update(i, f, gc as usize, 1.0);
                if pc != super::NONE {
                    self.label_w.update(i, f, pc as usize, -1.0);
                }
            }
        }
        self.label_w.tick();
    }
}

impl<W: WeightTable> ArcEagerParser<W> {
    pub fn n_labels(&self) -> usize {
        self.labels.len()
    }
    pub fn n_templates(&self) -> usize {
        self.set.len()
    }
    pub fn move_weights(&self) -> &W {
        &self.move_w
    }
    pub fn label_weights(&self) -> &W {
        &self.label_w
    }
    /// Columns of the label rows per direction (LEFT-ARC, RIGHT-ARC): column c of a
    /// row of direction d scores label `label_columns()[d][c]`.
    pub fn label_columns(&self) -> &[Vec<u32>; 2] {
        &self.label_cols
    }
    pub fn features(&self) -> &ConfigFeatures {
        &self.feats
    }

    /// Attribute values of `tb`'s vocabulary for the templates (clusters from the
    /// parser's table). O(vocabulary · attributes).
    pub fn vocab_hashes(&self, tb: &Treebank) -> VocabHashes {
        VocabHashes::with_clusters(tb, &self.feats.attrs, self.clusters.as_deref())
    }

    /// The same parser with other weight tables.
    pub(super) fn with_weights<V>(&self, move_w: V, label_w: V) -> ArcEagerParser<V> {
        ArcEagerParser {
            set: self.set.clone(),
            feats: self.feats.clone(),
            labels: self.labels.clone(),
            root_label: self.root_label,
            fallback_label: self.fallback_label,
            root_ok: self.root_ok.clone(),
            nonroot_ok: self.nonroot_ok.clone(),
            move_w,
            label_templates: self.label_templates.clone(),
            label_w,
            label_cols: self.label_cols.clone(),
            label_col_of: self.label_col_of.clone(),
            label_bias: self.label_bias.clone(),
            pseudo_projective: self.pseudo_projective,
            dynamic: self.dynamic,
            cascade: self.cascade.clone(),
            clusters: self.clusters.clone(),
            inputs: self.inputs.clone(),
            info: self.info.clone(),
        }
    }

    /// Σ over templates of the move rows of the features. O(T).
    #[inline]
    pub fn kind_scores(&self, feats: &[u64]) -> [f32; N_KINDS] {
        let mut acc = [0f32; N_KINDS];
        self.move_w.add_rows_with(feats.len(), |t| (t, feats[t]), &mut acc);
        acc
    }

    /// [`ArcEagerParser::kind_scores`] with a reused row buffer.
    #[inline]
    pub(crate) fn kind_scores_with(&self, feats: &[u64], rows: &mut Vec<RowAt>) -> [f32; N_KINDS] {
        let mut acc = [0f32; N_KINDS];
        self.move_w.add_template_rows(feats.iter().copied(), rows, &mut acc);
        acc
    }

    /// Column scores of an arc move in direction `dir` (LEFT or RIGHT): column c
    /// scores label `label_cols[dir_index(dir)][c]`. O(T_label · row width).
    pub(super) fn label_scores(&self, feats: &[u64], dir: usize, rows: &mut Vec<RowAt>, out: &mut Vec<f32>) {
        out.clear();
        out.resize(self.label_w.width(), 0.0);
        let salt = if dir == LEFT { LEFT_SALT } else { RIGHT_SALT };
        let lt = &self.label_templates;
        self.label_w.add_template_rows(lt.iter().map(|&t| combine(feats[t], salt)), rows, out);
    }

    /// The model's label for an arc move of kind `dir` (LEFT or RIGHT) from `c`, its
    /// features in `w.feats`. An arc from ROOT usually admits a single label (`root`):
    /// then no label scores are needed.
    pub(crate) fn model_label(&self, c: &Configuration, dir: usize, w: &mut Work) -> u32 {
        let to_root = dir == RIGHT && c.s0() == 0;
        if let Some(l) = if to_root { self.sole_label(dir, true) } else { None } {
            return l;
        }
        self.label_scores(&w.feats, dir, &mut w.rows, &mut w.label_scores);
        self.best_label(&w.label_scores, dir, to_root)
    }

    /// The label [`ArcEagerParser::best_label`] picks whatever the scores, when only
    /// one column's label is allowed for such an arc. O(columns).
    pub(super) fn sole_label(&self, dir: usize, to_root: bool) -> Option<u32> {
        let ok = if to_root { &self.root_ok } else { &self.nonroot_ok };
        let mut allowed = self.label_cols[dir_index(dir)].iter().filter(|&&l| ok[l as usize]);
        match (allowed.next(), allowed.next()) {
            (Some(&l), None) => Some(l),
            _ => None,
        }
    }

    /// Best label of an arc move in direction `dir` from its column scores, for an
    /// arc from ROOT (`to_root`) or between words.
    pub(super) fn best_label(&self, scores: &[f32], dir: usize, to_root: bool) -> u32 {
        let ok = if to_root { &self.root_ok } else { &self.nonroot_ok };
        let cols = &self.label_cols[dir_index(dir)];
        let mut best: Option<usize> = None;
        for (c, (&l, &sc)) in cols.iter().zip(scores).enumerate() {
            if ok[l as usize] && best.is_none_or(|b| sc > scores[b]) {
                best = Some(c);
            }
        }
        best.map_or(if to_root { self.root_label } else { self.fallback_label }, |b| cols[b])
    }

    /// Parses sentence `s` of `tb` (features from `vh`) with the [`ModelGuide`], or
    /// with a `margin` the prefix-margin rule ([`MarginGuide`]), leaving the tree in `c`
    /// and adding the rule's template counts to `counts`.
    #[allow(clippy::too_many_arguments)]
    fn parse_into(
        &self,
        tb: &Treebank,
        vh: &VocabHashes,
        s: usize,
        c: &mut Configuration,
        work: &mut Work,
        margins: Option<&mut Vec<f32>>,
        margin: Option<f32>,
        counts: &mut PrefixCounts,
    ) {
        begin(tb, vh, s, c, work);
        match margin {
            // Every template: the full model (a cascade's too: no first stage to pay for).
            None => run(c, &mut ModelGuide { parser: self, work, margins }, |_, _| {}),
            Some(m) if m == f32::INFINITY && self.cascade.is_some() => {
                run(c, &mut ModelGuide { parser: self, work, margins }, |_, _| {})
            }
            Some(m) if self.cascade.is_some() => {
                let cas = self.cascade.as_deref().expect("checked");
                let mut g = CascadeGuide::new(self, cas, work, m);
                g.margins = margins;
                run(c, &mut g, |_, _| {});
                counts.add(&g.counts);
            }
            Some(m) => {
                let mut g = MarginGuide::new(self, work, m);
                g.margins = margins;
                run(c, &mut g, |_, _| {});
                counts.add(&g.counts);
            }
        }
        c.finish(self.root_label, self.fallback_label);
    }

    /// Parses every sentence with `threads` threads (0 = all cores), returning a copy
    /// of `tb` with HEAD and DEPREL replaced (deprojectivised if trained so).
    pub fn parse(&self, tb: &Treebank, threads: usize) -> Result<Treebank> {
        Ok(self.parse_scored(tb, threads, false)?.0)
    }

    /// [`Self::parse`], and with `margins` the margin of each word's head (flat over the
    /// treebank's words): the closest call among the scored decisions that could have
    /// settled it (the word at the buffer front, or headless on the stack top), by how
    /// far the chosen move led the best other valid move; 0 for a word no scored
    /// decision concerned.
    pub fn parse_scored(&self, tb: &Treebank, threads: usize, margins: bool) -> Result<(Treebank, Vec<f32>)> {
        let (parsed, m, _) = self.parse_with(tb, threads, margins, None)?;
        Ok((parsed, m))
    }

    /// [`Self::parse_scored`], with a `margin` by the prefix-margin rule (Strubell et
    /// al. 2015, Algorithm 1; `f32::INFINITY` computes every template, the model's own
    /// decisions); also returns the templates the rule computed.
    pub fn parse_with(
        &self,
        tb: &Treebank,
        threads: usize,
        margins: bool,
        margin: Option<f32>,
    ) -> Result<(Treebank, Vec<f32>, PrefixCounts)> {
        if let Some(m) = margin.filter(|m| m.is_nan() || *m < 0.0) {
            return Err(Error::InvalidArgument(format!("a margin must be a number ≥ 0, got {m}")));
        }
        let vh = self.vocab_hashes(tb);
        let results = map_chunks(
            threads,
            tb.len(),
            64,
            || (Configuration::default(), Work::default(), Vec::new()),
            |(c, work, m), range| {
                range
                    .map(|s| {
                        let n1 = tb.sentences[s].len as usize + 1;
                        m.clear();
                        m.resize(n1, f32::INFINITY);
                        let mut counts = PrefixCounts::default();
                        self.parse_into(tb, &vh, s, c, work, margins.then_some(&mut *m), margin, &mut counts);
                        m.iter_mut().filter(|x| x.is_infinite()).for_each(|x| *x = 0.0);
                        (c.heads()[1..].to_vec(), c.labels()[1..].to_vec(), m[1..].to_vec(), counts)
                    })
                    .collect()
            },
        )?;
        let mut flat = Vec::with_capacity(if margins { tb.n_words() } else { 0 });
        let mut counts = PrefixCounts::default();
        let trees = results
            .into_iter()
            .map(|(h, l, m, n)| {
                if margins {
                    flat.extend(m);
                }
                counts.add(&n);
                (h, l)
            })
            .collect();
        Ok((trees_into(tb, trees, &self.labels, self.pseudo_projective), flat, counts))
    }
}

/// A copy of `tb` with the parsed trees `results` (per sentence: heads and label ids
/// of words 1..=n, labels indexing `labels`), deprojectivised if `pseudo_projective`.
pub(crate) fn trees_into(
    tb: &Treebank,
    results: Vec<(Vec<u32>, Vec<u32>)>,
    labels: &[String],
    pseudo_projective: bool,
) -> Treebank {
    let mut out = tb.clone();
    out.clear_margins(); // the input's margins are of other heads
    let ids: Vec<u32> = labels.iter().map(|l| out.vocabs.deprel.intern(l)).collect();
    for (s, (heads, labels)) in results.into_iter().enumerate() {
        let start = out.sentences[s].start as usize;
        for (i, (h, l)) in heads.into_iter().zip(labels).enumerate() {
            out.words.head[start + i] = h as i32;
            out.words.deprel[start + i] = ids[l as usize];
        }
    }
    if pseudo_projective {
        projective::deprojectivize(&mut out);
    }
    out
}

/// Applies move kind `k` (with `label` for arcs).
#[inline]
pub fn apply_kind(c: &mut Configuration, k: usize, label: u32) {
    match k {
        SHIFT => Shift.apply(c),
        REDUCE => Reduce.apply(c),
        LEFT => LeftArc(label).apply(c),
        _ => RightArc(label).apply(c),
    }
}

/// Online training state; the caller (Python) drives the epochs, evaluating and
/// reporting between them.
pub struct Trainer {
    pub(super) parser: ArcEagerParser<Weights>,
    train: Arc<TrainingSet>,
    vh: VocabHashes,
    order: Vec<usize>,
    rng: Rng,
    opts: TrainOptions,
    epoch: usize,
    c: Configuration,
    work: Work,
    /// The stagewise baseline's current template (see [`Trainer::set_stage`]).
    stage: Option<usize>,
}

impl Trainer {
    /// Prepares training on `train`: a [`TrainingSet`] of its own, then
    /// [`Trainer::on`]. To train several models on one treebank, build the set once.
    pub fn new(set: TemplateSet, train: &Treebank, opts: &TrainOptions) -> Result<Trainer> {
        if opts.clusters.is_some() && !ConfigFeatures::compile(&set)?.reads_clusters() {
            return Err(Error::InvalidArgument(
                "a cluster table, but no template reads it: give templates with cluster(NODE) or \
                 cluster:K(NODE) (e.g. cluster(QUEUE_0), cluster:4(STACK_0))"
                    .into(),
            ));
        }
        let prepared = TrainingSet::with_clusters(
            train,
            opts.pseudo_projective,
            opts.min_lifted_label_count,
            opts.clusters.clone(),
        )?;
        Trainer::on(set, &Arc::new(prepared), opts)
    }

    /// Prepares training of the templates `set` on a prepared training set: sizes each
    /// template's weight block from its distinct features along the static oracle's
    /// paths (counted once per template and set, O(words) each).
    pub fn on(set: TemplateSet, train: &Arc<TrainingSet>, opts: &TrainOptions) -> Result<Trainer> {
        if set.is_empty() {
            return Err(Error::InvalidArgument("the template set is empty".into()));
        }
        super::prefix_margin::check_training(opts.prefix_margin, opts.prefix_l2)?;
        if !(opts.prefix_full.is_finite() && opts.prefix_full >= 0.0) {
            return Err(Error::InvalidArgument(format!(
                "the full sum's step must be a number ≥ 0, got {}",
                opts.prefix_full
            )));
        }
        if !(0.0..=1.0).contains(&opts.explore_p) {
            return Err(Error::InvalidArgument(format!(
                "explore_p must be in [0, 1], got {}",
                opts.explore_p
            )));
        }
        if (opts.pseudo_projective, opts.min_lifted_label_count)
            != (train.pseudo_projective, train.min_lifted_label_count)
        {
            return Err(Error::InvalidArgument(format!(
                "the training set was prepared with pseudo_projective={} and min_lifted_label_count={}, \
                 the options ask for {} and {}",
                train.pseudo_projective,
                train.min_lifted_label_count,
                opts.pseudo_projective,
                opts.min_lifted_label_count
            )));
        }
        let same_table = match (&opts.clusters, &train.clusters) {
            (None, _) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            (Some(_), None) => false,
        };
        if !same_table {
            return Err(Error::InvalidArgument(
                "the options' cluster table is not the training set's: give it to the training set".into(),
            ));
        }
        let feats = ConfigFeatures::compile(&set)?;
        // A prepared set's table serves the models that read it; the others drop it.
        let clusters = if feats.reads_clusters() { train.clusters.clone() } else { None };
        if feats.reads_clusters() && clusters.is_none() {
            return Err(Error::InvalidArgument(
                "templates read word clusters (cluster(NODE), cluster:K(NODE)), but there is no cluster \
                 table: give a Brown paths file (ArcEagerParser(clusters=PATH), depfs train --parser \
                 arc-eager --clusters FILE)"
                    .into(),
            ));
        }
        let vh = train.vocab_hashes(&feats.attrs);
        let distinct = train.distinct_features(&set)?;
        let move_rows: Vec<usize> = distinct.iter().map(|&n| rows_for(n, 6, opts.max_bits)).collect();
        let label_templates: Vec<usize> = (0..set.len())
            .filter(|&t| distinct[t] <= opts.label_max_features)
            .take(opts.label_max_templates)
            .collect();
        let label_rows: Vec<usize> =
            label_templates.iter().map(|&t| rows_for(distinct[t], 6, opts.label_max_bits)).collect();
        let labels = &train.labels;
        let label_cols = train.label_cols.clone();
        let set_for_inputs = set.clone();
        let mut parser = ArcEagerParser {
            set,
            feats,
            root_label: labels.root_label,
            fallback_label: labels.fallback_label,
            root_ok: train.root_ok.clone(),
            nonroot_ok: train.nonroot_ok.clone(),
            move_w: Weights::new(&move_rows, N_KINDS)?,
            label_w: Weights::new(&label_rows, label_width(&label_cols, LABEL_ROW_ALIGN))?,
            label_bias: label_bias(
                &label_cols,
                &train.root_ok,
                &train.nonroot_ok,
                label_width(&label_cols, LABEL_ROW_ALIGN),
            ),
            label_col_of: label_col_of(&label_cols, labels.labels.len())
                .ok_or_else(|| Error::InvalidArgument("inconsistent label columns".into()))?,
            label_cols,
            labels: labels.labels.clone(),
            label_templates,
            pseudo_projective: opts.pseudo_projective,
            dynamic: opts.prefix_margin.map(|m| MarginPresets { train: m, accurate: m, fast: m }),
            cascade: None,
            clusters,
            inputs: crate::io::model::needed_columns(&[&set_for_inputs], &train.treebank),
            info: String::new(),
        };
        parser.move_w.start_averaging();
        parser.label_w.start_averaging();
        if opts.prefix_margin.is_some() && !opts.prefix_perceptron {
            parser.move_w.start_adagrad(opts.prefix_l2);
            parser.label_w.start_adagrad(opts.prefix_l2);
        }
        Ok(Trainer {
            parser,
            train: Arc::clone(train),
            vh,
            order: train.usable.clone(),
            rng: Rng::new(opts.seed),
            opts: opts.clone(),
            epoch: 0,
            c: Configuration::default(),
            work: Work::default(),
            stage: None,
        })
    }

    /// The stagewise baseline of Strubell et al. §6.1 (a prefix-margin trainer only):
    /// from the next epoch on only template `stage` learns (of the move order, and of
    /// the label order, whose last template stands in where it is shorter), over the
    /// prefix that ends with it; the templates before it are frozen at their averages.
    /// Stages only move forward. None: back to Algorithm 2.
    pub fn set_stage(&mut self, stage: Option<usize>) -> Result<()> {
        if stage.is_some() && self.opts.prefix_margin.is_none() {
            return Err(Error::InvalidArgument("stagewise training needs a prefix margin".into()));
        }
        if stage.is_some() && self.opts.prefix_perceptron {
            return Err(Error::InvalidArgument(
                "stagewise training takes AdaGrad steps, not perceptron ones".into(),
            ));
        }
        let Some(after) = stage else {
            self.stage = None;
            return Ok(());
        };
        let before = self.stage.unwrap_or(0);
        if after < before {
            return Err(Error::InvalidArgument(format!(
                "stage {after} after stage {before}: stages only move forward"
            )));
        }
        // A template is frozen once its stage is over; the last one of an order keeps
        // learning while later stages run (its order has no template for them).
        let p = &mut self.parser;
        let (moves, labels) = (p.set.len(), p.label_templates.len());
        for t in before.min(moves.saturating_sub(1))..after.min(moves.saturating_sub(1)) {
            p.move_w.freeze_template(t);
        }
        for t in before.min(labels.saturating_sub(1))..after.min(labels.saturating_sub(1)) {
            p.label_w.freeze_template(t);
        }
        self.stage = stage;
        Ok(())
    }

    /// One pass over the (shuffled) training sentences. O(decisions · T).
    pub fn epoch(&mut self) -> EpochReport {
        let t0 = std::time::Instant::now();
        self.rng.shuffle(&mut self.order);
        let explore = self.epoch >= self.opts.explore_from;
        let (mut right, mut total) = (0u64, 0u64);
        let o = &self.opts;
        let prefix = o.prefix_margin.map(|margin| PrefixStep {
            margin,
            all_prefixes: o.prefix_all,
            perceptron: o.prefix_perceptron,
            full: o.prefix_full,
        });
        for &s in &self.order {
            let gold = self.train.golds[s].as_ref().expect("usable sentence");
            let (r, t) = self.parser.train_sentence(
                &self.train.treebank,
                &self.vh,
                s,
                gold,
                explore,
                self.opts.explore_p,
                prefix,
                self.stage,
                &mut self.rng,
                &mut self.c,
                &mut self.work,
            );
            right += r;
            total += t;
        }
        match self.stage {
            // Frozen templates keep their weights: only the stage's decays.
            Some(st) => {
                let p = &mut self.parser;
                p.move_w.flush_l2_template(st.min(p.set.len() - 1));
                if let Some(last) = p.label_templates.len().checked_sub(1) {
                    p.label_w.flush_l2_template(st.min(last));
                }
            }
            None => {
                self.parser.move_w.flush_l2();
                self.parser.label_w.flush_l2();
            }
        }
        self.epoch += 1;
        EpochReport {
            epoch: self.epoch,
            train_accuracy: right as f64 / total.max(1) as f64,
            seconds: t0.elapsed().as_secs_f64(),
            sentences: self.order.len(),
        }
    }

    /// The parser with the weights averaged over all updates so far, frozen to 8 bits.
    pub fn averaged(&self) -> ArcEagerParser {
        self.parser.frozen()
    }

    /// The same with f32 weights (to measure what quantization costs).
    pub fn averaged_f32(&self) -> ArcEagerParser<Weights> {
        self.parser.averaged_f32()
    }
    pub fn epochs_done(&self) -> usize {
        self.epoch
    }
}

impl<W: WeightTable> ArcEagerParser<W> {
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
