//! Bindings of the graph parser and its trainer.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use depfs_core::graph::dynfs::{n_features, LEX_SIZE};
use depfs_core::graph::label_stop::{self, DictEntry, LabelDict, LabelStop};
use depfs_core::graph::{
    Decider, DecoderKind, Dynfs, GraphConfig, GraphModel, GraphTemplates, GraphTrainer, Prepared, Scratch,
    Update,
};
use depfs_core::io::model as container;
use depfs_core::templates::{Family, TemplateSet};
use depfs_core::weights::{QuantizedWeights, TemplateCounts};
use depfs_core::{Error, Treebank};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::IntoPyResult;
use crate::treebank::{parse_released, with_margins, PyTreebank};

/// The kind of model a file holds ("graph", ...), after checking the container; with
/// `checked=False`, from its header alone (the rest is checked when it is loaded).
#[pyfunction]
#[pyo3(signature = (path, checked = true))]
fn model_kind(py: Python<'_>, path: PathBuf, checked: bool) -> PyResult<String> {
    py.detach(|| if checked { container::peek_kind(&path) } else { container::header_kind(&path) }).py_err(py)
}

/// The container version and kind of a model file, after checking the container.
#[pyfunction]
fn model_file_header(py: Python<'_>, path: PathBuf) -> PyResult<(u32, String)> {
    py.detach(|| container::peek(&path)).py_err(py)
}

/// What a model file holds, loaded by [`load_model`].
// One value per load, moved once: its size does not matter.
#[allow(clippy::large_enum_variant)]
enum AnyModel {
    Graph(GraphModel),
    ArcEager(depfs_core::transition::parser::ArcEagerParser),
    Ensemble(depfs_core::transition::local::Ensemble),
    Tagger(depfs_core::tagger::Tagger),
}

/// Any model file, read once (checksum checked): its kind, the model (a GraphModel,
/// ArcEagerModel, Ensemble or TaggerModel) and the tagger stored inside a parser's file
/// (None when there is none). With `kind`, another kind of model is refused.
#[pyfunction]
#[pyo3(signature = (path, kind = None))]
fn load_model(
    py: Python<'_>,
    path: PathBuf,
    kind: Option<String>,
) -> PyResult<(String, Py<PyAny>, Option<crate::tagger::PyTaggerModel>)> {
    use depfs_core::tagger::Tagger;
    let (got, model, tagger) = py
        .detach(|| -> depfs_core::Result<_> {
            let mut file = container::load_model(&path)?;
            let got = file.model.kind();
            if let Some(want) = kind.as_deref().filter(|w| *w != got) {
                return Err(container::wrong_kind(&path, &file.model, want));
            }
            let tagger = file.tagger.take().map(|f| Tagger::from_file(&path, f)).transpose()?;
            let model = match got {
                "graph" => AnyModel::Graph(GraphModel::from_loaded(&path, file)?),
                "arc-eager" => AnyModel::ArcEager(
                    depfs_core::transition::parser::ArcEagerParser::from_loaded(&path, file)?,
                ),
                "ensemble" => {
                    AnyModel::Ensemble(depfs_core::transition::local::Ensemble::from_loaded(&path, file)?)
                }
                _ => AnyModel::Tagger(Tagger::from_file(
                    &path,
                    container::ModelFile { inputs: file.inputs, info: file.info, model: file.model },
                )?),
            };
            Ok((got, model, tagger))
        })
        .py_err(py)?;
    let model = match model {
        AnyModel::Graph(m) => Py::new(py, PyGraphModel::new(m))?.into_any(),
        AnyModel::ArcEager(inner) => Py::new(py, crate::transition::PyArcEagerModel { inner })?.into_any(),
        AnyModel::Ensemble(inner) => Py::new(py, crate::transition::PyEnsemble { inner })?.into_any(),
        AnyModel::Tagger(inner) => Py::new(py, crate::tagger::PyTaggerModel { inner })?.into_any(),
    };
    Ok((got.to_string(), model, tagger.map(|inner| crate::tagger::PyTaggerModel { inner })))
}

/// Number of policy features of a DynFS model with `groups` groups (He et al. 2013 §5.4).
#[pyfunction]
fn dynfs_n_features(groups: usize) -> usize {
    n_features(groups)
}

