//! Dynamic feature selection for graph-based parsing: He, Daumé III & Eisner (2013),
//! *Dynamic Feature Selection for Dependency Parsing* (EMNLP), §4.2 (Algorithm 1) and
//! §5.4 (the policy's features). DAgger (Algorithm 2) is in Python
//! (`depfs.dynamic.he2013`); this module runs one policy — the expert or a linear
//! classifier — over sentences and records the states it visits with the expert's
//! action.
//!
//! A sentence runs through the open chain ([`super::chain`]): the length dictionary
//! prunes arcs, group T₁ is added to every arc left, non-projective decoding (CLE)
//! gives a tree. Then, round after round, each unlocked arc of the current tree, in
//! descending score order, goes to the policy, which
//! * *locks* it: the modifier's other heads, arcs crossing it, arcs that would close a
//!   cycle with the locked arcs and, for a ROOT arc, every other ROOT arc are ruled out
//!   — never an arc of the current tree (their footnote 5) — and a modifier left with
//!   one head is locked in turn (footnote 3); or
//! * *adds* the next group to every arc still open into that modifier.
//!
//! Scores of groups already added are never recomputed. The last first-order group
//! (K₁) is decoded with projective Eisner (FAIL: the previous non-projective tree stays
//! and the sentence is done); a sentence stops as soon as every modifier is locked.
//! Sentences of a batch run their first-order rounds in lockstep, so a group's weight
//! blocks are read for all of them at once.
//!
//! Second order (K₂ sibling groups after the K₁ first-order ones, numbered after the
//! arc templates): sentence by sentence, each sibling round decides as above, adds the
//! next sibling group to the parts (h, m, s) of the added modifiers that a tree can
//! still use (arcs h → m and h → s left), and decodes with Eisner2
//! (`GraphModel::sibling_rounds`).
//!
//! Two weight tables, as the paper keeps a model per parser: the rounds score with a
//! prefix-trained model ([`Dynfs::arc_w`]; the full model's partial sums are poor
//! parsers), and the projective last round scores with the full model's: on the arcs it
//! scores, the earlier groups again under those weights, then the last group (second
//! order: each feature of the first-order groups is read in the full model's table too,
//! and the first sibling round continues from those sums). A policy that never locks
//! thus gives the full model's parse when no sentence FAILs (a word left with one head
//! by the length dictionary is locked whatever the policy, and its crossing arcs ruled
//! out, so the projective round can find no tree: FAIL keeps the previous round's
//! non-projective tree), in second order when also no word starts with one head left (a
//! locked word's sibling parts are never scored). Without `arc_w`,
//! every round uses the model's own table.

use super::chain::OpenSentence;
use super::label_stop::LabelStop;
use super::score::{self, Split};
use super::{gold_heads, DecoderKind, GraphModel, Prepared, Scratch, SentenceParse};
use crate::templates::arc::{ArcFeatures, ArcSent};
use crate::util::map_chunks;
use crate::weights::{QuantizedWeights, WeightTable};
use crate::{Error, Result, Treebank};
use serde::{Deserialize, Serialize};

/// Sentences run in lockstep (see the module comment).
const BATCH: usize = 32;

/// Policy features before the per-group ones (see [`policy_features`]).
pub const BASE_FEATURES: usize = 15;

/// Number of policy features for `k` groups.
pub fn n_features(k: usize) -> usize {
    BASE_FEATURES + 3 * k
}

/// Bits of the policy's lexical table ([`Dynfs::lex`]): 2^18 weights (1 MB as f32). The
/// group-1 features of en_ewt's DAgger states (~190,000 decisions × 5 templates) fill a
/// few percent of it, so collisions are rare.
pub const LEX_BITS: u32 = 18;
/// Weights in a lexical table.
pub const LEX_SIZE: usize = 1 << LEX_BITS;

/// The lexical table's index of template `t`'s feature on arc h → m: the feature the
/// scorer reads ([`ArcFeatures::plain`]; in-between atoms aside), mixed with `t` so that
/// no two templates share a weight by construction, top [`LEX_BITS`] bits. O(1).
#[inline]
pub fn lex_index(af: &ArcFeatures, sent: &ArcSent, t: usize, h: usize, m: usize) -> u32 {
    let x = (af.plain(sent, t, h, m) ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_mul(0xd6e8_feb8_6659_fd93);
    (x >> (64 - LEX_BITS)) as u32
}

/// The linear policy's acquired parsing features (He et al. §5.4: "all previously
/// acquired parsing features"): the group-1 templates' features of the arc decided on,
/// always computed by the first decision, hashed into [`LEX_SIZE`] weights.
#[derive(Clone, Copy)]
struct Lex<'a> {
    af: &'a ArcFeatures,
    /// The templates of group T₁ (arc-set indices).
    templates: &'a [usize],
    /// The weights ([`Dynfs::lex`]; empty: no lexical features).
    weights: &'a [f32],
}

/// A model's dynamic feature selection: its template groups and lock/add policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dynfs {
    /// Arc template groups T₁ … T_K: indices into the model's arc set, each template
    /// in exactly one group.
    pub groups: Vec<Vec<u32>>,
    /// The linear classifier over [`policy_features`]: lock when w · ψ > threshold.
    pub weights: Vec<f32>,
    /// Default lock/add boundary (a parse-time knob: higher = fewer locks, slower and
    /// more accurate).
    pub threshold: f32,
    /// Arc weights of a prefix-trained model ([`super::GraphTrainer::set_prefix_groups`])
    /// that the rounds score with instead of the model's own (same templates and block
    /// sizes); stored beside the spec in the model file.
    /// Shared: a parse call that passes the spec on does not copy the table.
    #[serde(skip)]
    pub arc_w: Option<std::sync::Arc<QuantizedWeights>>,
    /// Margin pruning of added words (first-order rounds; not in He et al.): when the
    /// policy adds the next group to word m, m's arcs scoring more than this below m's
    /// best arc are ruled out first (never the current tree's), so the later groups,
    /// above all the projective last round's, are computed on fewer arcs. None: none.
    /// Stored in its own model-file variant (files without it keep the old one).
    #[serde(skip)]
    pub prune_margin: Option<f32>,
    /// Tree-margin pruning after round 1 (first-order rounds; not in He et al.: the
    /// max-marginal filter of Weiss & Taskar 2010's structured prediction cascades): an
    /// arc whose best projective tree under T₁ scores more than this below the best tree
    /// is ruled out for every word (never the current tree's arc), and a word left with
    /// one head is locked. None: none.
    #[serde(skip)]
    pub tree_margin: Option<f32>,
    /// The labeler's prefix-margin stop ([`super::label_stop`]; not in He et al.). None:
    /// the full labeler. Stored in its own model-file variant, as the prune margin.
    #[serde(skip)]
    pub label: Option<LabelStop>,
    /// The linear policy's lexical weights: [`LEX_SIZE`] of them, indexed by
    /// [`lex_index`] of each group-1 template's feature of the arc decided on, added to
    /// w · ψ; empty: none (models before them). Stored in its own model-file variant.
    #[serde(skip)]
    pub lex: Vec<f32>,
}

