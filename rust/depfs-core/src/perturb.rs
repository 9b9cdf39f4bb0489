//! Seeded corruption of a treebank's trees: a stand-in "system output" for
//! testing the scorer and for the demo until a parser exists.
//!
//! Heads are moved only to words outside the dependent's subtree, and root
//! words keep their head, so every perturbed sentence is still a tree with one
//! root (the official scorer refuses anything else).

use crate::error::{Error, Result};
use crate::treebank::Treebank;
use crate::util::Rng;

/// Is `k` inside the subtree of `d`? A cycle counts as inside: never attach into one.
fn in_subtree(heads: &[i32], d: usize, k: usize) -> bool {
    crate::heads::ancestor_walk(heads, d, k).unwrap_or(true)
}

/// A copy of `tb` where each non-root word gets, with probability `head_rate`, a
/// different head outside its own subtree, and, independently with probability
/// `label_rate`, a different DEPREL drawn from the treebank's label inventory
/// (`root` excluded). Deterministic for a given `seed`. Cost O(words · n · depth).
pub fn perturb(tb: &Treebank, head_rate: f64, label_rate: f64, seed: u64) -> Result<Treebank> {
    for (name, r) in [("head_rate", head_rate), ("label_rate", label_rate)] {
        if !(0.0..=1.0).contains(&r) {
            return Err(Error::InvalidArgument(format!("{name} must be in [0, 1], got {r}")));
        }
    }
    let mut out = tb.clone();
    let root = tb.vocabs.deprel.get("root");
    let mut used = vec![false; tb.vocabs.deprel.len()];
    for &l in &tb.words.deprel {
        used[l as usize] = true;
    }
    let labels: Vec<u32> =
        (0..used.len() as u32).filter(|&l| used[l as usize] && Some(l) != root && l != 0).collect();
    // The stream predates Rng::new's seed mixing; raw state keeps old outputs.
    let mut rng = Rng::from_state(seed);
    let mut candidates = Vec::new();
    for s in 0..out.len() {
        let start = out.sentences[s].start as usize;
        let n = out.sentences[s].len as usize;
        for d in 1..=n {
            let head = out.words.head[start + d - 1];
            if head <= 0 {
                continue; // root words and unset heads stay as they are
            }
            if rng.unit() < head_rate {
                let heads = &out.words.head[start..start + n];
                candidates.clear();
                candidates.extend((1..=n).filter(|&h| h as i32 != head && !in_subtree(heads, d, h)));
                if !candidates.is_empty() {
                    out.words.head[start + d - 1] = candidates[rng.index(candidates.len())] as i32;
                }
            }
            if rng.unit() < label_rate {
                let current = out.words.deprel[start + d - 1];
                let others: Vec<u32> = labels.iter().copied().filter(|&l| l != current).collect();
                if !others.is_empty() {
                    out.words.deprel[start + d - 1] = others[rng.index(others.len())];
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{evaluate, EvalOptions};
    use crate::treebank::WordStrs;

    fn chain_treebank(sentences: usize, n: usize) -> Treebank {
        let mut tb = Treebank::new();
        let labels = ["nsubj", "obj", "obl", "amod", "det"];
        for _ in 0..sentences {
            let words: Vec<WordStrs> = (1..=n)
                .map(|i| {
                    if i == 1 {
                        WordStrs::simple("w", "X", 0, "root")
                    } else {
                        WordStrs::simple("w", "X", (i - 1) as i32, labels[i % labels.len()])
                    }
                })
                .collect();
            tb.push_sentence(&words, vec![]);
        }
        tb
    }

    /// Every word reaches the root and there is exactly one root.
    fn is_tree(heads: &[i32]) -> bool {
        let roots = heads.iter().filter(|&&h| h == 0).count();
        roots == 1 && (1..=heads.len()).all(|k| in_subtree(heads, 0, k) && !cycles(heads, k))
    }
    fn cycles(heads: &[i32], mut k: usize) -> bool {
        for _ in 0..=heads.len() {
            if k == 0 {
                return false;
            }
            k = heads[k - 1] as usize;
        }
        true
    }

    #[test]
    fn keeps_trees_and_is_deterministic() {
        let tb = chain_treebank(50, 8);
        let a = perturb(&tb, 0.5, 0.5, 7).unwrap();
        let b = perturb(&tb, 0.5, 0.5, 7).unwrap();
        assert_eq!(a.words.head, b.words.head);
        assert_eq!(a.words.deprel, b.words.deprel);
        for s in 0..a.len() {
            assert!(is_tree(a.heads(s)), "sentence {s}: {:?}", a.heads(s));
        }
        let c = perturb(&tb, 0.5, 0.5, 8).unwrap();
        assert_ne!(a.words.head, c.words.head);
    }

    #[test]
    fn rates_shape_the_scores() {
        let tb = chain_treebank(200, 10);
        let same = perturb(&tb, 0.0, 0.0, 1).unwrap();
        let sc = evaluate(&tb, &same, EvalOptions::default()).unwrap();
        assert_eq!(sc.las_correct, sc.words);

        let heads_only = perturb(&tb, 0.3, 0.0, 1).unwrap();
        let sc = evaluate(&tb, &heads_only, EvalOptions::default()).unwrap();
        assert_eq!(sc.label_correct, sc.words);
        // 1800 non-root words, each moved with p = 0.3: expect ~540 wrong (±~5 sd = 100).
        let wrong = sc.words - sc.uas_correct;
        assert!((440..640).contains(&wrong), "{wrong}");

        let labels_only = perturb(&tb, 0.0, 1.0, 1).unwrap();
        let sc = evaluate(&tb, &labels_only, EvalOptions::default()).unwrap();
        assert_eq!((sc.uas_correct, sc.label_correct), (sc.words, 200)); // only the roots keep theirs
    }

    #[test]
    fn bad_rates_are_refused() {
        let tb = chain_treebank(1, 3);
        let err = perturb(&tb, 1.5, 0.0, 0).unwrap_err();
        assert_eq!(err.to_string(), "head_rate must be in [0, 1], got 1.5");
        assert!(perturb(&tb, 0.0, f64::NAN, 0).is_err());
    }
}
