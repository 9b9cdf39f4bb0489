//! Python view of `depfs_core::Treebank`. Other binding modules take `&PyTreebank`
//! and read `.inner`; the Rust treebank never crosses into Python objects wholesale.
//! A `Sentence` is a view (treebank handle + index): its columns are built on access.

use std::path::PathBuf;

use depfs_core::io::conllu::{self, ReadOptions};
use depfs_core::treebank::Vocab;
use depfs_core::Treebank;
use numpy::PyArray1;
use pyo3::exceptions::{PyIndexError, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList, PySlice, PyString};

use crate::errors::IntoPyResult;
use std::sync::Arc;

/// A treebank held in Rust (interned, struct-of-arrays).
/// Runs `parse` on `treebank` with the GIL released and wraps the parsed copy: the one
/// shape of every model's `parse` binding.
pub fn parse_released(
    py: Python<'_>,
    treebank: PyRef<'_, PyTreebank>,
    parse: impl FnOnce(&Treebank) -> depfs_core::Result<Treebank> + Send,
) -> PyResult<PyTreebank> {
    let tb = Arc::clone(&treebank.inner);
    drop(treebank);
    let out = py.detach(move || parse(&tb)).py_err(py)?;
    Ok(PyTreebank::new(out))
}

/// A parse and its margins (empty when not asked for) as one treebank, the margins in
/// MISC.
pub fn with_margins(parsed: depfs_core::Result<(Treebank, Vec<f32>)>) -> depfs_core::Result<Treebank> {
    let (mut tb, margins) = parsed?;
    if !margins.is_empty() {
        tb.set_margins(&margins);
    }
    Ok(tb)
}

#[pyclass(name = "Treebank", module = "depfs._core")]
pub struct PyTreebank {
    /// Shared so that work done without the GIL holds the treebank by a refcount,
    /// not a copy.
    pub inner: Arc<Treebank>,
}

impl PyTreebank {
    pub fn new(treebank: Treebank) -> Self {
        PyTreebank { inner: Arc::new(treebank) }
    }
}

/// A treebank read with columns left out is written only through its batch's text.
fn writable(tb: &Treebank) -> PyResult<()> {
    if tb.partial {
        return Err(PyValueError::new_err(
            "this treebank was read with some columns left out (ConlluBatches.read_columns): \
             write it through its BatchText, or read it whole",
        ));
    }
    Ok(())
}

fn options(multiple_roots: bool, allow_blank_heads: bool) -> ReadOptions {
    ReadOptions { multiple_roots, allow_blank_heads }
}

/// Resolves a Python index (negative counts from the end) against `len`.
fn resolve_index(index: isize, len: usize, what: &str) -> PyResult<usize> {
    let i = if index < 0 { index + len as isize } else { index };
    if i < 0 || i as usize >= len {
        return Err(PyIndexError::new_err(format!("{what} index {index} out of range (len {len})")));
    }
    Ok(i as usize)
}

/// A sentence index from Python: an integer (numpy's too) resolved against `len`. A bool
/// (Python's or numpy's) is refused, since a list of them is a mask, not indices, and an
/// integer beyond isize is out of range like any other (an IndexError, not a TypeError).
/// `rule` starts the TypeError ("select takes sentence indices (integers)").
fn sentence_index(obj: &Bound<'_, PyAny>, len: usize, rule: &str) -> PyResult<usize> {
    if obj.is_instance_of::<PyBool>() || obj.get_type().name()? == "bool" {
        return Err(PyTypeError::new_err(format!(
            "{rule}, not bools (a mask); to select by a mask use \
             tb.select([i for i, keep in enumerate(mask) if keep])"
        )));
    }
    match obj.extract::<isize>() {
        Ok(index) => resolve_index(index, len, "sentence"),
        Err(_) if obj.hasattr("__index__")? => {
            Err(PyIndexError::new_err(format!("sentence index {} out of range (len {len})", obj.repr()?)))
        }
        Err(_) => Err(PyTypeError::new_err(format!("{rule}, not {}", obj.get_type().name()?))),
    }
}

/// Reads a CoNLL-U or CoNLL-X file (gzipped or not) into a Treebank. The GIL is
/// released while reading. Raises depfs.errors.FormatError naming file, line and
/// problem, or DepfsIOError.
#[pyfunction]
#[pyo3(signature = (path, *, multiple_roots = false, allow_blank_heads = true))]
fn read_conllu(
    py: Python<'_>,
    path: PathBuf,
    multiple_roots: bool,
    allow_blank_heads: bool,
) -> PyResult<PyTreebank> {
    let opts = options(multiple_roots, allow_blank_heads);
    let inner = py.detach(move || conllu::read_path(&path, &opts)).py_err(py)?;
    Ok(PyTreebank::new(inner))
}

