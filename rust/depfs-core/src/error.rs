//! The one error type of the core. The pyo3 crate maps each variant once to a
//! class of `depfs.errors`; nothing in the core panics on user input.

/// Everything that can go wrong in depfs-core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed treebank input: names the file (or `<string>`), the 1-based line and the problem.
    #[error("{file}:{line}: {msg}")]
    Format { file: String, line: usize, msg: String },
    /// The operating system refused a read or write.
    #[error("{file}: {msg}")]
    Io { file: String, msg: String },
    /// Gold and system files whose words do not line up (evaluation).
    #[error("{0}")]
    Alignment(String),
    /// A feature template that does not parse or compile; quotes the template text and
    /// names its line in the set (0: not known, not named).
    /// (A directive's, `#! max_atoms = N`, is named as one.)
    #[error(
        "{} {text:?}{}: {msg}",
        if text.starts_with("#!") { "directive" } else { "template" },
        if *line == 0 { String::new() } else { format!(" (line {line})") }
    )]
    Template { text: String, line: usize, msg: String },
    /// A model file that is truncated, corrupted or of an unknown version.
    #[error("{file}: {msg}")]
    Model { file: String, msg: String },
    /// A decoder found no spanning tree among the arcs that are not `-inf`.
    #[error("no spanning tree: {0}")]
    NoSpanningTree(String),
    /// Any other invalid argument (shapes, NaN, options).
    #[error("{0}")]
    InvalidArgument(String),
}

impl Error {
    pub fn format(file: &str, line: usize, msg: impl Into<String>) -> Self {
        Error::Format { file: file.to_string(), line, msg: msg.into() }
    }
    pub fn io(file: &str, err: &std::io::Error) -> Self {
        Error::Io { file: file.to_string(), msg: err.to_string() }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
