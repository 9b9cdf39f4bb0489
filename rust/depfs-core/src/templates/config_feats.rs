//! Configuration templates compiled into selectors over a [`ConfigView`].
//!
//! Addresses follow Nilsson & Nugues (2010), *Automatic Discovery of Feature Sets for
//! Dependency Parsing*: STACK_i / QUEUE_i followed by navigation steps. Distinct
//! addresses of a set are resolved once per configuration (a few trait calls each),
//! then every template is a fold of its atom values: O(T × atoms) per configuration.

use super::arc::dist_bin;
use super::attrs::{self, SentAttrs, NONE_VALUE};
use super::hash::combine;
use super::syntax::{Atom, Attr, Base, ConfigAddr, Family, NodeAttr, Step};
use super::TemplateSet;
use crate::config::ConfigView;
use crate::{Error, Result};

const LABEL_SALT: u64 = 0x6c61_6265_6c00_0000;
const LVAL_SALT: u64 = 0x6c76_616c_0000_0000;
const RVAL_SALT: u64 = 0x7276_616c_0000_0000;
const DIST_SALT: u64 = 0x6469_7374_0000_0000;

#[derive(Debug, Clone, Copy)]
enum CAtom {
    Word { slot: usize, addr: usize },
    Deprel { addr: usize },
    LeftValency { addr: usize },
    RightValency { addr: usize },
    Dist,
}

/// One compiled configuration template.
#[derive(Debug, Clone)]
pub struct CompiledConfig {
    pub id: u64,
    atoms: Vec<CAtom>,
}

/// A compiled configuration template set.
#[derive(Debug, Clone)]
pub struct ConfigFeatures {
    pub templates: Vec<CompiledConfig>,
    /// Static attribute slots used by the set (index = slot).
    pub attrs: Vec<Attr>,
    /// Distinct addresses of the set.
    pub addrs: Vec<ConfigAddr>,
}

/// Follows an address in a configuration; `None` when any step leads nowhere.
pub fn resolve<V: ConfigView + ?Sized>(addr: &ConfigAddr, view: &V) -> Option<u32> {
    let mut w = match addr.base {
        Base::Stack(i) => view.stack(i as usize)?,
        Base::Queue(i) => view.queue(i as usize)?,
    };
    for step in &addr.steps {
        w = match step {
            Step::H => view.head(w)?,
            Step::Lc => view.leftmost_child(w)?,
            Step::Rc => view.rightmost_child(w)?,
            Step::Ls => view.left_sibling(w)?,
            Step::Rs => view.right_sibling(w)?,
            // ROOT (0) has no neighbours in the sentence; word 1 has no previous word.
            Step::Pw => (w >= 2).then(|| w - 1)?,
            Step::Fw => (w >= 1 && w < view.n_words()).then(|| w + 1)?,
        };
    }
    Some(w)
}

