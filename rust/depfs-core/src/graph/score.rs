//! Scoring parts with arc templates and hashed weights: the hot loops of the graph parser.

use crate::templates::arc::{edge_code, mix_arc, ArcFeatures, ArcSent, ArcShape, Second};
use crate::templates::hash::combine;
use crate::util::prefetch::prefetch;
use crate::weights::{Block, TemplateCounts, WeightTable};

/// Template indices grouped by [`ArcShape`].
#[derive(Debug, Clone, Default)]
pub struct Split {
    head_only: Vec<usize>,
    mod_only: Vec<usize>,
    general: Vec<usize>,
    between: Vec<usize>,
}

impl Split {
    pub fn new(af: &ArcFeatures, active: &[usize]) -> Split {
        let mut s = Split::default();
        for &t in active {
            match af.templates[t].shape() {
                ArcShape::HeadOnly => s.head_only.push(t),
                ArcShape::ModOnly => s.mod_only.push(t),
                ArcShape::General => s.general.push(t),
                ArcShape::Between => s.between.push(t),
            }
        }
        s
    }
}

/// `out[m * n1 + h]` = Σ over the templates of `split` of the weights of arc h → m's
/// features; arcs with `mask[m * n1 + h] == false` get -inf and cost nothing (row 0
/// and the diagonal are 0, decoders ignore them): [`reset_scores`], then
/// [`add_arc_scores_batch`] for one sentence.
pub fn arc_scores<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    sent: &ArcSent,
    split: &Split,
    mask: Option<&[bool]>,
    out: &mut Vec<f64>,
    counts: Option<&mut TemplateCounts>,
) {
    reset_scores(sent.n1, mask, out);
    add_arc_scores_batch(af, w, &mut [ToScore { sent, mask, out }], split, counts);
}

/// Sets `out` to n1 × n1 scores: 0 on the arcs `mask` allows (all when `None`), -inf
/// on the others; row 0 and the diagonal 0. O(n²).
pub fn reset_scores(n1: usize, mask: Option<&[bool]>, out: &mut Vec<f64>) {
    out.clear();
    out.resize(n1 * n1, 0.0);
    if let Some(mask) = mask {
        for m in 1..n1 {
            for h in (0..n1).filter(|&h| h != m && !mask[m * n1 + h]) {
                out[m * n1 + h] = f64::NEG_INFINITY;
            }
        }
    }
}

/// One sentence to score: its partials, the arcs to score (all when `None`), and the
/// scores they are added to (n1 × n1, see [`reset_scores`]).
pub struct ToScore<'a> {
    pub sent: &'a ArcSent,
    pub mask: Option<&'a [bool]>,
    pub out: &'a mut Vec<f64>,
}

/// Adds the scores of the templates of `split` to the arcs each item's mask allows,
/// for several sentences at once; other entries of `out` are left as they are, so
/// template groups can be added round after round to the arcs still open.
///
/// O(n · (H + M) + a · G + a · d · B) for a unpruned arcs of mean length d and H
/// head-only, M modifier-only, G general and B in-between templates. Templates are
/// the outer loop and the arcs of every sentence of the batch the inner one: one
/// template's weight block is read for many sentences in a row, so its frequent rows
/// (common words and tags) stay in L1/L2 instead of being fetched again per sentence
/// after the other templates have evicted them.
pub fn add_arc_scores_batch<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    batch: &mut [ToScore<'_>],
    split: &Split,
    counts: Option<&mut TemplateCounts>,
) {
    add_arc_scores_dual(af, w, None, batch, split, counts);
}