impl PyTreebank {
    /// [`Treebank::select`] of checked indices, without the GIL.
    fn select_released(&self, py: Python<'_>, picked: Vec<usize>) -> PyResult<PyTreebank> {
        let tb = self.inner.clone();
        Ok(PyTreebank::new(py.detach(move || tb.select(&picked)).py_err(py)?))
    }
}

#[pymethods]
impl PyTreebank {
    /// Parses CoNLL-U text; messages name the file `<string>`.
    #[staticmethod]
    #[pyo3(signature = (text, *, multiple_roots = false, allow_blank_heads = true))]
    fn from_string(
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        multiple_roots: bool,
        allow_blank_heads: bool,
    ) -> PyResult<PyTreebank> {
        let opts = options(multiple_roots, allow_blank_heads);
        let inner = match text.to_cow() {
            Ok(s) => {
                let s = s.into_owned();
                py.detach(move || conllu::read_str(&s, &opts))
            }
            // Lone surrogates (text decoded with errors="surrogateescape"): read the
            // bytes they stand for, so that the error names the line as for a file.
            Err(_) => {
                let data: Vec<u8> = text.call_method1("encode", ("utf-8", "surrogatepass"))?.extract()?;
                py.detach(move || conllu::read_bytes(&data, "<string>", &opts))
            }
        }
        .py_err(py)?;
        Ok(PyTreebank::new(inner))
    }

