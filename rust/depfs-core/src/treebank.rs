//! In-memory treebanks: interned vocabularies and struct-of-arrays word columns.
//!
//! All words of a treebank live in flat columns (`Words`); a sentence is a range
//! of them plus the lines that are kept but never parsed (comments, multiword
//! token ranges `3-4`, empty nodes `5.1`). Word index `i` of a sentence (1-based
//! as in CoNLL-U) is column position `start + i - 1`; HEAD 0 is the root.

use std::sync::Arc;

use std::hash::Hasher;

use crate::error::{Error, Result};

use rustc_hash::FxHasher;

/// Value of an unset HEAD (`_` in the file, e.g. parser input).
pub const NO_HEAD: i32 = -1;

/// Interned strings. Id 0 is always `_`, CoNLL-U's empty value.
///
/// Interning is the hot loop of reading a treebank (a lookup per column read of each
/// word), so the table is a plain open-addressing one: each slot holds an id + 1 (0:
/// empty), found by an FxHash of the string and linear probing, kept at most half full;
/// a candidate is compared by length and then, for the short strings columns are made
/// of, by two machine words (a general `==` calls `memcmp`). A string is stored once,
/// as one `Arc<str>` (a treebank's copy shares them, and a copy or drop touches each
/// once).
#[derive(Debug, Clone)]
pub struct Vocab {
    slots: Vec<u32>,
    strings: Vec<Arc<str>>,
}

impl Default for Vocab {
    fn default() -> Self {
        let mut v = Vocab { slots: vec![0; 8], strings: Vec::new() };
        let (Ok(i) | Err(i)) = v.slot_of("_");
        v.insert("_", i);
        v
    }
}

/// Whether `a` and `b` are the same bytes; without a call for up to 16 of them.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| s.get(at..at + 8).and_then(|w| <[u8; 8]>::try_from(w).ok());
    let half = |s: &[u8], at: usize| s.get(at..at + 4).and_then(|w| <[u8; 4]>::try_from(w).ok());
    // The first and the last word (half word, byte) overlap when `n` is not a multiple.
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

impl Vocab {
    pub fn new() -> Self {
        Self::default()
    }

    fn hash(s: &str) -> usize {
        let mut h = FxHasher::default();
        h.write(s.as_bytes());
        // Fibonacci hashing spreads the hash over the top bits, which pick the slot.
        h.finish().wrapping_mul(0x9e37_79b9_7f4a_7c15) as usize
    }

