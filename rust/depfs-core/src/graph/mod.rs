//! Graph-based dependency parsing with feature templates.
//!
//! * First order: arc-factored scores (McDonald, Crammer & Pereira 2005, *Online
//!   Large-Margin Training of Dependency Parsers*), decoded with Eisner (projective)
//!   or Chu-Liu-Edmonds (non-projective).
//! * Second order: adjacent siblings (McDonald & Pereira 2006), decoded with Eisner2.
//! * Labels: a second stage, a multiclass perceptron over labels for each predicted arc.
//!
//! Training is online and averaged (lazy averaging): 1-best MIRA (Crammer et al. 2006;
//! McDonald et al. 2005) by default, the structured perceptron (Collins 2002) as an
//! option. Both update only the features of the arcs that differ between gold and
//! predicted tree; we compute that difference exactly (merged by weight index), which
//! gives MIRA its step (Hamming loss minus margin over the squared norm, capped at C)
//! almost for free. On en_ewt MIRA was slightly better (86.7 vs 86.5 UAS at 5–6
//! epochs) and less sensitive to the number of epochs, so it is the default.
//!
//! The feature templates come from [`crate::templates`]; each template owns a block of
//! hashed weights ([`crate::weights`]), so scores restricted to any template subset or
//! group are the same loop over fewer templates.

pub mod chain;
pub mod dynfs;
pub mod label_stop;
pub mod lengthdict;
pub mod score;
pub mod stored;

use crate::decode::arc_max_marginals;
use crate::templates::arc::{ArcFeatures, ArcSent, Second};
use crate::templates::attrs::VocabHashes;
use crate::templates::hash::{combine, fmix, hash_str};
use crate::templates::{Family, TemplateSet};
use crate::treebank::NO_HEAD;
use crate::util::{map_chunks, Rng};
use crate::weights::{rows_for, QuantizedWeights, TemplateCounts, WeightTable, Weights};
use crate::{Error, Result, Treebank, WordStrs};
pub use chain::{DecodeWs, OpenSentence};
pub use dynfs::{Decider, DynRun, DynStats, Dynfs};
pub use lengthdict::{LengthDict, PruneStats};
use score::Split;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Which first-order decoder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DecoderKind {
    /// Projective, O(n³).
    Eisner,
    /// Non-projective maximum spanning tree, O(n²).
    Cle,
}

impl DecoderKind {
    pub fn parse(s: &str) -> Result<DecoderKind> {
        match s {
            "eisner" => Ok(DecoderKind::Eisner),
            "cle" => Ok(DecoderKind::Cle),
            _ => Err(Error::InvalidArgument(format!("unknown decoder {s:?} (eisner or cle)"))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            DecoderKind::Eisner => "eisner",
            DecoderKind::Cle => "cle",
        }
    }
}

/// Hyper-parameters of the graph parser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphConfig {
    /// 1 (arc-factored) or 2 (adjacent siblings, always decoded with Eisner2).
    pub order: u8,
    pub decoder: DecoderKind,
    pub epochs: usize,
    /// Seed of the training order shuffle.
    pub seed: u64,
    /// Block sizes: 2^min_bits ..= 2^max_bits rows, ~2 rows per feature seen on gold parts.
    /// max_bits 18 (default) matched 20 on en_ewt dev at half the model size.
    pub min_bits: u32,
    pub max_bits: u32,
    /// Prune arcs with the length dictionary before scoring (He et al. 2013, §4.2).
    pub prune: bool,
    /// Update rule of the arc (and sibling) weights.
    pub update: Update,
    /// Training decodes with cost-augmented scores, +1 on every non-gold arc, so the
    /// update separates gold from the tree that most violates the Hamming-loss margin
    /// (loss-augmented inference, Taskar et al. 2004; Crammer et al. 2006, §6).
    pub cost_augmented: bool,
}

/// How the structured learner updates on a wrong tree.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Update {
    /// Averaged perceptron: w += φ(gold) − φ(pred).
    Perceptron,
    /// 1-best MIRA (passive-aggressive, Crammer et al. 2006) with the Hamming loss and
    /// step cap `c`, averaged like the perceptron.
    Mira { c: f32 },
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            order: 1,
            decoder: DecoderKind::Eisner,
            epochs: 10,
            seed: 1,
            min_bits: 6,
            max_bits: 18,
            prune: true,
            update: Update::Mira { c: 1.0 },
            cost_augmented: true,
        }
    }
}

/// The three template sets of a graph parser.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphTemplates {
    /// First-order arc templates.
    pub arc: TemplateSet,
    /// Second-order templates (used when order = 2).
    pub sib: TemplateSet,
    /// Labeler templates (arc templates scoring labels).
    pub lab: TemplateSet,
}

impl GraphTemplates {
    /// The shipped default sets.
    pub fn defaults() -> Result<GraphTemplates> {
        use crate::templates::defaults::load;
        Ok(GraphTemplates { arc: load("first_order")?, sib: load("second_order")?, lab: load("labeler")? })
    }

    /// The sets a model of `order` reads (the sibling set only in second order).
    pub fn used(&self, order: u8) -> Vec<&TemplateSet> {
        if order == 2 {
            vec![&self.arc, &self.sib, &self.lab]
        } else {
            vec![&self.arc, &self.lab]
        }
    }

    fn check(&self) -> Result<()> {
        for (name, set, order) in
            [("arc", &self.arc, 1), ("labeler", &self.lab, 1), ("sibling", &self.sib, 2)]
        {
            if set.family != Family::Arc {
                return Err(Error::InvalidArgument(format!("{name} templates must be arc templates")));
            }
            for t in &set.templates {
                let uses_g = t.atoms.iter().any(|a| {
                    matches!(
                        a,
                        crate::templates::Atom::ArcWord { addr: crate::templates::ArcAddr::Grand, .. }
                    )
                });
                if uses_g || t.order() > order {
                    let why = if uses_g {
                        "it reads g (a grandparent), which no graph model reads"
                    } else {
                        "it reads s (a sibling), which only the sibling templates of an order-2 model read"
                    };
                    let article = if name == "arc" { "an" } else { "a" };
                    return Err(Error::Template {
                        text: t.text.clone(),
                        line: 0, // the set's lines are not known here
                        msg: format!("not usable as {article} {name} template: {why}"),
                    });
                }
            }
        }
        Ok(())
    }
}