    /// Parses CoNLL-U bytes (gzipped or not; invalid UTF-8 is an error naming the
    /// line); messages name the source `name` (e.g. `<stdin>`).
    #[staticmethod]
    #[pyo3(signature = (data, *, name = "<bytes>", multiple_roots = false, allow_blank_heads = true))]
    fn from_bytes(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        name: &str,
        multiple_roots: bool,
        allow_blank_heads: bool,
    ) -> PyResult<PyTreebank> {
        // (pyo3's own message for a str was "Can't extract 'str' to 'Vec'")
        if data.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("from_bytes takes bytes: give text to Treebank.from_string"));
        }
        let data: Vec<u8> = data.extract()?;
        let opts = options(multiple_roots, allow_blank_heads);
        let name = name.to_string();
        let inner = py.detach(move || conllu::read_bytes(&data, &name, &opts)).py_err(py)?;
        Ok(PyTreebank::new(inner))
    }

    /// Writes the treebank as CoNLL-U (gzip if the name ends in .gz), atomically (see
    /// `depfs_core::io::atomic`: nothing half-written is ever left under any name).
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let tb = &self.inner;
        writable(tb)?;
        py.detach(|| conllu::write_path(tb, &path)).py_err(py)
    }

    /// The treebank as CoNLL-U text (byte-identical to the text it was read from).
    fn to_string(&self, py: Python<'_>) -> PyResult<String> {
        let tb = &self.inner;
        writable(tb)?;
        Ok(py.detach(|| conllu::to_string(tb)))
    }

    /// The treebank as UTF-8 CoNLL-U bytes, as `to_string().encode()` without the two
    /// copies through a Python str (what a streamed parse writes).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let tb = &self.inner;
        writable(tb)?;
        let bytes = py.detach(|| conllu::to_bytes(tb));
        Ok(PyBytes::new(py, &bytes))
    }

    /// Pickles (multiprocessing, joblib, `copy.deepcopy`) as its CoNLL-U bytes, read back
    /// by `_from_pickle`. A treebank read in part is refused, as by `to_bytes`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let data = self.to_bytes(py)?;
        Ok((py.get_type::<PyTreebank>().getattr("_from_pickle")?, (data,)))
    }

    /// A pickled treebank: what any treebank may hold is accepted (several roots, `_` heads).
    #[staticmethod]
    fn _from_pickle(py: Python<'_>, data: Vec<u8>) -> PyResult<PyTreebank> {
        let opts = options(true, true);
        let inner = py.detach(move || conllu::read_bytes(&data, "<pickle>", &opts)).py_err(py)?;
        Ok(PyTreebank::new(inner))
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Number of words (multiword ranges and empty nodes not counted).
    #[getter]
    fn n_words(&self) -> usize {
        self.inner.n_words()
    }

    /// `tb[i]` is a Sentence view; `tb[a:b:c]` a Treebank of those sentences (a copy
    /// whose vocabularies hold only their strings).
    fn __getitem__<'py>(slf: Bound<'py, Self>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let len = slf.borrow().inner.len();
        if let Ok(slice) = key.cast::<PySlice>() {
            let r = slice.indices(len as isize)?;
            let picked: Vec<usize> =
                (0..r.slicelength).map(|k| (r.start + k as isize * r.step) as usize).collect();
            return Ok(Bound::new(py, slf.borrow().select_released(py, picked)?)?.into_any());
        }
        let i = sentence_index(key, len, "treebank indices must be integers or slices")?;
        Ok(Bound::new(py, PySentence { tb: slf.unbind(), index: i })?.into_any())
    }

    /// The sentences at `indices` (in that order; repeats allowed; negative counts from
    /// the end) as a new Treebank whose vocabularies hold only their strings. Bools are
    /// refused (a mask is not indices; see [`sentence_index`]).
    fn select(&self, py: Python<'_>, indices: &Bound<'_, PyAny>) -> PyResult<PyTreebank> {
        let len = self.inner.len();
        if indices.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("select takes a sequence of sentence indices, not a str"));
        }
        let picked = indices
            .try_iter()?
            .map(|item| sentence_index(&item?, len, "select takes sentence indices (integers)"))
            .collect::<PyResult<Vec<_>>>()?;
        self.select_released(py, picked)
    }

    /// The sentences of `treebanks`, one treebank after the other, as one Treebank.
    #[staticmethod]
    fn concat(py: Python<'_>, treebanks: Vec<PyRef<'_, PyTreebank>>) -> PyTreebank {
        let parts: Vec<Arc<Treebank>> = treebanks.iter().map(|t| t.inner.clone()).collect();
        PyTreebank::new(py.detach(move || Treebank::concat(&parts.iter().map(|t| &**t).collect::<Vec<_>>())))
    }

    fn __add__(&self, py: Python<'_>, other: PyRef<'_, PyTreebank>) -> PyTreebank {
        let (a, b) = (self.inner.clone(), other.inner.clone());
        PyTreebank::new(py.detach(move || Treebank::concat(&[&a, &b])))
    }

    fn __iter__(slf: Bound<'_, Self>) -> SentenceIter {
        SentenceIter { tb: slf.unbind(), next: 0 }
    }

    /// The columns among FORM, LEMMA, UPOS, XPOS, FEATS that carry values (not `_` on
    /// at least half of the words).
    fn filled_columns(&self) -> Vec<String> {
        depfs_core::io::model::filled_columns(&self.inner)
    }

    /// The sentences (indices) none of whose words has a UPOS (`_` on every word).
    fn untagged_sentences(&self) -> Vec<usize> {
        depfs_core::io::model::untagged_sentences(&self.inner)
    }

    /// The strings of a column's vocabulary, indexed by the ids of `Sentence.*_ids`
    /// (id 0 is `_`). Columns: form, lemma, upos, xpos, feats, deprel, deps, misc.
    fn vocab(&self, column: &str) -> PyResult<Vec<String>> {
        Ok(vocab_of(&self.inner, column)?.strings().iter().map(|s| s.to_string()).collect())
    }

    fn __repr__(&self) -> String {
        format!("<Treebank: {} sentences, {} words>", self.inner.len(), self.inner.n_words())
    }
}

fn vocab_of<'a>(tb: &'a Treebank, column: &str) -> PyResult<&'a Vocab> {
    let v = &tb.vocabs;
    // Either spelling: `filled_columns` names columns as CoNLL-U does (upper case).
    Ok(match column.to_ascii_lowercase().as_str() {
        "form" => &v.form,
        "lemma" => &v.lemma,
        "upos" => &v.upos,
        "xpos" => &v.xpos,
        "feats" => &v.feats,
        "deprel" => &v.deprel,
        "deps" => &v.deps,
        "misc" => &v.misc,
        _ => {
            return Err(PyKeyError::new_err(format!(
                "unknown column {column:?}: expected form, lemma, upos, xpos, feats, deprel, deps or misc"
            )))
        }
    })
}

/// Iterator over the sentences of a treebank.
#[pyclass(name = "SentenceIter", module = "depfs._core")]
pub struct SentenceIter {
    tb: Py<PyTreebank>,
    next: usize,
}

