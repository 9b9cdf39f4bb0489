//! Attribute values as u64 hashes: once per vocabulary string, then per sentence a
//! flat table indexed by (position, attribute slot).
//!
//! Interned ids are per treebank (train and test vocabularies differ), so features
//! must be computed from strings; hashing each vocabulary string once keeps the
//! per-word cost at one array lookup.

use super::hash::{hash_chars, hash_str};
use super::syntax::Attr;
use crate::tagger::clusters::{path_value, Clusters};
use crate::Treebank;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Value of ROOT (position 0) for every attribute.
pub const ROOT_VALUE: u64 = 0x0123_4567_89ab_cdef;
/// Value of positions before the first / after the last word (h-2, m+1, ...).
pub const PAD_LEFT: u64 = 0x1f2e_3d4c_5b6a_7988;
pub const PAD_RIGHT: u64 = 0x2a3b_4c5d_6e7f_8091;
/// Value of a node that does not exist (no sibling, empty stack, ...).
pub const NONE_VALUE: u64 = 0x3141_5926_5358_9793;

/// Number of positions of padding kept on each side of a sentence (h±2).
pub const PAD: usize = 2;

/// The string an attribute takes for a word, given its column strings.
pub fn attr_string(attr: &Attr, form: &str, lemma: &str, upos: &str, xpos: &str, feats: &str) -> String {
    match attr {
        Attr::Form => form.to_string(),
        Attr::Lower => form.to_lowercase(),
        Attr::Lemma => lemma.to_string(),
        Attr::Upos => upos.to_string(),
        Attr::Xpos => xpos.to_string(),
        Attr::Feat(key) => feat_value(feats, key).unwrap_or("<none>").to_string(),
        Attr::Prefix(k) => form.chars().take(*k as usize).collect(),
        Attr::Suffix(k) => {
            let n = form.chars().count();
            form.chars().skip(n.saturating_sub(*k as usize)).collect()
        }
        Attr::Shape => shape(form),
        Attr::Feats => feats.to_string(),
        Attr::HasDigit => flag(form.chars().any(|c| c.is_numeric())),
        Attr::HasHyphen => flag(form.contains('-')),
        Attr::HasUpper => flag(form.chars().any(char::is_uppercase)),
        // Read from the tagger's dictionary, passes or cluster table, never from a column.
        Attr::Ambig | Attr::Bupos | Attr::Cluster(_) => String::new(),
    }
}

fn flag(b: bool) -> String {
    if b { "1" } else { "0" }.to_string()
}

/// Value of `key` in a FEATS string `A=B|C=D` (`_` = none).
pub fn feat_value<'a>(feats: &'a str, key: &str) -> Option<&'a str> {
    feats.split('|').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then_some(v)
    })
}

/// Word shape: upper → X, lower → x, digit → d, other characters kept; runs of the
/// same shape character collapsed to one ("McDonald's" → "XxXx'x").
pub fn shape(form: &str) -> String {
    shape_chars(form).collect()
}

/// The characters of [`shape`], one by one.
fn shape_chars(form: &str) -> impl Iterator<Item = char> + '_ {
    let mut last = None;
    form.chars().filter_map(move |c| {
        let s = if c.is_uppercase() {
            'X'
        } else if c.is_lowercase() {
            'x'
        } else if c.is_ascii_digit() {
            'd'
        } else {
            c
        };
        (last != Some(s)).then(|| {
            last = Some(s);
            s
        })
    })
}

/// `hash_str(&attr_string(a, form, ..))` for an attribute of the form, without building
/// the string: each tagging hashes every attribute of every form of its text, and the
/// strings' allocations were most of that. O(|form|).
fn form_attr_hash(a: &Attr, form: &str) -> u64 {
    let flag = |b: bool| hash_str(if b { "1" } else { "0" });
    match a {
        Attr::Form => hash_str(form),
        Attr::Lower if form.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) => hash_str(form),
        Attr::Prefix(k) => hash_str(form.char_indices().nth(*k as usize).map_or(form, |(at, _)| &form[..at])),
        Attr::Suffix(0) => hash_str(""),
        Attr::Suffix(k) => {
            hash_str(form.char_indices().rev().nth(*k as usize - 1).map_or(form, |(at, _)| &form[at..]))
        }
        Attr::Shape => hash_chars(shape_chars(form)),
        Attr::HasDigit => flag(form.chars().any(|c| c.is_numeric())),
        Attr::HasHyphen => flag(form.contains('-')),
        Attr::HasUpper => flag(form.chars().any(char::is_uppercase)),
        a => hash_str(&attr_string(a, form, "", "", "", "")),
    }
}