    /// The slot holding `s` (`Ok`) or the empty slot where it would go (`Err`).
    #[inline(always)]
    fn slot_of(&self, s: &str) -> std::result::Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = Self::hash(s) >> (usize::BITS - self.slots.len().trailing_zeros()) & mask;
        loop {
            let e = self.slots[i];
            if e == 0 {
                return Err(i);
            }
            if same(self.strings[e as usize - 1].as_bytes(), s.as_bytes()) {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `s` (not present) at the empty slot `free`, growing the table when half full.
    fn insert(&mut self, s: &str, free: usize) -> u32 {
        let id = self.strings.len() as u32;
        self.strings.push(s.into());
        self.slots[free] = id + 1;
        if 2 * self.strings.len() > self.slots.len() {
            self.resize(2 * self.slots.len());
        }
        id
    }

    /// Rehashes every string into `n` slots (a power of two). O(entries).
    fn resize(&mut self, n: usize) {
        self.slots = vec![0; n];
        for id in 0..self.strings.len() {
            let (Ok(i) | Err(i)) = self.slot_of(&self.strings[id]);
            self.slots[i] = id as u32 + 1;
        }
    }

    /// Room for `n` entries in all without growing.
    pub fn reserve(&mut self, n: usize) {
        let want = (2 * n).next_power_of_two();
        if want > self.slots.len() {
            self.resize(want);
        }
        self.strings.reserve(n.saturating_sub(self.strings.len()));
    }

    /// Id of `s`, adding it if new. O(len(s)).
    #[inline]
    pub fn intern(&mut self, s: &str) -> u32 {
        // `_` (id 0) fills whole columns (FEATS, DEPS, MISC of most words): no hashing.
        if s == "_" {
            return 0;
        }
        match self.slot_of(s) {
            Ok(i) => self.slots[i] - 1,
            Err(free) => self.insert(s, free),
        }
    }
    pub fn get(&self, s: &str) -> Option<u32> {
        self.slot_of(s).ok().map(|i| self.slots[i] - 1)
    }
    /// The string of `id`; panics only on ids this vocab never handed out.
    pub fn str(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }
    pub fn len(&self) -> usize {
        self.strings.len()
    }
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
    pub fn strings(&self) -> &[Arc<str>] {
        &self.strings
    }
}

/// The ten CoNLL-U columns of every word, flat over the treebank.
/// ID is implicit (position in the sentence); DEPS and MISC are kept verbatim
/// (interned) so writing gives the input back byte for byte.
#[derive(Debug, Clone, Default)]
pub struct Words {
    pub form: Vec<u32>,
    pub lemma: Vec<u32>,
    pub upos: Vec<u32>,
    pub xpos: Vec<u32>,
    pub feats: Vec<u32>,
    /// 0 = root, `NO_HEAD` = `_`.
    pub head: Vec<i32>,
    pub deprel: Vec<u32>,
    pub deps: Vec<u32>,
    pub misc: Vec<u32>,
}

impl Words {
    pub fn len(&self) -> usize {
        self.form.len()
    }
    pub fn is_empty(&self) -> bool {
        self.form.is_empty()
    }
}

/// A line kept verbatim inside a sentence and never parsed: a multiword token
/// range (`3-4`) or an empty node (`5.1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraLine {
    /// 1-based index of the word line this line stands before (`n + 1` = after the last word).
    pub before_word: u32,
    pub kind: ExtraKind,
    /// The whole line without its newline.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraKind {
    /// `first-last`
    MultiWord { first: u32, last: u32 },
    /// `after.minor`
    EmptyNode { after: u32, minor: u32 },
}

/// One sentence: its words are `words[start .. start + len]`.
#[derive(Debug, Clone, Default)]
pub struct SentenceMeta {
    pub start: u32,
    pub len: u32,
    /// Comment lines verbatim, without the newline (`# sent_id = ...`). Shared: a copy of
    /// the treebank (e.g. the tagger's output) does not copy each line.
    pub comments: Arc<[String]>,
    /// Multiword-token and empty-node lines, in file order.
    pub extra: Vec<ExtraLine>,
}

impl SentenceMeta {
    /// Value of the `# sent_id = ...` comment, if any.
    pub fn sent_id(&self) -> Option<&str> {
        self.comment_value("sent_id")
    }
    /// Value of the `# text = ...` comment, if any.
    pub fn text(&self) -> Option<&str> {
        self.comment_value("text")
    }
    fn comment_value(&self, key: &str) -> Option<&str> {
        self.comments.iter().find_map(|c| {
            let rest = c.strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix(key)?.trim_start();
            Some(rest.strip_prefix('=')?.trim())
        })
    }
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// Which column layout a file used; the writer uses the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileFormat {
    #[default]
    Conllu,
    /// CoNLL-X: the same ten columns, PHEAD/PDEPREL where CoNLL-U has DEPS/MISC.
    ConllX,
}

/// Vocabularies of the columns, shared by all words of a treebank.
#[derive(Debug, Clone, Default)]
pub struct Vocabs {
    pub form: Vocab,
    pub lemma: Vocab,
    pub upos: Vocab,
    pub xpos: Vocab,
    pub feats: Vocab,
    pub deprel: Vocab,
    pub deps: Vocab,
    pub misc: Vocab,
}

/// A whole treebank.
#[derive(Debug, Clone, Default)]
pub struct Treebank {
    pub vocabs: Vocabs,
    pub words: Words,
    pub sentences: Vec<SentenceMeta>,
    pub format: FileFormat,
    /// Read with some columns left out (`io::conllu::Columns`): they are `_` here, not
    /// what the file has, so the treebank is not written back (its batch text is).
    pub partial: bool,
}

/// One word given as strings, for building treebanks in code and tests.
#[derive(Debug, Clone, Copy)]
pub struct WordStrs<'a> {
    pub form: &'a str,
    pub lemma: &'a str,
    pub upos: &'a str,
    pub xpos: &'a str,
    pub feats: &'a str,
    pub head: i32,
    pub deprel: &'a str,
    pub deps: &'a str,
    pub misc: &'a str,
}

