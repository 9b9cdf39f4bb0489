//! Descriptive statistics of a treebank (what `depfs stats` prints).
//!
//! Projectivity follows Nivre & Nilsson (2005), *Pseudo-projective dependency
//! parsing*: an arc h → d is projective when h dominates every word strictly
//! between h and d (ROOT = position 0 dominates everything); a sentence is
//! non-projective when one of its arcs is.

use std::collections::BTreeMap;

use crate::treebank::{ExtraKind, Treebank};

/// Counts over a whole treebank.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreebankStats {
    pub sentences: usize,
    pub words: usize,
    pub max_length: usize,
    /// Full DEPREL value -> number of words carrying it (sorted by label).
    pub labels: BTreeMap<String, usize>,
    /// Sentences with at least one non-projective arc.
    pub nonprojective_sentences: usize,
    /// Arcs (one per word with a head) that are non-projective.
    pub nonprojective_arcs: usize,
    /// Words with a HEAD (the arcs), i.e. words minus those with HEAD `_`.
    pub arcs: usize,
    /// Multiword-token range lines (`3-4`).
    pub multiword_tokens: usize,
    /// Empty-node lines (`5.1`).
    pub empty_nodes: usize,
}

impl TreebankStats {
    pub fn mean_length(&self) -> f64 {
        if self.sentences == 0 {
            0.0
        } else {
            self.words as f64 / self.sentences as f64
        }
    }
    /// Share (0..1) of sentences with a non-projective arc.
    pub fn nonprojective_sentence_share(&self) -> f64 {
        if self.sentences == 0 {
            0.0
        } else {
            self.nonprojective_sentences as f64 / self.sentences as f64
        }
    }
    /// Share (0..1) of arcs that are non-projective.
    pub fn nonprojective_arc_share(&self) -> f64 {
        if self.arcs == 0 {
            0.0
        } else {
            self.nonprojective_arcs as f64 / self.arcs as f64
        }
    }
}

/// Marks which arcs of one sentence are non-projective. `heads[i]` is the head of
/// word `i + 1` (0 = ROOT, negative = none). Returns one flag per word (false for
/// words without a valid head). Heads outside the sentence or on a cycle never
/// make the function loop: an ancestor walk stops after n steps.
///
/// Cost: O(n · span · depth) in the worst case; sentences are short (mean ≈ 20).
pub fn nonprojective_arcs(heads: &[i32]) -> Vec<bool> {
    let n = heads.len();
    let parent = |k: usize| -> Option<usize> {
        let h = heads[k - 1];
        (h >= 0 && (h as usize) <= n).then_some(h as usize)
    };
    // Does `h` dominate `k` (positions, 0 = ROOT)? Walk up from k at most n steps.
    let dominates = |h: usize, mut k: usize| -> bool {
        for _ in 0..=n {
            if k == h {
                return true;
            }
            if k == 0 {
                return false;
            }
            match parent(k) {
                Some(p) => k = p,
                None => return false,
            }
        }
        false
    };
    (1..=n)
        .map(|d| match parent(d) {
            None => false,
            Some(h) => {
                let (lo, hi) = if h < d { (h, d) } else { (d, h) };
                (lo + 1..hi).any(|k| !dominates(h, k))
            }
        })
        .collect()
}

