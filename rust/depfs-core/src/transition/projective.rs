//! Pseudo-projective parsing, Nivre & Nilsson (2005), *Pseudo-Projective
//! Dependency Parsing* (ACL), HEAD encoding.
//!
//! Training trees are projectivised by LIFTing non-projective arcs (the word is
//! re-attached to its head's head), shortest arc first, until the tree is
//! projective. A lifted word's label becomes `r↑h`: its own label `r` and the
//! label `h` of its original (syntactic) head. After parsing, every word labelled
//! `r↑h` is moved back: a breadth-first, left-to-right search of its head's
//! subtree (its own subtree excluded) finds the first word labelled `h`, which
//! becomes its head; the label goes back to `r`.
//!
//! Arrays: `heads[d - 1]` is the head of word d (0 = ROOT), labels likewise.

use std::collections::{HashMap, VecDeque};

use crate::heads::{arc_is_nonprojective, dominates};
use crate::treebank::{Treebank, NO_HEAD};

/// Separator between a lifted word's own label and its original head's label.
pub const LIFT_MARK: char = '↑';

/// Lifts non-projective arcs (shortest first, leftmost on ties) until the tree
/// is projective. Returns `(d, original head)` for every word lifted at least
/// once, in order of first lift. Heads must form a tree (checked by the caller).
/// O(lifts · n · span · depth); lifts are rare.
pub fn lift(heads: &mut [u32]) -> Vec<(u32, u32)> {
    let n = heads.len() as u32;
    let mut lifted: Vec<(u32, u32)> = Vec::new();
    loop {
        let worst = (1..=n)
            .filter(|&d| heads[d as usize - 1] != 0 && arc_is_nonprojective(heads, d as usize))
            .min_by_key(|&d| (heads[d as usize - 1].abs_diff(d), d));
        let Some(d) = worst else { return lifted };
        let h = heads[d as usize - 1];
        if !lifted.iter().any(|&(w, _)| w == d) {
            lifted.push((d, h));
        }
        heads[d as usize - 1] = heads[h as usize - 1];
    }
}

/// Moves every word with `wanted[d - 1] = Some(h)` under the first word labelled
/// `h` (by `base`) found breadth-first, left to right, in its current head's
/// subtree without its own subtree; words nearer the root first. O(n²) worst case.
pub fn lower(heads: &mut [u32], base: &[u32], wanted: &[Option<u32>]) {
    let n = heads.len();
    let children = |heads: &[u32], w: u32| -> Vec<u32> {
        (1..=n as u32).filter(|&d| heads[d as usize - 1] == w).collect()
    };
    // Top-down order of the words to lower (breadth-first from ROOT on the parse).
    let mut order = Vec::new();
    let mut queue = VecDeque::from([0u32]);
    while let Some(w) = queue.pop_front() {
        for c in children(heads, w) {
            if wanted[c as usize - 1].is_some() {
                order.push(c);
            }
            queue.push_back(c);
        }
    }
    // A word whose target is not found yet may find it once another lifted word
    // has been lowered (its original head was itself lifted): retry while progress.
    let mut pending = order;
    loop {
        let before = pending.len();
        pending.retain(|&d| !lower_one(heads, base, wanted, d, &children));
        if pending.is_empty() || pending.len() == before {
            break;
        }
    }
    // Words never placed keep the head the parser gave them.
}

/// Lowers word `d` if a word with its wanted label is found; true if it moved.
fn lower_one(
    heads: &mut [u32],
    base: &[u32],
    wanted: &[Option<u32>],
    d: u32,
    children: &dyn Fn(&[u32], u32) -> Vec<u32>,
) -> bool {
    let Some(target) = wanted[d as usize - 1] else { return true };
    let h = heads[d as usize - 1];
    let mut queue: VecDeque<u32> = children(heads, h).into_iter().filter(|&c| c != d).collect();
    while let Some(w) = queue.pop_front() {
        if base[w as usize - 1] == target {
            heads[d as usize - 1] = w;
            return true;
        }
        queue.extend(children(heads, w));
    }
    false
}

/// What projectivising a treebank did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiftStats {
    pub sentences: usize,
    pub nonprojective_sentences: usize,
    pub lifted_words: usize,
    /// Sentences left alone (a missing head or not a tree).
    pub skipped: usize,
}

