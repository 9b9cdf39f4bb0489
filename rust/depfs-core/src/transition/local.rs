//! Local classifiers that keep their weights, and weighted ensembles of them that parse.
//!
//! SAMME (Bawden & Crabbé 2016, Algorithm 1, after Zhu et al. 2009) boosts weak parsers
//! made of template groups: each round trains a *local* classifier on weighted
//! (configuration, zero-cost moves) examples, measures its weighted error, and gives it
//! a say α in the final vote. So a weak learner here is a move classifier (plus a label
//! classifier for arc moves) over its own template set, trained by an averaged
//! perceptron whose updates are scaled by the example weights, on the decisions of
//! stored [`Trajectories`] (features replayed for its set, never stored). It keeps its
//! weights: it predicts, scores, joins an [`Ensemble`] whose weighted vote parses a
//! treebank with the one decision loop ([`super::guide::run`]), and is saved with it.

use serde::{Deserialize, Serialize};

use super::guide::{run, Guide, Step};
use super::parser::{best_kind, trees_into, LEFT, N_KINDS, RIGHT};
use super::system::Configuration;
use super::trajectories::{Trajectories, NO_LABEL};
use crate::templates::attrs::{SentAttrs, VocabHashes};
use crate::templates::config_feats::{ConfigFeatures, ExtractScratch};
use crate::templates::hash::combine;
use crate::templates::{Family, TemplateSet, DEFAULT_MAX_ATOMS};
use crate::treebank::Treebank;
use crate::util::{map_chunks, Rng};
use crate::weights::{rows_for, QuantizedWeights, WeightBytes, WeightTable, Weights};
use crate::{Error, Result};

const LEFT_SALT: u64 = 0x6c6f_6361_6c00_0001;
const RIGHT_SALT: u64 = 0x6c6f_6361_6c00_0002;

/// Options of [`LocalClassifier::train`].
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    pub epochs: usize,
    pub seed: u64,
    /// Upper bound on the rows of a block (2^bits).
    pub max_bits: u32,
    /// Threads of the feature replay (0 = all cores).
    pub threads: usize,
}

impl Default for LocalOptions {
    fn default() -> Self {
        LocalOptions { epochs: 5, seed: 1, max_bits: 18, threads: 1 }
    }
}

/// The labels a classifier or ensemble writes, as the recording parser had them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSet {
    pub labels: Vec<String>,
    /// Label of a word attached to ROOT when the parse ends without a head for it,
    /// and of any other such word.
    pub root_label: u32,
    pub fallback_label: u32,
    /// The trajectories were recorded on a projectivised treebank: parses are
    /// deprojectivised.
    pub pseudo_projective: bool,
}

/// A move and label classifier over its own configuration templates.
#[derive(Debug, Clone)]
pub struct LocalClassifier {
    pub set: TemplateSet,
    feats: ConfigFeatures,
    move_w: QuantizedWeights,
    /// Rows of one weight per label, features salted by arc direction.
    label_w: QuantizedWeights,
    pub labels: LabelSet,
    /// The input columns it needs: read by its templates and filled in training.
    pub inputs: Vec<String>,
}

/// One decision's inputs to a local classifier.
struct Example<'a> {
    feats: &'a [u64],
    valid: [bool; N_KINDS],
    zero: [bool; N_KINDS],
    gold: [u32; 2],
}

fn mask(v: &[bool], i: usize) -> [bool; N_KINDS] {
    [v[i * N_KINDS], v[i * N_KINDS + 1], v[i * N_KINDS + 2], v[i * N_KINDS + 3]]
}

/// Index of the best of `scores` (lowest on ties). O(labels).
fn best_label(scores: &[f32]) -> u32 {
    let mut best = 0;
    for (l, &s) in scores.iter().enumerate() {
        if s > scores[best] {
            best = l;
        }
    }
    best as u32
}

fn salted(f: u64, dir: usize) -> u64 {
    combine(f, if dir == LEFT { LEFT_SALT } else { RIGHT_SALT })
}

