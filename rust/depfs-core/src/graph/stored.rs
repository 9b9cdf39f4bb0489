//! Graph parser model files: templates as canonical text, labels, weights, length
//! dictionary, hyper-parameters and a digest of the training data, in the
//! [`crate::io::model`] container (kind "graph").

use super::{GraphConfig, GraphModel, GraphTemplates, LengthDict};
use crate::io::model as container;
use crate::templates::{Family, TemplateSet};
use crate::weights::{QuantizedWeights, WeightBytes, WeightTable};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The model-file kind of graph parsers.
pub const KIND: &str = "graph";
/// Version of the payload layout below (the container has its own version).
/// 3: the config records cost-augmented training; 2: 8-bit weights with a scale per
/// template (1: f32 weights).
const PAYLOAD_VERSION: u32 = 3;

#[derive(Serialize, Deserialize)]
pub struct WeightsFile {
    width: usize,
    rows: Vec<usize>,
    scales: Vec<f32>,
    q: WeightBytes,
}

impl WeightsFile {
    fn of(w: &QuantizedWeights) -> WeightsFile {
        let (width, rows, scales, q) = w.to_parts();
        WeightsFile { width, rows, scales, q }
    }
}

/// A graph parser inside a model file.
#[derive(Serialize, Deserialize)]
pub struct GraphFile {
    payload_version: u32,
    config: GraphConfig,
    arc_templates: String,
    sib_templates: String,
    lab_templates: String,
    labels: Vec<String>,
    arc_w: WeightsFile,
    sib_w: WeightsFile,
    lab_w: WeightsFile,
    length_dict: Vec<(u64, u64, bool, u32)>,
    train_digest: u64,
}

/// A graph parser with its dynamic feature selection.
#[derive(Serialize, Deserialize)]
pub struct GraphDynfsFile {
    graph: GraphFile,
    dynfs: super::Dynfs,
    /// The prefix-trained arc weights of the rounds, if any ([`super::Dynfs::arc_w`]).
    arc_w: Option<WeightsFile>,
}

/// [`GraphDynfsFile`] with a prune margin ([`super::Dynfs::prune_margin`]).
#[derive(Serialize, Deserialize)]
pub struct GraphDynfsPrunedFile {
    dynfs: GraphDynfsFile,
    prune_margin: f32,
}

/// [`GraphDynfsFile`] with the labeler's stop rule ([`super::Dynfs::label`]) and the
/// prune margin, if any.
#[derive(Serialize, Deserialize)]
pub struct GraphDynfsLabeledFile {
    dynfs: GraphDynfsFile,
    prune_margin: Option<f32>,
    label: super::label_stop::LabelStop,
}

/// [`GraphDynfsLabeledFile`] whose stop rule has a label dictionary
/// ([`super::label_stop::LabelDict`], as its entries).
#[derive(Serialize, Deserialize)]
pub struct GraphDynfsLabelDictFile {
    labeled: GraphDynfsLabeledFile,
    label_dict: Vec<super::label_stop::DictEntry>,
}

/// A DynFS model (any of the variants above) whose policy has lexical weights
/// ([`super::Dynfs::lex`]); a model without them is written as before.
#[derive(Serialize, Deserialize)]
pub struct GraphDynfsLexFile {
    /// The model as its variant without lexical weights writes it.
    dynfs: container::Model,
    lex: Vec<f32>,
}

/// A DynFS model with a labeler stop (a [`GraphDynfsLabeledFile`] or
/// [`GraphDynfsLabelDictFile`]) whose stop adds a prefix-trained labeler's weights
/// ([`super::label_stop::LabelStop::weights`]); a model without them is written as before.
#[derive(Serialize, Deserialize)]
pub struct GraphDynfsLabelWeightsFile {
    /// The model as its variant without the stop's weights writes it.
    dynfs: container::Model,
    lab_w: WeightsFile,
}

/// A DynFS model (any of the variants above) with a tree margin
/// ([`super::Dynfs::tree_margin`]); a model without one is written as before.
#[derive(Serialize, Deserialize)]
pub struct GraphDynfsTreeMarginFile {
    /// The model as its variant without the tree margin writes it.
    dynfs: container::Model,
    tree_margin: f32,
}

