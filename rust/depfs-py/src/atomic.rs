//! Python view of `depfs_core::io::atomic`: the one atomic writer (model files, CoNLL-U,
//! and through `depfs.files` every output the Python layer writes), as a stream.

use std::io::Write;
use std::path::PathBuf;

use depfs_core::io::atomic::AtomicFile;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::IntoPyResult;

/// A file whose bytes replace `path` only at `commit()`; `abort()` (or being dropped
/// uncommitted) leaves the old file untouched and nothing behind. See
/// `depfs.files.atomic_stream`.
#[pyclass(name = "AtomicFile", module = "depfs._core")]
pub struct PyAtomicFile {
    path: String,
    /// `None` once committed or aborted.
    inner: Option<AtomicFile>,
}

impl PyAtomicFile {
    fn open(&mut self) -> PyResult<&mut AtomicFile> {
        let path = &self.path;
        self.inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err(format!("{path}: write to a closed atomic file")))
    }
}

#[pymethods]
impl PyAtomicFile {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = py.detach(|| AtomicFile::create(&path)).py_err(py)?;
        Ok(PyAtomicFile { path: path.display().to_string(), inner: Some(file) })
    }

    /// Appends `data` (buffered); the GIL is released while it is copied out.
    fn write(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<usize> {
        let file = self.open()?;
        py.detach(|| file.write_all(data).map_err(|e| file.error(&e))).py_err(py)?;
        Ok(data.len())
    }

    /// Hands the buffered bytes to the file (not yet under its name); nothing once closed.
    fn flush(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.inner.as_mut() {
            Some(file) => py.detach(|| file.flush().map_err(|e| file.error(&e))).py_err(py),
            None => Ok(()),
        }
    }

    /// Syncs the bytes and puts them under the path.
    fn commit(&mut self, py: Python<'_>) -> PyResult<()> {
        self.open()?;
        match self.inner.take() {
            Some(file) => py.detach(|| file.commit()).py_err(py),
            None => Ok(()),
        }
    }

    /// Drops the bytes written: the path keeps what it had.
    fn abort(&mut self) {
        self.inner = None;
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_none()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAtomicFile>()
}
