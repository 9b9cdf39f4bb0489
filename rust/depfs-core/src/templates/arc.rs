//! Arc templates compiled into selectors, and their per-sentence partial hashes.
//!
//! A template's atoms split into head-side atoms (h, h±k), modifier-side atoms
//! (m, m±k), edge atoms (dir, dist), an optional in-between atom (b) and second-order
//! atoms (s, g). Per sentence we precompute, for every distinct list of head-side
//! atoms L and position p, `hp[L][p]` = hash of L's values at p, and `mp` likewise for
//! modifier-side lists, so the feature of arc (h, m) is one multiply-xorshift of two
//! cached words and an edge code ([`mix_arc`]). Templates share lists (169 first-order
//! templates use far fewer distinct head or modifier lists), and since every template
//! owns its weight block, a partial need not hash the template itself. The layout is
//! list-major (`[L * (n1 + 1) + p]`): a scorer that loops templates outside and arcs
//! inside keeps one template's partials and weight block hot in cache.

use super::attrs::{self, SentAttrs, VocabHashes, NONE_VALUE, PAD_LEFT, PAD_RIGHT};
use super::hash::combine;
use super::syntax::{ArcAddr, Atom, Attr, Family};
use super::TemplateSet;
use crate::{Error, Result, Treebank};

const HEAD_SEED: u64 = 0x6865_6164_0000_0000;
const MOD_SEED: u64 = 0x6d6f_6400_0000_0000;
const SIB_SEED: u64 = 0x7369_6200_0000_0000;
const GRAND_SEED: u64 = 0x6772_6400_0000_0000;

/// Binned arc length: 1..5 exact, 6 for 6..10, 7 beyond (MSTParser-style bins).
#[inline]
pub fn dist_bin(d: usize) -> u64 {
    match d {
        0..=5 => d as u64,
        6..=10 => 6,
        _ => 7,
    }
}

const EDGE_MULT: u64 = 0x9e37_79b9_7f4a_7c15;
const ARC_MULT: u64 = 0xd6e8_feb8_6659_fd93;

/// The feature of an arc from its head partial, its modifier partial (already
/// rotated, as stored) and its edge code (already multiplied, see [`edge_code`]).
/// One multiply and one xorshift: the partials are full-avalanche hashes already.
#[inline(always)]
pub fn mix_arc(hp: u64, mp: u64, edge: u64) -> u64 {
    let x = (hp ^ mp ^ edge).wrapping_mul(ARC_MULT);
    x ^ (x >> 29)
}

/// Edge code of arc h → m for a template using direction (`dir`) and/or binned
/// distance (`dist`), premultiplied for [`mix_arc`].
#[inline(always)]
pub fn edge_code(dir: bool, dist: bool, h: usize, m: usize) -> u64 {
    let mut e = 0;
    if dir {
        e |= 1 + (h < m) as u64;
    }
    if dist {
        e |= dist_bin(h.abs_diff(m)) << 2;
    }
    e.wrapping_mul(EDGE_MULT)
}

/// One compiled arc template.
#[derive(Debug, Clone)]
pub struct CompiledArc {
    pub id: u64,
    /// Rows of this template's head / modifier / sibling / grandparent partials.
    head_row: usize,
    mod_row: usize,
    sib_row: usize,
    grand_row: usize,
    head: Vec<(usize, i64)>,
    modi: Vec<(usize, i64)>,
    between: Option<usize>,
    sib: Vec<usize>,
    grand: Vec<usize>,
    dir: bool,
    dist: bool,
    /// Binned sibling–modifier distance (`sdist`).
    sib_dist: bool,
}

