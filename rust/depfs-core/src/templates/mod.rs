//! Feature templates: the central object of depfs.
//!
//! A template is a conjunction of atoms, written as text, compiled once into typed
//! selectors, with a canonical text form, a stable id (hash of the canonical text)
//! and a cost estimate. One language serves both parser families:
//!
//! * **arc templates** (graph parser, McDonald et al. 2005; He et al. 2013) talk about
//!   an arc h → m: `upos(h) & upos(m) & dir & dist`, `xpos(h) & xpos(b) & xpos(m)`
//!   (MSTParser's in-between POS: one feature instance per word strictly between h
//!   and m), neighbours `form(h+1)`, `upos(m-2)`, second-order sibling `upos(s)` and
//!   grandparent `upos(g)`;
//! * **configuration templates** (transition parser) use the addresses of Nilsson &
//!   Nugues (2010): `STACK_i` / `QUEUE_i` followed by navigation steps h, lc, rc, ls,
//!   rs, pw, fw — `upos(STACK_1 lc pw)` is the paper's POS(STACK_1 lc pw) — plus the
//!   label assigned so far `deprel(STACK_0)`, valencies `lval(..)`, `rval(..)` and the
//!   binned distance `dist` between STACK_0 and QUEUE_0. They are read through
//!   [`crate::templates::view::ConfigView`].
//!
//! Attributes: `form`, `lower`, `lemma`, `upos`, `xpos`, `feat:KEY` (one FEATS key),
//! `prefix:K`, `suffix:K`, `shape`. The full grammar is in [`syntax`]. Names are
//! case-insensitive and the paper's `POS` / `LEX` / `DEP` are accepted as aliases.
//!
//! Canonical form: atoms sorted (word atoms by address then attribute, `dir`, `dist`
//! last), joined by `" & "`; so `upos(m) & upos(h)` and `UPOS(h)&POS(m)` are the same
//! template with the same id. A template file has one template per line; `#` starts a
//! comment; blank lines are ignored; repeated templates are dropped (first kept).
//! A template has at most `max_atoms` word atoms (default 3, configurable; a file may
//! set its own limit with a `#! max_atoms = 4` line); `dir` and `dist` qualify the
//! conjunction and do not count.
//!
//! As values, the atoms of a template are (address, attribute) text pairs
//! ([`Template::atom_pairs`], [`Template::from_atoms`]): `("STACK_1 lc pw", "upos")`,
//! `("h+1", "form")`, and an empty address for the edge atoms `("", "dir")`, `("", "dist")`,
//! `("", "sdist")`. Building from pairs goes through the parser, so the canonical text and id
//! are those of the same template written as text.
//!
//! The shipped sets are the files of `src/templates/sets/`, embedded by [`defaults`].
//!
//! Feature values: every vocabulary string is hashed once per treebank
//! ([`attrs::VocabHashes`], because interned ids differ between treebanks), a sentence
//! copies those hashes into a flat per-position table ([`attrs::SentAttrs`]), and a
//! feature is a fixed-seed mix of the template id and its atom values ([`hash`]).

pub mod arc;
pub mod attrs;
pub mod config_feats;
pub mod defaults;
pub mod hash;
pub mod syntax;
pub mod view;

use crate::{Error, Result};
pub use syntax::{ArcAddr, Atom, Attr, Base, ConfigAddr, Family, NodeAttr, Step};

/// Default bound on the word atoms of a template.
pub const DEFAULT_MAX_ATOMS: usize = 3;

/// Largest bound a `#! max_atoms = N` directive may set; the language's own limit.
pub const MAX_ATOMS_BOUND: usize = 8;

/// One compiled-from-text template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// Atoms in canonical order.
    pub atoms: Vec<Atom>,
    /// Canonical text.
    pub text: String,
    /// Stable id: hash of the canonical text.
    pub id: u64,
    pub family: Family,
    /// Rough evaluation cost in units of one weight lookup.
    pub cost: f32,
}

/// Expected number of in-between words of an arc (en_ewt: ~3); scales `b` templates' cost.
const BETWEEN_COST_FACTOR: f32 = 3.0;

impl Template {
    /// Parses and canonicalises one template; `line` is reported in errors.
    pub fn parse(text: &str, line: usize, family: Family, max_atoms: usize) -> Result<Template> {
        let atoms = syntax::parse_atoms(text, line, family, max_atoms)?;
        let canon = syntax::canonical_text(&atoms);
        let id = hash::hash_str(&canon);
        let mut cost = 1.0f32;
        let mut between = false;
        for a in &atoms {
            cost += match a {
                Atom::Dir | Atom::Dist | Atom::SibDist => 0.1,
                Atom::ArcWord { addr, .. } => {
                    between |= *addr == ArcAddr::Between;
                    0.25
                }
                Atom::ConfigWord { addr, .. } => 0.25 + 0.25 * addr.steps.len() as f32,
                Atom::TokenWord { .. } => 0.25,
            };
        }
        if between {
            cost *= BETWEEN_COST_FACTOR;
        }
        Ok(Template { atoms, text: canon, id, family, cost })
    }