/// A graph-based parser: 8-bit frozen weights once trained ([`QuantizedWeights`]),
/// f32 [`Weights`] inside the trainer.
#[derive(Debug, Clone)]
pub struct GraphModel<W = QuantizedWeights> {
    pub config: GraphConfig,
    pub templates: GraphTemplates,
    arc: ArcFeatures,
    arc_split: Split,
    sib: ArcFeatures,
    lab: ArcFeatures,
    pub arc_w: W,
    pub sib_w: W,
    pub lab_w: W,
    /// Label strings; the labeler's classes.
    pub labels: Vec<String>,
    pub length_dict: LengthDict,
    /// Hash of the training data (forms, tags, heads, labels).
    pub train_digest: u64,
    /// The input columns parsing needs: read by the templates and filled in training.
    pub inputs: Vec<String>,
    /// Training information kept in the model file (JSON from the Python layer).
    pub info: String,
    /// Dynamic feature selection (He et al. 2013): template groups and lock/add policy.
    pub dynfs: Option<Dynfs>,
}

/// Vocabulary hashes of one treebank for a model's template sets (build once per treebank).
pub struct Prepared {
    upos: VocabHashes,
    arc: VocabHashes,
    sib: VocabHashes,
    lab: VocabHashes,
}

/// Sentences longer than this are parsed in chunks of [`CHUNK_WORDS`]: exact decoding
/// is O(n³) (Eisner) and arc scores O(n²) in time and memory, minutes and gigabytes on
/// a 10,000-word sentence. UD sentences are far shorter (en_ewt's longest: 159 words).
pub const MAX_EXACT_WORDS: usize = 400;
/// Chunk length of a long sentence. Each chunk is parsed as a sentence; the root of
/// every later chunk is attached (label `dep`) to the first chunk's root, so the result
/// is still one single-rooted tree.
pub const CHUNK_WORDS: usize = 200;
/// Chunk length of a long sentence under a second-order model: its sibling parts make a
/// chunk's scoring O(n³), not O(n²) (a 10,000-word sentence in chunks of 200 took 43.7 s
/// against 3.1 s in first order); half the length is an eighth of the work per chunk.
pub const CHUNK_WORDS_2: usize = 100;

/// Number of sentences of `tb` the graph parser decodes in chunks.
pub fn long_sentences(tb: &Treebank) -> usize {
    tb.sentences.iter().filter(|s| s.len as usize > MAX_EXACT_WORDS).count()
}

/// Sentences scored together when parsing (see [`score::add_arc_scores_batch`]).
const PARSE_BATCH: usize = 32;

/// Per-thread buffers reused across sentences.
#[derive(Default)]
pub struct Scratch {
    /// One entry per sentence of a batch.
    batch: Vec<OpenSentence>,
    sib: ArcSent,
    lab: ArcSent,
    sibs: Vec<f64>,
    label_feats: Vec<(u32, u64)>,
    label_scores: Vec<f32>,
    /// The labeler's rows of every word of a sentence, and where each word's start.
    label_rows: Vec<crate::weights::RowAt>,
    label_starts: Vec<usize>,
    /// A sentence's UPOS values, for the DynFS labeler's dictionary.
    upos: crate::templates::attrs::SentAttrs,
    decode: DecodeWs,
}

/// A parse of one sentence: heads (index 0 = ROOT = -1), label indices and, when
/// asked for, each word's margin (index 0 unused; see [`GraphModel::parse_scored`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceParse {
    pub heads: Vec<i32>,
    pub labels: Vec<u32>,
    pub margins: Vec<f32>,
}

/// Margin of a word whose head had no rival (every other arc pruned).
pub const MARGIN_NO_RIVAL: f32 = 999.0;

/// Each word's margin under first-order `scores`, given its decoded head.
///
/// With `tree_level` (first-order Eisner models): the best projective tree's score minus
/// the best projective tree in which the word has another head, from the arc
/// max-marginals — how much the whole tree would have to lose to change this head.
/// O(n³). Otherwise (CLE, second order): the head's arc score minus the best score of
/// another head, which is negative where the decoder overruled the word's best arc.
/// O(n²). Either way `MARGIN_NO_RIVAL` when no other head is left.
fn margins(scores: &[f64], heads: &[i32], tree_level: bool) -> Vec<f32> {
    let n1 = heads.len();
    let tree = if tree_level { arc_max_marginals(scores, n1, true).ok() } else { None };
    let mut out = vec![0f32; n1];
    for m in 1..n1 {
        let h = heads[m] as usize;
        let (row, own) = match &tree {
            Some((mm, best)) => (&mm[m * n1..(m + 1) * n1], *best),
            None => (&scores[m * n1..(m + 1) * n1], scores[m * n1 + h]),
        };
        let rival = (0..n1)
            .filter(|&g| g != h && g != m && row[g].is_finite())
            .map(|g| row[g])
            .fold(f64::NEG_INFINITY, f64::max);
        out[m] = if rival.is_finite() && own.is_finite() { (own - rival) as f32 } else { MARGIN_NO_RIVAL };
    }
    out
}

/// What one training epoch did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EpochStats {
    /// 1 for the first epoch.
    pub epoch: usize,
    /// Share of training words whose head (label) the model predicted before updating
    /// (with cost augmentation, in the cost-augmented decode, so lower than plain UAS).
    pub train_uas: f64,
    pub train_label_acc: f64,
    pub updates: u64,
    pub seconds: f64,
}