impl Dynfs {
    /// An error unless the groups partition the `n_arc` arc templates (indices
    /// 0..n_arc) and then, in a second-order model, the `n_sib` sibling templates
    /// (indices n_arc..n_arc + n_sib): first-order groups first, sibling groups after,
    /// none of them mixed. The policy weights must fit the groups.
    pub fn check(&self, n_arc: usize, n_sib: usize) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(format!("dynfs: {m}")));
        if self.groups.is_empty() || self.groups.iter().any(|g| g.is_empty()) {
            return bad("every group needs a template".into());
        }
        let n = n_arc + n_sib;
        let mut seen = vec![false; n];
        for &t in self.groups.iter().flatten() {
            match seen.get_mut(t as usize) {
                None => {
                    return bad(format!(
                        "template index {t} out of range ({n_arc} arc and {n_sib} sibling templates)"
                    ))
                }
                Some(true) => return bad(format!("template {t} is in two groups")),
                Some(s) => *s = true,
            }
        }
        if let Some(t) = seen.iter().position(|s| !s) {
            return match t.checked_sub(n_arc) {
                None => bad(format!("arc template {t} is in no group")),
                Some(t) => bad(format!("sibling template {t} is in no group")),
            };
        }
        let k1 = self.first_order_groups(n_arc);
        if k1 == 0 {
            return bad("the first group must hold arc templates".into());
        }
        for g in &self.groups[..k1] {
            if g.iter().any(|&t| t as usize >= n_arc) {
                return bad("a group mixes arc and sibling templates".into());
            }
        }
        for g in &self.groups[k1..] {
            if g.iter().any(|&t| (t as usize) < n_arc) {
                return bad("arc templates after a sibling group (first-order groups come first)".into());
            }
        }
        if self.weights.len() != n_features(self.groups.len()) {
            return bad(format!(
                "{} policy weights for {} groups (expected {})",
                self.weights.len(),
                self.groups.len(),
                n_features(self.groups.len())
            ));
        }
        if !self.threshold.is_finite() || self.weights.iter().any(|w| !w.is_finite()) {
            return bad("policy weights and threshold must be finite".into());
        }
        if !(self.lex.is_empty() || self.lex.len() == LEX_SIZE) || self.lex.iter().any(|w| !w.is_finite()) {
            return bad(format!("the policy's lexical weights must be {LEX_SIZE} finite numbers or none"));
        }
        if self.prune_margin.is_some_and(|d| !(d >= 0.0 && d.is_finite())) {
            return bad("the prune margin must be a finite number >= 0".into());
        }
        if self.tree_margin.is_some_and(|d| !(d >= 0.0 && d.is_finite())) {
            return bad("the tree margin must be a finite number >= 0".into());
        }
        if self.arc_w.as_ref().is_some_and(|w| w.n_templates() != n_arc) {
            return bad("the prefix-trained arc weights do not fit the arc templates".into());
        }
        Ok(())
    }

    /// K₁: the number of leading groups of arc templates (indices below `n_arc`); the
    /// groups after them are sibling groups.
    pub fn first_order_groups(&self, n_arc: usize) -> usize {
        self.groups.iter().take_while(|g| g.first().is_some_and(|&t| (t as usize) < n_arc)).count()
    }
}

/// Who decides lock or add.
#[derive(Debug, Clone, Copy)]
pub enum Decider<'a> {
    /// He et al. §5.3: lock exactly the gold arcs (needs gold heads; adds otherwise).
    Expert,
    /// The linear policy: lock when w · ψ (plus the spec's lexical weights,
    /// [`Dynfs::lex`]) > threshold.
    Linear { weights: &'a [f32], threshold: f32 },
}

/// What a run of Algorithm 1 did (sums over sentences).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DynStats {
    pub sentences: u64,
    /// Arcs left by the length dictionary.
    pub arcs: u64,
    /// Template evaluations on those arcs (arcs × templates, group by group).
    pub evaluated: u64,
    /// What the full model evaluates on the same arcs: arcs × all templates.
    pub full: u64,
    /// Policy decisions, and how many locked.
    pub decisions: u64,
    pub locks: u64,
    /// Modifiers locked by propagation (one head left).
    pub propagated: u64,
    /// Rounds run (a round: add a group, decode), summed over sentences.
    pub rounds: u64,
    /// Sentences whose projective round found no tree (the non-projective tree stays).
    pub fails: u64,
    /// Sentences done before the last group (every modifier locked).
    pub early: u64,
    /// Second order: sibling template evaluations on parts (h, m, s) whose arcs the
    /// length dictionary leaves, and what the full model evaluates on those parts.
    pub sib_evaluated: u64,
    pub sib_full: u64,
    /// Labeler templates evaluated (one per template added per word), and what the full
    /// labeler evaluates (words × templates).
    pub lab_evaluated: u64,
    pub lab_full: u64,
}

impl DynStats {
    fn add(&mut self, o: &DynStats) {
        self.sentences += o.sentences;
        self.arcs += o.arcs;
        self.evaluated += o.evaluated;
        self.full += o.full;
        self.decisions += o.decisions;
        self.locks += o.locks;
        self.propagated += o.propagated;
        self.rounds += o.rounds;
        self.fails += o.fails;
        self.early += o.early;
        self.sib_evaluated += o.sib_evaluated;
        self.sib_full += o.sib_full;
        self.lab_evaluated += o.lab_evaluated;
        self.lab_full += o.lab_full;
    }
}

/// A run over a treebank: the parse, its statistics and, when asked, the policy's
/// states (`rows`, [`n_features`] floats each) with the expert's action (1 = lock) and
/// each state's lexical indices (`lex_ids`, [`lex_index`] of the group-1 templates in
/// group order: `lex_width` per state).
pub struct DynRun {
    pub parsed: Treebank,
    pub stats: DynStats,
    pub rows: Vec<f32>,
    pub labels: Vec<u8>,
    pub lex_ids: Vec<u32>,
    pub lex_width: usize,
}

/// One sentence's state between rounds.
#[derive(Debug, Default)]
struct DynSent {
    /// Score of each arc before the last group added to it.
    prev: Vec<f64>,
    /// With a prefix-trained model for the rounds of a second-order model: the full
    /// model's sums of the groups added so far (the sibling rounds continue from them).
    full: Vec<f64>,
    heads: Vec<i32>,
    locked: Vec<bool>,
    /// Heads still possible for each modifier.
    alive: Vec<u32>,
    gold: Option<Vec<i32>>,
    /// Still running rounds.
    running: bool,
    rows: Vec<f32>,
    labels: Vec<u8>,
    lex_ids: Vec<u32>,
    stats: DynStats,
}