impl LocalClassifier {
    /// Trains on the decisions of `traj` with weights `sample_weight` (one per
    /// decision, finite and ≥ 0): the move rows learn the best-scoring zero-cost move,
    /// the label rows the gold label of a zero-cost arc move; every update is scaled by
    /// the decision's weight. Seeded and deterministic. O(epochs · n · |set|).
    pub fn train(
        traj: &Trajectories,
        set: TemplateSet,
        sample_weight: &[f32],
        opts: &LocalOptions,
    ) -> Result<LocalClassifier> {
        let n = traj.len();
        if sample_weight.len() != n {
            return Err(Error::InvalidArgument(format!(
                "{} sample weights for {n} decisions",
                sample_weight.len()
            )));
        }
        if sample_weight.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(Error::InvalidArgument("sample weights must be finite and ≥ 0".into()));
        }
        if set.family != Family::Config || set.is_empty() {
            return Err(Error::InvalidArgument("a local classifier needs configuration templates".into()));
        }
        let t = set.len();
        let features = traj.features(&set, opts.threads)?;
        let rows: Vec<usize> = (0..t)
            .map(|j| {
                let mut col: Vec<u64> = (0..n).map(|i| features[i * t + j]).collect();
                col.sort_unstable();
                col.dedup();
                rows_for(col.len(), 4, opts.max_bits)
            })
            .collect();
        let n_labels = traj.labels.labels.len().max(1);
        let mut move_w = Weights::new(&rows, N_KINDS)?;
        let mut label_w = Weights::new(&rows, n_labels)?;
        move_w.start_averaging();
        label_w.start_averaging();
        let example = |i: usize| Example {
            feats: &features[i * t..(i + 1) * t],
            valid: mask(&traj.valid, i),
            zero: mask(&traj.zero_cost, i),
            gold: [traj.gold_left[i], traj.gold_right[i]],
        };
        let mut rng = Rng::new(opts.seed);
        let mut order: Vec<usize> = (0..n).collect();
        let mut acc = vec![0f32; n_labels];
        for _ in 0..opts.epochs {
            rng.shuffle(&mut order);
            for &i in &order {
                let (ex, w) = (example(i), sample_weight[i]);
                let sc = kind_scores(&move_w, ex.feats);
                let (Some(pred), Some(target)) = (best_kind(&sc, &ex.valid), best_kind(&sc, &ex.zero)) else {
                    continue;
                };
                if !ex.zero[pred] && w > 0.0 {
                    for (j, &f) in ex.feats.iter().enumerate() {
                        move_w.update(j, f, target, w);
                        move_w.update(j, f, pred, -w);
                    }
                }
                move_w.tick();
                let gold = if target == LEFT || target == RIGHT { ex.gold[target - LEFT] } else { NO_LABEL };
                if gold != NO_LABEL && (gold as usize) < n_labels {
                    label_scores(&label_w, ex.feats, target, &mut acc);
                    let guess = best_label(&acc);
                    if guess != gold && w > 0.0 {
                        for (j, &f) in ex.feats.iter().enumerate() {
                            label_w.update(j, salted(f, target), gold as usize, w);
                            label_w.update(j, salted(f, target), guess as usize, -w);
                        }
                    }
                    label_w.tick();
                }
            }
        }
        Ok(LocalClassifier {
            feats: ConfigFeatures::compile(&set)?,
            inputs: crate::io::model::needed_columns(&[&set], &traj.treebank),
            set,
            move_w: QuantizedWeights::quantize(&move_w.averaged()),
            label_w: QuantizedWeights::quantize(&label_w.averaged()),
            labels: traj.labels.clone(),
        })
    }

    /// Move scores of a configuration given by the features of this classifier's set.
    pub fn kind_scores(&self, feats: &[u64]) -> [f32; N_KINDS] {
        kind_scores(&self.move_w, feats)
    }

    /// The classifier's best valid move kind at every decision of `traj`.
    pub fn predict(&self, traj: &Trajectories, threads: usize) -> Result<Vec<u8>> {
        let t = self.set.len();
        let features = traj.features(&self.set, threads)?;
        Ok((0..traj.len())
            .map(|i| {
                let sc = self.kind_scores(&features[i * t..(i + 1) * t]);
                best_kind(&sc, &mask(&traj.valid, i)).map_or(0, |k| k as u8)
            })
            .collect())
    }

    /// Best label of an arc move of kind `dir` (LEFT or RIGHT).
    fn label(&self, feats: &[u64], dir: usize, acc: &mut Vec<f32>) -> u32 {
        acc.clear();
        acc.resize(self.label_w.width(), 0.0);
        label_scores(&self.label_w, feats, dir, acc);
        best_label(acc)
    }

    fn to_stored(&self) -> StoredLocal {
        StoredLocal {
            templates: self.set.to_text(),
            move_w: StoredWeights::of(&self.move_w),
            label_w: StoredWeights::of(&self.label_w),
        }
    }

    fn from_stored(st: StoredLocal, labels: &LabelSet) -> Result<LocalClassifier> {
        let set = TemplateSet::parse(&st.templates, Family::Config, DEFAULT_MAX_ATOMS)?;
        let table = |w: StoredWeights, width: usize| w.table(set.len(), width);
        let feats = ConfigFeatures::compile(&set)?;
        feats.refuse_clusters("a local classifier")?;
        Ok(LocalClassifier {
            feats,
            move_w: table(st.move_w, N_KINDS)?,
            label_w: table(st.label_w, labels.labels.len().max(1))?,
            // What the templates read; the ensemble's file says what training filled.
            inputs: crate::io::model::input_columns(&[&set]),
            set,
            labels: labels.clone(),
        })
    }
}