/// Digest of a treebank's annotation: forms, UPOS, heads, labels. O(words).
pub fn treebank_digest(tb: &Treebank) -> u64 {
    let v = &tb.vocabs;
    let form: Vec<u64> = v.form.strings().iter().map(|s| hash_str(s)).collect();
    let upos: Vec<u64> = v.upos.strings().iter().map(|s| hash_str(s)).collect();
    let rel: Vec<u64> = v.deprel.strings().iter().map(|s| hash_str(s)).collect();
    let w = &tb.words;
    let mut h = fmix(tb.n_words() as u64);
    for i in 0..w.len() {
        h = combine(h, form[w.form[i] as usize]);
        h = combine(h, upos[w.upos[i] as usize]);
        h = combine(h, w.head[i] as u64);
        h = combine(h, rel[w.deprel[i] as usize]);
    }
    h
}

/// Gold heads of sentence s as a decoder-style vector (heads[0] = -1), if every word
/// has a head in range.
fn gold_heads(tb: &Treebank, s: usize) -> Option<Vec<i32>> {
    let hs = tb.heads(s);
    let n = hs.len() as i32;
    if hs.iter().any(|&h| h == NO_HEAD || h < 0 || h > n) {
        return None;
    }
    let mut v = Vec::with_capacity(hs.len() + 1);
    v.push(-1);
    v.extend_from_slice(hs);
    Some(v)
}

impl GraphModel<Weights> {
    fn build(
        config: GraphConfig,
        templates: GraphTemplates,
        labels: Vec<String>,
    ) -> Result<GraphModel<Weights>> {
        templates.check()?;
        if config.order != 1 && config.order != 2 {
            return Err(Error::InvalidArgument(format!("order must be 1 or 2, got {}", config.order)));
        }
        let arc = ArcFeatures::compile(&templates.arc)?;
        let sib = ArcFeatures::compile(if config.order == 2 { &templates.sib } else { &EMPTY_ARC })?;
        let lab = ArcFeatures::compile(&templates.lab)?;
        let width = labels.len().max(1);
        Ok(GraphModel {
            arc_w: Weights::uniform(arc.len(), 0, 1)?,
            sib_w: Weights::uniform(sib.len(), 0, 1)?,
            lab_w: Weights::uniform(lab.len(), 0, width)?,
            arc_split: Split::new(&arc, &(0..arc.len()).collect::<Vec<_>>()),
            arc,
            sib,
            lab,
            config,
            templates,
            labels,
            length_dict: LengthDict::default(),
            train_digest: 0,
            inputs: Vec::new(),
            info: String::new(),
            dynfs: None,
        })
    }

    /// Averages and quantizes the weights into a parse-ready model.
    fn frozen(&self) -> GraphModel {
        let q = |w: &Weights| QuantizedWeights::quantize(&w.averaged());
        self.with_weights(q(&self.arc_w), q(&self.sib_w), q(&self.lab_w))
    }
}

impl<W> GraphModel<W> {
    /// The same parser with other weight tables (e.g. frozen ones).
    pub(crate) fn with_weights<V>(&self, arc_w: V, sib_w: V, lab_w: V) -> GraphModel<V> {
        GraphModel {
            config: self.config.clone(),
            templates: self.templates.clone(),
            arc: self.arc.clone(),
            arc_split: self.arc_split.clone(),
            sib: self.sib.clone(),
            lab: self.lab.clone(),
            arc_w,
            sib_w,
            lab_w,
            labels: self.labels.clone(),
            length_dict: self.length_dict.clone(),
            train_digest: self.train_digest,
            inputs: self.inputs.clone(),
            info: self.info.clone(),
            dynfs: self.dynfs.clone(),
        }
    }
}

impl<W: WeightTable> GraphModel<W> {
    /// Vocabulary hashes of `tb` for this model's templates. O(vocabulary × attributes).
    pub fn prepare(&self, tb: &Treebank) -> Prepared {
        Prepared {
            upos: LengthDict::upos_hashes(tb),
            arc: VocabHashes::new(tb, &self.arc.attrs),
            sib: VocabHashes::new(tb, &self.sib.attrs),
            lab: VocabHashes::new(tb, &self.lab.attrs),
        }
    }

    pub fn n_arc_templates(&self) -> usize {
        self.arc.len()
    }

    /// An error unless every index of `group` names an arc template.
    fn check_templates(&self, group: &[usize]) -> Result<()> {
        match group.iter().find(|&&t| t >= self.arc.len()) {
            Some(bad) => Err(Error::InvalidArgument(format!(
                "template index {bad} out of range ({} arc templates)",
                self.arc.len()
            ))),
            None => Ok(()),
        }
    }

    /// First-order arc scores of sentence s, restricted to the arc templates `active`
    /// (all when `None`): `scores[m * n1 + h]`, n1 = words + 1; with `prune`, arcs the
    /// length dictionary rejects are -inf. The chain with one group.
    #[allow(clippy::too_many_arguments)]
    pub fn arc_scores(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        active: Option<&[usize]>,
        prune: bool,
        counts: Option<&mut TemplateCounts>,
        scratch: &mut Scratch,
    ) -> Result<Vec<f64>> {
        let o = &mut scratch.prepare_batch(1)[0];
        self.open_pruned(tb, prep, s, prune, o);
        match active {
            Some(group) => self.add_group(o, group, None, counts)?,
            None => {
                let mut item =
                    [score::ToScore { sent: &o.arc, mask: prune.then_some(&o.open), out: &mut o.scores }];
                score::add_arc_scores_batch(&self.arc, &self.arc_w, &mut item, &self.arc_split, counts);
            }
        }
        Ok(std::mem::take(&mut o.scores))
    }

    /// Parses sentence s: decode, then label each arc.
    pub fn parse_sentence(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        sc: &mut Scratch,
    ) -> Result<SentenceParse> {
        self.parse_batch(tb, prep, &[s], sc, false).pop().expect("one sentence")
    }

    /// Parses sentences `ss` (arc scores computed for all of them at once, see
    /// [`score::add_arc_scores_batch`]), then decodes and labels each.
    fn parse_batch(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        ss: &[usize],
        sc: &mut Scratch,
        with_margins: bool,
    ) -> Vec<Result<SentenceParse>> {
        self.score_batch(tb, prep, ss, sc);
        let tree_level = self.config.order == 1 && self.config.decoder == DecoderKind::Eisner;
        ss.iter()
            .enumerate()
            .map(|(i, &s)| {
                let heads = self.decode_scored(tb, prep, s, i, sc)?;
                let labels = self.label(tb, prep, s, &heads, sc);
                let margins =
                    if with_margins { margins(&sc.batch[i].scores, &heads, tree_level) } else { Vec::new() };
                Ok(SentenceParse { heads, labels, margins })
            })
            .collect()
    }

