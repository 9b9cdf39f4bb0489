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
use crate::templates::view::ConfigView;
use crate::{Error, Result};

const LABEL_SALT: u64 = 0x6c61_6265_6c00_0000;
const LVAL_SALT: u64 = 0x6c76_616c_0000_0000;
const RVAL_SALT: u64 = 0x7276_616c_0000_0000;
const DIST_SALT: u64 = 0x6469_7374_0000_0000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum CAtom {
    Word { slot: usize, addr: usize },
    Deprel { addr: usize },
    LeftValency { addr: usize },
    RightValency { addr: usize },
    Dist,
}

/// One compiled configuration template: its id and its atoms, as indices into
/// [`ConfigFeatures::atoms`] (`atom_ids[start..end]` of the set).
#[derive(Debug, Clone)]
pub struct CompiledConfig {
    pub id: u64,
    start: u32,
    end: u32,
}

/// A template of exactly N atoms, at position `pos` of its set.
#[derive(Debug, Clone)]
struct FixedArity<const N: usize> {
    pos: u32,
    id: u64,
    atoms: [u16; N],
}

impl<const N: usize> FixedArity<N> {
    /// The same fold as [`CompiledConfig`]'s, unrolled.
    #[inline(always)]
    fn feature(&self, values: &[u64]) -> u64 {
        self.atoms.iter().fold(self.id, |acc, &a| combine(acc, values[a as usize]))
    }
}

/// The templates of a set grouped by number of atoms, so that extracting the whole
/// set runs one loop without branches per group (1.3× fewer instructions than one loop
/// over templates of mixed lengths); templates of other lengths are in `other`.
#[derive(Debug, Clone, Default)]
struct ByArity {
    one: Vec<FixedArity<1>>,
    two: Vec<FixedArity<2>>,
    three: Vec<FixedArity<3>>,
    other: Vec<u32>,
}

/// A compiled configuration template set.
#[derive(Debug, Clone)]
pub struct ConfigFeatures {
    pub templates: Vec<CompiledConfig>,
    by_arity: ByArity,
    /// Static attribute slots used by the set (index = slot).
    pub attrs: Vec<Attr>,
    /// Distinct addresses of the set.
    pub addrs: Vec<ConfigAddr>,
    /// Distinct atoms of the set: each is evaluated once per configuration.
    atoms: Vec<CAtom>,
    /// The templates' atoms, concatenated (indices into `atoms`).
    atom_ids: Vec<u16>,
    /// How lazy extraction ([`ConfigFeatures::feature`]) evaluates them.
    lazy: LazyPlan,
}

/// How lazy extraction finds a word: at a base, or one step from another entry of
/// [`LazyPlan::nav`] (the address's prefix, listed before it), so that an address is
/// one view call once its prefix is known.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Nav {
    Base(Base),
    Step { from: u32, step: Step },
}

/// One evaluation of lazy extraction: the word at `nav` entry j, or the value of
/// atom a (what to evaluate inline: no second lookup).
#[derive(Debug, Clone, Copy)]
enum Op {
    Nav { j: u32, nav: Nav },
    Atom { a: u32, atom: CAtom },
}

/// A template of lazy extraction: its id, its plan `ops[ops.0..ops.1]` and its atoms
/// `atom_ids[atoms.0..atoms.1]` of [`ConfigFeatures`] (one record: one bounds check).
#[derive(Debug, Clone, Copy)]
struct LazyTemplate {
    id: u64,
    ops: (u32, u32),
    atoms: (u32, u32),
}

/// Lazy extraction compiled for the set's order (Strubell et al. 2015 add templates in
/// that order). When templates 0..t are done, template t needs exactly the addresses
/// and atoms that no earlier template read: its `ops`, evaluated in order without
/// checks. A template asked out of order (a label decision's, a
/// trainer's) checks each atom and the prefixes of its address: `chains`.
#[derive(Debug, Clone, Default)]
struct LazyPlan {
    nav: Vec<Nav>,
    /// As [`ConfigFeatures::atoms`] (same indices), addresses indexing `nav`.
    atoms: Vec<CAtom>,
    ops: Vec<Op>,
    templates: Vec<LazyTemplate>,
    /// Per atom, the `nav` entries of its address and its prefixes, base first:
    /// `chain_ids[chain_at[a]..chain_at[a + 1]]`.
    chain_ids: Vec<u32>,
    chain_at: Vec<u32>,
}

