//! Maps the core's one error enum onto the exception classes of `depfs.errors`.

use depfs_core::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Converts a core error into the matching `depfs.errors` exception.
pub fn to_py(py: Python<'_>, err: Error) -> PyErr {
    let class = match &err {
        Error::Format { .. } => "FormatError",
        Error::Io { .. } => "DepfsIOError",
        Error::Alignment(_) => "AlignmentError",
        Error::Template { .. } => "TemplateError",
        Error::Model { .. } => "ModelError",
        Error::NoSpanningTree(_) => "NoSpanningTreeError",
        Error::InvalidArgument(_) => return PyValueError::new_err(err.to_string()),
    };
    let msg = err.to_string();
    match py.import("depfs.errors").and_then(|m| m.getattr(class)) {
        Ok(cls) => match cls.call1((msg.clone(),)) {
            Ok(instance) => PyErr::from_value(instance),
            Err(e) => e,
        },
        Err(_) => PyValueError::new_err(msg),
    }
}

/// `Result` of the core, mapped for Python.
pub trait IntoPyResult<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for depfs_core::Result<T> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e))
    }
}