/// Per-thread buffers.
#[derive(Default)]
pub struct DynScratch {
    base: Scratch,
    /// The max-marginals of the tree margin ([`Dynfs::tree_margin`]).
    mm: crate::decode::MaxMarginals,
    sents: Vec<DynSent>,
    order: Vec<usize>,
    psi: Vec<f32>,
    stack: Vec<(usize, usize)>,
    desc: Vec<usize>,
    /// Second order: the policy's scores (arc + best sibling part so far).
    cur: Vec<f64>,
    /// Second order: the sibling parts of a round.
    parts: score::SibParts,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// He et al. §5.4: the meta-features of tree arc h → m before group `next` (0-based,
/// ≥ 1) is added, into `out` ([`n_features`]`(k)` floats). Raw score differences are
/// clipped to ±20 and scaled to ±1 ("raw" below); σ is the logistic function.
/// 0 bias; 1 σ(score); 2 σ(score before the last group); 3 σ(score) − σ(best rival)
/// (1 without a rival); 4 raw margin to the best rival (1 without); 5 heads left for m
/// (/20, at most 1); 6 ROOT arc; 7–11 distance |h − m| in 1, 2, 3–4, 5–8, > 8; 12 raw
/// change of the score with the last group; 13 raw margin before the last group (1
/// without a rival); 14 h was the best head before the last group too; then the next
/// group one-hot (k), feature 3 times it (k) and feature 4 times it (k). The margin is
/// the most telling (their §5.4); the rest say how stable it is and where.
/// The scores are `cur` (first order: the arc scores; in the sibling rounds: each arc's
/// score plus its best sibling part so far); the heads left are those of `o`.
#[allow(clippy::too_many_arguments)]
fn policy_features(
    o: &OpenSentence,
    cur: &[f64],
    d: &DynSent,
    h: usize,
    m: usize,
    next: usize,
    k: usize,
    out: &mut Vec<f32>,
) {
    let n1 = o.n1();
    let left = &o.scores[m * n1..(m + 1) * n1];
    let row = &cur[m * n1..(m + 1) * n1];
    let prev = &d.prev[m * n1..(m + 1) * n1];
    let (s, sp) = (row[h], prev[h]);
    // The best other head still left, now and before the last group: one pass. O(n).
    let (mut rival, mut rival_prev) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for g in (0..n1).filter(|&g| g != h && g != m && left[g].is_finite()) {
        rival = rival.max(row[g]);
        rival_prev = rival_prev.max(prev[g]);
    }
    let raw = |x: f64| (x.clamp(-20.0, 20.0) / 20.0) as f32;
    let sig = sigmoid(s);
    let (margin, raw_margin, raw_prev) = if rival.is_finite() {
        ((sig - sigmoid(rival)) as f32, raw(s - rival), raw(sp - rival_prev))
    } else {
        (1.0, 1.0, 1.0)
    };
    out.clear();
    out.resize(n_features(k), 0.0);
    out[0] = 1.0;
    out[1] = sig as f32;
    out[2] = sigmoid(sp) as f32;
    out[3] = margin;
    out[4] = raw_margin;
    out[5] = (d.alive[m] as f32 / 20.0).min(1.0);
    out[6] = if h == 0 { 1.0 } else { 0.0 };
    let dist = h.abs_diff(m);
    out[7 + [0, 0, 1, 2, 2, 3, 3, 3, 3].get(dist).copied().unwrap_or(4)] = 1.0;
    out[12] = raw(s - sp);
    out[13] = raw_prev;
    out[14] = if !rival.is_finite() || sp >= rival_prev { 1.0 } else { 0.0 };
    out[BASE_FEATURES + next] = 1.0;
    out[BASE_FEATURES + k + next] = margin;
    out[BASE_FEATURES + 2 * k + next] = raw_margin;
}

impl GraphModel {
    /// Parses `tb` with dynamic feature selection (Algorithm 1) under `spec`, deciding
    /// with `decider`; with `record`, keeps every decision's features and the expert's
    /// action (sentences with a complete gold tree only). Sentences
    /// over [`super::MAX_EXACT_WORDS`] words are parsed in chunks, as by
    /// [`GraphModel::parse`].
    pub fn parse_dynfs(
        &self,
        tb: &Treebank,
        spec: &Dynfs,
        decider: Decider<'_>,
        record: bool,
        threads: usize,
    ) -> Result<DynRun> {
        self.check_dynfs(spec)?;
        if let Decider::Linear { weights, threshold } = decider {
            if weights.len() != n_features(spec.groups.len()) || !threshold.is_finite() {
                return Err(Error::InvalidArgument(format!(
                    "dynfs: the policy needs {} finite weights and a finite threshold",
                    n_features(spec.groups.len())
                )));
            }
        }
        match &spec.arc_w {
            Some(w) => self.parse_dynfs_with(w, true, tb, spec, decider, record, threads),
            None => self.parse_dynfs_with(&self.arc_w, false, tb, spec, decider, record, threads),
        }
    }

