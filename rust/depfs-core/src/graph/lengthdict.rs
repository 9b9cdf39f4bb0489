//! The length dictionary of He, Daumé III & Eisner (2013), §4.2: the longest arc seen
//! in training for each (head POS, modifier POS, direction). An arc longer than its
//! entry (or of an unseen triple) is pruned before any feature is computed.

use crate::templates::attrs::{SentAttrs, VocabHashes, ROOT_VALUE};
use crate::templates::Attr;
use crate::Treebank;
use rustc_hash::FxHashMap;

/// Longest training arc per (head UPOS hash, modifier UPOS hash, head-before-modifier),
/// as a dense table over the dictionary's tags: a sentence looks up each of its tags
/// once, then reads one entry per arc (a hash lookup per tag pair was ~2% of a DynFS parse).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LengthDict {
    /// The distinct UPOS hashes of the entries, sorted (so equal dictionaries are equal).
    tags: Vec<u64>,
    /// `longest[(i · t + j) · 2 + head_left]` for tags i, j of t; -1: a triple never seen.
    longest: Vec<i64>,
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
        let mut map = FxHashMap::default();
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
        LengthDict::from_map(map)
    }

    fn from_map(map: FxHashMap<(u64, u64, bool), u32>) -> LengthDict {
        let mut tags: Vec<u64> = map.keys().flat_map(|&(h, m, _)| [h, m]).collect();
        tags.sort_unstable();
        tags.dedup();
        let t = tags.len();
        let mut d = LengthDict { tags, longest: vec![-1; t * t * 2] };
        for (&(h, m, left), &l) in &map {
            if let Some(i) = d.slot(h, m, left) {
                d.longest[i] = i64::from(l);
            }
        }
        d
    }

    /// Index of tag hash `v` in the table. O(log t).
    fn tag(&self, v: u64) -> Option<usize> {
        self.tags.binary_search(&v).ok()
    }

    /// The table entry of (head tag, modifier tag, head before modifier), if both tags are known.
    fn slot(&self, h: u64, m: u64, head_left: bool) -> Option<usize> {
        Some((self.tag(h)? * self.tags.len() + self.tag(m)?) * 2 + usize::from(head_left))
    }

    /// Entries as sorted tuples (for model files and Python).
    pub fn entries(&self) -> Vec<(u64, u64, bool, u32)> {
        let mut v = Vec::new();
        for &h in &self.tags {
            for &m in &self.tags {
                for left in [false, true] {
                    if let Some(l) = self.get(h, m, left) {
                        v.push((h, m, left, l));
                    }
                }
            }
        }
        v
    }

    pub fn from_entries(entries: &[(u64, u64, bool, u32)]) -> LengthDict {
        LengthDict::from_map(entries.iter().map(|&(a, b, d, l)| ((a, b, d), l)).collect())
    }

    pub fn len(&self) -> usize {
        self.longest.iter().filter(|&&l| l >= 0).count()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Longest training arc for this (head tag hash, modifier tag hash, direction).
    fn get(&self, h: u64, m: u64, head_left: bool) -> Option<u32> {
        self.slot(h, m, head_left).and_then(|i| u32::try_from(self.longest[i]).ok())
    }

    /// Longest training arc for this head / modifier UPOS string pair and direction.
    pub fn max_len(&self, head_upos: Option<&str>, mod_upos: &str, head_left: bool) -> Option<u32> {
        let h = head_upos.map_or(ROOT_VALUE, crate::templates::hash::hash_str);
        self.get(h, crate::templates::hash::hash_str(mod_upos), head_left)
    }

    /// True when arc h → m survives, given the sentence's UPOS values (slot 0).
    #[inline]
    fn allows(&self, sa: &SentAttrs, h: usize, m: usize) -> bool {
        self.get(sa.get(0, h as i64), sa.get(0, m as i64), h < m).is_some_and(|l| h.abs_diff(m) as u32 <= l)
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
    /// filled from [`LengthDict::upos_hashes`]). O(n² + u²) for u distinct UPOS values:
    /// each tag is looked up once per sentence, then each (head tag, modifier tag,
    /// direction) is read from the dense table.
    pub fn fill_mask(&self, sa: &SentAttrs, out: &mut Vec<bool>) {
        let n1 = sa.n + 1;
        let t = self.tags.len();
        // Small ids of the sentence's tags (ROOT included), in order of appearance, and
        // each one's index in the table (None: a tag the dictionary never saw).
        let mut tags: Vec<Option<usize>> = Vec::new();
        let mut seen: Vec<u64> = Vec::new();
        let ids: Vec<usize> = (0..n1)
            .map(|p| {
                let v = sa.get(0, p as i64);
                seen.iter().position(|&x| x == v).unwrap_or_else(|| {
                    seen.push(v);
                    tags.push(self.tag(v));
                    seen.len() - 1
                })
            })
            .collect();
        out.clear();
        out.resize(n1 * n1, false);
        // Per modifier, the longest arc from each head tag on either side (-1: none): one
        // gather and one compare per arc.
        let (mut left, mut right) = (vec![-1i64; tags.len()], vec![-1i64; tags.len()]);
        for m in 1..n1 {
            for (a, ta) in tags.iter().enumerate() {
                (left[a], right[a]) = match (ta, tags[ids[m]]) {
                    (Some(i), Some(j)) => (self.longest[(i * t + j) * 2 + 1], self.longest[(i * t + j) * 2]),
                    _ => (-1, -1),
                };
            }
            let row = &mut out[m * n1..(m + 1) * n1];
            for (h, (x, &id)) in row[..m].iter_mut().zip(&ids[..m]).enumerate() {
                *x = (m - h) as i64 <= left[id];
            }
            for (h, (x, &id)) in row.iter_mut().zip(&ids).enumerate().skip(m + 1) {
                *x = (h - m) as i64 <= right[id];
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

    /// The mask (one lookup per tag pair and direction) agrees with a lookup per arc on
    /// random sentences over a few tags, against a dictionary built from random trees;
    /// the test half also has a tag the dictionary never saw.
    #[test]
    fn mask_agrees_with_a_lookup_per_arc() {
        let tags = ["DET", "NOUN", "VERB", "ADV", "ADP", "PRON", "SYM"];
        let mut rng = crate::util::Rng::new(7);
        let (mut train, mut test) = (Treebank::new(), Treebank::new());
        for k in 0..60 {
            let n = 1 + (rng.next_u64() % 14) as usize;
            let words: Vec<WordStrs<'_>> = (0..n)
                .map(|i| {
                    let known = if k < 30 { tags.len() - 1 } else { tags.len() };
                    let tag = tags[(rng.next_u64() % known as u64) as usize];
                    // A random head among the words before (a tree: no cycles).
                    let head = if i == 0 { 0 } else { (rng.next_u64() % (i as u64 + 1)) as i32 };
                    WordStrs::simple("w", tag, head, "dep")
                })
                .collect();
            if k < 30 { &mut train } else { &mut test }.push_sentence(&words, vec![]);
        }
        let d = LengthDict::build(&train);
        let vh = upos_values(&test);
        let mut sa = SentAttrs::default();
        let (mut some, mut none) = (0, 0);
        for s in 0..test.len() {
            sa.fill(&vh, &test, s);
            let n1 = sa.n + 1;
            let mask = d.mask(&test, s);
            for m in 1..n1 {
                for h in (0..n1).filter(|&h| h != m) {
                    assert_eq!(mask[m * n1 + h], d.allows(&sa, h, m), "sentence {s}: {h} -> {m}");
                    if mask[m * n1 + h] {
                        some += 1
                    } else {
                        none += 1
                    }
                }
                assert!(!mask[m * n1 + m]);
            }
        }
        assert!(some > 0 && none > 0, "both kinds of arcs: {some} allowed, {none} pruned");
    }
}