    /// Builds a template from (address, attribute) pairs (see [`Atom::parts`]), in any order,
    /// by parsing their text; errors quote that text (as line 1).
    pub fn from_atoms<A: AsRef<str>, B: AsRef<str>>(
        atoms: &[(A, B)],
        family: Family,
        max_atoms: usize,
    ) -> Result<Template> {
        let mut parts = Vec::with_capacity(atoms.len());
        for (address, attribute) in atoms {
            let (address, attribute) = (address.as_ref(), attribute.as_ref());
            parts.push(syntax::render_atom(address, attribute).map_err(|msg| {
                let text = atoms
                    .iter()
                    .map(|(a, b)| format!("{}({})", b.as_ref(), a.as_ref()))
                    .collect::<Vec<_>>()
                    .join(" & ");
                Error::Template { text, line: 1, msg }
            })?);
        }
        if parts.is_empty() {
            return Err(Error::Template { text: String::new(), line: 1, msg: "no atoms".into() });
        }
        Template::parse(&parts.join(" & "), 1, family, max_atoms)
    }

    /// The atoms as (address, attribute) text pairs in canonical order; an empty address
    /// marks an edge atom (`dir`, `dist`, `sdist`). `from_atoms` of them gives this template back.
    pub fn atom_pairs(&self) -> Vec<(String, String)> {
        self.atoms.iter().map(Atom::parts).collect()
    }

    /// Number of word atoms (the ones `max_atoms` bounds).
    pub fn n_word_atoms(&self) -> usize {
        self.atoms.iter().filter(|a| !a.is_edge()).count()
    }

    /// 2 when the template reads the sibling or grandparent (or their distance), else 1.
    pub fn order(&self) -> u8 {
        let second = self.atoms.iter().any(|a| {
            matches!(a, Atom::ArcWord { addr: ArcAddr::Sibling | ArcAddr::Grand, .. } | Atom::SibDist)
        });
        if second {
            2
        } else {
            1
        }
    }
}

/// A file directive `#! max_atoms = N` raises (or lowers) the atom limit for the
/// templates after it, so a shipped set can use wider conjunctions than the default.
fn parse_directive(text: &str, line: usize) -> Result<usize> {
    let bad = |msg: &str| Error::Template { text: format!("#!{text}"), line, msg: msg.to_string() };
    let (key, value) = text.split_once('=').ok_or_else(|| bad("expected `#! max_atoms = N`"))?;
    if key.trim() != "max_atoms" {
        return Err(bad("unknown directive (known: max_atoms)"));
    }
    let n: usize = value.trim().parse().map_err(|_| bad("max_atoms must be a number"))?;
    if n == 0 || n > MAX_ATOMS_BOUND {
        return Err(bad(&format!("max_atoms must be 1..{MAX_ATOMS_BOUND}")));
    }
    Ok(n)
}

/// An ordered list of distinct templates of one family.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateSet {
    pub family: Family,
    pub templates: Vec<Template>,
}

impl TemplateSet {
    /// Parses a template file's text: one template per line, `#` comments.
    /// Repeated templates (same canonical text) keep their first occurrence.
    pub fn parse(text: &str, family: Family, max_atoms: usize) -> Result<TemplateSet> {
        let mut templates: Vec<Template> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut max_atoms = max_atoms;
        for (i, raw) in text.lines().enumerate() {
            if let Some(directive) = raw.trim().strip_prefix("#!") {
                max_atoms = parse_directive(directive, i + 1)?;
                continue;
            }
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let t = Template::parse(line, i + 1, family, max_atoms)?;
            if seen.insert(t.text.clone()) {
                templates.push(t);
            }
        }
        Ok(TemplateSet { family, templates })
    }

    /// Reads a template file; errors name the file.
    pub fn from_file(path: &str, family: Family, max_atoms: usize) -> Result<TemplateSet> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
        TemplateSet::parse(&text, family, max_atoms).map_err(|e| match e {
            Error::Template { text, line, msg } => {
                Error::Template { text, line, msg: format!("{path}: {msg}") }
            }
            other => other,
        })
    }

    /// Canonical text, one template per line (parses back to the same set).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for t in &self.templates {
            s.push_str(&t.text);
            s.push('\n');
        }
        s
    }

    /// The templates at `indices`, in that order.
    pub fn subset(&self, indices: &[usize]) -> Result<TemplateSet> {
        let mut templates = Vec::with_capacity(indices.len());
        for &i in indices {
            let t = self.templates.get(i).ok_or_else(|| {
                Error::InvalidArgument(format!("template index {i} out of range (set has {})", self.len()))
            })?;
            templates.push(t.clone());
        }
        Ok(TemplateSet { family: self.family, templates })
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }
    /// Highest order of any template (1 or 2).
    pub fn order(&self) -> u8 {
        self.templates.iter().map(Template::order).max().unwrap_or(1)
    }
    /// Sum of the templates' cost estimates.
    pub fn cost(&self) -> f32 {
        self.templates.iter().map(|t| t.cost).sum()
    }
}

#[cfg(test)]
mod tests;
