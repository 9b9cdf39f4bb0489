//! Token templates compiled for the tagger: the value of each template at word i.
//!
//! Attributes computed from the form (`form`, `lower`, `prefix:K`, `suffix:K`, `shape`,
//! `hasdigit`, `hashyphen`, `hasupper`, and `cluster`/`cluster:K` from the tagger's
//! cluster table) come from the per-sentence table of
//! [`SentAttrs`] (hashed once per vocabulary string). The tag columns (`upos`, `xpos`,
//! `feats`, `feat:KEY`, `lemma`) are the tagger's own predictions so far, kept in a
//! per-sentence history: words to the left have all their columns; the current word
//! has the columns predicted before the one being decided (order UPOS, XPOS, FEATS,
//! LEMMA), and `NONE_VALUE` for the rest.

use super::clusters::Clusters;
use crate::templates::attrs::{
    feat_value, SentAttrs, VocabHashes, NONE_VALUE, PAD, PAD_LEFT, PAD_RIGHT, ROOT_VALUE,
};
use crate::templates::hash::{combine, hash_str};
use crate::templates::{Atom, Attr, Family, TemplateSet};
use crate::{Error, Result, Treebank};

/// The predicted columns, in the order the tagger decides them for each word.
pub const UPOS: usize = 0;
pub const XPOS: usize = 1;
pub const FEATS: usize = 2;
pub const LEMMA: usize = 3;
pub const N_COLUMNS: usize = 4;
/// CoNLL-U names of the predicted columns.
pub const COLUMN_NAMES: [&str; N_COLUMNS] = ["UPOS", "XPOS", "FEATS", "LEMMA"];

/// The predicted column an attribute reads (None: computed from the form).
pub fn predicted_column(attr: &Attr) -> Option<usize> {
    match attr {
        Attr::Upos => Some(UPOS),
        Attr::Xpos => Some(XPOS),
        Attr::Feats | Attr::Feat(_) => Some(FEATS),
        Attr::Lemma => Some(LEMMA),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy)]
enum CAtom {
    /// Slot of the sentence table, offset from i.
    Form { slot: usize, offset: i64 },
    /// Slot of the history, offset from i (≤ 0).
    Predicted { slot: usize, offset: i64 },
    /// The ambiguity class of the word at offset from i.
    Ambig { offset: i64 },
    /// The backward pass's UPOS of the word at offset from i.
    Back { offset: i64 },
}

/// The attributes the templates of all columns read: one sentence table and one
/// history serve every column.
#[derive(Debug, Clone, Default)]
pub struct Slots {
    /// Whether a template reads `ambig`.
    pub ambig: bool,
    /// Attributes of the sentence table (computed from the form).
    pub form_attrs: Vec<Attr>,
    /// Attributes of the history (they read predicted columns).
    pub predicted_attrs: Vec<Attr>,
}

fn slot_of(list: &mut Vec<Attr>, a: &Attr) -> usize {
    match list.iter().position(|x| x == a) {
        Some(i) => i,
        None => {
            list.push(a.clone());
            list.len() - 1
        }
    }
}

impl Slots {
    /// Whether a template reads the predicted lemma.
    pub fn reads_lemma(&self) -> bool {
        self.predicted_attrs.contains(&Attr::Lemma)
    }

    /// Whether a template reads the word clusters (`cluster`, `cluster:K`).
    pub fn reads_clusters(&self) -> bool {
        self.form_attrs.iter().any(|a| matches!(a, Attr::Cluster(_)))
    }

    /// Vocabulary hashes of the form attributes for `tb` (`cluster` ones from
    /// `clusters`). O(vocabulary · attributes).
    pub fn vocab_hashes(&self, tb: &Treebank, clusters: Option<&Clusters>) -> VocabHashes {
        VocabHashes::with_clusters(tb, &self.form_attrs, clusters)
    }

    /// The history slots that deciding `value` for `column` sets, with their values
    /// (`feat:KEY` slots take the key's value).
    pub fn history_values(&self, column: usize, value: &str) -> Vec<(usize, u64)> {
        self.predicted_attrs
            .iter()
            .enumerate()
            .filter(|(_, a)| predicted_column(a) == Some(column))
            .map(|(slot, a)| {
                let v = match a {
                    Attr::Feat(key) => hash_str(feat_value(value, key).unwrap_or("<none>")),
                    _ => hash_str(value),
                };
                (slot, v)
            })
            .collect()
    }
}

/// The history of one sentence: `vals[p * n_slots + slot]` for positions p in 0..=n
/// (0 = before the first word).
#[derive(Debug, Clone, Default)]
pub struct History {
    n_slots: usize,
    vals: Vec<u64>,
    /// Ambiguity class of each word, positions -PAD ..= n + PAD.
    ambig: Vec<u64>,
    /// The backward pass's UPOS of each word (as its class's salt), positions
    /// -PAD ..= n + PAD; NONE_VALUE until set.
    back: Vec<u64>,
}