/// Heads of sentence `s` as u32 (0 = ROOT), or None if some head is missing,
/// out of range, or the heads do not form a tree.
fn tree_heads(tb: &Treebank, s: usize) -> Option<Vec<u32>> {
    let hs = tb.heads(s);
    let n = hs.len();
    let mut out = Vec::with_capacity(n);
    for &h in hs {
        if h == NO_HEAD || h < 0 || h as usize > n {
            return None;
        }
        out.push(h as u32);
    }
    (1..=n as u32).all(|d| dominates(&out, 0, d as usize)).then_some(out)
}

/// A copy of `tb` with every tree projectivised and lifted labels encoded `r↑h`.
pub fn projectivize(tb: &Treebank) -> (Treebank, LiftStats) {
    let mut out = tb.clone();
    let mut stats = LiftStats { sentences: tb.len(), ..Default::default() };
    for s in 0..tb.len() {
        let Some(mut heads) = tree_heads(tb, s) else {
            stats.skipped += 1;
            continue;
        };
        let lifted = lift(&mut heads);
        if lifted.is_empty() {
            continue;
        }
        stats.nonprojective_sentences += 1;
        stats.lifted_words += lifted.len();
        let start = tb.sentences[s].start as usize;
        for (d, &h) in heads.iter().enumerate() {
            out.words.head[start + d] = h as i32;
        }
        for (d, orig) in lifted {
            let own = tb.vocabs.deprel.str(tb.words.deprel[start + d as usize - 1]);
            let of_head = tb.vocabs.deprel.str(tb.words.deprel[start + orig as usize - 1]);
            let encoded = format!("{own}{LIFT_MARK}{of_head}");
            out.set_deprel(start + d as usize - 1, &encoded);
        }
    }
    (out, stats)
}

/// Relabels every word whose lifted label `r↑h` occurs fewer than `min_count` times
/// in `tb` with its plain label `r` (it stays attached where it was lifted to);
/// returns how many words were relabelled. Every lifted label is one more column in
/// every label row the parser reads, and the rare ones name arcs deprojectivisation
/// would rarely restore (en_ewt train: 85 lifted labels on 357 of 204,000 arcs, 65
/// of them seen fewer than 5 times). O(words).
pub fn drop_rare_lifted_labels(tb: &mut Treebank, min_count: usize) -> usize {
    let mut counts = vec![0usize; tb.vocabs.deprel.len()];
    for &l in &tb.words.deprel {
        counts[l as usize] += 1;
    }
    let mut plain: Vec<Option<u32>> = vec![None; counts.len()];
    for (l, &c) in counts.iter().enumerate() {
        let label = tb.vocabs.deprel.str(l as u32).to_string();
        if let Some((own, _)) = label.split_once(LIFT_MARK) {
            if c > 0 && c < min_count {
                plain[l] = Some(tb.vocabs.deprel.intern(own));
            }
        }
    }
    let mut relabelled = 0;
    for l in tb.words.deprel.iter_mut() {
        if let Some(p) = plain[*l as usize] {
            *l = p;
            relabelled += 1;
        }
    }
    relabelled
}