/// A second weight table over the same templates and block sizes, and one score
/// matrix per sentence it adds to (see [`add_arc_scores_dual`]).
pub type Second2<'a, 'b, W> = Option<(&'a W, &'a mut [&'b mut Vec<f64>])>;

/// [`add_arc_scores_batch`], and with `second` = (w2, outs2) the same arcs' scores under
/// the weights `w2` added to `outs2` (one per item): each feature is computed once and
/// read in both tables (dynamic feature selection keeps the full model's sums while
/// the rounds score with a prefix-trained model's).
pub fn add_arc_scores_dual<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    second: Second2<'_, '_, W>,
    batch: &mut [ToScore<'_>],
    split: &Split,
    counts: Option<&mut TemplateCounts>,
) {
    add_arc_scores_groups(af, w, second, batch, &[split], counts);
}

/// [`add_arc_scores_dual`] for several template groups in turn: each group's sum is
/// added to `out` on its own, as one call per group would (the same sums, bit for bit),
/// but the arcs and their edge codes are listed once.
pub fn add_arc_scores_groups<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    mut second: Second2<'_, '_, W>,
    batch: &mut [ToScore<'_>],
    splits: &[&Split],
    mut counts: Option<&mut TemplateCounts>,
) {
    // The surviving arcs of each sentence in row-major order, sentence after sentence.
    let mut arc_h: Vec<usize> = Vec::new();
    let mut arc_m: Vec<usize> = Vec::new();
    let mut starts = vec![0usize];
    for item in batch.iter() {
        let n1 = item.sent.n1;
        for m in 1..n1 {
            for h in 0..n1 {
                if h != m && item.mask.is_none_or(|k| k[m * n1 + h]) {
                    arc_h.push(h);
                    arc_m.push(m);
                }
            }
        }
        starts.push(arc_h.len());
    }
    let n_arcs = arc_h.len();
    let mut acc = vec![0f32; n_arcs];
    let mut acc2 = vec![0f32; if second.is_some() { n_arcs } else { 0 }];
    // Edge codes of every arc for the four combinations of dir / dist.
    let mut edges: [Vec<u64>; 4] = Default::default();
    for (kind, e) in edges.iter_mut().enumerate() {
        let used = splits
            .iter()
            .flat_map(|s| s.general.iter().chain(&s.between))
            .any(|&t| af.templates[t].edge_kind() == kind);
        if used {
            e.extend(arc_h.iter().zip(&arc_m).map(|(&h, &m)| edge_code(kind & 1 != 0, kind & 2 != 0, h, m)));
        }
    }
    let mut rows = vec![0u32; n_arcs];
    let words = WordTerms::of(batch, &starts, &arc_h, &arc_m);
    let mut per_word = PerWord::default();
    for (g, split) in splits.iter().enumerate() {
        if g > 0 {
            acc.fill(0.0);
            acc2.fill(0.0);
        }
        // General templates: every arc's row located first (two partial loads and one
        // multiply-xorshift each), then one gather per table.
        for &t in &split.general {
            let e = &edges[af.templates[t].edge_kind()];
            let mask = (w.rows(t) - 1) as u64;
            // Each row is prefetched as soon as it is located: its load (an L2 miss, most
            // often) overlaps with locating the next rows instead of stalling the gather.
            // The second table's (the rounds of a second-order DynFS model) are prefetched
            // by the first table's gather, so they overlap with it.
            for (k, item) in batch.iter().enumerate() {
                let (hp, mp) = (af.head_partials(item.sent, t), af.mod_partials(item.sent, t));
                let r = starts[k]..starts[k + 1];
                let (out, hs, ms, es) = (&mut rows[r.clone()], &arc_h[r.clone()], &arc_m[r.clone()], &e[r]);
                match w.template_block(t) {
                    Block::Dense(block) => locate(block, hp, mp, hs, ms, es, mask, out),
                    Block::Quantized { q, .. } => locate(q, hp, mp, hs, ms, es, mask, out),
                }
            }
            if let Some((w2, _)) = &second {
                match w2.template_block(t) {
                    Block::Dense(block) => prefetch_rows(block, &rows),
                    Block::Quantized { q, .. } => prefetch_rows(q, &rows),
                }
            }
            for (table, acc) in [(w, &mut acc)].into_iter().chain(second.as_ref().map(|s| (s.0, &mut acc2))) {
                match table.template_block(t) {
                    Block::Dense(block) => gather(block, 1.0, &rows, acc),
                    Block::Quantized { q, scale } => gather(q, scale, &rows, acc),
                }
            }
        }
        let mut n_between = 0u64;
        for &t in &split.between {
            let e = &edges[af.templates[t].edge_kind()];
            let slot = af.templates[t].between_slot().unwrap_or(0);
            for (k, item) in batch.iter().enumerate() {
                let (hp, mp) = (af.head_partials(item.sent, t), af.mod_partials(item.sent, t));
                for i in starts[k]..starts[k + 1] {
                    let (h, m) = (arc_h[i], arc_m[i]);
                    let base = mix_arc(hp[h], mp[m], e[i]);
                    for b in h.min(m) + 1..h.max(m) {
                        let f = combine(base, item.sent.attrs.get(slot, b as i64));
                        acc[i] += w.get(t, f);
                        if let Some((w2, _)) = &second {
                            acc2[i] += w2.get(t, f);
                        }
                    }
                    n_between += (h.abs_diff(m) - 1) as u64;
                }
            }
        }
        // Per-word terms of head-only and modifier-only templates, for the words that
        // head or modify a listed arc.
        per_word.fill(af, w, second.as_ref().map(|s| s.0), batch, split, &words);
        for (k, item) in batch.iter_mut().enumerate() {
            let n1 = item.sent.n1;
            let at = words.first[k];
            let tables = [(&mut *item.out, &acc, &per_word.head, &per_word.modi)].into_iter().chain(
                second.as_mut().map(|(_, outs)| (&mut *outs[k], &acc2, &per_word.head2, &per_word.mod2)),
            );
            for (out, acc, per_head, per_mod) in tables {
                debug_assert_eq!(out.len(), n1 * n1, "scores must be n1 x n1 (see reset_scores)");
                for i in starts[k]..starts[k + 1] {
                    let (h, m) = (arc_h[i], arc_m[i]);
                    out[m * n1 + h] += (acc[i] + per_head[at + h] + per_mod[at + m]) as f64;
                }
            }
        }
        if let Some(c) = counts.as_deref_mut() {
            for &t in split.head_only.iter().chain(&split.mod_only).chain(&split.general) {
                c.add(t, n_arcs as u64);
            }
            for &t in &split.between {
                c.add(t, n_between / split.between.len().max(1) as u64);
            }
        }
    }
}

/// The words of a batch whose per-word terms (head-only and modifier-only templates)
/// are needed: those that head, and those that modify, an arc to score.
struct WordTerms {
    /// Item k's word x is entry `first[k] + x` of the flat per-word sums.
    first: Vec<usize>,
    /// (item, word) of every head of an arc, and of every modifier; each once.
    heads: Vec<(usize, usize)>,
    mods: Vec<(usize, usize)>,
}

impl WordTerms {
    /// O(a + Σ n) for a arcs.
    fn of(batch: &[ToScore<'_>], starts: &[usize], arc_h: &[usize], arc_m: &[usize]) -> WordTerms {
        let mut first = Vec::with_capacity(batch.len() + 1);
        let (mut heads, mut mods) = (Vec::new(), Vec::new());
        let (mut is_head, mut is_mod) = (Vec::new(), Vec::new());
        let mut total = 0;
        for (k, item) in batch.iter().enumerate() {
            first.push(total);
            total += item.sent.n1;
            let r = starts[k]..starts[k + 1];
            for (seen, ends, list) in
                [(&mut is_head, &arc_h[r.clone()], &mut heads), (&mut is_mod, &arc_m[r], &mut mods)]
            {
                seen.clear();
                seen.resize(item.sent.n1, false);
                for &x in ends {
                    seen[x] = true;
                }
                list.extend(seen.iter().enumerate().filter(|&(_, &s)| s).map(|(x, _)| (k, x)));
            }
        }
        first.push(total);
        WordTerms { first, heads, mods }
    }
}

/// Per-word sums of one template group, flat over a batch ([`WordTerms::first`]), under
/// the first weight table and (`head2`, `mod2`) the second.
#[derive(Default)]
struct PerWord {
    head: Vec<f32>,
    modi: Vec<f32>,
    head2: Vec<f32>,
    mod2: Vec<f32>,
    rows: Vec<u32>,
}

impl PerWord {
    /// The per-word sums of `split`'s head-only and modifier-only templates (h = 0 /
    /// m = 1 stand in for "any": these templates ignore the other end and the edge).
    /// Template by template over the whole batch, as the general templates are: a
    /// template's rows are located and prefetched for every word first, then read.
    /// O(|heads| · H + |mods| · M) per table.
    fn fill<W: WeightTable>(
        &mut self,
        af: &ArcFeatures,
        w: &W,
        w2: Option<&W>,
        batch: &[ToScore<'_>],
        split: &Split,
        words: &WordTerms,
    ) {
        let total = *words.first.last().unwrap_or(&0);
        let n_tables = if w2.is_some() { 4 } else { 2 };
        for v in [&mut self.head, &mut self.modi, &mut self.head2, &mut self.mod2].into_iter().take(n_tables)
        {
            v.clear();
            v.resize(total, 0.0);
        }
        let sides = [(&split.head_only, &words.heads, true), (&split.mod_only, &words.mods, false)];
        for (templates, list, head_side) in sides {
            for &t in templates.iter() {
                let mask = (w.rows(t) - 1) as u64;
                self.rows.clear();
                self.rows.extend(list.iter().map(|&(k, x)| {
                    let (h, m) = if head_side { (x, 1) } else { (0, x) };
                    (af.plain(batch[k].sent, t, h, m) & mask) as u32
                }));
                let (sums, sums2) = if head_side {
                    (&mut self.head, &mut self.head2)
                } else {
                    (&mut self.modi, &mut self.mod2)
                };
                for (table, sums) in [(w, sums)].into_iter().chain(w2.map(|w2| (w2, sums2))) {
                    match table.template_block(t) {
                        Block::Dense(block) => word_gather(block, 1.0, &self.rows, list, &words.first, sums),
                        Block::Quantized { q, scale } => {
                            word_gather(q, scale, &self.rows, list, &words.first, sums)
                        }
                    }
                }
            }
        }
    }
}

/// sums[first[k] + x] += scale · block[rows[i]] for the i-th (k, x) of `list`, every
/// row prefetched first. O(|list|).
#[inline(always)]
fn word_gather<E: Copy>(
    block: &[E],
    scale: f32,
    rows: &[u32],
    list: &[(usize, usize)],
    first: &[usize],
    sums: &mut [f32],
) where
    f32: From<E>,
{
    prefetch_rows(block, rows);
    for (&r, &(k, x)) in rows.iter().zip(list) {
        sums[first[k] + x] += scale * f32::from(block[r as usize]);
    }
}

/// out[i] = the row of arc hs[i] → ms[i] (edge code es[i]) in a block of `mask` + 1
/// rows, from the template's partials `hp` / `mp`; each row is prefetched. O(a).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn locate<E>(
    block: &[E],
    hp: &[u64],
    mp: &[u64],
    hs: &[usize],
    ms: &[usize],
    es: &[u64],
    mask: u64,
    out: &mut [u32],
) {
    for (((o, &h), &m), &e) in out.iter_mut().zip(hs).zip(ms).zip(es) {
        let row = (mix_arc(hp[h], mp[m], e) & mask) as u32;
        prefetch(block, row as usize);
        *o = row;
    }
}

/// Prefetches `block[rows[i]]` for every i. O(a).
#[inline(always)]
fn prefetch_rows<E>(block: &[E], rows: &[u32]) {
    for &r in rows {
        prefetch(block, r as usize);
    }
}

/// acc[i] += scale · block[rows[i]] for one general template. O(a).
///
/// The rows were located and prefetched in a first pass (two partial loads and one
/// multiply-xorshift per arc); the random weight loads dominate (see
/// [`crate::weights`]): the prefetches overlap them with that pass, and a gather loop
/// of a few instructions per load keeps many in flight.
#[inline(always)]
fn gather<E: Copy>(block: &[E], scale: f32, rows: &[u32], acc: &mut [f32])
where
    f32: From<E>,
{
    for (a, &r) in acc.iter_mut().zip(rows) {
        *a += scale * f32::from(block[r as usize]);
    }
}

/// Second-order sibling scores in the layout of the decoders:
/// `out[(m * n1 + h) * n1 + s]` with `s == h` for the innermost child. Only the
/// entries a projective decoder can use (s between h and m, or s == h) are filled:
/// [`add_sibling_parts`] on every part. O(n³ · T).
pub fn sibling_scores<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    sent: &ArcSent,
    active: &[usize],
    out: &mut Vec<f64>,
) {
    let n1 = sent.n1;
    out.clear();
    out.resize(n1 * n1 * n1, 0.0);
    let arc = vec![0.0; n1 * n1];
    let mods: Vec<usize> = (1..n1).collect();
    add_sibling_parts(af, w, sent, active, &arc, &mods, &mut SibParts::default(), out);
}

/// Parts scored together by [`add_sibling_parts`]: enough to keep many weight loads in
/// flight, few enough that the list stays small (a 400-word sentence has 10⁷ parts).
const SIB_BATCH: usize = 4096;

/// Sibling parts (h, m, s) listed for [`add_sibling_parts`], and its buffers.
#[derive(Debug, Clone, Default)]
pub struct SibParts {
    /// Part i is (h[i], m[i], s[i]), s == h for the innermost child.
    h: Vec<usize>,
    m: Vec<usize>,
    s: Vec<usize>,
    rows: Vec<u32>,
    acc: Vec<f32>,
    /// Parts scored together (0: [`SIB_BATCH`]).
    batch: usize,
}

impl SibParts {
    /// Buffers that score `batch` parts at a time (tests: small batches end mid-modifier).
    pub fn with_batch(batch: usize) -> SibParts {
        SibParts { batch, ..SibParts::default() }
    }
}

/// Adds the sibling templates `active` to the parts (h, m, s) of the modifiers `mods`
/// that a tree can still use — arc h → m allowed (`arc[m * n1 + h]` finite) and s == h
/// (m is h's innermost child) or s strictly between h and m with h → s allowed — in the
/// layout of [`sibling_scores`]; other parts are left as they are. Each part's sum is an
/// f32 sum template by template, cast and added to `out`; the work goes templates
/// outer, parts inner, [`SIB_BATCH`] parts at a time: every part's weight row is located
/// and prefetched in a first pass and summed in a second, as for arcs (the scattered
/// weight loads dominate). Returns the number of parts scored.
/// O(parts · |active|), parts ≤ n² per modifier.
#[allow(clippy::too_many_arguments)]
pub fn add_sibling_parts<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    sent: &ArcSent,
    active: &[usize],
    arc: &[f64],
    mods: &[usize],
    parts: &mut SibParts,
    out: &mut [f64],
) -> u64 {
    let n1 = sent.n1;
    let batch = if parts.batch == 0 { SIB_BATCH } else { parts.batch };
    let mut total = 0;
    parts.h.clear();
    parts.m.clear();
    parts.s.clear();
    for &m in mods {
        for h in (0..n1).filter(|&h| h != m && arc[m * n1 + h].is_finite()) {
            let inner = if m > h { h..m } else { m + 1..h + 1 };
            for s in inner.filter(|&s| s == h || arc[s * n1 + h].is_finite()) {
                parts.h.push(h);
                parts.m.push(m);
                parts.s.push(s);
                if parts.h.len() == batch {
                    total += score_sibling_parts(af, w, sent, active, parts, out);
                }
            }
        }
    }
    total + score_sibling_parts(af, w, sent, active, parts, out)
}

/// Scores the parts listed in `p` (see [`add_sibling_parts`]) and empties the list.
/// O(parts · |active|).
fn score_sibling_parts<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    sent: &ArcSent,
    active: &[usize],
    p: &mut SibParts,
    out: &mut [f64],
) -> u64 {
    let (n, n1) = (p.h.len(), sent.n1);
    debug_assert_eq!(w.width(), 1, "sibling weights are one score per row");
    p.acc.clear();
    p.acc.resize(n, 0.0);
    p.rows.resize(n, 0);
    let second = |i: usize| Second { sib: (p.s[i] != p.h[i]).then_some(p.s[i]), grand: None };
    for &t in active {
        if af.templates[t].between_slot().is_some() {
            // Several features per part (one per word between): no row to locate once.
            for i in 0..n {
                let acc = &mut p.acc[i];
                af.for_each(sent, t, p.h[i], p.m[i], second(i), |f| *acc += w.get(t, f));
            }
            continue;
        }
        let mask = (w.rows(t) - 1) as u64;
        let block = w.template_block(t);
        for (i, row) in p.rows.iter_mut().enumerate() {
            af.for_each(sent, t, p.h[i], p.m[i], second(i), |f| *row = (f & mask) as u32);
            match block {
                Block::Dense(b) => prefetch(b, *row as usize),
                Block::Quantized { q, .. } => prefetch(q, *row as usize),
            }
        }
        match block {
            Block::Dense(b) => gather(b, 1.0, &p.rows, &mut p.acc),
            Block::Quantized { q, scale } => gather(q, scale, &p.rows, &mut p.acc),
        }
    }
    for i in 0..n {
        out[(p.m[i] * n1 + p.h[i]) * n1 + p.s[i]] += p.acc[i] as f64;
    }
    p.h.clear();
    p.m.clear();
    p.s.clear();
    n as u64
}

