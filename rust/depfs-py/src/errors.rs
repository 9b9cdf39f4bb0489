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
    let msg = match &err {
        Error::Io { .. } => tidy_io(&err.to_string()),
        _ => err.to_string(),
    };
    match py.import("depfs.errors").and_then(|m| m.getattr(class)) {
        Ok(cls) => match cls.call1((msg.clone(),)) {
            Ok(instance) => PyErr::from_value(instance),
            Err(e) => e,
        },
        Err(_) => PyValueError::new_err(msg),
    }
}

/// An OS error as a user reads it: without the errno suffix (" (os error 2)") and
/// without the temporary file a failed atomic write names (" at path ...").
fn tidy_io(msg: &str) -> String {
    let mut out = msg.to_string();
    if let Some(at) = out.find(" at path \"") {
        out.truncate(at);
    }
    while let Some(start) = out.find(" (os error ") {
        match out[start..].find(')') {
            Some(len) => out.replace_range(start..start + len + 1, ""),
            None => break,
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::tidy_io;

    #[test]
    fn io_messages_lose_the_errno_and_the_temporary_file() {
        let msg = "/no/x.depfs: No such file or directory (os error 2) at path \"/no/.x.tmp\"";
        assert_eq!(tidy_io(msg), "/no/x.depfs: No such file or directory");
        assert_eq!(tidy_io("m: Is a directory (os error 21)"), "m: Is a directory");
        assert_eq!(tidy_io("m: is a directory"), "m: is a directory");
    }
}
