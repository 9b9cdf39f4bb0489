//! Python bindings of the transition (arc-eager) parser: model, prepared training set,
//! epoch-by-epoch trainer, and what the selection methods need (trajectories as move
//! histories, per-template scores, local classifiers and their ensembles),
//! pseudo-projective transformation and model-free oracle trajectories.
//! Long work releases the GIL on owned inputs.

use std::path::PathBuf;

use std::sync::Arc;

use depfs_core::tagger::clusters::Clusters;
use depfs_core::transition::local::{Ensemble, LocalClassifier, LocalOptions};
use depfs_core::transition::parser::{ArcEagerParser, TrainOptions, Trainer, N_KINDS};
use depfs_core::transition::prefix_margin::MarginPresets;
use depfs_core::transition::projective::{deprojectivize, projectivize};
use depfs_core::transition::trajectories::oracle_trajectories;
use depfs_core::transition::trajectories::Trajectories;
use depfs_core::transition::TrainingSet;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::IntoPyResult;
use crate::treebank::{parse_released, with_margins, PyTreebank};

/// A trained greedy arc-eager parser (Rust side of `depfs.ArcEagerParser`).
#[pyclass(name = "ArcEagerModel", module = "depfs._core", frozen)]
pub struct PyArcEagerModel {
    pub inner: ArcEagerParser,
}