    /// Arc scores of sentences `ss` into `sc.batch[..ss.len()]`: the chain with one
    /// group (all templates), several sentences at once.
    fn score_batch(&self, tb: &Treebank, prep: &Prepared, ss: &[usize], sc: &mut Scratch) {
        let pruned = self.config.prune;
        for (o, &s) in sc.prepare_batch(ss.len()).iter_mut().zip(ss) {
            self.open_sentence(tb, prep, s, o);
        }
        let mut items: Vec<score::ToScore<'_>> = sc.batch[..ss.len()]
            .iter_mut()
            .map(|o| score::ToScore {
                sent: &o.arc,
                mask: pruned.then_some(o.open.as_slice()),
                out: &mut o.scores,
            })
            .collect();
        score::add_arc_scores_batch(&self.arc, &self.arc_w, &mut items, &self.arc_split, None);
    }

    /// Decodes sentence s from its arc scores in `sc.batch[i]` (adding sibling scores
    /// for second order).
    fn decode_scored(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        i: usize,
        sc: &mut Scratch,
    ) -> Result<Vec<i32>> {
        if self.config.order == 2 {
            self.sib.prepare(&prep.sib, tb, s, &mut sc.sib);
            let all2: Vec<usize> = (0..self.sib.len()).collect();
            score::sibling_scores(&self.sib, &self.sib_w, &sc.sib, &all2, &mut sc.sibs);
        }
        let b = &mut sc.batch[i];
        let n1 = b.arc.n1;
        match self.run_decoder(&mut sc.decode, &b.scores, &sc.sibs, n1) {
            // The dictionary may leave no tree (e.g. no word may attach to ROOT): score everything.
            Err(Error::NoSpanningTree(_)) if self.config.prune => {
                score::arc_scores(&self.arc, &self.arc_w, &b.arc, &self.arc_split, None, &mut b.scores, None);
                self.run_decoder(&mut sc.decode, &b.scores, &sc.sibs, n1)
            }
            other => other,
        }
    }

    fn run_decoder(&self, ws: &mut DecodeWs, scores: &[f64], sibs: &[f64], n1: usize) -> Result<Vec<i32>> {
        if self.config.order == 2 {
            ws.second(scores, sibs, n1)
        } else {
            ws.first(self.config.decoder, scores, n1)
        }
    }

    /// The index of the label `root` among the labeler's classes, if it has one. UD's
    /// rule, that a word takes `root` exactly when its head is ROOT, then holds for
    /// every parse ([`Self::label`]): an arc from ROOT is labelled `root`, another arc
    /// anything else. Training on UD never breaks it; the labeler alone, an argmax over
    /// every label whatever the arc, did on small or mismatched models. O(L).
    pub fn root_label(&self) -> Option<u32> {
        self.labels.iter().position(|l| l == "root").map(|i| i as u32)
    }

    /// The words of `heads` whose label the labeler computes: all but those attached
    /// to ROOT when the rule of [`Self::root_label`] gives theirs. O(n).
    pub fn labelled_words(&self, heads: &[i32]) -> u64 {
        let words = heads.iter().skip(1);
        match self.root_label() {
            Some(_) => words.filter(|&&h| h != 0).count() as u64,
            None => words.count() as u64,
        }
    }

    /// The labeler stage: a label index (into `labels`) for every arc of `heads`
    /// (heads[0] = -1; out[0] is unused), under UD's root rule ([`Self::root_label`]).
    /// O(n · T_lab · L).
    pub fn label(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        heads: &[i32],
        sc: &mut Scratch,
    ) -> Vec<u32> {
        let w = &self.lab_w;
        self.lab.prepare(&prep.lab, tb, s, &mut sc.lab);
        sc.label_scores.resize(w.width(), 0.0);
        // Every word's rows are located first, so that the next word's are prefetched
        // while one word's are summed (the reads are cache misses); the rows and their
        // order are those of `score::label_scores`, and so are the sums.
        let (rows, starts) = (&mut sc.label_rows, &mut sc.label_starts);
        rows.clear();
        starts.clear();
        starts.push(0);
        let root = self.root_label();
        for (m, &h) in heads.iter().enumerate().skip(1) {
            if root.is_some() && h == 0 {
                starts.push(rows.len()); // its label is `root`: no rows
                continue;
            }
            for t in 0..self.lab.len() {
                self.lab.for_each(&sc.lab, t, h as usize, m, Second::default(), |f| {
                    rows.push(crate::weights::RowAt { start: w.row_start(t, f), template: t })
                });
            }
            starts.push(rows.len());
        }
        let mut out = vec![0u32; heads.len()];
        if let Some(&first) = starts.get(1) {
            w.prefetch_rows(&rows[..first]);
        }
        for m in 1..heads.len() {
            if m + 1 < starts.len() {
                w.prefetch_rows(&rows[starts[m]..starts[m + 1]]);
            }
            sc.label_scores.fill(0.0);
            w.add_located_rows(&rows[starts[m - 1]..starts[m]], &mut sc.label_scores);
            out[m] = match root {
                Some(r) if heads[m] == 0 => r,
                Some(r) => {
                    sc.label_scores[r as usize] = f32::NEG_INFINITY;
                    score::argmax(&sc.label_scores) as u32
                }
                None => score::argmax(&sc.label_scores) as u32,
            };
        }
        out
    }

    /// Parses every sentence of `tb` with `threads` threads (0 = all cores) and
    /// returns a copy of `tb` with HEAD and DEPREL set; sentences longer than
    /// [`MAX_EXACT_WORDS`] are parsed in chunks.
    pub fn parse(&self, tb: &Treebank, threads: usize) -> Result<Treebank> {
        Ok(self.parse_scored(tb, threads, false)?.0)
    }