fn kind_scores<W: WeightTable>(w: &W, feats: &[u64]) -> [f32; N_KINDS] {
    let mut acc = [0f32; N_KINDS];
    for (t, &f) in feats.iter().enumerate() {
        w.add_row(t, f, &mut acc);
    }
    acc
}

fn label_scores<W: WeightTable>(w: &W, feats: &[u64], dir: usize, acc: &mut [f32]) {
    acc.fill(0.0);
    for (t, &f) in feats.iter().enumerate() {
        w.add_row(t, salted(f, dir), acc);
    }
}

/// A weighted vote of local classifiers (SAMME's final classifier): at each decision
/// every member votes with its say α for its best valid move kind, and for an arc
/// move for its best label; the most-voted kind and label win (lowest index on ties).
#[derive(Debug, Clone)]
pub struct Ensemble {
    pub members: Vec<(f32, LocalClassifier)>,
    pub labels: LabelSet,
    /// The input columns parsing needs (any member's).
    pub inputs: Vec<String>,
    /// Training information kept in the model file (JSON from the Python layer).
    pub info: String,
}

impl Ensemble {
    /// An ensemble of `members` (say α, classifier); they must share one label set.
    pub fn new(members: Vec<(f32, LocalClassifier)>) -> Result<Ensemble> {
        let labels = members
            .first()
            .ok_or_else(|| Error::InvalidArgument("an ensemble needs at least one member".into()))?
            .1
            .labels
            .clone();
        if members.iter().any(|(a, m)| m.labels != labels || !a.is_finite()) {
            return Err(Error::InvalidArgument(
                "ensemble members must share one label set and have finite weights".into(),
            ));
        }
        let mut inputs: Vec<String> = Vec::new();
        for c in ["FORM", "LEMMA", "UPOS", "XPOS", "FEATS"] {
            if members.iter().any(|(_, m)| m.inputs.iter().any(|i| i == c)) {
                inputs.push(c.to_string());
            }
        }
        Ok(Ensemble { members, labels, inputs, info: String::new() })
    }

    /// Parses every sentence with the members' weighted vote on `threads` threads
    /// (0 = all cores); a copy of `tb` with HEAD and DEPREL set.
    /// O(decisions · Σ members' templates).
    pub fn parse(&self, tb: &Treebank, threads: usize) -> Result<Treebank> {
        let vhs: Vec<VocabHashes> =
            self.members.iter().map(|(_, m)| VocabHashes::new(tb, &m.feats.attrs)).collect();
        let ls = &self.labels;
        let results = map_chunks(
            threads,
            tb.len(),
            64,
            || (Configuration::default(), Vote::new(self)),
            |(c, vote), range| {
                range
                    .map(|s| {
                        c.reset(tb.sentences[s].len);
                        for (a, vh) in vote.attrs.iter_mut().zip(&vhs) {
                            a.fill(vh, tb, s);
                        }
                        run(c, vote, |_, _| {});
                        c.finish(ls.root_label, ls.fallback_label);
                        (c.heads()[1..].to_vec(), c.labels()[1..].to_vec())
                    })
                    .collect()
            },
        )?;
        Ok(trees_into(tb, results, &ls.labels, ls.pseudo_projective))
    }

