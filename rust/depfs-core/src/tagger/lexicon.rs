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

    /// The entry of `form` (as written, else lower-cased) and whether it was lower-cased.
    pub fn entry(&self, form: &str) -> Option<(&FormEntry, bool)> {
        if let Some(e) = self.forms.get(form) {
            return Some((e, false));
        }
        let lower = form.to_lowercase();
        if lower != form {
            return self.forms.get(&lower).map(|e| (e, true));
        }
        None
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
        let lower = form.to_lowercase();
        for k in (1..=MAX_SUFFIX).rev() {
            if let Some(c) = suffix_key(upos, &lower, k).and_then(|key| self.scripts_by_suffix.get(&key)) {
                return c;
            }
        }
        self.scripts_by_upos.get(upos as usize).map_or(&[], |c| &c[..])
    }
}
