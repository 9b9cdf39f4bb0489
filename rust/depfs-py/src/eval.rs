//! Bindings of evaluation, treebank statistics and seeded perturbation.
//! Results cross as plain dicts of counts; `depfs.evaluate` builds the dataclasses.

use depfs_core::eval::{evaluate, EvalOptions, TAG_COLUMNS};
use depfs_core::perturb::perturb;
use depfs_core::stats::treebank_stats;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::IntoPyResult;
use crate::treebank::PyTreebank;

/// Correct-word counts of `system` against `gold` (same words, FORM by FORM).
#[pyfunction]
#[pyo3(signature = (gold, system, full_labels = false, tags_only = false))]
fn evaluate_counts<'py>(
    py: Python<'py>,
    gold: PyRef<'py, PyTreebank>,
    system: PyRef<'py, PyTreebank>,
    full_labels: bool,
    tags_only: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = evaluate(&gold.inner, &system.inner, EvalOptions { full_labels, tags_only }).py_err(py)?;
    let d = PyDict::new(py);
    d.set_item("words", sc.words)?;
    d.set_item("words_nopunct", sc.words_nopunct)?;
    d.set_item("uas_correct", sc.uas_correct)?;
    d.set_item("las_correct", sc.las_correct)?;
    d.set_item("label_correct", sc.label_correct)?;
    d.set_item("uas_correct_nopunct", sc.uas_correct_nopunct)?;
    d.set_item("las_correct_nopunct", sc.las_correct_nopunct)?;
    d.set_item("label_correct_nopunct", sc.label_correct_nopunct)?;
    d.set_item("upos_correct", sc.upos_correct)?;
    d.set_item("xpos_correct", sc.xpos_correct)?;
    d.set_item("ufeats_correct", sc.ufeats_correct)?;
    d.set_item("alltags_correct", sc.alltags_correct)?;
    d.set_item("lemma_correct", sc.lemma_correct)?;
    for (side, filled) in [("gold", sc.gold_filled), ("system", sc.system_filled)] {
        for (column, n) in TAG_COLUMNS.iter().zip(filled) {
            d.set_item(format!("{side}_{}", column.to_lowercase()), n)?;
        }
    }
    Ok(d)
}

/// Counts describing a treebank (see `depfs_core::stats`).
#[pyfunction]
fn treebank_stats_counts<'py>(
    py: Python<'py>,
    treebank: PyRef<'py, PyTreebank>,
) -> PyResult<Bound<'py, PyDict>> {
    let st = treebank_stats(&treebank.inner);
    let d = PyDict::new(py);
    d.set_item("sentences", st.sentences)?;
    d.set_item("words", st.words)?;
    d.set_item("max_length", st.max_length)?;
    d.set_item("arcs", st.arcs)?;
    d.set_item("nonprojective_sentences", st.nonprojective_sentences)?;
    d.set_item("nonprojective_arcs", st.nonprojective_arcs)?;
    d.set_item("multiword_tokens", st.multiword_tokens)?;
    d.set_item("empty_nodes", st.empty_nodes)?;
    d.set_item("roots", st.roots)?;
    d.set_item("multiroot_sentences", st.multiroot_sentences)?;
    let labels = PyDict::new(py);
    for (label, count) in &st.labels {
        labels.set_item(label, count)?;
    }
    d.set_item("labels", labels)?;
    Ok(d)
}

/// A copy of `treebank` with seeded head and label errors that keeps every tree valid.
#[pyfunction]
#[pyo3(signature = (treebank, head_rate, label_rate, seed))]
fn perturb_treebank(
    py: Python<'_>,
    treebank: PyRef<'_, PyTreebank>,
    head_rate: f64,
    label_rate: f64,
    seed: u64,
) -> PyResult<PyTreebank> {
    let inner = perturb(&treebank.inner, head_rate, label_rate, seed).py_err(py)?;
    Ok(PyTreebank::new(inner))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(evaluate_counts, m)?)?;
    m.add_function(wrap_pyfunction!(treebank_stats_counts, m)?)?;
    m.add_function(wrap_pyfunction!(perturb_treebank, m)?)?;
    Ok(())
}