impl CompiledArc {
    pub fn has_between(&self) -> bool {
        self.between.is_some()
    }
    pub fn is_second_order(&self) -> bool {
        !self.sib.is_empty() || !self.grand.is_empty() || self.sib_dist
    }
    /// How the template's value depends on the arc, which lets scorers hoist it.
    pub fn shape(&self) -> ArcShape {
        if self.between.is_some() {
            ArcShape::Between
        } else if self.is_second_order() || self.dir || self.dist {
            ArcShape::General
        } else if self.modi.is_empty() {
            ArcShape::HeadOnly
        } else if self.head.is_empty() {
            ArcShape::ModOnly
        } else {
            ArcShape::General
        }
    }
    pub fn uses_grandparent(&self) -> bool {
        !self.grand.is_empty()
    }
    /// Which edge atoms the template has: bit 0 = dir, bit 1 = dist.
    pub fn edge_kind(&self) -> usize {
        self.dir as usize | (self.dist as usize) << 1
    }
    /// Attribute slot of the in-between atom, if any.
    pub fn between_slot(&self) -> Option<usize> {
        self.between
    }
}

/// Dependence of a template's feature on the arc h → m.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArcShape {
    /// Only head-side atoms: the same feature for every modifier of h.
    HeadOnly,
    /// Only modifier-side atoms: the same feature for every head of m.
    ModOnly,
    /// Depends on both ends or on the edge.
    General,
    /// Has an in-between atom: one instance per word between h and m.
    Between,
}

/// Second-order context of an arc: sibling and grandparent (`None` = no such word).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Second {
    pub sib: Option<usize>,
    pub grand: Option<usize>,
}

/// A compiled arc template set.
#[derive(Debug, Clone)]
pub struct ArcFeatures {
    pub templates: Vec<CompiledArc>,
    /// Attribute slots used by the set (index = slot).
    pub attrs: Vec<Attr>,
    /// Distinct atom lists of each side, indexed by the templates' rows.
    head_lists: Vec<Vec<(usize, i64)>>,
    mod_lists: Vec<Vec<(usize, i64)>>,
    sib_lists: Vec<Vec<usize>>,
    grand_lists: Vec<Vec<usize>>,
}

/// Appends, for each list of (slot, offset) atoms, the row of its partial hashes at
/// positions 0..stride: `seed` folded with the atoms' values in order, then rotated
/// left by `rot`. Atom by atom over all positions (the same folds as position by
/// position): the positions' chains are independent and overlap. O(stride × atoms).
fn fill_partials(
    a: &SentAttrs,
    lists: &[Vec<(usize, i64)>],
    seed: u64,
    stride: usize,
    rot: u32,
    out: &mut Vec<u64>,
) {
    for l in lists {
        let start = out.len();
        out.resize(start + stride, seed);
        let row = &mut out[start..];
        for &(slot, off) in l {
            let (left, stored, right) = a.column(slot, off, stride);
            let (head, rest) = row.split_at_mut(left);
            let (mid, tail) = rest.split_at_mut(stride - left - right);
            head.iter_mut().for_each(|acc| *acc = combine(*acc, PAD_LEFT));
            mid.iter_mut().zip(stored).for_each(|(acc, v)| *acc = combine(*acc, v));
            tail.iter_mut().for_each(|acc| *acc = combine(*acc, PAD_RIGHT));
        }
        if rot != 0 {
            for acc in row.iter_mut() {
                *acc = acc.rotate_left(rot);
            }
        }
    }
}

/// Index of `x` in `lists`, appending it if new.
fn intern<T: PartialEq + Clone>(lists: &mut Vec<T>, x: &T) -> usize {
    lists.iter().position(|l| l == x).unwrap_or_else(|| {
        lists.push(x.clone());
        lists.len() - 1
    })
}

/// Per-sentence precomputed values of an [`ArcFeatures`] set; reused across sentences.
#[derive(Debug, Clone, Default)]
pub struct ArcSent {
    /// Words + 1 (ROOT).
    pub n1: usize,
    /// Row length of the partial tables: n1 + 1 (the last entry of sp / gp = "none").
    stride: usize,
    pub attrs: SentAttrs,
    hp: Vec<u64>,
    mp: Vec<u64>,
    /// Sibling / grandparent partials; row `n1` holds the "none" value.
    sp: Vec<u64>,
    gp: Vec<u64>,
}