#[pymethods]
impl PyArcEagerModel {
    /// The parser's label set (label ids index it).
    #[getter]
    fn labels(&self) -> Vec<String> {
        self.inner.labels.clone()
    }
    /// Canonical text of every template, in weight-block order.
    #[getter]
    fn templates(&self) -> Vec<String> {
        self.inner.set.templates.iter().map(|t| t.text.clone()).collect()
    }
    /// Indices of the templates that also score labels.
    #[getter]
    fn label_templates(&self) -> Vec<usize> {
        self.inner.label_templates.clone()
    }
    #[getter]
    fn pseudo_projective(&self) -> bool {
        self.inner.pseudo_projective
    }
    /// CoNLL-U columns parsing needs (read by the templates, filled in training).
    #[getter]
    fn input_columns(&self) -> Vec<String> {
        self.inner.inputs.clone()
    }
    /// Its word-cluster table's size, (words, clusters); None: it has none.
    #[getter]
    fn clusters(&self) -> Option<(usize, usize)> {
        self.inner.clusters.as_ref().map(|c| (c.len(), c.n_paths()))
    }
    /// Parses a treebank; with `scores`, each word's margin goes to MISC (`Margin=`);
    /// with `margin`, by the prefix-margin rule at that margin (inf: every template).
    #[pyo3(signature = (treebank, threads = 1, scores = false, margin = None))]
    fn parse(
        &self,
        py: Python<'_>,
        treebank: PyRef<'_, PyTreebank>,
        threads: usize,
        scores: bool,
        margin: Option<f32>,
    ) -> PyResult<PyTreebank> {
        parse_released(py, treebank, |tb| {
            with_margins(self.inner.parse_with(tb, threads, scores, margin).map(|(t, m, _)| (t, m)))
        })
    }
    /// [`parse`] by the prefix-margin rule at `margin`, and the templates it computed:
    /// a dict of `move_templates`, `move_decisions`, `label_templates`, `label_decisions`.
    #[pyo3(signature = (treebank, margin, threads = 1))]
    fn parse_counted<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'py, PyTreebank>,
        margin: f32,
        threads: usize,
    ) -> PyResult<(PyTreebank, Bound<'py, PyDict>)> {
        let tb = Arc::clone(&treebank.inner);
        drop(treebank);
        let (parsed, _, n) =
            py.detach(|| self.inner.parse_with(&tb, threads, false, Some(margin))).py_err(py)?;
        let d = PyDict::new(py);
        d.set_item("move_templates", n.move_templates)?;
        d.set_item("move_decisions", n.move_decisions)?;
        d.set_item("label_templates", n.label_templates)?;
        d.set_item("label_decisions", n.label_decisions)?;
        Ok((PyTreebank::new(parsed), d))
    }
    /// Margin presets of a model trained by the prefix-margin rule: a dict of `train`,
    /// `accurate`, `fast`; None for an ordinary model.
    #[getter]
    fn margin_presets<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        presets_dict(py, self.inner.dynamic)
    }
    /// The same model with other `accurate` and `fast` margins (a dynamic model only).
    fn with_presets(&self, accurate: f32, fast: f32) -> PyResult<PyArcEagerModel> {
        let mut inner = self.inner.clone();
        inner.dynamic = Some(other_presets(self.inner.dynamic, accurate, fast)?);
        Ok(PyArcEagerModel { inner })
    }
    /// This (ordinary) model as the full model of a cascade with `stages` before it
    /// (models of its first k1 < k2 < ... templates) and margin presets at `train`.
    fn with_stages(
        &self,
        py: Python<'_>,
        stages: Vec<PyRef<'_, PyArcEagerModel>>,
        train: f32,
    ) -> PyResult<PyArcEagerModel> {
        let stages = stages.iter().map(|s| s.inner.clone()).collect();
        let inner = self.inner.with_stages(stages, train).py_err(py)?;
        Ok(PyArcEagerModel { inner })
    }
    /// The model cut to its first `k` templates (their rows as trained; an ordinary model).
    fn prefix(&self, py: Python<'_>, k: usize) -> PyResult<PyArcEagerModel> {
        Ok(PyArcEagerModel { inner: self.inner.prefix(k).py_err(py)? })
    }
    /// A cascade's stages before the full model (their template counts); None for
    /// other models.
    #[getter]
    fn cascade(&self) -> Option<Vec<usize>> {
        self.inner.cascade.as_ref().map(|c| c.stages.iter().map(|s| s.len()).collect())
    }
    /// Writes the model file atomically, with training information `info` (JSON; the
    /// model's own when None).
    /// With `tagger`, the tagger that tags the parser's input is stored inside, with its
    /// training information `tagger_info` (its own when None).
    #[pyo3(signature = (path, info = None, tagger = None, tagger_info = None))]
    fn save(
        &self,
        py: Python<'_>,
        path: PathBuf,
        info: Option<String>,
        tagger: Option<PyRef<'_, crate::tagger::PyTaggerModel>>,
        tagger_info: Option<String>,
    ) -> PyResult<()> {
        let m = &self.inner;
        let info = info.unwrap_or_else(|| m.info.clone());
        let tagger = tagger.map(|t| t.inner.to_file(&tagger_info.unwrap_or_else(|| t.inner.info.clone())));
        py.detach(|| m.save_with_tagger(&path, &info, tagger)).py_err(py)
    }
    /// Training information from the model file (JSON; empty when unknown).
    #[getter]
    fn info(&self) -> String {
        self.inner.info.clone()
    }
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyArcEagerModel> {
        let inner = py.detach(|| ArcEagerParser::load(&path)).py_err(py)?;
        Ok(PyArcEagerModel { inner })
    }
    /// Decisions along trajectories mixing oracle (probability `beta`) and model
    /// moves, as replayable move histories.
    #[pyo3(signature = (treebank, beta = 0.0, seed = 0, sentences = None))]
    fn trajectories(
        &self,
        py: Python<'_>,
        treebank: PyRef<'_, PyTreebank>,
        beta: f64,
        seed: u64,
        sentences: Option<Vec<usize>>,
    ) -> PyResult<PyTrajectories> {
        let tb = Arc::clone(&treebank.inner);
        drop(treebank);
        let inner =
            py.detach(|| self.inner.trajectories(&tb, beta, seed, sentences.as_deref())).py_err(py)?;
        Ok(PyTrajectories { inner: Arc::new(inner) })
    }
    /// Per-template move scores of configurations given by their features (n, T):
    /// array (n, T, 4); a cumulative sum over templates gives prefix scores.
    fn template_scores<'py>(
        &self,
        py: Python<'py>,
        features: PyReadonlyArray2<'py, u64>,
    ) -> PyResult<Bound<'py, PyArray3<f32>>> {
        let shape = features.shape();
        let (n, t) = (shape[0], shape[1]);
        if t != self.inner.n_templates() {
            return Err(PyValueError::new_err(format!(
                "features have {t} columns, the model has {} templates",
                self.inner.n_templates()
            )));
        }
        let f = features.as_array().iter().copied().collect::<Vec<u64>>();
        let scores = py.detach(|| self.inner.template_scores(&f)).py_err(py)?;
        scores.into_pyarray(py).reshape([n, t, N_KINDS])
    }
}

