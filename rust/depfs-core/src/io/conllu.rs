//! Streaming CoNLL-U / CoNLL-X reader and a writer that gives the input back
//! byte for byte.
//!
//! Format: <https://universaldependencies.org/format.html> (CoNLL-U) and the
//! CoNLL-X shared task format (Buchholz & Marsi 2006): ten tab-separated
//! columns per word, sentences separated by one blank line, `#` comment lines
//! before the words. Multiword-token ranges (`3-4`) and empty nodes (`5.1`) are
//! validated and kept verbatim; DEPS / MISC (PHEAD / PDEPREL in CoNLL-X) are
//! interned as opaque strings.
//!
//! Reading is one pass over the bytes, line by line through a reused buffer:
//! O(bytes) plus one hash lookup per column of each word; nothing is allocated
//! per word except new vocabulary entries. Files starting with the gzip magic
//! bytes are decompressed on the fly, whatever their name.
//!
//! Canonical form (what round-trips byte for byte): LF line ends, no BOM, every
//! sentence followed by exactly one blank line. The reader also accepts CRLF
//! line ends (any number of CRs before the LF), a UTF-8 BOM, several blank lines between sentences and a missing
//! final blank line; the writer then produces the canonical form.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::error::{Error, Result};
use crate::treebank::{
    without_margin, ExtraKind, ExtraLine, FileFormat, SentenceMeta, Treebank, TreebankSizes, Vocab, NO_HEAD,
};

/// File name used in messages when reading from a string.
pub const STRING_SOURCE: &str = "<string>";

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const N_COLUMNS: usize = 10;
const COLUMN_NAMES: [&str; N_COLUMNS] =
    ["ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC"];

/// What the reader accepts beyond a strict single-rooted, fully annotated tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Accept sentences with several words whose HEAD is 0 (default: exactly one).
    pub multiple_roots: bool,
    /// Accept `_` as HEAD and DEPREL (default: yes). Parser input has these columns
    /// blanked, and the format allows `_` for unavailable values; a sentence with
    /// a blank HEAD is not checked for its root count (the heads that are given
    /// are still checked for range and cycles).
    pub allow_blank_heads: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { multiple_roots: false, allow_blank_heads: true }
    }
}

/// Reads a CoNLL-U or CoNLL-X file, gzipped or not. `.conll` / `.conllx` names
/// (before an optional `.gz`) are marked CoNLL-X; columns are read the same way.
pub fn read_path(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Treebank> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| Error::io(&name, &e))?;
    let mut tb = read(BufReader::with_capacity(1 << 16, file), &name, opts)?;
    tb.format = format_from_name(&name);
    Ok(tb)
}

/// Reads CoNLL-U text held in memory; messages name the file `<string>`.
pub fn read_str(text: &str, opts: &ReadOptions) -> Result<Treebank> {
    // An empty string is an empty treebank (as `tb[0:0]` is); an empty file is refused.
    if text.bytes().all(|b| b == b'\n' || b == b'\r') {
        return Ok(Treebank::new());
    }
    read_bytes(text.as_bytes(), STRING_SOURCE, opts)
}

/// Reads CoNLL-U bytes (gzipped or not) held in memory; `name` is used in messages.
pub fn read_bytes(bytes: &[u8], name: &str, opts: &ReadOptions) -> Result<Treebank> {
    read(bytes, name, opts)
}

/// Reads from any buffered source, gunzipping it if it starts with the gzip magic bytes.
pub fn read<R: BufRead>(mut source: R, name: &str, opts: &ReadOptions) -> Result<Treebank> {
    let head = source.fill_buf().map_err(|e| Error::io(name, &e))?;
    if head.starts_with(&GZIP_MAGIC) {
        let unzipped = BufReader::with_capacity(1 << 16, MultiGzDecoder::new(source));
        read_plain(unzipped, name, opts)
    } else {
        read_plain(source, name, opts)
    }
}

fn format_from_name(name: &str) -> FileFormat {
    let base = name.strip_suffix(".gz").unwrap_or(name);
    if base.ends_with(".conll") || base.ends_with(".conllx") {
        FileFormat::ConllX
    } else {
        FileFormat::Conllu
    }
}

/// State of the sentence being read.
#[derive(Default)]
struct Pending {
    meta: SentenceMeta,
    /// The comment lines read so far (`meta.comments` once the sentence is done).
    comments: Vec<String>,
    /// Line number of each word line, for messages about HEAD.
    word_lines: Vec<usize>,
    /// Line of the first line (comment, word or extra) of the sentence.
    first_line: usize,
    /// Highest empty-node id `after.minor` seen since the last word, for ordering.
    last_empty: Option<(u32, u32)>,
    /// End of the last multiword range and the line it was on.
    open_range: Option<(u32, usize)>,
    /// A comment line held a CR: the file's lines end in CR alone (old Mac), read as one.
    cr_inside: bool,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.first_line == 0
    }
    fn n_words(&self) -> u32 {
        self.word_lines.len() as u32
    }
}

/// Which columns a read interns. ID and HEAD are always read (the sentence's order
/// and tree are checked on every read); a column left out reads as `_` on every word,
/// and the treebank is marked [`Treebank::partial`]: a streamed parse reads only what
/// its model can read and writes through the batch's text ([`BatchText::rewrite`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Columns(u16);

impl Columns {
    /// Every column (a treebank that can be written back).
    pub const ALL: Columns = Columns((1 << N_COLUMNS) - 1);

    /// The columns named (CoNLL-U names, any case) of FORM, LEMMA, UPOS, XPOS, FEATS,
    /// DEPREL, DEPS and MISC, with ID and HEAD; an unknown name is an error.
    pub fn named<S: AsRef<str>>(names: &[S]) -> Result<Columns> {
        let mut bits = 1 << ID | 1 << HEAD;
        for name in names {
            let name = name.as_ref();
            match COLUMN_NAMES.iter().position(|c| c.eq_ignore_ascii_case(name)) {
                Some(i) => bits |= 1 << i,
                None => {
                    return Err(Error::InvalidArgument(format!(
                    "unknown column {name:?}: expected FORM, LEMMA, UPOS, XPOS, FEATS, DEPREL, DEPS or MISC"
                )))
                }
            }
        }
        Ok(Columns(bits))
    }

    fn has(self, column: usize) -> bool {
        self.0 & (1 << column) != 0
    }
}

const ID: usize = 0;
const HEAD: usize = 6;
const DEPREL: usize = 7;
const MISC: usize = 9;

/// Bytes read from the source at a time.
const BLOCK: usize = 1 << 17;

/// The longest line read: a CoNLL-U line is a word's ten columns. A source without
/// line ends (`/dev/zero`, a sparse file, a gzip of zeros) grew the buffer without
/// bound, gigabytes in seconds, in a call that Ctrl-C does not stop; it is refused here.
pub const MAX_LINE_BYTES: usize = 64 << 20;

const BOM: &[u8] = "\u{feff}".as_bytes();

/// Why a file whose lines end in CR alone reads as one long line.
const CR_ONLY: &str = "CR line ends (a line ends in CR alone, as on old Macs): convert them to LF";

/// The batch's canonical text as it is read, in place in the batch's buffer: the
/// buffer holds the bytes read, and a line of canonical input is already where the
/// text wants it; one that is not (after a CRLF, a BOM, extra blank lines, or a last
/// line without its LF) is moved down once the lines around it are read.
struct Kept {
    /// End of the text so far (at most where reading has got to).
    end: usize,
    /// Per word: start of its HEAD field and end of its DEPREL field in the text.
    fields: Vec<(usize, usize)>,
    /// The words whose MISC has a `Margin=` item (see [`BatchText`]).
    margins: Vec<MiscEdit>,
    sentences: usize,
    /// Lines to move, in order: `len` bytes from `from` to `to`, then an LF (a blank
    /// line: `len` 0).
    moves: Vec<(usize, usize, usize)>,
}

impl Kept {
    /// A line of `len` bytes read at `at` in the buffer; `lf`: an LF follows it there.
    fn line(&mut self, at: usize, len: usize, lf: bool) {
        if self.end != at || !lf {
            self.moves.push((at, len, self.end));
        }
        self.end += len + 1;
    }

    /// The MISC field `misc` of the last word, at `at` in the text: recorded when it has
    /// margins. Out of line, so that the reader's word loop stays small.
    #[inline(never)]
    fn misc(&mut self, misc: &str, at: usize) {
        if let Some(new) = without_margin(misc) {
            let word = self.fields.len() - 1;
            self.margins.push(MiscEdit { word, start: at, end: at + misc.len(), misc: new });
        }
    }

    /// Moves the lines that are not in place (O(their bytes); none for canonical input).
    fn apply(&mut self, buf: &mut Vec<u8>) {
        for (from, len, to) in self.moves.drain(..) {
            buf.copy_within(from..from + len, to);
            if buf.len() <= to + len {
                buf.resize(to + len + 1, 0);
            }
            buf[to + len] = b'\n';
        }
    }
}

