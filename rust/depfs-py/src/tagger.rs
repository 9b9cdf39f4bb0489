//! Python bindings of the tagger: model and epoch-by-epoch trainer. Conversion and
//! error mapping only; long work releases the GIL.

use std::path::PathBuf;
use std::sync::Arc;

use depfs_core::tagger::clusters::Clusters;
use depfs_core::tagger::features::N_COLUMNS;
use depfs_core::tagger::{Tagger, TaggerOptions, TaggerTrainer};
use depfs_core::templates::{Family, TemplateSet, DEFAULT_MAX_ATOMS};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::IntoPyResult;
use crate::transition::{other_presets, presets_dict};
use crate::treebank::{parse_released, PyTreebank};

/// A trained tagger (Rust side of `depfs.Tagger`).
#[pyclass(name = "TaggerModel", module = "depfs._core", frozen)]
pub struct PyTaggerModel {
    pub inner: Tagger,
}

#[pymethods]
impl PyTaggerModel {
    /// The columns it predicts, in decision order (of UPOS, XPOS, FEATS, LEMMA).
    #[getter]
    fn columns(&self) -> Vec<&'static str> {
        self.inner.columns()
    }
    /// Canonical text of the templates of `column`.
    fn templates(&self, column: &str) -> Vec<String> {
        self.inner
            .templates(column)
            .map_or_else(Vec::new, |s| s.templates.iter().map(|t| t.text.clone()).collect())
    }
    /// Canonical text of the backward pass's templates (None: the tagger has no such pass).
    #[getter]
    fn backward_templates(&self) -> Option<Vec<String>> {
        self.inner.backward_templates().map(|s| s.templates.iter().map(|t| t.text.clone()).collect())
    }
    /// The column its backward pass predicts, "UPOS" or "XPOS" (None: no pass).
    #[getter]
    fn backward_column(&self) -> Option<&'static str> {
        self.inner.backward_column()
    }
    /// Whether the tagger has the case rule: forms its dictionary knows only lower-cased keep
    /// their case (UPOS open, lemma from the form as written); false in taggers before it.
    #[getter]
    fn cased(&self) -> bool {
        self.inner.cased()
    }
    /// Whether it has the candidate rules (FEATS by XPOS, XPOS siblings, known lemmas).
    #[getter]
    fn rules(&self) -> bool {
        self.inner.has_rules()
    }
    /// Its word-cluster table's size, (words, clusters); None: it has none.
    #[getter]
    fn clusters(&self) -> Option<(usize, usize)> {
        self.inner.clusters().map(|c| (c.len(), c.n_paths()))
    }
    /// The classes of `column` (LEMMA: edit scripts, fields joined by tabs).
    fn classes(&self, column: &str) -> Vec<String> {
        self.inner.classes(column).map_or_else(Vec::new, <[String]>::to_vec)
    }
    /// CoNLL-U columns tagging needs.
    #[getter]
    fn input_columns(&self) -> Vec<String> {
        self.inner.input_columns()
    }
    /// A copy of the treebank with the predicted columns written; with `margin`, each
    /// decision by the prefix-margin rule at that margin.
    #[pyo3(signature = (treebank, threads = 1, margin = None))]
    fn tag(
        &self,
        py: Python<'_>,
        treebank: PyRef<'_, PyTreebank>,
        threads: usize,
        margin: Option<f32>,
    ) -> PyResult<PyTreebank> {
        parse_released(py, treebank, |tb| Ok(self.inner.tag_with(tb, threads, margin)?.0))
    }
    /// [`tag`] by the prefix-margin rule at `margin`, and the templates it computed per
    /// column: a dict of column name to (templates, decisions).
    #[pyo3(signature = (treebank, margin, threads = 1))]
    fn tag_counted<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'py, PyTreebank>,
        margin: f32,
        threads: usize,
    ) -> PyResult<(PyTreebank, Bound<'py, PyDict>)> {
        let tb = Arc::clone(&treebank.inner);
        drop(treebank);
        let (tagged, n) = py.detach(|| self.inner.tag_with(&tb, threads, Some(margin))).py_err(py)?;
        let d = PyDict::new(py);
        for (c, name) in depfs_core::tagger::features::COLUMN_NAMES.iter().enumerate() {
            if self.inner.columns().contains(name) {
                d.set_item(*name, (n.templates[c], n.decisions[c]))?;
            }
        }
        Ok((PyTreebank::new(tagged), d))
    }
    /// Margin presets of a tagger trained by the prefix-margin rule: a dict of `train`,
    /// `accurate`, `fast`; None for an ordinary tagger.
    #[getter]
    fn margin_presets<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        presets_dict(py, self.inner.dynamic)
    }
    /// The same tagger with other `accurate` and `fast` margins (a dynamic one only).
    fn with_presets(&self, accurate: f32, fast: f32) -> PyResult<PyTaggerModel> {
        let mut inner = self.inner.clone();
        inner.dynamic = Some(other_presets(self.inner.dynamic, accurate, fast)?);
        Ok(PyTaggerModel { inner })
    }
    /// Writes the model file atomically, with training information `info` (JSON; the
    /// model's own when None).
    #[pyo3(signature = (path, info = None))]
    fn save(&self, py: Python<'_>, path: PathBuf, info: Option<String>) -> PyResult<()> {
        let info = info.unwrap_or_else(|| self.inner.info.clone());
        py.detach(|| self.inner.save(&path, &info)).py_err(py)
    }
    /// Training information from the model file (JSON; empty when unknown).
    #[getter]
    fn info(&self) -> String {
        self.inner.info.clone()
    }
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyTaggerModel> {
        let inner = py.detach(|| Tagger::load(&path)).py_err(py)?;
        Ok(PyTaggerModel { inner })
    }
    /// The tagger stored inside the parser model file at `path` (None when it holds none).
    #[staticmethod]
    fn load_embedded(py: Python<'_>, path: PathBuf) -> PyResult<Option<PyTaggerModel>> {
        let inner = py.detach(|| Tagger::load_embedded(&path)).py_err(py)?;
        Ok(inner.map(|inner| PyTaggerModel { inner }))
    }
}