/// Number of weights of a DynFS policy's lexical table (He et al. 2013 §5.4's acquired
/// parsing features, hashed: [`depfs_core::graph::dynfs::lex_index`]).
#[pyfunction]
fn dynfs_lex_size() -> usize {
    LEX_SIZE
}

/// Lexical policy weights from Python: None keeps `own`, an empty array means none.
fn lex_of(lex: Option<PyReadonlyArray1<'_, f32>>, own: Option<&Dynfs>) -> PyResult<Vec<f32>> {
    match lex {
        Some(a) => Ok(a.as_slice()?.to_vec()),
        None => Ok(own.map(|d| d.lex.clone()).unwrap_or_default()),
    }
}

/// A trained graph-based parser (weights live in Rust).
#[pyclass(name = "GraphModel", module = "depfs._core", frozen)]
pub struct PyGraphModel {
    pub inner: Arc<GraphModel>,
    /// The last treebank prepared for `arc_scores` / `group_scores` (vocabulary
    /// hashes), reused while Python asks about the same treebank: a selection loop
    /// calls these once per batch of sentences, not once per treebank.
    prepared: Mutex<Option<(Weak<Treebank>, Arc<Prepared>)>>,
}

impl PyGraphModel {
    pub(crate) fn new(m: GraphModel) -> Self {
        PyGraphModel { inner: Arc::new(m), prepared: Mutex::new(None) }
    }

    /// `tb` prepared for this model, from the cache when it is the treebank asked last.
    /// For each sentence: the arc scores of every group (all templates for `None`),
    /// group after group, and n + 1.
    fn scores_by_group(
        &self,
        py: Python<'_>,
        tb: &Arc<Treebank>,
        sentences: &[usize],
        groups: &[Option<Vec<usize>>],
        prune: bool,
    ) -> PyResult<Vec<(Vec<f64>, usize)>> {
        check_sentences(tb, sentences).py_err(py)?;
        let prep = self.prepared(tb);
        let mut sc = Scratch::default();
        let mut out = Vec::with_capacity(sentences.len());
        for &s in sentences {
            let n1 = tb.sentences[s].len as usize + 1;
            let mut all = Vec::with_capacity(groups.len() * n1 * n1);
            for g in groups {
                all.extend(
                    self.inner.arc_scores(tb, &prep, s, g.as_deref(), prune, None, &mut sc).py_err(py)?,
                );
            }
            out.push((all, n1));
        }
        Ok(out)
    }

    /// The labeler weights a stop adds, from a `label_weights` argument: None (not
    /// given): this model's own stop's weights, if any; this model itself: its own
    /// labeler (no second table); another model: a copy of its labeler's weights, checked
    /// against this model's labeler (same templates and labels; block sizes are checked
    /// with the spec).
    fn stop_weights(
        &self,
        py: Python<'_>,
        given: Option<&PyGraphModel>,
    ) -> PyResult<Option<Arc<QuantizedWeights>>> {
        let Some(model) = given else {
            return Ok(self
                .inner
                .dynfs
                .as_ref()
                .and_then(|d| d.label.as_ref())
                .and_then(|l| l.weights.clone()));
        };
        if Arc::ptr_eq(&model.inner, &self.inner) {
            return Ok(None);
        }
        let (a, b) = (&self.inner, &model.inner);
        if a.templates.lab != b.templates.lab || a.labels != b.labels {
            return Err(Error::InvalidArgument(
                "label_weights: that model has other labeler templates or labels than this one".into(),
            ))
            .py_err(py);
        }
        Ok(Some(Arc::new(b.lab_w.clone())))
    }

    /// A label dictionary from Python entries (None or empty: none), checked against
    /// this model's labels.
    fn dict_of(&self, py: Python<'_>, entries: Option<Vec<DictEntry>>) -> PyResult<Option<LabelDict>> {
        match entries {
            Some(e) if !e.is_empty() => {
                Ok(Some(LabelDict::from_entries(e, self.inner.labels.len().max(1)).py_err(py)?))
            }
            _ => Ok(None),
        }
    }

    fn prepared(&self, tb: &Arc<Treebank>) -> Arc<Prepared> {
        let mut cache = self.prepared.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((seen, prep)) = cache.as_ref() {
            if seen.upgrade().is_some_and(|t| Arc::ptr_eq(&t, tb)) {
                return Arc::clone(prep);
            }
        }
        let prep = Arc::new(self.inner.prepare(tb));
        *cache = Some((Arc::downgrade(tb), Arc::clone(&prep)));
        prep
    }
}

