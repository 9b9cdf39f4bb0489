//! Model files: one self-contained, versioned, checksummed container per model,
//! written atomically, holding one tagged [`Model`] (after the model enum of
//! huggingface/tokenizers: every kind behind one type, old files still read).
//!
//! Layout (little endian):
//! `b"DEPFSMDL"` | format version u32 | kind length u32 | kind (UTF-8, e.g. "graph")
//! | payload length u64 | CRC-32 of the payload u32 | payload (postcard-encoded serde value).
//! Version 4 payloads are a [`ModelFile`]: the input columns the model reads, then the
//! [`Model`] enum (new kinds — tagger, template subsets, policies, rerankers — are new
//! variants at its end, so every older file still decodes; a parser stored with the
//! tagger that tags its input is [`Model::WithTagger`], whose header kind is the
//! parser's, and [`load_model`] hands the two back apart). Version 3 payloads are the
//! bare graph or arc-eager struct named by the kind, and still load (and parse
//! byte-identically). A truncated, corrupted, foreign or unknown-version file gives one
//! `Error::Model`.

use crate::error::{Error, Result};
pub use crate::io::atomic::atomic_write;
use crate::Treebank;
#[cfg(test)]
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The first bytes of every model file (a CoNLL-U reader refuses a file that starts so).
pub(crate) const MAGIC: &[u8; 8] = b"DEPFSMDL";
/// The container version this build writes (5: training information beside the model;
/// 4: one tagged [`Model`] with its input columns; 3: arc-eager label rows per arc
/// direction; 2: 8-bit weights and template-free partial hashes).
pub const FORMAT_VERSION: u32 = 5;
/// The oldest version this build reads; older models must be retrained.
pub const OLDEST_READ: u32 = 3;

/// Every kind of model a depfs file can hold.
#[derive(Serialize, Deserialize)]
pub enum Model {
    Graph(crate::graph::stored::GraphFile),
    ArcEager(crate::transition::parser::StoredArcEager),
    Ensemble(crate::transition::local::StoredEnsemble),
    Tagger(crate::tagger::StoredTagger),
    ArcEagerDynamic(crate::transition::parser::StoredArcEagerDynamic),
    TaggerDynamic(crate::tagger::StoredTaggerDynamic),
    /// A parser with the tagger that tags its input first (`depfs train --tagger`).
    WithTagger(Box<WithTagger>),
    /// A graph parser with dynamic feature selection (He et al. 2013).
    GraphDynfs(Box<crate::graph::stored::GraphDynfsFile>),
    /// A tagger with line-local hashing (ordinary or prefix-margin).
    TaggerLines(crate::tagger::StoredTaggerLines),
    /// A tagger with a backward UPOS pass (line-local hashing).
    TaggerBidi(crate::tagger::StoredTaggerBidi),
    /// A graph parser with dynamic feature selection and settings the first variant
    /// lacks (a prune margin); a model without them is written as [`Model::GraphDynfs`].
    GraphDynfsPruned(Box<crate::graph::stored::GraphDynfsPrunedFile>),
    /// A tagger with the case rule the earlier variants lack (line-local hashing, with or
    /// without a backward pass).
    TaggerCased(crate::tagger::StoredTaggerCased),
    /// A graph parser with dynamic feature selection and a labeler stop rule (and, if
    /// any, a prune margin); a model without the stop rule is written as before.
    GraphDynfsLabeled(Box<crate::graph::stored::GraphDynfsLabeledFile>),
    /// An arc-eager cascade: a first stage of the first k templates that settles the
    /// decisions it is sure of by a margin, the full model for the rest.
    ArcEagerCascade(Box<crate::transition::parser::StoredArcEagerCascade>),
    /// A tagger with a word-cluster table (otherwise as [`Model::TaggerCased`]).
    TaggerClusters(crate::tagger::StoredTaggerClusters),
    /// An arc-eager parser (ordinary, dynamic or a cascade) with a word-cluster table.
    ArcEagerClusters(Box<crate::transition::parser::StoredArcEagerClusters>),
    /// A tagger with candidate rules (FEATS by XPOS, known lemmas; otherwise as
    /// [`Model::TaggerClusters`], whose table it may lack).
    TaggerRules(Box<crate::tagger::StoredTaggerRules>),
    /// [`Model::GraphDynfsLabeled`] whose labeler stop has a label dictionary.
    GraphDynfsLabelDict(Box<crate::graph::stored::GraphDynfsLabelDictFile>),
    /// A DynFS graph model (any variant above) whose policy has lexical weights.
    GraphDynfsLex(Box<crate::graph::stored::GraphDynfsLexFile>),
    /// [`Model::GraphDynfsLabeled`] or [`Model::GraphDynfsLabelDict`] whose labeler stop
    /// adds a prefix-trained labeler's weights (inside [`Model::GraphDynfsLex`], if any).
    GraphDynfsLabelWeights(Box<crate::graph::stored::GraphDynfsLabelWeightsFile>),
    /// A DynFS graph model (any variant above, [`Model::GraphDynfsLex`] included) with a
    /// tree margin ([`crate::graph::Dynfs::tree_margin`]).
    GraphDynfsTreeMargin(Box<crate::graph::stored::GraphDynfsTreeMarginFile>),
}