/// A treebank prepared once for training many arc-eager models on it (projectivised,
/// label set, gold trees; vocabulary hashes and block sizes cached as models ask).
#[pyclass(name = "TrainingSet", module = "depfs._core", frozen)]
pub struct PyTrainingSet {
    pub inner: Arc<TrainingSet>,
}

#[pymethods]
impl PyTrainingSet {
    #[new]
    /// `clusters`: a Brown paths file that the templates' `cluster` attributes read.
    #[pyo3(signature = (treebank, *, pseudo_projective = true, min_lifted_label_count = 20, clusters = None))]
    fn new(
        py: Python<'_>,
        treebank: PyRef<'_, PyTreebank>,
        pseudo_projective: bool,
        min_lifted_label_count: usize,
        clusters: Option<PathBuf>,
    ) -> PyResult<Self> {
        let tb = Arc::clone(&treebank.inner);
        drop(treebank);
        let set = py
            .detach(|| {
                let clusters = read_clusters(clusters)?;
                TrainingSet::with_clusters(&tb, pseudo_projective, min_lifted_label_count, clusters)
            })
            .py_err(py)?;
        Ok(PyTrainingSet { inner: Arc::new(set) })
    }
    /// Its word-cluster table's size, (words, clusters); None: it has none.
    #[getter]
    fn clusters(&self) -> Option<(usize, usize)> {
        self.inner.clusters.as_ref().map(|c| (c.len(), c.n_paths()))
    }
    /// Sentences the static oracle rebuilds (the ones trained on).
    #[getter]
    fn n_usable(&self) -> usize {
        self.inner.usable.len()
    }
    /// The indices of those sentences, in order.
    #[getter]
    fn usable(&self) -> Vec<usize> {
        self.inner.usable.clone()
    }
    /// Sentences with no UPOS on any word where others are tagged: not trained on.
    #[getter]
    fn untagged(&self) -> Vec<usize> {
        self.inner.untagged.clone()
    }
    /// Their words.
    #[getter]
    fn usable_words(&self) -> usize {
        self.inner.usable.iter().map(|&s| self.inner.treebank.sentences[s].len as usize).sum()
    }
    #[getter]
    fn n_sentences(&self) -> usize {
        self.inner.treebank.len()
    }
    #[getter]
    fn labels(&self) -> Vec<String> {
        self.inner.labels.labels.clone()
    }
    #[getter]
    fn pseudo_projective(&self) -> bool {
        self.inner.pseudo_projective
    }
    #[getter]
    fn min_lifted_label_count(&self) -> usize {
        self.inner.min_lifted_label_count
    }
}

/// The cluster table of a Brown paths file, if one is given.
fn read_clusters(path: Option<PathBuf>) -> depfs_core::Result<Option<Arc<Clusters>>> {
    path.map(|p| Clusters::from_file(&p.display().to_string()).map(Arc::new)).transpose()
}

