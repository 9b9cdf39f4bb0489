//! A greedy left-to-right morphological tagger: UPOS, XPOS, FEATS and LEMMA.
//!
//! One averaged-perceptron classifier per column (Collins 2002), over token templates
//! (the `token` family of the template language: attributes of the words at i±k and the
//! columns already predicted). FEATS is predicted whole, as one class (UDPipe 1, Straka et
//! al. 2016); LEMMA as an edit-script class ([`lemma`], Chrupała 2008). Each decision is
//! restricted to the classes the tag dictionary allows ([`lexicon`]); a word with one
//! candidate costs no feature at all. Strubell et al. 2015 (ACL; `../shared/papers/003_…`)
//! test their prefix-margin inference on exactly such a tagger (their Table 1); the
//! templates are ordered and each column keeps its own template set, so that a later
//! model can walk them in order.
//!
//! Weights: a (feature, class) pair is hashed into its template's block (width 1), so a
//! decision reads templates × candidates weights and the table holds only pairs that
//! training met (sized by counting them). Training follows the tagger's own predictions
//! for the columns to the left (as at tagging time), shuffles sentences each epoch with
//! the one seeded [`Rng`], and is deterministic. A tagger may run a cheap right-to-left
//! UPOS pass first, whose tags its templates read as `bupos` ([`backward`]).

pub mod backward;
pub mod clusters;
pub mod features;
pub mod lemma;
pub mod lexicon;
pub mod prefix_margin;

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use crate::io::model::{
    embedded_tagger, filled_columns, load_model, save_model, wrong_kind, Model, ModelFile,
};
use crate::templates::attrs::NONE_VALUE;
use crate::templates::hash::{combine, hash_str};
use crate::templates::{Family, TemplateSet, MAX_ATOMS_BOUND};
use crate::transition::local::StoredWeights;
use crate::transition::prefix_margin::{MarginPresets, PrefixStep};
use crate::treebank::Words;
use crate::util::prefetch::prefetch;
use crate::util::{map_chunks, Rng};
use crate::weights::{rows_for, QuantizedWeights, RowAt, WeightTable, Weights};
use crate::{Error, Result, Treebank};
use clusters::{Clusters, StoredClusters};
use features::{FormRows, History, Slots, TokenFeatures, COLUMN_NAMES, FEATS, LEMMA, N_COLUMNS, UPOS, XPOS};
use lemma::Script;
use lexicon::{FeatsByXpos, FormEntry, KnownLemmas, Lexicon, Seen, TagRules, XposSiblings};
use prefix_margin::{PrefixScratch, TagCounts};

/// Model-file kind of a tagger.
pub const MODEL_KIND: &str = "tagger";

/// Options of [`TaggerTrainer::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct TaggerOptions {
    pub seed: u64,
    /// A form and UPOS seen together this many times are known to the tag dictionary
    /// (their XPOS, FEATS and lemma scripts are those seen).
    pub min_known: u32,
    /// A form seen this many times is known to the tag dictionary for UPOS (it takes
    /// only the UPOS tags it was seen with).
    pub upos_min_known: u32,
    /// Upper bound on a weight block's rows (2^bits).
    pub max_bits: u32,
    /// Train every prefix of each column's templates (in set order) with this margin
    /// (Strubell et al. 2015; see [`prefix_margin`]); None: ordinary training.
    pub prefix_margin: Option<f32>,
    /// With `prefix_margin`: ℓ2 strength of the AdaGrad steps, per word (0: none).
    pub prefix_l2: f32,
    /// With `prefix_margin`: averaged perceptron steps instead of AdaGrad (`prefix_l2`
    /// then unused; as the parser's, [`PrefixStep`]).
    pub prefix_perceptron: bool,
    /// With `prefix_margin`: also the full model's update of the full sum on every
    /// decision, of this size (0: none; [`PrefixStep`]).
    pub prefix_full: f32,
    /// Line-local hashing (see [`ColumnModel::key`]); false: the layout of taggers
    /// before it (every (feature, class) pair anywhere in its block).
    pub line_hashing: bool,
    /// Templates of a backward (right-to-left) UPOS pass run before the left-to-right
    /// one, whose templates read its tags as `bupos` ([`backward`]); None: no such pass.
    pub backward: Option<TemplateSet>,
    /// [`CaseRules::cased`].
    pub cased: bool,
    /// The word clusters `cluster` templates read ([`clusters`]); None: no table (and no
    /// such template).
    pub clusters: Option<Arc<Clusters>>,
    /// FEATS candidates widened by the values productive with the predicted XPOS, seen with
    /// it for this many distinct forms ([`lexicon::FeatsByXpos`]); None: the dictionary's alone.
    pub feats_by_xpos: Option<u32>,
    /// The lemma back-off keeps the scripts that make a known lemma ([`lexicon::KnownLemmas`]).
    pub known_lemmas: bool,
    /// XPOS candidates widened by their siblings, values sharing this many forms
    /// ([`lexicon::XposSiblings`]); None: the dictionary's alone.
    pub xpos_siblings: Option<u32>,
    /// The backward pass predicts XPOS rather than UPOS where the treebank fills XPOS
    /// ([`backward`]): `bupos` then holds its XPOS tags.
    pub backward_xpos: bool,
}

impl Default for TaggerOptions {
    fn default() -> Self {
        TaggerOptions {
            seed: 1,
            min_known: 2,
            upos_min_known: 2,
            max_bits: 20,
            prefix_margin: None,
            prefix_l2: 0.0,
            prefix_perceptron: false,
            prefix_full: 0.0,
            line_hashing: true,
            backward: None,
            cased: false,
            clusters: None,
            feats_by_xpos: None,
            known_lemmas: false,
            xpos_siblings: None,
            backward_xpos: false,
        }
    }
}

/// How a form the dictionary knows only lower-cased is tagged, in taggers that have the
/// rule (a model with it is its own variant, [`StoredTaggerCased`]); the default is the
/// earlier taggers' way: as its lower-cased form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CaseRules {
    /// Such a form keeps its case: its UPOS is open (every tag; its `ambig` is still the
    /// lower-cased entry's), and when the lower-cased entry lacks the predicted UPOS its
    /// lemma scripts (the back-off's) apply to the form as written. A capitalised
    /// "Mercury" may be a PROPN, and then is not the noun "mercury".
    pub cased: bool,
}

impl CaseRules {
    /// The entry that restricts a word's UPOS (None: every tag).
    fn upos_entry<'a>(&self, entry: Option<(&'a FormEntry, bool)>) -> Option<&'a FormEntry> {
        match entry {
            Some((_, true)) if self.cased => None,
            e => e.map(|e| e.0),
        }
    }
}

/// One column's classifier: its classes, their hash salts, its templates' weights.
#[derive(Debug, Clone)]
struct ColumnModel<W> {
    column: usize,
    set: TemplateSet,
    feats: TokenFeatures,
    classes: Vec<String>,
    salts: Vec<u64>,
    /// Per class: the history slots deciding it sets, and their values (not LEMMA,
    /// whose value is the lemma the script makes of the form).
    history: Vec<Vec<(usize, u64)>>,
    /// Parsed scripts (LEMMA only).
    scripts: Vec<Script>,
    /// Line-local hashing ([`ColumnModel::key`]).
    lines: bool,
    /// Every block of the final 8-bit weights (read from a file or quantized after
    /// training) holds whole lines of 64 rows, as trained blocks do, so a line can be read
    /// from the table in one piece ([`ColumnModel::best_in_lines`]); false before.
    whole_lines: bool,
    weights: W,
}

/// Whether every block of `weights` holds whole lines of line-local hashing.
fn whole_lines(weights: &impl WeightTable) -> bool {
    weights.layout().row_counts().iter().all(|&r| r > LINE_MASK as usize)
}