/// Index of [`Model::WithTagger`] among the variants (postcard writes it as a varint
/// before the variant's fields); [`embedded_tagger`] peeks at it.
const WITH_TAGGER_VARIANT: u32 = 6;

/// A parser model and the tagger that tags its input: the file's kind is the parser's.
/// The tagger comes first, so that [`embedded_tagger`] decodes it without the parser.
#[derive(Serialize, Deserialize)]
pub struct WithTagger {
    /// The tagger with its own input columns and training information.
    pub tagger: ModelFile,
    /// A graph or arc-eager model (never a tagger, never another `WithTagger`).
    pub parser: Model,
}

impl Model {
    /// The kind's name, as written in the container header.
    pub fn kind(&self) -> &'static str {
        match self {
            Model::Graph(_) => "graph",
            Model::ArcEager(_) => "arc-eager",
            Model::Ensemble(_) => "ensemble",
            Model::Tagger(_) => "tagger",
            // A dynamic model is an arc-eager parser to every reader of the header.
            Model::ArcEagerDynamic(_) | Model::ArcEagerCascade(_) | Model::ArcEagerClusters(_) => "arc-eager",
            Model::TaggerDynamic(_) => "tagger",
            Model::WithTagger(w) => w.parser.kind(),
            Model::GraphDynfs(_)
            | Model::GraphDynfsPruned(_)
            | Model::GraphDynfsLabeled(_)
            | Model::GraphDynfsLabelDict(_)
            | Model::GraphDynfsLex(_)
            | Model::GraphDynfsLabelWeights(_)
            | Model::GraphDynfsTreeMargin(_) => "graph",
            Model::TaggerLines(_)
            | Model::TaggerBidi(_)
            | Model::TaggerCased(_)
            | Model::TaggerClusters(_)
            | Model::TaggerRules(_) => "tagger",
        }
    }

    /// Whether this is a tagger of any variant (a parser with a tagger inside is not):
    /// the variants [`Model::kind`] names "tagger".
    pub fn is_tagger(&self) -> bool {
        !matches!(self, Model::WithTagger(_)) && self.kind() == "tagger"
    }
}

/// A version-5 payload.
#[derive(Serialize, Deserialize)]
pub struct ModelFile {
    /// CoNLL-U columns the model needs (of FORM, LEMMA, UPOS, XPOS, FEATS).
    pub inputs: Vec<String>,
    /// Free-form training information (JSON written by the Python layer: training
    /// file and size, epochs with dev scores, options); empty when unknown.
    pub info: String,
    pub model: Model,
}

/// A version-4 payload (no training information).
#[derive(Serialize, Deserialize)]
pub(crate) struct ModelFileV4 {
    pub(crate) inputs: Vec<String>,
    pub(crate) model: Model,
}

/// A model file as read: its container version and payload. A parser stored with its
/// tagger comes apart: `model` is the parser, `tagger` the tagger's file.
pub struct Loaded {
    pub version: u32,
    pub inputs: Vec<String>,
    pub info: String,
    pub model: Model,
    pub tagger: Option<ModelFile>,
}