fn check_sentences(tb: &depfs_core::Treebank, sentences: &[usize]) -> depfs_core::Result<()> {
    match sentences.iter().find(|&&s| s >= tb.len()) {
        Some(s) => {
            Err(Error::InvalidArgument(format!("sentence index {s} out of range ({} sentences)", tb.len())))
        }
        None => Ok(()),
    }
}

#[pymethods]
impl PyGraphModel {
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyGraphModel> {
        let m = py.detach(|| GraphModel::load(&path)).py_err(py)?;
        Ok(PyGraphModel::new(m))
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
    /// The model's dynamic feature selection as (groups, policy weights, threshold),
    /// or None (He et al. 2013).
    #[getter]
    fn dynfs(&self) -> Option<(Vec<Vec<u32>>, Vec<f32>, f32)> {
        self.inner.dynfs.as_ref().map(|d| (d.groups.clone(), d.weights.clone(), d.threshold))
    }

    /// The DynFS policy's lexical weights (float32, [`LEX_SIZE`]), or None (a policy
    /// over the meta-features only; [`Dynfs::lex`]).
    #[getter]
    fn dynfs_lex<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f32>>> {
        let d = self.inner.dynfs.as_ref()?;
        (!d.lex.is_empty()).then(|| d.lex.clone().into_pyarray(py))
    }

    /// The DynFS margin pruning of added words, or None ([`Dynfs::prune_margin`]).
    #[getter]
    fn dynfs_prune_margin(&self) -> Option<f32> {
        self.inner.dynfs.as_ref().and_then(|d| d.prune_margin)
    }

    /// The DynFS tree margin after round 1, or None ([`Dynfs::tree_margin`]).
    #[getter]
    fn dynfs_tree_margin(&self) -> Option<f32> {
        self.inner.dynfs.as_ref().and_then(|d| d.tree_margin)
    }

    /// The DynFS labeler's stop rule as (template order, margin), or None (the full
    /// labeler; [`Dynfs::label`]).
    #[getter]
    fn dynfs_label_stop(&self) -> Option<(Vec<u32>, f32, Vec<f32>, u32)> {
        let l = self.inner.dynfs.as_ref()?.label.as_ref()?;
        Some((l.order.clone(), l.margin, l.scale.clone(), l.every))
    }

    /// Whether the DynFS labeler's stop adds a prefix-trained labeler's weights
    /// ([`LabelStop::weights`]); None without a stop.
    #[getter]
    fn dynfs_label_prefix_trained(&self) -> Option<bool> {
        Some(self.inner.dynfs.as_ref()?.label.as_ref()?.weights.is_some())
    }

    /// The DynFS labeler's dictionary as entries (head UPOS hash, modifier UPOS hash,
    /// head before modifier, label indices), or None ([`LabelStop::dict`]).
    #[getter]
    fn dynfs_label_dict(&self) -> Option<Vec<DictEntry>> {
        Some(self.inner.dynfs.as_ref()?.label.as_ref()?.dict.as_ref()?.entries())
    }

    /// The label dictionary of `treebank`'s gold arcs over this model's labels
    /// ([`LabelDict::build`]), as entries.
    fn label_dict(&self, py: Python<'_>, treebank: PyRef<'_, PyTreebank>) -> Vec<DictEntry> {
        let tb = Arc::clone(&treebank.inner);
        drop(treebank);
        let labels = &self.inner.labels;
        py.detach(|| LabelDict::build(&tb, labels).entries())
    }

    /// [`label_stop::tail_scales`]: the stop rule's scale per position of `order`.
    #[staticmethod]
    fn label_tail_scales(order: Vec<u32>, spreads: Vec<f64>) -> PyResult<Vec<f32>> {
        if order.iter().any(|&t| t as usize >= spreads.len()) {
            return Err(pyo3::exceptions::PyValueError::new_err("order: a template index without a spread"));
        }
        Ok(label_stop::tail_scales(&order, &spreads))
    }

    /// Per labeler template, the mean spread of its rows over `treebank`'s gold arcs
    /// ([`GraphModel::label_spreads`]: the DynFS labeler's order, descending); with
    /// `stop`, of the weights the model's labeler stop adds ([`LabelStop::weights`]; its
    /// own labeler's when it has none).
    #[pyo3(signature = (treebank, stop = false))]
    fn label_spreads(&self, py: Python<'_>, treebank: PyRef<'_, PyTreebank>, stop: bool) -> Vec<f64> {
        let tb = Arc::clone(&treebank.inner);
        drop(treebank);
        let m = &self.inner;
        let stop_w = m.dynfs.as_ref().and_then(|d| d.label.as_ref()).and_then(|l| l.weights.clone());
        py.detach(|| match stop_w.filter(|_| stop) {
            Some(w) => m.label_spreads_of(&*w, &tb),
            None => m.label_spreads(&tb),
        })
    }

    /// A copy of this model with dynamic feature selection `groups` (arc template
    /// indices, a partition of the arc set), policy `weights` and `threshold`.
    /// With `prefix`, a model trained with `prefix_groups` on the same arc templates,
    /// whose arc weights the rounds score with; without, the rounds keep this model's
    /// own rounds' weights (a DynFS model given another policy or groups), if any.
    /// `prune_margin`: see [`Dynfs::prune_margin`] (None: no margin pruning);
    /// `label_stop`: (labeler template order, margin), see [`Dynfs::label`] (None: the
    /// full labeler); `label_dict`: its dictionary's entries ([`LabelStop::dict`]; None
    /// or empty: none); `lex`: the policy's lexical weights (float32, [`LEX_SIZE`];
    /// [`Dynfs::lex`]; None: this model's own, if any; empty: none); `label_weights`: a
    /// model (same labeler templates and labels) whose labeler the stop adds, trained
    /// with `label_prefix` ([`LabelStop::weights`]): None, this model's own stop's
    /// weights, if any; this model itself, its own labeler. Only with a finite
    /// `label_stop` margin (an infinite one is the full model's labeler).
    /// `tree_margin`: see [`Dynfs::tree_margin`] (None: no tree-margin pruning).
    #[pyo3(signature = (groups, weights, threshold, prefix = None, prune_margin = None, label_stop = None, label_dict = None, lex = None, label_weights = None, tree_margin = None))]
    #[allow(clippy::too_many_arguments)]
    fn with_dynfs(
        &self,
        py: Python<'_>,
        groups: Vec<Vec<u32>>,
        weights: Vec<f32>,
        threshold: f32,
        prefix: Option<PyRef<'_, PyGraphModel>>,
        prune_margin: Option<f32>,
        label_stop: Option<(Vec<u32>, f32, Vec<f32>, u32)>,
        label_dict: Option<Vec<DictEntry>>,
        lex: Option<PyReadonlyArray1<'_, f32>>,
        label_weights: Option<PyRef<'_, PyGraphModel>>,
        tree_margin: Option<f32>,
    ) -> PyResult<PyGraphModel> {
        let dict = self.dict_of(py, label_dict)?;
        let given = label_weights.is_some();
        let stop_w = self.stop_weights(py, label_weights.as_deref())?;
        if given && label_stop.as_ref().is_none_or(|l| l.1 == f32::INFINITY) {
            return Err(Error::InvalidArgument(
                "label_weights: a stop with a finite margin reads them (label_stop)".into(),
            ))
            .py_err(py);
        }
        let lex = lex_of(lex, self.inner.dynfs.as_ref())?;
        let arc_w = match prefix {
            // The model's own rounds' weights, if it has any (a new policy or groups for it).
            None => self.inner.dynfs.as_ref().and_then(|d| d.arc_w.clone()),
            Some(p) if p.inner.templates.arc == self.inner.templates.arc => {
                Some(Arc::new(p.inner.arc_w.clone()))
            }
            Some(_) => {
                return Err(Error::InvalidArgument(
                    "the prefix-trained model has other arc templates than this one".into(),
                ))
                .py_err(py)
            }
        };
        let label = label_stop.map(|(order, margin, scale, every)| LabelStop {
            order,
            margin,
            scale,
            every,
            dict,
            // (the model's own, if not given: an infinite margin then keeps no table)
            weights: stop_w.filter(|_| margin.is_finite()),
        });
        let spec = Dynfs { groups, weights, threshold, arc_w, prune_margin, tree_margin, label, lex };
        self.inner.check_dynfs(&spec).py_err(py)?;
        let mut m = (*self.inner).clone();
        m.dynfs = Some(spec);
        Ok(PyGraphModel::new(m))
    }

    /// Runs dynamic feature selection (Algorithm 1) over `treebank` with `groups`
    /// and, with `expert`, the expert policy (locks the gold arcs), else the linear
    /// policy `weights` / `threshold` (the model's own when None). Returns the parsed
    /// treebank, a dict of statistics and, with `record`, every decision's policy
    /// features (float32, one row per decision) and the expert's action (uint8, 1 =
    /// lock) on sentences with a complete gold tree; the statistics then also hold
    /// `lex_ids` (uint32, one row per decision: [`depfs_core::graph::dynfs::lex_index`]
    /// of each group-1 template's feature of the arc). `lex`: the policy's lexical
    /// weights (None: the model's own, if any; empty: none; [`Dynfs::lex`]).
    /// `prune_margin` overrides the model's own ([`Dynfs::prune_margin`]; inf: none);
    /// so do `tree_margin` ([`Dynfs::tree_margin`]; inf: none), `label_margin` (inf: the full labeler), `label_order` (the model's own
    /// order, else the labeler's file order), `label_scale` (else all 1) and `label_every`
    /// (else 1) for the labeler's stop rule ([`Dynfs::label`], [`LabelStop`]), and
    /// `label_dict` (entries; empty: none; else the model's own, if any) and
    /// `label_weights` (a model whose labeler the stop adds, as in `with_dynfs`: None,
    /// the model's own stop's weights, if any; the model itself, its own labeler).
    #[pyo3(signature = (treebank, *, groups = None, weights = None, threshold = None, expert = false, record = false, threads = 1, prune_margin = None, tree_margin = None, label_margin = None, label_order = None, label_scale = None, label_every = None, label_dict = None, lex = None, label_weights = None))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn run_dynfs<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'_, PyTreebank>,
        groups: Option<Vec<Vec<u32>>>,
        weights: Option<Vec<f32>>,
        threshold: Option<f32>,
        expert: bool,
        record: bool,
        threads: usize,
        prune_margin: Option<f32>,
        tree_margin: Option<f32>,
        label_margin: Option<f32>,
        label_order: Option<Vec<u32>>,
        label_scale: Option<Vec<f32>>,
        label_every: Option<u32>,
        label_dict: Option<Vec<DictEntry>>,
        lex: Option<PyReadonlyArray1<'_, f32>>,
        label_weights: Option<PyRef<'_, PyGraphModel>>,
    ) -> PyResult<(PyTreebank, Bound<'py, PyDict>, Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<u8>>)> {
        let own = self.inner.dynfs.as_ref();
        let groups = match groups.or_else(|| own.map(|d| d.groups.clone())) {
            Some(g) => g,
            None => {
                return Err(Error::InvalidArgument(
                    "this model has no dynamic feature selection (groups)".into(),
                ))
                .py_err(py)
            }
        };
        let k = groups.len();
        let weights =
            weights.or_else(|| own.map(|d| d.weights.clone())).unwrap_or_else(|| vec![0.0; n_features(k)]);
        let threshold = threshold.or(own.map(|d| d.threshold)).unwrap_or(0.0);
        let prune_margin = match prune_margin {
            Some(p) if p == f32::INFINITY => None,
            Some(p) => Some(p),
            None => own.and_then(|d| d.prune_margin),
        };
        let tree_margin = match tree_margin {
            Some(p) if p == f32::INFINITY => None,
            Some(p) => Some(p),
            None => own.and_then(|d| d.tree_margin),
        };
        let own_label = own.and_then(|d| d.label.as_ref());
        let n_lab = self.inner.templates.lab.len();
        let label = match label_margin.or(own_label.map(|l| l.margin)) {
            Some(margin) if margin != f32::INFINITY => Some(LabelStop {
                order: label_order
                    .or_else(|| own_label.map(|l| l.order.clone()))
                    .unwrap_or_else(|| (0..n_lab as u32).collect()),
                margin,
                scale: label_scale
                    .or_else(|| own_label.map(|l| l.scale.clone()))
                    .unwrap_or_else(|| vec![1.0; n_lab]),
                every: label_every.or(own_label.map(|l| l.every)).unwrap_or(1),
                dict: match label_dict {
                    Some(entries) => self.dict_of(py, Some(entries))?,
                    None => own_label.and_then(|l| l.dict.clone()),
                },
                weights: self.stop_weights(py, label_weights.as_deref())?,
            }),
            _ => None,
        };
        let arc_w = own.and_then(|d| d.arc_w.clone());
        let lex = lex_of(lex, own)?;
        let spec = Dynfs { groups, weights, threshold, arc_w, prune_margin, tree_margin, label, lex };
        let tb = Arc::clone(&treebank.inner);
        drop(treebank);
        let m = &self.inner;
        let run = py
            .detach(|| {
                let decider = if expert {
                    Decider::Expert
                } else {
                    Decider::Linear { weights: &spec.weights, threshold: spec.threshold }
                };
                m.parse_dynfs(&tb, &spec, decider, record, threads)
            })
            .py_err(py)?;
        let st = run.stats;
        let d = PyDict::new(py);
        for (key, v) in [
            ("sentences", st.sentences),
            ("arcs", st.arcs),
            ("evaluated", st.evaluated),
            ("full", st.full),
            ("decisions", st.decisions),
            ("locks", st.locks),
            ("propagated", st.propagated),
            ("rounds", st.rounds),
            ("fails", st.fails),
            ("early", st.early),
            ("sib_evaluated", st.sib_evaluated),
            ("sib_full", st.sib_full),
            ("lab_evaluated", st.lab_evaluated),
            ("lab_full", st.lab_full),
        ] {
            d.set_item(key, v)?;
        }
        // Arc and sibling template evaluations alike (second order: both).
        let share = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        d.set_item("cost", share(st.evaluated + st.sib_evaluated, st.full + st.sib_full))?;
        d.set_item("arc_cost", share(st.evaluated, st.full))?;
        d.set_item("sib_cost", share(st.sib_evaluated, st.sib_full))?;
        // The labeler's share of its templates (not in `cost`, which is the arc scorer's).
        d.set_item("lab_cost", share(st.lab_evaluated, st.lab_full))?;
        let width = n_features(k);
        let n = run.labels.len();
        if record {
            let ids = numpy::ndarray::Array2::from_shape_vec((n, run.lex_width), run.lex_ids)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
            d.set_item("lex_ids", ids.into_pyarray(py))?;
        }
        let rows = numpy::ndarray::Array2::from_shape_vec((n, width), run.rows)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        Ok((PyTreebank::new(run.parsed), d, rows.into_pyarray(py), run.labels.into_pyarray(py)))
    }