impl<W> ColumnModel<W> {
    /// Column `column` over `set` (its attributes added to `slots`) with `classes` and
    /// `weights`; its history values are filled by [`fill_history`] once every column's
    /// slots are known.
    fn new(
        column: usize,
        set: TemplateSet,
        classes: Vec<String>,
        weights: W,
        lines: bool,
        slots: &mut Slots,
    ) -> Result<Self> {
        if classes.is_empty() {
            return Err(Error::InvalidArgument(format!("{} has no classes", COLUMN_NAMES[column])));
        }
        let scripts = if column == LEMMA {
            classes
                .iter()
                .map(|k| {
                    Script::from_text(k)
                        .ok_or_else(|| Error::InvalidArgument(format!("bad lemma script {k:?}")))
                })
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        Ok(ColumnModel {
            column,
            feats: TokenFeatures::compile(&set, slots)?,
            set,
            salts: classes.iter().map(|k| salt(column, k)).collect(),
            classes,
            history: Vec::new(),
            scripts,
            lines,
            whole_lines: false,
            weights,
        })
    }

    /// The hash that places the weight of (feature `f`, class `c`) in its template's
    /// block. With line-local hashing the row's bits above the low six come from `f`
    /// alone (a hash already) and the low six from (f, c): every class of a feature
    /// lies in one line of 64 rows, so a decision reads one line (a cache line of 8-bit
    /// weights) per template whatever its number of candidates, instead of one
    /// scattered row per candidate and template. Classes of one feature may share a
    /// row (as any two pairs may under hashing), but which ones changes from feature
    /// to feature: with at most 64 classes (UPOS, most XPOS sets) the row is the class
    /// plus an offset taken from f, so the classes of a feature never share one and a
    /// frequent class of the features sharing a line does not stack on one row (the
    /// class alone as the row cost 0.3 of UPOS on en_ewt test); with more, the top six
    /// bits of f times an odd multiplier of the class (multiply-shift hashing: two
    /// classes share a row for about 1 feature in 32). (`((f ^ salt) · K) >> 58` cost
    /// 0.06 of mean dev accuracy: its collisions depend on the pair of classes.)
    #[inline(always)]
    fn key(&self, f: u64, c: u32) -> u64 {
        let s = self.salts[c as usize];
        if !self.lines {
            combine(f, s)
        } else {
            (f & !LINE_MASK) | self.row_in_line(f, c)
        }
    }

    /// The row of (feature `f`, class `c`) within f's line under line-local hashing
    /// ([`Self::key`]).
    #[inline(always)]
    fn row_in_line(&self, f: u64, c: u32) -> u64 {
        if self.classes.len() <= LINE_MASK as usize + 1 {
            (c as u64 + (f >> 58)) & LINE_MASK
        } else {
            f.wrapping_mul(self.salts[c as usize] | 1) >> 58
        }
    }
}

impl ColumnModel<Weights> {
    /// The column with its averaged weights in 8 bits, as a trained tagger holds them.
    fn quantized(&self) -> ColumnModel<QuantizedWeights> {
        let weights = QuantizedWeights::quantize(&self.weights.averaged());
        ColumnModel {
            column: self.column,
            set: self.set.clone(),
            feats: self.feats.clone(),
            classes: self.classes.clone(),
            salts: self.salts.clone(),
            history: self.history.clone(),
            scripts: self.scripts.clone(),
            lines: self.lines,
            whole_lines: whole_lines(&weights),
            weights,
        }
    }
}

/// The row bits that pick a weight within a line of line-local hashing (64 rows).
const LINE_MASK: u64 = 63;

/// The backward pass (if any) runs right to left, and templates read `bupos` only when
/// there is one.
fn check_backward<W, V>(columns: &[ColumnModel<W>], backward: Option<&ColumnModel<V>>) -> Result<()> {
    match backward {
        Some(b) if b.set.is_empty() => {
            Err(Error::InvalidArgument("no templates for the backward pass".into()))
        }
        Some(b) if !b.feats.runs_backward() => Err(Error::InvalidArgument(
            "the backward pass reads only the form, ambig and bupos to the right (i+1, i+2, ...)".into(),
        )),
        Some(b)
            if !matches!(b.column, UPOS | XPOS)
                || columns.iter().find(|c| c.column == b.column).is_none_or(|c| c.classes != b.classes) =>
        {
            Err(Error::InvalidArgument("the backward pass must predict the UPOS or the XPOS classes".into()))
        }
        None if columns.iter().any(|cm| cm.feats.reads_back()) => Err(Error::InvalidArgument(
            "templates read bupos, the tags of a backward pass, but there is none".into(),
        )),
        _ => Ok(()),
    }
}

/// Templates read clusters exactly when there is a table: none without one (no value to
/// read), and no table that nothing reads (it would only weigh on the model file).
fn check_clusters(slots: &Slots, clusters: Option<&Clusters>) -> Result<()> {
    match (slots.reads_clusters(), clusters.is_some()) {
        (true, false) => Err(Error::InvalidArgument(
            "templates read word clusters (cluster(i), cluster:K(i)), but there is no cluster table: \
             give a Brown paths file (Tagger(clusters=PATH), depfs train --parser tagger --clusters FILE)"
                .into(),
        )),
        (false, true) => Err(Error::InvalidArgument(
            "a cluster table, but no template reads it: give templates with cluster(i) or \
             cluster:K(i) (the default with clusters: depfs.tagger.CLUSTER_SETS)"
                .into(),
        )),
        _ => Ok(()),
    }
}

/// The history values each class of every column (but LEMMA) sets, and where every
/// template (the backward pass's too) reads the sentence table, once `slots` holds every
/// attribute.
fn fill_history<W, V>(columns: &mut [ColumnModel<W>], backward: Option<&mut ColumnModel<V>>, slots: &Slots) {
    for cm in columns.iter_mut() {
        if cm.column != LEMMA {
            cm.history = cm.classes.iter().map(|k| slots.history_values(cm.column, k)).collect();
        }
        cm.feats.place(slots);
    }
    if let Some(b) = backward {
        b.feats.place(slots);
    }
}

fn salt(column: usize, class: &str) -> u64 {
    combine(hash_str(COLUMN_NAMES[column]), hash_str(class))
}

impl<W: WeightTable> ColumnModel<W> {
    /// The best-scoring candidate (first on ties). Every candidate's rows are located
    /// and prefetched before any is summed: a decision reads candidates × templates
    /// weights scattered over the table, most of them cache misses, and asking for all
    /// at once keeps many in flight. O(candidates · templates).
    fn best(&self, feats: &[u64], cands: &[u32], d: &mut Decision) -> u32 {
        if self.lines {
            return self.best_in_lines(feats, cands, d);
        }
        let rows = &mut d.rows;
        rows.clear();
        for &c in cands {
            self.weights.layout().locate_each(feats.iter().map(|&f| self.key(f, c)), rows);
        }
        self.weights.prefetch_rows(rows);
        let mut best = (cands[0], f32::NEG_INFINITY);
        for (&c, r) in cands.iter().zip(rows.chunks_exact(feats.len().max(1))) {
            let mut score = [0f32];
            self.weights.add_located_rows(r, &mut score);
            if score[0] > best.1 {
                best = (c, score[0]);
            }
        }
        best.0
    }