    /// Writes the ensemble as a model file (atomically).
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        self.save_with_info(path, &self.info)
    }

    /// [`Self::save`] with other training information.
    pub fn save_with_info(&self, path: &std::path::Path, info: &str) -> Result<()> {
        crate::io::model::save_model(
            path,
            self.inputs.clone(),
            info.to_string(),
            crate::io::model::Model::Ensemble(self.to_stored()),
        )
    }

    /// Reads an ensemble model file.
    pub fn load(path: &std::path::Path) -> Result<Ensemble> {
        Ensemble::from_loaded(path, crate::io::model::load_model(path)?)
    }

    /// The ensemble in a model file as read (`path` names it in messages).
    pub fn from_loaded(path: &std::path::Path, file: crate::io::model::Loaded) -> Result<Ensemble> {
        match file.model {
            crate::io::model::Model::Ensemble(st) => {
                let mut e = Ensemble::from_stored(st)
                    .map_err(|e| Error::Model { file: path.display().to_string(), msg: e.to_string() })?;
                e.inputs = file.inputs;
                e.info = file.info;
                Ok(e)
            }
            other => Err(crate::io::model::wrong_kind(path, &other, "ensemble")),
        }
    }

    pub(crate) fn to_stored(&self) -> StoredEnsemble {
        StoredEnsemble {
            labels: self.labels.clone(),
            members: self.members.iter().map(|(a, m)| (*a, m.to_stored())).collect(),
        }
    }

    pub(crate) fn from_stored(st: StoredEnsemble) -> Result<Ensemble> {
        // Parses name every word by these ids: out of range, they would index past the labels.
        let l = &st.labels;
        let n = l.labels.len();
        if n == 0 || l.root_label as usize >= n || l.fallback_label as usize >= n {
            return Err(Error::InvalidArgument(format!(
                "inconsistent label set: {n} labels, root label {}, fallback label {}",
                l.root_label, l.fallback_label
            )));
        }
        let members = st
            .members
            .into_iter()
            .map(|(a, m)| Ok((a, LocalClassifier::from_stored(m, &st.labels)?)))
            .collect::<Result<Vec<_>>>()?;
        Ensemble::new(members)
    }
}

/// The ensemble's vote as a guide, with each member's buffers.
struct Vote<'a> {
    e: &'a Ensemble,
    attrs: Vec<SentAttrs>,
    scratch: ExtractScratch,
    feats: Vec<Vec<u64>>,
    acc: Vec<f32>,
    label_votes: Vec<f32>,
}

impl<'a> Vote<'a> {
    fn new(e: &'a Ensemble) -> Self {
        let m = e.members.len();
        Vote {
            e,
            attrs: (0..m).map(|_| SentAttrs::default()).collect(),
            scratch: ExtractScratch::default(),
            feats: vec![Vec::new(); m],
            acc: Vec::new(),
            label_votes: Vec::new(),
        }
    }
}

impl Guide for Vote<'_> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let mut votes = [0f32; N_KINDS];
        for (j, (alpha, m)) in self.e.members.iter().enumerate() {
            let f = &mut self.feats[j];
            f.clear();
            m.feats.extract(c, &self.attrs[j], None, &mut self.scratch, f);
            if let Some(k) = best_kind(&m.kind_scores(f), valid) {
                votes[k] += alpha;
            }
        }
        let kind = best_kind(&votes, valid)?;
        let mut label = 0;
        if kind == RIGHT && c.s0() == 0 {
            label = self.e.labels.root_label;
        } else if kind == LEFT || kind == RIGHT {
            self.label_votes.clear();
            self.label_votes.resize(self.e.labels.labels.len().max(1), 0.0);
            for (j, (alpha, m)) in self.e.members.iter().enumerate() {
                let l = m.label(&self.feats[j], kind, &mut self.acc);
                self.label_votes[l as usize] += alpha;
            }
            label = best_label(&self.label_votes);
        }
        Some(Step { kind, label })
    }
}

/// Frozen weights inside a model file.
#[derive(Serialize, Deserialize)]
pub(crate) struct StoredWeights {
    width: usize,
    rows: Vec<usize>,
    scales: Vec<f32>,
    bytes: WeightBytes,
}

impl StoredWeights {
    pub(crate) fn of(w: &QuantizedWeights) -> StoredWeights {
        let (width, rows, scales, bytes) = w.to_parts();
        StoredWeights { width, rows, scales, bytes }
    }
    /// The table, checked against the `n_templates` and `width` its reader expects.
    pub(crate) fn table(self, n_templates: usize, width: usize) -> Result<QuantizedWeights> {
        if self.rows.len() != n_templates || self.width != width {
            return Err(Error::InvalidArgument("weight blocks do not match the templates".into()));
        }
        QuantizedWeights::from_parts(self.width, &self.rows, self.scales, self.bytes)
    }
}

#[derive(Serialize, Deserialize)]
pub(crate) struct StoredLocal {
    templates: String,
    move_w: StoredWeights,
    label_w: StoredWeights,
}

/// An ensemble inside a model file.
#[derive(Serialize, Deserialize)]
pub struct StoredEnsemble {
    labels: LabelSet,
    members: Vec<(f32, StoredLocal)>,
}