    /// [`Self::parse`], and with `margins` each word's margin (flat over the treebank's
    /// words): with first-order Eisner, the best tree's score minus the best tree's in
    /// which the word has another head; otherwise its head's arc score minus the best
    /// score of another head, after decoding ([`MARGIN_NO_RIVAL`] when the length
    /// dictionary left no other head). See `margins`.
    pub fn parse_scored(&self, tb: &Treebank, threads: usize, margins: bool) -> Result<(Treebank, Vec<f32>)> {
        self.with_chunks(tb, |t| self.parse_exact(t, threads, margins))
    }

    /// Runs `parse` on `tb`, sentences longer than [`MAX_EXACT_WORDS`] cut into chunks
    /// parsed as sentences of their own and joined into one tree again.
    fn with_chunks(
        &self,
        tb: &Treebank,
        mut parse: impl FnMut(&Treebank) -> Result<(Treebank, Vec<f32>)>,
    ) -> Result<(Treebank, Vec<f32>)> {
        if long_sentences(tb) == 0 {
            return parse(tb);
        }
        // Long sentences become chunks (sentences of their own), parsed with the rest.
        let mut chunks = Treebank::new();
        let mut pieces: Vec<(usize, usize)> = Vec::new(); // (sentence, first word of the chunk)
        for (s, meta) in tb.sentences.iter().enumerate() {
            let (start, n) = (meta.start as usize, meta.len as usize);
            let chunk = if self.config.order == 2 { CHUNK_WORDS_2 } else { CHUNK_WORDS };
            let size = if n > MAX_EXACT_WORDS { chunk } else { n.max(1) };
            for first in (0..n).step_by(size) {
                let words: Vec<WordStrs<'_>> = (start + first..start + (first + size).min(n))
                    .map(|i| WordStrs { head: NO_HEAD, ..tb.word_strs(i) })
                    .collect();
                chunks.push_sentence(&words, Vec::new());
                pieces.push((s, first));
            }
        }
        // The chunks hold the words in their order: their margins are the sentence's.
        let (parsed, flat) = parse(&chunks)?;
        let mut out = tb.clone();
        out.clear_margins(); // the input's margins are of other heads
        let mut root_of: Vec<Option<i32>> = vec![None; tb.len()];
        for (c, &(s, first)) in pieces.iter().enumerate() {
            let (cs, os) = (parsed.sentences[c].start as usize, out.sentences[s].start as usize);
            for j in 0..parsed.sentences[c].len as usize {
                let (h, i) = (parsed.words.head[cs + j], os + first + j);
                let label = parsed.vocabs.deprel.str(parsed.words.deprel[cs + j]).to_string();
                if h != 0 {
                    out.words.head[i] = h + first as i32;
                    out.set_deprel(i, &label);
                } else if let Some(r) = root_of[s] {
                    out.words.head[i] = r;
                    out.set_deprel(i, "dep");
                } else {
                    root_of[s] = Some((first + j + 1) as i32);
                    out.words.head[i] = 0;
                    out.set_deprel(i, &label);
                }
            }
        }
        Ok((out, flat))
    }

    fn parse_exact(&self, tb: &Treebank, threads: usize, margins: bool) -> Result<(Treebank, Vec<f32>)> {
        let prep = self.prepare(tb);
        let parses = map_chunks(threads, tb.len(), PARSE_BATCH, Scratch::default, |sc, ss| {
            self.parse_batch(tb, &prep, &ss.collect::<Vec<usize>>(), sc, margins)
        })?;
        let parses = parses.into_iter().collect::<Result<Vec<_>>>()?;
        let flat = if margins {
            parses.iter().flat_map(|p| p.margins.iter().skip(1).copied()).collect()
        } else {
            Vec::new()
        };
        Ok((self.write_parses(tb, parses), flat))
    }

    /// A copy of `tb` with the heads and labels of `parses` (one per sentence).
    fn write_parses(&self, tb: &Treebank, parses: Vec<SentenceParse>) -> Treebank {
        let mut out = tb.clone();
        out.clear_margins(); // the input's margins are of other heads
        for (s, p) in parses.into_iter().enumerate() {
            let start = out.sentences[s].start as usize;
            for m in 1..p.heads.len() {
                out.words.head[start + m - 1] = p.heads[m];
                let label = self.labels.get(p.labels[m] as usize).map_or("dep", String::as_str);
                out.set_deprel(start + m - 1, label);
            }
        }
        out
    }
}

static EMPTY_ARC: TemplateSet = TemplateSet { family: Family::Arc, templates: Vec::new() };

/// Trains a graph parser epoch by epoch (the caller owns the epoch loop, e.g. for a
/// progress bar and dev scores).
pub struct GraphTrainer {
    model: GraphModel<Weights>,
    train: Treebank,
    prep: Prepared,
    /// Sentences trained on (see [`GraphTrainer::used_sentences`]).
    usable: Vec<usize>,
    label_of: Vec<u32>,
    rng: Rng,
    epoch: usize,
    pub skipped_sentences: usize,
    /// Prefix training: the arc template groups whose every prefix is trained as a
    /// parser of its own (see [`GraphTrainer::set_prefix_groups`]).
    prefix: Option<Vec<Vec<usize>>>,
    /// Prefix training of the labeler (see [`GraphTrainer::set_label_prefix`]).
    label_prefix: Option<LabelPrefix>,
}

/// The labeler's prefix objective: Strubell et al. (2015), §4.4, on each gold arc's label.
#[derive(Debug, Clone)]
struct LabelPrefix {
    /// The labeler's templates in the order the stop adds them.
    order: Vec<usize>,
    /// Prefixes end after every `every`-th template of the order (and at its end).
    every: usize,
    /// A prefix whose gold label leads the best other by less is updated; the first
    /// that leads by this much ends the word's updates (i* of Algorithm 2).
    margin: f32,
    /// The whole sum's ordinary step is this size (Strubell et al.'s "full" term: the
    /// prefixes' steps pile up on the early templates; the sum the stop falls back on
    /// needs as strong a lesson).
    full: f32,
}