/// The CoNLL-U columns the templates of `sets` read, in column order.
pub fn input_columns(sets: &[&crate::templates::TemplateSet]) -> Vec<String> {
    use crate::templates::{Atom, Attr, NodeAttr};
    let column = |a: &Attr| match a {
        a if a.from_form() => 0,
        Attr::Lemma => 1,
        Attr::Upos => 2,
        Attr::Xpos => 3,
        _ => 4,
    };
    let mut used = [false; 5];
    for t in sets.iter().flat_map(|s| &s.templates) {
        for a in &t.atoms {
            match a {
                Atom::ArcWord { attr, .. }
                | Atom::ConfigWord { attr: NodeAttr::Word(attr), .. }
                | Atom::TokenWord { attr, .. } => used[column(attr)] = true,
                _ => {}
            }
        }
    }
    ["FORM", "LEMMA", "UPOS", "XPOS", "FEATS"]
        .iter()
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|(c, _)| c.to_string())
        .collect()
}

/// Below this many words a column is empty only when it is `_` on every word: in a
/// sentence or two, "most words" is a few words (the two words of a `goeswith` pair,
/// one without a lemma or features), so whether a batch is refused would depend on
/// the batch size.
pub const SHARE_WORDS: usize = 100;

/// The columns of `tb` that carry values: not `_` on at least half of the words (on
/// fewer than [`SHARE_WORDS`] words: on one word at least). FORM always does: in UD a
/// FORM of `_` is the underscore itself, never a blank. So is a LEMMA `_` beside a FORM
/// `_`; elsewhere LEMMA `_` is a blank. O(words).
pub fn filled_columns(tb: &Treebank) -> Vec<String> {
    let w = &tb.words;
    let v = &tb.vocabs;
    let form_blank = v.form.get("_");
    let lemma_blank = v.lemma.get("_");
    let blank_lemmas = w
        .lemma
        .iter()
        .zip(&w.form)
        .filter(|&(&l, &f)| Some(l) == lemma_blank && Some(f) != form_blank)
        .count();
    let blanks = |ids: &[u32], vocab: &crate::treebank::Vocab| {
        let blank = vocab.get("_");
        ids.iter().filter(|&&i| Some(i) == blank).count()
    };
    [
        ("FORM", 0),
        ("LEMMA", blank_lemmas),
        ("UPOS", blanks(&w.upos, &v.upos)),
        ("XPOS", blanks(&w.xpos, &v.xpos)),
        ("FEATS", blanks(&w.feats, &v.feats)),
    ]
    .into_iter()
    .filter(|&(_, empty)| {
        let n = w.form.len();
        2 * empty < n.max(1) || (n < SHARE_WORDS && empty < n)
    })
    .map(|(c, _)| c.to_string())
    .collect()
}

/// The sentences of `tb` (indices) none of whose words has a UPOS: untagged sentences,
/// which the share of [`filled_columns`] misses when the rest of the input is tagged (in
/// UD every word has a UPOS; `_` is none). O(words).
pub fn untagged_sentences(tb: &Treebank) -> Vec<usize> {
    // Id 0 is `_` in every vocabulary.
    tb.sentences
        .iter()
        .enumerate()
        .filter(|(_, m)| m.len > 0 && tb.words.upos[m.range()].iter().all(|&u| u == 0))
        .map(|(i, _)| i)
        .collect()
}

/// The columns a model needs at parse time: read by its templates and filled in the
/// treebank it was trained on.
pub fn needed_columns(sets: &[&crate::templates::TemplateSet], trained_on: &Treebank) -> Vec<String> {
    let filled = filled_columns(trained_on);
    input_columns(sets).into_iter().filter(|c| filled.contains(c)).collect()
}

/// The columns of `needed` that `tb` leaves empty (`_` on more than half of its words).
pub fn missing_columns(tb: &Treebank, needed: &[String]) -> Vec<String> {
    let filled = filled_columns(tb);
    needed.iter().filter(|c| !filled.contains(c)).cloned().collect()
}

/// Writes `model` (current version) atomically, with its input columns and training
/// information.
pub fn save_model(path: &Path, inputs: Vec<String>, info: String, model: Model) -> Result<()> {
    let kind = model.kind();
    save(path, kind, &ModelFile { inputs, info, model })
}

/// The error for a file that holds another kind of model than `want`.
pub fn wrong_kind(path: &Path, got: &Model, want: &str) -> Error {
    model_err(path, format!("holds a {:?} model, expected {want:?}", got.kind()))
}

