//! Trajectories as replayable move histories (spaCy's `follow_history` idea).
//!
//! A trajectory set stores, per decision, only the sentence, the move followed and
//! what the oracle and the model said (valid and zero-cost kinds, gold arc labels, the
//! model's move): about 30 bytes a decision, ~12 MB for every configuration of en_ewt
//! train. Features are never stored: [`Trajectories::features`] replays the moves and
//! extracts the features of any template set on demand, so the selection methods can
//! ask for thousands of candidate templates without an (n × all templates) matrix.
//!
//! Recorded by [`super::guide::MixtureGuide`] (DAgger, Ross et al. 2011, as used by
//! He et al. 2013: the oracle's move with probability beta, else the model's) from
//! [`ArcEagerParser::trajectories`]. [`oracle_trajectories`] walks without a model
//! (the oracle, or a uniformly random valid move with probability 1 - beta) and
//! returns flat arrays for tests and error analysis.
//!
//! Move kinds: 0 SHIFT, 1 REDUCE, 2 LEFT-ARC, 3 RIGHT-ARC.

use std::sync::Arc;

use super::guide::{begin, gold_label, run, Guide, MixtureGuide, Step, WalkGuide, Work};
use super::local::LabelSet;
use super::oracle::KindCosts;
use super::parser::{gold_tree, valid_mask, ArcEagerParser, N_KINDS};
use super::projective;
use super::system::Configuration;
use super::system::GoldTree;
use crate::templates::attrs::VocabHashes;
use crate::templates::config_feats::ConfigFeatures;
use crate::templates::TemplateSet;
use crate::treebank::Treebank;
use crate::util::{map_chunks, Rng};
use crate::weights::WeightTable;
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
        feats.refuse_clusters("a trajectory replay")?;
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
        let vh = self.vocab_hashes(tb);
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
}

/// Configurations as flat arrays (row i = configuration i).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OracleTrajectories {
    pub sentence: Vec<u32>,
    /// Top of the stack (0 = ROOT) and front of the buffer (0 = empty buffer).
    pub s0: Vec<u32>,
    pub b0: Vec<u32>,
    /// `cost[i * 4 + k]`: Goldberg & Nivre cost of kind k with its best label, -1 if invalid.
    pub cost: Vec<i32>,
    /// The kind followed, and the oracle's preferred kind (the static oracle's move
    /// when it has zero cost, else the first zero-cost kind).
    pub followed: Vec<u8>,
    pub oracle: Vec<u8>,
}

impl OracleTrajectories {
    pub fn len(&self) -> usize {
        self.sentence.len()
    }
    pub fn is_empty(&self) -> bool {
        self.sentence.is_empty()
    }
}

/// Gold tree of sentence `s` with the treebank's DEPREL ids as labels; None unless
/// the static oracle rebuilds it (complete, projective, single-rooted).
pub fn treebank_gold(tb: &Treebank, s: usize) -> Option<GoldTree> {
    let identity: Vec<u32> = (0..tb.vocabs.deprel.len() as u32).collect();
    super::parser::gold_tree(tb, s, &identity)
}

/// Walks every usable sentence of `tb` (or of `sentences`). O(moves · (|stack| + |buffer|)).
pub fn oracle_trajectories(
    tb: &Treebank,
    beta: f64,
    seed: u64,
    sentences: Option<&[usize]>,
) -> Result<OracleTrajectories> {
    if !(0.0..=1.0).contains(&beta) {
        return Err(Error::InvalidArgument(format!("beta must be in [0, 1], got {beta}")));
    }
    if let Some(&bad) = sentences.unwrap_or(&[]).iter().find(|&&i| i >= tb.len()) {
        return Err(Error::InvalidArgument(format!("sentence index {bad} out of range ({})", tb.len())));
    }
    let all: Vec<usize> = (0..tb.len()).collect();
    let mut rng = Rng::new(seed);
    let mut out = OracleTrajectories::default();
    let mut c = Configuration::default();
    for &s in sentences.unwrap_or(&all) {
        let Some(gold) = treebank_gold(tb, s) else { continue };
        c.reset(gold.len());
        let mut g = WalkGuide { gold: &gold, beta, rng: &mut rng, sentence: s as u32, out: &mut out };
        run(&mut c, &mut g, |_, _| {});
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::treebank::WordStrs;

    fn tb() -> Treebank {
        let w = WordStrs::simple;
        let mut tb = Treebank::new();
        let [dog_barks, ..] = crate::transition::testing::toy_sentences();
        tb.push_sentence(&dog_barks, vec![]);
        // Non-projective: skipped.
        tb.push_sentence(
            &[w("a", "X", 0, "root"), w("b", "X", 4, "x"), w("c", "X", 1, "x"), w("d", "X", 1, "x")],
            vec![],
        );
        tb
    }

    #[test]
    fn beta_one_follows_the_static_oracle() {
        let t = oracle_trajectories(&tb(), 1.0, 0, None).unwrap();
        // SHIFT, LEFT-ARC, SHIFT, LEFT-ARC, RIGHT-ARC, RIGHT-ARC
        assert_eq!(t.followed, vec![0, 2, 0, 2, 3, 3]);
        assert_eq!(t.oracle, t.followed);
        assert!(t.sentence.iter().all(|&s| s == 0));
        assert_eq!(&t.cost[..4], &[0, -1, -1, 2]);
    }

    #[test]
    fn random_moves_are_valid_and_oracle_moves_have_zero_cost() {
        let t = oracle_trajectories(&tb(), 0.3, 7, None).unwrap();
        for i in 0..t.len() {
            assert!(t.cost[i * N_KINDS + t.followed[i] as usize] >= 0);
            assert_eq!(t.cost[i * N_KINDS + t.oracle[i] as usize], 0);
        }
        assert_eq!(t, oracle_trajectories(&tb(), 0.3, 7, None).unwrap());
        assert!(oracle_trajectories(&tb(), 2.0, 7, None).is_err());
        assert!(oracle_trajectories(&tb(), 0.5, 7, Some(&[5])).is_err());
    }
}