impl GraphModel {
    /// Writes the model atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.save_with_info(path, &self.info)
    }

    /// [`Self::save`] with other training information.
    pub fn save_with_info(&self, path: &Path, info: &str) -> Result<()> {
        self.save_with_tagger(path, info, None)
    }

    /// [`Self::save_with_info`], with the tagger that tags the parser's input stored
    /// inside (`tagger`: its model file payload, [`crate::tagger::Tagger::to_file`]).
    pub fn save_with_tagger(
        &self,
        path: &Path,
        info: &str,
        tagger: Option<container::ModelFile>,
    ) -> Result<()> {
        let file = GraphFile {
            payload_version: PAYLOAD_VERSION,
            config: self.config.clone(),
            arc_templates: self.templates.arc.to_text(),
            sib_templates: self.templates.sib.to_text(),
            lab_templates: self.templates.lab.to_text(),
            labels: self.labels.clone(),
            arc_w: WeightsFile::of(&self.arc_w),
            sib_w: WeightsFile::of(&self.sib_w),
            lab_w: WeightsFile::of(&self.lab_w),
            length_dict: self.length_dict.entries(),
            train_digest: self.train_digest,
        };
        let model = match &self.dynfs {
            None => container::Model::Graph(file),
            Some(d) => {
                let f = GraphDynfsFile {
                    graph: file,
                    dynfs: d.clone(),
                    arc_w: d.arc_w.as_deref().map(WeightsFile::of),
                };
                let model = match (&d.label, d.prune_margin) {
                    (Some(label), prune_margin) => {
                        let labeled = GraphDynfsLabeledFile { dynfs: f, prune_margin, label: label.clone() };
                        let model = match &label.dict {
                            None => container::Model::GraphDynfsLabeled(Box::new(labeled)),
                            Some(dict) => {
                                container::Model::GraphDynfsLabelDict(Box::new(GraphDynfsLabelDictFile {
                                    labeled,
                                    label_dict: dict.entries(),
                                }))
                            }
                        };
                        match &label.weights {
                            None => model,
                            Some(w) => container::Model::GraphDynfsLabelWeights(Box::new(
                                GraphDynfsLabelWeightsFile { dynfs: model, lab_w: WeightsFile::of(w) },
                            )),
                        }
                    }
                    (None, None) => container::Model::GraphDynfs(Box::new(f)),
                    (None, Some(p)) => container::Model::GraphDynfsPruned(Box::new(GraphDynfsPrunedFile {
                        dynfs: f,
                        prune_margin: p,
                    })),
                };
                let model = if d.lex.is_empty() {
                    model
                } else {
                    container::Model::GraphDynfsLex(Box::new(GraphDynfsLexFile {
                        dynfs: model,
                        lex: d.lex.clone(),
                    }))
                };
                match d.tree_margin {
                    None => model,
                    Some(tree_margin) => {
                        container::Model::GraphDynfsTreeMargin(Box::new(GraphDynfsTreeMarginFile {
                            dynfs: model,
                            tree_margin,
                        }))
                    }
                }
            }
        };
        let model = container::with_tagger(model, tagger);
        container::save_model(path, self.inputs.clone(), info.to_string(), model)
    }

    /// Reads a model written by [`GraphModel::save`]; any inconsistency is an
    /// `Error::Model` naming the file.
    pub fn load(path: &Path) -> Result<GraphModel> {
        GraphModel::from_loaded(path, container::load_model(path)?)
    }

    /// The graph model in a model file as read (`path` names it in messages).
    pub fn from_loaded(path: &Path, file: container::Loaded) -> Result<GraphModel> {
        let bad = |msg: String| Error::Model { file: path.display().to_string(), msg };
        let mut label_dict = None;
        let (model, tree_margin) = match file.model {
            container::Model::GraphDynfsTreeMargin(t) => match t.dynfs {
                m @ (container::Model::GraphDynfs(_)
                | container::Model::GraphDynfsPruned(_)
                | container::Model::GraphDynfsLabeled(_)
                | container::Model::GraphDynfsLabelDict(_)
                | container::Model::GraphDynfsLabelWeights(_)
                | container::Model::GraphDynfsLex(_)) => (m, Some(t.tree_margin)),
                _ => {
                    return Err(bad(
                        "a tree margin around a model without DynFS (or a second tree margin)".into()
                    ))
                }
            },
            other => (other, None),
        };
        let (model, lex) = match model {
            container::Model::GraphDynfsLex(l) => match l.dynfs {
                m @ (container::Model::GraphDynfs(_)
                | container::Model::GraphDynfsPruned(_)
                | container::Model::GraphDynfsLabeled(_)
                | container::Model::GraphDynfsLabelDict(_)
                | container::Model::GraphDynfsLabelWeights(_)) => (m, l.lex),
                _ => return Err(bad("lexical policy weights around a model without DynFS".into())),
            },
            other => (other, Vec::new()),
        };
        let (model, stop_w) = match model {
            container::Model::GraphDynfsLabelWeights(l) => match l.dynfs {
                m @ (container::Model::GraphDynfsLabeled(_) | container::Model::GraphDynfsLabelDict(_)) => {
                    (m, Some(l.lab_w))
                }
                _ => return Err(bad("labeler stop weights around a model without a labeler stop".into())),
            },
            other => (other, None),
        };
        let model = match model {
            container::Model::GraphDynfsLabelDict(l) => {
                label_dict = Some(l.label_dict);
                container::Model::GraphDynfsLabeled(Box::new(l.labeled))
            }
            other => other,
        };
        let (f, dynfs, prefix_w) = match model {
            container::Model::Graph(f) => (f, None, None),
            container::Model::GraphDynfs(d) => (d.graph, Some(d.dynfs), d.arc_w),
            container::Model::GraphDynfsPruned(p) => {
                let d = p.dynfs;
                (d.graph, Some(super::Dynfs { prune_margin: Some(p.prune_margin), ..d.dynfs }), d.arc_w)
            }
            container::Model::GraphDynfsLabeled(l) => {
                let d = l.dynfs;
                let spec = super::Dynfs { prune_margin: l.prune_margin, label: Some(l.label), ..d.dynfs };
                (d.graph, Some(spec), d.arc_w)
            }
            other => return Err(container::wrong_kind(path, &other, KIND)),
        };
        if f.payload_version != PAYLOAD_VERSION {
            return Err(bad(format!("graph model payload version {} is not supported", f.payload_version)));
        }
        let set = |text: &str| {
            TemplateSet::parse(text, Family::Arc, usize::MAX).map_err(|e| bad(format!("bad templates: {e}")))
        };
        let templates = GraphTemplates {
            arc: set(&f.arc_templates)?,
            sib: set(&f.sib_templates)?,
            lab: set(&f.lab_templates)?,
        };
        let weights = |wf: WeightsFile, n_templates: usize, what: &str| -> Result<QuantizedWeights> {
            if wf.rows.len() != n_templates {
                return Err(bad(format!(
                    "{what} weights have {} blocks for {n_templates} templates",
                    wf.rows.len()
                )));
            }
            QuantizedWeights::from_parts(wf.width, &wf.rows, wf.scales, wf.q)
                .map_err(|e| bad(format!("{what} weights: {e}")))
        };
        let mut m = GraphModel::<crate::weights::Weights>::build(f.config, templates, f.labels)?;
        m.length_dict = LengthDict::from_entries(&f.length_dict);
        m.train_digest = f.train_digest;
        m.info = file.info;
        // Version-3 files: whatever the templates read.
        m.inputs = if file.inputs.is_empty() {
            container::input_columns(&m.templates.used(m.config.order))
        } else {
            file.inputs
        };
        let arc_w = weights(f.arc_w, m.arc.len(), "arc")?;
        let sib_w = weights(f.sib_w, m.sib.len(), "sibling")?;
        let lab_w = weights(f.lab_w, m.lab.len(), "label")?;
        if lab_w.width() != m.labels.len().max(1) {
            return Err(bad("label weights do not match the label set".into()));
        }
        let mut dynfs = dynfs;
        if let Some(d) = &mut dynfs {
            if let Some(w) = prefix_w {
                d.arc_w = Some(std::sync::Arc::new(weights(w, m.arc.len(), "prefix-trained arc")?));
            }
            if let (Some(l), Some(entries)) = (&mut d.label, label_dict) {
                let n_labels = m.labels.len().max(1);
                let dict = super::label_stop::LabelDict::from_entries(entries, n_labels);
                l.dict = Some(dict.map_err(|e| bad(e.to_string()))?);
            }
            if let (Some(l), Some(w)) = (&mut d.label, stop_w) {
                l.weights = Some(std::sync::Arc::new(weights(w, m.lab.len(), "labeler stop")?));
            }
            d.lex = lex;
            d.tree_margin = tree_margin;
            d.check(m.arc.len(), m.sib.len()).map_err(|e| bad(e.to_string()))?;
        }
        m.dynfs = dynfs;
        let m = m.with_weights(arc_w, sib_w, lab_w);
        if let Some(d) = &m.dynfs {
            m.check_dynfs(d).map_err(|e| bad(e.to_string()))?;
        }
        Ok(m)
    }
}