/// Reads any model file this build knows: version 5 or 4, or a version-3 graph or
/// arc-eager file (its `inputs` are then empty: the caller takes its templates').
/// The file's bytes are its page-cache pages, mapped ([`with_file_bytes`]), and the
/// weights are copied once, out of them into the model (what `depfs parse` waits for
/// before its first batch).
pub fn load_model(path: &Path) -> Result<Loaded> {
    with_file_bytes(path, |bytes| decode(path, container_of(path, bytes)?))
}

/// [`load_model`] of a file's bytes held in memory; `path` names the file in messages.
pub fn load_model_bytes(path: &Path, bytes: &[u8]) -> Result<Loaded> {
    decode(path, container_of(path, bytes)?)
}

/// The payload of a checked container.
fn decode(path: &Path, c: Container<'_>) -> Result<Loaded> {
    // The weights are copied out of the payload, most of its size: a process without
    // room for them is told so here rather than aborted in the middle of the copy.
    room_for(path, c.payload.len(), &mut Vec::new())?;
    let decode_err = |e: postcard::Error| model_err(path, format!("corrupted payload: {e}"));
    if c.version >= 4 {
        let f: ModelFile = if c.version >= 5 {
            postcard::from_bytes(c.payload).map_err(decode_err)?
        } else {
            let v4: ModelFileV4 = postcard::from_bytes(c.payload).map_err(decode_err)?;
            ModelFile { inputs: v4.inputs, info: String::new(), model: v4.model }
        };
        if f.model.kind() != c.kind {
            return Err(model_err(
                path,
                format!("header says {:?}, payload holds {:?}", c.kind, f.model.kind()),
            ));
        }
        let (model, tagger) = split_tagger(path, f.model)?;
        return Ok(Loaded { version: c.version, inputs: f.inputs, info: f.info, model, tagger });
    }
    let model = match c.kind.as_str() {
        "graph" => Model::Graph(postcard::from_bytes(c.payload).map_err(decode_err)?),
        "arc-eager" => Model::ArcEager(postcard::from_bytes(c.payload).map_err(decode_err)?),
        other => {
            return Err(model_err(
                path,
                format!("unknown model kind {other:?} in a version {} file", c.version),
            ))
        }
    };
    Ok(Loaded { version: c.version, inputs: Vec::new(), info: String::new(), model, tagger: None })
}

/// `parser` with `tagger` inside when there is one (the kind stays the parser's).
pub fn with_tagger(parser: Model, tagger: Option<ModelFile>) -> Model {
    match tagger {
        None => parser,
        Some(tagger) => Model::WithTagger(Box::new(WithTagger { tagger, parser })),
    }
}

/// A model and the tagger stored with it; refuses a combination no depfs writes.
fn split_tagger(path: &Path, model: Model) -> Result<(Model, Option<ModelFile>)> {
    let Model::WithTagger(w) = model else { return Ok((model, None)) };
    let WithTagger { tagger, parser } = *w;
    if !matches!(
        parser,
        Model::Graph(_)
            | Model::GraphDynfs(_)
            | Model::GraphDynfsPruned(_)
            | Model::GraphDynfsLabeled(_)
            | Model::GraphDynfsLabelDict(_)
            | Model::GraphDynfsLex(_)
            | Model::GraphDynfsLabelWeights(_)
            | Model::GraphDynfsTreeMargin(_)
            | Model::ArcEager(_)
            | Model::ArcEagerDynamic(_)
            | Model::ArcEagerCascade(_)
            | Model::ArcEagerClusters(_)
    ) {
        return Err(model_err(path, format!("a {:?} model cannot hold a tagger", parser.kind())));
    }
    if !tagger.model.is_tagger() {
        return Err(model_err(path, format!("the tagger inside holds a {:?} model", tagger.model.kind())));
    }
    Ok((parser, Some(tagger)))
}