/// What a trainer trains on: a treebank, or a training set prepared before.
#[derive(FromPyObject)]
pub enum TrainInput<'py> {
    Prepared(PyRef<'py, PyTrainingSet>),
    Treebank(PyRef<'py, PyTreebank>),
}

/// Online training driven epoch by epoch from Python.
#[pyclass(name = "ArcEagerTrainer", module = "depfs._core")]
pub struct PyArcEagerTrainer {
    inner: Trainer,
}

#[pymethods]
impl PyArcEagerTrainer {
    #[new]
    #[pyo3(signature = (train, templates, *, seed = 1, explore_from = 1, explore_p = 0.9, pseudo_projective = true, min_lifted_label_count = 20, prefix_margin = None, prefix_all = false, prefix_l2 = 0.0, prefix_perceptron = false, prefix_full = 0.0, max_bits = 20, label_max_bits = 15, clusters = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        train: TrainInput<'_>,
        templates: &str,
        seed: u64,
        explore_from: usize,
        explore_p: f64,
        pseudo_projective: bool,
        min_lifted_label_count: usize,
        prefix_margin: Option<f32>,
        prefix_all: bool,
        prefix_l2: f32,
        prefix_perceptron: bool,
        prefix_full: f32,
        max_bits: u32,
        label_max_bits: u32,
        clusters: Option<PathBuf>,
    ) -> PyResult<Self> {
        // Rows of a block are clamped to at least 2^6 (`rows_for`).
        if !(6..=26).contains(&max_bits) || !(6..=26).contains(&label_max_bits) {
            return Err(PyValueError::new_err(format!(
                "need 6 <= max_bits, label_max_bits <= 26, got {max_bits}, {label_max_bits}"
            )));
        }
        let text = templates.to_string();
        let opts = TrainOptions {
            seed,
            explore_from,
            explore_p,
            pseudo_projective,
            min_lifted_label_count,
            prefix_margin,
            prefix_all,
            prefix_l2,
            prefix_perceptron,
            prefix_full,
            max_bits,
            label_max_bits,
            ..TrainOptions::default()
        };
        let inner = match train {
            TrainInput::Prepared(_) if clusters.is_some() => {
                return Err(PyValueError::new_err(
                    "a prepared TrainingSet's cluster table is given to it (TrainingSet(treebank, \
                 clusters=PATH)), not to the parser: one table for every model trained on the set",
                ))
            }
            TrainInput::Prepared(set) => {
                let set = Arc::clone(&set.inner);
                py.detach(|| ArcEagerParser::compile_set(&text).and_then(|t| Trainer::on(t, &set, &opts)))
            }
            TrainInput::Treebank(tb) => {
                let tb = Arc::clone(&tb.inner);
                py.detach(|| {
                    let opts = TrainOptions { clusters: read_clusters(clusters)?, ..opts };
                    ArcEagerParser::compile_set(&text).and_then(|t| Trainer::new(t, &tb, &opts))
                })
            }
        }
        .py_err(py)?;
        Ok(PyArcEagerTrainer { inner })
    }
    /// One training epoch; returns `epoch` (from 1), `train_accuracy` (share of
    /// decisions whose model move had zero cost) and `seconds`.
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
    /// template `stage` (of the move and the label order), earlier ones frozen; None:
    /// every prefix.
    #[pyo3(signature = (stage))]
    fn set_stage(&mut self, py: Python<'_>, stage: Option<usize>) -> PyResult<()> {
        self.inner.set_stage(stage).py_err(py)
    }
    /// The averaged model so far.
    fn model(&self, py: Python<'_>) -> PyArcEagerModel {
        let inner = &self.inner;
        PyArcEagerModel { inner: py.detach(|| inner.averaged()) }
    }
    #[getter]
    fn epochs_done(&self) -> usize {
        self.inner.epochs_done()
    }
}

/// Decisions along trajectories as move histories (Rust side of `depfs.arceager.Trajectories`).
#[pyclass(name = "Trajectories", module = "depfs._core", frozen)]
pub struct PyTrajectories {
    inner: Arc<Trajectories>,
}

fn kinds_array<'py>(py: Python<'py>, v: &[bool]) -> PyResult<Bound<'py, PyArray2<bool>>> {
    v.to_vec().into_pyarray(py).reshape([v.len() / N_KINDS, N_KINDS])
}

#[pymethods]
impl PyTrajectories {
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    /// Sentence of each decision (n,).
    #[getter]
    fn sentence<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        self.inner.sentence.clone().into_pyarray(py)
    }
    /// Move kind followed (n,): 0 SHIFT, 1 REDUCE, 2 LEFT-ARC, 3 RIGHT-ARC.
    #[getter]
    fn followed<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        self.inner.followed.clone().into_pyarray(py)
    }
    /// The model's best valid move kind (n,).
    #[getter]
    fn model_move<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        self.inner.model_move.clone().into_pyarray(py)
    }
    /// Valid move kinds (n, 4).
    #[getter]
    fn valid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<bool>>> {
        kinds_array(py, &self.inner.valid)
    }
    /// Zero-cost move kinds of the dynamic oracle (n, 4).
    #[getter]
    fn zero_cost<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<bool>>> {
        kinds_array(py, &self.inner.zero_cost)
    }
    /// Bytes of the stored decisions.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.heap_bytes()
    }
    /// Features (n, len(templates)) of configuration template text `templates` at
    /// every decision, replayed on `threads` threads (0 = all cores).
    #[pyo3(signature = (templates, threads = 1))]
    fn features<'py>(
        &self,
        py: Python<'py>,
        templates: &str,
        threads: usize,
    ) -> PyResult<Bound<'py, PyArray2<u64>>> {
        let text = templates.to_string();
        let traj = Arc::clone(&self.inner);
        let (f, t) = py
            .detach(|| {
                let set = ArcEagerParser::compile_set(&text)?;
                let t = set.len();
                traj.features(&set, threads).map(|f| (f, t))
            })
            .py_err(py)?;
        let n = self.inner.len();
        f.into_pyarray(py).reshape([n, t])
    }
}

