//! Deterministic 64-bit hashing with fixed constants (never `DefaultHasher`, whose
//! algorithm may change between Rust releases and would silently invalidate models).
//!
//! Strings are hashed with FNV-1a followed by the SplitMix64 finaliser; values are
//! combined with [`combine`], a multiply-xorshift mixer. Both are fixed forever:
//! a model file stores feature weights at positions derived from these functions.

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// Fixed seed mixed into every string hash.
pub const SEED: u64 = 0x5eed_d0f5_0000_0001;

/// SplitMix64 finaliser: a bijection on u64 with full avalanche.
#[inline(always)]
pub fn fmix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Hash of a string: FNV-1a over the UTF-8 bytes, seeded, then finalised. O(len).
pub fn hash_str(s: &str) -> u64 {
    let mut h = FNV_OFFSET ^ SEED;
    for &b in s.as_bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(FNV_PRIME);
    }
    fmix(h)
}

/// [`hash_str`] of the string of `chars`, without building it. O(chars).
pub fn hash_chars(chars: impl IntoIterator<Item = char>) -> u64 {
    let mut h = FNV_OFFSET ^ SEED;
    let mut buf = [0u8; 4];
    for c in chars {
        for &b in c.encode_utf8(&mut buf).as_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(FNV_PRIME);
        }
    }
    fmix(h)
}

/// Order-dependent combination of an accumulated hash with one more value.
#[inline(always)]
pub fn combine(acc: u64, v: u64) -> u64 {
    fmix(acc.rotate_left(23) ^ v.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Folds values into a seed in order.
#[inline]
pub fn fold(seed: u64, values: impl IntoIterator<Item = u64>) -> u64 {
    values.into_iter().fold(seed, combine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_is_fixed_forever() {
        // Pinned values: if these change, every saved model becomes garbage.
        assert_eq!(hash_str(""), fmix(FNV_OFFSET ^ SEED));
        let a = hash_str("NOUN");
        assert_eq!(a, hash_str("NOUN"));
        assert_ne!(a, hash_str("NOUn"));
        assert_eq!(fmix(0), 0);
        assert_eq!(fmix(1), 0x5692_161d_100b_05e5);
    }

    #[test]
    fn chars_hash_as_their_string() {
        for s in ["", "a", "McDonald's", "Über-été", "日本語", "x\u{1F600}y"] {
            assert_eq!(hash_chars(s.chars()), hash_str(s), "{s:?}");
        }
    }

    #[test]
    fn combine_is_order_dependent() {
        assert_ne!(combine(combine(1, 2), 3), combine(combine(1, 3), 2));
        assert_eq!(fold(7, [1, 2, 3]), combine(combine(combine(7, 1), 2), 3));
    }
}