/// The tagger stored inside the parser model file at `path`, if any (checksum checked).
/// Only the payload's head and the tagger are decoded, never the parser's weights.
pub fn embedded_tagger(path: &Path) -> Result<Option<ModelFile>> {
    #[derive(Deserialize)]
    struct Head {
        _inputs: Vec<String>,
        _info: String,
        variant: u32,
    }
    /// A [`ModelFile`] holding a [`Model::WithTagger`], up to its tagger.
    #[derive(Deserialize)]
    struct TaggerFirst {
        _inputs: Vec<String>,
        _info: String,
        _variant: u32,
        tagger: ModelFile,
    }
    with_file_bytes(path, |bytes| {
        let c = container_of(path, bytes)?;
        if c.version < 5 || c.kind == "tagger" {
            return Ok(None);
        }
        match postcard::take_from_bytes::<Head>(c.payload) {
            Ok((h, _)) if h.variant == WITH_TAGGER_VARIANT => {}
            // Another model, or a payload that does not decode (reported by its loader).
            _ => return Ok(None),
        }
        let (head, _) = postcard::take_from_bytes::<TaggerFirst>(c.payload)
            .map_err(|e| model_err(path, format!("corrupted payload: {e}")))?;
        if !head.tagger.model.is_tagger() {
            return Err(model_err(
                path,
                format!("the tagger inside holds a {:?} model", head.tagger.model.kind()),
            ));
        }
        Ok(Some(head.tagger))
    })
}

fn model_err(path: &Path, msg: impl Into<String>) -> Error {
    Error::Model { file: path.display().to_string(), msg: msg.into() }
}

/// Encodes `value` as a payload of the given kind and writes it atomically.
fn save<T: Serialize>(path: &Path, kind: &str, value: &T) -> Result<()> {
    save_version(path, FORMAT_VERSION, kind, value)
}

/// [`save`] under another container version (tests write older files with it).
pub(crate) fn save_version<T: Serialize>(path: &Path, version: u32, kind: &str, value: &T) -> Result<()> {
    let payload = postcard::to_stdvec(value).map_err(|e| model_err(path, format!("cannot encode: {e}")))?;
    let head = header(version, kind, &payload);
    atomic_write(path, |w| {
        w.write_all(&head)?;
        w.write_all(&payload)
    })
}

/// The bytes of a model file before `payload`: magic, `version`, `kind`, the payload's
/// length and checksum.
pub(crate) fn header(version: u32, kind: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(kind.len() + 28);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(kind.len() as u32).to_le_bytes());
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out
}

/// A checked container: its version, kind and payload bytes (borrowed from the file's).
struct Container<'a> {
    version: u32,
    kind: String,
    payload: &'a [u8],
}

/// Takes `n` bytes from the front of `rest` or reports a truncated file.
fn take<'a>(path: &Path, rest: &mut &'a [u8], n: usize, what: &str) -> Result<&'a [u8]> {
    if rest.len() < n {
        return Err(model_err(path, format!("truncated file: {what} is cut off")));
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Ok(head)
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let io_err = |e: std::io::Error| Error::io(&path.display().to_string(), &e);
    let mut file = std::fs::File::open(path).map_err(io_err)?;
    let size = file.metadata().map_or(0, |m| m.len() as usize);
    let mut bytes = Vec::new();
    room_for(path, size, &mut bytes)?;
    file.read_to_end(&mut bytes).map_err(io_err)?;
    Ok(bytes)
}

/// Reserves `n` bytes in `v`, or says that the process has no room for the model: under
/// a memory limit (`ulimit -v`, a cluster's `h_vmem`) an allocation that fails would
/// abort the process instead. O(1).
fn room_for(path: &Path, n: usize, v: &mut Vec<u8>) -> Result<()> {
    v.try_reserve_exact(n).map_err(|_| {
        let mib = n.div_ceil(1 << 20);
        model_err(
            path,
            format!("not enough memory to load it ({mib} MiB): is a memory limit set (ulimit -v)?"),
        )
    })
}