    /// Training information from the model file (JSON; empty when unknown).
    #[getter]
    fn info(&self) -> String {
        self.inner.info.clone()
    }

    /// Parses a treebank; with `scores`, each word's margin goes to MISC (`Margin=`).
    #[pyo3(signature = (treebank, threads = 1, scores = false))]
    fn parse(
        &self,
        py: Python<'_>,
        treebank: PyRef<'_, PyTreebank>,
        threads: usize,
        scores: bool,
    ) -> PyResult<PyTreebank> {
        parse_released(py, treebank, |tb| with_margins(self.inner.parse_scored(tb, threads, scores)))
    }

    /// Arc score matrices `scores[dep, head]` (n+1, n+1) of the given sentences,
    /// restricted to the arc templates `templates` (indices; all when None). With
    /// `prune`, arcs the length dictionary rejects are -inf.
    #[pyo3(signature = (treebank, sentences, templates = None, prune = false))]
    fn arc_scores<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'_, PyTreebank>,
        sentences: Vec<usize>,
        templates: Option<Vec<usize>>,
        prune: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let groups = [templates];
        self.scores_by_group(py, &treebank.inner, &sentences, &groups, prune)?
            .into_iter()
            .map(|(v, n1)| Ok(PyArray1::from_vec(py, v).reshape([n1, n1])?.into_any()))
            .collect()
    }

    /// Per-group partial arc scores: one (G, n+1, n+1) array per sentence, group g
    /// summing the arc templates `groups[g]`.
    #[pyo3(signature = (treebank, sentences, groups, prune = false))]
    fn group_scores<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'_, PyTreebank>,
        sentences: Vec<usize>,
        groups: Vec<Vec<usize>>,
        prune: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let groups: Vec<Option<Vec<usize>>> = groups.into_iter().map(Some).collect();
        self.scores_by_group(py, &treebank.inner, &sentences, &groups, prune)?
            .into_iter()
            .map(|(v, n1)| Ok(PyArray1::from_vec(py, v).reshape([groups.len(), n1, n1])?.into_any()))
            .collect()
    }

    /// Template evaluations per arc template when scoring every sentence of `treebank`
    /// (with `prune`, only arcs the length dictionary keeps count).
    #[pyo3(signature = (treebank, templates = None, prune = true))]
    fn template_evaluations<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'_, PyTreebank>,
        templates: Option<Vec<usize>>,
        prune: bool,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let tb = treebank.inner.clone();
        let m = self.inner.clone();
        let counts = py
            .detach(move || -> depfs_core::Result<TemplateCounts> {
                let prep = m.prepare(&tb);
                let mut sc = Scratch::default();
                let mut counts = TemplateCounts::new(m.n_arc_templates());
                for s in 0..tb.len() {
                    m.arc_scores(&tb, &prep, s, templates.as_deref(), prune, Some(&mut counts), &mut sc)?;
                }
                Ok(counts)
            })
            .py_err(py)?;
        Ok(PyArray1::from_vec(py, counts.per_template))
    }

    /// Share of gold and non-gold arcs of `treebank` the length dictionary prunes.
    fn length_dict_stats<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'_, PyTreebank>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let st = self.inner.length_dict.prune_stats(&treebank.inner);
        let d = PyDict::new(py);
        d.set_item("gold_arcs", st.gold_arcs)?;
        d.set_item("gold_pruned", st.gold_pruned)?;
        d.set_item("other_arcs", st.other_arcs)?;
        d.set_item("other_pruned", st.other_pruned)?;
        d.set_item("gold_pruned_share", st.gold_pruned as f64 / st.gold_arcs.max(1) as f64)?;
        d.set_item("other_pruned_share", st.other_pruned as f64 / st.other_arcs.max(1) as f64)?;
        Ok(d)
    }

    /// Boolean (n+1, n+1) mask `[dep, head]` of arcs the length dictionary keeps.
    fn length_dict_mask<'py>(
        &self,
        py: Python<'py>,
        treebank: PyRef<'_, PyTreebank>,
        sentence: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        check_sentences(&treebank.inner, &[sentence]).py_err(py)?;
        let mask = self.inner.length_dict.mask(&treebank.inner, sentence);
        let n1 = treebank.inner.sentences[sentence].len as usize + 1;
        Ok(PyArray1::from_vec(py, mask).reshape([n1, n1])?.into_any())
    }

    /// Longest training arc for (head UPOS or None for ROOT, modifier UPOS, head left of modifier).
    #[pyo3(signature = (head_upos, mod_upos, head_left))]
    fn max_arc_length(&self, head_upos: Option<&str>, mod_upos: &str, head_left: bool) -> Option<u32> {
        self.inner.length_dict.max_len(head_upos, mod_upos, head_left)
    }

    #[getter]
    fn labels(&self) -> Vec<String> {
        self.inner.labels.clone()
    }
    /// CoNLL-U columns parsing needs (read by the templates, filled in training).
    #[getter]
    fn input_columns(&self) -> Vec<String> {
        self.inner.inputs.clone()
    }
    #[getter]
    fn order(&self) -> u8 {
        self.inner.config.order
    }
    #[getter]
    fn decoder(&self) -> &'static str {
        self.inner.config.decoder.name()
    }
    #[getter]
    fn train_digest(&self) -> u64 {
        self.inner.train_digest
    }
    /// Canonical texts of the arc, sibling and labeler templates.
    #[getter]
    fn arc_templates(&self) -> Vec<String> {
        self.inner.templates.arc.templates.iter().map(|t| t.text.clone()).collect()
    }
    #[getter]
    fn sibling_templates(&self) -> Vec<String> {
        self.inner.templates.sib.templates.iter().map(|t| t.text.clone()).collect()
    }
    #[getter]
    fn labeler_templates(&self) -> Vec<String> {
        self.inner.templates.lab.templates.iter().map(|t| t.text.clone()).collect()
    }
    /// Number of weights (arc, sibling, labeler).
    #[getter]
    fn n_params(&self) -> (usize, usize, usize) {
        let m = &self.inner;
        (m.arc_w.n_params(), m.sib_w.n_params(), m.lab_w.n_params())
    }
}