/// A local move and label classifier over its own templates (SAMME's weak learner).
#[pyclass(name = "LocalClassifier", module = "depfs._core", frozen)]
pub struct PyLocalClassifier {
    inner: LocalClassifier,
}

#[pymethods]
impl PyLocalClassifier {
    /// Trains on the decisions of `trajectories` weighted by `sample_weight` over the
    /// configuration template text `templates`.
    #[new]
    #[pyo3(signature = (trajectories, templates, sample_weight, *, epochs = 5, seed = 1, threads = 1))]
    fn new(
        py: Python<'_>,
        trajectories: PyRef<'_, PyTrajectories>,
        templates: &str,
        sample_weight: PyReadonlyArray1<'_, f32>,
        epochs: usize,
        seed: u64,
        threads: usize,
    ) -> PyResult<Self> {
        let traj = Arc::clone(&trajectories.inner);
        drop(trajectories);
        let w: Vec<f32> = sample_weight.as_array().iter().copied().collect();
        let text = templates.to_string();
        let opts = LocalOptions { epochs, seed, threads, ..LocalOptions::default() };
        let inner = py
            .detach(|| {
                let set = ArcEagerParser::compile_set(&text)?;
                LocalClassifier::train(&traj, set, &w, &opts)
            })
            .py_err(py)?;
        Ok(PyLocalClassifier { inner })
    }
    /// Canonical text of its templates.
    #[getter]
    fn templates(&self) -> Vec<String> {
        self.inner.set.templates.iter().map(|t| t.text.clone()).collect()
    }
    /// Its best valid move kind at every decision of `trajectories` (n,) uint8.
    #[pyo3(signature = (trajectories, threads = 1))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        trajectories: PyRef<'_, PyTrajectories>,
        threads: usize,
    ) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let traj = Arc::clone(&trajectories.inner);
        drop(trajectories);
        let pred = py.detach(|| self.inner.predict(&traj, threads)).py_err(py)?;
        Ok(pred.into_pyarray(py))
    }
}

/// A weighted vote of local classifiers that parses (SAMME's final classifier).
#[pyclass(name = "Ensemble", module = "depfs._core", frozen)]
pub struct PyEnsemble {
    pub(crate) inner: Ensemble,
}

#[pymethods]
impl PyEnsemble {
    /// CoNLL-U columns parsing needs (any member's).
    #[getter]
    fn input_columns(&self) -> Vec<String> {
        self.inner.inputs.clone()
    }
    /// An ensemble of (say, classifier) pairs.
    #[new]
    fn new(py: Python<'_>, members: Vec<(f32, PyRef<'_, PyLocalClassifier>)>) -> PyResult<Self> {
        let members = members.into_iter().map(|(a, m)| (a, m.inner.clone())).collect();
        Ok(PyEnsemble { inner: Ensemble::new(members).py_err(py)? })
    }
    /// Says of the members, in order.
    #[getter]
    fn weights(&self) -> Vec<f32> {
        self.inner.members.iter().map(|(a, _)| *a).collect()
    }
    /// Canonical template texts of each member.
    #[getter]
    fn member_templates(&self) -> Vec<Vec<String>> {
        self.inner
            .members
            .iter()
            .map(|(_, m)| m.set.templates.iter().map(|t| t.text.clone()).collect())
            .collect()
    }
    #[pyo3(signature = (treebank, threads = 1))]
    fn parse(&self, py: Python<'_>, treebank: PyRef<'_, PyTreebank>, threads: usize) -> PyResult<PyTreebank> {
        parse_released(py, treebank, |tb| self.inner.parse(tb, threads))
    }
    #[pyo3(signature = (path, info = None))]
    fn save(&self, py: Python<'_>, path: PathBuf, info: Option<String>) -> PyResult<()> {
        let info = info.unwrap_or_else(|| self.inner.info.clone());
        py.detach(|| self.inner.save_with_info(&path, &info)).py_err(py)
    }
    #[getter]
    fn info(&self) -> String {
        self.inner.info.clone()
    }
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyEnsemble> {
        Ok(PyEnsemble { inner: py.detach(|| Ensemble::load(&path)).py_err(py)? })
    }
}