/// Which column's vocabulary an attribute is computed from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    Form,
    Lemma,
    Upos,
    Xpos,
    Feats,
}

fn column(attr: &Attr) -> Column {
    match attr {
        a if a.from_form() => Column::Form,
        Attr::Lemma => Column::Lemma,
        Attr::Upos => Column::Upos,
        Attr::Xpos => Column::Xpos,
        _ => Column::Feats,
    }
}

/// Hash of every attribute for every string of the relevant vocabulary of one treebank.
/// Build once per (treebank, attribute list): O(Σ vocabulary sizes × attributes); a
/// prepared training set shares the tables of each attribute between models
/// ([`VocabHashes::with_cache`]).
#[derive(Debug, Clone)]
pub struct VocabHashes {
    pub attrs: Vec<Attr>,
    /// `tables[slot][vocab id]`.
    tables: Vec<Arc<[u64]>>,
}

/// Tables already computed for one treebank, by attribute.
pub type VocabCache = Mutex<HashMap<Attr, Arc<[u64]>>>;

impl VocabHashes {
    pub fn new(tb: &Treebank, attrs: &[Attr]) -> VocabHashes {
        VocabHashes::with_clusters(tb, attrs, None)
    }

    /// [`VocabHashes::new`] where `cluster` attributes read `clusters` (without a table
    /// every word has the "none" value; the tagger refuses such templates first). Each form
    /// is looked up once for every `cluster` attribute. O(forms · attributes).
    pub fn with_clusters(tb: &Treebank, attrs: &[Attr], clusters: Option<&Clusters>) -> VocabHashes {
        let forms = tb.vocabs.form.strings();
        let paths: Vec<Option<&str>> = match clusters {
            Some(c) if attrs.iter().any(|a| matches!(a, Attr::Cluster(_))) => {
                forms.iter().map(|f| c.path(f)).collect()
            }
            _ => Vec::new(),
        };
        let tables = attrs
            .iter()
            .map(|a| match a {
                Attr::Cluster(k) => {
                    (0..forms.len()).map(|i| path_value(paths.get(i).copied().flatten(), *k)).collect()
                }
                a => attr_table(tb, a),
            })
            .collect();
        VocabHashes { attrs: attrs.to_vec(), tables }
    }

    /// [`VocabHashes::with_clusters`] computing only the attributes `cache` does not hold
    /// yet (and adding them to it). `cache` must belong to `tb`, and always be used with
    /// the same `clusters`.
    pub fn with_cache(
        tb: &Treebank,
        attrs: &[Attr],
        cache: &VocabCache,
        clusters: Option<&Clusters>,
    ) -> VocabHashes {
        let mut known = cache.lock().unwrap_or_else(|e| e.into_inner());
        let tables = attrs
            .iter()
            .map(|a| {
                Arc::clone(known.entry(a.clone()).or_insert_with(|| match a {
                    Attr::Cluster(k) => cluster_table(tb, *k, clusters),
                    a => attr_table(tb, a),
                }))
            })
            .collect();
        VocabHashes { attrs: attrs.to_vec(), tables }
    }

    /// Hash of attribute `slot` for the word at flat column position `pos`.
    #[inline]
    pub fn value(&self, tb: &Treebank, slot: usize, pos: usize) -> u64 {
        let w = &tb.words;
        let id = match column(&self.attrs[slot]) {
            Column::Form => w.form[pos],
            Column::Lemma => w.lemma[pos],
            Column::Upos => w.upos[pos],
            Column::Xpos => w.xpos[pos],
            Column::Feats => w.feats[pos],
        };
        self.tables[slot][id as usize]
    }

    /// Hash of attribute `slot` for string `id` of the vocabulary it reads (the tagger's
    /// sentence table reads form attributes by form id).
    #[inline]
    pub fn of_id(&self, slot: usize, id: u32) -> u64 {
        self.tables[slot][id as usize]
    }
}