struct Reader<'a> {
    name: &'a str,
    opts: &'a ReadOptions,
    columns: Columns,
    tb: Treebank,
    cur: Pending,
    /// The batch's text, when kept.
    text: Option<Kept>,
    walk: Walk,
}

fn read_plain<R: BufRead>(source: R, name: &str, opts: &ReadOptions) -> Result<Treebank> {
    Ok(Batches::plain(source, name, opts).next_batch(usize::MAX)?.unwrap_or_default())
}

/// A CoNLL-U source read `n` sentences at a time (corpora larger than memory): the
/// batches together are exactly the treebank [`read`] gives, and messages count lines
/// from the start of the source.
pub struct Batches<R> {
    source: R,
    name: String,
    opts: ReadOptions,
    columns: Columns,
    line_no: usize,
    /// The reading buffer when the text is not kept (reused from batch to batch).
    buf: Vec<u8>,
    /// Bytes read past the end of the last batch: the start of the next.
    rest: Vec<u8>,
    /// The source has given all its bytes.
    eof: bool,
    /// The sentence under way when the last batch filled up.
    cur: Pending,
    done: bool,
    /// Sentences given out so far.
    read: usize,
    /// The last batch's sizes (vocabularies, words, sentences).
    sizes: TreebankSizes,
    /// Whether each batch keeps its text (see [`BatchText`]), and the last batch's.
    keep_text: bool,
    text: Option<BatchText>,
    /// The last batch text's bytes and words (reserved for the next).
    text_sizes: (usize, usize),
}

/// A batch's text in canonical form (what [`to_bytes`] writes for it) with the byte span
/// of each word's HEAD and DEPREL fields, so that a parse of the batch is written by
/// copying the input around those two fields ([`BatchText::rewrite`]): a streamed parse
/// then formats two fields a word instead of ten, and reads no vocabulary. A parse drops
/// the input's `Margin=` items ([`Treebank::clear_margins`]), so the few MISC fields that
/// have one are rewritten too.
#[derive(Debug, Default, Clone)]
pub struct BatchText {
    bytes: Vec<u8>,
    /// Per word: start of its HEAD field and end of its DEPREL field in `bytes`.
    fields: Vec<(usize, usize)>,
    /// In word order: the MISC fields to write without their margins.
    margins: Vec<MiscEdit>,
    sentences: usize,
}

/// A word's MISC field in the text (`word`: its index in the batch; `start..end`: the
/// field's bytes) and what a parse writes there instead.
#[derive(Debug, Clone)]
struct MiscEdit {
    word: usize,
    start: usize,
    end: usize,
    misc: String,
}

impl BatchText {
    /// `parsed` (the batch this text was read with, its HEAD and DEPREL columns changed
    /// at most) as CoNLL-U bytes: the same bytes as `to_bytes(parsed)`, copied from the
    /// input around the two fields. `None` when `parsed` has other sentences or words.
    /// O(bytes).
    pub fn rewrite(&self, parsed: &Treebank) -> Option<Vec<u8>> {
        let mut out = vec![0; self.rewritten_len(parsed)?];
        self.rewrite_to(parsed, &mut out);
        Some(out)
    }

    /// The length of [`BatchText::rewrite`]'s bytes; `None` when `parsed` has other
    /// sentences or words. O(words).
    pub fn rewritten_len(&self, parsed: &Treebank) -> Option<usize> {
        if parsed.len() != self.sentences || parsed.n_words() != self.fields.len() {
            return None;
        }
        let (w, deprels) = (&parsed.words, &parsed.vocabs.deprel);
        let mut len = self.bytes.len();
        for (pos, &(head_start, deprel_end)) in self.fields.iter().enumerate() {
            let h = w.head[pos];
            let digits = if h < 0 { 1 } else { h.checked_ilog10().unwrap_or(0) as usize + 1 };
            len = len + digits + 1 + deprels.str(w.deprel[pos]).len() - (deprel_end - head_start);
        }
        for e in &self.margins {
            len = len + e.misc.len() - (e.end - e.start);
        }
        Some(len)
    }

    /// Writes the rewrite of `parsed` into `out`, exactly [`BatchText::rewritten_len`]
    /// bytes long (a Python bytes object is filled in place).
    pub fn rewrite_to(&self, parsed: &Treebank, out: &mut [u8]) {
        let (w, deprels) = (&parsed.words, &parsed.vocabs.deprel);
        let mut heads = itoa::Buffer::new();
        let (mut from, mut at) = (0, 0);
        let mut put = |b: &[u8]| {
            out[at..at + b.len()].copy_from_slice(b);
            at += b.len();
        };
        let mut edits = self.margins.iter().peekable();
        for (pos, &(head_start, deprel_end)) in self.fields.iter().enumerate() {
            put(&self.bytes[from..head_start]);
            let h = w.head[pos];
            put(if h < 0 { b"_" } else { heads.format(h).as_bytes() });
            put(b"\t");
            put(deprels.str(w.deprel[pos]).as_bytes());
            from = deprel_end;
            // MISC comes after DEPREL on the same line.
            if let Some(e) = edits.next_if(|e| e.word == pos) {
                put(&self.bytes[from..e.start]);
                put(e.misc.as_bytes());
                from = e.end;
            }
        }
        put(&self.bytes[from..]);
    }
}

impl Batches<Box<dyn BufRead + Send + Sync>> {
    /// Batches of the file at `path` (gzipped or not).
    pub fn open(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| Error::io(&name, &e))?;
        let mut source = BufReader::with_capacity(1 << 16, file);
        let head = source.fill_buf().map_err(|e| Error::io(&name, &e))?;
        let source: Box<dyn BufRead + Send + Sync> = if head.starts_with(&GZIP_MAGIC) {
            Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(source)))
        } else {
            Box::new(source)
        };
        Ok(Batches::plain(source, &name, opts))
    }
}

/// Appends up to [`BLOCK`] bytes of `source` to `buf`; 0 at its end. (`read_to_end`
/// reads into the spare room without zeroing it first, and retries a read that a
/// signal interrupted.)
fn fill<R: Read>(source: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    buf.reserve(BLOCK);
    source.take(BLOCK as u64).read_to_end(buf)
}

impl<R: BufRead> Batches<R> {
    pub(crate) fn plain(source: R, name: &str, opts: &ReadOptions) -> Self {
        Batches {
            source,
            name: name.to_string(),
            opts: *opts,
            columns: Columns::ALL,
            line_no: 0,
            buf: Vec::new(),
            rest: Vec::new(),
            eof: false,
            cur: Pending::default(),
            done: false,
            read: 0,
            sizes: TreebankSizes::default(),
            keep_text: false,
            text: None,
            text_sizes: (0, 0),
        }
    }

    /// Each batch keeps its text, for [`Batches::take_text`].
    pub fn keeping_text(mut self) -> Self {
        self.keep_text = true;
        self
    }

    /// From the next batch on, interns only `columns` (see [`Columns`]).
    pub fn set_columns(&mut self, columns: Columns) {
        self.columns = columns;
    }

    /// The text of the batch [`Batches::next_batch`] gave last (once; `None` unless
    /// [`Batches::keeping_text`]).
    pub fn take_text(&mut self) -> Option<BatchText> {
        self.text.take()
    }

