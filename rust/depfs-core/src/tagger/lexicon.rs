//! The classes a word may take (a tag dictionary, as in Ratnaparkhi 1996 and UDPipe 1's
//! guesser): restricting each decision to them makes it cheaper (a word with one
//! candidate costs nothing) and keeps rare confusions out.
//!
//! A *known* form was seen at least `upos_min_known` times in training: its UPOS
//! candidates are the tags it was seen with. A known (form, UPOS) pair, seen at least
//! `min_known` times, gives the XPOS, FEATS and lemma-script candidates seen with it. (A
//! form seen a few times is left open for UPOS: the training words it restricts always
//! find their tag among those seen, new text often does not; on en_ewt dev 8 rather than
//! 2 for UPOS, 2 for pairs, with the backward pass, docs/design.md § Tagger.) Everything else backs off: UPOS to every tag;
//! XPOS and FEATS to the values seen with the predicted UPOS; lemma scripts to those seen
//! with the UPOS and the longest known suffix (4 to 1 characters) of the lower-cased
//! form, then with the UPOS alone. The suffix back-off offers only *productive* scripts,
//! seen with at least [`MIN_SCRIPT_FORMS`] distinct lower-cased forms: a script learnt
//! from one word ("Mar" → "March": append "ch"; "went" → "go") is that word's own, and
//! offered to unknown words it made "Miramar" into "Miramarch". Forms are looked up as
//! written, then lower-cased (a capitalised sentence-initial word). Words seen fewer times train the
//! back-off paths, so that unknown words at tagging time meet a trained classifier.
//!
//! [`TagRules`] change these candidates in taggers that have them: FEATS widened by the
//! values productive with the predicted XPOS, XPOS widened by values that share forms, and
//! the lemma back-off narrowed to scripts that make a known lemma.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::features::{FEATS, LEMMA, UPOS, XPOS};

/// Candidates of a known form.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FormEntry {
    /// UPOS classes (empty: the form is known only through a (form, UPOS) pair).
    pub upos: Vec<u32>,
    /// Per UPOS class: XPOS, FEATS and lemma-script classes of a known (form, UPOS).
    pub by_upos: Vec<(u32, [Vec<u32>; 3])>,
}

/// The tag dictionary of a tagger; see the module comment.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Lexicon {
    pub min_known: u32,
    pub forms: BTreeMap<String, FormEntry>,
    /// Per UPOS class: XPOS and FEATS classes seen with it.
    pub by_upos: Vec<[Vec<u32>; 2]>,
    /// `"{upos}\t{suffix}"` → lemma scripts.
    pub scripts_by_suffix: BTreeMap<String, Vec<u32>>,
    /// Per UPOS class: lemma scripts.
    pub scripts_by_upos: Vec<Vec<u32>>,
    /// Hashed copies of `forms` and `scripts_by_suffix` for look-ups (not stored).
    #[serde(skip)]
    index: Index<Hashed>,
}

/// Hashed look-ups of a structure's `BTreeMap<String>`s, built on first use: a B-tree
/// look-up compares strings scattered over the heap, a cache miss each (the memcmp of
/// those look-ups was a quarter of tagging's time with one template). Derived from the
/// maps, so never stored and never compared.
#[derive(Clone)]
struct Index<T>(std::sync::OnceLock<T>);

impl<T> Default for Index<T> {
    fn default() -> Self {
        Index(std::sync::OnceLock::new())
    }
}

#[derive(Clone)]
struct Hashed {
    forms: FxHashMap<Box<str>, FormEntry>,
    /// `scripts_by_suffix` by [`packed_suffix`] key.
    suffixes: FxHashMap<(u32, u8, u128), Vec<u32>>,
}

impl<T> PartialEq for Index<T> {
    fn eq(&self, _: &Index<T>) -> bool {
        true
    }
}

impl<T> std::fmt::Debug for Index<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Index")
    }
}

/// The key of UPOS `upos` and a suffix of at most [`MAX_SUFFIX`] characters: its bytes
/// packed into a u128, and their number (None: longer than 16 bytes).
fn packed_suffix(upos: u32, suffix: &str) -> Option<(u32, u8, u128)> {
    let b = suffix.as_bytes();
    (b.len() <= 16).then(|| (upos, b.len() as u8, b.iter().rev().fold(0u128, |acc, &x| acc << 8 | x as u128)))
}

/// The last `k` characters of `s` (None: fewer). O(k).
fn last_chars(s: &str, k: usize) -> Option<&str> {
    s.char_indices().rev().nth(k - 1).map(|(at, _)| &s[at..])
}

