//! Oracle trajectories without a model: the dynamic oracle's view of every
//! configuration reached by following, at each decision, the oracle's move with
//! probability `beta` and a uniformly random valid move otherwise (seeded): the one
//! decision loop with the [`WalkGuide`]. The parser's own trajectories (model or
//! mixture) are in [`super::trajectories`]; this one needs no templates and serves
//! tests and error analysis.
//!
//! Move kinds: 0 SHIFT, 1 REDUCE, 2 LEFT-ARC, 3 RIGHT-ARC.

use super::guide::{run, WalkGuide};
use super::system::{Configuration, GoldTree};
use crate::treebank::Treebank;
use crate::util::Rng;
use crate::{Error, Result};

/// Number of move kinds.
pub const KINDS: usize = 4;

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
        tb.push_sentence(
            &[
                w("The", "DET", 2, "det"),
                w("dog", "NOUN", 3, "nsubj"),
                w("barks", "VERB", 0, "root"),
                w(".", "PUNCT", 3, "punct"),
            ],
            vec![],
        );
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
            assert!(t.cost[i * KINDS + t.followed[i] as usize] >= 0);
            assert_eq!(t.cost[i * KINDS + t.oracle[i] as usize], 0);
        }
        assert_eq!(t, oracle_trajectories(&tb(), 0.3, 7, None).unwrap());
        assert!(oracle_trajectories(&tb(), 2.0, 7, None).is_err());
        assert!(oracle_trajectories(&tb(), 0.5, 7, Some(&[5])).is_err());
    }
}
