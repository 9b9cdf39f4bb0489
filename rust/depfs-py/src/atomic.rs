//! Python view of `depfs_core::io::atomic`: the one atomic writer (model files, CoNLL-U,
//! and through `depfs.files` every output the Python layer writes), as a stream.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use depfs_core::io::atomic::AtomicFile;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::IntoPyResult;

/// A file whose bytes replace `path` only at `commit()`; `abort()` (or being dropped
/// uncommitted) leaves the old file untouched and nothing behind. See
/// `depfs.files.atomic_stream`. Its methods may be called from several threads: a
/// write runs without the GIL (it may block on a FIFO nobody reads), and `abort`
/// (after Ctrl-C, from another thread) never waits for it.
#[pyclass(name = "AtomicFile", module = "depfs._core", frozen)]
pub struct PyAtomicFile {
    path: String,
    /// `None` once committed or aborted; locked (without the GIL) by each call.
    inner: Mutex<Option<AtomicFile>>,
    /// The named temporary file of the fallback (`AtomicFile::temp_path`).
    temp: Option<PathBuf>,
    /// Set by an `abort` that came while a call held the file: that call drops it.
    aborted: AtomicBool,
}

impl PyAtomicFile {
    /// The file, locked, for `op`; the GIL is released while it waits and works.
    fn with_open<T: Send>(
        &self,
        py: Python<'_>,
        op: impl FnOnce(&mut AtomicFile) -> depfs_core::Result<T> + Send,
    ) -> PyResult<T> {
        let path = &self.path;
        let done = py.detach(|| {
            let mut guard = self.lock();
            let result = guard.as_mut().map(op);
            if self.aborted.load(Ordering::Acquire) {
                *guard = None; // aborted while this call worked: dropped now
            }
            result
        });
        match done {
            Some(result) => result.py_err(py),
            None => Err(PyValueError::new_err(format!("{path}: write to a closed atomic file"))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<AtomicFile>> {
        // A panic while writing poisons nothing we rely on: the file is still whole.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl PyAtomicFile {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = py.detach(|| AtomicFile::create(&path)).py_err(py)?;
        let temp = file.temp_path().map(|p| p.to_path_buf());
        Ok(PyAtomicFile {
            path: path.display().to_string(),
            inner: Mutex::new(Some(file)),
            temp,
            aborted: AtomicBool::new(false),
        })
    }

    /// Appends `data` (buffered); the GIL is released while it is copied out.
    fn write(&self, py: Python<'_>, data: &[u8]) -> PyResult<usize> {
        self.with_open(py, |file| file.write_all(data).map_err(|e| file.error(&e)))?;
        Ok(data.len())
    }

    /// Hands the buffered bytes to the file (not yet under its name); nothing once closed.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| match self.lock().as_mut() {
            Some(file) => file.flush().map_err(|e| file.error(&e)),
            None => Ok(()),
        })
        .py_err(py)
    }

    /// Syncs the bytes and puts them under the path.
    fn commit(&self, py: Python<'_>) -> PyResult<()> {
        let path = &self.path;
        match py.detach(|| self.lock().take()) {
            Some(file) => py.detach(|| file.commit()).py_err(py),
            None => Err(PyValueError::new_err(format!("{path}: write to a closed atomic file"))),
        }
    }

    /// Drops the bytes written: the path keeps what it had. Never waits: while another
    /// thread's write holds the file (blocked on a full FIFO, say), the named temporary
    /// file, if any, is removed now and the file dropped when that write returns (an
    /// unnamed one vanishes with the process in any case).
    fn abort(&self) {
        match self.inner.try_lock() {
            Ok(mut guard) => *guard = None,
            Err(TryLockError::Poisoned(e)) => *e.into_inner() = None,
            Err(TryLockError::WouldBlock) => {
                self.aborted.store(true, Ordering::Release);
                if let Some(temp) = &self.temp {
                    let _ = std::fs::remove_file(temp);
                }
            }
        }
    }

    #[getter]
    fn closed(&self) -> bool {
        match self.inner.try_lock() {
            Ok(guard) => guard.is_none(),
            Err(TryLockError::Poisoned(e)) => e.into_inner().is_none(),
            Err(TryLockError::WouldBlock) => self.aborted.load(Ordering::Acquire),
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAtomicFile>()
}