impl<'a> WordStrs<'a> {
    /// A word with only FORM, UPOS, HEAD and DEPREL set.
    pub fn simple(form: &'a str, upos: &'a str, head: i32, deprel: &'a str) -> Self {
        WordStrs { form, lemma: "_", upos, xpos: "_", feats: "_", head, deprel, deps: "_", misc: "_" }
    }
}

/// How large a treebank's tables are: what a reader reserves for the next batch of a
/// stream (its batches are alike).
#[derive(Debug, Clone, Copy, Default)]
pub struct TreebankSizes {
    /// Entries of the FORM, LEMMA, UPOS, XPOS, FEATS, DEPREL, DEPS and MISC vocabularies.
    vocabs: [usize; 8],
    words: usize,
    sentences: usize,
}

impl Treebank {
    pub fn new() -> Self {
        Self::default()
    }

    /// The sizes to reserve for a treebank like this one.
    pub fn sizes(&self) -> TreebankSizes {
        let v = &self.vocabs;
        let vocabs =
            [&v.form, &v.lemma, &v.upos, &v.xpos, &v.feats, &v.deprel, &v.deps, &v.misc].map(Vocab::len);
        TreebankSizes { vocabs, words: self.words.len(), sentences: self.sentences.len() }
    }

    /// Reserves room for `sizes` (vocabulary entries, words, sentences).
    pub fn reserve_like(&mut self, sizes: &TreebankSizes) {
        let v = &mut self.vocabs;
        for (vocab, &n) in [
            &mut v.form,
            &mut v.lemma,
            &mut v.upos,
            &mut v.xpos,
            &mut v.feats,
            &mut v.deprel,
            &mut v.deps,
            &mut v.misc,
        ]
        .into_iter()
        .zip(&sizes.vocabs)
        {
            vocab.reserve(n);
        }
        let w = &mut self.words;
        for col in [
            &mut w.form,
            &mut w.lemma,
            &mut w.upos,
            &mut w.xpos,
            &mut w.feats,
            &mut w.deprel,
            &mut w.deps,
            &mut w.misc,
        ] {
            col.reserve(sizes.words);
        }
        w.head.reserve(sizes.words);
        self.sentences.reserve(sizes.sentences);
    }