/// Undoes the HEAD encoding in place: every word labelled `r↑h` is moved under
/// the nearest word labelled `h` in its head's subtree and relabelled `r`.
/// Sentences with a missing head are left alone.
pub fn deprojectivize(tb: &mut Treebank) {
    // Split each label once: id -> (base id, wanted head label id).
    let mut split: HashMap<u32, (u32, Option<u32>)> = HashMap::new();
    let n_labels = tb.vocabs.deprel.len() as u32;
    for id in 0..n_labels {
        let s = tb.vocabs.deprel.str(id).to_string();
        let entry = match s.split_once(LIFT_MARK) {
            Some((own, of_head)) => {
                let own_id = tb.vocabs.deprel.intern(own);
                let head_id = tb.vocabs.deprel.intern(of_head);
                (own_id, Some(head_id))
            }
            None => (id, None),
        };
        split.insert(id, entry);
    }
    let mut base = Vec::new();
    let mut wanted = Vec::new();
    for s in 0..tb.len() {
        let Some(mut heads) = tree_heads(tb, s) else { continue };
        let r = tb.sentences[s].range();
        base.clear();
        wanted.clear();
        for &l in &tb.words.deprel[r.clone()] {
            let (b, w) = split.get(&l).copied().unwrap_or((l, None));
            base.push(b);
            wanted.push(w);
        }
        if wanted.iter().all(Option::is_none) {
            continue;
        }
        lower(&mut heads, &base, &wanted);
        for (i, p) in r.enumerate() {
            tb.words.head[p] = heads[i] as i32;
            tb.words.deprel[p] = base[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heads::is_projective;
    use crate::treebank::WordStrs;
    use proptest::prelude::*;

    #[test]
    fn lift_and_lower_a_hand_checked_tree() {
        // Word 1 is the root with dependents 3 and 4; word 2 hangs from 4, so the
        // arc 4 -> 2 crosses word 3 (not below 4): lifting 2 to 1 makes it projective.
        let mut heads = vec![0, 4, 1, 1];
        assert!(!is_projective(&heads));
        let lifted = lift(&mut heads);
        assert_eq!(lifted, vec![(2, 4)]);
        assert_eq!(heads, vec![0, 1, 1, 1]);
        assert!(is_projective(&heads));
        // Labels (ids): 1 root=0, 2 a=1, 3 b=2, 4 c=3; word 2 wants a head labelled c.
        let base = vec![0, 1, 2, 3];
        let wanted = vec![None, Some(3), None, None];
        lower(&mut heads, &base, &wanted);
        assert_eq!(heads, vec![0, 4, 1, 1]);
    }

    #[test]
    fn rare_lifted_labels_become_plain_labels() {
        let mut tb = Treebank::new();
        let w = WordStrs::simple;
        // One sentence with a lifted label seen once, three with one seen three times.
        tb.push_sentence(&[w("A", "X", 0, "root"), w("B", "X", 1, "a↑c")], vec![]);
        for _ in 0..3 {
            tb.push_sentence(&[w("A", "X", 0, "root"), w("B", "X", 1, "b↑d")], vec![]);
        }
        assert_eq!(drop_rare_lifted_labels(&mut tb, 2), 1);
        let label = |s: usize| tb.vocabs.deprel.str(tb.deprels(s)[1]).to_string();
        assert_eq!(label(0), "a");
        assert_eq!((1..4).map(label).collect::<Vec<_>>(), vec!["b↑d"; 3]);
        assert_eq!(tb.heads(0), &[0, 1], "heads are kept");
        // A threshold of 1 keeps every label.
        assert_eq!(drop_rare_lifted_labels(&mut tb, 1), 0);
    }

    #[test]
    fn treebank_round_trip_encodes_labels() {
        let mut tb = Treebank::new();
        let w = WordStrs::simple;
        tb.push_sentence(
            &[w("A", "X", 0, "root"), w("B", "X", 4, "a"), w("C", "X", 1, "b"), w("D", "X", 1, "c")],
            vec![],
        );
        let (p, stats) = projectivize(&tb);
        assert_eq!(stats.nonprojective_sentences, 1);
        assert_eq!(stats.lifted_words, 1);
        assert_eq!(p.heads(0), &[0, 1, 1, 1]);
        assert_eq!(p.vocabs.deprel.str(p.deprels(0)[1]), "a↑c");
        let mut back = p.clone();
        deprojectivize(&mut back);
        assert_eq!(back.heads(0), tb.heads(0));
        let labels: Vec<&str> = back.deprels(0).iter().map(|&l| back.vocabs.deprel.str(l)).collect();
        assert_eq!(labels, vec!["root", "a", "b", "c"]);
    }

    fn random_tree() -> impl Strategy<Value = Vec<u32>> {
        (1usize..=9, any::<u64>()).prop_map(|(n, seed)| {
            let (heads, _) = crate::transition::testing::random_heads(n, seed);
            heads
        })
    }

    proptest! {
        #[test]
        fn lifting_gives_a_projective_tree_and_lowering_a_tree(heads in random_tree()) {
            let mut h = heads.clone();
            let lifted = lift(&mut h);
            prop_assert!(is_projective(&h));
            prop_assert!((1..=h.len() as u32).all(|d| dominates(&h, 0, d as usize)));
            prop_assert_eq!(lifted.is_empty(), is_projective(&heads));
            // Distinct labels per word: lowering then finds the original head exactly.
            let base: Vec<u32> = (1..=h.len() as u32).collect();
            let mut wanted = vec![None; h.len()];
            for &(d, orig) in &lifted {
                wanted[d as usize - 1] = Some(base[orig as usize - 1]);
            }
            lower(&mut h, &base, &wanted);
            prop_assert!((1..=h.len() as u32).all(|d| dominates(&h, 0, d as usize)));
            prop_assert_eq!(h, heads);
        }
    }
}