impl ArcFeatures {
    /// Compiles a set of the arc family. O(atoms).
    pub fn compile(set: &TemplateSet) -> Result<ArcFeatures> {
        if set.family != Family::Arc {
            return Err(Error::InvalidArgument("arc features need arc templates".into()));
        }
        let all = set.templates.iter().flat_map(|t| t.atoms.iter()).filter_map(|a| match a {
            Atom::ArcWord { attr, .. } => Some(attr.clone()),
            _ => None,
        });
        let attrs = attrs::distinct(all);
        let slot = |a: &Attr| attrs.iter().position(|x| x == a).unwrap_or(0);
        let mut templates: Vec<CompiledArc> = set
            .templates
            .iter()
            .map(|t| {
                let mut c = CompiledArc {
                    id: t.id,
                    head_row: 0,
                    mod_row: 0,
                    sib_row: 0,
                    grand_row: 0,
                    head: vec![],
                    modi: vec![],
                    between: None,
                    sib: vec![],
                    grand: vec![],
                    dir: false,
                    dist: false,
                    sib_dist: false,
                };
                for a in &t.atoms {
                    match a {
                        Atom::Dir => c.dir = true,
                        Atom::Dist => c.dist = true,
                        Atom::SibDist => c.sib_dist = true,
                        Atom::ArcWord { attr, addr } => match *addr {
                            ArcAddr::Head(o) => c.head.push((slot(attr), o as i64)),
                            ArcAddr::Mod(o) => c.modi.push((slot(attr), o as i64)),
                            ArcAddr::Between => c.between = Some(slot(attr)),
                            ArcAddr::Sibling => c.sib.push(slot(attr)),
                            ArcAddr::Grand => c.grand.push(slot(attr)),
                        },
                        Atom::ConfigWord { .. } | Atom::TokenWord { .. } => {
                            unreachable!("family checked above")
                        }
                    }
                }
                c
            })
            .collect();
        let (mut head_lists, mut mod_lists, mut sib_lists, mut grand_lists) = Default::default();
        for c in &mut templates {
            c.head_row = intern(&mut head_lists, &c.head);
            c.mod_row = intern(&mut mod_lists, &c.modi);
            c.sib_row = intern(&mut sib_lists, &c.sib);
            c.grand_row = intern(&mut grand_lists, &c.grand);
        }
        Ok(ArcFeatures { templates, attrs, head_lists, mod_lists, sib_lists, grand_lists })
    }