    /// The strings of the word at flat position `i`.
    pub fn word_strs(&self, i: usize) -> WordStrs<'_> {
        let (w, v) = (&self.words, &self.vocabs);
        WordStrs {
            form: v.form.str(w.form[i]),
            lemma: v.lemma.str(w.lemma[i]),
            upos: v.upos.str(w.upos[i]),
            xpos: v.xpos.str(w.xpos[i]),
            feats: v.feats.str(w.feats[i]),
            head: w.head[i],
            deprel: v.deprel.str(w.deprel[i]),
            deps: v.deps.str(w.deps[i]),
            misc: v.misc.str(w.misc[i]),
        }
    }
    pub fn len(&self) -> usize {
        self.sentences.len()
    }
    pub fn is_empty(&self) -> bool {
        self.sentences.is_empty()
    }
    pub fn n_words(&self) -> usize {
        self.words.len()
    }
    /// Appends one word to the column store (the caller then closes the sentence).
    pub fn push_word(&mut self, w: &WordStrs<'_>) {
        let v = &mut self.vocabs;
        let ws = &mut self.words;
        ws.form.push(v.form.intern(w.form));
        ws.lemma.push(v.lemma.intern(w.lemma));
        ws.upos.push(v.upos.intern(w.upos));
        ws.xpos.push(v.xpos.intern(w.xpos));
        ws.feats.push(v.feats.intern(w.feats));
        ws.head.push(w.head);
        ws.deprel.push(v.deprel.intern(w.deprel));
        ws.deps.push(v.deps.intern(w.deps));
        ws.misc.push(v.misc.intern(w.misc));
    }
    /// Adds a whole sentence built in code.
    pub fn push_sentence(&mut self, words: &[WordStrs<'_>], comments: Vec<String>) {
        let start = self.words.len() as u32;
        for w in words {
            self.push_word(w);
        }
        self.sentences.push(SentenceMeta {
            start,
            len: words.len() as u32,
            comments: comments.into(),
            extra: Vec::new(),
        });
    }
    /// Appends sentence `s` of `other` (words, comments, multiword and empty-node
    /// lines), its strings interned in this treebank's vocabularies. O(its words).
    pub fn push_sentence_of(&mut self, other: &Treebank, s: usize) {
        let meta = &other.sentences[s];
        let start = self.words.len() as u32;
        for i in meta.range() {
            self.push_word(&other.word_strs(i));
        }
        self.sentences.push(SentenceMeta {
            start,
            len: meta.len,
            comments: meta.comments.clone(),
            extra: meta.extra.clone(),
        });
    }

    /// The sentences `indices` (in that order; repeats allowed) as a treebank of their
    /// own, whose vocabularies hold only the strings those sentences use. O(their words).
    pub fn select(&self, indices: &[usize]) -> Result<Treebank> {
        if let Some(&bad) = indices.iter().find(|&&s| s >= self.len()) {
            return Err(Error::InvalidArgument(format!(
                "sentence index {bad} out of range (the treebank has {} sentences)",
                self.len()
            )));
        }
        let mut out = Treebank { format: self.format, partial: self.partial, ..Treebank::default() };
        for &s in indices {
            out.push_sentence_of(self, s);
        }
        Ok(out)
    }

    /// The sentences of `parts` one after the other, as one treebank (the first part's
    /// file format: both are read and written column for column alike). O(words).
    pub fn concat(parts: &[&Treebank]) -> Treebank {
        let format = parts.first().map_or(FileFormat::Conllu, |t| t.format);
        let partial = parts.iter().any(|t| t.partial);
        let mut out = Treebank { format, partial, ..Treebank::default() };
        for t in parts {
            for s in 0..t.len() {
                out.push_sentence_of(t, s);
            }
        }
        out
    }

    /// Heads of sentence `s`, index 0 = word 1.
    pub fn heads(&self, s: usize) -> &[i32] {
        &self.words.head[self.sentences[s].range()]
    }
    pub fn heads_mut(&mut self, s: usize) -> &mut [i32] {
        let r = self.sentences[s].range();
        &mut self.words.head[r]
    }
    /// DEPREL ids of sentence `s`, index 0 = word 1.
    pub fn deprels(&self, s: usize) -> &[u32] {
        &self.words.deprel[self.sentences[s].range()]
    }
    /// Sets the DEPREL of word position `pos` (flat column index) from a string.
    pub fn set_deprel(&mut self, pos: usize, label: &str) {
        self.words.deprel[pos] = self.vocabs.deprel.intern(label);
    }

    /// Writes each word's margin (flat over the words) into MISC as `Margin=x`,
    /// replacing an earlier `Margin=` item and keeping the others. O(words).
    pub fn set_margins(&mut self, margins: &[f32]) {
        for (pos, m) in margins.iter().enumerate().take(self.words.len()) {
            let old = self.vocabs.misc.str(self.words.misc[pos]);
            let mut items: Vec<&str> =
                old.split('|').filter(|i| *i != "_" && !i.starts_with("Margin=")).collect();
            let item = format!("Margin={m:.4}");
            items.push(&item);
            let misc = items.join("|");
            self.words.misc[pos] = self.vocabs.misc.intern(&misc);
        }
    }

    /// Drops every `Margin=` item from MISC: a parse writes new heads, and a margin
    /// describes the heads of the parse that wrote it (`set_margins` adds this parse's).
    /// O(|MISC vocabulary|), plus O(words) when some value has a margin.
    pub fn clear_margins(&mut self) {
        let misc = &mut self.vocabs.misc;
        let stripped: Vec<Option<String>> =
            (0..misc.len() as u32).map(|id| without_margin(misc.str(id))).collect();
        let new: Vec<Option<u32>> = stripped.into_iter().map(|v| v.map(|s| misc.intern(&s))).collect();
        if new.iter().all(Option::is_none) {
            return;
        }
        for id in &mut self.words.misc {
            if let Some(Some(to)) = new.get(*id as usize) {
                *id = *to;
            }
        }
    }
}

