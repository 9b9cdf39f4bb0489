//! Token templates compiled for the tagger: the value of each template at word i.
//!
//! Attributes computed from the form (`form`, `lower`, `prefix:K`, `suffix:K`, `shape`,
//! `hasdigit`, `hashyphen`, `hasupper`, and `cluster`/`cluster:K` from the tagger's
//! cluster table) are hashed once per vocabulary string ([`VocabHashes`]). The tag
//! columns (`upos`, `xpos`, `feats`, `feat:KEY`, `lemma`) are the tagger's own
//! predictions so far: words to the left have all their columns; the current word has
//! the columns predicted before the one being decided (order UPOS, XPOS, FEATS, LEMMA),
//! and `NONE_VALUE` for the rest. Both, with `ambig` and `bupos`, live in one table per
//! sentence ([`History`]), padded so that every atom of a template is one read.

use super::clusters::Clusters;
use crate::templates::attrs::{feat_value, VocabHashes, NONE_VALUE, PAD_LEFT, PAD_RIGHT, ROOT_VALUE};
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
    /// Whether a template reads the predicted lemma (asked at every LEMMA decision).
    pub lemma: bool,
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
    /// Values in a row of the sentence table: the form attributes, the predicted ones,
    /// `ambig` and `bupos` ([`History`]).
    pub fn width(&self) -> usize {
        self.form_attrs.len() + self.predicted_attrs.len() + 2
    }

    /// The column of the sentence table an atom reads.
    fn column(&self, a: CAtom) -> usize {
        let (n_form, n_pred) = (self.form_attrs.len(), self.predicted_attrs.len());
        match a {
            CAtom::Form { slot, .. } => slot,
            CAtom::Predicted { slot, .. } => n_form + slot,
            CAtom::Ambig { .. } => n_form + n_pred,
            CAtom::Back { .. } => n_form + n_pred + 1,
        }
    }

    /// Whether a template reads the predicted lemma.
    pub fn reads_lemma(&self) -> bool {
        self.lemma
    }

    /// Whether a template reads the word clusters (`cluster`, `cluster:K`).
    pub fn reads_clusters(&self) -> bool {
        self.form_attrs.iter().any(|a| matches!(a, Attr::Cluster(_)))
    }

    /// Hashes of the form attributes of every form of `tb` (`cluster` ones from
    /// `clusters`), row by row. O(vocabulary · attributes).
    pub fn form_rows(&self, tb: &Treebank, clusters: Option<&Clusters>) -> FormRows {
        let vh = VocabHashes::with_clusters(tb, &self.form_attrs, clusters);
        let (width, n) = (self.form_attrs.len(), tb.vocabs.form.len());
        let mut vals = Vec::with_capacity(n * width);
        for id in 0..n as u32 {
            vals.extend((0..width).map(|slot| vh.of_id(slot, id)));
        }
        FormRows { width, vals }
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

/// The form attributes' hashes of every form of a treebank, one row per form id (a
/// sentence's table copies each word's row whole: one read of contiguous values rather
/// than one per attribute from as many vocabulary tables).
#[derive(Debug, Clone, Default)]
pub struct FormRows {
    width: usize,
    vals: Vec<u64>,
}

/// Farthest offset of a token address (i-4 .. i+4, `templates::syntax`): the sentence
/// table's padding on each side, so that no read leaves it.
pub const MAX_OFFSET: usize = 4;

/// The table of one sentence: row p + [`MAX_OFFSET`] for positions p in
/// −MAX_OFFSET ..= n + MAX_OFFSET (0 = before the first word), each row the values of
/// the form attributes, the predicted attributes, `ambig` and `bupos` ([`Slots::width`]).
/// Left of 0 every value is `PAD_LEFT`, at 0 `ROOT_VALUE`, right of n `PAD_RIGHT`; a
/// word's predicted values and `bupos` are `NONE_VALUE` until set.
#[derive(Debug, Clone, Default)]
pub struct History {
    width: usize,
    /// Where a row's predicted values start (= the number of form attributes).
    pred: usize,
    n: usize,
    vals: Vec<u64>,
}

impl History {
    /// Starts sentence `s` of `tb`: the form attributes of `slots` from `forms` (made by
    /// [`Slots::form_rows`] for `tb`), the ambiguity class of each word from `ambig` (by
    /// form id; empty when no template reads it), no prediction yet. O(n · width).
    pub fn start(&mut self, slots: &Slots, forms: &FormRows, ambig: &[u64], tb: &Treebank, s: usize) {
        let meta = &tb.sentences[s];
        let (n, w) = (meta.len as usize, slots.width());
        let (n_form, n_pred) = (slots.form_attrs.len(), slots.predicted_attrs.len());
        self.width = w;
        self.pred = n_form;
        self.n = n;
        self.vals.clear();
        self.vals.resize(MAX_OFFSET * w, PAD_LEFT);
        self.vals.resize((MAX_OFFSET + 1) * w, ROOT_VALUE);
        debug_assert_eq!(forms.width, n_form, "rows made for other slots");
        for &form in &tb.words.form[meta.range()] {
            let at = form as usize * n_form;
            self.vals.extend_from_slice(&forms.vals[at..at + n_form]);
            self.vals.extend(std::iter::repeat_n(NONE_VALUE, n_pred));
            self.vals.push(ambig.get(form as usize).copied().unwrap_or(NONE_VALUE));
            self.vals.push(NONE_VALUE);
        }
        self.vals.resize((2 * MAX_OFFSET + n + 1) * w, PAD_RIGHT);
    }
    #[inline]
    fn at(&self, p: usize, column: usize) -> usize {
        (p + MAX_OFFSET) * self.width + column
    }
    /// Empties the backward pass's tags of the sentence's words. O(n).
    pub fn reset_back(&mut self) {
        for p in 1..=self.n {
            let at = self.at(p, self.width - 1);
            self.vals[at] = NONE_VALUE;
        }
    }
    /// The backward pass's tag of word `p` (1-based).
    pub fn back_at(&self, p: usize) -> u64 {
        self.vals[self.at(p, self.width - 1)]
    }
    /// Sets the backward pass's tag of word `p` (1-based).
    #[inline]
    pub fn set_back(&mut self, p: usize, v: u64) {
        let at = self.at(p, self.width - 1);
        self.vals[at] = v;
    }
    /// Sets predicted `slot` of word `p` (1-based).
    #[inline]
    pub fn set(&mut self, p: usize, slot: usize, v: u64) {
        let at = self.at(p, self.pred + slot);
        self.vals[at] = v;
    }
}

/// A compiled token template set (one column's templates).
#[derive(Debug, Clone)]
pub struct TokenFeatures {
    /// Per template: its id and the range of its atoms in `atoms`.
    templates: Vec<(u64, std::ops::Range<usize>)>,
    atoms: Vec<CAtom>,
    /// Per atom: its read in the sentence table relative to the row of word 0
    /// ((offset + MAX_OFFSET) · width + column), set by [`TokenFeatures::place`].
    reads: Vec<usize>,
    /// The table width `reads` were placed for.
    width: usize,
}

impl TokenFeatures {
    /// Compiles a set of the token family, adding the attributes it reads to `slots`.
    /// O(atoms).
    pub fn compile(set: &TemplateSet, slots: &mut Slots) -> Result<TokenFeatures> {
        if set.family != Family::Token {
            return Err(Error::InvalidArgument("the tagger needs token templates".into()));
        }
        let mut templates = Vec::with_capacity(set.len());
        let mut atoms = Vec::new();
        for t in &set.templates {
            let first = atoms.len();
            for a in &t.atoms {
                let Atom::TokenWord { attr, offset } = a else {
                    return Err(Error::InvalidArgument(format!("{}: not a token template", t.text)));
                };
                if offset.unsigned_abs() as usize > MAX_OFFSET {
                    return Err(Error::InvalidArgument(format!(
                        "{}: a token address reaches at most {MAX_OFFSET} words away",
                        t.text
                    )));
                }
                let offset = *offset as i64;
                slots.ambig |= *attr == Attr::Ambig;
                slots.lemma |= *attr == Attr::Lemma;
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
            templates.push((t.id, first..atoms.len()));
        }
        Ok(TokenFeatures { templates, atoms, reads: Vec::new(), width: 0 })
    }

    /// Places every atom's read in the sentence table, once `slots` holds every
    /// attribute of the tagger's templates (the table's width is then known).
    pub fn place(&mut self, slots: &Slots) {
        self.width = slots.width();
        self.reads = self
            .atoms
            .iter()
            .map(|&a| {
                let offset = match a {
                    CAtom::Form { offset, .. }
                    | CAtom::Predicted { offset, .. }
                    | CAtom::Ambig { offset }
                    | CAtom::Back { offset } => offset,
                };
                (offset + MAX_OFFSET as i64) as usize * self.width + slots.column(a)
            })
            .collect();
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }
    /// Whether the set can run right to left as the backward pass: it reads no predicted
    /// column and `bupos` only to the right (what that pass has decided).
    pub fn runs_backward(&self) -> bool {
        self.atoms.iter().all(|a| match *a {
            CAtom::Predicted { .. } => false,
            CAtom::Back { offset } => offset > 0,
            _ => true,
        })
    }
    /// Whether the set reads `bupos`.
    pub fn reads_back(&self) -> bool {
        self.atoms.iter().any(|a| matches!(a, CAtom::Back { .. }))
    }
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// Value of template t at word i (1-based) of the sentence in `hist`. O(atoms).
    #[inline]
    pub fn feature(&self, t: usize, hist: &History, i: usize) -> u64 {
        debug_assert_eq!(self.width, hist.width, "atoms placed for another table");
        let (id, atoms) = &self.templates[t];
        // Every read lies in the rows i − MAX_OFFSET ..= i + MAX_OFFSET.
        let rows = &hist.vals[i * hist.width..];
        self.reads[atoms.clone()].iter().fold(*id, |acc, &r| combine(acc, rows[r]))
    }

    /// Values of every template at word i into `out` (as [`Self::feature`], the row
    /// sliced once). O(atoms).
    pub fn features(&self, hist: &History, i: usize, out: &mut Vec<u64>) {
        debug_assert_eq!(self.width, hist.width, "atoms placed for another table");
        let (rows, reads) = (&hist.vals[i * hist.width..], &self.reads[..]);
        out.clear();
        out.resize(self.templates.len(), 0);
        for (v, (id, atoms)) in out.iter_mut().zip(&self.templates) {
            *v = reads[atoms.clone()].iter().fold(*id, |acc, &r| combine(acc, rows[r]));
        }
    }
}
