//! Default template sets. The core crate owns their files (`src/templates/sets/*.txt`,
//! embedded here); the Python package reads them only through `depfs._core`.

use super::{Family, TemplateSet, DEFAULT_MAX_ATOMS};
use crate::{Error, Result};

/// (name, family, text) of every shipped set.
pub const DEFAULT_SETS: &[(&str, Family, &str)] = &[
    ("first_order", Family::Arc, include_str!("sets/first_order.txt")),
    ("first_order_fast", Family::Arc, include_str!("sets/first_order_fast.txt")),
    ("second_order", Family::Arc, include_str!("sets/second_order.txt")),
    ("labeler", Family::Arc, include_str!("sets/labeler.txt")),
    ("arc_eager", Family::Config, include_str!("sets/arc_eager.txt")),
    ("nilsson_nugues", Family::Config, include_str!("sets/nilsson_nugues.txt")),
    // The arc-eager set with a word-cluster table: arc_eager and 17 cluster templates
    // (`depfs.arceager.CLUSTER_TEMPLATES`).
    ("arc_eager_clusters", Family::Config, include_str!("sets/arc_eager_clusters.txt")),
    ("tagger", Family::Token, include_str!("sets/tagger.txt")),
    // One set per column (UPOS, XPOS, FEATS, LEMMA): the tagger's default before the
    // backward pass.
    ("tagger_upos", Family::Token, include_str!("sets/tagger_upos.txt")),
    ("tagger_xpos", Family::Token, include_str!("sets/tagger_xpos.txt")),
    ("tagger_feats", Family::Token, include_str!("sets/tagger_feats.txt")),
    ("tagger_lemma", Family::Token, include_str!("sets/tagger_lemma.txt")),
    // The tagger's default: its backward pass, and the sets that read its tags (LEMMA's
    // is tagger_lemma).
    ("tagger_backward", Family::Token, include_str!("sets/tagger_backward.txt")),
    ("tagger_upos_bi", Family::Token, include_str!("sets/tagger_upos_bi.txt")),
    ("tagger_xpos_bi", Family::Token, include_str!("sets/tagger_xpos_bi.txt")),
    ("tagger_feats_bi", Family::Token, include_str!("sets/tagger_feats_bi.txt")),
    // The tagger's default UPOS set since the case rule: tagger_upos_bi and one template.
    ("tagger_upos_caps", Family::Token, include_str!("sets/tagger_upos_caps.txt")),
    // The tagger's UPOS set with a word-cluster table: tagger_upos_caps and two cluster
    // templates (`depfs.tagger.CLUSTER_SETS`).
    ("tagger_upos_clusters", Family::Token, include_str!("sets/tagger_upos_clusters.txt")),
    // The tagger's default XPOS and FEATS sets since its backward pass predicts XPOS:
    // tagger_xpos_bi and tagger_feats_bi with bupos(i).
    ("tagger_xpos_bx", Family::Token, include_str!("sets/tagger_xpos_bx.txt")),
    ("tagger_feats_bx", Family::Token, include_str!("sets/tagger_feats_bx.txt")),
    // Learned orders (forward wrapper on en_ewt dev), grouped; see each file's header.
    ("arc_eager_en_ewt", Family::Config, include_str!("sets/arc_eager_en_ewt.txt")),
    // Its first 15 ranked again at full training settings over the whole set (the cascade's
    // default order; the prefix-trained parser keeps arc_eager_en_ewt); see the header.
    ("arc_eager_en_ewt_full15", Family::Config, include_str!("sets/arc_eager_en_ewt_full15.txt")),
    // pt_bosque: its own first 40, then the en_ewt order (see the header).
    ("arc_eager_pt_bosque", Family::Config, include_str!("sets/arc_eager_pt_bosque.txt")),
    ("first_order_en_ewt", Family::Arc, include_str!("sets/first_order_en_ewt.txt")),
    // The same pool ranked with the CLE decoder (He et al. §4.1); see the header.
    ("first_order_cle_en_ewt", Family::Arc, include_str!("sets/first_order_cle_en_ewt.txt")),
    // The sibling templates of second_order, ranked with every first_order template present.
    ("second_order_en_ewt", Family::Arc, include_str!("sets/second_order_en_ewt.txt")),
    ("tagger_en_ewt", Family::Token, include_str!("sets/tagger_en_ewt.txt")),
    ("tagger_pt_bosque", Family::Token, include_str!("sets/tagger_pt_bosque.txt")),
    // The DynFS groups of the graph parser on en_ewt (He et al. 2013); see the header.
    ("dynfs_en_ewt", Family::Arc, include_str!("sets/dynfs_en_ewt.txt")),
    // The same first-order groups, then sibling groups (second-order DynFS).
    ("dynfs2_en_ewt", Family::Arc, include_str!("sets/dynfs2_en_ewt.txt")),
    // pt_bosque: its own first group (it has no XPOS), then the en_ewt groups' other templates.
    ("dynfs_pt_bosque", Family::Arc, include_str!("sets/dynfs_pt_bosque.txt")),
    // dynfs_en_ewt's groups over its order's first 100 templates (a static cut); see the header.
    ("dynfs_en_ewt_100", Family::Arc, include_str!("sets/dynfs_en_ewt_100.txt")),
    // The same groups over the order's first 113 templates, its best dev score; see the header.
    ("dynfs_en_ewt_113", Family::Arc, include_str!("sets/dynfs_en_ewt_113.txt")),
];

/// Names of the shipped sets.
pub fn names() -> Vec<&'static str> {
    DEFAULT_SETS.iter().map(|s| s.0).collect()
}

/// Family and file text of the shipped set `name`.
pub fn text(name: &str) -> Result<(Family, &'static str)> {
    DEFAULT_SETS.iter().find(|s| s.0 == name).map(|s| (s.1, s.2)).ok_or_else(|| {
        Error::InvalidArgument(format!("no default template set {name:?} (known: {})", names().join(", ")))
    })
}

/// The shipped set `name`, parsed.
pub fn load(name: &str) -> Result<TemplateSet> {
    let (family, text) = text(name)?;
    TemplateSet::parse(text, family, DEFAULT_MAX_ATOMS)
}