/// `misc` without its `Margin=` items (`_` when none is left); `None` when it has none.
/// The streamed reader asks this of every word: MISC is `_` or short and has no `M`
/// on most, answered by a length test or one byte search.
pub fn without_margin(misc: &str) -> Option<String> {
    if misc.len() < "Margin=".len() || memchr::memchr(b'M', misc.as_bytes()).is_none() {
        return None;
    }
    if !misc.split('|').any(|i| i.starts_with("Margin=")) {
        return None;
    }
    let kept: Vec<&str> = misc.split('|').filter(|i| !i.starts_with("Margin=")).collect();
    Some(if kept.is_empty() { "_".to_string() } else { kept.join("|") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::conllu;

    const S1: &str = "# sent_id = a\n1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n\
                      2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\tSpaceAfter=No\n\n";
    const S2: &str = "# sent_id = b\n1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t2:nsubj\t_\n\
                      1.1\tbark\tbark\tVERB\tVBP\t_\t_\t_\t0:root\t_\n2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t0:root\t_\n\n";
    const S3: &str = "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n";

    fn read(text: &str) -> Treebank {
        conllu::read_str(text, &conllu::ReadOptions::default()).unwrap()
    }

    /// A selection writes back as its sentences' own lines, in the order asked for
    /// (repeats too), with vocabularies of only their strings.
    #[test]
    fn select_keeps_each_sentence_whole_and_in_order() {
        let tb = read(&[S1, S2, S3].concat());
        let sel = tb.select(&[2, 0, 2]).unwrap();
        assert_eq!(conllu::to_string(&sel), [S3, S1, S3].concat());
        assert_eq!(sel.len(), 3);
        assert_eq!(sel.n_words(), 1 + 3 + 1);
        let only_second = tb.select(&[1]).unwrap();
        assert_eq!(conllu::to_string(&only_second), S2);
        assert_eq!(only_second.vocabs.form.get("go"), None);
        assert!(only_second.vocabs.form.get("Dogs").is_some());
        assert_eq!(tb.select(&[]).unwrap().len(), 0);
        let err = tb.select(&[0, 3]).unwrap_err().to_string();
        assert!(err.contains("sentence index 3 out of range (the treebank has 3 sentences)"), "{err}");
    }

    /// Joined treebanks write back as their texts one after the other, in the first
    /// part's format; a part read in part makes the whole partial.
    #[test]
    fn concat_joins_in_order() {
        let (a, b) = (read(&[S1, S3].concat()), read(S2));
        let joined = Treebank::concat(&[&a, &b, &a]);
        assert_eq!(conllu::to_string(&joined), [S1, S3, S2, S1, S3].concat());
        assert_eq!(Treebank::concat(&[]).len(), 0);
        let mut x = read(S3);
        x.format = FileFormat::ConllX;
        assert_eq!(Treebank::concat(&[&x, &a]).format, FileFormat::ConllX);
        assert_eq!(conllu::to_string(&Treebank::concat(&[&a, &x])), [S1, S3, S3].concat());
        x.partial = true;
        assert!(Treebank::concat(&[&a, &x]).partial && !Treebank::concat(&[&a]).partial);
    }

    #[test]
    fn vocab_interns_and_reserves_underscore() {
        let mut v = Vocab::new();
        assert_eq!(v.get("_"), Some(0));
        let a = v.intern("dog");
        assert_eq!(v.intern("dog"), a);
        assert_eq!(v.str(a), "dog");
        assert_eq!(v.len(), 2);
    }

    /// Many strings, alike at both ends and of every length up to 40 (the short ones
    /// compared by their first and last words): each gets its own id, found again, across
    /// the table's growth and a `reserve`.
    #[test]
    fn vocab_keeps_strings_apart_that_differ_in_one_byte() {
        let mut v = Vocab::new();
        let mut all = Vec::new();
        for len in 1..=40 {
            for at in 0..len {
                for b in [b'a', b'b', 0xc3] {
                    let mut s = vec![b'x'; len];
                    s[at] = b;
                    if b == 0xc3 {
                        s.insert(at + 1, 0xa9); // é: two bytes
                    }
                    all.push(String::from_utf8(s).unwrap());
                }
            }
        }
        all.sort();
        all.dedup();
        let ids: Vec<u32> = all.iter().map(|s| v.intern(s)).collect();
        v.reserve(10 * all.len());
        for (s, &id) in all.iter().zip(&ids) {
            assert_eq!(v.get(s), Some(id), "{s:?}");
            assert_eq!(v.str(id), s);
            assert_eq!(v.intern(s), id);
        }
        assert_eq!(v.len(), all.len() + 1);
        assert_eq!((v.get("_"), v.get("")), (Some(0), None));
    }

    /// `same` is `==` for every length (its short cases compare overlapping words) and
    /// every byte that could differ.
    #[test]
    fn same_is_equality() {
        for n in 0..=24usize {
            let a: Vec<u8> = (0..n as u8).map(|i| b'a' + i).collect();
            assert!(same(&a, &a.clone()));
            assert!(!same(&a, &a[..n.saturating_sub(1)]) || n == 0);
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same(&a, &b), "length {n}, byte {at}");
            }
        }
    }

    /// A copy (the tagger's output is one) and a selection share the comment lines of a
    /// sentence rather than copy each line.
    #[test]
    fn copies_share_comment_lines() {
        let mut tb = Treebank::new();
        tb.push_sentence(&[WordStrs::simple("A", "DET", 0, "root")], vec!["# sent_id = s1".into()]);
        let copy = tb.clone();
        let picked = tb.select(&[0, 0]).unwrap();
        for c in [&copy.sentences[0].comments, &picked.sentences[0].comments, &picked.sentences[1].comments] {
            assert!(Arc::ptr_eq(&tb.sentences[0].comments, c));
        }
        assert_eq!(picked.sentences[1].sent_id(), Some("s1"));
    }

    #[test]
    fn sentence_comment_values() {
        let m = SentenceMeta {
            comments: ["# sent_id = s1".into(), "# text = A dog .".into()].into(),
            ..Default::default()
        };
        assert_eq!(m.sent_id(), Some("s1"));
        assert_eq!(m.text(), Some("A dog ."));
    }

    /// A parse's copy of its input loses the input's margins, and only them.
    #[test]
    fn clear_margins_drops_only_margin_items() {
        let text = "1\tA\t_\tDET\t_\t_\t2\tdet\t_\tMargin=0.5\n\
                    2\tdog\t_\tNOUN\t_\t_\t0\troot\t_\tSpaceAfter=No|Margin=1.2500|X=Margin=\n\
                    3\t.\t_\tPUNCT\t_\t_\t2\tpunct\t_\tXMargin=3\n\n";
        let mut tb = read(text);
        tb.clear_margins();
        let misc: Vec<&str> = (0..3).map(|i| tb.word_strs(i).misc).collect();
        assert_eq!(misc, ["_", "SpaceAfter=No|X=Margin=", "XMargin=3"]);
        assert_eq!(without_margin("SpaceAfter=No"), None);
        assert_eq!(without_margin("Margin=|Margin=2").as_deref(), Some("_"));
    }

    #[test]
    fn push_sentence_builds_columns() {
        let mut tb = Treebank::new();
        tb.push_sentence(
            &[WordStrs::simple("A", "DET", 2, "det"), WordStrs::simple("dog", "NOUN", 0, "root")],
            vec![],
        );
        assert_eq!(tb.len(), 1);
        assert_eq!(tb.heads(0), &[2, 0]);
        assert_eq!(tb.vocabs.deprel.str(tb.deprels(0)[1]), "root");
    }
}