/// Projectivises every tree (Nivre & Nilsson 2005, HEAD encoding `r↑h`); returns
/// the new treebank and counts (sentences, nonprojective_sentences, lifted_words, skipped).
#[pyfunction]
fn arceager_projectivize<'py>(
    py: Python<'py>,
    treebank: PyRef<'_, PyTreebank>,
) -> PyResult<(PyTreebank, Bound<'py, PyDict>)> {
    let tb = treebank.inner.clone();
    drop(treebank);
    let (out, st) = py.detach(|| projectivize(&tb));
    let d = PyDict::new(py);
    d.set_item("sentences", st.sentences)?;
    d.set_item("nonprojective_sentences", st.nonprojective_sentences)?;
    d.set_item("lifted_words", st.lifted_words)?;
    d.set_item("skipped", st.skipped)?;
    Ok((PyTreebank::new(out), d))
}

/// Undoes the HEAD encoding: a copy with every `r↑h` word moved back under the
/// nearest word labelled `h` in its head's subtree and relabelled `r`.
#[pyfunction]
fn arceager_deprojectivize(py: Python<'_>, treebank: PyRef<'_, PyTreebank>) -> PyTreebank {
    let mut tb = (*treebank.inner).clone();
    drop(treebank);
    py.detach(|| deprojectivize(&mut tb));
    PyTreebank::new(tb)
}

/// Dynamic-oracle trajectories without a model: oracle move with probability
/// `beta`, else a random valid move. Dict of arrays: `sentence`, `s0`, `b0` (n,)
/// uint32; `cost` (n, 4) int32 (-1 = invalid); `followed`, `oracle` (n,) uint8.
#[pyfunction]
#[pyo3(signature = (treebank, beta = 1.0, seed = 0, sentences = None))]
fn arceager_oracle_trajectories<'py>(
    py: Python<'py>,
    treebank: PyRef<'_, PyTreebank>,
    beta: f64,
    seed: u64,
    sentences: Option<Vec<usize>>,
) -> PyResult<Bound<'py, PyDict>> {
    let tb = treebank.inner.clone();
    drop(treebank);
    let t = py.detach(|| oracle_trajectories(&tb, beta, seed, sentences.as_deref())).py_err(py)?;
    let n = t.len();
    let d = PyDict::new(py);
    d.set_item("sentence", t.sentence.into_pyarray(py))?;
    d.set_item("s0", t.s0.into_pyarray(py))?;
    d.set_item("b0", t.b0.into_pyarray(py))?;
    d.set_item("cost", t.cost.into_pyarray(py).reshape([n, N_KINDS])?)?;
    d.set_item("followed", t.followed.into_pyarray(py))?;
    d.set_item("oracle", t.oracle.into_pyarray(py))?;
    Ok(d)
}

/// Margin presets as a dict of `train`, `accurate`, `fast` (None for an ordinary model).
pub(crate) fn presets_dict(py: Python<'_>, p: Option<MarginPresets>) -> PyResult<Option<Bound<'_, PyDict>>> {
    let Some(p) = p else { return Ok(None) };
    let d = PyDict::new(py);
    d.set_item("train", p.train)?;
    d.set_item("accurate", p.accurate)?;
    d.set_item("fast", p.fast)?;
    Ok(Some(d))
}

/// `p` with other `accurate` and `fast` margins (an error for an ordinary model's None).
pub(crate) fn other_presets(p: Option<MarginPresets>, accurate: f32, fast: f32) -> PyResult<MarginPresets> {
    let Some(p) = p else {
        return Err(PyValueError::new_err("margin presets belong to a model trained with dynamic=True"));
    };
    let new = MarginPresets { accurate, fast, ..p };
    if !new.is_valid() {
        return Err(PyValueError::new_err(format!("margins must be finite and ≥ 0, got {accurate}, {fast}")));
    }
    Ok(new)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArcEagerModel>()?;
    m.add_class::<PyArcEagerTrainer>()?;
    m.add_class::<PyTrainingSet>()?;
    m.add_class::<PyTrajectories>()?;
    m.add_class::<PyLocalClassifier>()?;
    m.add_class::<PyEnsemble>()?;
    m.add_function(wrap_pyfunction!(arceager_projectivize, m)?)?;
    m.add_function(wrap_pyfunction!(arceager_deprojectivize, m)?)?;
    m.add_function(wrap_pyfunction!(arceager_oracle_trajectories, m)?)?;
    Ok(())
}