#[pymethods]
impl SentenceIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }
    fn __next__(&mut self, py: Python<'_>) -> Option<PySentence> {
        if self.next >= self.tb.borrow(py).inner.len() {
            return None;
        }
        self.next += 1;
        Some(PySentence { tb: self.tb.clone_ref(py), index: self.next - 1 })
    }
}

/// One sentence of a Treebank: a cheap view (treebank handle + index). Every
/// column property builds a fresh list or numpy array from the Rust columns.
#[pyclass(name = "Sentence", module = "depfs._core", frozen)]
pub struct PySentence {
    tb: Py<PyTreebank>,
    index: usize,
}

impl PySentence {
    /// Runs `f` on the treebank and this sentence's word range, checking the index
    /// is still valid.
    fn with<'py, T>(
        &self,
        py: Python<'py>,
        f: impl FnOnce(&Treebank, std::ops::Range<usize>) -> PyResult<T>,
    ) -> PyResult<T> {
        let tb = self.tb.borrow(py);
        let meta = tb
            .inner
            .sentences
            .get(self.index)
            .ok_or_else(|| PyIndexError::new_err(format!("sentence {} no longer exists", self.index)))?;
        f(&tb.inner, meta.range())
    }

    fn strings<'py>(
        &self,
        py: Python<'py>,
        column: fn(&Treebank) -> (&Vec<u32>, &Vocab),
    ) -> PyResult<Bound<'py, PyList>> {
        self.with(py, |tb, r| {
            let (ids, vocab) = column(tb);
            PyList::new(py, ids[r].iter().map(|&id| vocab.str(id)))
        })
    }

    fn ids<'py>(
        &self,
        py: Python<'py>,
        column: fn(&Treebank) -> &Vec<u32>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        self.with(py, |tb, r| Ok(PyArray1::from_slice(py, &column(tb)[r])))
    }
}

#[pymethods]
impl PySentence {
    /// Position of the sentence in its treebank.
    #[getter]
    fn index(&self) -> usize {
        self.index
    }
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |_, r| Ok(r.len()))
    }
    #[getter]
    fn forms<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.form, &t.vocabs.form))
    }
    #[getter]
    fn lemmas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.lemma, &t.vocabs.lemma))
    }
    #[getter]
    fn upos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.upos, &t.vocabs.upos))
    }
    #[getter]
    fn xpos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.xpos, &t.vocabs.xpos))
    }
    #[getter]
    fn feats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.feats, &t.vocabs.feats))
    }
    #[getter]
    fn deprels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.deprel, &t.vocabs.deprel))
    }
    #[getter]
    fn deps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.deps, &t.vocabs.deps))
    }
    #[getter]
    fn misc<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.strings(py, |t| (&t.words.misc, &t.vocabs.misc))
    }
    /// HEAD of each word as int32 (index 0 = word 1; 0 = root, -1 = `_`).
    #[getter]
    fn heads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i32>>> {
        self.with(py, |tb, r| Ok(PyArray1::from_slice(py, &tb.words.head[r])))
    }
    /// Interned ids (uint32) of the columns; strings in `Treebank.vocab(column)`.
    /// Ids are per treebank: compare strings, not ids, across treebanks.
    #[getter]
    fn form_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        self.ids(py, |t| &t.words.form)
    }
    #[getter]
    fn upos_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        self.ids(py, |t| &t.words.upos)
    }
    #[getter]
    fn deprel_ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        self.ids(py, |t| &t.words.deprel)
    }
    /// Value of the `# sent_id = ...` comment, or None.
    #[getter]
    fn sent_id(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with(py, |tb, _| Ok(tb.sentences[self.index].sent_id().map(str::to_string)))
    }
    /// Value of the `# text = ...` comment, or None.
    #[getter]
    fn text(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with(py, |tb, _| Ok(tb.sentences[self.index].text().map(str::to_string)))
    }
    /// Comment lines verbatim (with their `#`).
    #[getter]
    fn comments(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |tb, _| Ok(tb.sentences[self.index].comments.to_vec()))
    }
    /// Multiword-token (`3-4`) and empty-node (`5.1`) lines verbatim, in file order.
    #[getter]
    fn extra_lines(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |tb, _| Ok(tb.sentences[self.index].extra.iter().map(|x| x.text.clone()).collect()))
    }
    /// The sentence as CoNLL-U text, with its trailing blank line.
    fn to_string(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |tb, _| {
            writable(tb)?;
            let mut buf = Vec::new();
            conllu::write_sentence(tb, self.index, &mut buf);
            Ok(String::from_utf8_lossy(&buf).into_owned())
        })
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |tb, r| {
            let id = tb.sentences[self.index].sent_id().unwrap_or("");
            Ok(format!("<Sentence {} {id:?}: {} words>", self.index, r.len()))
        })
    }
}

