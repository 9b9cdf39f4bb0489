//! depfs._core: thin pyo3 layer over depfs-core. Converts arguments, releases
//! the GIL for long work, calls the core, maps errors. No algorithm lives here.

use pyo3::prelude::*;

mod atomic;
mod decode;
#[allow(dead_code)]
mod errors;
mod eval;
mod graph;
mod tagger;
mod templates;
mod transition;
mod treebank;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    treebank::register(m)?;
    transition::register(m)?;
    graph::register(m)?;
    tagger::register(m)?;
    templates::register(m)?;
    eval::register(m)?;
    decode::register(m)?;
    atomic::register(m)?;
    Ok(())
}