impl Scratch {
    /// The first `n` batch entries (allocated on first use).
    fn prepare_batch(&mut self, n: usize) -> &mut [OpenSentence] {
        if self.batch.len() < n {
            self.batch.resize_with(n, OpenSentence::default);
        }
        &mut self.batch[..n]
    }
}

/// The prefix steps of one gold arc h → d labelled `want` ([`GraphTrainer::set_label_prefix`]).
#[allow(clippy::too_many_arguments)]
fn label_prefix_steps(
    m: &mut GraphModel<Weights>,
    sent: &ArcSent,
    lp: &LabelPrefix,
    h: usize,
    d: usize,
    want: usize,
    root: Option<u32>,
    scores: &mut [f32],
) {
    scores.fill(0.0);
    let mut feats: Vec<(usize, u64)> = Vec::new();
    let n_t = lp.order.len();
    let mut j = 0;
    while j < n_t {
        let end = (j + lp.every).min(n_t);
        let start = feats.len();
        for &t in &lp.order[j..end] {
            m.lab.for_each(sent, t, h, d, Second::default(), |f| feats.push((t, f)));
        }
        for &(t, f) in &feats[start..] {
            m.lab_w.add_row(t, f, scores);
        }
        let other = (0..scores.len())
            .filter(|&l| l != want && Some(l as u32) != root)
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(b.cmp(&a)));
        let Some(other) = other else { return };
        if scores[want] - scores[other] >= lp.margin {
            return;
        }
        for &(t, f) in &feats {
            m.lab_w.update(t, f, want, 1.0);
            m.lab_w.update(t, f, other, -1.0);
        }
        // The scores go on from the weights as they were (the next prefix's sum is
        // this one's plus its templates), as Algorithm 2 computes every prefix first.
        j = end;
    }
}

/// Cost augmentation: +1 on every arc that is not gold (when `on`).
fn augment(scores: &mut [f64], gold: &[i32], on: bool) {
    if !on {
        return;
    }
    let n1 = gold.len();
    for d in 1..n1 {
        for h in (0..n1).filter(|&h| h as i32 != gold[d]) {
            scores[d * n1 + h] += 1.0;
        }
    }
}

impl GraphModel<Weights> {
    /// Decodes sentence s from the scores in `sc.batch[0]`, cost-augmented when the
    /// config says so.
    fn decode_augmented(
        &self,
        tb: &Treebank,
        prep: &Prepared,
        s: usize,
        gold: &[i32],
        sc: &mut Scratch,
    ) -> Result<Vec<i32>> {
        augment(&mut sc.batch[0].scores, gold, self.config.cost_augmented);
        self.decode_scored(tb, prep, s, 0, sc)
    }

    /// The structured update on a wrong tree: MIRA (or perceptron) on φ(gold) − φ(pred)
    /// over the arc templates `arc_templates` (all when `None`; sibling templates too in
    /// second order), features from `sc` (arc partials in `sc.batch[0]`, siblings in
    /// `sc.sib`). Returns the number of wrong heads.
    fn structured_update(
        &mut self,
        sc: &Scratch,
        gold: &[i32],
        pred: &[i32],
        arc_templates: Option<&[usize]>,
    ) -> usize {
        let m = self;
        if pred == gold {
            return 0;
        }
        let all: Vec<usize>;
        let arc_ts = match arc_templates {
            Some(t) => t,
            None => {
                all = (0..m.arc.len()).collect();
                &all
            }
        };
        // The feature difference φ(gold) − φ(pred) as (table, weight index, ±1);
        // in first order only the arcs that differ contribute.
        let mut diff: Vec<(u8, usize, f32)> = Vec::new();
        let mut wrong = 0usize;
        for d in 1..gold.len() {
            if pred[d] != gold[d] {
                wrong += 1;
                let (g, p) = (gold[d] as usize, pred[d] as usize);
                for &t in arc_ts {
                    m.arc.for_each(&sc.batch[0].arc, t, g, d, Second::default(), |f| {
                        diff.push((0, m.arc_w.row_start(t, f), 1.0))
                    });
                    m.arc.for_each(&sc.batch[0].arc, t, p, d, Second::default(), |f| {
                        diff.push((0, m.arc_w.row_start(t, f), -1.0))
                    });
                }
            }
        }
        if m.config.order == 2 && arc_templates.is_none() {
            for (heads, delta) in [(gold, 1.0f32), (pred, -1.0)] {
                let sibs = crate::heads::siblings(&heads[1..]);
                for d in 1..heads.len() {
                    let second = Second { sib: sibs[d], grand: None };
                    for t in 0..m.sib.len() {
                        m.sib.for_each(&sc.sib, t, heads[d] as usize, d, second, |f| {
                            diff.push((1, m.sib_w.row_start(t, f), delta))
                        });
                    }
                }
            }
        }
        // Merge repeated weights so the norm and margin are exact.
        diff.sort_unstable_by_key(|&(k, i, _)| (k, i));
        let mut merged: Vec<(u8, usize, f32)> = Vec::with_capacity(diff.len());
        for (k, i, d) in diff {
            match merged.last_mut() {
                Some(last) if last.0 == k && last.1 == i => last.2 += d,
                _ => merged.push((k, i, d)),
            }
        }
        merged.retain(|x| x.2 != 0.0);
        let step = match m.config.update {
            Update::Perceptron => 1.0,
            Update::Mira { c } => {
                // 1-best MIRA / PA-I: smallest step that separates gold from pred by
                // the Hamming loss, capped at c.
                let (mut margin, mut norm) = (0f64, 0f64);
                for &(k, i, d) in &merged {
                    let w = if k == 0 { m.arc_w.at(i) } else { m.sib_w.at(i) };
                    margin += (d * w) as f64;
                    norm += (d * d) as f64;
                }
                if norm > 0.0 {
                    ((wrong as f64 - margin) / norm).clamp(0.0, c as f64) as f32
                } else {
                    0.0
                }
            }
        };
        if step > 0.0 {
            for (k, i, d) in merged {
                if k == 0 {
                    m.arc_w.update_at(i, step * d);
                } else {
                    m.sib_w.update_at(i, step * d);
                }
            }
        }
        wrong
    }
}

