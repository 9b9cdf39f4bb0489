//! Trajectories as replayable move histories (spaCy's `follow_history` idea).
//!
//! A trajectory set stores, per decision, only the sentence, the move followed and
//! what the oracle and the model said (valid and zero-cost kinds, gold arc labels, the
//! model's move): about 30 bytes a decision, ~12 MB for every configuration of en_ewt
//! train. Features are never stored: [`Trajectories::features`] replays the moves and
//! extracts the features of any template set on demand, so the selection methods can
//! ask for thousands of candidate templates without an (n × all templates) matrix.
//!
//! Recorded by [`super::guide::MixtureGuide`] (DAgger: oracle with probability beta,
//! else the model) from [`super::parser::ArcEagerParser::trajectories`].

use std::sync::Arc;

use super::guide::{gold_label, run, Guide, Step, Work};
use super::local::LabelSet;
use super::oracle::KindCosts;
use super::parser::{valid_mask, N_KINDS};
use super::system::Configuration;
use crate::templates::attrs::VocabHashes;
use crate::templates::config_feats::ConfigFeatures;
use crate::templates::TemplateSet;
use crate::treebank::Treebank;
use crate::util::map_chunks;
use crate::{Error, Result};

/// No label (an arc move that is not a gold arc).
pub const NO_LABEL: u32 = u32::MAX;

/// Decisions along trajectories, flat arrays in decision order, sentence after sentence.
#[derive(Debug, Clone)]
pub struct Trajectories {
    /// The treebank the moves replay on (projectivised when the parser is).
    pub treebank: Arc<Treebank>,
    /// The recording parser's labels (label ids index them).
    pub labels: LabelSet,
    /// Sentence of each decision (a sentence's decisions are contiguous).
    pub sentence: Vec<u32>,
    /// The move kind followed and its label (0 for SHIFT and REDUCE).
    pub followed: Vec<u8>,
    pub label: Vec<u32>,
    /// `valid[i * 4 + k]`, `zero_cost[i * 4 + k]` for move kinds k.
    pub valid: Vec<bool>,
    pub zero_cost: Vec<bool>,
    /// The label a zero-cost LEFT-ARC / RIGHT-ARC must carry ([`NO_LABEL`]: any).
    pub gold_left: Vec<u32>,
    pub gold_right: Vec<u32>,
    /// The model's best valid move kind.
    pub model_move: Vec<u8>,
}

impl PartialEq for Trajectories {
    fn eq(&self, o: &Self) -> bool {
        (&self.sentence, &self.followed, &self.label, &self.valid, &self.zero_cost)
            == (&o.sentence, &o.followed, &o.label, &o.valid, &o.zero_cost)
            && (&self.gold_left, &self.gold_right, &self.model_move)
                == (&o.gold_left, &o.gold_right, &o.model_move)
    }
}

impl Trajectories {
    pub fn new(treebank: Arc<Treebank>, labels: LabelSet) -> Self {
        Trajectories {
            treebank,
            labels,
            sentence: Vec::new(),
            followed: Vec::new(),
            label: Vec::new(),
            valid: Vec::new(),
            zero_cost: Vec::new(),
            gold_left: Vec::new(),
            gold_right: Vec::new(),
            model_move: Vec::new(),
        }
    }
    pub fn len(&self) -> usize {
        self.sentence.len()
    }
    pub fn is_empty(&self) -> bool {
        self.sentence.is_empty()
    }

    /// Records one decision.
    pub fn push(
        &mut self,
        sentence: u32,
        step: Step,
        valid: &[bool; N_KINDS],
        zero: &[bool; N_KINDS],
        costs: &KindCosts,
        model: usize,
    ) {
        self.sentence.push(sentence);
        self.followed.push(step.kind as u8);
        self.label.push(step.label);
        self.valid.extend_from_slice(valid);
        self.zero_cost.extend_from_slice(zero);
        self.gold_left.push(gold_label(costs, super::parser::LEFT).unwrap_or(NO_LABEL));
        self.gold_right.push(gold_label(costs, super::parser::RIGHT).unwrap_or(NO_LABEL));
        self.model_move.push(model as u8);
    }

    /// Heap bytes of the stored decisions (the treebank is shared, not counted).
    pub fn heap_bytes(&self) -> usize {
        self.len() * (4 + 1 + 4 + 2 * N_KINDS + 4 + 4 + 1)
    }

    /// Ranges of decisions, one per sentence, in order.
    fn runs(&self) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        let mut start = 0;
        for i in 1..=self.len() {
            if i == self.len() || self.sentence[i] != self.sentence[start] {
                out.push(start..i);
                start = i;
            }
        }
        out
    }

    /// Features of every template of `set` (configuration family) at every decision:
    /// `out[i * |set| + t]`, the same values a parser with these templates extracts
    /// there. Replays the stored moves on `threads` threads (0 = all cores).
    /// O(decisions · (atoms of `set` + |set|)).
    pub fn features(&self, set: &TemplateSet, threads: usize) -> Result<Vec<u64>> {
        let feats = ConfigFeatures::compile(set)?;
        let tb = &*self.treebank;
        let vh = VocabHashes::new(tb, &feats.attrs);
        let runs = self.runs();
        if let Some(r) = runs.iter().find(|r| self.sentence[r.start] as usize >= tb.len()) {
            return Err(Error::InvalidArgument(format!(
                "trajectory sentence {} is not in the treebank ({} sentences)",
                self.sentence[r.start],
                tb.len()
            )));
        }
        let t = feats.len();
        let per_sentence = map_chunks(
            threads,
            runs.len(),
            64,
            || (Work::default(), Configuration::default()),
            |(work, c), chunk| {
                chunk
                    .map(|j| {
                        let r = runs[j].clone();
                        let s = self.sentence[r.start] as usize;
                        let mut out = Vec::with_capacity(r.len() * t);
                        let mut replay = Replay {
                            traj: self,
                            next: r.start,
                            end: r.end,
                            feats: &feats,
                            work,
                            out: &mut out,
                        };
                        c.reset(tb.sentences[s].len);
                        replay.work.attrs.fill(&vh, tb, s);
                        run(c, &mut replay, |_, _| {});
                        (replay.next == r.end).then_some(out).ok_or(s)
                    })
                    .collect()
            },
        )?;
        let mut out = Vec::with_capacity(self.len() * t);
        for r in per_sentence {
            out.extend(r.map_err(|s| {
                Error::InvalidArgument(format!(
                    "the trajectories of sentence {s} do not replay on this treebank (a move is invalid)"
                ))
            })?);
        }
        Ok(out)
    }
}

/// A guide that replays stored moves, extracting features at each decision; it stops
/// (leaving `next` short of `end`) when a stored move is not valid here.
struct Replay<'a> {
    traj: &'a Trajectories,
    next: usize,
    end: usize,
    feats: &'a ConfigFeatures,
    work: &'a mut Work,
    out: &'a mut Vec<u64>,
}

impl Guide for Replay<'_> {
    fn choose(&mut self, c: &Configuration, valid: &[bool; N_KINDS]) -> Option<Step> {
        let i = self.next;
        if i >= self.end || self.traj.valid[i * N_KINDS..(i + 1) * N_KINDS] != valid[..] {
            return None;
        }
        debug_assert_eq!(valid_mask(c), *valid);
        let w = &mut *self.work;
        self.feats.extract(c, &w.attrs, None, &mut w.scratch, self.out);
        self.next += 1;
        Some(Step { kind: self.traj.followed[i] as usize, label: self.traj.label[i] })
    }
}