/// `s` lower-cased, borrowed when that changes nothing (ASCII without capitals).
pub(super) fn lowered(s: &str) -> std::borrow::Cow<'_, str> {
    if s.bytes().all(|b| b.is_ascii() && !b.is_ascii_uppercase()) {
        std::borrow::Cow::Borrowed(s)
    } else {
        std::borrow::Cow::Owned(s.to_lowercase())
    }
}

/// Distinct forms a lemma script must be seen with to be offered by the suffix back-off.
pub const MIN_SCRIPT_FORMS: usize = 2;

/// Longest suffix the lemma back-off keys on.
pub const MAX_SUFFIX: usize = 4;

fn suffix_key(upos: u32, lower: &str, k: usize) -> Option<String> {
    let n = lower.chars().count();
    (n >= k).then(|| format!("{upos}\t{}", lower.chars().skip(n - k).collect::<String>()))
}

fn insert_sorted(v: &mut Vec<u32>, x: u32) {
    if let Err(i) = v.binary_search(&x) {
        v.insert(i, x);
    }
}

/// One training word: form and the class of each column (None: column not predicted).
pub struct Seen<'a> {
    pub form: &'a str,
    pub classes: [Option<u32>; 4],
}

impl Lexicon {
    /// Builds the dictionary from training words: a form seen `upos_min_known` times is
    /// known for UPOS, a (form, UPOS) pair seen `min_known` times for the other columns.
    /// O(words · log).
    pub fn build(words: &[Seen<'_>], n_upos: usize, min_known: u32, upos_min_known: u32) -> Lexicon {
        let mut form_count: BTreeMap<&str, u32> = BTreeMap::new();
        let mut pair_count: BTreeMap<(&str, u32), u32> = BTreeMap::new();
        for w in words {
            *form_count.entry(w.form).or_default() += 1;
            if let Some(u) = w.classes[UPOS] {
                *pair_count.entry((w.form, u)).or_default() += 1;
            }
        }
        // Distinct lower-cased forms per lemma script. O(words · log).
        let mut script_forms: BTreeMap<u32, std::collections::BTreeSet<String>> = BTreeMap::new();
        for w in words {
            if let Some(s) = w.classes[LEMMA] {
                script_forms.entry(s).or_default().insert(w.form.to_lowercase());
            }
        }
        let productive = |s: u32| script_forms.get(&s).map_or(0, |f| f.len()) >= MIN_SCRIPT_FORMS;
        let mut lex = Lexicon {
            min_known,
            by_upos: vec![Default::default(); n_upos],
            scripts_by_upos: vec![Vec::new(); n_upos],
            ..Default::default()
        };
        for w in words {
            let Some(u) = w.classes[UPOS] else { continue };
            let known_form = form_count[w.form] >= upos_min_known;
            let known_pair = pair_count[&(w.form, u)] >= min_known;
            if known_form || known_pair {
                let e = lex.forms.entry(w.form.to_string()).or_default();
                if known_form {
                    insert_sorted(&mut e.upos, u);
                }
                if known_pair {
                    let at = match e.by_upos.iter().position(|(x, _)| *x == u) {
                        Some(i) => i,
                        None => {
                            e.by_upos.push((u, Default::default()));
                            e.by_upos.len() - 1
                        }
                    };
                    for (k, col) in [XPOS, FEATS, LEMMA].into_iter().enumerate() {
                        if let Some(c) = w.classes[col] {
                            insert_sorted(&mut e.by_upos[at].1[k], c);
                        }
                    }
                }
            }
            for (k, col) in [XPOS, FEATS].into_iter().enumerate() {
                if let Some(c) = w.classes[col] {
                    insert_sorted(&mut lex.by_upos[u as usize][k], c);
                }
            }
            if let Some(s) = w.classes[LEMMA] {
                insert_sorted(&mut lex.scripts_by_upos[u as usize], s);
                if productive(s) {
                    let lower = w.form.to_lowercase();
                    for k in 1..=MAX_SUFFIX {
                        if let Some(key) = suffix_key(u, &lower, k) {
                            insert_sorted(lex.scripts_by_suffix.entry(key).or_default(), s);
                        }
                    }
                }
            }
        }
        for e in lex.forms.values_mut() {
            e.by_upos.sort_by_key(|(u, _)| *u);
        }
        lex
    }

    /// The hashed look-ups, built on the first call. Only the keys a look-up can meet
    /// are kept: `"{upos}\t{suffix}"` of 1 to [`MAX_SUFFIX`] characters, as
    /// [`suffix_key`] writes them. O(entries) once, then O(1).
    fn hashed(&self) -> &Hashed {
        self.index.0.get_or_init(|| {
            let forms = self.forms.iter().map(|(f, e)| (f.as_str().into(), e.clone())).collect();
            let suffixes = self
                .scripts_by_suffix
                .iter()
                .filter_map(|(key, v)| {
                    let (u, suffix) = key.split_once('\t')?;
                    let upos: u32 = u.parse().ok().filter(|x: &u32| x.to_string() == u)?;
                    (1..=MAX_SUFFIX).contains(&suffix.chars().count()).then_some(())?;
                    Some((packed_suffix(upos, suffix)?, v.clone()))
                })
                .collect();
            Hashed { forms, suffixes }
        })
    }

    /// The entry of `form` (as written, else lower-cased) and whether it was lower-cased.
    /// O(|form|).
    pub fn entry(&self, form: &str) -> Option<(&FormEntry, bool)> {
        let forms = &self.hashed().forms;
        if let Some(e) = forms.get(form) {
            return Some((e, false));
        }
        match lowered(form) {
            std::borrow::Cow::Owned(lower) if lower != form => forms.get(lower.as_str()).map(|e| (e, true)),
            _ => None,
        }
    }

    /// Candidates for `column` of a word with entry `entry` and predicted UPOS `upos`;
    /// empty means every class. Lemma back-off needs the form.
    pub fn candidates<'a>(
        &'a self,
        column: usize,
        entry: Option<&'a FormEntry>,
        upos: u32,
        form: &str,
    ) -> &'a [u32] {
        if column == UPOS {
            return entry.map_or(&[], |e| &e.upos[..]);
        }
        let k = column - 1;
        if let Some((_, c)) = entry.and_then(|e| e.by_upos.iter().find(|(u, _)| *u == upos)) {
            return &c[k];
        }
        if column != LEMMA {
            return self.by_upos.get(upos as usize).map_or(&[], |c| &c[k][..]);
        }
        // The longest suffix known with the UPOS; no string is built. O(MAX_SUFFIX).
        let (lower, suffixes) = (lowered(form), &self.hashed().suffixes);
        for k in (1..=MAX_SUFFIX).rev() {
            if let Some(c) = last_chars(&lower, k).and_then(|x| suffixes.get(&packed_suffix(upos, x)?)) {
                return c;
            }
        }
        self.scripts_by_upos.get(upos as usize).map_or(&[], |c| &c[..])
    }
}