    /// [`Self::best`] under line-local hashing: each template's line (which may straddle
    /// two cache lines) is located and prefetched, then each candidate's weights are
    /// added over the templates in their order (many candidates of at most 64 classes:
    /// every class at once, [`Self::best_of_all`]). O(templates · candidates) adds,
    /// O(templates) cache misses.
    fn best_in_lines(&self, feats: &[u64], cands: &[u32], d: &mut Decision) -> u32 {
        let Decision { rows, scores } = d;
        let layout = self.weights.layout();
        match self.weights.quantized_parts() {
            // A tagging model: each line is read straight from the table (the sums are
            // those of `get`: same order and values).
            Some((q, scales)) if self.whole_lines => {
                rows.clear();
                rows.resize(feats.len(), RowAt::default());
                for (t, (r, &f)) in rows.iter_mut().zip(feats).enumerate() {
                    let start = layout.row_start(t, f & !LINE_MASK);
                    prefetch(q, start);
                    prefetch(q, start + LINE_MASK as usize);
                    *r = RowAt { start, template: t };
                }
                let n_classes = self.classes.len();
                let few = n_classes <= LINE_MASK as usize + 1;
                if few && 4 * cands.len() >= n_classes + 8 {
                    return self.best_of_all(feats, cands, rows, q, scales, scores);
                }
                // Candidate by candidate, its sum over the templates in their order (as
                // `get`'s): few candidates read few weights of each line. The best is kept
                // on the way (the first on ties, as below).
                let mut best = (cands[0], f32::NAN);
                for (k, &c) in cands.iter().enumerate() {
                    let mut sum = 0f32;
                    if few {
                        for ((r, &f), &scale) in rows.iter().zip(feats).zip(scales) {
                            sum += scale * q[r.start + ((c as u64 + (f >> 58)) & LINE_MASK) as usize] as f32;
                        }
                    } else {
                        let m = self.salts[c as usize] | 1;
                        for ((r, &f), &scale) in rows.iter().zip(feats).zip(scales) {
                            sum += scale * q[r.start + (f.wrapping_mul(m) >> 58) as usize] as f32;
                        }
                    }
                    if k == 0 || sum > best.1 {
                        best = (c, sum);
                    }
                }
                best.0
            }
            _ => {
                scores.clear();
                scores.resize(cands.len(), 0.0);
                rows.clear();
                layout.locate_each(feats.iter().map(|&f| f & !LINE_MASK), rows);
                for r in rows.iter() {
                    self.weights.prefetch_rows(&[*r, RowAt { start: r.start + LINE_MASK as usize, ..*r }]);
                }
                for (t, &f) in feats.iter().enumerate() {
                    for (s, &c) in scores.iter_mut().zip(cands) {
                        *s += self.weights.get(t, self.key(f, c));
                    }
                }
                let mut best = 0;
                for (k, &s) in scores.iter().enumerate() {
                    if s > scores[best] {
                        best = k;
                    }
                }
                cands[best]
            }
        }
    }
}

impl<W> ColumnModel<W> {
    /// [`ColumnModel::best_in_lines`] for many candidates of at most 64 classes: every
    /// class is scored, from the two runs of each line that hold the classes in order
    /// (class k at row (k + the line's offset) mod 64), in loops the compiler vectorises;
    /// each class's sum is the same (same order, same values). `rows`: the lines located.
    /// O(templates · classes) adds.
    fn best_of_all(
        &self,
        feats: &[u64],
        cands: &[u32],
        rows: &[RowAt],
        q: &[i8],
        scales: &[f32],
        scores: &mut Vec<f32>,
    ) -> u32 {
        let n = self.classes.len();
        scores.clear();
        scores.resize(n, 0.0);
        for ((r, &f), &scale) in rows.iter().zip(feats).zip(scales) {
            let line = &q[r.start..r.start + LINE_MASK as usize + 1];
            let offset = (f >> 58) as usize;
            let (head, tail) = scores.split_at_mut(n.min(line.len() - offset));
            for (s, &w) in head.iter_mut().zip(&line[offset..]) {
                *s += scale * w as f32;
            }
            for (s, &w) in tail.iter_mut().zip(line) {
                *s += scale * w as f32;
            }
        }
        let mut best = cands[0];
        for &c in cands {
            if scores[c as usize] > scores[best as usize] {
                best = c;
            }
        }
        best
    }
}

/// A word being tagged: its form and dictionary entry (and whether the entry was found
/// for the lower-cased form, whose scripts then apply to the lower-cased form).
#[derive(Clone, Copy)]
struct Word<'a> {
    form: &'a str,
    entry: Option<(&'a FormEntry, bool)>,
    /// Its form's id in the treebank being tagged (None in training): keys the LEMMA
    /// candidates kept in [`Scratch`].
    fid: Option<u32>,
}

/// What training and tagging share: the columns, the dictionary, the slot layout.
#[derive(Debug, Clone)]
struct Core<W> {
    columns: Vec<ColumnModel<W>>,
    /// The backward UPOS pass whose tags the columns read as `bupos` (None: no pass).
    backward: Option<ColumnModel<QuantizedWeights>>,
    lexicon: Lexicon,
    slots: Slots,
    case: CaseRules,
    /// The word clusters of `cluster` templates (None: none read).
    clusters: Option<Arc<Clusters>>,
    /// Candidate rules beyond the dictionary's (none in taggers saved before them).
    rules: TagRules,
    /// Whether this core is being trained (the trainer's) rather than tagging.
    learning: bool,
}

/// Buffers of one decision ([`ColumnModel::best`]), reused.
#[derive(Default)]
struct Decision {
    /// Located weight rows (under line-local hashing: each template's line).
    rows: Vec<RowAt>,
    /// The candidates' scores (or every class's).
    scores: Vec<f32>,
}

/// Per-sentence buffers.
#[derive(Default)]
struct Scratch {
    hist: History,
    feats: Vec<u64>,
    dec: Decision,
    /// Candidates built for a decision ([`Core::candidate_list`]).
    all: Vec<u32>,
    /// A copy of a decision's candidates, in training (the column then changes).
    cands: Vec<u32>,
    prefix: PrefixScratch,
    /// Each form's candidates per column model (and backward pass), given what they
    /// depend on: the dictionary entry, the lemma back-off's string work and the rules'
    /// widening are met once per form, not per word, and a sentence reads its words'
    /// lists from one store rather than from cold dictionary entries.
    cands_of_form: FormCache,
}

/// Slots of [`FormCache`] per form: one per column model, then the backward pass.
const FORM_SLOTS: usize = N_COLUMNS + 1;

/// Candidate lists kept per form id of the treebank being tagged and slot, each with a
/// key (what else it depends on, e.g. the UPOS it was made for): one flat store, so that
/// keeping a list allocates nothing.
#[derive(Default)]
struct FormCache {
    /// By `fid · FORM_SLOTS + slot`: (key, start in `store`, length); key `u64::MAX`: none.
    at: Vec<(u64, u32, u32)>,
    store: Vec<u32>,
}

impl FormCache {
    /// An empty cache for `n` forms. O(n).
    fn for_forms(n: usize) -> FormCache {
        FormCache { at: vec![(u64::MAX, 0, 0); n * FORM_SLOTS], store: Vec::new() }
    }

    /// The list of form `fid` in `slot` made for `key`, else `make`'s, kept (replacing
    /// the slot's list for another key: in its place when it fits, so a form whose tags
    /// alternate does not grow the store). O(1) when kept, O(list) to keep.
    fn get<'s>(&'s mut self, fid: u32, slot: usize, key: u64, make: impl FnOnce() -> &'s [u32]) -> &'s [u32] {
        let at = fid as usize * FORM_SLOTS + slot;
        if self.at.len() <= at {
            self.at.resize((fid as usize + 1) * FORM_SLOTS, (u64::MAX, 0, 0));
        }
        let (k, start, len) = self.at[at];
        if k == key {
            return &self.store[start as usize..(start + len) as usize];
        }
        let list = make();
        let start = if k != u64::MAX && list.len() <= len as usize {
            let start = start as usize;
            self.store[start..start + list.len()].copy_from_slice(list);
            start
        } else {
            if self.store.len() + list.len() > u32::MAX as usize {
                // Offsets are u32: start afresh (every list is made again when met).
                self.store.clear();
                self.at.fill((u64::MAX, 0, 0));
            }
            self.store.extend_from_slice(list);
            self.store.len() - list.len()
        };
        self.at[at] = (key, start as u32, list.len() as u32);
        &self.store[start..start + list.len()]
    }
}

/// How a column decision adds its templates.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// Every template (ordinary inference).
    All,
    /// The prefix-margin rule at this margin (Algorithm 1).
    Margin(f32),
}

impl<W> Core<W> {
    /// The word as its LEMMA decision sees it given its predicted UPOS: without its
    /// lower-cased entry when [`CaseRules::cased`] applies (the back-off's scripts then
    /// apply to the form as written).
    fn lemma_word<'a>(&self, w: &Word<'a>, upos: u32) -> Word<'a> {
        match w.entry {
            Some((e, true)) if self.case.cased && !e.by_upos.iter().any(|(u, _)| *u == upos) => {
                Word { entry: None, ..*w }
            }
            _ => *w,
        }
    }
}

impl<W: WeightTable> Core<W> {
    /// Candidates of column model `m` for `w` given its decided UPOS and XPOS (None: no
    /// XPOS column), every class when the dictionary has none, as the [`TagRules`] the
    /// tagger has change them: the dictionary's own list when nothing changes it (no
    /// copy: copying the cold list at every decision, `memmove`, was 9% of a
    /// prefix-margin tagger's time), else `buf` filled. O(candidates).
    fn candidate_list<'s>(
        &'s self,
        m: usize,
        w: &Word<'s>,
        upos: u32,
        xpos: Option<u32>,
        buf: &'s mut Vec<u32>,
    ) -> &'s [u32] {
        let cm = &self.columns[m];
        let entry = if cm.column == UPOS { self.case.upos_entry(w.entry) } else { w.entry.map(|e| e.0) };
        let c = self.lexicon.candidates(cm.column, entry, upos, w.form);
        buf.clear();
        if cm.column == LEMMA {
            return self.lemma_candidates(cm, c, w, entry, upos, buf);
        }
        if c.is_empty() {
            buf.extend(0..cm.classes.len() as u32);
            return buf;
        }
        // The rules' additions go after the dictionary's list (ties go to the first).
        // O(candidates).
        match (cm.column, &self.rules.feats, &self.rules.xpos, xpos) {
            (FEATS, Some(rule), _, Some(x)) => rule.widen(c, upos, x, buf),
            (XPOS, _, Some(rule), _) => rule.widen(c, upos, buf),
            _ => {}
        }
        if buf.is_empty() {
            return c;
        }
        buf.splice(0..0, c.iter().copied());
        buf
    }

    /// What a form's candidates for `column` depend on besides the form: nothing for
    /// UPOS, the UPOS for the others, and the XPOS too for FEATS under
    /// [`TagRules::feats`] ([`FormCache`]'s key).
    fn cache_key(&self, column: usize, upos: u32, xpos: Option<u32>) -> u64 {
        match (column, &self.rules.feats) {
            (UPOS, _) => 0,
            (FEATS, Some(_)) => (upos as u64) << 32 | xpos.map_or(u32::MAX, |x| x) as u64,
            _ => upos as u64,
        }
    }

    /// [`Self::candidate_list`] of LEMMA, whose dictionary's list is `c` (empty: every
    /// script); `buf` empty.
    fn lemma_candidates<'s>(
        &'s self,
        cm: &ColumnModel<W>,
        c: &'s [u32],
        w: &Word<'s>,
        entry: Option<&FormEntry>,
        upos: u32,
        buf: &'s mut Vec<u32>,
    ) -> &'s [u32] {
        if c.len() > 1 {
            // Only scripts that fit the form (a single one is kept anyway).
            let form = lemma_form(w);
            buf.extend(c.iter().copied().filter(|&s| cm.scripts[s as usize].fits(&form)));
        }
        let backed_off = || entry.is_none_or(|e| e.by_upos.iter().all(|(u, _)| *u != upos));
        let known = self.rules.lemmas.as_ref().filter(|_| backed_off());
        if buf.is_empty() {
            if c.is_empty() {
                buf.extend(0..cm.classes.len() as u32);
            } else if known.is_none() || c.len() < 2 {
                return c;
            } else {
                buf.extend_from_slice(c);
            }
        }
        if let Some(known) = known {
            known_lemma_scripts(known, cm, w, upos, self.learning, buf);
        }
        buf
    }

    /// [`Self::candidate_list`] into `out` (the tests' way).
    #[cfg(test)]
    fn candidates(&self, m: usize, w: &Word<'_>, upos: u32, xpos: Option<u32>, out: &mut Vec<u32>) {
        let mut buf = Vec::new();
        let c = self.candidate_list(m, w, upos, xpos, &mut buf).to_vec();
        *out = c;
    }

    /// Decides every column of word i of the sentence in `sc` (history updated) by
    /// `rule` (training by the prefix hinge is [`Core::learn_word`]), calling
    /// `learn(m, feats, cands, pred)` on each decision with more than one candidate
    /// under [`Rule::All`]; writes the class of each column model to `out` and the
    /// templates the margin rule added to `counts`.
    #[allow(clippy::too_many_arguments)]
    fn decide_word(
        &self,
        w: &Word<'_>,
        i: usize,
        sc: &mut Scratch,
        out: &mut [u32],
        rule: Rule,
        counts: &mut TagCounts,
        mut learn: impl FnMut(usize, &[u64], &[u32], u32),
    ) {
        let (mut upos, mut xpos) = (0, None);
        let mut buf = std::mem::take(&mut sc.all);
        for (m, cm) in self.columns.iter().enumerate() {
            let lemma_w;
            let w = if cm.column == LEMMA {
                lemma_w = self.lemma_word(w, upos);
                &lemma_w
            } else {
                w
            };
            let cands = match w.fid {
                Some(fid) => {
                    let key = self.cache_key(cm.column, upos, xpos);
                    sc.cands_of_form.get(fid, m, key, || self.candidate_list(m, w, upos, xpos, &mut buf))
                }
                None => self.candidate_list(m, w, upos, xpos, &mut buf),
            };
            let pred = if cands.len() == 1 {
                cands[0]
            } else if let Rule::Margin(margin) = rule {
                let (pred, used) = cm.best_by_margin(&sc.hist, i, cands, margin, &mut sc.prefix);
                counts.templates[cm.column] += used as u64;
                counts.decisions[cm.column] += 1;
                pred
            } else {
                cm.feats.features(&sc.hist, i, &mut sc.feats);
                let pred = cm.best(&sc.feats, cands, &mut sc.dec);
                learn(m, &sc.feats, cands, pred);
                pred
            };
            out[m] = pred;
            match cm.column {
                UPOS => upos = pred,
                XPOS => xpos = Some(pred),
                _ => {}
            }
            self.record(m, w, i, pred, &mut sc.hist);
        }
        sc.all = buf;
    }

    /// Writes the history values of deciding class `c` with column model `m`.
    fn record(&self, m: usize, w: &Word<'_>, i: usize, c: u32, hist: &mut History) {
        let cm = &self.columns[m];
        if cm.column == LEMMA {
            if !self.slots.reads_lemma() {
                return;
            }
            let lemma = apply_script(&cm.scripts[c as usize], w);
            for (slot, v) in self.slots.history_values(LEMMA, &lemma) {
                hist.set(i, slot, v);
            }
        } else {
            for &(slot, v) in &cm.history[c as usize] {
                hist.set(i, slot, v);
            }
        }
    }
}