    pub fn len(&self) -> usize {
        self.templates.len()
    }
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }

    /// Precomputes the partial hashes of sentence `s`. O(n × distinct lists × atoms).
    pub fn prepare(&self, vh: &VocabHashes, tb: &Treebank, s: usize, out: &mut ArcSent) {
        out.attrs.fill(vh, tb, s);
        let n1 = out.attrs.n + 1;
        let stride = n1 + 1;
        out.n1 = n1;
        out.stride = stride;
        for v in [&mut out.hp, &mut out.mp, &mut out.sp, &mut out.gp] {
            v.clear();
        }
        let a = &out.attrs;
        // Positions n1 (past the end) of the sibling / grandparent rows stand for "none".
        let fold2 = |seed: u64, slots: &[usize], p: usize| {
            let q = (p < n1).then_some(p);
            slots.iter().fold(seed, |acc, &sl| combine(acc, q.map_or(NONE_VALUE, |q| a.get(sl, q as i64))))
        };
        fill_partials(a, &self.head_lists, HEAD_SEED, stride, 0, &mut out.hp);
        fill_partials(a, &self.mod_lists, MOD_SEED, stride, 17, &mut out.mp);
        // First-order sets have only the empty list here: one constant row each.
        for l in &self.sib_lists {
            out.sp.extend((0..stride).map(|p| fold2(SIB_SEED, l, p)));
        }
        for l in &self.grand_lists {
            out.gp.extend((0..stride).map(|p| fold2(GRAND_SEED, l, p)));
        }
    }

    /// Head partials of template t, indexed by position (length n1 + 1).
    #[inline(always)]
    pub fn head_partials<'a>(&self, sent: &'a ArcSent, t: usize) -> &'a [u64] {
        let r = self.templates[t].head_row;
        &sent.hp[r * sent.stride..(r + 1) * sent.stride]
    }
    /// Modifier partials of template t (rotated as [`mix_arc`] expects).
    #[inline(always)]
    pub fn mod_partials<'a>(&self, sent: &'a ArcSent, t: usize) -> &'a [u64] {
        let r = self.templates[t].mod_row;
        &sent.mp[r * sent.stride..(r + 1) * sent.stride]
    }

    /// Feature of template `t` on arc h → m, ignoring in-between and second-order atoms.
    /// O(1): one mix of two cached partials.
    #[inline(always)]
    pub fn plain(&self, sent: &ArcSent, t: usize, h: usize, m: usize) -> u64 {
        let c = &self.templates[t];
        let st = sent.stride;
        mix_arc(sent.hp[c.head_row * st + h], sent.mp[c.mod_row * st + m], edge_code(c.dir, c.dist, h, m))
    }

    /// Calls `f` with every feature instance of template `t` on arc h → m with the
    /// given sibling and grandparent. A template with
    /// an in-between atom yields one feature per word strictly between h and m
    /// (none when h and m are adjacent); others yield exactly one.
    #[inline]
    pub fn for_each(
        &self,
        sent: &ArcSent,
        t: usize,
        h: usize,
        m: usize,
        second: Second,
        mut f: impl FnMut(u64),
    ) {
        let c = &self.templates[t];
        let mut base = self.plain(sent, t, h, m);
        if c.is_second_order() {
            let st = sent.stride;
            let s = second.sib.unwrap_or(sent.n1);
            let g = second.grand.unwrap_or(sent.n1);
            base = combine(combine(base, sent.sp[c.sib_row * st + s]), sent.gp[c.grand_row * st + g]);
            if c.sib_dist {
                // 0 = no sibling, else 1 + the binned |s - m|.
                base = combine(base, second.sib.map_or(0, |s| 1 + dist_bin(s.abs_diff(m))));
            }
        }
        match c.between {
            None => f(base),
            Some(slot) => {
                for b in h.min(m) + 1..h.max(m) {
                    f(combine(base, sent.attrs.get(slot, b as i64)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WordStrs;

    fn tb() -> Treebank {
        let mut tb = Treebank::new();
        let w = [
            WordStrs::simple("The", "DET", 2, "det"),
            WordStrs::simple("dog", "NOUN", 3, "nsubj"),
            WordStrs::simple("barks", "VERB", 0, "root"),
            WordStrs::simple("loudly", "ADV", 3, "advmod"),
        ];
        tb.push_sentence(&w, vec![]);
        tb
    }

    fn features(text: &str, h: usize, m: usize) -> Vec<u64> {
        features_with(text, h, m, None)
    }

    fn features_with(text: &str, h: usize, m: usize, sib: Option<usize>) -> Vec<u64> {
        let tb = tb();
        let set = TemplateSet::parse(text, Family::Arc, 3).unwrap();
        let af = ArcFeatures::compile(&set).unwrap();
        let vh = VocabHashes::new(&tb, &af.attrs);
        let mut s = ArcSent::default();
        af.prepare(&vh, &tb, 0, &mut s);
        let mut out = vec![];
        af.for_each(&s, 0, h, m, Second { sib, grand: None }, |f| out.push(f));
        out
    }

    #[test]
    fn sibling_distance_separates_bins_and_no_sibling() {
        // Head 0 (ROOT) with modifier 4 and siblings 3 (|s-m| = 1), 2 (2) or none.
        let t = "upos(m) & sdist";
        assert_ne!(features_with(t, 0, 4, Some(3)), features_with(t, 0, 4, Some(2)));
        assert_ne!(features_with(t, 0, 4, Some(3)), features_with(t, 0, 4, None));
        // Same head word and same bin (|2-4| = |3-1| = 2): same feature.
        let th = "upos(h) & sdist";
        assert_eq!(features_with(th, 0, 4, Some(2)), features_with(th, 0, 1, Some(3)));
        assert_ne!(features_with(th, 0, 4, Some(2)), features_with(th, 0, 4, Some(3)));
        // sdist makes a template second order; it is an edge atom (not counted as a word atom).
        let set = TemplateSet::parse("upos(h) & upos(s) & upos(m) & sdist & dir", Family::Arc, 3).unwrap();
        assert_eq!(set.templates[0].order(), 2);
        assert_eq!(set.templates[0].text, "upos(h) & upos(m) & upos(s) & dir & sdist");
        assert!(TemplateSet::parse("form(STACK_0) & sdist", Family::Config, 3).is_err());
    }

    #[test]
    fn equal_values_give_equal_features_and_atoms_matter() {
        // upos(h) & upos(m): DET->NOUN arcs at different positions agree.
        assert_eq!(features("upos(h) & upos(m)", 1, 2), features("upos(m) & upos(h)", 1, 2));
        assert_ne!(features("upos(h) & upos(m)", 1, 2), features("upos(h) & upos(m)", 2, 1));
        // dir separates h<m from h>m; dist bins 1 vs 2 differ.
        assert_ne!(features("upos(h) & dir", 3, 2), features("upos(h) & dir", 3, 4));
        assert_eq!(features("upos(h)", 3, 2), features("upos(h)", 3, 4));
        assert_ne!(features("dist", 3, 2), features("dist", 3, 1));
        assert_eq!(features("dist", 3, 2), features("dist", 3, 4));
        // Different templates over the same values differ (template id is mixed in).
        assert_ne!(features("upos(h)", 3, 2), features("xpos(h)", 3, 2));
    }

    #[test]
    fn between_yields_one_instance_per_word() {
        assert_eq!(features("upos(h) & upos(b) & upos(m)", 0, 4).len(), 3);
        assert_eq!(features("upos(b)", 3, 2).len(), 0);
        assert_eq!(features("upos(b)", 4, 1).len(), 2);
        // The in-between word matters: 0->2 has b=1 (DET), 1->3 has b=2 (NOUN).
        let a = features("upos(b)", 0, 2);
        let b = features("upos(b)", 1, 3);
        assert_ne!(a, b);
    }

    /// Every partial is its definition: the seed folded with its list's atom values at
    /// that position (padding past either end), a modifier's rotated by 17.
    #[test]
    fn partials_are_the_folds_of_their_atoms() {
        let tb = tb();
        let text =
            "upos(h-2) & upos(h+2) & form(m-1) & xpos(m+2)\nupos(h) & upos(m)\nform(h+1) & upos(m-2)\ndist";
        let set = TemplateSet::parse(text, Family::Arc, 4).unwrap();
        let af = ArcFeatures::compile(&set).unwrap();
        let vh = VocabHashes::new(&tb, &af.attrs);
        let mut s = ArcSent::default();
        af.prepare(&vh, &tb, 0, &mut s);
        let a = &s.attrs;
        let fold = |seed: u64, l: &[(usize, i64)], p: usize| {
            l.iter().fold(seed, |acc, &(slot, off)| combine(acc, a.get(slot, p as i64 + off)))
        };
        for (lists, parts, seed, rot) in
            [(&af.head_lists, &s.hp, HEAD_SEED, 0), (&af.mod_lists, &s.mp, MOD_SEED, 17)]
        {
            assert_eq!(parts.len(), lists.len() * s.stride);
            for (r, l) in lists.iter().enumerate() {
                for p in 0..s.stride {
                    assert_eq!(
                        parts[r * s.stride + p],
                        fold(seed, l, p).rotate_left(rot),
                        "list {l:?} at {p}"
                    );
                }
            }
        }
    }

    #[test]
    fn neighbours_see_padding_and_root() {
        // m-1 of word 1 is ROOT; h+2 of word 3 is padding; same template differs.
        assert_ne!(features("upos(m-1)", 3, 1), features("upos(m-1)", 3, 2));
        assert_eq!(features("upos(h+2)", 3, 1), features("upos(h+2)", 4, 1));
    }
}