/// Rules that change the dictionary's candidates, in taggers that have them (a model
/// variant of its own; docs/design.md § Tagger, "Candidate rules"). Each is None when off.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TagRules {
    /// FEATS candidates widened by the predicted XPOS ([`FeatsByXpos`]).
    pub feats: Option<FeatsByXpos>,
    /// Known lemmas ([`KnownLemmas`]).
    pub lemmas: Option<KnownLemmas>,
    /// XPOS candidates widened by their siblings ([`XposSiblings`]).
    pub xpos: Option<XposSiblings>,
}

/// Share of the forms seen with an XPOS value that must also be seen with another, for
/// the other to be its sibling ([`XposSiblings`]).
pub const MIN_SIBLING_SHARE: f64 = 0.1;

/// XPOS values that share forms (en_ewt: VB and VBP, the base form; VBD and VBN): a form
/// whose (form, UPOS) entry offers one is offered its siblings too, values seen with the
/// same UPOS on at least `min_forms` distinct lower-cased forms that also have the first,
/// and on [`MIN_SIBLING_SHARE`] of them ("face" seen twice, both times VB, may be a VBP).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct XposSiblings {
    pub n_xpos: u32,
    pub min_forms: u32,
    /// Per `upos · n_xpos + xpos`: its siblings, sorted.
    pub table: Vec<Vec<u32>>,
}