impl Core<Weights> {
    /// Decides every column of word i (whose form is `form`) as [`Core::decide_word`]
    /// with [`Rule::Margin`] at `step.margin`, training each decision with more than one
    /// candidate by the prefix hinge (Algorithm 2, by `step`) towards `gold(m)` on the way; with
    /// a `stage`, by the stagewise baseline's step instead.
    #[allow(clippy::too_many_arguments)]
    fn learn_word(
        &mut self,
        form: &str,
        i: usize,
        sc: &mut Scratch,
        out: &mut [u32],
        gold: impl Fn(usize) -> u32,
        step: PrefixStep,
        stage: Option<usize>,
    ) {
        let w = Word { form, entry: self.lexicon.entry(form), fid: None };
        let (mut upos, mut xpos) = (0, None);
        let (mut cands, mut buf) = (std::mem::take(&mut sc.cands), std::mem::take(&mut sc.all));
        for (m, slot) in out.iter_mut().enumerate().take(self.columns.len()) {
            let w = if self.columns[m].column == LEMMA { self.lemma_word(&w, upos) } else { w };
            cands.clear();
            cands.extend_from_slice(self.candidate_list(m, &w, upos, xpos, &mut buf));
            let cm = &mut self.columns[m];
            let pred = match stage {
                _ if cands.len() == 1 => cands[0],
                None => cm.learn_prefix(&sc.hist, i, &cands, gold(m), step, &mut sc.prefix),
                Some(s) => cm.learn_stage(&sc.hist, i, &cands, gold(m), step.margin, s, &mut sc.prefix),
            };
            *slot = pred;
            match self.columns[m].column {
                UPOS => upos = pred,
                XPOS => xpos = Some(pred),
                _ => {}
            }
            self.record(m, &w, i, pred, &mut sc.hist);
        }
        (sc.cands, sc.all) = (cands, buf);
    }
}

/// Hash of a word's ambiguity class: the UPOS classes its dictionary entry allows.
fn ambig_hash(entry: Option<(&FormEntry, bool)>) -> u64 {
    match entry {
        Some((e, _)) if !e.upos.is_empty() => {
            e.upos.iter().fold(hash_str("ambig"), |h, &u| combine(h, u as u64))
        }
        _ => hash_str("<unknown>"),
    }
}

/// Starts sentence s in `sc`: form attributes, ambiguity classes, no prediction yet.
fn start_sentence(slots: &Slots, vh: &FormRows, ambig: &[u64], tb: &Treebank, s: usize, sc: &mut Scratch) {
    sc.hist.start(slots, vh, if slots.ambig { ambig } else { &[] }, tb, s);
}

/// Keeps, of the lemma back-off's candidates `out` of `w` (UPOS `upos`), the scripts that
/// make a lemma `known` with the UPOS, when more than one is offered and any does
/// ([`KnownLemmas`]). (Looking for such a script among shorter suffixes' scripts too was
/// as accurate on en_ewt dev and cost more string work.) O(candidates · form length).
fn known_lemma_scripts<W>(
    known: &KnownLemmas,
    cm: &ColumnModel<W>,
    w: &Word<'_>,
    upos: u32,
    learning: bool,
    out: &mut Vec<u32>,
) {
    let n = out.len();
    if n < 2 {
        return;
    }
    // The form lower-cased once for every script that lower-cases it, and the lemma
    // written into one buffer (`known` reads `lower` only in training).
    let form = lemma_form(w);
    let lowered_form = lexicon::lowered(&form);
    let lower = if learning { w.form.to_lowercase() } else { String::new() };
    let mut lemma = String::new();
    for k in 0..n {
        let s = out[k];
        if cm.scripts[s as usize].apply_into(&form, &lowered_form, &mut lemma)
            && !lemma.is_empty()
            && known.known(upos, &lemma, &lower, learning)
        {
            out.push(s);
        }
    }
    if out.len() > n {
        out.drain(..n);
    } else {
        out.truncate(n);
    }
}

/// The form a lemma script applies to: lower-cased when the dictionary knew only that.
fn lemma_form<'a>(w: &Word<'a>) -> std::borrow::Cow<'a, str> {
    match w.entry {
        Some((_, true)) => std::borrow::Cow::Owned(w.form.to_lowercase()),
        _ => std::borrow::Cow::Borrowed(w.form),
    }
}

/// The lemma a script makes of a word (the form itself when it does not fit, or when it
/// would leave nothing: "strip -", learnt from `--` → `-`, on the form `-`; an empty
/// LEMMA is not CoNLL-U).
fn apply_script(s: &Script, w: &Word<'_>) -> String {
    let form = lemma_form(w);
    s.apply(&form).filter(|l| !l.is_empty()).unwrap_or_else(|| form.into_owned())
}

/// A column of the tagged copy: `value(pos, row)` for each word `pos`, `row` its decided
/// classes (one per column model) in the chunks tagged. O(words).
fn column_of(
    n: usize,
    chunks: &[(Vec<u32>, TagCounts)],
    k: usize,
    mut value: impl FnMut(usize, &[u32]) -> u32,
) -> Vec<u32> {
    let mut col = Vec::with_capacity(n);
    for (d, _) in chunks {
        let at = col.len();
        col.extend(d.chunks_exact(k).enumerate().map(|(i, row)| value(at + i, row)));
    }
    col
}

/// `s` lower-cased into `out` (as `str::to_lowercase`; no allocation for ASCII).
fn lower_into(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        out.push_str(s);
        out.make_ascii_lowercase();
    } else {
        out.push_str(&s.to_lowercase());
    }
}

/// Buffers to make lemmas in: writing the output makes one per form and script met,
/// and a `String` each (with the form lower-cased) was most of its allocations.
#[derive(Default)]
struct LemmaBuf {
    form: String,
    lowered: String,
    lemma: String,
}

impl LemmaBuf {
    /// [`apply_script`] in these buffers. O(form length).
    fn apply<'s, 'a: 's>(&'s mut self, s: &Script, w: &Word<'a>) -> &'s str {
        let form: &str = match w.entry {
            Some((_, true)) => {
                lower_into(w.form, &mut self.form);
                &self.form
            }
            _ => w.form,
        };
        if s.lower {
            lower_into(form, &mut self.lowered);
        }
        if s.apply_into(form, &self.lowered, &mut self.lemma) && !self.lemma.is_empty() {
            &self.lemma
        } else {
            form
        }
    }
}

