//! depfs-core: everything that loops over tokens, arcs, transitions or features.
//! Pure Rust, no Python; the `depfs-py` crate is a thin binding on top.

pub mod error;
pub mod heads;
pub mod io;
pub mod treebank;
pub mod util;

pub use error::{Error, Result};
pub use treebank::{Treebank, Vocab, WordStrs};
pub mod decode;
pub mod eval;
pub mod fuzz;
pub mod graph;
pub mod perturb;
pub mod stats;
pub mod tagger;
pub mod templates;
pub mod transition;
pub mod weights;