/// Working memory of [`ConfigFeatures::extract`] (reuse it across calls).
#[derive(Debug, Clone, Default)]
pub struct ExtractScratch {
    /// Word at each address of the set, if any.
    words: Vec<Option<u32>>,
    /// Value of each atom of the set.
    values: Vec<u64>,
}

/// Working memory of lazy extraction ([`ConfigFeatures::feature`]): the addresses
/// ([`LazyPlan::nav`]), atoms and template features evaluated in the current
/// configuration, each stamped with the generation of the configuration it belongs
/// to, and how many templates of the set's order are done.
#[derive(Debug, Clone, Default)]
pub struct LazyScratch {
    gen: u32,
    /// Templates 0..next are done in this configuration.
    next: usize,
    words: Vec<Stamped<Option<u32>>>,
    values: Vec<Stamped<u64>>,
    feats: Vec<Stamped<u64>>,
}

/// A value of lazy extraction and the generation of the configuration it belongs to
/// (side by side: one bounds check, one cache line).
#[derive(Debug, Clone, Copy, Default)]
struct Stamped<T> {
    gen: u32,
    value: T,
}

/// Follows an address in a configuration; `None` when any step leads nowhere.
pub fn resolve<V: ConfigView + ?Sized>(addr: &ConfigAddr, view: &V) -> Option<u32> {
    let mut w = match addr.base {
        Base::Stack(i) => view.stack(i as usize)?,
        Base::Queue(i) => view.queue(i as usize)?,
    };
    for &step in &addr.steps {
        w = step_from(w, step, view)?;
    }
    Some(w)
}

/// The word one navigation step from word `w`, if any.
#[inline(always)]
fn step_from<V: ConfigView + ?Sized>(w: u32, step: Step, view: &V) -> Option<u32> {
    match step {
        Step::H => view.head(w),
        Step::Lc => view.leftmost_child(w),
        Step::Rc => view.rightmost_child(w),
        Step::Ls => view.left_sibling(w),
        Step::Rs => view.right_sibling(w),
        // ROOT (0) has no neighbours in the sentence; word 1 has no previous word.
        Step::Pw => (w >= 2).then(|| w - 1),
        Step::Fw => (w >= 1 && w < view.n_words()).then(|| w + 1),
    }
}

/// The word at a lazy address, its prefix's word being in `words`.
#[inline(always)]
fn nav_word<V: ConfigView + ?Sized>(n: Nav, words: &[Stamped<Option<u32>>], view: &V) -> Option<u32> {
    match n {
        Nav::Base(Base::Stack(i)) => view.stack(i as usize),
        Nav::Base(Base::Queue(i)) => view.queue(i as usize),
        Nav::Step { from, step } => words[from as usize].value.and_then(|w| step_from(w, step, view)),
    }
}

/// The value of atom `a` in `view`, the word at address i being `word(i)` (which
/// may cache: lazy extraction).
#[inline(always)]
fn atom_value<V: ConfigView + ?Sized>(
    a: CAtom,
    mut word: impl FnMut(usize) -> Option<u32>,
    view: &V,
    words: &SentAttrs,
) -> u64 {
    match a {
        CAtom::Word { slot, addr } => word(addr).map_or(NONE_VALUE, |w| words.get(slot, w as i64)),
        CAtom::Deprel { addr } => {
            word(addr).and_then(|w| view.label(w)).map_or(NONE_VALUE, |l| combine(LABEL_SALT, l as u64))
        }
        CAtom::LeftValency { addr } => {
            word(addr).map_or(NONE_VALUE, |w| combine(LVAL_SALT, view.n_left_children(w) as u64))
        }
        CAtom::RightValency { addr } => {
            word(addr).map_or(NONE_VALUE, |w| combine(RVAL_SALT, view.n_right_children(w) as u64))
        }
        CAtom::Dist => match (view.stack(0), view.queue(0)) {
            (Some(s), Some(q)) => combine(DIST_SALT, dist_bin(s.abs_diff(q) as usize)),
            _ => NONE_VALUE,
        },
    }
}

impl ConfigFeatures {
    pub fn compile(set: &TemplateSet) -> Result<ConfigFeatures> {
        Self::compile_in(set, &[])
    }