/// Trains a graph parser one epoch per call (Python owns the epoch loop).
#[pyclass(name = "GraphTrainer", module = "depfs._core")]
pub struct PyGraphTrainer {
    inner: GraphTrainer,
}

#[pymethods]
impl PyGraphTrainer {
    #[new]
    #[pyo3(signature = (train, arc_templates, sibling_templates, labeler_templates, *, order = 1, decoder = "eisner",
                        seed = 1, min_bits = 6, max_bits = 18, prune = true, max_atoms = 3, update = "mira", mira_c = 1.0, cost_augmented = true,
                        prefix_groups = None, label_prefix = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        train: PyRef<'_, PyTreebank>,
        arc_templates: &str,
        sibling_templates: &str,
        labeler_templates: &str,
        order: u8,
        decoder: &str,
        seed: u64,
        min_bits: u32,
        max_bits: u32,
        prune: bool,
        max_atoms: usize,
        update: &str,
        mira_c: f32,
        cost_augmented: bool,
        prefix_groups: Option<Vec<Vec<u32>>>,
        label_prefix: Option<(Vec<u32>, usize, f32, f32)>,
    ) -> PyResult<PyGraphTrainer> {
        let set = |text: &str| TemplateSet::parse(text, Family::Arc, max_atoms);
        let templates = GraphTemplates {
            arc: set(arc_templates).py_err(py)?,
            sib: set(sibling_templates).py_err(py)?,
            lab: set(labeler_templates).py_err(py)?,
        };
        let decoder = DecoderKind::parse(decoder).py_err(py)?;
        if !(1..=30).contains(&max_bits) || min_bits > max_bits {
            return Err(Error::InvalidArgument(format!(
                "need 1 <= min_bits <= max_bits <= 30, got {min_bits}, {max_bits}"
            )))
            .py_err(py);
        }
        let update = match update {
            "perceptron" => Update::Perceptron,
            "mira" if mira_c > 0.0 => Update::Mira { c: mira_c },
            "mira" => {
                return Err(Error::InvalidArgument(format!("mira_c must be a number > 0, got {mira_c}")))
                    .py_err(py)
            }
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "update must be \"perceptron\" or \"mira\", got {update:?}"
                )))
                .py_err(py)
            }
        };
        let config = GraphConfig {
            order,
            decoder,
            epochs: 0,
            seed,
            min_bits,
            max_bits,
            prune,
            update,
            cost_augmented,
        };
        let tb = train.inner.clone();
        let inner = py
            .detach(move || {
                let mut t = GraphTrainer::new(&tb, templates, config)?;
                if let Some(g) = prefix_groups {
                    t.set_prefix_groups(g)?;
                }
                if let Some((order, every, margin, full)) = label_prefix {
                    t.set_label_prefix(order, every, margin, full)?;
                }
                Ok(t)
            })
            .py_err(py)?;
        Ok(PyGraphTrainer { inner })
    }

    /// Runs one epoch (GIL released); returns `epoch` (from 1), `train_accuracy`
    /// (share of training words whose head the cost-augmented decode got right) and
    /// `seconds`, the keys of the arc-eager trainer.
    fn epoch<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = &mut self.inner;
        let st = py.detach(|| inner.epoch()).py_err(py)?;
        let d = PyDict::new(py);
        d.set_item("epoch", st.epoch)?;
        d.set_item("train_accuracy", st.train_uas)?;
        d.set_item("seconds", st.seconds)?;
        Ok(d)
    }

    /// The model with averaged weights so far.
    fn model(&self, py: Python<'_>) -> PyGraphModel {
        let inner = &self.inner;
        PyGraphModel::new(py.detach(|| inner.model()))
    }

    #[getter]
    fn skipped_sentences(&self) -> usize {
        self.inner.skipped_sentences
    }

    /// The sentences trained on, in order (a complete tree of at most
    /// `GRAPH_MAX_EXACT_WORDS` words).
    #[getter]
    fn used_sentences(&self) -> Vec<usize> {
        self.inner.used_sentences().to_vec()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGraphModel>()?;
    m.add_class::<PyGraphTrainer>()?;
    m.add_function(wrap_pyfunction!(model_kind, m)?)?;
    m.add_function(wrap_pyfunction!(dynfs_n_features, m)?)?;
    m.add_function(wrap_pyfunction!(dynfs_lex_size, m)?)?;
    m.add_function(wrap_pyfunction!(model_file_header, m)?)?;
    m.add_function(wrap_pyfunction!(load_model, m)?)?;
    m.add("GRAPH_MAX_EXACT_WORDS", depfs_core::graph::MAX_EXACT_WORDS)?;
    m.add("GRAPH_CHUNK_WORDS", depfs_core::graph::CHUNK_WORDS)?;
    m.add("GRAPH_CHUNK_WORDS_2", depfs_core::graph::CHUNK_WORDS_2)?;
    Ok(())
}