/// Statistics of `tb`. O(words) plus the projectivity check above.
pub fn treebank_stats(tb: &Treebank) -> TreebankStats {
    let mut st = TreebankStats { sentences: tb.len(), words: tb.n_words(), ..Default::default() };
    let mut label_counts = vec![0usize; tb.vocabs.deprel.len()];
    for &l in &tb.words.deprel {
        label_counts[l as usize] += 1;
    }
    st.labels = label_counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(id, &c)| (tb.vocabs.deprel.str(id as u32).to_string(), c))
        .collect();
    for (s, meta) in tb.sentences.iter().enumerate() {
        st.max_length = st.max_length.max(meta.len as usize);
        let heads = tb.heads(s);
        st.arcs += heads.iter().filter(|&&h| h >= 0).count();
        let np = nonprojective_arcs(heads).iter().filter(|&&b| b).count();
        st.nonprojective_arcs += np;
        st.nonprojective_sentences += (np > 0) as usize;
        for e in &meta.extra {
            match e.kind {
                ExtraKind::MultiWord { .. } => st.multiword_tokens += 1,
                ExtraKind::EmptyNode { .. } => st.empty_nodes += 1,
            }
        }
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::treebank::{ExtraLine, WordStrs, NO_HEAD};
    use proptest::prelude::*;

    fn sentence(tb: &mut Treebank, arcs: &[(i32, &str)]) {
        let words: Vec<WordStrs> = arcs.iter().map(|&(h, l)| WordStrs::simple("w", "X", h, l)).collect();
        tb.push_sentence(&words, vec![]);
    }

    #[test]
    fn projective_chain_has_no_nonprojective_arcs() {
        assert_eq!(nonprojective_arcs(&[2, 0, 2, 3]), vec![false; 4]);
        assert!(nonprojective_arcs(&[]).is_empty());
    }

    #[test]
    fn crossing_arc_is_found() {
        // 1 <- 3 (root), 2 <- 4, 4 <- 1: arc 4 -> 2 spans word 3, which 4 does not dominate;
        // arc 1 -> 4 spans 2 (dominated by 1 via 4) and 3 (the root, not dominated).
        assert_eq!(nonprojective_arcs(&[3, 4, 0, 1]), vec![false, true, false, true]);
    }

    #[test]
    fn bad_heads_do_not_loop_or_panic() {
        // cycle 1 <-> 2, out-of-range head 9, missing head.
        let flags = nonprojective_arcs(&[3, 1, 2, 9, NO_HEAD]);
        assert_eq!(flags.len(), 5);
        assert!(!flags[3] && !flags[4]);
    }

    #[test]
    fn hand_built_treebank_stats() {
        let mut tb = Treebank::new();
        sentence(&mut tb, &[(2, "det"), (0, "root"), (2, "punct")]);
        sentence(&mut tb, &[(3, "nsubj"), (4, "obj"), (0, "root"), (1, "acl:relcl"), (3, "punct")]);
        tb.sentences[1].extra.push(ExtraLine {
            before_word: 1,
            kind: ExtraKind::MultiWord { first: 1, last: 2 },
            text: "1-2\tww\t_\t_\t_\t_\t_\t_\t_\t_".into(),
        });
        tb.sentences[1].extra.push(ExtraLine {
            before_word: 6,
            kind: ExtraKind::EmptyNode { after: 5, minor: 1 },
            text: "5.1\te\t_\t_\t_\t_\t_\t_\t_\t_".into(),
        });
        let st = treebank_stats(&tb);
        assert_eq!((st.sentences, st.words, st.max_length, st.arcs), (2, 8, 5, 8));
        assert_eq!(st.mean_length(), 4.0);
        // sentence 2: arc 4 -> 2 spans 3 (root) and arc 1 -> 4 spans 2 (ok), 3 (root): both non-proj.
        assert_eq!((st.nonprojective_sentences, st.nonprojective_arcs), (1, 2));
        assert_eq!(st.nonprojective_sentence_share(), 0.5);
        assert_eq!(st.nonprojective_arc_share(), 0.25);
        assert_eq!((st.multiword_tokens, st.empty_nodes), (1, 1));
        let labels: Vec<(&str, usize)> = st.labels.iter().map(|(k, &v)| (k.as_str(), v)).collect();
        assert_eq!(
            labels,
            vec![("acl:relcl", 1), ("det", 1), ("nsubj", 1), ("obj", 1), ("punct", 2), ("root", 2)]
        );
    }

    #[test]
    fn empty_treebank() {
        let st = treebank_stats(&Treebank::new());
        assert_eq!((st.sentences, st.mean_length(), st.nonprojective_arc_share()), (0, 0.0, 0.0));
    }

    /// Reference: the definition with explicit ancestor chains.
    fn brute(heads: &[i32]) -> Vec<bool> {
        let n = heads.len();
        // ancestors[k]: k itself and every word above it, up to ROOT (0).
        let ancestors: Vec<Vec<usize>> = (0..=n)
            .map(|k| {
                let mut chain = vec![k];
                let mut a = k;
                while a != 0 {
                    a = heads[a - 1] as usize;
                    chain.push(a);
                }
                chain
            })
            .collect();
        (1..=n)
            .map(|d| {
                let h = heads[d - 1] as usize;
                let (lo, hi) = (h.min(d), h.max(d));
                (lo + 1..hi).any(|k| !ancestors[k].contains(&h))
            })
            .collect()
    }

    /// Random trees: each word i picks a head among words already attached.
    fn random_tree() -> impl Strategy<Value = Vec<i32>> {
        (1usize..9).prop_flat_map(|n| {
            proptest::collection::vec(any::<u32>(), n).prop_map(move |r| {
                // order of attachment: a random permutation built from r
                let mut order: Vec<usize> = (1..=n).collect();
                for i in (1..n).rev() {
                    order.swap(i, r[i] as usize % (i + 1));
                }
                let mut heads = vec![0i32; n];
                for (j, &w) in order.iter().enumerate() {
                    heads[w - 1] = if j == 0 { 0 } else { order[r[j] as usize % j] as i32 };
                }
                heads
            })
        })
    }

    proptest! {
        #[test]
        fn matches_descendant_set_definition(heads in random_tree()) {
            prop_assert_eq!(nonprojective_arcs(&heads), brute(&heads));
        }
    }
}