/// The number of sibling parts (h, m, s) a tree can use under arc scores `arc`
/// (allowed arcs finite; see [`add_sibling_parts`]), over every modifier. O(n²).
pub fn count_sibling_parts(arc: &[f64], n1: usize) -> u64 {
    let mut parts = 0u64;
    let mut before = vec![0u64; n1 + 1]; // before[x]: allowed children of h among 1..x
    for h in 0..n1 {
        for x in 0..n1 {
            let child = x != h && x != 0 && arc[x * n1 + h].is_finite();
            before[x + 1] = before[x] + u64::from(child);
        }
        for m in (1..n1).filter(|&m| m != h && arc[m * n1 + h].is_finite()) {
            let (a, b) = (h.min(m), h.max(m)); // siblings strictly between
            parts += 1 + before[b] - before[a + 1];
        }
    }
    parts
}

/// Label scores of arc h → m: `out[l]` = Σ_t row(t, f)[l]; `feats` is scratch.
/// O(T · L).
#[allow(clippy::too_many_arguments)]
pub fn label_scores<W: WeightTable>(
    af: &ArcFeatures,
    w: &W,
    sent: &ArcSent,
    h: usize,
    m: usize,
    feats: &mut Vec<(u32, u64)>,
    out: &mut [f32],
) {
    out.fill(0.0);
    feats.clear();
    for t in 0..af.len() {
        af.for_each(sent, t, h, m, Second::default(), |f| feats.push((t as u32, f)));
    }
    w.add_rows(feats, out);
}

/// Index of the largest value (first on ties).
pub fn argmax(xs: &[f32]) -> usize {
    let mut best = 0;
    for (i, &x) in xs.iter().enumerate() {
        if x > xs[best] {
            best = i;
        }
    }
    best
}