    /// The next (up to) `n` sentences; `None` at the end of the source. A source with
    /// no sentence at all is an error.
    ///
    /// The source is read a block at a time into one buffer and its lines are read
    /// where they lie: the complete lines of each block are checked as UTF-8 at once
    /// and split at their tabs and line ends eight bytes at a time ([`scan_line`]);
    /// with the text kept, the buffer becomes the batch's text (no line is copied
    /// unless the input is not canonical). O(bytes) plus one hash lookup per column
    /// read of each word.
    pub fn next_batch(&mut self, n: usize) -> Result<Option<Treebank>> {
        if self.done {
            return Ok(None);
        }
        let n = n.max(1);
        // Sized as the previous batch was: no table rehashed nor column regrown as it fills.
        let mut tb = Treebank::new();
        tb.reserve_like(&self.sizes);
        tb.format = format_from_name(&self.name);
        tb.partial = self.columns != Columns::ALL;
        let mut buf = if self.keep_text {
            Vec::with_capacity(self.text_sizes.0 + 2 * BLOCK)
        } else {
            std::mem::take(&mut self.buf)
        };
        buf.clear();
        buf.extend_from_slice(&self.rest);
        // A batch ends at a sentence's end, so no text is pending from the last one.
        let text = self.keep_text.then(|| Kept {
            end: 0,
            fields: Vec::with_capacity(self.text_sizes.1),
            margins: Vec::new(),
            sentences: 0,
            moves: Vec::new(),
        });
        let name = self.name.as_str();
        let mut r = Reader {
            name,
            opts: &self.opts,
            columns: self.columns,
            tb,
            cur: std::mem::take(&mut self.cur),
            text,
            walk: Walk::default(),
        };
        // buf[..pos] is read (and, with the text kept, buf[..text.end] is the text);
        // buf[pos..searched] holds no line end (a long line is searched once, not once
        // a block: O(line), where it was O(line² / block)).
        let (mut pos, mut searched) = (0, 0);
        while r.tb.len() < n {
            let end = if self.eof {
                buf.len()
            } else {
                let from = searched.max(pos);
                memchr::memrchr(b'\n', &buf[from..]).map_or(pos, |k| from + k + 1)
            };
            if pos == end {
                if self.eof {
                    r.end_sentence(buf.len(), false)?;
                    self.done = true;
                    break;
                }
                // Drop what is read and not kept, then read another block.
                let kept = r.text.as_ref().map_or(0, |t| t.end);
                buf.drain(kept..pos);
                pos = kept;
                if buf.len() - pos > MAX_LINE_BYTES {
                    let msg = format!(
                        "a line of more than {} MiB with no line end: not CoNLL-U",
                        MAX_LINE_BYTES >> 20
                    );
                    return Err(Error::format(name, self.line_no + 1, msg));
                }
                searched = buf.len();
                let got = fill(&mut self.source, &mut buf).map_err(|e| Error::Io {
                    file: name.to_string(),
                    msg: format!("read error after line {}: {e}", self.line_no),
                })?;
                self.eof = got == 0;
                continue;
            }
            if self.line_no == 0 && buf[pos..].starts_with(crate::io::model::MAGIC) {
                return Err(Error::format(name, 1, "a depfs model file, not a CoNLL-U treebank"));
            }
            // The complete lines of buf[pos..end] are checked as UTF-8 at once; the lines
            // before an invalid byte are read before the error is reported on its line.
            let (valid, bad) = match std::str::from_utf8(&buf[pos..end]) {
                Ok(s) => (s, None),
                Err(e) => {
                    let ok = e.valid_up_to();
                    let cut = memchr::memrchr(b'\n', &buf[pos..pos + ok]).map_or(0, |k| k + 1);
                    (std::str::from_utf8(&buf[pos..pos + cut]).unwrap_or_default(), Some(pos + ok))
                }
            };
            searched = 0;
            let read = r.lines(valid, pos, n, &mut self.line_no)?;
            let all_valid_read = read == valid.len();
            if let Some(t) = &mut r.text {
                t.apply(&mut buf);
            }
            pos += read;
            if let Some(bad) = bad.filter(|_| all_valid_read && r.tb.len() < n) {
                self.line_no += 1;
                let mut start = pos;
                if self.line_no == 1 && buf[pos..].starts_with(BOM) {
                    start += BOM.len();
                }
                let msg = format!("invalid UTF-8 (byte {} of the line)", bad - start + 1);
                return Err(Error::format(name, self.line_no, msg));
            }
        }
        self.rest.clear();
        self.rest.extend_from_slice(&buf[pos.min(buf.len())..]);
        self.cur = std::mem::take(&mut r.cur);
        self.sizes = r.tb.sizes();
        self.text = match r.text.take() {
            Some(mut t) => {
                t.apply(&mut buf); // the blank line that closes the last sentence at the end
                buf.truncate(t.end);
                Some(BatchText { bytes: buf, fields: t.fields, margins: t.margins, sentences: t.sentences })
            }
            None => {
                self.buf = buf;
                None
            }
        };
        self.text_sizes = self.text.as_ref().map_or((0, 0), |t| (t.bytes.len(), t.fields.len()));
        self.read += r.tb.len();
        if self.read == 0 {
            return Err(Error::format(name, self.line_no.max(1), "empty input: no sentence found"));
        }
        Ok((!r.tb.is_empty()).then_some(r.tb))
    }
}

/// Finds the end of the line that starts at `from` in `b` (its LF, or the end of `b`)
/// and the tabs before it: the first [`N_COLUMNS`] in `tabs`, and how many in all.
/// Eight bytes at a time: one word marks every byte ≤ 10 (tab 9, LF 10, and the rarer
/// control bytes below them, which are then passed over) without a carry between
/// bytes, and the loop goes from mark to mark; a byte loop costs more instructions and
/// a mispredicted branch per field. O(line).
fn scan_line(b: &[u8], from: usize, tabs: &mut [usize; N_COLUMNS]) -> (usize, usize) {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ABOVE_10: u64 = 0x7575_7575_7575_7575; // 0x7f - 10 in each byte
    let mut n = 0;
    let mut i = from;
    let mut found = |k: usize, n: &mut usize| match b[k] {
        b'\n' => true,
        b'\t' => {
            if let Some(t) = tabs.get_mut(*n) {
                *t = k;
            }
            *n += 1;
            false
        }
        _ => false,
    };
    while let Some(word) = b.get(i..i + 8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else { break };
        let x = u64::from_le_bytes(word);
        // The high bit of each byte ≤ 10: its low seven bits plus 0x75 stay below 0x80
        // and its own high bit is clear.
        let mut m = !(((x & LOW7) + ABOVE_10) | x) & HIGH;
        while m != 0 {
            let k = i + (m.trailing_zeros() / 8) as usize;
            m &= m - 1;
            if found(k, &mut n) {
                return (k, n);
            }
        }
        i += 8;
    }
    for k in i..b.len() {
        if found(k, &mut n) {
            return (k, n);
        }
    }
    (b.len(), n)
}

/// Parses a canonical non-negative integer (no sign, no leading zeros): the
/// writer prints IDs and HEADs in that form, so any other spelling would not
/// round-trip.
fn parse_index(s: &str) -> Option<u32> {
    let b = s.as_bytes();
    if b.is_empty() || b.len() > 9 || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    let mut v: u32 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(c - b'0');
    }
    Some(v)
}