impl XposSiblings {
    /// From training words' (UPOS, XPOS) classes and forms. O(words · log + forms · XPOS²).
    pub fn build(words: &[Seen<'_>], n_upos: usize, n_xpos: usize, min_forms: u32) -> XposSiblings {
        let mut of_form: BTreeMap<(u32, String), Vec<u32>> = BTreeMap::new();
        for w in words {
            if let (Some(u), Some(x)) = (w.classes[UPOS], w.classes[XPOS]) {
                insert_sorted(of_form.entry((u, w.form.to_lowercase())).or_default(), x);
            }
        }
        let at = |u: u32, x: u32| u as usize * n_xpos + x as usize;
        let (mut forms, mut both) = (vec![0usize; n_upos * n_xpos], BTreeMap::<(usize, u32), usize>::new());
        for ((u, _), xs) in &of_form {
            for &a in xs {
                forms[at(*u, a)] += 1;
                for &b in xs.iter().filter(|&&b| b != a) {
                    *both.entry((at(*u, a), b)).or_default() += 1;
                }
            }
        }
        let mut table = vec![Vec::new(); n_upos * n_xpos];
        for ((a, b), n) in both {
            if n >= min_forms as usize && n as f64 >= MIN_SIBLING_SHARE * forms[a] as f64 {
                table[a].push(b);
            }
        }
        XposSiblings { n_xpos: n_xpos as u32, min_forms, table }
    }

    /// Appends to `out` the siblings of the candidates `base` (sorted; empty: every class,
    /// which needs nothing more) of a word with UPOS `upos` that `base` lacks, once each.
    /// O(|base| · siblings · log).
    pub fn widen(&self, base: &[u32], upos: u32, out: &mut Vec<u32>) {
        let start = out.len();
        for &a in base {
            let Some(sib) = self.table.get(upos as usize * self.n_xpos as usize + a as usize) else {
                continue;
            };
            for &b in sib {
                if base.binary_search(&b).is_err() && !out[start..].contains(&b) {
                    out.push(b);
                }
            }
        }
    }
}

/// Share of a (UPOS, XPOS) pair's training words a FEATS value needs to be productive
/// ([`FeatsByXpos`]): rarer values (en_ewt: `Typo=Yes` with 60 NN forms, 0.2% of them)
/// are a word's own, not the pair's.
pub const MIN_FEATS_SHARE: f64 = 0.05;

/// FEATS candidates widened by the predicted (UPOS, XPOS): the dictionary's, and the values
/// seen with that pair of tags for at least `min_forms` distinct lower-cased forms and
/// [`MIN_FEATS_SHARE`] of its words (productive ones: English verbs take Number and Person
/// from their subject, so "founded" seen twice, both times plural, must still be offered
/// the singular, which the dictionary's (form, UPOS) entry alone forbids).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FeatsByXpos {
    pub n_xpos: u32,
    pub min_forms: u32,
    /// Per `upos · n_xpos + xpos`: the productive FEATS of the pair, sorted.
    pub table: Vec<Vec<u32>>,
}

impl FeatsByXpos {
    /// From training words' (UPOS, XPOS, FEATS) classes and forms, with `n_xpos` XPOS
    /// classes. O(words · log).
    pub fn build(words: &[Seen<'_>], n_upos: usize, n_xpos: usize, min_forms: u32) -> FeatsByXpos {
        // Per (pair, FEATS): tokens and distinct lower-cased forms; per pair: tokens.
        let mut seen: BTreeMap<(usize, u32), (usize, std::collections::BTreeSet<String>)> = BTreeMap::new();
        let mut tokens = vec![0usize; n_upos * n_xpos];
        let mut table = vec![Vec::new(); n_upos * n_xpos];
        for w in words {
            let (Some(u), Some(x), Some(f)) = (w.classes[UPOS], w.classes[XPOS], w.classes[FEATS]) else {
                continue;
            };
            let at = u as usize * n_xpos + x as usize;
            tokens[at] += 1;
            let e = seen.entry((at, f)).or_default();
            e.0 += 1;
            e.1.insert(w.form.to_lowercase());
        }
        for ((at, f), (n, forms)) in seen {
            if forms.len() >= min_forms as usize && n as f64 >= MIN_FEATS_SHARE * tokens[at] as f64 {
                insert_sorted(&mut table[at], f);
            }
        }
        FeatsByXpos { n_xpos: n_xpos as u32, min_forms, table }
    }

    /// Appends to `out` the productive FEATS of (`upos`, `xpos`) that the dictionary's
    /// candidates `base` (sorted; empty: every class, which needs nothing more) lack.
    /// O(productive · log |base|).
    pub fn widen(&self, base: &[u32], upos: u32, xpos: u32, out: &mut Vec<u32>) {
        let at = upos as usize * self.n_xpos as usize + xpos as usize;
        if let Some(wide) = self.table.get(at).filter(|_| xpos < self.n_xpos && !base.is_empty()) {
            out.extend(wide.iter().copied().filter(|c| base.binary_search(c).is_err()));
        }
    }
}

/// Lemmas seen in training, per UPOS, with up to two of their lower-cased forms: the
/// lemma back-off (a form without its (form, UPOS) entry) keeps only the scripts it offers
/// that make a known lemma when any does ("condemned" → "condemn", not "condemne";
/// "Applause" → "applause", a known NOUN lemma). In training a lemma counts as known
/// only through another word than the one being learnt (another form, or the same form
/// again), as for a new word at tagging time.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KnownLemmas {
    /// Lemma → per UPOS class seen with it: up to two distinct lower-cased forms, with
    /// their number of words (counted up to 2).
    pub forms: BTreeMap<String, Vec<LemmaForm>>,
    /// A hashed copy of `forms` for look-ups (not stored; [`Index`]).
    #[serde(skip)]
    index: Index<FxHashMap<Box<str>, Vec<LemmaForm>>>,
}