/// Tagger training driven epoch by epoch from Python.
#[pyclass(name = "TaggerTrainer", module = "depfs._core")]
pub struct PyTaggerTrainer {
    inner: TaggerTrainer,
}

#[pymethods]
impl PyTaggerTrainer {
    /// `templates`: one template text for every column, or four (UPOS, XPOS, FEATS, LEMMA);
    /// `backward`: the templates of a backward UPOS pass (None: none; `backward_xpos`: it
    /// predicts XPOS where the treebank has XPOS); `clusters`: a Brown
    /// paths file (`BITSTRING<TAB>WORD<TAB>COUNT` lines) that `cluster` templates read.
    #[new]
    #[pyo3(signature = (train, templates, *, seed = 1, min_known = 2, upos_min_known = 2, max_bits = 20, prefix_margin = None, prefix_l2 = 0.0, prefix_perceptron = false, prefix_full = 0.0, line_hashing = true, backward = None, cased = false, clusters = None, feats_by_xpos = None, known_lemmas = false, xpos_siblings = None, backward_xpos = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        train: PyRef<'_, PyTreebank>,
        templates: Vec<String>,
        seed: u64,
        min_known: u32,
        upos_min_known: u32,
        max_bits: u32,
        prefix_margin: Option<f32>,
        prefix_l2: f32,
        prefix_perceptron: bool,
        prefix_full: f32,
        line_hashing: bool,
        backward: Option<String>,
        cased: bool,
        clusters: Option<PathBuf>,
        feats_by_xpos: Option<u32>,
        known_lemmas: bool,
        xpos_siblings: Option<u32>,
        backward_xpos: bool,
    ) -> PyResult<Self> {
        let tb = Arc::clone(&train.inner);
        drop(train);
        let max_bits = max_bits.clamp(6, 26);
        let inner = py
            .detach(|| {
                let parse = |t: &str| TemplateSet::parse(t, Family::Token, DEFAULT_MAX_ATOMS);
                let backward = backward.as_deref().map(parse).transpose()?;
                let clusters = clusters
                    .map(|p| Clusters::from_file(&p.display().to_string()).map(Arc::new))
                    .transpose()?;
                let opts = TaggerOptions {
                    seed,
                    min_known,
                    upos_min_known,
                    max_bits,
                    prefix_margin,
                    prefix_l2,
                    prefix_perceptron,
                    prefix_full,
                    line_hashing,
                    backward,
                    cased,
                    clusters,
                    feats_by_xpos,
                    known_lemmas,
                    xpos_siblings,
                    backward_xpos,
                };
                let sets: [TemplateSet; N_COLUMNS] = match templates.len() {
                    1 => {
                        let s = parse(&templates[0])?;
                        [s.clone(), s.clone(), s.clone(), s]
                    }
                    N_COLUMNS => [
                        parse(&templates[0])?,
                        parse(&templates[1])?,
                        parse(&templates[2])?,
                        parse(&templates[3])?,
                    ],
                    n => {
                        return Err(depfs_core::Error::InvalidArgument(format!(
                            "{n} template sets: give one for every column or four (UPOS, XPOS, FEATS, LEMMA)"
                        )))
                    }
                };
                TaggerTrainer::new(&tb, sets, &opts)
            })
            .py_err(py)?;
        Ok(PyTaggerTrainer { inner })
    }
    /// One training epoch: {epoch, train_accuracy, seconds}.
    fn epoch<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let r = py.detach(|| inner.epoch());
        let d = PyDict::new(py);
        d.set_item("epoch", r.epoch)?;
        d.set_item("train_accuracy", r.train_accuracy)?;
        d.set_item("seconds", r.seconds)?;
        Ok(d)
    }
    /// Stagewise baseline (Strubell et al. §6.1): from the next epoch on train only
    /// template `stage` of each column, earlier ones frozen; None: every prefix.
    #[pyo3(signature = (stage))]
    fn set_stage(&mut self, py: Python<'_>, stage: Option<usize>) -> PyResult<()> {
        self.inner.set_stage(stage).py_err(py)
    }
    /// The averaged model so far.
    fn model(&self, py: Python<'_>) -> PyTaggerModel {
        let inner = &self.inner;
        PyTaggerModel { inner: py.detach(|| inner.model()) }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTaggerModel>()?;
    m.add_class::<PyTaggerTrainer>()?;
    Ok(())
}
