//! Test helpers shared by the arc-eager test modules.

use crate::treebank::WordStrs;

/// A random tree over `n` words from `seed` (heads, index 0 = word 1, 0 = ROOT):
/// the words are attached in a random order, each below ROOT or a word already
/// placed, so every tree shape can come out (single root: only the first word
/// placed hangs from ROOT).
pub fn random_heads(n: usize, seed: u64) -> (Vec<u32>, impl FnMut(u64) -> u64) {
    let mut x = seed | 1;
    let mut next = move |m: u64| {
        // xorshift64: a fixed, dependency-free stream per seed.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut order: Vec<u32> = (1..=n as u32).collect();
    for i in (1..n).rev() {
        order.swap(i, next(i as u64 + 1) as usize);
    }
    let mut heads = vec![0u32; n];
    let mut placed = vec![0u32];
    for (i, &d) in order.iter().enumerate() {
        let h = if i == 0 { 0 } else { placed[1 + next(i as u64) as usize] };
        heads[d as usize - 1] = h;
        placed.push(d);
    }
    (heads, next)
}

/// The toy sentences of the arc-eager tests: "The dog barks ." (projective, four
/// arcs), "A cat sees the dog ." and "Dogs sleep .".
pub fn toy_sentences() -> [Vec<WordStrs<'static>>; 3] {
    let w = WordStrs::simple;
    [
        vec![
            w("The", "DET", 2, "det"),
            w("dog", "NOUN", 3, "nsubj"),
            w("barks", "VERB", 0, "root"),
            w(".", "PUNCT", 3, "punct"),
        ],
        vec![
            w("A", "DET", 2, "det"),
            w("cat", "NOUN", 3, "nsubj"),
            w("sees", "VERB", 0, "root"),
            w("the", "DET", 5, "det"),
            w("dog", "NOUN", 3, "obj"),
            w(".", "PUNCT", 3, "punct"),
        ],
        vec![w("Dogs", "NOUN", 2, "nsubj"), w("sleep", "VERB", 0, "root"), w(".", "PUNCT", 2, "punct")],
    ]
}