/// Value of `cluster:k` for every form of `tb` (the "none" value without a table).
/// O(forms).
fn cluster_table(tb: &Treebank, k: u8, clusters: Option<&Clusters>) -> Arc<[u64]> {
    let forms = tb.vocabs.form.strings();
    forms.iter().map(|f| path_value(clusters.and_then(|c| c.path(f)), k)).collect()
}

/// Hash of attribute `a` for every string of the vocabulary it reads. O(vocabulary).
fn attr_table(tb: &Treebank, a: &Attr) -> Arc<[u64]> {
    let v = &tb.vocabs;
    let (vocab, col) = match column(a) {
        Column::Form => (&v.form, Column::Form),
        Column::Lemma => (&v.lemma, Column::Lemma),
        Column::Upos => (&v.upos, Column::Upos),
        Column::Xpos => (&v.xpos, Column::Xpos),
        Column::Feats => (&v.feats, Column::Feats),
    };
    vocab
        .strings()
        .iter()
        .map(|s| {
            let s: &str = s;
            let value = match col {
                Column::Form => return form_attr_hash(a, s),
                Column::Lemma => attr_string(a, "", s, "", "", ""),
                Column::Upos => attr_string(a, "", "", s, "", ""),
                Column::Xpos => attr_string(a, "", "", "", s, ""),
                Column::Feats => attr_string(a, "", "", "", "", s),
            };
            hash_str(&value)
        })
        .collect()
}

/// Attribute hashes of one sentence: `vals[(p + PAD) * n_slots + slot]` for positions
/// p in -PAD ..= n + PAD (0 = ROOT). Refilled per sentence without reallocating.
#[derive(Debug, Clone, Default)]
pub struct SentAttrs {
    pub n: usize,
    pub n_slots: usize,
    pub vals: Vec<u64>,
}

impl SentAttrs {
    /// Fills the table for sentence `s` of `tb`. O(n × slots).
    pub fn fill(&mut self, vh: &VocabHashes, tb: &Treebank, s: usize) {
        let meta = &tb.sentences[s];
        let n = meta.len as usize;
        let k = vh.attrs.len();
        self.n = n;
        self.n_slots = k;
        self.vals.clear();
        self.vals.resize((n + 1 + 2 * PAD) * k, 0);
        for p in 0..n + 1 + 2 * PAD {
            let row = &mut self.vals[p * k..(p + 1) * k];
            if p < PAD {
                row.fill(PAD_LEFT);
            } else if p == PAD {
                row.fill(ROOT_VALUE);
            } else if p > n + PAD {
                row.fill(PAD_RIGHT);
            } else {
                let pos = meta.start as usize + p - PAD - 1;
                for (slot, v) in row.iter_mut().enumerate() {
                    *v = vh.value(tb, slot, pos);
                }
            }
        }
    }

    /// [`SentAttrs::get`] of `slot` at positions from, from + 1, ..., from + len − 1,
    /// without a bounds test per position, as three parts: how many leading positions
    /// are left padding, the stored values, and how many trailing ones are right padding.
    /// O(len).
    pub fn column(
        &self,
        slot: usize,
        from: i64,
        len: usize,
    ) -> (usize, impl Iterator<Item = u64> + '_, usize) {
        let (first, last) = (-(PAD as i64), (self.n + PAD) as i64);
        let lo = from.clamp(first, last + 1); // first position with a stored value
        let hi = (from + len as i64).clamp(lo, last + 1);
        let left = (lo - from).clamp(0, len as i64) as usize;
        let k = self.n_slots.max(1);
        let rows = (lo + PAD as i64) as usize..(hi + PAD as i64) as usize;
        let stored = self.vals[rows.start * k..rows.end * k].chunks_exact(k).map(move |r| r[slot]);
        (left, stored, len - left - rows.len())
    }

    /// Value of `slot` at sentence position `p` (-PAD ..= n + PAD; others give padding).
    #[inline]
    pub fn get(&self, slot: usize, p: i64) -> u64 {
        if p < -(PAD as i64) {
            return PAD_LEFT;
        }
        if p > (self.n + PAD) as i64 {
            return PAD_RIGHT;
        }
        self.vals[(p + PAD as i64) as usize * self.n_slots + slot]
    }
}