    /// An error unless `spec` fits this model: its groups partition the arc templates
    /// and, in second order, the sibling templates ([`Dynfs::check`]), and the rounds'
    /// arc weights have the model's block sizes (a feature's row is computed once and
    /// read in both tables).
    pub fn check_dynfs(&self, spec: &Dynfs) -> Result<()> {
        spec.check(self.arc.len(), self.sib.len())?;
        if let Some(l) = &spec.label {
            l.check_labels(self.lab.len(), self.labels.len().max(1))?;
            if let Some(w) = &l.weights {
                let same = w.width() == self.lab_w.width()
                    && (0..self.lab.len()).all(|t| w.rows(t) == self.lab_w.rows(t));
                if !same {
                    return Err(Error::InvalidArgument(
                        "dynfs: the stop's labeler weights have other block sizes or labels than the \
                         model's (trained on other data?)"
                            .into(),
                    ));
                }
            }
        }
        if let Some(w) = &spec.arc_w {
            if (0..self.arc.len()).any(|t| w.rows(t) != self.arc_w.rows(t)) {
                return Err(Error::InvalidArgument(
                    "dynfs: the prefix-trained arc weights have other block sizes than the model's \
                     (trained on other data?)"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// [`Self::parse_dynfs`], scoring arcs with the weights `arc_w`; with `switch`, the
    /// last (projective) round scores with the model's own weights instead.
    #[allow(clippy::too_many_arguments)]
    fn parse_dynfs_with(
        &self,
        arc_w: &QuantizedWeights,
        switch: bool,
        tb: &Treebank,
        spec: &Dynfs,
        decider: Decider<'_>,
        record: bool,
        threads: usize,
    ) -> Result<DynRun> {
        let groups: Vec<Vec<usize>> =
            spec.groups.iter().map(|g| g.iter().map(|&t| t as usize).collect()).collect();
        // The first-order groups' templates by shape; sibling groups index the sibling set.
        let k1 = spec.first_order_groups(self.arc.len());
        let splits: Vec<Split> = groups[..k1].iter().map(|g| Split::new(&self.arc, g)).collect();
        let groups: Vec<Vec<usize>> = groups
            .into_iter()
            .enumerate()
            .map(|(i, g)| if i < k1 { g } else { g.into_iter().map(|t| t - self.arc.len()).collect() })
            .collect();
        let prune = spec.prune_margin.map(f64::from);
        let tree = spec.tree_margin.map(f64::from);
        let lex = Lex { af: &self.arc, templates: &groups[0], weights: &spec.lex };
        let mut stats = DynStats::default();
        let (mut rows, mut labels, mut lex_ids) = (Vec::new(), Vec::new(), Vec::new());
        let (parsed, _) = self.with_chunks(tb, |t| {
            let prep = self.prepare(t);
            let parts = map_chunks(threads, t.len(), BATCH, DynScratch::default, |sc, ss| {
                let ss: Vec<usize> = ss.collect();
                let label = spec.label.as_ref();
                self.dynfs_batch(
                    arc_w, switch, t, &prep, &ss, &groups, &splits, decider, lex, prune, tree, label, record,
                    sc,
                )
            })?;
            let mut parses = Vec::with_capacity(parts.len());
            for p in parts {
                let (parse, st, r, l, x) = p?;
                stats.add(&st);
                rows.extend(r);
                labels.extend(l);
                lex_ids.extend(x);
                parses.push(parse);
            }
            Ok((self.write_parses(t, parses), Vec::new()))
        })?;
        Ok(DynRun { parsed, stats, rows, labels, lex_ids, lex_width: groups[0].len() })
    }

    /// Algorithm 1 on sentences `ss`, in lockstep: the first-order rounds (one per
    /// entry of `splits`, K₁), then, sentence by sentence, the sibling rounds of the
    /// groups after them (indices into the sibling set). Per sentence: its parse,
    /// statistics, recorded states and actions.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn dynfs_batch(
        &self,
        arc_w: &QuantizedWeights,
        switch: bool,
        tb: &Treebank,
        prep: &Prepared,
        ss: &[usize],
        groups: &[Vec<usize>],
        splits: &[Split],
        decider: Decider<'_>,
        lex: Lex<'_>,
        prune: Option<f64>,
        tree: Option<f64>,
        label: Option<&LabelStop>,
        record: bool,
        sc: &mut DynScratch,
    ) -> Vec<Result<(SentenceParse, DynStats, Vec<f32>, Vec<u8>, Vec<u32>)>> {
        let (k, k1) = (groups.len(), splits.len());
        // The full model's sums are kept beside the rounds' only for a second-order model
        // (its sibling rounds switch to them); a first-order model's projective last round
        // recomputes the earlier groups under the full weights on the arcs it scores —
        // the same sums, group by group, but read in the second table only for the arcs
        // still open then, not for every arc of round 1 (a third of them after locks and
        // pruning).
        let keep_full = switch && k > k1;
        let total: u64 = groups[..k1].iter().map(|g| g.len() as u64).sum();
        let total_sib: u64 = groups[k1..].iter().map(|g| g.len() as u64).sum();
        sc.base.prepare_batch(ss.len());
        if sc.sents.len() < ss.len() {
            sc.sents.resize_with(ss.len(), DynSent::default);
        }
        // Round 1: open every sentence, T₁ on every arc the dictionary leaves.
        for (i, &s) in ss.iter().enumerate() {
            let o = &mut sc.base.batch[i];
            self.open_sentence(tb, prep, s, o);
            o.todo.clone_from(&o.open);
            let d = &mut sc.sents[i];
            let n1 = o.n1();
            d.prev.clear();
            d.prev.resize(n1 * n1, 0.0);
            d.full.clear();
            d.full.resize(if keep_full { n1 * n1 } else { 0 }, 0.0);
            d.locked.clear();
            d.locked.resize(n1, false);
            d.gold = gold_heads(tb, s);
            d.running = true;
            d.rows.clear();
            d.labels.clear();
            d.lex_ids.clear();
            d.stats = DynStats { sentences: 1, ..DynStats::default() };
        }
        self.score_round(
            arc_w,
            keep_full,
            &mut sc.base.batch[..ss.len()],
            &mut sc.sents[..ss.len()],
            &[&splits[0]],
            groups[0].len(),
        );
        // The K₁th round is projective (He et al. §4.2), the rounds before it not.
        let first = if k1 == 1 { DecoderKind::Eisner } else { DecoderKind::Cle };
        let mut out: Vec<Option<Error>> = (0..ss.len()).map(|_| None).collect();
        for (i, &s) in ss.iter().enumerate() {
            let (o, d) = (&mut sc.base.batch[i], &mut sc.sents[i]);
            let heads = match sc.base.decode.first(first, &o.scores, o.n1()) {
                Ok(h) => Ok(h),
                // The dictionary may leave no tree (no word may attach to ROOT): open
                // every arc and score T₁ again.
                Err(Error::NoSpanningTree(_)) => {
                    self.open_pruned(tb, prep, s, false, o);
                    o.todo.clone_from(&o.open);
                    d.stats.evaluated = 0;
                    d.full.iter_mut().for_each(|v| *v = 0.0);
                    self.score_round(
                        arc_w,
                        keep_full,
                        std::slice::from_mut(o),
                        std::slice::from_mut(d),
                        &[&splits[0]],
                        groups[0].len(),
                    );
                    sc.base.decode.first(first, &o.scores, o.n1())
                }
                Err(e) => Err(e),
            };
            match heads {
                Ok(h) => d.heads = h,
                Err(e) => {
                    out[i] = Some(e);
                    d.running = false;
                    continue;
                }
            }
            let n1 = o.n1();
            d.alive.clear();
            d.alive.extend((0..n1).map(|m| {
                if m == 0 {
                    0
                } else {
                    o.scores[m * n1..(m + 1) * n1]
                        .iter()
                        .enumerate()
                        .filter(|&(h, v)| h != m && v.is_finite())
                        .count() as u32
                }
            }));
            d.stats.arcs = d.alive.iter().map(|&a| a as u64).sum();
            d.stats.full = d.stats.arcs * total;
            if k > k1 {
                d.stats.sib_full = score::count_sibling_parts(&o.scores, n1) * total_sib;
            }
            d.stats.rounds = 1;
            // (With one group nothing reads the arcs after round 1.)
            if let (Some(delta), true) = (tree, k > 1) {
                tree_prune(o, d, delta, &mut sc.mm);
            }
            // Modifiers with one head left are decided already.
            for m in 1..n1 {
                if d.alive[m] == 1 && !d.locked[m] {
                    let h = d.heads[m] as usize;
                    d.stats.propagated += 1;
                    lock(o, d, h, m, &mut sc.stack, &mut sc.desc);
                }
            }
            if k == 1 || d.locked[1..].iter().all(|&l| l) {
                d.running = false;
                d.stats.early += u64::from(k > 1);
            }
        }
        for next in 1..k1 {
            let mut any = false;
            for i in 0..ss.len() {
                if !sc.sents[i].running {
                    continue;
                }
                let added = decide_round(
                    &mut sc.base.batch[i],
                    None,
                    &mut sc.sents[i],
                    next,
                    k,
                    decider,
                    Some(lex),
                    prune,
                    record,
                    &mut sc.order,
                    &mut sc.psi,
                    &mut sc.stack,
                    &mut sc.desc,
                );
                if added == 0 {
                    sc.sents[i].running = false;
                    sc.sents[i].stats.early += 1;
                } else {
                    any = true;
                }
            }
            if !any {
                break;
            }
            let last = next == k1 - 1;
            if last && switch && k == k1 {
                // The projective round is the full model's (He et al. keep a model per
                // parser): on the arcs still open, the earlier groups again under its
                // weights (group by group, as the full model's sums were once kept: the
                // same sums; not counted as computed, the features being those of the
                // rounds before), then the last group — all in one scoring pass, the
                // arcs listed once.
                for (o, d) in sc.base.batch[..ss.len()].iter_mut().zip(&sc.sents[..ss.len()]) {
                    if d.running {
                        for (i, (&t, &op)) in o.todo.iter().zip(&o.open).enumerate() {
                            if t && op {
                                o.scores[i] = 0.0;
                            }
                        }
                    }
                }
                let all: Vec<&Split> = splits[..=next].iter().collect();
                self.score_round(
                    &self.arc_w,
                    false,
                    &mut sc.base.batch[..ss.len()],
                    &mut sc.sents[..ss.len()],
                    &all,
                    groups[next].len(),
                );
            } else {
                self.score_round(
                    arc_w,
                    keep_full,
                    &mut sc.base.batch[..ss.len()],
                    &mut sc.sents[..ss.len()],
                    &[&splits[next]],
                    groups[next].len(),
                );
            }
            for ((o, d), err) in sc.base.batch.iter().zip(sc.sents.iter_mut()).zip(out.iter_mut()) {
                if !d.running {
                    continue;
                }
                d.stats.rounds += 1;
                let kind = if last { DecoderKind::Eisner } else { DecoderKind::Cle };
                match sc.base.decode.first(kind, &o.scores, o.n1()) {
                    Ok(h) => d.heads = h,
                    // FAIL: no projective tree left (only possible in round K₁): the
                    // non-projective tree stays and the sentence is done.
                    Err(Error::NoSpanningTree(_)) => {
                        d.stats.fails += 1;
                        d.running = false;
                    }
                    Err(e) => {
                        *err = Some(e);
                        d.running = false;
                    }
                }
                if last && k == k1 {
                    d.running = false;
                }
            }
        }
        if k > k1 {
            for (i, &s) in ss.iter().enumerate() {
                if sc.sents[i].running && out[i].is_none() {
                    let r = self.sibling_rounds(tb, prep, s, i, switch, groups, k1, decider, lex, record, sc);
                    if let Err(e) = r {
                        out[i] = Some(e);
                    }
                }
            }
        }
        ss.iter()
            .enumerate()
            .map(|(i, &s)| {
                if let Some(e) = out[i].take() {
                    return Err(e);
                }
                let heads = std::mem::take(&mut sc.sents[i].heads);
                let n_lab = self.labelled_words(&heads) * self.lab.len() as u64;
                let (labels, used) = match label {
                    Some(stop) => self.label_stopped(tb, prep, s, &heads, stop, &mut sc.base),
                    None => (self.label(tb, prep, s, &heads, &mut sc.base), n_lab),
                };
                let d = &mut sc.sents[i];
                d.stats.lab_evaluated = used;
                d.stats.lab_full = n_lab;
                Ok((
                    SentenceParse { heads, labels, margins: Vec::new() },
                    d.stats,
                    std::mem::take(&mut d.rows),
                    std::mem::take(&mut d.labels),
                    std::mem::take(&mut d.lex_ids),
                ))
            })
            .collect()
    }

    /// The sibling rounds of sentence `s` (slot `i` of the batch) after round K₁ (He
    /// et al. §4.2): each round the policy locks or marks the unlocked arcs of the
    /// current tree, the next sibling group is added to the parts (h, m, s) of the marked
    /// modifiers that a tree can still use (arcs h → m and h → s left; nothing for a
    /// locked modifier, nothing recomputed), and Eisner2 decodes arc plus sibling scores.
    /// Before the first, the open arcs switch to the model's own arc sums (with
    /// `switch`: kept beside the rounds' sums while the groups were added).
    /// O(rounds · n³ + parts · |group|) for the parts scored.
    #[allow(clippy::too_many_arguments)]
    fn sibling_rounds(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        i: usize,
        switch: bool,
        groups: &[Vec<usize>],
        k1: usize,
        decider: Decider<'_>,
        lex: Lex<'_>,
        record: bool,
        sc: &mut DynScratch,
    ) -> Result<()> {
        let k = groups.len();
        let DynScratch { base, sents, order, psi, stack, desc, cur, parts, .. } = sc;
        let (o, d) = (&mut base.batch[i], &mut sents[i]);
        let n1 = o.n1();
        self.sib.prepare(&prep.sib, tb, s, &mut base.sib);
        base.sibs.clear();
        base.sibs.resize(n1 * n1 * n1, 0.0);
        cur.clone_from(&o.scores);
        let mut marked = Vec::with_capacity(n1);
        for (next, group) in groups.iter().enumerate().skip(k1) {
            let added = decide_round(
                o,
                Some(cur),
                d,
                next,
                k,
                decider,
                Some(lex),
                None,
                record,
                order,
                psi,
                stack,
                desc,
            );
            if added == 0 {
                d.stats.early += 1;
                break;
            }
            marked.clear();
            marked.extend((1..n1).filter(|&m| o.todo[m * n1..(m + 1) * n1].iter().any(|&t| t)));
            if next == k1 && switch {
                for (j, (&t, &op)) in o.todo.iter().zip(&o.open).enumerate() {
                    if t && op {
                        o.scores[j] = d.full[j];
                    }
                }
            }
            let n = score::add_sibling_parts(
                &self.sib,
                &self.sib_w,
                &base.sib,
                group,
                &o.scores,
                &marked,
                parts,
                &mut base.sibs,
            );
            d.stats.sib_evaluated += n * group.len() as u64;
            d.stats.rounds += 1;
            match base.decode.second(&o.scores, &base.sibs, n1) {
                Ok(h) => d.heads = h,
                // The current tree is projective and its arcs are never ruled out, so
                // Eisner2 finds a tree; should it not, the tree stays.
                Err(Error::NoSpanningTree(_)) => {
                    d.stats.fails += 1;
                    break;
                }
                Err(e) => return Err(e),
            }
            // The policy's scores of the marked modifiers' arcs: arc + best part. O(n²) each.
            for &m in &marked {
                for h in (0..n1).filter(|&h| h != m && o.scores[m * n1 + h].is_finite()) {
                    let base_i = (m * n1 + h) * n1;
                    let inner = if m > h { h..m } else { m + 1..h + 1 };
                    let best = inner
                        .filter(|&x| x == h || o.scores[x * n1 + h].is_finite())
                        .map(|x| base.sibs[base_i + x])
                        .fold(f64::NEG_INFINITY, f64::max);
                    cur[m * n1 + h] = o.scores[m * n1 + h] + best;
                }
            }
        }
        d.running = false;
        Ok(())
    }

    /// Adds the groups of `splits` (usually one), one after the other, to the arcs each
    /// running sentence marked in `todo`, all sentences in one scoring call.
    /// O(a · |groups|) for a arcs.
    /// With `dual`, the same features' scores under the model's own weights go to
    /// each sentence's `full` sums (second order: the sibling rounds switch to them).
    /// Counted as computed: `group_len` templates per arc (the last group's; the groups
    /// before it are recomputations).
    #[allow(clippy::too_many_arguments)]
    fn score_round(
        &self,
        arc_w: &QuantizedWeights,
        dual: bool,
        os: &mut [OpenSentence],
        ds: &mut [DynSent],
        splits: &[&Split],
        group_len: usize,
    ) {
        let mut items = Vec::with_capacity(os.len());
        let mut fulls = Vec::with_capacity(if dual { os.len() } else { 0 });
        for (o, d) in os.iter_mut().zip(ds.iter_mut()) {
            if !d.running {
                continue;
            }
            let n = o.todo.iter().zip(&o.open).filter(|&(&t, &op)| t && op).count();
            for (t, &op) in o.todo.iter_mut().zip(&o.open) {
                *t &= op;
            }
            d.stats.evaluated += (n * group_len) as u64;
            items.push(score::ToScore { sent: &o.arc, mask: Some(&o.todo), out: &mut o.scores });
            if dual {
                fulls.push(&mut d.full);
            }
        }
        let second = if dual { Some((&self.arc_w, fulls.as_mut_slice())) } else { None };
        score::add_arc_scores_groups(&self.arc, arc_w, second, &mut items, splits, None);
    }
}

/// One round of decisions on sentence `o`: each unlocked arc of the current tree, in
/// descending score order, is locked or marked for group `next`; with `prune` (first
/// order), a marked word's arcs more than `prune` below its best are ruled out first
/// (and a word left with one head is locked). Returns the number of modifiers marked.
/// The linear policy adds `lex`'s weights of the arc's group-1 features when it has
/// any; with `record`, those features' indices are kept too.
/// O(n log n + decisions · (n + |T₁|) + locks · n²).
#[allow(clippy::too_many_arguments)]
fn decide_round(
    o: &mut OpenSentence,
    cur: Option<&[f64]>,
    d: &mut DynSent,
    next: usize,
    k: usize,
    decider: Decider<'_>,
    lex: Option<Lex<'_>>,
    prune: Option<f64>,
    record: bool,
    order: &mut Vec<usize>,
    psi: &mut Vec<f32>,
    stack: &mut Vec<(usize, usize)>,
    desc: &mut Vec<usize>,
) -> usize {
    let n1 = o.n1();
    o.todo.clear();
    o.todo.resize(n1 * n1, false);
    order.clear();
    order.extend((1..n1).filter(|&m| !d.locked[m]));
    let score = |m: usize| cur.unwrap_or(&o.scores)[m * n1 + d.heads[m] as usize];
    order.sort_by(|&a, &b| score(b).total_cmp(&score(a)).then(a.cmp(&b)));
    let mut added = 0;
    for &m in order.iter() {
        if d.locked[m] {
            continue; // locked by propagation earlier in this round
        }
        let h = d.heads[m] as usize;
        let gold = d.gold.as_ref().map(|g| g[m] == h as i32);
        let keep = record && gold.is_some();
        // The lexical part: |T₁| hashes and table reads, only when used or recorded.
        let mut lex_sum = None;
        if let Some(l) = lex {
            let linear = matches!(decider, Decider::Linear { .. }) && !l.weights.is_empty();
            if linear || keep {
                let mut sum = 0f32;
                for &t in l.templates {
                    let i = lex_index(l.af, &o.arc, t, h, m);
                    if linear {
                        sum += l.weights[i as usize];
                    }
                    if keep {
                        d.lex_ids.push(i);
                    }
                }
                lex_sum = linear.then_some(sum);
            }
        }
        let lock_it = match decider {
            Decider::Expert => gold.unwrap_or(false),
            Decider::Linear { weights, threshold } => {
                policy_features(o, cur.unwrap_or(&o.scores), d, h, m, next, k, psi);
                let meta = weights.iter().zip(psi.iter()).map(|(w, x)| w * x).sum::<f32>();
                // Without lexical weights the sum is the meta part alone (old models: the same decisions).
                lex_sum.map_or(meta, |s| meta + s) > threshold
            }
        };
        if record {
            if let Some(g) = gold {
                if matches!(decider, Decider::Expert) {
                    policy_features(o, cur.unwrap_or(&o.scores), d, h, m, next, k, psi);
                }
                d.rows.extend_from_slice(psi);
                d.labels.push(u8::from(g));
            }
        }
        d.stats.decisions += 1;
        if lock_it {
            d.stats.locks += 1;
            lock(o, d, h, m, stack, desc);
        } else {
            if let Some(delta) = prune {
                let row = &o.scores[m * n1..(m + 1) * n1];
                let best = (0..n1).filter(|&g| g != m).map(|g| row[g]).fold(f64::NEG_INFINITY, f64::max);
                // Ruled-out arcs are -inf already; the tree arc stays (footnote 5).
                for g in (0..n1).filter(|&g| g != m && g != h) {
                    let v = o.scores[m * n1 + g];
                    if v.is_finite() && v < best - delta {
                        o.remove(m, g);
                        d.alive[m] -= 1;
                    }
                }
                if d.alive[m] == 1 {
                    d.stats.propagated += 1;
                    lock(o, d, h, m, stack, desc);
                    continue;
                }
            }
            added += 1;
            for g in 0..n1 {
                let i = m * n1 + g;
                if o.open[i] {
                    o.todo[i] = true;
                    d.prev[i] = cur.unwrap_or(&o.scores)[i];
                }
            }
        }
    }
    added
}

/// Tree-margin pruning ([`Dynfs::tree_margin`]): rules out every open arc whose best
/// projective tree (ROOT with one child) under the current scores is more than `delta`
/// below the best tree, never an arc of the current tree. A sentence with no projective
/// tree is left as it is. O(n³) (the max-marginals).
fn tree_prune(o: &mut OpenSentence, d: &mut DynSent, delta: f64, ws: &mut crate::decode::MaxMarginals) {
    let n1 = o.n1();
    let Ok(best) = ws.compute_within(&o.scores, n1, true, delta) else {
        return;
    };
    let mm = &ws.mm;
    for m in 1..n1 {
        let h = d.heads[m] as usize;
        for g in (0..n1).filter(|&g| g != m && g != h) {
            let i = m * n1 + g;
            if o.scores[i].is_finite() && best - mm[i] > delta {
                o.remove(m, g);
                d.alive[m] -= 1;
            }
        }
    }
}

/// Locks tree arc h → m and propagates: rules out m's other heads, arcs crossing
/// h → m, arcs that would close a cycle through the locked arcs and, for a ROOT arc,
/// the other ROOT arcs, never an arc of the current tree; a modifier left with one
/// head is locked in turn. O(n²) per lock (the crossing arcs).
fn lock(
    o: &mut OpenSentence,
    d: &mut DynSent,
    h: usize,
    m: usize,
    stack: &mut Vec<(usize, usize)>,
    desc: &mut Vec<usize>,
) {
    let n1 = o.n1();
    stack.clear();
    stack.push((h, m));
    while let Some((h, m)) = stack.pop() {
        if d.locked[m] {
            continue;
        }
        d.locked[m] = true;
        o.lock(m, h);
        d.alive[m] = 1;
        let mut rule_out = |o: &mut OpenSentence, d: &mut DynSent, hh: usize, mm: usize| {
            if mm == 0 || hh == mm || d.heads[mm] == hh as i32 || !o.scores[mm * n1 + hh].is_finite() {
                return;
            }
            o.remove(mm, hh);
            d.alive[mm] -= 1;
            if d.alive[mm] == 1 && !d.locked[mm] {
                d.stats.propagated += 1;
                stack.push((d.heads[mm] as usize, mm));
            }
        };
        // Arcs with one end strictly inside (a, b) and the other outside [a, b].
        let (a, b) = (h.min(m), h.max(m));
        for x in a + 1..b {
            for y in (0..a).chain(b + 1..n1) {
                rule_out(o, d, y, x);
                rule_out(o, d, x, y);
            }
        }
        // A cycle: an arc from m's locked subtree to the top of h's locked chain.
        let mut top = h;
        while top != 0 && d.locked[top] {
            top = d.heads[top] as usize;
        }
        if top != 0 {
            desc.clear();
            desc.push(m);
            let mut i = 0;
            while i < desc.len() {
                let x = desc[i];
                desc.extend((1..n1).filter(|&y| d.locked[y] && d.heads[y] == x as i32));
                i += 1;
            }
            for &x in desc.iter() {
                rule_out(o, d, x, top);
            }
        }
        if h == 0 {
            for mm in 1..n1 {
                if mm != m {
                    rule_out(o, d, 0, mm);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{CleWorkspace, EisnerWorkspace};
    use crate::util::Rng;

    /// A sentence of 1 to 12 words (n1 = words + ROOT) with every arc open (none into
    /// ROOT, no self-loop) and random scores in [0, 10).
    fn random_open(rng: &mut Rng) -> (usize, OpenSentence) {
        let n1 = 2 + (rng.next_u64() % 12) as usize;
        let mut o = OpenSentence::default();
        o.arc.n1 = n1;
        o.open = (0..n1 * n1).map(|i| i / n1 != 0 && i / n1 != i % n1).collect();
        o.scores = (0..n1 * n1)
            .map(|i| if o.open[i] { (rng.next_u64() % 1000) as f64 / 100.0 } else { 0.0 })
            .collect();
        (n1, o)
    }

    /// A sentence's DynFS state before any decision: tree `heads`, nothing locked, every
    /// word with all of its n1 − 1 heads alive.
    fn fresh(n1: usize, heads: &[i32]) -> DynSent {
        DynSent {
            prev: vec![0.0; n1 * n1],
            heads: heads.to_vec(),
            locked: vec![false; n1],
            alive: (0..n1).map(|m| if m == 0 { 0 } else { n1 as u32 - 1 }).collect(),
            ..DynSent::default()
        }
    }

    /// The margin features (3, 4, 13, 14 and the per-group copies) against the best other
    /// head still left, found by a sort: now and before the last group, each from its own
    /// scores, ruled-out heads ignored.
    #[test]
    fn policy_margins_are_to_the_best_other_head_left_now_and_before() {
        let mut rng = Rng::new(11);
        let mut out = Vec::new();
        let raw = |x: f64| (x.clamp(-20.0, 20.0) / 20.0) as f32;
        let mut rivals = 0;
        for trial in 0..300 {
            let (n1, mut o) = random_open(&mut rng);
            let m = 1 + (rng.next_u64() as usize) % (n1 - 1);
            let h = (0..n1).filter(|&g| g != m).nth((rng.next_u64() as usize) % (n1 - 1)).unwrap();
            // Rule out a few of m's other heads (-inf now; their earlier scores stay high).
            for g in (0..n1).filter(|&g| g != m && g != h) {
                if rng.next_u64().is_multiple_of(3) {
                    o.scores[m * n1 + g] = f64::NEG_INFINITY;
                }
            }
            let mut d = fresh(n1, &vec![0; n1]);
            d.prev = (0..n1 * n1).map(|_| (rng.next_u64() % 2000) as f64 / 100.0).collect();
            for g in (0..n1).filter(|&g| g != m && !o.scores[m * n1 + g].is_finite()) {
                d.prev[m * n1 + g] = 1e3;
            }
            let k = 3;
            policy_features(&o, &o.scores, &d, h, m, 1, k, &mut out);
            let best = |r: &[f64]| {
                let mut v: Vec<f64> = (0..n1)
                    .filter(|&g| g != h && g != m && o.scores[m * n1 + g].is_finite())
                    .map(|g| r[m * n1 + g])
                    .collect();
                v.sort_by(|a, b| b.total_cmp(a));
                v.first().copied()
            };
            let (s, sp) = (o.scores[m * n1 + h], d.prev[m * n1 + h]);
            match (best(&o.scores), best(&d.prev)) {
                (Some(r), Some(rp)) => {
                    rivals += 1;
                    assert_eq!(out[3], (sigmoid(s) - sigmoid(r)) as f32, "trial {trial}");
                    assert_eq!(out[4], raw(s - r), "trial {trial}");
                    assert_eq!(out[13], raw(sp - rp), "trial {trial}");
                    assert_eq!(out[14], if sp >= rp { 1.0 } else { 0.0 }, "trial {trial}");
                }
                _ => assert_eq!((out[3], out[4], out[13], out[14]), (1.0, 1.0, 1.0, 1.0), "trial {trial}"),
            }
            assert_eq!(out[1], sigmoid(s) as f32);
            assert_eq!((out[BASE_FEATURES + 1], out[BASE_FEATURES + k + 1]), (1.0, out[3]));
            assert_eq!(out[BASE_FEATURES + 2 * k + 1], out[4]);
        }
        assert!(rivals > 100, "{rivals}");
    }

    /// A round that adds every word with a prune margin rules out exactly the arcs more
    /// than the margin below their word's best, never a tree arc, and locks a word left
    /// with one head; without a margin it rules out nothing.
    #[test]
    #[allow(clippy::needless_range_loop)] // scores indexed by word
    fn prune_margin_rules_out_exactly_the_arcs_far_below_the_best() {
        let mut rng = Rng::new(5);
        let mut cle = CleWorkspace::default();
        let (mut order, mut psi, mut stack, mut desc) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let never = [0.0f32; BASE_FEATURES + 3 * 2];
        let decider = Decider::Linear { weights: &never, threshold: 1.0 };
        let (mut pruned, mut locked, mut exact) = (0, 0, 0);
        for trial in 0..300 {
            let (n1, o) = random_open(&mut rng);
            let delta = (rng.next_u64() % 400) as f64 / 100.0;
            let before = o.scores.clone();
            let heads = cle.decode(&o.scores, n1, true).unwrap();
            for prune in [None, Some(delta)] {
                let mut o2 = OpenSentence::default();
                o2.open.clone_from(&o.open);
                o2.scores.clone_from(&before);
                o2.arc.n1 = n1;
                let mut d = fresh(n1, &heads);
                let added = decide_round(
                    &mut o2, None, &mut d, 1, 2, decider, None, prune, false, &mut order, &mut psi,
                    &mut stack, &mut desc,
                );
                assert_eq!(d.stats.locks, 0, "trial {trial}");
                if prune.is_none() {
                    assert_eq!(o2.scores, before, "trial {trial}: no margin, nothing ruled out");
                    assert_eq!(added, n1 - 1);
                    continue;
                }
                // A word left with one head is locked, and a lock rules out more (arcs
                // crossing it, ROOT arcs; later words' best may drop): exact only when
                // nothing was locked.
                let any_lock = d.locked[1..].iter().any(|&l| l);
                exact += usize::from(!any_lock);
                for m in 1..n1 {
                    let row = &before[m * n1..(m + 1) * n1];
                    let best = (0..n1).filter(|&g| g != m).map(|g| row[g]).fold(f64::NEG_INFINITY, f64::max);
                    let left = (0..n1).filter(|&g| g != m && o2.scores[m * n1 + g].is_finite()).count();
                    assert_eq!(left as u32, d.alive[m], "trial {trial}: alive count of {m}");
                    for g in (0..n1).filter(|&g| g != m) {
                        let keep = g == heads[m] as usize || row[g] >= best - delta;
                        let kept = o2.scores[m * n1 + g].is_finite();
                        assert!(kept || !keep || any_lock, "trial {trial}: {g} -> {m} ruled out");
                        assert!(keep || !kept || any_lock, "trial {trial}: {g} -> {m} kept");
                        pruned += usize::from(!keep);
                    }
                    assert!(
                        o2.scores[m * n1 + heads[m] as usize].is_finite(),
                        "trial {trial}: tree arc of {m}"
                    );
                    assert_eq!(d.locked[m], left == 1, "trial {trial}: {m} with {left} heads left");
                    locked += usize::from(d.locked[m]);
                }
                // Added words may be locked later in the round (another lock ruled out
                // their other heads).
                assert!(added >= (1..n1).filter(|&m| !d.locked[m]).count(), "trial {trial}");
            }
        }
        assert!(pruned > 0 && locked > 0 && exact > 50, "{pruned} pruned, {locked} locked, {exact} exact");
    }

    /// Tree-margin pruning against every projective tree of small random sentences (some
    /// arcs ruled out already): an arc stays exactly when it is the current tree's or the
    /// best single-rooted projective tree through it is within the margin of the best
    /// tree; the alive counts follow.
    #[test]
    fn tree_margin_rules_out_exactly_the_arcs_of_no_good_tree() {
        use crate::decode::brute::all_trees;
        let mut rng = Rng::new(5);
        let mut cle = CleWorkspace::default();
        let mut ws = crate::decode::MaxMarginals::default();
        let (mut pruned, mut kept_off_tree) = (0, 0);
        for trial in 0..200 {
            let (n1, mut o) = random_open(&mut rng);
            if n1 > 8 {
                continue; // (brute force)
            }
            for i in 0..n1 * n1 {
                if o.open[i] && rng.next_u64().is_multiple_of(5) {
                    o.remove(i / n1, i % n1);
                }
            }
            let Ok(heads) = cle.decode(&o.scores, n1, true) else { continue };
            let mut d = fresh(n1, &heads);
            for m in 1..n1 {
                d.alive[m] = (0..n1).filter(|&g| g != m && o.scores[m * n1 + g].is_finite()).count() as u32;
            }
            let before = o.scores.clone();
            let delta = (rng.next_u64() % 400) as f64 / 100.0;
            tree_prune(&mut o, &mut d, delta, &mut ws);
            let trees: Vec<(Vec<i32>, f64)> = all_trees(n1, true, true)
                .into_iter()
                .map(|h| {
                    let s = (1..n1).map(|m| before[m * n1 + h[m] as usize]).sum::<f64>();
                    (h, s)
                })
                .filter(|(_, s)| s.is_finite())
                .collect();
            if trees.is_empty() {
                assert_eq!(o.scores, before, "trial {trial}: no projective tree, nothing ruled out");
                continue;
            }
            let best = trees.iter().map(|t| t.1).fold(f64::NEG_INFINITY, f64::max);
            for m in 1..n1 {
                for g in (0..n1).filter(|&g| g != m && before[m * n1 + g].is_finite()) {
                    let through = trees
                        .iter()
                        .filter(|(h, _)| h[m] == g as i32)
                        .map(|t| t.1)
                        .fold(f64::NEG_INFINITY, f64::max);
                    let keep = g == heads[m] as usize || through >= best - delta - 1e-9;
                    let kept = o.scores[m * n1 + g].is_finite();
                    assert_eq!(kept, keep, "trial {trial}: {g} -> {m} (delta {delta})");
                    pruned += usize::from(!kept);
                    kept_off_tree += usize::from(kept && g != heads[m] as usize);
                }
                let left = (0..n1).filter(|&g| g != m && o.scores[m * n1 + g].is_finite()).count();
                assert_eq!(left as u32, d.alive[m], "trial {trial}: alive count of {m}");
            }
        }
        assert!(pruned > 50 && kept_off_tree > 50, "{pruned} pruned, {kept_off_tree} kept off the tree");
    }

    /// Locks random arcs of the CLE tree of random scores, one by one: the tree's arcs
    /// stay, the locked arcs are the only heads of their words, no arc left crosses a
    /// locked arc or closes a cycle with locked arcs (outside the tree), at most one
    /// ROOT arc is left once a ROOT arc is locked, and CLE still finds a tree that
    /// keeps every locked arc; so do Eisner and Eisner2 when Eisner finds one.
    #[test]
    #[allow(clippy::needless_range_loop)] // heads, locks and counts indexed by word
    fn locks_rule_out_exactly_the_conflicting_arcs() {
        let mut rng = Rng::new(3);
        let (mut cle, mut eisner) = (CleWorkspace::default(), EisnerWorkspace::default());
        let mut eisner2 = crate::decode::Eisner2Workspace::default();
        let (mut stack, mut desc) = (Vec::new(), Vec::new());
        for trial in 0..300 {
            let (n1, mut o) = random_open(&mut rng);
            let heads = cle.decode(&o.scores, n1, true).unwrap();
            let mut d = fresh(n1, &heads);
            for m in 1..n1 {
                if rng.next_u64().is_multiple_of(3) && !d.locked[m] {
                    lock(&mut o, &mut d, heads[m] as usize, m, &mut stack, &mut desc);
                }
            }
            let alive = |h: usize, m: usize| o.scores[m * n1 + h].is_finite();
            for m in 1..n1 {
                assert!(alive(heads[m] as usize, m), "trial {trial}: tree arc into {m} removed");
                let left = (0..n1).filter(|&h| h != m && alive(h, m)).count();
                assert_eq!(left as u32, d.alive[m], "trial {trial}: alive count of {m}");
                if d.locked[m] {
                    assert_eq!(left, 1, "trial {trial}: locked {m} has other heads");
                }
            }
            for lm in (1..n1).filter(|&m| d.locked[m]) {
                let lh = heads[lm] as usize;
                let (a, b) = (lh.min(lm), lh.max(lm));
                for m in 1..n1 {
                    for h in (0..n1).filter(|&h| h != m && alive(h, m) && heads[m] != h as i32) {
                        let inside = |x: usize| a < x && x < b;
                        let outside = |x: usize| x < a || x > b;
                        assert!(
                            !(inside(h) && outside(m) || inside(m) && outside(h)),
                            "trial {trial}: {h}->{m} crosses locked {lh}->{lm}"
                        );
                        // Following locked heads up from h must not reach m.
                        let mut x = h;
                        while x != 0 && d.locked[x] {
                            x = heads[x] as usize;
                            assert_ne!(x, m, "trial {trial}: {h}->{m} closes a cycle");
                        }
                        if lh == 0 && h == 0 {
                            assert_eq!(m, lm, "trial {trial}: a second ROOT arc is left");
                        }
                    }
                }
            }
            let again = cle.decode(&o.scores, n1, true).unwrap();
            let keeps = |t: &[i32]| (1..n1).filter(|&m| d.locked[m]).all(|m| t[m] == heads[m]);
            assert!(keeps(&again), "trial {trial}");
            if let Ok(p) = eisner.decode(&o.scores, n1, true) {
                assert!(keeps(&p), "trial {trial}");
                // The sibling rounds' decoder too: a tree of arcs left only, the locked
                // ones among them (Eisner2 itself is checked against brute force).
                let sib: Vec<f64> = (0..n1 * n1 * n1).map(|_| (rng.next_u64() % 100) as f64 / 10.0).collect();
                let p2 = eisner2.decode(&o.scores, &sib, n1, true).unwrap();
                assert!(keeps(&p2), "trial {trial}: eisner2 {p2:?}");
                assert!((1..n1).all(|m| alive(p2[m] as usize, m)), "trial {trial}: eisner2 {p2:?}");
            }
        }
    }
}