/// `f` of a model file's bytes, read through a read-only mapping of the file: its pages
/// are the page cache's own, where a read copied them into fresh memory first, whose
/// page faults and zeroing were most of a load (a 58 MB model: 24–30 ms to load
/// against 60–78, medians of 12 fresh processes, two runs; `depfs parse` waits for it
/// before its first batch). The bytes are checked (CRC) and copied out by `f` before the mapping ends.
/// A file that cannot be mapped (a pipe, an empty file) is read instead.
///
/// A mapping sees the file as it is: depfs replaces files whole (a new file renamed
/// over the old, `io::atomic`), which leaves a mapped one intact, but another program
/// that cut the file short while it loads would stop this process (SIGBUS) where a read
/// would have reported a truncated file.
fn with_file_bytes<T>(path: &Path, f: impl FnOnce(&[u8]) -> Result<T>) -> Result<T> {
    let io_err = |e: std::io::Error| Error::io(&path.display().to_string(), &e);
    let file = std::fs::File::open(path).map_err(io_err)?;
    let is_file = file.metadata().is_ok_and(|m| m.is_file() && m.len() > 0);
    // The magic bytes first: a large file that is no model (a treebank given as MODEL,
    // a 10 GB file) is refused at once, not after mapping and reading it all.
    #[cfg(unix)]
    if is_file {
        use std::os::unix::fs::FileExt;
        let mut head = [0u8; MAGIC.len()];
        let n = file.read_at(&mut head, 0).map_err(io_err)?;
        if !MAGIC.starts_with(&head[..n]) {
            return Err(model_err(path, "not a depfs model file (bad magic bytes)"));
        }
    }
    // SAFETY: the mapping is read-only, read only inside `f`, and dropped when `f`
    // returns; see above for a file changed meanwhile by another program.
    #[allow(unsafe_code)]
    let mapped = is_file.then(|| unsafe { memmap2::MmapOptions::new().populate().map(&file) });
    match mapped {
        Some(Ok(map)) => f(&map),
        _ => f(&read_file(path)?),
    }
}

/// Four little-endian bytes from the front of `rest` (`what` names them if cut off).
fn u32_at(path: &Path, rest: &mut &[u8], what: &str) -> Result<u32> {
    let b = take(path, rest, 4, what)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The format version and the model kind at the front of a file's bytes, taken off
/// `rest`, checked.
fn header_of(path: &Path, rest: &mut &[u8]) -> Result<(u32, String)> {
    if take(path, rest, MAGIC.len(), "the header").ok() != Some(MAGIC.as_slice()) {
        return Err(model_err(path, "not a depfs model file (bad magic bytes)"));
    }
    let version = u32_at(path, rest, "the version")?;
    if !(OLDEST_READ..=FORMAT_VERSION).contains(&version) {
        return Err(model_err(
            path,
            format!("model file format version {version} is not supported (this depfs reads versions {OLDEST_READ} to {FORMAT_VERSION})"),
        ));
    }
    let kind_len = u32_at(path, rest, "the model kind")? as usize;
    let kind = std::str::from_utf8(take(path, rest, kind_len, "the model kind")?)
        .map_err(|_| model_err(path, "corrupted file: model kind is not UTF-8"))?
        .to_string();
    Ok((version, kind))
}

/// The container in a file's bytes, checked; `path` names the file in messages.
fn container_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<Container<'a>> {
    let mut rest: &[u8] = bytes;
    let (version, kind) = header_of(path, &mut rest)?;
    let len_bytes = take(path, &mut rest, 8, "the payload length")?;
    let payload_len = u64::from_le_bytes(len_bytes.try_into().unwrap_or([0; 8]));
    let crc = u32_at(path, &mut rest, "the checksum")?;
    if (rest.len() as u64) < payload_len {
        return Err(model_err(
            path,
            format!("truncated file: payload has {} of {payload_len} bytes", rest.len()),
        ));
    }
    if (rest.len() as u64) > payload_len {
        return Err(model_err(path, "corrupted file: trailing bytes after the payload"));
    }
    if crc32fast::hash(rest) != crc {
        return Err(model_err(path, "corrupted file: checksum mismatch"));
    }
    Ok(Container { version, kind, payload: rest })
}

/// The kind of model a file holds ("graph", "arc-eager", ...), after checking the whole file.
pub fn peek_kind(path: &Path) -> Result<String> {
    Ok(peek(path)?.1)
}

/// Bytes of a file read for its header by [`header_kind`]: the header of any file this
/// build writes is a few dozen.
const HEADER_READ: u64 = 1 << 12;

/// The kind of model a file's header names, the header checked, the rest of the file
/// neither read nor checked (its load checks it): what a command needs to know before
/// it starts loading the model beside its other work. [`peek_kind`] read and checked a
/// whole file first: 60 ms of a parse's start for a 58 MB model, on one core. A header
/// longer than [`HEADER_READ`] bytes is corrupted: the whole file is checked then, for
/// the error [`peek_kind`] gives.
pub fn header_kind(path: &Path) -> Result<String> {
    use std::io::Read;
    let io_err = |e: std::io::Error| Error::io(&path.display().to_string(), &e);
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(HEADER_READ).read_to_end(&mut bytes)).map_err(io_err)?;
    match header_of(path, &mut bytes.as_slice()) {
        Err(_) if bytes.len() as u64 == HEADER_READ => peek_kind(path),
        got => got.map(|(_, kind)| kind),
    }
}