impl Reader<'_> {
    fn err(&self, line: usize, msg: impl Into<String>) -> Error {
        Error::format(self.name, line, msg)
    }

    /// Reads the lines of `text` (whole lines, at `base` in the batch's buffer) until
    /// the batch has `n` sentences; returns how many bytes that took.
    fn lines(&mut self, text: &str, base: usize, n: usize, line_no: &mut usize) -> Result<usize> {
        let b = text.as_bytes();
        let mut tabs = [0; N_COLUMNS];
        let mut at = 0;
        while at < b.len() {
            let (lf, n_tabs) = scan_line(b, at, &mut tabs);
            *line_no += 1;
            // Every CR before the LF ends the line: a CR kept at the end of a line's text
            // would be written before an LF and read back as a CRLF line end.
            let (mut start, mut end) = (at, lf);
            while end > start && b[end - 1] == b'\r' {
                end -= 1;
            }
            if *line_no == 1 && b[start..end].starts_with(BOM) {
                start += BOM.len();
            }
            let in_place = end == lf && lf < b.len();
            at = lf + 1;
            // Tabs and line ends are ASCII: the slice is at character boundaries.
            let line = &text[start..end];
            if line.is_empty() {
                self.end_sentence(base + start, in_place)?;
                if self.tb.len() >= n {
                    break;
                }
                continue;
            }
            if self.cur.is_empty() {
                self.cur.first_line = *line_no;
                self.cur.meta.start = self.tb.words.len() as u32;
            }
            if line.starts_with('#') {
                if !self.cur.word_lines.is_empty() || !self.cur.meta.extra.is_empty() {
                    return Err(self.err(
                        *line_no,
                        "comment line inside a sentence: comments must come before its first word",
                    ));
                }
                // A few comment lines a sentence: this search costs nothing.
                self.cur.cr_inside |= memchr::memchr(b'\r', line.as_bytes()).is_some();
                // A partial read is written through its text, which has the comments.
                if !self.tb.partial {
                    self.cur.comments.push(line.to_string());
                }
            } else {
                if n_tabs + 1 != N_COLUMNS {
                    let msg = if line.contains('\r') {
                        CR_ONLY.to_string()
                    } else if line.trim().is_empty() {
                        "a line of spaces: the line between two sentences must be empty".to_string()
                    } else {
                        format!("expected {N_COLUMNS} tab-separated columns, found {}", n_tabs + 1)
                    };
                    return Err(self.err(*line_no, msg));
                }
                let mut cols = [(0, 0); N_COLUMNS];
                let mut from = start;
                for (c, &t) in cols.iter_mut().zip(&tabs[..N_COLUMNS - 1]) {
                    *c = (from, t);
                    from = t + 1;
                }
                cols[N_COLUMNS - 1] = (from, end);
                self.word_line(text, &cols, line, start, *line_no)?;
            }
            if let Some(t) = &mut self.text {
                t.line(base + start, line.len(), in_place);
            }
        }
        Ok(at.min(b.len()))
    }

    /// A word line, `line`, at `start` in `text`, its columns at `cols` there (a
    /// column is sliced out only if it is read).
    fn word_line(
        &mut self,
        text: &str,
        cols: &[(usize, usize); N_COLUMNS],
        line: &str,
        start: usize,
        line_no: usize,
    ) -> Result<()> {
        if let Some(i) = cols.iter().position(|(a, b)| a == b) {
            return Err(
                self.err(line_no, format!("empty {} column (write `_` for no value)", COLUMN_NAMES[i]))
            );
        }
        // Tabs and line ends are ASCII: each column is at character boundaries.
        let col = |i: usize| &text[cols[i].0..cols[i].1];
        let id = col(ID);
        // A word's ID is digits: the two searches below only on a rarer line.
        if !id.bytes().all(|b| b.is_ascii_digit()) {
            if let Some((first, last)) = id.split_once('-') {
                return self.multiword_line(first, last, line, line_no);
            }
            if let Some((after, minor)) = id.split_once('.') {
                return self.empty_node_line(after, minor, line, line_no);
            }
        }
        let expected = self.cur.n_words() + 1;
        match parse_index(id) {
            None => {
                return Err(self.err(
                    line_no,
                    format!("ID {} is not an integer, a range `3-4` or an empty node `5.1`", shown(id)),
                ))
            }
            Some(v) if v != expected => {
                return Err(self.err(line_no, format!("ID {v} out of order: expected word {expected}")))
            }
            Some(_) => {}
        }
        let head = match col(HEAD) {
            "_" if self.opts.allow_blank_heads => NO_HEAD,
            "_" => return Err(self.err(line_no, "HEAD is `_` (blank heads are not allowed here)")),
            h => match parse_index(h) {
                Some(v) => v as i32,
                None => {
                    return Err(self.err(line_no, format!("HEAD {} is not a non-negative integer", shown(h))))
                }
            },
        };
        if !self.opts.allow_blank_heads && col(DEPREL) == "_" {
            return Err(self.err(line_no, "DEPREL is `_` (blank heads are not allowed here)"));
        }
        let v = &mut self.tb.vocabs;
        let w = &mut self.tb.words;
        let c = self.columns;
        // A column not read is `_` (id 0) on every word.
        let intern = |vocab: &mut Vocab, i: usize| if c.has(i) { vocab.intern(col(i)) } else { 0 };
        w.form.push(intern(&mut v.form, 1));
        w.lemma.push(intern(&mut v.lemma, 2));
        w.upos.push(intern(&mut v.upos, 3));
        w.xpos.push(intern(&mut v.xpos, 4));
        w.feats.push(intern(&mut v.feats, 5));
        w.head.push(head);
        w.deprel.push(intern(&mut v.deprel, DEPREL));
        w.deps.push(intern(&mut v.deps, 8));
        w.misc.push(intern(&mut v.misc, 9));
        if let Some(t) = &mut self.text {
            // HEAD's start and DEPREL's end in the text.
            t.fields.push((t.end + cols[HEAD].0 - start, t.end + cols[DEPREL].1 - start));
            // Most MISC values (`_`) are too short to hold a margin: one compare here.
            let (a, b) = cols[MISC];
            if b - a >= "Margin=".len() {
                t.misc(&text[a..b], a + t.end - start);
            }
        }
        self.cur.word_lines.push(line_no);
        self.cur.last_empty = None;
        Ok(())
    }

    fn multiword_line(&mut self, first: &str, last: &str, line: &str, line_no: usize) -> Result<()> {
        let next = self.cur.n_words() + 1;
        let (Some(a), Some(b)) = (parse_index(first), parse_index(last)) else {
            return Err(self.err(
                line_no,
                format!(
                    "multiword token ID {} is not a range of integers",
                    shown(&format!("{first}-{last}"))
                ),
            ));
        };
        if a != next {
            return Err(self.err(
                line_no,
                format!("multiword token {a}-{b} out of order: expected it to start at word {next}"),
            ));
        }
        if b < a {
            return Err(self.err(line_no, format!("multiword token {a}-{b} ends before it starts")));
        }
        if let Some((end, _)) = self.cur.open_range {
            if a <= end {
                return Err(self.err(
                    line_no,
                    format!("multiword token {a}-{b} overlaps the previous range ending at word {end}"),
                ));
            }
        }
        self.cur.open_range = Some((b, line_no));
        self.push_extra(ExtraKind::MultiWord { first: a, last: b }, line);
        Ok(())
    }

    fn empty_node_line(&mut self, after: &str, minor: &str, line: &str, line_no: usize) -> Result<()> {
        let words = self.cur.n_words();
        let (Some(a), Some(m)) = (parse_index(after), parse_index(minor)) else {
            return Err(self.err(
                line_no,
                format!("empty node ID {} is not of the form 5.1", shown(&format!("{after}.{minor}"))),
            ));
        };
        if a != words {
            return Err(
                self.err(line_no, format!("empty node {a}.{m} out of order: expected it after word {words}"))
            );
        }
        let expected_minor = match self.cur.last_empty {
            Some((prev_a, prev_m)) if prev_a == a => prev_m + 1,
            _ => 1,
        };
        if m != expected_minor {
            return Err(
                self.err(line_no, format!("empty node {a}.{m} out of order: expected {a}.{expected_minor}"))
            );
        }
        self.cur.last_empty = Some((a, m));
        self.push_extra(ExtraKind::EmptyNode { after: a, minor: m }, line);
        Ok(())
    }

    fn push_extra(&mut self, kind: ExtraKind, line: &str) {
        let before_word = self.cur.n_words() + 1;
        self.cur.meta.extra.push(ExtraLine { before_word, kind, text: line.to_string() });
    }

    /// Closes the pending sentence (if any) at a blank line or the end of input,
    /// after checking its tree; the blank line is at `at` in the buffer (`lf`: an LF
    /// is there).
    fn end_sentence(&mut self, at: usize, lf: bool) -> Result<()> {
        if self.cur.is_empty() {
            return Ok(());
        }
        let n = self.cur.n_words();
        if n == 0 {
            let msg = if self.cur.cr_inside { CR_ONLY } else { "sentence without word lines" };
            return Err(self.err(self.cur.first_line, msg));
        }
        if let Some((end, range_line)) = self.cur.open_range {
            if end > n {
                return Err(self.err(
                    range_line,
                    format!("multiword token ends at word {end} but the sentence has {n} words"),
                ));
            }
        }
        let start = self.cur.meta.start as usize;
        check_tree(&self.tb.words.head[start..], &self.cur.word_lines, self.opts, &mut self.walk)
            .map_err(|(line, msg)| self.err(line, msg))?;
        if let Some(t) = &mut self.text {
            t.line(at, 0, lf);
            t.sentences += 1;
        }
        let mut done = std::mem::take(&mut self.cur);
        done.meta.len = n;
        if !done.comments.is_empty() {
            done.meta.comments = done.comments.into();
        }
        self.tb.sentences.push(done.meta);
        // Keep the allocation of the line-number buffer for the next sentence.
        done.word_lines.clear();
        self.cur.word_lines = done.word_lines;
        Ok(())
    }
}

/// [`check_tree`]'s buffers, kept from sentence to sentence.
#[derive(Default)]
struct Walk {
    state: Vec<u8>,
    path: Vec<usize>,
}

/// Checks that `heads` (index 0 = word 1; 0 = root; `NO_HEAD` = blank) form a
/// tree: every HEAD in range, no cycle, one root (or several if allowed). On
/// failure returns the line of the offending word and the message. O(n): every
/// word is walked towards the root once, stopping at the first word already known
/// to reach the root.
fn check_tree(
    heads: &[i32],
    lines: &[usize],
    opts: &ReadOptions,
    walk: &mut Walk,
) -> std::result::Result<(), (usize, String)> {
    let n = heads.len();
    for (i, &h) in heads.iter().enumerate() {
        if h != NO_HEAD && h as usize > n {
            return Err((lines[i], format!("HEAD {h} out of range: the sentence has {n} words")));
        }
        if h as usize == i + 1 {
            return Err((lines[i], format!("cycle: word {} is its own head", i + 1)));
        }
    }
    if !heads.contains(&NO_HEAD) {
        let mut roots = heads.iter().enumerate().filter(|(_, &h)| h == 0).map(|(i, _)| i);
        match (roots.next(), roots.next()) {
            (None, _) => return Err((lines[0], "no root: no word has HEAD 0".to_string())),
            (Some(a), Some(b)) if !opts.multiple_roots => {
                return Err((
                    lines[b],
                    format!(
                        "several roots: words {} and {} have HEAD 0 \
                         (reading with multiple_roots=True accepts this)",
                        a + 1,
                        b + 1
                    ),
                ))
            }
            _ => {}
        }
    }
    // 0 = unvisited, 1 = on the current path, 2 = reaches the root or a blank head.
    let Walk { state, path } = walk;
    state.clear();
    state.resize(n + 1, 0);
    state[0] = 2;
    for start in 1..=n {
        let mut w = start;
        path.clear();
        while state[w] == 0 {
            state[w] = 1;
            path.push(w);
            let h = heads[w - 1];
            if h == NO_HEAD {
                break;
            }
            w = h as usize;
        }
        if state[w] == 1 && heads[w - 1] != NO_HEAD {
            // w was reached twice on this path: the cycle is the part of the path from w.
            let from = path.iter().position(|&x| x == w).unwrap_or(0);
            let cycle: Vec<String> = path[from..].iter().map(|x| x.to_string()).collect();
            let first = path[from..].iter().copied().min().unwrap_or(w);
            return Err((
                lines[first - 1],
                format!("cycle: words {} -> {w} do not reach the root", cycle.join(" -> ")),
            ));
        }
        for &x in path.iter() {
            state[x] = 2;
        }
    }
    Ok(())
}