/// A CoNLL-U file read `sentences` at a time (gzipped or not): iterating gives
/// treebanks that together are the whole file; messages count lines from its start.
/// With `keep_text`, each item is a pair (treebank, its `BatchText`).
#[pyclass(name = "ConlluBatches", module = "depfs._core")]
pub struct PyConlluBatches {
    inner: conllu::Batches<Box<dyn std::io::BufRead + Send + Sync>>,
    sentences: usize,
    keep_text: bool,
}

#[pymethods]
impl PyConlluBatches {
    #[new]
    #[pyo3(signature = (path, *, sentences = 5000, multiple_roots = false, allow_blank_heads = true, keep_text = false))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        sentences: usize,
        multiple_roots: bool,
        allow_blank_heads: bool,
        keep_text: bool,
    ) -> PyResult<Self> {
        let opts = options(multiple_roots, allow_blank_heads);
        let mut inner = py.detach(|| conllu::Batches::open(&path, &opts)).py_err(py)?;
        if keep_text {
            inner = inner.keeping_text();
        }
        Ok(PyConlluBatches { inner, sentences: sentences.max(1), keep_text })
    }
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }
    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.next_batch(py, self.sentences)
    }
    /// From the next batch on, intern only `columns` (of FORM, LEMMA, UPOS, XPOS,
    /// FEATS, DEPREL, DEPS, MISC; ID and HEAD are always read, and every line is
    /// checked as before): the others read as `_`, comments are not kept, and such a
    /// batch is written only through its text (`keep_text` is required).
    fn read_columns(&mut self, py: Python<'_>, columns: Vec<String>) -> PyResult<()> {
        if !self.keep_text {
            return Err(PyValueError::new_err(
                "read_columns needs keep_text=True: a batch read in part is written through its text",
            ));
        }
        self.inner.set_columns(conllu::Columns::named(&columns).py_err(py)?);
        Ok(())
    }
    /// The next (up to) `sentences` sentences (with their text when kept), None at the
    /// end of the file.
    fn next_batch<'py>(&mut self, py: Python<'py>, sentences: usize) -> PyResult<Option<Bound<'py, PyAny>>> {
        let inner = &mut self.inner;
        let Some(tb) = py.detach(|| inner.next_batch(sentences)).py_err(py)? else { return Ok(None) };
        let tb = Bound::new(py, PyTreebank::new(tb))?.into_any();
        if !self.keep_text {
            return Ok(Some(tb));
        }
        let text = PyBatchText { inner: self.inner.take_text().unwrap_or_default() };
        Ok(Some((tb, text).into_pyobject(py)?.into_any()))
    }
}

/// A batch's input text, to write a parse of that batch by copying the input around
/// each word's HEAD and DEPREL (the same bytes as `Treebank.to_bytes`, cheaper).
#[pyclass(name = "BatchText", module = "depfs._core", frozen)]
pub struct PyBatchText {
    inner: conllu::BatchText,
}

#[pymethods]
impl PyBatchText {
    /// `parsed` (this batch with new heads and labels) as CoNLL-U bytes, written into
    /// the bytes object in place with the GIL released (no copy).
    fn rewrite<'py>(&self, py: Python<'py>, parsed: PyRef<'_, PyTreebank>) -> PyResult<Bound<'py, PyBytes>> {
        let tb = Arc::clone(&parsed.inner);
        drop(parsed);
        let text = &self.inner;
        let Some(len) = text.rewritten_len(&tb) else {
            return Err(PyValueError::new_err(
                "BatchText.rewrite: the treebank is not the batch this text was read with",
            ));
        };
        // The bytes object is new and seen by no other thread until returned.
        PyBytes::new_with(py, len, |out| {
            py.detach(|| text.rewrite_to(&tb, out));
            Ok(())
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTreebank>()?;
    m.add_class::<PyConlluBatches>()?;
    m.add_class::<PyBatchText>()?;
    m.add_class::<PySentence>()?;
    m.add_class::<SentenceIter>()?;
    m.add_function(wrap_pyfunction!(read_conllu, m)?)
}
