//! Bindings of the template language: the shipped sets, parsing, and templates as
//! (address, attribute) atom pairs. Conversion and error mapping only.

use depfs_core::templates::{defaults, Family, Template, TemplateSet, MAX_ATOMS_BOUND};
use depfs_core::Error;
use pyo3::prelude::*;

use crate::errors::IntoPyResult;

/// (canonical text, id, cost, order, atoms as (address, attribute) pairs).
type TemplateTuple = (String, u64, f32, u8, Vec<(String, String)>);

fn family(name: &str) -> depfs_core::Result<Family> {
    match name {
        "arc" => Ok(Family::Arc),
        "config" => Ok(Family::Config),
        "token" => Ok(Family::Token),
        _ => Err(Error::InvalidArgument(format!("unknown template family {name:?} (arc or config)"))),
    }
}

fn family_name(family: Family) -> &'static str {
    match family {
        Family::Arc => "arc",
        Family::Config => "config",
        Family::Token => "token",
    }
}

fn to_tuple(t: &Template) -> TemplateTuple {
    (t.text.clone(), t.id, t.cost, t.order(), t.atom_pairs())
}

/// Names of the template sets shipped with depfs.
#[pyfunction]
fn template_set_names() -> Vec<&'static str> {
    defaults::names()
}

/// (family, text) of a shipped template set.
#[pyfunction]
fn template_set_text(py: Python<'_>, name: &str) -> PyResult<(&'static str, &'static str)> {
    let (fam, text) = defaults::text(name).py_err(py)?;
    Ok((family_name(fam), text))
}

/// Parses template text (one per line, `#` comments) into template tuples.
#[pyfunction]
#[pyo3(signature = (text, family = "arc", max_atoms = 3))]
fn parse_templates(
    py: Python<'_>,
    text: &str,
    family: &str,
    max_atoms: usize,
) -> PyResult<Vec<TemplateTuple>> {
    let fam = self::family(family).py_err(py)?;
    let set = TemplateSet::parse(text, fam, max_atoms).py_err(py)?;
    Ok(set.templates.iter().map(to_tuple).collect())
}

/// Parses one template; `max_atoms` None means the language's bound.
#[pyfunction]
#[pyo3(signature = (text, family = "arc", max_atoms = None))]
fn parse_template(
    py: Python<'_>,
    text: &str,
    family: &str,
    max_atoms: Option<usize>,
) -> PyResult<TemplateTuple> {
    let fam = self::family(family).py_err(py)?;
    let t = Template::parse(text, 1, fam, max_atoms.unwrap_or(MAX_ATOMS_BOUND)).py_err(py)?;
    Ok(to_tuple(&t))
}

/// Builds one template from (address, attribute) pairs; `max_atoms` None means the language's bound.
#[pyfunction]
#[pyo3(signature = (atoms, family = "arc", max_atoms = None))]
fn template_from_atoms(
    py: Python<'_>,
    atoms: Vec<(String, String)>,
    family: &str,
    max_atoms: Option<usize>,
) -> PyResult<TemplateTuple> {
    let fam = self::family(family).py_err(py)?;
    let t = Template::from_atoms(&atoms, fam, max_atoms.unwrap_or(MAX_ATOMS_BOUND)).py_err(py)?;
    Ok(to_tuple(&t))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TEMPLATE_MAX_ATOMS_BOUND", MAX_ATOMS_BOUND)?;
    m.add("TEMPLATE_DEFAULT_MAX_ATOMS", depfs_core::templates::DEFAULT_MAX_ATOMS)?;
    m.add_function(wrap_pyfunction!(template_set_names, m)?)?;
    m.add_function(wrap_pyfunction!(template_set_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse_templates, m)?)?;
    m.add_function(wrap_pyfunction!(parse_template, m)?)?;
    m.add_function(wrap_pyfunction!(template_from_atoms, m)?)?;
    Ok(())
}