impl GraphTrainer {
    /// Sets up training on `train`: labels, length dictionary, block sizes from a count
    /// of the features of gold parts (one template at a time, O(T × words)).
    pub fn new(train: &Treebank, templates: GraphTemplates, config: GraphConfig) -> Result<GraphTrainer> {
        // Trained on: sentences with a complete single-rooted gold tree of at most
        // MAX_EXACT_WORDS words. A longer one costs O(n³) time and O(n²) memory per decode
        // (a 5,000-word sentence: minutes and gigabytes per epoch); parsing cuts it into
        // chunks instead. One with several roots is a tree no decode gives (each gives one
        // root): an update towards it is no lesson (the arc-eager parser skips it too).
        let one_root = |s: usize| train.heads(s).iter().filter(|&&h| h == 0).count() == 1;
        let usable: Vec<usize> = (0..train.len())
            .filter(|&s| {
                train.sentences[s].len as usize <= MAX_EXACT_WORDS
                    && gold_heads(train, s).is_some()
                    && one_root(s)
            })
            .collect();
        if usable.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "no training sentence has a complete single-rooted tree (HEAD column) of at most \
                 {MAX_EXACT_WORDS} words"
            )));
        }
        let mut labels: Vec<String> = usable
            .iter()
            .flat_map(|&s| train.deprels(s).iter().map(|&d| train.vocabs.deprel.str(d).to_string()))
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        labels.sort();
        let index: HashMap<&str, u32> =
            labels.iter().enumerate().map(|(i, l)| (l.as_str(), i as u32)).collect();
        let label_of =
            train.vocabs.deprel.strings().iter().map(|s| index.get(&**s).copied().unwrap_or(0)).collect();
        let mut model = GraphModel::build(config.clone(), templates, labels.clone())?;
        model.length_dict = LengthDict::build(train);
        model.train_digest = treebank_digest(train);
        model.inputs = crate::io::model::needed_columns(&model.templates.used(config.order), train);
        let prep = model.prepare(train);

        // Block sizes from the number of distinct gold-part features per template.
        let mut sent = ArcSent::default();
        let sized = |af: &ArcFeatures, vh: &VocabHashes, sent: &mut ArcSent, second: bool| -> Vec<usize> {
            // Distinct counts by sort + dedup (cheaper than hashing into sets).
            let mut sets: Vec<Vec<u64>> = vec![Vec::new(); af.len()];
            for &s in &usable {
                af.prepare(vh, train, s, sent);
                let heads = gold_heads(train, s).unwrap_or_default();
                let sibs = crate::heads::siblings(&heads[1..]);
                for m in 1..heads.len() {
                    let h = heads[m] as usize;
                    let second = Second { sib: if second { sibs[m] } else { None }, grand: None };
                    for (t, set) in sets.iter_mut().enumerate() {
                        af.for_each(sent, t, h, m, second, |f| set.push(f));
                    }
                }
            }
            sets.iter_mut()
                .map(|s| {
                    s.sort_unstable();
                    s.dedup();
                    rows_for(s.len(), config.min_bits, config.max_bits)
                })
                .collect()
        };
        // Label rows are `width` wide: cap a label block at the weights of the largest arc block.
        let label_bits = config.max_bits.saturating_sub(labels.len().max(1).ilog2()).max(config.min_bits);
        let arc_rows = sized(&model.arc, &prep.arc, &mut sent, false);
        let sib_rows = sized(&model.sib, &prep.sib, &mut sent, true);
        let lab_rows: Vec<usize> = sized(&model.lab, &prep.lab, &mut sent, false)
            .into_iter()
            .map(|r| r.min(1 << label_bits))
            .collect();
        model.arc_w = Weights::new(&arc_rows, 1)?;
        model.sib_w = Weights::new(&sib_rows, 1)?;
        model.lab_w = Weights::new(&lab_rows, labels.len().max(1))?;
        for w in [&mut model.arc_w, &mut model.sib_w, &mut model.lab_w] {
            w.start_averaging();
        }
        Ok(GraphTrainer {
            model,
            train: train.clone(),
            prep,
            skipped_sentences: train.len() - usable.len(),
            usable,
            label_of,
            rng: Rng::new(config.seed),
            epoch: 0,
            prefix: None,
            label_prefix: None,
        })
    }

    /// Trains every prefix of `groups` (a partition of the arc templates) instead of the
    /// whole set only: each sentence is decoded after each group is added (CLE before the
    /// last group, the model's decoder after it, as dynamic feature selection parses) and
    /// every wrong prefix tree gets an update on that prefix's templates. The prefix
    /// objective of Strubell et al. (2015, §4.4), applied to the graph parser so that
    /// the partial scores He et al.'s (2013) early rounds decide on are parsers of their
    /// own, not fragments of the full model. First order only.
    pub fn set_prefix_groups(&mut self, groups: Vec<Vec<u32>>) -> Result<()> {
        if self.model.config.order != 1 {
            return Err(Error::InvalidArgument("prefix training is first-order only".into()));
        }
        let k = groups.len();
        Dynfs {
            groups: groups.clone(),
            weights: vec![0.0; dynfs::n_features(k)],
            threshold: 0.0,
            arc_w: None,
            prune_margin: None,
            tree_margin: None,
            label: None,
            lex: Vec::new(),
        }
        .check(self.model.arc.len(), 0)?;
        self.prefix = Some(groups.into_iter().map(|g| g.into_iter().map(|t| t as usize).collect()).collect());
        Ok(())
    }

    /// Trains the labeler's every prefix as a labeler of its own: Strubell et al. (2015),
    /// §4.4 (Algorithm 2, perceptron steps), for the DynFS labeler's stop
    /// ([`super::label_stop`]), which adds the templates in `order` and checks the lead
    /// after every `every`-th. For each gold arc, the prefixes are added in turn until
    /// the gold label leads every other by `margin`; each prefix before that takes a
    /// perceptron step (+1 gold, −1 the best other label) on its templates, so template
    /// j is stepped once per violating prefix that holds it. The whole sum is then
    /// trained as the ordinary labeler is (a step when its best is wrong), since a word
    /// no prefix settles takes the whole sum's label. As the stop parses: an arc from
    /// ROOT is not trained (it takes `root`), and `root` never competes for another.
    /// O(T_lab · L) per word and prefix.
    pub fn set_label_prefix(&mut self, order: Vec<u32>, every: usize, margin: f32, full: f32) -> Result<()> {
        let n = self.model.lab.len();
        let mut seen = vec![false; n];
        for &t in &order {
            match seen.get_mut(t as usize) {
                Some(s) if !*s => *s = true,
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "label prefix: the order must be a permutation of 0..{n}"
                    )))
                }
            }
        }
        if order.len() != n
            || every == 0
            || margin.is_nan()
            || margin < 0.0
            || !(full.is_finite() && full >= 0.0)
        {
            return Err(Error::InvalidArgument(format!(
                "label prefix: need a permutation of 0..{n}, every >= 1, a margin >= 0 and a finite full step >= 0"
            )));
        }
        self.label_prefix =
            Some(LabelPrefix { order: order.into_iter().map(|t| t as usize).collect(), every, margin, full });
        Ok(())
    }

    /// One pass over the shuffled training sentences. O(Σ n² T) plus decoding.
    pub fn epoch(&mut self) -> Result<EpochStats> {
        let t0 = std::time::Instant::now();
        let mut order = self.usable.clone();
        self.rng.shuffle(&mut order);
        let mut sc = Scratch::default();
        let (mut words, mut head_ok, mut label_ok, mut updates) = (0u64, 0u64, 0u64, 0u64);
        let m = &mut self.model;
        for &s in &order {
            let gold = gold_heads(&self.train, s).unwrap_or_default();
            words += (gold.len() - 1) as u64;
            let wrong = match &self.prefix {
                None => {
                    m.score_batch(&self.train, &self.prep, &[s], &mut sc);
                    let pred = m.decode_augmented(&self.train, &self.prep, s, &gold, &mut sc)?;
                    m.structured_update(&sc, &gold, &pred, None)
                }
                Some(groups) => {
                    let mut wrong = 0;
                    m.open_sentence(&self.train, &self.prep, s, &mut sc.prepare_batch(1)[0]);
                    for k in 0..groups.len() {
                        m.add_group(&mut sc.batch[0], &groups[k], None, None)?;
                        let o = &sc.batch[0];
                        let mut scores = o.scores.clone();
                        augment(&mut scores, &gold, m.config.cost_augmented);
                        let kind = if k + 1 < groups.len() { DecoderKind::Cle } else { m.config.decoder };
                        let pred = match sc.decode.first(kind, &scores, o.n1()) {
                            Ok(p) => p,
                            Err(Error::NoSpanningTree(_)) => continue, // the dictionary left no tree
                            Err(e) => return Err(e),
                        };
                        let prefix: Vec<usize> = groups[..=k].iter().flatten().copied().collect();
                        wrong = m.structured_update(&sc, &gold, &pred, Some(&prefix));
                    }
                    wrong
                }
            };
            head_ok += (gold.len() - 1 - wrong) as u64;
            updates += u64::from(wrong > 0);
            // Labeler: multiclass perceptron on the gold arcs.
            m.lab.prepare(&self.prep.lab, &self.train, s, &mut sc.lab);
            sc.label_scores.resize(m.lab_w.width(), 0.0);
            let rels = self.train.deprels(s);
            let root = m.root_label();
            for d in 1..gold.len() {
                let h = gold[d] as usize;
                if let Some(lp) = &self.label_prefix {
                    if !(h == 0 && root.is_some()) {
                        let want = self.label_of[rels[d - 1] as usize] as usize;
                        label_prefix_steps(m, &sc.lab, lp, h, d, want, root, &mut sc.label_scores);
                    }
                }
                score::label_scores(
                    &m.lab,
                    &m.lab_w,
                    &sc.lab,
                    h,
                    d,
                    &mut sc.label_feats,
                    &mut sc.label_scores,
                );
                let guess = score::argmax(&sc.label_scores);
                let want = self.label_of[rels[d - 1] as usize] as usize;
                if guess == want {
                    label_ok += 1;
                } else {
                    let step = self.label_prefix.as_ref().map_or(1.0, |lp| lp.full);
                    for t in 0..m.lab.len() {
                        m.lab.for_each(&sc.lab, t, h, d, Second::default(), |f| {
                            m.lab_w.update(t, f, want, step);
                            m.lab_w.update(t, f, guess, -step);
                        });
                    }
                }
            }
            for w in [&mut m.arc_w, &mut m.sib_w, &mut m.lab_w] {
                w.tick();
            }
        }
        self.epoch += 1;
        Ok(EpochStats {
            epoch: self.epoch,
            train_uas: head_ok as f64 / words.max(1) as f64,
            train_label_acc: label_ok as f64 / words.max(1) as f64,
            updates,
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    /// The model with averaged, quantized weights (a copy; training can continue).
    pub fn model(&self) -> GraphModel {
        self.model.frozen()
    }

    /// The model with averaged f32 weights (to measure what quantization costs).
    pub fn model_f32(&self) -> GraphModel<Weights> {
        let m = &self.model;
        m.with_weights(m.arc_w.averaged(), m.sib_w.averaged(), m.lab_w.averaged())
    }

    pub fn epochs_done(&self) -> usize {
        self.epoch
    }

    /// The sentences trained on, in treebank order: those with a complete gold tree of
    /// at most [`MAX_EXACT_WORDS`] words.
    pub fn used_sentences(&self) -> &[usize] {
        &self.usable
    }
}

/// Trains for `config.epochs` epochs; `on_epoch` sees each epoch's stats.
pub fn train(
    tb: &Treebank,
    templates: GraphTemplates,
    config: GraphConfig,
    mut on_epoch: impl FnMut(&EpochStats, &GraphTrainer),
) -> Result<GraphModel> {
    let epochs = config.epochs;
    let mut tr = GraphTrainer::new(tb, templates, config)?;
    for _ in 0..epochs {
        let st = tr.epoch()?;
        on_epoch(&st, &tr);
    }
    Ok(tr.model())
}

#[cfg(test)]
mod tests;