/// A known lemma's (UPOS class, lower-cased form, words counted up to 2).
pub type LemmaForm = (u32, String, u32);

impl KnownLemmas {
    /// From training words (UPOS class, form, lemma). O(words · log).
    pub fn build<'a>(words: impl Iterator<Item = (u32, &'a str, &'a str)>) -> KnownLemmas {
        let mut forms: BTreeMap<String, Vec<LemmaForm>> = BTreeMap::new();
        for (u, form, lemma) in words {
            let v = forms.entry(lemma.to_string()).or_default();
            let lower = form.to_lowercase();
            if let Some(e) = v.iter_mut().find(|(x, f, _)| *x == u && *f == lower) {
                e.2 = 2;
            } else if v.iter().filter(|(x, _, _)| *x == u).count() < 2 {
                v.push((u, lower, 1));
            }
        }
        KnownLemmas { forms, index: Index::default() }
    }

    /// Whether `lemma` was seen with UPOS `upos`; when `learning` a training word of
    /// lower-cased form `lower`, through another word than itself. O(|lemma|) (the hashed copy
    /// is built on the first call, O(lemmas)).
    pub fn known(&self, upos: u32, lemma: &str, lower: &str, learning: bool) -> bool {
        let forms = self
            .index
            .0
            .get_or_init(|| self.forms.iter().map(|(l, v)| (l.as_str().into(), v.clone())).collect());
        forms
            .get(lemma)
            .is_some_and(|v| v.iter().any(|(u, f, n)| *u == upos && (!learning || f != lower || *n > 1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The look-ups as they were, on the B-tree maps with allocated keys.
    fn entry_by_tree<'a>(lex: &'a Lexicon, form: &str) -> Option<(&'a FormEntry, bool)> {
        if let Some(e) = lex.forms.get(form) {
            return Some((e, false));
        }
        let lower = form.to_lowercase();
        (lower != form).then(|| lex.forms.get(&lower).map(|e| (e, true))).flatten()
    }
    fn backoff_by_tree<'a>(lex: &'a Lexicon, upos: u32, form: &str) -> &'a [u32] {
        let lower = form.to_lowercase();
        for k in (1..=MAX_SUFFIX).rev() {
            if let Some(c) = suffix_key(upos, &lower, k).and_then(|key| lex.scripts_by_suffix.get(&key)) {
                return c;
            }
        }
        &lex.scripts_by_upos[upos as usize]
    }

    #[test]
    fn hashed_look_ups_agree_with_the_maps() {
        let forms = [
            "walked",
            "Talked",
            "talked",
            "the",
            "The",
            "ÉTÉ",
            "été",
            "naïve",
            "Straße",
            "a",
            "İstanbul",
            "ǅemal",
        ];
        let mut words = Vec::new();
        for (k, f) in forms.iter().enumerate() {
            for u in 0..3u32 {
                for _ in 0..2 {
                    words.push(Seen {
                        form: f,
                        classes: [Some(u), Some(0), Some(0), Some((k % 4) as u32 + u)],
                    });
                }
            }
        }
        let lex = Lexicon::build(&words, 3, 2, 2);
        assert!(lex.scripts_by_suffix.len() > 20, "the suffix back-off has keys to find");
        let probes = [
            "walked",
            "WALKED",
            "Walked",
            "stalked",
            "ked",
            "d",
            "",
            "The",
            "THE",
            "ÉtÉ",
            "tété",
            "x-été",
            "NAÏVE",
            "Straße",
            "STRASSE",
            "a",
            "A",
            "İstanbul",
            "istanbul",
            "ǅemal",
            "ǆemal",
            "unseen",
        ];
        for p in probes {
            assert_eq!(lex.entry(p), entry_by_tree(&lex, p), "entry of {p:?}");
            for u in 0..3 {
                assert_eq!(
                    lex.candidates(LEMMA, None, u, p),
                    backoff_by_tree(&lex, u, p),
                    "back-off of {p:?}, {u}"
                );
            }
        }
    }
}