    /// Whether a template reads word clusters (`cluster`, `cluster:K`).
    pub fn reads_clusters(&self) -> bool {
        self.attrs.iter().any(|a| matches!(a, Attr::Cluster(_)))
    }

    /// Refuses templates that read word clusters where `what` has no cluster table
    /// (every word would get the one "none" value).
    pub fn refuse_clusters(&self, what: &str) -> Result<()> {
        if self.reads_clusters() {
            return Err(Error::InvalidArgument(format!(
                "{what} has no word-cluster table: its templates cannot read cluster or cluster:K"
            )));
        }
        Ok(())
    }

    /// [`Self::compile`] with the attribute slots of `slots` first (in that order),
    /// then any other attribute the set reads: a set compiled in the slots of a larger
    /// set (its `attrs`) reads the larger set's [`SentAttrs`] (a cascade's first stage
    /// reads the full model's). Features are the same whatever the slots.
    pub fn compile_in(set: &TemplateSet, slots: &[Attr]) -> Result<ConfigFeatures> {
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
        let attrs = attrs::distinct(slots.iter().cloned().chain(attrs_used));
        let compile_atom = |a: &Atom| match a {
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
            Atom::Dist | Atom::Dir | Atom::SibDist | Atom::ArcWord { .. } | Atom::TokenWord { .. } => {
                CAtom::Dist
            }
        };
        let (mut atoms, mut atom_ids, mut templates) = (Vec::new(), Vec::new(), Vec::new());
        for t in &set.templates {
            let start = atom_ids.len() as u32;
            for a in t.atoms.iter().map(compile_atom) {
                let i = atoms.iter().position(|&x| x == a).unwrap_or_else(|| {
                    atoms.push(a);
                    atoms.len() - 1
                });
                let i = u16::try_from(i).map_err(|_| {
                    Error::InvalidArgument("a template set may use at most 65,536 atoms".into())
                })?;
                atom_ids.push(i);
            }
            templates.push(CompiledConfig { id: t.id, start, end: atom_ids.len() as u32 });
        }
        let mut by_arity = ByArity::default();
        for (pos, t) in templates.iter().enumerate() {
            let (pos, ids) = (pos as u32, &atom_ids[t.start as usize..t.end as usize]);
            match *ids {
                [a] => by_arity.one.push(FixedArity { pos, id: t.id, atoms: [a] }),
                [a, b] => by_arity.two.push(FixedArity { pos, id: t.id, atoms: [a, b] }),
                [a, b, c] => by_arity.three.push(FixedArity { pos, id: t.id, atoms: [a, b, c] }),
                _ => by_arity.other.push(pos),
            }
        }
        let lazy = LazyPlan::compile(&addrs, &atoms, &templates, &atom_ids);
        Ok(ConfigFeatures { templates, by_arity, attrs, addrs, atoms, atom_ids, lazy })
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// Resolves every address of the set, then evaluates every distinct atom once.
    /// O(addresses · steps + atoms).
    fn evaluate_atoms<V: ConfigView + ?Sized>(
        &self,
        view: &V,
        words: &SentAttrs,
        scratch: &mut ExtractScratch,
    ) {
        let at = &mut scratch.words;
        at.clear();
        at.extend(self.addrs.iter().map(|a| resolve(a, view)));
        let at = &scratch.words;
        scratch.values.clear();
        scratch.values.extend(self.atoms.iter().map(|&a| atom_value(a, |i| at[i], view, words)));
    }

    /// Starts lazy extraction ([`ConfigFeatures::feature`]) in a new configuration:
    /// forgets every value `lazy` holds. O(1) (O(atoms + templates) once every 2^32 calls).
    pub fn begin_lazy(&self, lazy: &mut LazyScratch) {
        let sizes = (self.lazy.nav.len(), self.atoms.len(), self.templates.len());
        if (lazy.words.len(), lazy.values.len(), lazy.feats.len()) != sizes {
            *lazy = LazyScratch::default();
            lazy.words.resize(sizes.0, Stamped::default());
            lazy.values.resize(sizes.1, Stamped::default());
            lazy.feats.resize(sizes.2, Stamped::default());
        }
        lazy.next = 0;
        lazy.gen = lazy.gen.wrapping_add(1);
        if lazy.gen == 0 {
            // The stamps wrapped around: clear them so no old value passes for new.
            lazy.words.fill(Stamped::default());
            lazy.values.fill(Stamped::default());
            lazy.feats.fill(Stamped::default());
            lazy.gen = 1;
        }
    }

    /// The feature of template `t` in the configuration `view` given to the last
    /// [`ConfigFeatures::begin_lazy`]: only the addresses and atoms it reads are
    /// evaluated, each once per configuration, so a decision that stops after a few
    /// templates pays for those alone (Strubell et al. 2015). Equal to
    /// [`ConfigFeatures::extract`]'s t-th feature. Templates asked in the set's order
    /// (the next one not done) run the compiled plan with no checks; others check each
    /// atom. O(atoms of t) the first time, O(1) after.
    #[inline(always)]
    pub fn feature<V: ConfigView + ?Sized>(
        &self,
        t: usize,
        view: &V,
        words: &SentAttrs,
        lazy: &mut LazyScratch,
    ) -> u64 {
        let gen = lazy.gen;
        let done = lazy.feats[t];
        if done.gen == gen {
            // Done out of order before: its addresses and atoms are known too.
            lazy.next += usize::from(t == lazy.next);
            return done.value;
        }
        let lt = self.lazy.templates[t];
        if t == lazy.next {
            self.run_plan(&self.lazy.ops[lt.ops.0 as usize..lt.ops.1 as usize], view, words, lazy);
            lazy.next += 1;
        } else {
            self.evaluate_checked(lt, view, words, lazy);
        }
        let values = &lazy.values;
        let acc = self.atom_ids[lt.atoms.0 as usize..lt.atoms.1 as usize]
            .iter()
            .fold(lt.id, |acc, &a| combine(acc, values[a as usize].value));
        lazy.feats[t] = Stamped { gen, value: acc };
        acc
    }

    /// Runs a template's plan: the addresses and atoms it reads first in the set's
    /// order (templates before it are done: everything else it reads is known).
    /// O(new atoms + addresses).
    #[inline(always)]
    fn run_plan<V: ConfigView + ?Sized>(
        &self,
        ops: &[Op],
        view: &V,
        words: &SentAttrs,
        lazy: &mut LazyScratch,
    ) {
        let gen = lazy.gen;
        for &op in ops {
            match op {
                Op::Nav { j, nav } => {
                    let w = nav_word(nav, &lazy.words, view);
                    lazy.words[j as usize] = Stamped { gen, value: w };
                }
                Op::Atom { a, atom } => {
                    let at = &lazy.words;
                    let v = atom_value(atom, |i| at[i].value, view, words);
                    lazy.values[a as usize] = Stamped { gen, value: v };
                }
            }
        }
    }

    /// Evaluates the atoms of template `lt` not yet known, and the addresses they read
    /// (with their prefixes). O(atoms · address length).
    #[inline(never)]
    fn evaluate_checked<V: ConfigView + ?Sized>(
        &self,
        lt: LazyTemplate,
        view: &V,
        words: &SentAttrs,
        lazy: &mut LazyScratch,
    ) {
        let (p, gen) = (&self.lazy, lazy.gen);
        for &a in &self.atom_ids[lt.atoms.0 as usize..lt.atoms.1 as usize] {
            let a = a as usize;
            if lazy.values[a].gen == gen {
                continue;
            }
            for &j in &p.chain_ids[p.chain_at[a] as usize..p.chain_at[a + 1] as usize] {
                let j = j as usize;
                if lazy.words[j].gen != gen {
                    let w = nav_word(p.nav[j], &lazy.words, view);
                    lazy.words[j] = Stamped { gen, value: w };
                }
            }
            let at = &lazy.words;
            let v = atom_value(p.atoms[a], |i| at[i].value, view, words);
            lazy.values[a] = Stamped { gen, value: v };
        }
    }

    /// Whether template t's feature was computed in the current lazy configuration.
    #[inline]
    pub fn has_feature(&self, t: usize, lazy: &LazyScratch) -> bool {
        lazy.feats.get(t).is_some_and(|f| f.gen == lazy.gen)
    }

    /// One feature per template of `active` (all templates when `None`), appended to
    /// `out` in that order: the template id folded with its atom values. `words` are
    /// the static attribute values of the sentence (filled with [`SentAttrs::fill`]
    /// from `VocabHashes::new(tb, &self.attrs)`). O(distinct atoms + T × atoms).
    pub fn extract<V: ConfigView + ?Sized>(
        &self,
        view: &V,
        words: &SentAttrs,
        active: Option<&[usize]>,
        scratch: &mut ExtractScratch,
        out: &mut Vec<u64>,
    ) {
        self.evaluate_atoms(view, words, scratch);
        let values = &scratch.values;
        let one = |t: &CompiledConfig| {
            self.atom_ids[t.start as usize..t.end as usize]
                .iter()
                .fold(t.id, |acc, &a| combine(acc, values[a as usize]))
        };
        match active {
            None => {
                let first = out.len();
                out.resize(first + self.templates.len(), 0);
                let out = &mut out[first..];
                let g = &self.by_arity;
                for t in &g.one {
                    out[t.pos as usize] = t.feature(values);
                }
                for t in &g.two {
                    out[t.pos as usize] = t.feature(values);
                }
                for t in &g.three {
                    out[t.pos as usize] = t.feature(values);
                }
                for &pos in &g.other {
                    out[pos as usize] = one(&self.templates[pos as usize]);
                }
            }
            Some(idx) => out.extend(idx.iter().map(|&i| one(&self.templates[i]))),
        }
    }
}

impl LazyPlan {
    /// The plan of a compiled set: `addrs`, `atoms` and the templates' `atom_ids` as
    /// [`ConfigFeatures`] holds them. O(templates · atoms + addresses · steps²).
    fn compile(
        addrs: &[ConfigAddr],
        atoms: &[CAtom],
        templates: &[CompiledConfig],
        atom_ids: &[u16],
    ) -> LazyPlan {
        let mut p = LazyPlan::default();
        // Every address and each of its prefixes, a prefix before what extends it.
        let mut keys: Vec<ConfigAddr> = Vec::new();
        let mut chain_of = |addr: &ConfigAddr, p: &mut LazyPlan| -> Vec<u32> {
            let mut chain = Vec::with_capacity(addr.steps.len() + 1);
            for k in 0..=addr.steps.len() {
                let key = ConfigAddr { base: addr.base, steps: addr.steps[..k].to_vec() };
                let j = keys.iter().position(|x| *x == key).unwrap_or_else(|| {
                    p.nav.push(match k {
                        0 => Nav::Base(addr.base),
                        _ => Nav::Step { from: chain[k - 1], step: addr.steps[k - 1] },
                    });
                    keys.push(key);
                    keys.len() - 1
                });
                chain.push(j as u32);
            }
            chain
        };
        p.chain_at.push(0);
        for &a in atoms {
            let (atom, chain) = match a {
                CAtom::Word { slot, addr } => {
                    let chain = chain_of(&addrs[addr], &mut p);
                    (CAtom::Word { slot, addr: *chain.last().unwrap_or(&0) as usize }, chain)
                }
                CAtom::Deprel { addr } => {
                    let chain = chain_of(&addrs[addr], &mut p);
                    (CAtom::Deprel { addr: *chain.last().unwrap_or(&0) as usize }, chain)
                }
                CAtom::LeftValency { addr } => {
                    let chain = chain_of(&addrs[addr], &mut p);
                    (CAtom::LeftValency { addr: *chain.last().unwrap_or(&0) as usize }, chain)
                }
                CAtom::RightValency { addr } => {
                    let chain = chain_of(&addrs[addr], &mut p);
                    (CAtom::RightValency { addr: *chain.last().unwrap_or(&0) as usize }, chain)
                }
                CAtom::Dist => (CAtom::Dist, Vec::new()),
            };
            p.atoms.push(atom);
            p.chain_ids.extend(chain);
            p.chain_at.push(p.chain_ids.len() as u32);
        }
        // What each template reads first in set order: its new atoms, each after the
        // addresses of its chain no earlier template read.
        let (mut nav_seen, mut atom_seen) = (vec![false; p.nav.len()], vec![false; atoms.len()]);
        for t in templates {
            let first = p.ops.len() as u32;
            for &a in &atom_ids[t.start as usize..t.end as usize] {
                let a = a as usize;
                if std::mem::replace(&mut atom_seen[a], true) {
                    continue;
                }
                for &j in &p.chain_ids[p.chain_at[a] as usize..p.chain_at[a + 1] as usize] {
                    if !std::mem::replace(&mut nav_seen[j as usize], true) {
                        p.ops.push(Op::Nav { j, nav: p.nav[j as usize] });
                    }
                }
                p.ops.push(Op::Atom { a: a as u32, atom: p.atoms[a] });
            }
            let ops = (first, p.ops.len() as u32);
            p.templates.push(LazyTemplate { id: t.id, ops, atoms: (t.start, t.end) });
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::super::attrs::VocabHashes;
    use super::*;
    use crate::{Treebank, WordStrs};

    /// A hand-built configuration of a five-word sentence: its stack (top first),
    /// queue (front first) and heads.
    struct Fixed {
        stack: Vec<u32>,
        queue: Vec<u32>,
        heads: Vec<Option<u32>>,
    }
    impl ConfigView for Fixed {
        fn stack(&self, i: usize) -> Option<u32> {
            self.stack.get(i).copied()
        }
        fn queue(&self, i: usize) -> Option<u32> {
            self.queue.get(i).copied()
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

    /// Stack [ROOT, 2], queue [4, 5], arcs 2→1, 2→3.
    fn fixed() -> Fixed {
        Fixed { stack: vec![2, 0], queue: vec![4, 5], heads: vec![None, Some(2), None, Some(2), None, None] }
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

    /// Every template evaluated on its own, atom by atom (no shared atoms).
    fn naive(set: &TemplateSet, cf: &ConfigFeatures, v: &Fixed, sa: &SentAttrs) -> Vec<u64> {
        let value = |a: &Atom| match a {
            Atom::ConfigWord { attr, addr } => {
                let w = resolve(addr, v);
                match attr {
                    NodeAttr::Word(x) => {
                        let slot = cf.attrs.iter().position(|y| y == x).unwrap();
                        w.map_or(NONE_VALUE, |w| sa.get(slot, w as i64))
                    }
                    NodeAttr::Deprel => {
                        w.and_then(|w| v.label(w)).map_or(NONE_VALUE, |l| combine(LABEL_SALT, l as u64))
                    }
                    NodeAttr::LeftValency => {
                        w.map_or(NONE_VALUE, |w| combine(LVAL_SALT, v.n_left_children(w) as u64))
                    }
                    NodeAttr::RightValency => {
                        w.map_or(NONE_VALUE, |w| combine(RVAL_SALT, v.n_right_children(w) as u64))
                    }
                }
            }
            _ => combine(DIST_SALT, dist_bin(2)),
        };
        set.templates.iter().map(|t| t.atoms.iter().fold(t.id, |acc, a| combine(acc, value(a)))).collect()
    }

    /// Attribute values of a five-word sentence with these forms, for `cf`.
    fn sentence(forms: [&str; 5], cf: &ConfigFeatures) -> SentAttrs {
        let mut tb = Treebank::new();
        let ws: Vec<_> = forms.iter().map(|f| WordStrs::simple(f, "X", 0, "dep")).collect();
        tb.push_sentence(&ws, vec![]);
        let mut sa = SentAttrs::default();
        sa.fill(&VocabHashes::new(&tb, &cf.attrs), &tb, 0);
        sa
    }

    #[test]
    fn shared_atom_evaluation_equals_evaluating_each_template_alone() {
        let set = crate::templates::defaults::load("arc_eager").unwrap();
        let cf = ConfigFeatures::compile(&set).unwrap();
        assert!(cf.atoms.len() < cf.atom_ids.len(), "the default set shares atoms");
        let sa = sentence(["A", "b", "C", "d", "E"], &cf);
        let (mut scratch, mut got) = (ExtractScratch::default(), vec![]);
        cf.extract(&fixed(), &sa, None, &mut scratch, &mut got);
        assert_eq!(got, naive(&set, &cf, &fixed(), &sa));
        let distinct: std::collections::HashSet<_> = got.iter().collect();
        assert_eq!(distinct.len(), got.len());
    }

    #[test]
    fn lazy_features_equal_the_whole_extraction_in_any_order_and_forget_the_last_configuration() {
        let set = crate::templates::defaults::load("arc_eager").unwrap();
        let cf = ConfigFeatures::compile(&set).unwrap();
        let sa = sentence(["A", "b", "C", "d", "E"], &cf);
        let (mut scratch, mut all) = (ExtractScratch::default(), vec![]);
        cf.extract(&fixed(), &sa, None, &mut scratch, &mut all);
        let mut lazy = LazyScratch::default();
        cf.begin_lazy(&mut lazy);
        let n = cf.len();
        // A scrambled order, each template asked twice (the second from the cache).
        for i in 0..2 * n {
            let t = (i * 37) % n;
            assert_eq!(cf.feature(t, &fixed(), &sa, &mut lazy), all[t], "template {t}");
        }
        assert!(cf.has_feature(0, &lazy));
        // Another configuration: nothing of the last one is reused.
        let other = Fixed { heads: vec![None, None, None, Some(2), Some(3), None], ..fixed() };
        all.clear();
        cf.extract(&other, &sa, None, &mut scratch, &mut all);
        cf.begin_lazy(&mut lazy);
        assert!(!cf.has_feature(0, &lazy));
        for t in (0..n).rev() {
            assert_eq!(cf.feature(t, &other, &sa, &mut lazy), all[t], "template {t}");
        }
    }

    /// Lazy extraction mixes the compiled plan (the next template of the set's order)
    /// with checked evaluation (any other): a move decision that stops early, then a
    /// label decision's or a trainer's templates out of order, then the order again.
    /// Every mix gives the whole extraction's features, and nothing carries over from
    /// the configuration before (consecutive configurations differ in every address).
    #[test]
    fn lazy_features_equal_the_whole_extraction_whatever_mix_of_ordered_and_other_requests() {
        // The default set, with addresses whose prefixes are no address of the set.
        let text = format!("{}\nupos(QUEUE_2 lc rs) & form(STACK_1 h)\n", include_str!("sets/arc_eager.txt"));
        let cf = ConfigFeatures::compile(&TemplateSet::parse(&text, Family::Config, 3).unwrap()).unwrap();
        assert_eq!(cf.lazy.nav.len(), cf.addrs.len() + 1, "the plan adds the prefix QUEUE_2 lc");
        let sa = sentence(["A", "b", "C", "d", "E"], &cf);
        let views = [
            fixed(),
            // Stack [ROOT, 3, 4], queue [5]: 3→2→1, 4 and 5 headless.
            Fixed {
                stack: vec![4, 3, 0],
                queue: vec![5],
                heads: vec![None, Some(2), Some(3), None, None, None],
            },
            // Stack [ROOT, 1], queue [2, 3, 4, 5], no arcs.
            Fixed { stack: vec![1, 0], queue: vec![2, 3, 4, 5], heads: vec![None; 6] },
        ];
        let all: Vec<Vec<u64>> = views
            .iter()
            .map(|v| {
                let mut out = vec![];
                cf.extract(v, &sa, None, &mut ExtractScratch::default(), &mut out);
                out
            })
            .collect();
        let n = cf.len();
        let (mut rng, mut lazy) = (crate::util::rng::Rng::new(15), LazyScratch::default());
        let mut ordered = 0; // templates computed by the plan
        for trial in 0..300 {
            let k = trial % views.len();
            cf.begin_lazy(&mut lazy);
            for _ in 0..2 * n {
                // Mostly the next template in order, as the rule asks; else any.
                let t = if rng.below(3) > 0 && lazy.next < n { lazy.next } else { rng.index(n) };
                ordered += usize::from(t == lazy.next && !cf.has_feature(t, &lazy));
                assert_eq!(
                    cf.feature(t, &views[k], &sa, &mut lazy),
                    all[k][t],
                    "trial {trial}, template {t}"
                );
            }
        }
        // Most templates come by the plan, the rest checked.
        assert!(ordered > 200 * n && ordered < 300 * n, "the plan ran {ordered} times");
    }

    #[test]
    fn extraction_is_deterministic_and_reads_labels_and_valency() {
        let text = "form(STACK_0)\ndeprel(STACK_0 lc)\nlval(STACK_0) & rval(STACK_0)\nform(QUEUE_0) & dist\nform(STACK_2)";
        let set = TemplateSet::parse(text, Family::Config, 3).unwrap();
        let cf = ConfigFeatures::compile(&set).unwrap();
        let sa = sentence(["A", "B", "C", "D", "E"], &cf);
        let (mut scratch, mut a, mut b) = (ExtractScratch::default(), vec![], vec![]);
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