/// The gold value of `column` for word `pos` of `tb` as a class string.
fn gold_value(tb: &Treebank, column: usize, pos: usize) -> String {
    let (w, v) = (&tb.words, &tb.vocabs);
    match column {
        UPOS => v.upos.str(w.upos[pos]).to_string(),
        XPOS => v.xpos.str(w.xpos[pos]).to_string(),
        FEATS => v.feats.str(w.feats[pos]).to_string(),
        _ => Script::between(v.form.str(w.form[pos]), v.lemma.str(w.lemma[pos])).text(),
    }
}

/// Trains a tagger epoch by epoch (see the module comment).
pub struct TaggerTrainer {
    core: Core<Weights>,
    tb: Treebank,
    vh: FormRows,
    /// Ambiguity class of every form of the training treebank.
    ambig: Vec<u64>,
    /// gold[m][pos]: class of column model m for word pos (UNSET: none).
    gold: Vec<Vec<u32>>,
    /// With a backward pass: the jackknifed `bupos` of every word ([`backward`]).
    back: Vec<u64>,
    rng: Rng,
    epoch: usize,
    /// The margin every prefix is trained to and how it learns (None: ordinary training).
    prefix: Option<PrefixStep>,
    /// ℓ2 strength of prefix training's AdaGrad steps.
    prefix_l2: f32,
    /// With `prefix_margin`: the stagewise baseline's current template (None: every
    /// prefix trained, Algorithm 2).
    stage: Option<usize>,
}

/// Statistics of one training epoch.
#[derive(Debug, Clone, Copy)]
pub struct EpochStats {
    pub epoch: usize,
    /// Share of column decisions right (following its own predictions), 0..1.
    pub train_accuracy: f64,
    pub seconds: f64,
}

impl TaggerTrainer {
    /// Prepares training on `train`: the columns it fills (of UPOS, XPOS, FEATS, LEMMA),
    /// their classes, the tag dictionary, and weight blocks sized by the (feature, class)
    /// pairs training meets. `sets[c]` holds column c's templates.
    pub fn new(
        train: &Treebank,
        sets: [TemplateSet; N_COLUMNS],
        opts: &TaggerOptions,
    ) -> Result<TaggerTrainer> {
        if train.n_words() == 0 {
            return Err(Error::InvalidArgument("the training treebank has no words".into()));
        }
        crate::transition::prefix_margin::check_training(opts.prefix_margin, opts.prefix_l2)?;
        if !(opts.prefix_full.is_finite() && opts.prefix_full >= 0.0) {
            return Err(Error::InvalidArgument(format!(
                "the full sum's step must be a number ≥ 0, got {}",
                opts.prefix_full
            )));
        }
        let filled = filled_columns(train);
        let active: Vec<usize> =
            (0..N_COLUMNS).filter(|&c| filled.iter().any(|f| f == COLUMN_NAMES[c])).collect();
        if !active.contains(&UPOS) {
            return Err(Error::InvalidArgument(
                "the training treebank leaves UPOS empty ('_'): the tagger learns UPOS first \
                 (its other columns are predicted after it), so it needs UPOS in training"
                    .into(),
            ));
        }
        let n = train.n_words();
        let mut slots = Slots::default();
        let mut columns = Vec::new();
        let mut gold = Vec::new();
        for (c, set) in sets.into_iter().enumerate() {
            if !active.contains(&c) {
                continue;
            }
            if set.is_empty() {
                return Err(Error::InvalidArgument(format!("no templates for {}", COLUMN_NAMES[c])));
            }
            // Classes in first-seen order (deterministic).
            let (mut classes, mut ids) = (Vec::<String>::new(), HashMap::<String, u32>::new());
            let g: Vec<u32> = (0..n)
                .map(|pos| {
                    let value = gold_value(train, c, pos);
                    *ids.entry(value.clone()).or_insert_with(|| {
                        classes.push(value);
                        classes.len() as u32 - 1
                    })
                })
                .collect();
            gold.push(g);
            // One row per block until `size_blocks` counts the pairs.
            let weights = Weights::new(&vec![1usize; set.len()], 1)?;
            columns.push(ColumnModel::new(c, set, classes, weights, opts.line_hashing, &mut slots)?);
        }
        // The backward pass (untrained), its attributes in the same slots.
        let mut backward = match &opts.backward {
            None => None,
            Some(set) => {
                if !opts.line_hashing || opts.prefix_margin.is_some() {
                    return Err(Error::InvalidArgument(
                        "a backward pass needs line hashing and ordinary (not prefix-margin) training".into(),
                    ));
                }
                let weights = Weights::new(&vec![1usize; set.len()], 1)?;
                // XPOS if asked and the treebank fills it, else UPOS.
                let of = if opts.backward_xpos { columns.iter().find(|cm| cm.column == XPOS) } else { None };
                let (column, classes) = of.map_or((UPOS, &columns[0].classes), |cm| (XPOS, &cm.classes));
                Some(ColumnModel::new(column, set.clone(), classes.clone(), weights, true, &mut slots)?)
            }
        };
        check_backward(&columns, backward.as_ref())?;
        check_clusters(&slots, opts.clusters.as_deref())?;
        fill_history(&mut columns, backward.as_mut(), &slots);
        if opts.cased && (!opts.line_hashing || opts.prefix_margin.is_some()) {
            return Err(Error::InvalidArgument(
                "the case rule needs line hashing and ordinary (not prefix-margin) training".into(),
            ));
        }
        if (opts.feats_by_xpos.is_some() || opts.known_lemmas || opts.xpos_siblings.is_some())
            && (!opts.line_hashing || opts.prefix_margin.is_some())
        {
            return Err(Error::InvalidArgument(
                "the candidate rules (FEATS by XPOS, XPOS siblings, known lemmas) need line hashing and \
                 ordinary (not prefix-margin) training"
                    .into(),
            ));
        }
        let case = CaseRules { cased: opts.cased };
        let class_of =
            |c: usize, pos: usize| columns.iter().position(|cm| cm.column == c).map(|m| gold[m][pos]);
        let words: Vec<Seen<'_>> = (0..n)
            .map(|pos| Seen {
                form: train.vocabs.form.str(train.words.form[pos]),
                classes: std::array::from_fn(|c| class_of(c, pos)),
            })
            .collect();
        let n_upos = columns[0].classes.len();
        let lexicon = Lexicon::build(&words, n_upos, opts.min_known.max(1), opts.upos_min_known.max(1));
        let n_of = |c: usize| columns.iter().find(|cm| cm.column == c).map(|cm| cm.classes.len());
        let rules = TagRules {
            feats: match (opts.feats_by_xpos, n_of(XPOS), n_of(FEATS)) {
                (Some(k), Some(n_xpos), Some(_)) => Some(FeatsByXpos::build(&words, n_upos, n_xpos, k)),
                _ => None,
            },
            xpos: match (opts.xpos_siblings, n_of(XPOS)) {
                (Some(k), Some(n_xpos)) => Some(XposSiblings::build(&words, n_upos, n_xpos, k)),
                _ => None,
            },
            lemmas: (opts.known_lemmas && n_of(LEMMA).is_some()).then(|| {
                let (w, v) = (&train.words, &train.vocabs);
                KnownLemmas::build(
                    (0..n).map(|pos| (gold[0][pos], v.form.str(w.form[pos]), v.lemma.str(w.lemma[pos]))),
                )
            }),
        };
        let vh = slots.form_rows(train, opts.clusters.as_deref());
        let ambig = train.vocabs.form.strings().iter().map(|f| ambig_hash(lexicon.entry(f))).collect();
        let mut trainer = TaggerTrainer {
            core: Core {
                columns,
                backward: None,
                lexicon,
                slots,
                case,
                clusters: opts.clusters.clone(),
                rules,
                learning: true,
            },
            tb: train.clone(),
            vh,
            ambig,
            gold,
            back: Vec::new(),
            rng: Rng::new(opts.seed),
            epoch: 0,
            prefix: opts.prefix_margin.map(|margin| PrefixStep {
                margin,
                all_prefixes: false,
                perceptron: opts.prefix_perceptron,
                full: opts.prefix_full,
            }),
            prefix_l2: opts.prefix_l2,
            stage: None,
        };
        if let Some(base) = backward {
            let (back, pass) = trainer.train_backward_passes(&base, opts.seed, opts.max_bits)?;
            trainer.back = back;
            trainer.core.backward = Some(pass);
        }
        trainer.size_blocks(opts.max_bits)?;
        Ok(trainer)
    }

    /// Starts sentence s in `sc`, with its jackknifed backward tags.
    fn start(&self, s: usize, sc: &mut Scratch) {
        start_sentence(&self.core.slots, &self.vh, &self.ambig, &self.tb, s, sc);
        if self.core.backward.is_some() {
            let meta = &self.tb.sentences[s];
            sc.hist.reset_back();
            for i in 1..=meta.len as usize {
                sc.hist.set_back(i, self.back[meta.start as usize + i - 1]);
            }
        }
    }

