//! Descriptive statistics of a treebank (what `depfs stats` prints).
//!
//! Projectivity follows Nivre & Nilsson (2005), *Pseudo-projective dependency
//! parsing*: an arc h → d is projective when h dominates every word strictly
//! between h and d (ROOT = position 0 dominates everything); a sentence is
//! non-projective when one of its arcs is.

use std::collections::BTreeMap;

use crate::heads::nonprojective_arcs;
use crate::treebank::{ExtraKind, Treebank};

/// Counts over a whole treebank.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreebankStats {
    pub sentences: usize,
    pub words: usize,
    pub max_length: usize,
    /// Full DEPREL value -> number of words carrying it (sorted by label); `_` (no label)
    /// is not a label and is left out.
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
    /// Words with HEAD 0, and the sentences with more than one of them (another
    /// parser's output may have several; UD has one).
    pub roots: usize,
    pub multiroot_sentences: usize,
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
        .skip(1) // id 0 is `_`: no label
        .filter(|(_, &c)| c > 0)
        .map(|(id, &c)| (tb.vocabs.deprel.str(id as u32).to_string(), c))
        .collect();
    for (s, meta) in tb.sentences.iter().enumerate() {
        st.max_length = st.max_length.max(meta.len as usize);
        let heads = tb.heads(s);
        st.arcs += heads.iter().filter(|&&h| h >= 0).count();
        let roots = heads.iter().filter(|&&h| h == 0).count();
        st.roots += roots;
        st.multiroot_sentences += (roots > 1) as usize;
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
    use crate::treebank::{ExtraLine, WordStrs};

    fn sentence(tb: &mut Treebank, arcs: &[(i32, &str)]) {
        let words: Vec<WordStrs> = arcs.iter().map(|&(h, l)| WordStrs::simple("w", "X", h, l)).collect();
        tb.push_sentence(&words, vec![]);
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
        assert_eq!((st.roots, st.multiroot_sentences), (2, 0));
        let labels: Vec<(&str, usize)> = st.labels.iter().map(|(k, &v)| (k.as_str(), v)).collect();
        assert_eq!(
            labels,
            vec![("acl:relcl", 1), ("det", 1), ("nsubj", 1), ("obj", 1), ("punct", 2), ("root", 2)]
        );
        sentence(&mut tb, &[(0, "root"), (0, "root"), (-1, "_")]);
        let st = treebank_stats(&tb);
        assert_eq!((st.roots, st.multiroot_sentences, st.arcs), (4, 1, 10));
        // DEPREL `_` (a word without a head, or an unlabelled file) is no label.
        assert!(!st.labels.contains_key("_"), "{:?}", st.labels);
        assert_eq!(st.labels["root"], 4);
    }

    #[test]
    fn empty_treebank() {
        let st = treebank_stats(&Treebank::new());
        assert_eq!((st.sentences, st.mean_length(), st.nonprojective_arc_share()), (0, 0.0, 0.0));
    }
}
