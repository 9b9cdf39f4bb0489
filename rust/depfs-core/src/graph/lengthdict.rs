//! The length dictionary of He, Daumé III & Eisner (2013), §4.2: the longest arc seen
//! in training for each (head POS, modifier POS, direction). An arc longer than its
//! entry (or of an unseen triple) is pruned before any feature is computed.

use crate::templates::attrs::{SentAttrs, VocabHashes, ROOT_VALUE};
use crate::templates::Attr;
use crate::Treebank;
use std::collections::HashMap;

/// Longest training arc per (head UPOS hash, modifier UPOS hash, head-before-modifier).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LengthDict {
    map: HashMap<(u64, u64, bool), u32>,
}

/// How many arcs the dictionary prunes on a treebank (gold arcs = the treebank's own
/// heads; non-gold = every other possible (head, modifier) pair).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneStats {
    pub gold_arcs: u64,
    pub gold_pruned: u64,
    pub other_arcs: u64,
    pub other_pruned: u64,
}

fn upos_values(tb: &Treebank) -> VocabHashes {
    VocabHashes::new(tb, &[Attr::Upos])
}

impl LengthDict {
    /// Builds the dictionary from the gold heads of `tb` (words without a head are skipped).
    /// O(words).
    pub fn build(tb: &Treebank) -> LengthDict {
        let vh = upos_values(tb);
        let mut sa = SentAttrs::default();
        let mut map = HashMap::new();
        for s in 0..tb.len() {
            sa.fill(&vh, tb, s);
            for (i, &h) in tb.heads(s).iter().enumerate() {
                let m = i + 1;
                if h < 0 || h as usize > sa.n {
                    continue;
                }
                let h = h as usize;
                let key = (sa.get(0, h as i64), sa.get(0, m as i64), h < m);
                let e = map.entry(key).or_insert(0u32);
                *e = (*e).max(h.abs_diff(m) as u32);
            }
        }
        LengthDict { map }
    }

    /// Entries as sorted tuples (for model files and Python).
    pub fn entries(&self) -> Vec<(u64, u64, bool, u32)> {
        let mut v: Vec<_> = self.map.iter().map(|(&(a, b, d), &l)| (a, b, d, l)).collect();
        v.sort_unstable();
        v
    }

    pub fn from_entries(entries: &[(u64, u64, bool, u32)]) -> LengthDict {
        LengthDict { map: entries.iter().map(|&(a, b, d, l)| ((a, b, d), l)).collect() }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Longest training arc for this head / modifier UPOS string pair and direction.
    pub fn max_len(&self, head_upos: Option<&str>, mod_upos: &str, head_left: bool) -> Option<u32> {
        let h = head_upos.map_or(ROOT_VALUE, crate::templates::hash::hash_str);
        self.map.get(&(h, crate::templates::hash::hash_str(mod_upos), head_left)).copied()
    }

    /// True when arc h → m survives, given the sentence's UPOS values (slot 0).
    #[inline]
    fn allows(&self, sa: &SentAttrs, h: usize, m: usize) -> bool {
        let key = (sa.get(0, h as i64), sa.get(0, m as i64), h < m);
        self.map.get(&key).is_some_and(|&l| h.abs_diff(m) as u32 <= l)
    }

    /// `mask[m * n1 + h]` = arc h → m survives, for sentence `s` of `tb` (diagonal and
    /// row 0 false).
    pub fn mask(&self, tb: &Treebank, s: usize) -> Vec<bool> {
        let vh = upos_values(tb);
        let mut sa = SentAttrs::default();
        sa.fill(&vh, tb, s);
        let mut out = Vec::new();
        self.fill_mask(&sa, &mut out);
        out
    }

    /// As [`LengthDict::mask`], from a sentence's UPOS values (attribute slot 0 of `sa`,
    /// filled from [`LengthDict::upos_hashes`]). O(n²).
    pub fn fill_mask(&self, sa: &SentAttrs, out: &mut Vec<bool>) {
        let n1 = sa.n + 1;
        out.clear();
        out.resize(n1 * n1, false);
        for m in 1..n1 {
            for h in 0..n1 {
                out[m * n1 + h] = h != m && self.allows(sa, h, m);
            }
        }
    }

    /// The vocabulary hashes [`LengthDict::fill_mask`] expects.
    pub fn upos_hashes(tb: &Treebank) -> VocabHashes {
        upos_values(tb)
    }

    /// Share of gold and non-gold arcs of `tb` that the dictionary prunes. O(Σ n²).
    pub fn prune_stats(&self, tb: &Treebank) -> PruneStats {
        let vh = upos_values(tb);
        let mut sa = SentAttrs::default();
        let mut st = PruneStats::default();
        for s in 0..tb.len() {
            sa.fill(&vh, tb, s);
            let heads = tb.heads(s);
            let n1 = sa.n + 1;
            for m in 1..n1 {
                for h in 0..n1 {
                    if h == m {
                        continue;
                    }
                    let pruned = !self.allows(&sa, h, m);
                    if heads[m - 1] == h as i32 {
                        st.gold_arcs += 1;
                        st.gold_pruned += pruned as u64;
                    } else {
                        st.other_arcs += 1;
                        st.other_pruned += pruned as u64;
                    }
                }
            }
        }
        st
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WordStrs;

    #[test]
    fn longest_arc_per_pos_pair_and_direction() {
        let mut tb = Treebank::new();
        // DET NOUN VERB ADV: det 1<-2, nsubj 2<-3, root 3, advmod 3->4
        tb.push_sentence(
            &[
                WordStrs::simple("the", "DET", 2, "det"),
                WordStrs::simple("dog", "NOUN", 3, "nsubj"),
                WordStrs::simple("barks", "VERB", 0, "root"),
                WordStrs::simple("now", "ADV", 3, "advmod"),
            ],
            vec![],
        );
        tb.push_sentence(
            &[
                WordStrs::simple("the", "DET", 3, "det"),
                WordStrs::simple("big", "ADJ", 3, "amod"),
                WordStrs::simple("dog", "NOUN", 0, "root"),
            ],
            vec![],
        );
        let d = LengthDict::build(&tb);
        assert_eq!(d.max_len(Some("NOUN"), "DET", false), Some(2));
        assert_eq!(d.max_len(Some("VERB"), "ADV", true), Some(1));
        assert_eq!(d.max_len(None, "VERB", true), Some(3));
        assert_eq!(d.max_len(Some("DET"), "NOUN", true), None);
        let st = d.prune_stats(&tb);
        assert_eq!(st.gold_arcs, 7);
        assert_eq!(st.gold_pruned, 0);
        assert_eq!(st.gold_arcs + st.other_arcs, 4 * 4 + 3 * 3);
        assert!(st.other_pruned > 0);
        let mask = d.mask(&tb, 0);
        assert!(mask[5 + 2]); // 2 -> 1
        assert!(!mask[2 * 5 + 1]); // DET -> NOUN never seen
        assert_eq!(LengthDict::from_entries(&d.entries()), d);
    }
}