/// Writes `tb` in the layout it was read from: comments, then word lines with the
/// kept multiword and empty-node lines in their places, then one blank line per
/// sentence. O(total bytes).
pub fn write<W: Write + ?Sized>(tb: &Treebank, out: &mut W) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    for s in 0..tb.len() {
        write_sentence(tb, s, &mut buf);
        if buf.len() >= 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)
}

/// The whole treebank as CoNLL-U text.
pub fn to_string(tb: &Treebank) -> String {
    // Every piece written is a str from the vocabularies or ASCII.
    String::from_utf8(to_bytes(tb)).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The whole treebank as CoNLL-U bytes (UTF-8, not checked again).
pub fn to_bytes(tb: &Treebank) -> Vec<u8> {
    let mut buf = Vec::with_capacity(tb.n_words() * 64);
    for s in 0..tb.len() {
        write_sentence(tb, s, &mut buf);
    }
    buf
}

/// Appends sentence `s` (with its trailing blank line) to `buf`.
pub fn write_sentence(tb: &Treebank, s: usize, buf: &mut Vec<u8>) {
    let meta = &tb.sentences[s];
    let v = &tb.vocabs;
    let w = &tb.words;
    for c in meta.comments.iter() {
        buf.extend_from_slice(c.as_bytes());
        buf.push(b'\n');
    }
    let mut extras = meta.extra.iter().peekable();
    let mut ids = itoa::Buffer::new();
    let mut heads = itoa::Buffer::new();
    for (i, pos) in meta.range().enumerate() {
        let id = i as u32 + 1;
        while let Some(x) = extras.next_if(|x| x.before_word <= id) {
            buf.extend_from_slice(x.text.as_bytes());
            buf.push(b'\n');
        }
        let cols = [
            ids.format(id).as_bytes(),
            v.form.str(w.form[pos]).as_bytes(),
            v.lemma.str(w.lemma[pos]).as_bytes(),
            v.upos.str(w.upos[pos]).as_bytes(),
            v.xpos.str(w.xpos[pos]).as_bytes(),
            v.feats.str(w.feats[pos]).as_bytes(),
        ];
        for c in cols {
            buf.extend_from_slice(c);
            buf.push(b'\t');
        }
        let h = w.head[pos];
        buf.extend_from_slice(if h < 0 { b"_" } else { heads.format(h).as_bytes() });
        for c in [v.deprel.str(w.deprel[pos]), v.deps.str(w.deps[pos]), v.misc.str(w.misc[pos])] {
            buf.push(b'\t');
            buf.extend_from_slice(c.as_bytes());
        }
        buf.push(b'\n');
    }
    for x in extras {
        buf.extend_from_slice(x.text.as_bytes());
        buf.push(b'\n');
    }
    buf.push(b'\n');
}

/// Writes `tb` to `path` atomically: into a temporary file in the same directory,
/// then renamed over `path`, so readers never see a half-written file. A name
/// ending in `.gz` is gzip-compressed.
pub fn write_path(tb: &Treebank, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let gzip = path.to_string_lossy().ends_with(".gz");
    crate::io::atomic::atomic_write(path, |out| {
        if gzip {
            let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            write(tb, &mut gz)?;
            gz.finish()?;
            Ok(())
        } else {
            write(tb, out)
        }
    })
}

/// A value from the input as an error message shows it: quoted, and cut after
/// [`SHOWN_CHARS`] characters (a 1 MB field made a 1 MB message).
fn shown(value: &str) -> String {
    match value.char_indices().nth(SHOWN_CHARS) {
        None => format!("{value:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &value[..cut], value.len()),
    }
}

/// Characters of an input value a message shows.
const SHOWN_CHARS: usize = 40;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::treebank::WordStrs;

    const SAMPLE: &str = "\
# sent_id = s1
# text = Vámonos al mar.
1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_
1\tVamos\tir\tVERB\t_\tMood=Imp\t0\troot\t0:root\t_
2\tnos\tnosotros\tPRON\t_\tCase=Acc\t1\tobj\t1:obj\t_
3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_
3\ta\ta\tADP\t_\t_\t5\tcase\t5:case\t_
4\tel\tel\tDET\t_\tDefinite=Def\t5\tdet\t5:det\t_
4.1\tvamos\tir\tVERB\t_\t_\t_\t_\t1:conj\t_
5\tmar\tmar\tNOUN\t_\tGender=Masc\t1\tobl\t1:obl\tSpaceAfter=No
6\t.\t.\tPUNCT\t_\t_\t1\tpunct\t1:punct\t_
6.1\telided\t_\t_\t_\t_\t_\t_\t1:orphan\t_

# sent_id = s2
1\tHi\thi\tINTJ\tUH\t_\t0\troot\t0:root\t_

";

    fn opts() -> ReadOptions {
        ReadOptions::default()
    }

    fn err_of(text: &str, o: &ReadOptions) -> (usize, String) {
        match read_str(text, o) {
            Err(Error::Format { file, line, msg }) => {
                assert_eq!(file, STRING_SOURCE);
                (line, msg)
            }
            other => panic!("expected a format error, got {other:?}"),
        }
    }

    fn word(id: &str, head: &str) -> String {
        format!("{id}\tw\tw\tX\t_\t_\t{head}\tdep\t_\t_\n")
    }

    fn sent(heads: &[&str]) -> String {
        let mut s = String::new();
        for (i, h) in heads.iter().enumerate() {
            s += &word(&(i + 1).to_string(), h);
        }
        s + "\n"
    }

    #[test]
    fn reads_columns_comments_and_extras() {
        let tb = read_str(SAMPLE, &opts()).unwrap();
        assert_eq!(tb.len(), 2);
        assert_eq!(tb.n_words(), 7);
        let s = &tb.sentences[0];
        assert_eq!(s.sent_id(), Some("s1"));
        assert_eq!(s.text(), Some("Vámonos al mar."));
        assert_eq!(tb.heads(0), &[0, 1, 5, 5, 1, 1]);
        let kinds: Vec<(u32, ExtraKind)> = s.extra.iter().map(|x| (x.before_word, x.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                (1, ExtraKind::MultiWord { first: 1, last: 2 }),
                (3, ExtraKind::MultiWord { first: 3, last: 4 }),
                (5, ExtraKind::EmptyNode { after: 4, minor: 1 }),
                (7, ExtraKind::EmptyNode { after: 6, minor: 1 }),
            ]
        );
        let v = &tb.vocabs;
        assert_eq!(v.form.str(tb.words.form[4]), "mar");
        assert_eq!(v.misc.str(tb.words.misc[4]), "SpaceAfter=No");
        assert_eq!(v.deps.str(tb.words.deps[4]), "1:obl");
        assert_eq!(v.xpos.str(tb.words.xpos[6]), "UH");
        assert_eq!(tb.sentences[1].start, 6);
    }

    #[test]
    fn writes_back_byte_identical() {
        let tb = read_str(SAMPLE, &opts()).unwrap();
        assert_eq!(to_string(&tb), SAMPLE);
        let mut out = Vec::new();
        write(&tb, &mut out).unwrap();
        assert_eq!(out, SAMPLE.as_bytes());
    }

    #[test]
    fn normalises_crlf_bom_missing_final_blank_and_extra_blank_lines() {
        let messy = format!("\u{feff}{}", SAMPLE.replace('\n', "\r\n"));
        let messy = messy.replace("_\r\n\r\n# sent_id = s2", "_\r\n\r\n\r\n# sent_id = s2");
        let messy = messy.trim_end_matches("\r\n");
        let tb = read_str(messy, &opts()).unwrap();
        assert_eq!(to_string(&tb), SAMPLE);
    }

    #[test]
    fn carriage_returns_ending_a_line_are_its_line_end_so_the_output_reads_back_the_same() {
        // Found by the CoNLL-U fuzz target: `# c\r\r\n` kept `# c\r`, written `# c\r\n`, which
        // read back as `# c` (a MISC value ending in CR lost it the same way).
        let text = "# c\r\r\n1\ta\t_\tX\t_\t_\t0\troot\t_\tm\r\r\r\n\r\r\n";
        let tb = read_str(text, &opts()).unwrap();
        let out = to_string(&tb);
        assert_eq!(out, "# c\n1\ta\t_\tX\t_\t_\t0\troot\t_\tm\n\n");
        assert_eq!(to_string(&read_str(&out, &opts()).unwrap()), out);
        // A CR inside a line is text.
        let inner = "# a\rb\n1\ta\rb\t_\tX\t_\t_\t0\troot\t_\t_\n\n";
        assert_eq!(to_string(&read_str(inner, &opts()).unwrap()), inner);
    }

    #[test]
    fn builds_in_code_then_writes() {
        let mut tb = Treebank::new();
        tb.push_sentence(
            &[WordStrs::simple("A", "DET", 2, "det"), WordStrs::simple("dog", "NOUN", NO_HEAD, "_")],
            vec!["# sent_id = x".into()],
        );
        assert_eq!(
            to_string(&tb),
            "# sent_id = x\n1\tA\t_\tDET\t_\t_\t2\tdet\t_\t_\n2\tdog\t_\tNOUN\t_\t_\t_\t_\t_\t_\n\n"
        );
    }

    #[test]
    fn reads_gzip_by_magic_bytes_and_writes_gz_files() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(SAMPLE.as_bytes()).unwrap();
        let zipped = gz.finish().unwrap();
        let tb = read_bytes(&zipped, "x", &opts()).unwrap();
        assert_eq!(to_string(&tb), SAMPLE);

        let dir = std::env::temp_dir().join(format!("depfs-conllu-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.conllu.gz");
        write_path(&tb, &p).unwrap();
        let raw = std::fs::read(&p).unwrap();
        assert!(raw.starts_with(&GZIP_MAGIC));
        assert_eq!(to_string(&read_path(&p, &opts()).unwrap()), SAMPLE);
        let plain = dir.join("out.conll");
        write_path(&tb, &plain).unwrap();
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), SAMPLE);
        assert_eq!(read_path(&plain, &opts()).unwrap().format, FileFormat::ConllX);
        // Only the two targets are left: the temporary files were renamed.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn truncated_gzip_is_an_error_naming_the_file() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(SAMPLE.repeat(50).as_bytes()).unwrap();
        let zipped = gz.finish().unwrap();
        let err = read_bytes(&zipped[..zipped.len() / 2], "t.conllu.gz", &opts()).unwrap_err();
        assert!(
            matches!(err, Error::Io { ref file, ref msg } if file == "t.conllu.gz" && msg.contains("read error")),
            "{err}"
        );
    }

    #[test]
    fn write_into_missing_directory_is_an_io_error() {
        let tb = read_str(SAMPLE, &opts()).unwrap();
        let err = write_path(&tb, "/nonexistent-depfs-dir/x.conllu").unwrap_err();
        assert!(matches!(err, Error::Io { ref file, .. } if file.contains("x.conllu")), "{err}");
        let err = read_path("/nonexistent-depfs-dir/x.conllu", &opts()).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }

    #[test]
    fn wrong_column_count() {
        let text = format!("{}1\tw\tw\n\n", word("1", "0").replace('\n', "\n# c\n"));
        // A comment between words is refused first; test the count on a clean case.
        let (line, msg) = err_of("1\tw\tw\tX\t_\t_\t0\troot\t_\n", &opts());
        assert_eq!(line, 1);
        assert!(msg.contains("expected 10 tab-separated columns, found 9"), "{msg}");
        let (line, msg) = err_of(&format!("{}2\ta\tb\n", word("1", "0")), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("found 3"), "{msg}");
        let (line, msg) = err_of(&text, &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("comment line inside a sentence"), "{msg}");
    }

    #[test]
    fn bad_ids() {
        let (line, msg) = err_of(&format!("{}{}", word("1", "0"), word("x", "1")), &opts());
        assert_eq!((line, msg.contains("ID \"x\" is not an integer")), (2, true), "{msg}");
        let (line, msg) = err_of(&format!("{}{}", word("1", "0"), word("3", "1")), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("ID 3 out of order: expected word 2"), "{msg}");
        let (_, msg) = err_of(&word("01", "0"), &opts());
        assert!(msg.contains("not an integer"), "{msg}");
        let (line, msg) = err_of(&format!("{}{}", word("1", "0"), word("3-4", "_")), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("multiword token 3-4 out of order"), "{msg}");
        let (_, msg) = err_of(&format!("{}{}", word("1-x", "_"), word("1", "0")), &opts());
        assert!(msg.contains("not a range of integers"), "{msg}");
        let (line, msg) = err_of(&format!("{}{}", word("1-2", "_"), word("1", "0")), &opts());
        assert_eq!(line, 1);
        assert!(msg.contains("ends at word 2 but the sentence has 1 words"), "{msg}");
        let (line, msg) = err_of(&format!("{}{}", word("1", "0"), word("2.1", "_")), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("empty node 2.1 out of order: expected it after word 1"), "{msg}");
        let (line, msg) = err_of(&format!("{}{}", word("1", "0"), word("1.2", "_")), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("expected 1.1"), "{msg}");
    }

    #[test]
    fn bad_heads() {
        let (line, msg) = err_of(&sent(&["0", "7"]), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("HEAD 7 out of range: the sentence has 2 words"), "{msg}");
        let (line, msg) = err_of(&sent(&["0", "-1"]), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("HEAD \"-1\" is not a non-negative integer"), "{msg}");
        // A huge value is cut in the message (it was repeated whole: 1 MB).
        let (_, msg) = err_of(&sent(&["0", &"9x".repeat(500_000)]), &opts());
        assert!(msg.contains("HEAD \"9x9x9x") && msg.contains("… (1000000 bytes) is not"), "{msg}");
        assert!(msg.len() < 200, "{}", msg.len());
        let (line, msg) = err_of(&sent(&["0", "3", "4", "2"]), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("cycle: words"), "{msg}");
        let (line, msg) = err_of(&sent(&["0", "2"]), &opts());
        assert_eq!(line, 2);
        assert!(msg.contains("cycle: word 2 is its own head"), "{msg}");
        let (line, msg) = err_of(&sent(&["2", "1"]), &opts());
        assert_eq!(line, 1);
        assert!(msg.contains("no root"), "{msg}");
        let (line, msg) = err_of(&sent(&["0", "1", "0"]), &opts());
        assert_eq!(line, 3);
        assert!(msg.contains("several roots: words 1 and 3"), "{msg}");
        let multi = ReadOptions { multiple_roots: true, ..opts() };
        assert_eq!(read_str(&sent(&["0", "1", "0"]), &multi).unwrap().heads(0), &[0, 1, 0]);
    }

    #[test]
    fn blank_heads() {
        let tb = read_str(&sent(&["_", "_", "_"]), &opts()).unwrap();
        assert_eq!(tb.heads(0), &[NO_HEAD; 3]);
        // The given heads of a partly blank sentence are still checked for cycles.
        let (_, msg) = err_of(&sent(&["_", "3", "2"]), &opts());
        assert!(msg.contains("cycle"), "{msg}");
        let strict = ReadOptions { allow_blank_heads: false, ..opts() };
        let (line, msg) = err_of(&sent(&["0", "_"]), &strict);
        assert_eq!(line, 2);
        assert!(msg.contains("HEAD is `_`"), "{msg}");
        let (line, msg) = err_of("1\tw\tw\tX\t_\t_\t0\t_\t_\t_\n", &strict);
        assert_eq!(line, 1);
        assert!(msg.contains("DEPREL is `_`"), "{msg}");
    }

    #[test]
    fn invalid_utf8_empty_input_and_empty_columns() {
        let mut bytes = format!("# ok\n{}", word("1", "0")).into_bytes();
        bytes[6] = 0xff;
        match read_bytes(&bytes, "f.conllu", &opts()) {
            Err(Error::Format { file, line, msg }) => {
                assert_eq!((file.as_str(), line), ("f.conllu", 2));
                assert!(msg.contains("invalid UTF-8"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        // An empty file (or stream) is refused; an empty string is an empty treebank.
        for empty in ["", "\n\n", "\r\n"] {
            let msg = read_bytes(empty.as_bytes(), "f.conllu", &opts()).unwrap_err().to_string();
            assert!(msg.contains("f.conllu:") && msg.contains("empty input"), "{msg}");
            assert!(read_str(empty, &opts()).unwrap().is_empty());
        }
        // Lines ended by CR alone read as one line; a line of spaces is not a blank line.
        let cr = format!("# sent_id = a\r{}", word("1", "0").replace('\n', "\r"));
        assert_eq!(err_of(&cr, &opts()), (1, CR_ONLY.to_string()));
        let cr = word("1", "0").replace('\n', "\r").repeat(2);
        assert_eq!(err_of(&cr, &opts()), (1, CR_ONLY.to_string()));
        let (line, msg) = err_of(&format!("{}  \n{}", word("1", "0"), word("1", "0")), &opts());
        assert_eq!(line, 2);
        assert!(msg.starts_with("a line of spaces"), "{msg}");
        let (line, msg) = err_of("# only a comment\n", &opts());
        assert_eq!(line, 1);
        assert!(msg.contains("sentence without word lines"), "{msg}");
        let (line, msg) = err_of("1\t\tw\tX\t_\t_\t0\troot\t_\t_\n", &opts());
        assert_eq!(line, 1);
        assert!(msg.contains("empty FORM column"), "{msg}");
        let (_, msg) = err_of("1\tw\n", &opts());
        assert!(msg.contains("found 2"), "{msg}");
    }

    #[test]
    fn error_display_names_file_line_and_problem() {
        let err = read_bytes(sent(&["0", "9"]).as_bytes(), "data/x.conllu", &opts()).unwrap_err();
        assert_eq!(err.to_string(), "data/x.conllu:2: HEAD 9 out of range: the sentence has 2 words");
    }

    /// Every file under the UD data directory reads and writes back byte for byte.
    #[test]
    fn ud_files_round_trip() {
        let repo_sibling = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ud");
        let candidates = std::env::var_os("DEPFS_DATA").map(std::path::PathBuf::from).into_iter();
        let Some(dir) = candidates.chain([repo_sibling]).find(|d| d.join("en_ewt").is_dir()) else {
            eprintln!("skipped: no UD data (set DEPFS_DATA)");
            return;
        };
        let treebanks = std::fs::read_dir(&dir).unwrap();
        let mut n_files = 0;
        for tbdir in treebanks.flatten() {
            let Ok(files) = std::fs::read_dir(tbdir.path()) else { continue };
            for f in files.flatten() {
                let p = f.path();
                if p.extension().and_then(|e| e.to_str()) != Some("conllu") {
                    continue;
                }
                let original = std::fs::read(&p).unwrap();
                let tb = read_path(&p, &opts()).unwrap();
                assert!(to_string(&tb).as_bytes() == original.as_slice(), "{}", p.display());
                let (got, want) = rewritten_and_written(&original, 700, 7, &opts());
                assert!(got == want, "batch text of {}", p.display());
                let (got, want) = rewritten_in_part(&original, 700, 7, &opts());
                assert!(got == want, "batch text of {}, read in part", p.display());
                n_files += 1;
            }
        }
        eprintln!("{n_files} UD files round-tripped");
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Characters for generated column values: letters, accents, punctuation
        /// and spaces (allowed inside FORM and LEMMA), never tab or newline.
        fn value() -> impl Strategy<Value = String> {
            prop_oneof![Just("_".to_string()), "[a-zA-Zé日.,:=|#-]{1,6}", "[a-z]{1,3} [a-z]{1,3}",]
        }

        /// A MISC value, at times with margins (which a parse drops).
        fn misc() -> impl Strategy<Value = String> {
            prop_oneof![value(), "(A=1\\|)?Margin=[0-9.]{0,4}(\\|Margin=x)?(\\|B)?"]
        }

        /// A random valid sentence in canonical text form: a random tree (each
        /// word attached to an earlier-placed word of a random order), optional
        /// comments, multiword ranges and empty nodes.
        fn sentence() -> impl Strategy<Value = String> {
            (1usize..9)
                .prop_flat_map(|n| {
                    (
                        Just(n),
                        Just(()).prop_perturb(move |_, mut rng| {
                            let mut order: Vec<usize> = (1..=n).collect();
                            for i in (1..n).rev() {
                                order.swap(i, rng.random_range(0..=i));
                            }
                            let mut heads = vec![0usize; n + 1];
                            for k in 1..n {
                                heads[order[k]] = order[rng.random_range(0..k)];
                            }
                            heads
                        }),
                        proptest::collection::vec((value(), value(), value(), misc()), n),
                        proptest::collection::vec("[a-z ]{0,8}", 0..3),
                        proptest::collection::vec(0usize..4, n),
                    )
                })
                .prop_map(|(n, heads, cols, comments, extras)| {
                    let mut s = String::new();
                    for c in comments {
                        s += &format!("# {c}\n");
                    }
                    let mut range_end = 0;
                    for i in 1..=n {
                        let (form, lemma, feats, misc) = &cols[i - 1];
                        if extras[i - 1] == 1 && i < n && i > range_end {
                            s += &format!("{i}-{}\t{form}{lemma}\t_\t_\t_\t_\t_\t_\t_\t_\n", i + 1);
                            range_end = i + 1;
                        }
                        let h = heads[i];
                        s += &format!("{i}\t{form}\t{lemma}\tX\t_\t{feats}\t{h}\tdep\t{h}:dep\t{misc}\n");
                        if extras[i - 1] >= 2 {
                            for m in 1..extras[i - 1] {
                                s += &format!("{i}.{m}\t{form}\t_\t_\t_\t_\t_\t_\t{i}:x\t_\n");
                            }
                        }
                    }
                    s + "\n"
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn round_trip(sents in proptest::collection::vec(sentence(), 1..5)) {
                let text = sents.concat();
                let tb = read_str(&text, &ReadOptions::default());
                prop_assert!(tb.is_ok(), "{:?}\n{}", tb.err(), text);
                prop_assert_eq!(to_string(&tb.unwrap()), text);
            }

            #[test]
            fn batch_text_rewrite_is_to_bytes(
                sents in proptest::collection::vec(sentence(), 1..5),
                crlf in any::<bool>(),
                n in 1usize..4,
                seed in any::<u64>(),
            ) {
                let text = sents.concat();
                let text = if crlf { text.replace('\n', "\r\n") } else { text };
                let (got, want) = rewritten_and_written(text.as_bytes(), n, seed, &ReadOptions::default());
                prop_assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
                let (got, want) = rewritten_in_part(text.as_bytes(), n, seed, &ReadOptions::default());
                prop_assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap());
            }

            #[test]
            fn mutated_sample_never_panics(
                edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), any::<bool>()), 1..12),
            ) {
                let mut bytes = SAMPLE.as_bytes().to_vec();
                for (at, b, insert) in edits {
                    let i = at.index(bytes.len());
                    if insert { bytes.insert(i, b) } else { bytes[i] = b }
                }
                let _ = read_bytes(&bytes, "m", &ReadOptions::default());
            }

            #[test]
            fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
                let _ = read_bytes(&bytes, "r", &ReadOptions::default());
            }

            #[test]
            fn mutated_text_never_panics(
                sents in proptest::collection::vec(sentence(), 1..4),
                edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, prop::sample::select(b"\t\n0123456789-._#\xff\xc3 ".to_vec())), 1..6),
                multi in any::<bool>(),
            ) {
                let mut bytes = sents.concat().into_bytes();
                for (at, op, b) in edits {
                    if bytes.is_empty() { break; }
                    let i = at.index(bytes.len());
                    match op {
                        0 => bytes[i] = b,
                        1 => bytes.insert(i, b),
                        _ => { bytes.remove(i); }
                    }
                }
                let o = ReadOptions { multiple_roots: multi, allow_blank_heads: !multi };
                if let Ok(tb) = read_bytes(&bytes, "m", &o) {
                    // Whatever is accepted can be written and read again to the same text.
                    let text = to_string(&tb);
                    let again = read_str(&text, &o);
                    prop_assert!(again.is_ok(), "{:?}", again.err());
                    prop_assert_eq!(to_string(&again.unwrap()), text);
                }
            }
        }
    }

    /// `scan_line` as a byte loop would find it: the line's LF (or the end) and its tabs.
    fn scan_naive(b: &[u8], from: usize) -> (usize, Vec<usize>) {
        let lf = b[from..].iter().position(|&c| c == b'\n').map_or(b.len(), |k| from + k);
        (lf, (from..lf).filter(|&k| b[k] == b'\t').collect())
    }

    fn scan(b: &[u8], from: usize) -> (usize, Vec<usize>) {
        let mut tabs = [0; N_COLUMNS];
        let (lf, n) = scan_line(b, from, &mut tabs);
        (lf, tabs[..n.min(N_COLUMNS)].to_vec())
    }

    #[test]
    fn a_model_file_is_refused_as_one() {
        let mut model = crate::io::model::MAGIC.to_vec();
        model.extend_from_slice(b"\x05\x00\x00\x00\x09\x00\x00\x00arc-eager\n1\tx");
        let err = read_bytes(&model, "m.depfs", &ReadOptions::default()).unwrap_err().to_string();
        assert!(err.contains("m.depfs:1: a depfs model file, not a CoNLL-U treebank"), "{err}");
        // Only at the start: a word spelt so further on is a word.
        let tb = read_str("1\tDEPFSMDL\t_\t_\t_\t_\t0\troot\t_\t_\n\n", &ReadOptions::default());
        assert_eq!(tb.unwrap().n_words(), 1);
    }

    /// A source without line ends is refused once a line passes the cap, naming the
    /// line; it grew the buffer without bound. O(cap).
    #[test]
    fn a_line_without_end_is_refused_at_the_cap() {
        let zeros = std::io::repeat(0).take((MAX_LINE_BYTES + 3 * BLOCK) as u64);
        let source = std::io::BufReader::new(zeros);
        let err = read(source, "zero", &ReadOptions::default()).unwrap_err().to_string();
        assert!(err.contains("zero:1: a line of more than 64 MiB"), "{err}");
        let text =
            format!("{}\n{}", "1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n", "x".repeat(MAX_LINE_BYTES + 2 * BLOCK));
        let err = read(text.as_bytes(), "t", &ReadOptions::default()).unwrap_err().to_string();
        assert!(err.contains("t:3: a line of more than 64 MiB"), "{err}");
    }

    #[test]
    fn lines_are_split_at_every_tab_and_lf() {
        let ten = ["1", "a", "b", "c", "d", "e", "f", "g", "h", "i"].join("\t");
        let text = format!("{ten}\n\t\té\t\n\x08\x0b\tx\x09\x0a\ntail\twith no lf");
        let b = text.as_bytes();
        let mut from = 0;
        let mut lines = 0;
        while from <= b.len() {
            let (lf, tabs) = scan(b, from);
            assert_eq!((lf, tabs), scan_naive(b, from), "line at {from}");
            from = lf + 1;
            lines += 1;
        }
        assert_eq!(lines, 5);
        // More than ten columns: the first ten tabs are given, all are counted.
        let many = "x\t".repeat(14);
        let mut tabs = [0; N_COLUMNS];
        assert_eq!(scan_line(many.as_bytes(), 0, &mut tabs), (many.len(), 14));
        assert_eq!(tabs, [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
    }

    proptest::proptest! {
        #[test]
        fn scan_line_is_a_byte_loop(
            bytes in proptest::collection::vec(proptest::sample::select(b"\t\n\r\x00\x08\x0b\x0a\x7f\x80\x89\x8a\xffab".to_vec()), 0..80),
            from in 0usize..80,
        ) {
            let from = from.min(bytes.len());
            let (lf, tabs) = scan(&bytes, from);
            let (lf2, tabs2) = scan_naive(&bytes, from);
            proptest::prop_assert_eq!(lf, lf2);
            proptest::prop_assert_eq!(&tabs[..], &tabs2[..tabs2.len().min(N_COLUMNS)]);
        }
    }

    /// Every batch of `text` (batches of `n`) with its heads and labels replaced by a
    /// made-up parse (`seed`): the rewrite of its text and `to_bytes` of the parse.
    fn rewritten_and_written(text: &[u8], n: usize, seed: u64, o: &ReadOptions) -> (Vec<u8>, Vec<u8>) {
        let mut b = Batches::plain(text, "t.conllu", o).keeping_text();
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let mut rng = crate::util::Rng::new(seed);
        while let Some(mut tb) = b.next_batch(n).unwrap() {
            let t = b.take_text().expect("kept");
            assert!(b.take_text().is_none(), "taken once");
            let new_label = tb.vocabs.deprel.intern("made:up");
            tb.clear_margins(); // as a parse does
            for i in 0..tb.n_words() {
                tb.words.head[i] = match rng.below(4) {
                    0 => NO_HEAD,
                    1 => 0,
                    _ => rng.below(1200) as i32,
                };
                if rng.below(2) == 0 {
                    tb.words.deprel[i] = if rng.below(2) == 0 { new_label } else { 0 };
                }
            }
            got.extend(t.rewrite(&tb).expect("same shape"));
            want.extend(to_bytes(&tb));
        }
        (got, want)
    }

    /// Every batch of `text` (batches of `n`) read twice, whole and with only the
    /// columns a parse reads, given the same made-up parse (`seed`, every DEPREL set as
    /// a parser does): the rewrite of the part-read batch's text, and `to_bytes` of the
    /// whole one's.
    fn rewritten_in_part(text: &[u8], n: usize, seed: u64, o: &ReadOptions) -> (Vec<u8>, Vec<u8>) {
        let mut whole = Batches::plain(text, "t.conllu", o);
        let mut part = Batches::plain(text, "t.conllu", o).keeping_text();
        part.set_columns(Columns::named(&["FORM", "LEMMA", "UPOS", "XPOS", "FEATS"]).unwrap());
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let mut rng = crate::util::Rng::new(seed);
        while let Some(mut a) = whole.next_batch(n).unwrap() {
            let mut b = part.next_batch(n).unwrap().expect("as many batches");
            let t = part.take_text().expect("kept");
            assert!(b.partial && !a.partial);
            assert!(b.words.deps.iter().chain(&b.words.misc).chain(&b.words.deprel).all(|&d| d == 0));
            assert!(b.sentences.iter().all(|s| s.comments.is_empty()));
            assert_eq!((&a.words.form, &a.words.feats), (&b.words.form, &b.words.feats));
            a.clear_margins(); // as a parse does
            for i in 0..a.n_words() {
                let h = rng.below(1200) as i32 - 1;
                let label = ["made:up", "_", "root"][rng.below(3) as usize];
                for tb in [&mut a, &mut b] {
                    tb.words.head[i] = h;
                    tb.words.deprel[i] = tb.vocabs.deprel.intern(label);
                }
            }
            got.extend(t.rewrite(&b).expect("same shape"));
            want.extend(to_bytes(&a));
        }
        assert!(part.next_batch(n).unwrap().is_none());
        (got, want)
    }

    #[test]
    fn a_batch_text_rewrites_a_parse_as_to_bytes_writes_it() {
        // Non-canonical input (BOM, CRLF, extra blank lines, no final blank line), extras,
        // blank heads: the rewrite is the canonical form, as the writer's.
        let text = format!(
            "\u{feff}{}\r\n\n\n# c\r\n1\tHi\thi\tINTJ\tUH\t_\t_\t_\t_\tMargin=2.5\r\n\
             2\tyou\t_\tX\t_\t_\t1\tx\t_\tA=1|Margin=0.1000|B=2",
            SAMPLE.trim_end()
        );
        let o = ReadOptions { allow_blank_heads: true, ..ReadOptions::default() };
        for n in [1, 2, 5] {
            for seed in 0..4 {
                let (got, want) = rewritten_and_written(text.as_bytes(), n, seed, &o);
                assert_eq!(
                    String::from_utf8(got).unwrap(),
                    String::from_utf8(want).unwrap(),
                    "n {n} seed {seed}"
                );
                let (got, want) = rewritten_in_part(text.as_bytes(), n, seed, &o);
                assert_eq!(String::from_utf8(got).unwrap(), String::from_utf8(want).unwrap(), "in part");
            }
        }
        // The input's margins are dropped, and only they.
        let (got, _) = rewritten_and_written(text.as_bytes(), 2, 0, &o);
        let got = String::from_utf8(got).unwrap();
        assert!(!got.contains("Margin=") && got.contains("\tA=1|B=2\n"), "{got}");
        // Another batch (other sentences or words) is not rewritten.
        let mut b = Batches::plain(text.as_bytes(), "t.conllu", &o).keeping_text();
        let first = b.next_batch(1).unwrap().unwrap();
        let t = b.take_text().unwrap();
        let second = b.next_batch(1).unwrap().unwrap();
        assert!(t.rewrite(&first).is_some());
        assert!(t.rewrite(&second).is_none());
        // Without keeping_text there is none.
        let mut b = Batches::plain(text.as_bytes(), "t.conllu", &o);
        b.next_batch(1).unwrap();
        assert!(b.take_text().is_none());
    }

    #[test]
    fn a_read_interrupted_by_a_signal_is_retried() {
        // A source whose reads are each interrupted once (EINTR) before they give bytes:
        // the same treebank as from the bytes themselves.
        struct Interrupted<'a>(&'a [u8], bool);
        impl std::io::Read for Interrupted<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.1 = !self.1;
                if self.1 {
                    return Err(std::io::ErrorKind::Interrupted.into());
                }
                let n = buf.len().min(self.0.len()).min(7);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let source = std::io::BufReader::with_capacity(16, Interrupted(SAMPLE.as_bytes(), false));
        let mut b = Batches::plain(source, "t.conllu", &ReadOptions::default());
        let tb = b.next_batch(usize::MAX).unwrap().unwrap();
        assert_eq!(to_string(&tb), SAMPLE);
    }

    #[test]
    fn batches_are_the_whole_file_and_count_lines_from_its_start() {
        let text = "# a\n1\tx\t_\tX\t_\t_\t0\troot\t_\t_\n\n1\ty\t_\tX\t_\t_\t0\troot\t_\t_\n2\tz\t_\tX\t_\t_\t1\tdep\t_\t_\n\n1\tw\t_\tX\t_\t_\t0\troot\t_\t_\n\n";
        let whole = read_str(text, &ReadOptions::default()).unwrap();
        for n in [1, 2, 5] {
            let mut b = Batches::plain(text.as_bytes(), "t.conllu", &ReadOptions::default());
            let mut out = Vec::new();
            let mut sizes = Vec::new();
            while let Some(tb) = b.next_batch(n).unwrap() {
                sizes.push(tb.len());
                write(&tb, &mut out).unwrap();
            }
            let mut all = Vec::new();
            write(&whole, &mut all).unwrap();
            assert_eq!(out, all, "batches of {n}");
            assert_eq!(sizes.iter().sum::<usize>(), 3);
            assert!(sizes.iter().all(|&k| k <= n));
        }
        // An error in the third sentence names its line in the whole file.
        let bad = text.replace("1\tw\t_\tX\t_\t_\t0", "1\tw\t_\tX\t_\t_\t7");
        let mut b = Batches::plain(bad.as_bytes(), "t.conllu", &ReadOptions::default());
        assert!(b.next_batch(2).is_ok());
        let err = b.next_batch(2).unwrap_err().to_string();
        assert!(err.starts_with("t.conllu:7:"), "{err}");
    }
}