    fn word(&self, pos: usize) -> Word<'_> {
        let form = self.tb.vocabs.form.str(self.tb.words.form[pos]);
        Word { form, entry: self.core.lexicon.entry(form), fid: None }
    }

    /// Sizes each template's block by the distinct (feature, gold class) pairs of the
    /// decisions with more than one candidate, on gold history. O(words · templates).
    fn size_blocks(&mut self, max_bits: u32) -> Result<()> {
        let mut pairs: Vec<Vec<HashSet<u64>>> =
            self.core.columns.iter().map(|cm| vec![HashSet::new(); cm.set.len()]).collect();
        let mut sc = Scratch::default();
        let mut buf = Vec::new();
        for s in 0..self.tb.len() {
            self.start(s, &mut sc);
            let meta = &self.tb.sentences[s];
            for i in 1..=meta.len as usize {
                let pos = meta.start as usize + i - 1;
                let w = self.word(pos);
                let upos = self.gold[0][pos];
                let xpos =
                    self.core.columns.iter().position(|cm| cm.column == XPOS).map(|m| self.gold[m][pos]);
                for (m, cm) in self.core.columns.iter().enumerate() {
                    let g = self.gold[m][pos];
                    let w = if cm.column == LEMMA { self.core.lemma_word(&w, upos) } else { w };
                    let cands = self.core.candidate_list(m, &w, upos, xpos, &mut buf);
                    if cands.len() > 1 {
                        cm.feats.features(&sc.hist, i, &mut sc.feats);
                        for (t, &f) in sc.feats.iter().enumerate() {
                            pairs[m][t].insert(cm.key(f, g));
                        }
                    }
                    self.core.record(m, &w, i, g, &mut sc.hist);
                }
            }
        }
        for (m, cm) in self.core.columns.iter_mut().enumerate() {
            // Wrong classes are updated too: room for twice the gold pairs.
            let rows: Vec<usize> = pairs[m].iter().map(|p| rows_for(2 * p.len(), 6, max_bits)).collect();
            cm.weights = Weights::new(&rows, 1)?;
            cm.weights.start_averaging();
            if self.prefix.is_some_and(|p| !p.perceptron) {
                cm.weights.start_adagrad(self.prefix_l2);
            }
        }
        Ok(())
    }

    /// Trains only template `stage` of each column (the last one where a column has
    /// fewer) from the next epoch on, earlier ones frozen: the stagewise baseline of
    /// Strubell et al. §6.1 (a prefix-margin trainer only). None: back to Algorithm 2.
    pub fn set_stage(&mut self, stage: Option<usize>) -> Result<()> {
        if stage.is_some() && self.prefix.is_none() {
            return Err(Error::InvalidArgument("stagewise training needs a prefix margin".into()));
        }
        if stage.is_some() && self.prefix.is_some_and(|p| p.perceptron || p.full_sum()) {
            return Err(Error::InvalidArgument(
                "stagewise training takes AdaGrad steps and no full sum".into(),
            ));
        }
        // Templates before the new stage are done: frozen at their average.
        let before = self.stage.unwrap_or(0);
        for cm in &mut self.core.columns {
            let n = cm.feats.len();
            for t in before.min(n)..stage.unwrap_or(0).min(n) {
                cm.weights.freeze_template(t);
            }
        }
        self.stage = stage;
        Ok(())
    }

    /// One pass over the shuffled training sentences, following the tagger's own
    /// predictions. O(words · columns · candidates · templates).
    pub fn epoch(&mut self) -> EpochStats {
        let start = Instant::now();
        self.epoch += 1;
        let mut order: Vec<usize> = (0..self.tb.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, self.rng.index(i + 1));
        }
        let mut sc = Scratch::default();
        let mut decided = vec![0u32; self.core.columns.len()];
        let (mut right, mut total) = (0usize, 0usize);
        // Updates are collected per word and applied after it: deciding reads the weights.
        let mut updates: Vec<(usize, Vec<u64>, u32, u32)> = Vec::new();
        for &s in &order {
            self.start(s, &mut sc);
            let meta = self.tb.sentences[s].clone();
            for i in 1..=meta.len as usize {
                let pos = meta.start as usize + i - 1;
                let form = self.tb.vocabs.form.str(self.tb.words.form[pos]);
                let gold = &self.gold;
                updates.clear();
                if let Some(step) = self.prefix {
                    self.core.learn_word(form, i, &mut sc, &mut decided, |m| gold[m][pos], step, self.stage);
                } else {
                    let w = Word { form, entry: self.core.lexicon.entry(form), fid: None };
                    let all = &mut TagCounts::default();
                    self.core.decide_word(
                        &w,
                        i,
                        &mut sc,
                        &mut decided,
                        Rule::All,
                        all,
                        |m, feats, cands, pred| {
                            let g = gold[m][pos];
                            if pred != g && cands.contains(&g) {
                                updates.push((m, feats.to_vec(), g, pred));
                            }
                        },
                    );
                }
                for (m, &d) in decided.iter().enumerate() {
                    total += 1;
                    right += (d == self.gold[m][pos]) as usize;
                }
                for (m, feats, g, pred) in updates.drain(..) {
                    let cm = &mut self.core.columns[m];
                    for (t, &f) in feats.iter().enumerate() {
                        let (kg, kp) = (cm.key(f, g), cm.key(f, pred));
                        cm.weights.update(t, kg, 0, 1.0);
                        cm.weights.update(t, kp, 0, -1.0);
                    }
                }
                for cm in &mut self.core.columns {
                    cm.weights.tick();
                }
            }
        }
        for cm in &mut self.core.columns {
            match self.stage {
                None => cm.weights.flush_l2(),
                // Frozen templates stay as they are.
                Some(s) => cm.weights.flush_l2_template(s.min(cm.feats.len() - 1)),
            }
        }
        EpochStats {
            epoch: self.epoch,
            train_accuracy: right as f64 / total.max(1) as f64,
            seconds: start.elapsed().as_secs_f64(),
        }
    }

    /// The tagger as it stands: averaged, 8-bit weights.
    pub fn model(&self) -> Tagger {
        let columns = self.core.columns.iter().map(ColumnModel::quantized).collect();
        Tagger {
            core: Core {
                columns,
                backward: self.core.backward.clone(),
                lexicon: self.core.lexicon.clone(),
                slots: self.core.slots.clone(),
                case: self.core.case.clone(),
                clusters: self.core.clusters.clone(),
                rules: self.core.rules.clone(),
                learning: false,
            },
            info: String::new(),
            dynamic: self.prefix.map(|p| p.margin).map(|m| MarginPresets { train: m, accurate: m, fast: m }),
        }
    }
}

/// A trained tagger (8-bit weights).
#[derive(Debug, Clone)]
pub struct Tagger {
    core: Core<QuantizedWeights>,
    /// Free-form training information (JSON written by the Python layer).
    pub info: String,
    /// Margin presets of a tagger trained by the prefix-margin rule (None: an ordinary
    /// tagger, which the rule can still tag with at a given margin).
    pub dynamic: Option<MarginPresets>,
}

/// Per form of the treebank being tagged: dictionary entry and ambiguity class.
struct FormTables<'a> {
    entries: Vec<Option<(&'a FormEntry, bool)>>,
    ambig: Vec<u64>,
}

/// Sentences per work chunk when tagging on several threads.
const TAG_CHUNK: usize = 256;

