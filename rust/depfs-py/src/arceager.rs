//! Python bindings of the arc-eager transition system: pseudo-projective
//! transformation and dynamic-oracle trajectories as arrays. Long work releases
//! the GIL on owned inputs.

use depfs_core::arceager::explore::{oracle_trajectories, KINDS};
use depfs_core::arceager::projective::{deprojectivize, projectivize};
use numpy::{IntoPyArray, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::IntoPyResult;
use crate::treebank::PyTreebank;

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
    Ok((PyTreebank { inner: out }, d))
}

/// Undoes the HEAD encoding: a copy with every `r↑h` word moved back under the
/// nearest word labelled `h` in its head's subtree and relabelled `r`.
#[pyfunction]
fn arceager_deprojectivize(py: Python<'_>, treebank: PyRef<'_, PyTreebank>) -> PyTreebank {
    let mut tb = treebank.inner.clone();
    drop(treebank);
    py.detach(|| deprojectivize(&mut tb));
    PyTreebank { inner: tb }
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
    d.set_item("cost", t.cost.into_pyarray(py).reshape([n, KINDS])?)?;
    d.set_item("followed", t.followed.into_pyarray(py))?;
    d.set_item("oracle", t.oracle.into_pyarray(py))?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(arceager_projectivize, m)?)?;
    m.add_function(wrap_pyfunction!(arceager_deprojectivize, m)?)?;
    m.add_function(wrap_pyfunction!(arceager_oracle_trajectories, m)?)?;
    Ok(())
}