/// The container version and kind of a model file (checksum checked).
pub fn peek(path: &Path) -> Result<(u32, String)> {
    with_file_bytes(path, |bytes| container_of(path, bytes).map(|c| (c.version, c.kind)))
}

/// The payload of a container of kind `kind`, decoded as `T`.
#[cfg(test)]
fn load<T: DeserializeOwned>(path: &Path, kind: &str) -> Result<T> {
    with_file_bytes(path, |bytes| {
        let c = container_of(path, bytes)?;
        if c.kind != kind {
            return Err(model_err(path, format!("holds a {:?} model, expected {kind:?}", c.kind)));
        }
        postcard::from_bytes(c.payload).map_err(|e| model_err(path, format!("corrupted payload: {e}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Toy {
        name: String,
        weights: Vec<f32>,
    }

    fn toy() -> Toy {
        Toy { name: "toy".into(), weights: vec![0.5, -1.25, 3.0] }
    }

    fn saved(dir: &tempfile::TempDir) -> std::path::PathBuf {
        let p = dir.path().join("m.depfs");
        save(&p, "toy", &toy()).unwrap();
        p
    }

    fn err_of(path: &Path) -> String {
        load::<Toy>(path, "toy").unwrap_err().to_string()
    }

    #[test]
    fn columns_read_filled_needed_and_missing() {
        use crate::templates::{Family, TemplateSet};
        use crate::WordStrs;
        let set = TemplateSet::parse("upos(h) & form(m)\nxpos(h)\nlemma(m+1) & dir", Family::Arc, 3).unwrap();
        assert_eq!(input_columns(&[&set]), ["FORM", "LEMMA", "UPOS", "XPOS"]);
        // FORM and UPOS filled, XPOS and LEMMA `_` (WordStrs::simple), FEATS `_`.
        let mut tb = Treebank::new();
        tb.push_sentence(
            &[WordStrs::simple("a", "X", 0, "root"), WordStrs::simple("b", "Y", 1, "x")],
            vec![],
        );
        assert_eq!(filled_columns(&tb), ["FORM", "UPOS"]);
        let needed = needed_columns(&[&set], &tb);
        assert_eq!(needed, ["FORM", "UPOS"]);
        let mut untagged = Treebank::new();
        untagged.push_sentence(
            &[WordStrs::simple("a", "_", 0, "root"), WordStrs::simple("b", "_", 1, "x")],
            vec![],
        );
        assert_eq!(missing_columns(&untagged, &needed), ["UPOS"]);
        assert!(missing_columns(&tb, &needed).is_empty());
    }

    #[test]
    fn an_underscore_form_is_a_word_not_a_blank() {
        use crate::WordStrs;
        // "_ _ _ x": FORM `_` is the underscore itself, and so is its LEMMA `_`; x's LEMMA
        // `_` is a blank (1 of 4 words: LEMMA filled).
        let word = |form, lemma, head| WordStrs { lemma, ..WordStrs::simple(form, "SYM", head, "dep") };
        let mut tb = Treebank::new();
        tb.push_sentence(
            &[word("_", "_", 0), word("_", "_", 1), word("_", "_", 1), word("x", "_", 1)],
            vec![],
        );
        assert_eq!(filled_columns(&tb), ["FORM", "LEMMA", "UPOS"]);
        // Blank lemmas of other words on half of them, over SHARE_WORDS words or more:
        // LEMMA empty, FORM never.
        let mut half = Treebank::new();
        for _ in 0..SHARE_WORDS / 4 {
            half.push_sentence(
                &[word("_", "_", 0), word("y", "y", 1), word("x", "_", 1), word("z", "_", 1)],
                vec![],
            );
        }
        assert_eq!(filled_columns(&half), ["FORM", "UPOS"]);
        let needed = ["FORM".to_string(), "LEMMA".to_string()];
        assert_eq!(missing_columns(&half, &needed), ["LEMMA"]);
        assert!(missing_columns(&tb, &needed).is_empty());
        // On fewer words, only a column blank on every word is empty: a sentence alone
        // (a batch of one) is not refused for its words without a lemma.
        let one = half.select(&[0]).unwrap();
        assert_eq!(filled_columns(&one), ["FORM", "LEMMA", "UPOS"]);
        let mut blank = Treebank::new();
        blank.push_sentence(&[word("y", "_", 0), word("x", "_", 1)], vec![]);
        assert_eq!(missing_columns(&blank, &needed), ["LEMMA"]);
    }

    #[test]
    fn round_trip_and_kind() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        assert_eq!(load::<Toy>(&p, "toy").unwrap(), toy());
        assert_eq!(peek_kind(&p).unwrap(), "toy");
        assert!(load::<Toy>(&p, "graph").unwrap_err().to_string().contains("expected \"graph\""));
    }

    #[test]
    fn truncated_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let bytes = std::fs::read(&p).unwrap();
        for cut in [3, 10, 20, bytes.len() - 1] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let msg = err_of(&p);
            assert!(msg.contains("m.depfs"), "{msg}");
            assert!(msg.contains("truncated") || msg.contains("bad magic"), "{msg}");
        }
    }

    #[test]
    fn flipped_byte_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let mut bytes = std::fs::read(&p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&p, &bytes).unwrap();
        assert!(err_of(&p).contains("checksum mismatch"));
    }

    /// A file's bytes are the same mapped (a model) or read (an empty file, which cannot
    /// be mapped); a missing file is an error naming it.
    #[test]
    fn file_bytes_mapped_or_read_are_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let empty = dir.path().join("empty.depfs");
        std::fs::write(&empty, b"").unwrap();
        for path in [&p, &empty] {
            let got = with_file_bytes(path, |b| Ok(b.to_vec())).unwrap();
            assert_eq!(got, std::fs::read(path).unwrap());
        }
        assert!(load_model(&empty).err().unwrap().to_string().contains("empty.depfs"));
        let missing = dir.path().join("none.depfs");
        assert!(with_file_bytes(&missing, |_| Ok(())).unwrap_err().to_string().contains("none.depfs"));
    }

    /// The header's kind is read without the payload: a file whose payload is damaged
    /// or cut off still names its kind (its load refuses it); a damaged header gives
    /// the error a whole-file check gives, a long file's included.
    #[test]
    fn header_kind_reads_the_header_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(header_kind(&p).unwrap(), "toy");
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 0x40;
        std::fs::write(&p, &flipped).unwrap();
        assert_eq!(header_kind(&p).unwrap(), "toy");
        assert!(peek_kind(&p).unwrap_err().to_string().contains("checksum mismatch"));
        std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(header_kind(&p).unwrap(), "toy");
        // Damaged headers: cut in the kind, a foreign file, a version this build does
        // not read, a kind's length past the bytes read for a header (in a long file).
        let mut long_kind = bytes.clone();
        long_kind[12..16].copy_from_slice(&5000u32.to_le_bytes());
        long_kind.resize(1 << 13, 0);
        let mut version = bytes.clone();
        version[8] = 9;
        for damaged in [&bytes[..14], b"# sent_id = 1\n1\tA\n", &version, &long_kind] {
            std::fs::write(&p, damaged).unwrap();
            let (got, whole) =
                (header_kind(&p).unwrap_err().to_string(), peek_kind(&p).unwrap_err().to_string());
            assert_eq!(got, whole);
            assert!(got.contains("m.depfs"), "{got}");
        }
        assert!(header_kind(&dir.path().join("none.depfs")).is_err());
    }

    #[test]
    fn wrong_version_and_foreign_file_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[8] = 9;
        std::fs::write(&p, &bytes).unwrap();
        assert!(err_of(&p).contains("version 9 is not supported"));
        std::fs::write(&p, b"# sent_id = 1\n1\tA\n").unwrap();
        assert!(err_of(&p).contains("not a depfs model file"));
    }

    #[test]
    fn failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = saved(&dir);
        let before = std::fs::read(&p).unwrap();
        let r = atomic_write(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(r.unwrap_err().to_string().contains("disk full"));
        assert_eq!(std::fs::read(&p).unwrap(), before);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "temp file left behind");
    }
}