impl Tagger {
    /// The columns this tagger predicts (CoNLL-U names, in decision order).
    pub fn columns(&self) -> Vec<&'static str> {
        self.core.columns.iter().map(|cm| COLUMN_NAMES[cm.column]).collect()
    }
    /// The templates of column `name` (e.g. "UPOS").
    pub fn templates(&self, name: &str) -> Option<&TemplateSet> {
        self.core.columns.iter().find(|cm| COLUMN_NAMES[cm.column] == name).map(|cm| &cm.set)
    }
    /// The templates of the backward pass (None: the tagger has none).
    pub fn backward_templates(&self) -> Option<&TemplateSet> {
        self.core.backward.as_ref().map(|cm| &cm.set)
    }
    /// The column the backward pass predicts, "UPOS" or "XPOS" (None: the tagger has none).
    pub fn backward_column(&self) -> Option<&'static str> {
        self.core.backward.as_ref().map(|cm| COLUMN_NAMES[cm.column])
    }
    /// Whether it has the case rule: forms its dictionary knows only lower-cased keep
    /// their case ([`CaseRules::cased`]; false in taggers saved before the rule).
    pub fn cased(&self) -> bool {
        self.core.case.cased
    }
    /// Whether it has candidate rules beyond the tag dictionary ([`TagRules`]; false in
    /// taggers saved before them).
    pub fn has_rules(&self) -> bool {
        self.core.rules != TagRules::default()
    }
    /// Its word-cluster table (None: it reads none).
    pub fn clusters(&self) -> Option<&Clusters> {
        self.core.clusters.as_deref()
    }
    /// The classes of column `name` (LEMMA: edit scripts as text).
    pub fn classes(&self, name: &str) -> Option<&[String]> {
        self.core.columns.iter().find(|cm| COLUMN_NAMES[cm.column] == name).map(|cm| &cm.classes[..])
    }
    /// The input columns a tagger reads.
    pub fn input_columns(&self) -> Vec<String> {
        vec!["FORM".to_string()]
    }

    /// Decided classes of every word of sentences `range`, per column model. O(words ·
    /// columns · candidates · templates).
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &self,
        tb: &Treebank,
        vh: &FormRows,
        forms: &FormTables<'_>,
        range: std::ops::Range<usize>,
        sc: &mut Scratch,
        rule: Rule,
        counts: &mut TagCounts,
    ) -> Vec<u32> {
        let k = self.core.columns.len();
        let mut out =
            Vec::with_capacity(range.clone().map(|s| tb.sentences[s].len as usize).sum::<usize>() * k);
        let mut decided = vec![0u32; k];
        let entries = &forms.entries;
        for s in range {
            start_sentence(&self.core.slots, vh, &forms.ambig, tb, s, sc);
            let meta = &tb.sentences[s];
            // The dictionary entries of the sentence's words and their candidate lists,
            // asked for at once: each is otherwise a cache miss met word by word. O(n).
            for &f in &tb.words.form[meta.range()] {
                if let Some((e, _)) = entries[f as usize] {
                    prefetch(&e.upos, 0);
                    prefetch(&e.by_upos, 0);
                }
            }
            if let Some(cm) = &self.core.backward {
                let start = meta.start as usize;
                let word = |i: usize| {
                    let fid = tb.words.form[start + i - 1];
                    (Some(fid), self.core.case.upos_entry(entries[fid as usize]))
                };
                backward::run_forms(cm, &self.core.lexicon, meta.len as usize, word, sc);
            }
            for i in 1..=meta.len as usize {
                let pos = meta.start as usize + i - 1;
                let fid = tb.words.form[pos] as usize;
                let w =
                    Word { form: tb.vocabs.form.str(fid as u32), entry: entries[fid], fid: Some(fid as u32) };
                self.core.decide_word(&w, i, sc, &mut decided, rule, counts, |_, _, _, _| {});
                // One push per column: a copy call per word cost more than the copy.
                for &d in &decided {
                    out.push(d);
                }
            }
        }
        out
    }

    /// A copy of `tb` with the predicted columns written (others untouched).
    /// `threads` 0 = all cores.
    pub fn tag(&self, tb: &Treebank, threads: usize) -> Result<Treebank> {
        Ok(self.tag_with(tb, threads, None)?.0)
    }

    /// [`Self::tag`], with a `margin` by the prefix-margin rule (Strubell et al. 2015,
    /// Algorithm 1; [`prefix_margin`]), and the templates that rule computed.
    pub fn tag_with(
        &self,
        tb: &Treebank,
        threads: usize,
        margin: Option<f32>,
    ) -> Result<(Treebank, TagCounts)> {
        if let Some(m) = margin.filter(|m| m.is_nan() || *m < 0.0) {
            return Err(Error::InvalidArgument(format!("a margin must be a number ≥ 0, got {m}")));
        }
        let rule = margin.map_or(Rule::All, Rule::Margin);
        let vh = self.core.slots.form_rows(tb, self.core.clusters.as_deref());
        // The dictionary entry of every form of this treebank, looked up once.
        let entries: Vec<Option<(&FormEntry, bool)>> =
            tb.vocabs.form.strings().iter().map(|f| self.core.lexicon.entry(f)).collect();
        let ambig = entries.iter().map(|&e| ambig_hash(e)).collect();
        let forms = FormTables { entries, ambig };
        let n_forms = tb.vocabs.form.len();
        let scratch = || Scratch { cands_of_form: FormCache::for_forms(n_forms), ..Default::default() };
        let chunks = map_chunks(threads, tb.len(), TAG_CHUNK, scratch, |sc, range| {
            let mut counts = TagCounts::default();
            let decided = self.decide(tb, &vh, &forms, range, sc, rule, &mut counts);
            vec![(decided, counts)]
        })?;
        let mut counts = TagCounts::default();
        for (_, c) in &chunks {
            counts.add(c);
        }
        // The decided classes: a row of one per column model for each word, read chunk by
        // chunk (not copied into one vector).
        let k = self.core.columns.len();
        let entries = forms.entries;
        // The copy shares the input's vocabularies and comment lines until it adds to
        // them (copy on write); a column the tagger writes is made, not copied.
        let tagged = |col: usize| self.core.columns.iter().any(|cm| cm.column == col);
        let w = &tb.words;
        let copy = |col: usize, v: &Vec<u32>| if tagged(col) { Vec::new() } else { v.clone() };
        let mut out = Treebank {
            vocabs: tb.vocabs.clone(),
            words: Words {
                form: w.form.clone(),
                lemma: copy(LEMMA, &w.lemma),
                upos: copy(UPOS, &w.upos),
                xpos: copy(XPOS, &w.xpos),
                feats: copy(FEATS, &w.feats),
                head: w.head.clone(),
                deprel: w.deprel.clone(),
                deps: w.deps.clone(),
                misc: w.misc.clone(),
            },
            sentences: tb.sentences.clone(),
            format: tb.format,
            partial: tb.partial,
        };
        for (m, cm) in self.core.columns.iter().enumerate() {
            match cm.column {
                LEMMA => {
                    // A form mostly keeps one lemma: remember the last (script, whether its
                    // entry applied, id) per form (the cased rule may set the entry aside).
                    let mut last: Vec<Option<(u32, bool, u32)>> = vec![None; tb.vocabs.form.len()];
                    // About one lemma per form: room for them at once, not by doubling.
                    let vocab = &mut out.vocabs.lemma;
                    vocab.reserve(vocab.len() + tb.vocabs.form.len());
                    let mut buf = LemmaBuf::default();
                    let lemma_of = |pos: usize, row: &[u32]| {
                        let (fid, c) = (tb.words.form[pos] as usize, row[m]);
                        let w = Word { form: tb.vocabs.form.str(fid as u32), entry: entries[fid], fid: None };
                        let w = self.core.lemma_word(&w, row[0]);
                        match last[fid] {
                            Some((s, e, id)) if s == c && e == w.entry.is_some() => id,
                            _ => {
                                // Only a lemma not seen before allocates (its `Arc<str>`).
                                let id = vocab.intern(buf.apply(&cm.scripts[c as usize], &w));
                                last[fid] = Some((c, w.entry.is_some(), id));
                                id
                            }
                        }
                    };
                    out.words.lemma = column_of(tb.n_words(), &chunks, k, lemma_of);
                }
                col => {
                    let (vocab, column) = match col {
                        UPOS => (&mut out.vocabs.upos, &mut out.words.upos),
                        XPOS => (&mut out.vocabs.xpos, &mut out.words.xpos),
                        _ => (&mut out.vocabs.feats, &mut out.words.feats),
                    };
                    let class_ids: Vec<u32> = cm.classes.iter().map(|c| vocab.intern(c)).collect();
                    *column = column_of(tb.n_words(), &chunks, k, |_, row| class_ids[row[m] as usize]);
                }
            }
        }
        Ok((out, counts))
    }

    /// Writes the model file atomically, with `info`.
    pub fn save(&self, path: &std::path::Path, info: &str) -> Result<()> {
        let f = self.to_file(info);
        save_model(path, f.inputs, f.info, f.model)
    }

    /// The model file's payload, with `info` (also what a parser's file holds of its
    /// tagger).
    pub fn to_file(&self, info: &str) -> ModelFile {
        let columns = self.core.columns.iter().map(StoredColumn::of).collect();
        let stored = StoredTagger { columns, lexicon: self.core.lexicon.clone() };
        let lines = self.core.columns.first().is_some_and(|cm| cm.lines);
        let model = match (&self.core.backward, self.dynamic) {
            (b, presets) if self.core.rules != TagRules::default() => {
                Model::TaggerRules(Box::new(StoredTaggerRules {
                    tagger: stored,
                    backward: b.as_ref().map(StoredColumn::of),
                    presets,
                    case: self.core.case.clone(),
                    clusters: self.core.clusters.as_ref().map(|c| c.to_stored()),
                    rules: self.core.rules.clone(),
                }))
            }
            (b, presets) if self.core.clusters.is_some() => Model::TaggerClusters(StoredTaggerClusters {
                tagger: stored,
                backward: b.as_ref().map(StoredColumn::of),
                presets,
                case: self.core.case.clone(),
                clusters: self.core.clusters.as_ref().map(|c| c.to_stored()),
            }),
            (b, presets) if self.core.case != CaseRules::default() => Model::TaggerCased(StoredTaggerCased {
                tagger: stored,
                backward: b.as_ref().map(StoredColumn::of),
                presets,
                case: self.core.case.clone(),
            }),
            (Some(b), presets) => {
                Model::TaggerBidi(StoredTaggerBidi { tagger: stored, backward: StoredColumn::of(b), presets })
            }
            _ if lines => Model::TaggerLines(StoredTaggerLines { tagger: stored, presets: self.dynamic }),
            (_, None) => Model::Tagger(stored),
            (_, Some(presets)) => Model::TaggerDynamic(StoredTaggerDynamic { tagger: stored, presets }),
        };
        ModelFile { inputs: self.input_columns(), info: info.to_string(), model }
    }

    /// Reads a tagger model file; checks every size.
    pub fn load(path: &std::path::Path) -> Result<Tagger> {
        let file = load_model(path)?;
        Tagger::from_file(path, ModelFile { inputs: file.inputs, info: file.info, model: file.model })
    }

    /// The tagger stored inside the parser model file at `path` (None when it holds none).
    pub fn load_embedded(path: &std::path::Path) -> Result<Option<Tagger>> {
        embedded_tagger(path)?.map(|f| Tagger::from_file(path, f)).transpose()
    }

    /// The tagger of a model file's payload read from `path`; checks every size.
    pub fn from_file(path: &std::path::Path, file: ModelFile) -> Result<Tagger> {
        let info = file.info;
        let none = CaseRules::default();
        let mut rules = TagRules::default();
        let (st, dynamic, lines, backward, case, clusters) = match file.model {
            Model::Tagger(st) => (st, None, false, None, none, None),
            Model::TaggerDynamic(d) => (d.tagger, Some(d.presets), false, None, none, None),
            Model::TaggerLines(l) => (l.tagger, l.presets, true, None, none, None),
            Model::TaggerBidi(b) => (b.tagger, b.presets, true, Some(b.backward), none, None),
            Model::TaggerCased(l) => (l.tagger, l.presets, true, l.backward, l.case, None),
            Model::TaggerClusters(c) => (c.tagger, c.presets, true, c.backward, c.case, c.clusters),
            Model::TaggerRules(r) => {
                rules = r.rules;
                (r.tagger, r.presets, true, r.backward, r.case, r.clusters)
            }
            other => return Err(wrong_kind(path, &other, MODEL_KIND)),
        };
        let bad = |msg: String| Error::Model { file: path.display().to_string(), msg };
        let clusters = clusters.map(Clusters::from_stored).transpose().map_err(|e| bad(e.to_string()))?;
        if let Some(p) = dynamic.filter(|p| !p.is_valid()) {
            return Err(bad(format!("bad margin presets {p:?}")));
        }
        let mut tagger = Tagger::from_stored(st, backward, info, lines, case, clusters.map(Arc::new), rules)
            .map_err(|e| bad(format!("inconsistent tagger: {e}")))?;
        tagger.dynamic = dynamic;
        Ok(tagger)
    }

    fn from_stored(
        st: StoredTagger,
        backward: Option<StoredColumn>,
        info: String,
        lines: bool,
        case: CaseRules,
        clusters: Option<Arc<Clusters>>,
        rules: TagRules,
    ) -> Result<Tagger> {
        let mut slots = Slots::default();
        let mut columns = Vec::new();
        let mut last = None;
        for sc in st.columns {
            let c = sc.column as usize;
            if c >= N_COLUMNS || last.is_some_and(|l| l >= c) || (columns.is_empty() && c != UPOS) {
                return Err(Error::InvalidArgument("columns out of order".into()));
            }
            last = Some(c);
            columns.push(sc.column_model(lines, &mut slots)?);
        }
        let mut backward = backward.map(|b| b.column_model(lines, &mut slots)).transpose()?;
        check_backward(&columns, backward.as_ref())?;
        check_clusters(&slots, clusters.as_deref())?;
        fill_history(&mut columns, backward.as_mut(), &slots);
        let lexicon = st.lexicon;
        let n_of =
            |c: usize| columns.iter().find(|cm| cm.column == c).map_or(0, |cm| cm.classes.len() as u32);
        let ok = |v: &[u32], c: usize| v.iter().all(|&x| x < n_of(c));
        let mut good = lexicon.by_upos.len() == n_of(UPOS) as usize
            && lexicon.scripts_by_upos.len() == n_of(UPOS) as usize;
        for e in lexicon.forms.values() {
            good &= ok(&e.upos, UPOS);
            for (u, c) in &e.by_upos {
                good &= *u < n_of(UPOS) && ok(&c[0], XPOS) && ok(&c[1], FEATS) && ok(&c[2], LEMMA);
            }
        }
        for c in &lexicon.by_upos {
            good &= ok(&c[0], XPOS) && ok(&c[1], FEATS);
        }
        for c in lexicon.scripts_by_upos.iter().chain(lexicon.scripts_by_suffix.values()) {
            good &= ok(c, LEMMA);
        }
        if let Some(x) = &rules.xpos {
            good &= x.n_xpos == n_of(XPOS)
                && x.table.len() == n_of(UPOS) as usize * x.n_xpos as usize
                && x.table.iter().all(|c| ok(c, XPOS));
        }
        if let Some(f) = &rules.feats {
            good &= f.n_xpos == n_of(XPOS)
                && f.table.len() == n_of(UPOS) as usize * f.n_xpos as usize
                && f.table.iter().all(|c| ok(c, FEATS));
        }
        if !good {
            return Err(Error::InvalidArgument("the tag dictionary names classes the model lacks".into()));
        }
        Ok(Tagger {
            core: Core { columns, backward, lexicon, slots, case, clusters, rules, learning: false },
            info,
            dynamic: None,
        })
    }
}

