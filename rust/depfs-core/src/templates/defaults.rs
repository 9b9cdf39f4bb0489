//! Default template sets, shipped as text files in the Python package
//! (`python/depfs/templates/*.txt`) and embedded here so Rust users get the same sets.

use super::{Family, TemplateSet, DEFAULT_MAX_ATOMS};
use crate::Result;

/// (name, family, text) of every shipped set.
pub const DEFAULT_SETS: &[(&str, Family, &str)] = &[
    ("first_order", Family::Arc, include_str!("../../../../python/depfs/templates/first_order.txt")),
    (
        "first_order_fast",
        Family::Arc,
        include_str!("../../../../python/depfs/templates/first_order_fast.txt"),
    ),
    ("second_order", Family::Arc, include_str!("../../../../python/depfs/templates/second_order.txt")),
    ("labeler", Family::Arc, include_str!("../../../../python/depfs/templates/labeler.txt")),
    ("arc_eager", Family::Config, include_str!("../../../../python/depfs/templates/arc_eager.txt")),
    ("nilsson_nugues", Family::Config, include_str!("../../../../python/depfs/templates/nilsson_nugues.txt")),
];

/// Names of the shipped sets.
pub fn names() -> Vec<&'static str> {
    DEFAULT_SETS.iter().map(|s| s.0).collect()
}

/// The shipped set `name`, parsed.
pub fn load(name: &str) -> Result<TemplateSet> {
    let (_, family, text) = DEFAULT_SETS.iter().find(|s| s.0 == name).ok_or_else(|| {
        crate::Error::InvalidArgument(format!(
            "no default template set {name:?} (known: {})",
            names().join(", ")
        ))
    })?;
    TemplateSet::parse(text, *family, DEFAULT_MAX_ATOMS)
}