impl History {
    /// Empties the history for a sentence of n words. O(n · slots).
    pub fn reset(&mut self, n: usize, n_slots: usize) {
        self.n_slots = n_slots;
        self.vals.clear();
        self.vals.resize((n + 1) * n_slots, NONE_VALUE);
        self.vals[..n_slots].fill(ROOT_VALUE);
    }
    /// Sets the ambiguity classes of the sentence's words (1..=n) from `classes`.
    pub fn set_ambig(&mut self, classes: impl Iterator<Item = u64>) {
        self.ambig.clear();
        self.ambig.extend([PAD_LEFT; PAD]);
        self.ambig.push(ROOT_VALUE);
        self.ambig.extend(classes);
        self.ambig.extend([PAD_RIGHT; PAD]);
    }
    #[inline]
    fn ambig(&self, p: i64) -> u64 {
        padded(&self.ambig, p)
    }
    /// Empties the backward pass's tags for a sentence of n words. O(n).
    pub fn reset_back(&mut self, n: usize) {
        self.back.clear();
        self.back.extend([PAD_LEFT; PAD]);
        self.back.push(ROOT_VALUE);
        self.back.resize(PAD + 1 + n, NONE_VALUE);
        self.back.extend([PAD_RIGHT; PAD]);
    }
    /// The backward pass's tag of word `p` (1-based).
    pub fn back_at(&self, p: usize) -> u64 {
        self.back[p + PAD]
    }
    /// Sets the backward pass's tag of word `p` (1-based).
    #[inline]
    pub fn set_back(&mut self, p: usize, v: u64) {
        self.back[p + PAD] = v;
    }
    /// Sets `slot` of word `p` (1-based).
    #[inline]
    pub fn set(&mut self, p: usize, slot: usize, v: u64) {
        self.vals[p * self.n_slots + slot] = v;
    }
    #[inline]
    fn get(&self, slot: usize, p: i64) -> u64 {
        if p < 0 {
            PAD_LEFT
        } else {
            self.vals[p as usize * self.n_slots + slot]
        }
    }
}

/// Value at position p of a table of positions -PAD ..= n + PAD (padding beyond it).
#[inline]
fn padded(v: &[u64], p: i64) -> u64 {
    let at = p + PAD as i64;
    if at < 0 {
        PAD_LEFT
    } else {
        v.get(at as usize).copied().unwrap_or(PAD_RIGHT)
    }
}

/// A compiled token template set (one column's templates).
#[derive(Debug, Clone)]
pub struct TokenFeatures {
    templates: Vec<(u64, Vec<CAtom>)>,
}

impl TokenFeatures {
    /// Compiles a set of the token family, adding the attributes it reads to `slots`.
    /// O(atoms).
    pub fn compile(set: &TemplateSet, slots: &mut Slots) -> Result<TokenFeatures> {
        if set.family != Family::Token {
            return Err(Error::InvalidArgument("the tagger needs token templates".into()));
        }
        let mut templates = Vec::with_capacity(set.len());
        for t in &set.templates {
            let mut atoms = Vec::new();
            for a in &t.atoms {
                let Atom::TokenWord { attr, offset } = a else {
                    return Err(Error::InvalidArgument(format!("{}: not a token template", t.text)));
                };
                let offset = *offset as i64;
                slots.ambig |= *attr == Attr::Ambig;
                atoms.push(if *attr == Attr::Ambig {
                    CAtom::Ambig { offset }
                } else if *attr == Attr::Bupos {
                    CAtom::Back { offset }
                } else if predicted_column(attr).is_some() {
                    CAtom::Predicted { slot: slot_of(&mut slots.predicted_attrs, attr), offset }
                } else {
                    CAtom::Form { slot: slot_of(&mut slots.form_attrs, attr), offset }
                });
            }
            templates.push((t.id, atoms));
        }
        Ok(TokenFeatures { templates })
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }
    /// Whether the set can run right to left as the backward pass: it reads no predicted
    /// column and `bupos` only to the right (what that pass has decided).
    pub fn runs_backward(&self) -> bool {
        self.templates.iter().flat_map(|(_, a)| a).all(|a| match *a {
            CAtom::Predicted { .. } => false,
            CAtom::Back { offset } => offset > 0,
            _ => true,
        })
    }
    /// Whether the set reads `bupos`.
    pub fn reads_back(&self) -> bool {
        self.templates.iter().flat_map(|(_, a)| a).any(|a| matches!(a, CAtom::Back { .. }))
    }
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// Value of template t at word i (1-based). O(atoms).
    #[inline]
    pub fn feature(&self, t: usize, sent: &SentAttrs, hist: &History, i: usize) -> u64 {
        let (id, atoms) = &self.templates[t];
        let i = i as i64;
        atoms.iter().fold(*id, |acc, a| {
            let v = match *a {
                CAtom::Form { slot, offset } => sent.get(slot, i + offset),
                CAtom::Predicted { slot, offset } => hist.get(slot, i + offset),
                CAtom::Ambig { offset } => hist.ambig(i + offset),
                CAtom::Back { offset } => padded(&hist.back, i + offset),
            };
            combine(acc, v)
        })
    }

    /// Values of every template at word i into `out`. O(atoms).
    pub fn features(&self, sent: &SentAttrs, hist: &History, i: usize, out: &mut Vec<u64>) {
        out.clear();
        out.extend((0..self.templates.len()).map(|t| self.feature(t, sent, hist, i)));
    }
}