impl StoredColumn {
    fn of(cm: &ColumnModel<QuantizedWeights>) -> StoredColumn {
        StoredColumn {
            column: cm.column as u8,
            templates: cm.set.to_text(),
            classes: cm.classes.clone(),
            weights: StoredWeights::of(&cm.weights),
        }
    }

    /// The column model it stores (its attributes added to `slots`); checks the column
    /// and the weights' size.
    fn column_model(self, lines: bool, slots: &mut Slots) -> Result<ColumnModel<QuantizedWeights>> {
        let c = self.column as usize;
        if c >= N_COLUMNS {
            return Err(Error::InvalidArgument(format!("no column {c}")));
        }
        // The language's bound, not the default: these templates were checked when the
        // model trained (a set's `#! max_atoms` allowed wider ones; such a file did not load).
        let set = TemplateSet::parse(&self.templates, Family::Token, MAX_ATOMS_BOUND)?;
        let weights = self.weights.table(set.len(), 1)?;
        let mut cm = ColumnModel::new(c, set, self.classes, weights, lines, slots)?;
        cm.whole_lines = whole_lines(&cm.weights);
        Ok(cm)
    }
}

#[derive(Serialize, Deserialize)]
struct StoredColumn {
    column: u8,
    templates: String,
    classes: Vec<String>,
    weights: StoredWeights,
}

/// A tagger inside a model file.
#[derive(Serialize, Deserialize)]
pub struct StoredTagger {
    columns: Vec<StoredColumn>,
    lexicon: Lexicon,
}

/// A tagger trained by the prefix-margin rule inside a model file: the tagger and its
/// margin presets (a variant of its own, so older files keep decoding).
#[derive(Serialize, Deserialize)]
pub struct StoredTaggerDynamic {
    tagger: StoredTagger,
    presets: MarginPresets,
}

/// A tagger with line-local hashing ([`ColumnModel::key`]) inside a model file, with the
/// margin presets of one trained by the prefix-margin rule (a variant of its own: files
/// of the earlier variants keep their layout and decode as before).
#[derive(Serialize, Deserialize)]
pub struct StoredTaggerLines {
    tagger: StoredTagger,
    presets: Option<MarginPresets>,
}

/// A tagger with a backward pass ([`backward`]; line-local hashing) inside a model file,
/// with the margin presets of one trained by the prefix-margin rule (a variant of its
/// own: files of the earlier variants decode as before).
#[derive(Serialize, Deserialize)]
pub struct StoredTaggerBidi {
    tagger: StoredTagger,
    backward: StoredColumn,
    presets: Option<MarginPresets>,
}

/// A tagger with [`CaseRules`] inside a model file (line-local hashing, with or without a
/// backward pass, with the margin presets of one trained by the prefix-margin rule): a
/// variant of its own, so files of the earlier variants decode and tag as before.
#[derive(Serialize, Deserialize)]
pub struct StoredTaggerCased {
    tagger: StoredTagger,
    backward: Option<StoredColumn>,
    presets: Option<MarginPresets>,
    case: CaseRules,
}

/// A tagger with a word-cluster table ([`clusters`]) inside a model file (otherwise as
/// [`StoredTaggerCased`]): a variant of its own, so files of the earlier variants decode
/// and tag as before, and a tagger without a table is written as before.
#[derive(Serialize, Deserialize)]
pub struct StoredTaggerClusters {
    tagger: StoredTagger,
    backward: Option<StoredColumn>,
    presets: Option<MarginPresets>,
    case: CaseRules,
    /// Always present in a file of this variant (an Option so that a damaged file is
    /// refused by the consistency check, not by a panic).
    clusters: Option<StoredClusters>,
}

/// A tagger with [`TagRules`] inside a model file (otherwise as [`StoredTaggerClusters`],
/// with or without a cluster table): a variant of its own, so files of the earlier
/// variants decode and tag as before, and a tagger without rules is written as before.
#[derive(Serialize, Deserialize)]
pub struct StoredTaggerRules {
    tagger: StoredTagger,
    backward: Option<StoredColumn>,
    presets: Option<MarginPresets>,
    case: CaseRules,
    clusters: Option<StoredClusters>,
    rules: TagRules,
}

#[cfg(test)]
mod tests;