/// The distinct attributes used by a list of attributes, in first-use order.
pub fn distinct(attrs: impl IntoIterator<Item = Attr>) -> Vec<Attr> {
    let mut out: Vec<Attr> = Vec::new();
    for a in attrs {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WordStrs;

    #[test]
    fn derived_attributes() {
        assert_eq!(shape("McDonald's"), "XxXx'x");
        assert_eq!(shape("1,234.5"), "d,d.d");
        assert_eq!(feat_value("Number=Sing|Person=3", "Person"), Some("3"));
        assert_eq!(feat_value("_", "Person"), None);
        assert_eq!(attr_string(&Attr::Prefix(3), "Über", "", "", "", ""), "Übe");
        assert_eq!(attr_string(&Attr::Suffix(3), "ab", "", "", "", ""), "ab");
        assert_eq!(attr_string(&Attr::Lower, "DoG", "", "", "", ""), "dog");
    }

    proptest::proptest! {
        #[test]
        fn form_attributes_hash_as_their_strings(form in "[a-zA-Z0-9ÉéßİǅΣς日'.-]{0,8}") {
            let attrs =
                [Attr::Form, Attr::Lower, Attr::Shape, Attr::HasDigit, Attr::HasHyphen, Attr::HasUpper];
            let affixes = (0..6).flat_map(|k| [Attr::Prefix(k), Attr::Suffix(k)]);
            for a in attrs.into_iter().chain(affixes) {
                let want = hash_str(&attr_string(&a, &form, "", "", "", ""));
                proptest::prop_assert_eq!(form_attr_hash(&a, &form), want, "{:?}", a);
            }
        }
    }

    /// `column` reads what `get` reads, at every start and length around the sentence.
    #[test]
    fn columns_equal_gets() {
        let mut tb = Treebank::new();
        let words: Vec<WordStrs<'_>> =
            ["a", "bb", "a", "cc", "d"].iter().map(|&f| WordStrs::simple(f, "NOUN", 0, "root")).collect();
        tb.push_sentence(&words, vec![]);
        let attrs = vec![Attr::Form, Attr::Upos, Attr::Suffix(1)];
        let mut sa = SentAttrs::default();
        sa.fill(&VocabHashes::new(&tb, &attrs), &tb, 0);
        for slot in 0..3 {
            for from in -6..12i64 {
                for len in 0..14usize {
                    let want: Vec<u64> = (0..len as i64).map(|i| sa.get(slot, from + i)).collect();
                    let (left, stored, right) = sa.column(slot, from, len);
                    let got: Vec<u64> = std::iter::repeat_n(PAD_LEFT, left)
                        .chain(stored)
                        .chain(std::iter::repeat_n(PAD_RIGHT, right))
                        .collect();
                    assert_eq!(got, want, "slot {slot} from {from} len {len}");
                }
            }
        }
    }

    #[test]
    fn values_match_across_treebanks_with_different_ids() {
        let mut a = Treebank::new();
        a.push_sentence(
            &[WordStrs::simple("x", "X", 0, "root"), WordStrs::simple("dog", "NOUN", 1, "obj")],
            vec![],
        );
        let mut b = Treebank::new();
        b.push_sentence(&[WordStrs::simple("dog", "NOUN", 0, "root")], vec![]);
        let attrs = vec![Attr::Form, Attr::Upos, Attr::Suffix(2)];
        let (va, vb) = (VocabHashes::new(&a, &attrs), VocabHashes::new(&b, &attrs));
        let (mut sa, mut sb) = (SentAttrs::default(), SentAttrs::default());
        sa.fill(&va, &a, 0);
        sb.fill(&vb, &b, 0);
        for slot in 0..3 {
            assert_eq!(sa.get(slot, 2), sb.get(slot, 1));
            assert_eq!(sa.get(slot, 0), ROOT_VALUE);
            assert_eq!(sb.get(slot, -1), PAD_LEFT);
            assert_eq!(sb.get(slot, 2), PAD_RIGHT);
            assert_eq!(sb.get(slot, 9), PAD_RIGHT);
        }
        assert_eq!(sb.get(2, 1), hash_str("og"));
    }
}
