//! Python view of `depfs_core::Treebank`. Other binding modules take `&PyTreebank`
//! and read `.inner`; the Rust treebank never crosses into Python objects wholesale.

use depfs_core::Treebank;
use pyo3::prelude::*;

/// A treebank held in Rust (interned, struct-of-arrays).
#[pyclass(name = "Treebank", module = "depfs._core")]
pub struct PyTreebank {
    pub inner: Treebank,
}

#[pymethods]
impl PyTreebank {
    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTreebank>()
}