impl ConfigFeatures {
    pub fn compile(set: &TemplateSet) -> Result<ConfigFeatures> {
        if set.family != Family::Config {
            return Err(Error::InvalidArgument("configuration features need configuration templates".into()));
        }
        let mut attrs_used = Vec::new();
        let mut addrs: Vec<ConfigAddr> = Vec::new();
        for t in &set.templates {
            for a in &t.atoms {
                if let Atom::ConfigWord { attr, addr } = a {
                    if let NodeAttr::Word(w) = attr {
                        attrs_used.push(w.clone());
                    }
                    if !addrs.contains(addr) {
                        addrs.push(addr.clone());
                    }
                }
            }
        }
        let attrs = attrs::distinct(attrs_used);
        let templates = set
            .templates
            .iter()
            .map(|t| {
                let atoms = t
                    .atoms
                    .iter()
                    .map(|a| match a {
                        Atom::Dist => CAtom::Dist,
                        Atom::ConfigWord { attr, addr } => {
                            let addr = addrs.iter().position(|x| x == addr).unwrap_or(0);
                            match attr {
                                NodeAttr::Word(w) => {
                                    CAtom::Word { slot: attrs.iter().position(|x| x == w).unwrap_or(0), addr }
                                }
                                NodeAttr::Deprel => CAtom::Deprel { addr },
                                NodeAttr::LeftValency => CAtom::LeftValency { addr },
                                NodeAttr::RightValency => CAtom::RightValency { addr },
                            }
                        }
                        // The parser rejects dir and arc atoms in configuration templates.
                        Atom::Dir | Atom::SibDist | Atom::ArcWord { .. } => CAtom::Dist,
                    })
                    .collect();
                CompiledConfig { id: t.id, atoms }
            })
            .collect();
        Ok(ConfigFeatures { templates, attrs, addrs })
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// Resolves every address of the set: `out[a]` = word of address a, if any.
    pub fn resolve_all<V: ConfigView + ?Sized>(&self, view: &V, out: &mut Vec<Option<u32>>) {
        out.clear();
        out.extend(self.addrs.iter().map(|a| resolve(a, view)));
    }

    /// One feature per template of `active` (all templates when `None`), appended to
    /// `out` in that order. `words` are the static attribute values of the sentence
    /// (filled with [`SentAttrs::fill`] from `VocabHashes::new(tb, &self.attrs)`).
    pub fn extract<V: ConfigView + ?Sized>(
        &self,
        view: &V,
        words: &SentAttrs,
        active: Option<&[usize]>,
        scratch: &mut Vec<Option<u32>>,
        out: &mut Vec<u64>,
    ) {
        self.resolve_all(view, scratch);
        let one = |t: &CompiledConfig| {
            t.atoms.iter().fold(t.id, |acc, a| {
                let v = match *a {
                    CAtom::Word { slot, addr } => {
                        scratch[addr].map_or(NONE_VALUE, |w| words.get(slot, w as i64))
                    }
                    CAtom::Deprel { addr } => scratch[addr]
                        .and_then(|w| view.label(w))
                        .map_or(NONE_VALUE, |l| combine(LABEL_SALT, l as u64)),
                    CAtom::LeftValency { addr } => scratch[addr]
                        .map_or(NONE_VALUE, |w| combine(LVAL_SALT, view.n_left_children(w) as u64)),
                    CAtom::RightValency { addr } => scratch[addr]
                        .map_or(NONE_VALUE, |w| combine(RVAL_SALT, view.n_right_children(w) as u64)),
                    CAtom::Dist => match (view.stack(0), view.queue(0)) {
                        (Some(s), Some(q)) => combine(DIST_SALT, dist_bin(s.abs_diff(q) as usize)),
                        _ => NONE_VALUE,
                    },
                };
                combine(acc, v)
            })
        };
        match active {
            None => out.extend(self.templates.iter().map(one)),
            Some(idx) => out.extend(idx.iter().map(|&i| one(&self.templates[i]))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::attrs::VocabHashes;
    use super::*;
    use crate::{Treebank, WordStrs};

    /// A hand-built configuration: stack [ROOT, 2], queue [4, 5], arcs 2→1, 2→3.
    struct Fixed {
        heads: Vec<Option<u32>>,
    }
    impl ConfigView for Fixed {
        fn stack(&self, i: usize) -> Option<u32> {
            [2, 0].get(i).copied()
        }
        fn queue(&self, i: usize) -> Option<u32> {
            [4, 5].get(i).copied()
        }
        fn head(&self, w: u32) -> Option<u32> {
            self.heads[w as usize]
        }
        fn label(&self, w: u32) -> Option<u32> {
            self.heads[w as usize].map(|_| w)
        }
        fn leftmost_child(&self, w: u32) -> Option<u32> {
            (1..=5).find(|&d| self.heads[d as usize] == Some(w) && d < w)
        }
        fn rightmost_child(&self, w: u32) -> Option<u32> {
            (1..=5).rev().find(|&d| self.heads[d as usize] == Some(w) && d > w)
        }
        fn left_sibling(&self, w: u32) -> Option<u32> {
            let h = self.heads[w as usize]?;
            (1..w).rev().find(|&d| self.heads[d as usize] == Some(h))
        }
        fn right_sibling(&self, w: u32) -> Option<u32> {
            let h = self.heads[w as usize]?;
            (w + 1..=5).find(|&d| self.heads[d as usize] == Some(h))
        }
        fn n_left_children(&self, w: u32) -> u32 {
            (1..w).filter(|&d| self.heads[d as usize] == Some(w)).count() as u32
        }
        fn n_right_children(&self, w: u32) -> u32 {
            (w + 1..=5).filter(|&d| self.heads[d as usize] == Some(w)).count() as u32
        }
        fn n_words(&self) -> u32 {
            5
        }
    }

    fn fixed() -> Fixed {
        Fixed { heads: vec![None, Some(2), None, Some(2), None, None] }
    }

    fn addr(s: &str) -> ConfigAddr {
        match &super::super::Template::parse(&format!("upos({s})"), 1, Family::Config, 3).unwrap().atoms[0] {
            Atom::ConfigWord { addr, .. } => addr.clone(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn navigation_follows_the_paper() {
        let v = fixed();
        assert_eq!(resolve(&addr("STACK_0"), &v), Some(2));
        assert_eq!(resolve(&addr("STACK_1"), &v), Some(0));
        assert_eq!(resolve(&addr("STACK_2"), &v), None);
        assert_eq!(resolve(&addr("STACK_0 lc"), &v), Some(1));
        assert_eq!(resolve(&addr("STACK_0 rc"), &v), Some(3));
        assert_eq!(resolve(&addr("STACK_0 lc pw"), &v), None);
        assert_eq!(resolve(&addr("STACK_0 rc pw"), &v), Some(2));
        assert_eq!(resolve(&addr("STACK_0 lc rs"), &v), Some(3));
        assert_eq!(resolve(&addr("STACK_0 rc ls h"), &v), Some(2));
        assert_eq!(resolve(&addr("QUEUE_1 fw"), &v), None);
        assert_eq!(resolve(&addr("QUEUE_0 fw"), &v), Some(5));
        assert_eq!(resolve(&addr("STACK_1 fw"), &v), None);
    }

    #[test]
    fn extraction_is_deterministic_and_reads_labels_and_valency() {
        let mut tb = Treebank::new();
        let ws: Vec<_> =
            ["A", "B", "C", "D", "E"].iter().map(|f| WordStrs::simple(f, "X", 0, "dep")).collect();
        tb.push_sentence(&ws, vec![]);
        let text = "form(STACK_0)\ndeprel(STACK_0 lc)\nlval(STACK_0) & rval(STACK_0)\nform(QUEUE_0) & dist\nform(STACK_2)";
        let set = TemplateSet::parse(text, Family::Config, 3).unwrap();
        let cf = ConfigFeatures::compile(&set).unwrap();
        let vh = VocabHashes::new(&tb, &cf.attrs);
        let mut sa = SentAttrs::default();
        sa.fill(&vh, &tb, 0);
        let (mut scratch, mut a, mut b) = (vec![], vec![], vec![]);
        let v = fixed();
        cf.extract(&v, &sa, None, &mut scratch, &mut a);
        cf.extract(&v, &sa, Some(&[1, 0]), &mut scratch, &mut b);
        assert_eq!(a.len(), 5);
        assert_eq!(b, vec![a[1], a[0]]);
        // Changing the label of STACK_0's leftmost child changes only template 1.
        struct Relabel(Fixed);
        impl ConfigView for Relabel {
            fn stack(&self, i: usize) -> Option<u32> {
                self.0.stack(i)
            }
            fn queue(&self, i: usize) -> Option<u32> {
                self.0.queue(i)
            }
            fn head(&self, w: u32) -> Option<u32> {
                self.0.head(w)
            }
            fn label(&self, w: u32) -> Option<u32> {
                self.0.label(w).map(|l| l + 100)
            }
            fn leftmost_child(&self, w: u32) -> Option<u32> {
                self.0.leftmost_child(w)
            }
            fn rightmost_child(&self, w: u32) -> Option<u32> {
                self.0.rightmost_child(w)
            }
            fn left_sibling(&self, w: u32) -> Option<u32> {
                self.0.left_sibling(w)
            }
            fn right_sibling(&self, w: u32) -> Option<u32> {
                self.0.right_sibling(w)
            }
            fn n_left_children(&self, w: u32) -> u32 {
                self.0.n_left_children(w)
            }
            fn n_right_children(&self, w: u32) -> u32 {
                self.0.n_right_children(w)
            }
            fn n_words(&self) -> u32 {
                self.0.n_words()
            }
        }
        let mut c = vec![];
        cf.extract(&Relabel(fixed()), &sa, None, &mut scratch, &mut c);
        let changed: Vec<usize> = (0..5).filter(|&i| a[i] != c[i]).collect();
        assert_eq!(changed, vec![1]);
        // STACK_2 does not exist: its feature is the template's "none" feature.
        assert_eq!(a[4], combine(set.templates[4].id, NONE_VALUE));
    }
}
