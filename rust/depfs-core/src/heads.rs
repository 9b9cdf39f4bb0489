//! The one head convention of depfs and what is computed from heads: dominance,
//! projectivity, siblings.
//!
//! Convention: `heads[d - 1]` is the head of word d (words 1..=n, 0 = ROOT), as in a
//! CoNLL-U HEAD column; with `i32` heads a negative value means "no head". Decoders
//! return heads with ROOT's -1 in front (`[-1, h1, h2, …]`): pass `&heads[1..]`.
//!
//! Projectivity after Nivre & Nilsson (2005), *Pseudo-projective dependency parsing*:
//! an arc h → d is projective when h dominates every word strictly between h and d
//! (ROOT dominates everything); a tree is projective when all its arcs are, which for
//! a tree is the same as no two arcs crossing when drawn above the sentence.

/// A head value: `u32` (always set) or `i32` (negative = none).
pub trait Head: Copy {
    /// The head's position (0 = ROOT), `None` when unset.
    fn position(self) -> Option<usize>;
}

impl Head for u32 {
    fn position(self) -> Option<usize> {
        Some(self as usize)
    }
}

impl Head for i32 {
    fn position(self) -> Option<usize> {
        (self >= 0).then_some(self as usize)
    }
}

/// Walks up from `w`: `Some(true)` when `h` is `w` or one of its ancestors,
/// `Some(false)` when the walk reaches ROOT, an unset head or a head outside the
/// sentence first, `None` on a cycle. At most n + 1 steps, so malformed heads cannot
/// make it loop. O(depth).
pub fn ancestor_walk<H: Head>(heads: &[H], h: usize, mut w: usize) -> Option<bool> {
    let n = heads.len();
    for _ in 0..=n {
        if w == h {
            return Some(true);
        }
        if w == 0 || w > n {
            return Some(false);
        }
        match heads[w - 1].position() {
            Some(p) => w = p,
            None => return Some(false),
        }
    }
    None
}

/// Whether `h` dominates `w` (is `w` itself or an ancestor of it); false on cycles.
pub fn dominates<H: Head>(heads: &[H], h: usize, w: usize) -> bool {
    ancestor_walk(heads, h, w) == Some(true)
}

/// Whether the arc into word `d` is non-projective: a word strictly between d and
/// its head that the head does not dominate. False when d has no head in the
/// sentence. O(span · depth).
pub fn arc_is_nonprojective<H: Head>(heads: &[H], d: usize) -> bool {
    match heads[d - 1].position() {
        Some(h) if h <= heads.len() => {
            let (lo, hi) = if h < d { (h, d) } else { (d, h) };
            (lo + 1..hi).any(|w| !dominates(heads, h, w))
        }
        _ => false,
    }
}

/// One flag per word: is its arc non-projective? O(n · span · depth); sentences are
/// short (mean ≈ 20).
pub fn nonprojective_arcs<H: Head>(heads: &[H]) -> Vec<bool> {
    (1..=heads.len()).map(|d| arc_is_nonprojective(heads, d)).collect()
}

/// Whether no arc of the tree is non-projective.
pub fn is_projective<H: Head>(heads: &[H]) -> bool {
    (1..=heads.len()).all(|d| !arc_is_nonprojective(heads, d))
}

