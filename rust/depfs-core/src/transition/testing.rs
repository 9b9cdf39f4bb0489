//! Test helpers shared by the arc-eager test modules.

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