/// Sibling of each word (index = position, 0 = ROOT): the previous child of its head
/// on the same side, closer to the head; `None` for innermost children. O(n).
pub fn siblings<H: Head>(heads: &[H]) -> Vec<Option<usize>> {
    let n1 = heads.len() + 1;
    let head_of = |m: usize| heads[m - 1].position().filter(|&h| h < n1);
    let mut out = vec![None; n1];
    // The child of each head seen last, walking away from the head on each side.
    let mut last = vec![None; n1];
    for (m, sib) in out.iter_mut().enumerate().skip(1) {
        if let Some(h) = head_of(m).filter(|&h| h < m) {
            *sib = last[h].replace(m);
        }
    }
    last.fill(None);
    for (m, sib) in out.iter_mut().enumerate().skip(1).rev() {
        if let Some(h) = head_of(m).filter(|&h| h > m) {
            *sib = last[h].replace(m);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn dominance_and_cycles() {
        // 1 <- 2 <- 0, 3 <- 2
        let heads = [2u32, 0, 2];
        assert!(dominates(&heads, 2, 1) && dominates(&heads, 0, 3) && dominates(&heads, 1, 1));
        assert!(!dominates(&heads, 1, 3));
        let cycle = [2i32, 1];
        assert_eq!(ancestor_walk(&cycle, 0, 1), None);
        assert!(!dominates(&cycle, 0, 1));
        let unset = [-1i32, 1];
        assert_eq!(ancestor_walk(&unset, 0, 2), Some(false));
    }

    #[test]
    fn crossing_arcs_are_found() {
        // 1 <- 3, 2 <- 4 cross; 3 <- 0, 4 <- 1.
        let heads = [3i32, 4, 0, 1];
        assert_eq!(nonprojective_arcs(&heads), vec![false, true, false, true]);
        assert!(!is_projective(&heads));
        assert!(is_projective(&[2u32, 0, 2, 3]));
        assert!(is_projective::<i32>(&[]));
        // Words without a head, or with one outside the sentence, are never flagged.
        assert_eq!(nonprojective_arcs(&[3i32, 1, 2, 9, -1]), vec![false; 5]);
    }

    #[test]
    fn siblings_of_a_tree() {
        // 3 has children 1, 2 (left) and 4, 5 (right); 0 -> 3.
        let s = siblings(&[3i32, 3, 0, 3, 3]);
        assert_eq!(s, vec![None, Some(2), None, None, None, Some(4)]);
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

    /// Two arcs cross: exactly one end of one lies strictly inside the other.
    fn crossing(heads: &[i32]) -> bool {
        let arcs: Vec<(usize, usize)> = heads
            .iter()
            .enumerate()
            .map(|(i, &h)| ((i + 1).min(h as usize), (i + 1).max(h as usize)))
            .collect();
        arcs.iter().any(|&(a1, b1)| arcs.iter().any(|&(a2, b2)| a1 < a2 && a2 < b1 && b1 < b2))
    }

    /// Random trees: each word picks a head among the words already attached.
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

    /// Reference for [`siblings`]: the child of m's head nearest to it strictly between
    /// the two; words with no head in the sentence, or themselves as head, have none and
    /// are no one's sibling.
    fn siblings_brute(heads: &[i32]) -> Vec<Option<usize>> {
        let n1 = heads.len() + 1;
        let head = |m: usize| usize::try_from(heads[m - 1]).ok().filter(|&h| h < n1 && h != m);
        let mut out = vec![None; n1];
        for (m, sib) in out.iter_mut().enumerate().skip(1) {
            if let Some(h) = head(m) {
                let between = |c: &usize| head(*c) == Some(h);
                *sib = if h < m { (h + 1..m).rev().find(between) } else { (m + 1..h).find(between) };
            }
        }
        out
    }

    proptest! {
        /// Any heads, malformed ones included: unset (-1), past the last word, self-loops.
        #[test]
        fn siblings_match_the_definition_on_any_heads(
            heads in (1usize..8).prop_flat_map(|n| proptest::collection::vec(-1i32..=n as i32 + 1, n))
        ) {
            prop_assert_eq!(siblings(&heads), siblings_brute(&heads));
        }

        #[test]
        fn matches_the_definition_and_no_crossing(heads in random_tree()) {
            prop_assert_eq!(nonprojective_arcs(&heads), brute(&heads));
            // On trees, projective by dominance = no two arcs cross.
            prop_assert_eq!(is_projective(&heads), !crossing(&heads));
            let unsigned: Vec<u32> = heads.iter().map(|&h| h as u32).collect();
            prop_assert_eq!(nonprojective_arcs(&unsigned), brute(&heads));
        }
    }
}
