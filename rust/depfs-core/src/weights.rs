//! Hashed feature weights, one block per template.
//!
//! Template t owns a block of `rows(t)` rows (a power of two, so a feature hash maps
//! to a row with one mask); a row has `width` weights (1 for arc scores, the number
//! of moves or labels for multiclass scores). Because blocks are separate, the
//! partial score of any template subset, group or prefix is a sum over just those
//! templates' rows, and a template's weights can be dropped or counted on their own.
//!
//! Averaged perceptron (Collins 2002) with lazy averaging (Daumé III 2006, §2.1.1):
//! alongside the weights w we keep u = Σ c·Δ over updates Δ made at step c, so the
//! average over all steps is w − u / c, computed once at the end instead of after
//! every example.
//!
//! A trained model is frozen into [`QuantizedWeights`]: 8 bits per weight with one
//! scale per template block (q = round(w / s), s = max |w| / 127). Parsing reads one
//! random row per template and part, so its speed follows the table's size in
//! memory (on this hardware a random read costs ~4 ns in a 16 MB table and ~13 ns in
//! a 100 MB one); a quarter of the bytes is worth far more than the rounding costs
//! (en_ewt dev, first-order graph parser: UAS 86.76 quantized vs 86.73 in f32).
//! Scoring code is generic over [`WeightTable`], so training (f32) and parsing
//! (8-bit) share every loop.

use crate::{Error, Result};
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::Range;

/// A weight table's 8-bit values as a model file stores them: one byte string (the wire
/// form of `serde_bytes`, so the files are unchanged). Decoding copies the file's bytes
/// straight into an allocation advised onto huge pages, the one the table then keeps:
/// no intermediate buffer of a model's tens of megabytes while it loads (that buffer's
/// fresh pages, cleared by the kernel and then copied, were a third of a load's work).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WeightBytes(pub Vec<i8>);

impl From<Vec<u8>> for WeightBytes {
    fn from(bytes: Vec<u8>) -> WeightBytes {
        WeightBytes::copied(&bytes)
    }
}

impl WeightBytes {
    /// `bytes` as i8, in an allocation advised onto huge pages. O(n), one pass over the
    /// slice (no index checks: a plain copy).
    fn copied(bytes: &[u8]) -> WeightBytes {
        WeightBytes(crate::util::prefetch::huge_vec(bytes.iter().map(|&b| b as i8)))
    }
}

impl Serialize for WeightBytes {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_bytes(bytemuck::cast_slice(&self.0))
    }
}

impl<'de> Deserialize<'de> for WeightBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<WeightBytes, D::Error> {
        struct Bytes;
        impl<'de> Visitor<'de> for Bytes {
            type Value = WeightBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a byte string of weights")
            }
            fn visit_bytes<E: de::Error>(self, b: &[u8]) -> std::result::Result<WeightBytes, E> {
                Ok(WeightBytes::copied(b))
            }
            fn visit_byte_buf<E: de::Error>(self, b: Vec<u8>) -> std::result::Result<WeightBytes, E> {
                Ok(WeightBytes::copied(&b))
            }
            // Formats without byte strings write a sequence of numbers (as serde_bytes reads them).
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<WeightBytes, A::Error> {
                let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(b) = seq.next_element::<u8>()? {
                    v.push(b);
                }
                Ok(WeightBytes::copied(&v))
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

/// Where each template's block lies in a table: shared by [`Weights`] and
/// [`QuantizedWeights`], which differ only in what a weight is.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    width: usize,
    /// Per template: the first row of its block, and rows(t) − 1 (side by side, so a
    /// lookup reads one entry).
    blocks: Vec<BlockAt>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct BlockAt {
    first_row: usize,
    mask: u64,
}

impl Layout {
    /// Blocks of `rows[t]` rows (each a power of two) × `width` weights; also returns
    /// the total number of weights.
    fn new(rows: &[usize], width: usize) -> Result<(Layout, usize)> {
        if width == 0 {
            return Err(Error::InvalidArgument("weight rows need width ≥ 1".into()));
        }
        let mut blocks = Vec::with_capacity(rows.len());
        let mut total = 0usize;
        for &r in rows {
            if !r.is_power_of_two() {
                return Err(Error::InvalidArgument(format!("block size {r} is not a power of two")));
            }
            blocks.push(BlockAt { first_row: total, mask: r as u64 - 1 });
            total = total
                .checked_add(r)
                .filter(|t| t.checked_mul(width).is_some_and(|x| x < (1 << 34)))
                .ok_or_else(|| Error::InvalidArgument("weight table too large".into()))?;
        }
        Ok((Layout { width, blocks }, total * width))
    }
    /// Rows of template t's block.
    pub fn rows(&self, t: usize) -> usize {
        self.blocks[t].mask as usize + 1
    }
    /// Rows of every block.
    pub fn row_counts(&self) -> Vec<usize> {
        (0..self.blocks.len()).map(|t| self.rows(t)).collect()
    }
    /// Index of the first weight of feature `f`'s row in template t's block. O(1).
    #[inline(always)]
    pub fn row_start(&self, t: usize, f: u64) -> usize {
        let b = self.blocks[t];
        (b.first_row + (f & b.mask) as usize) * self.width
    }
    /// Appends where the row of the t-th feature of `feats` lies in template t's block
    /// to `out` (one feature per template, in template order). O(T).
    #[inline]
    pub fn locate_each(&self, feats: impl IntoIterator<Item = u64>, out: &mut Vec<RowAt>) {
        let width = self.width;
        out.extend(
            self.blocks.iter().zip(feats).enumerate().map(|(t, (b, f))| RowAt {
                start: (b.first_row + (f & b.mask) as usize) * width,
                template: t,
            }),
        );
    }
    /// Indices of template t's whole block.
    pub fn block_range(&self, t: usize) -> Range<usize> {
        let start = self.blocks[t].first_row * self.width;
        start..start + self.rows(t) * self.width
    }
}

/// Per-template hashed weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    layout: Layout,
    w: Vec<f32>,
    /// Σ c·Δ per weight; empty unless averaging.
    u: Vec<f64>,
    /// Step counter for averaging (starts at 1).
    c: f64,
    /// Σ of squared gradients per weight (AdaGrad); empty unless started.
    g2: Vec<f32>,
    /// ℓ2 strength of AdaGrad steps (0: none).
    l2: f32,
    /// Step counter at each weight's last ℓ2 decay; empty unless l2 > 0.
    last: Vec<u32>,
}

/// Rows for a block that will hold about `n_features` distinct features: the next
/// power of two ≥ 2 × n_features (load ≤ 0.5), clamped to 2^min_bits ..= 2^max_bits.
pub fn rows_for(n_features: usize, min_bits: u32, max_bits: u32) -> usize {
    let want = n_features.saturating_mul(2).max(1).next_power_of_two();
    want.clamp(1 << min_bits, 1 << max_bits)
}

impl Weights {
    /// Zero weights with `rows[t]` rows (each a power of two) for template t.
    pub fn new(rows: &[usize], width: usize) -> Result<Weights> {
        let (layout, len) = Layout::new(rows, width)?;
        // Zeroed pages are not touched until written: advised first, they come huge.
        let mut w = vec![0.0; len];
        crate::util::prefetch::huge_pages(&mut w);
        Ok(Weights::plain(layout, w))
    }

    /// Weights `w` laid out by `layout`, with no training state.
    fn plain(layout: Layout, w: Vec<f32>) -> Weights {
        Weights { layout, w, u: Vec::new(), c: 1.0, g2: Vec::new(), l2: 0.0, last: Vec::new() }
    }

    /// The average of weight i over all steps so far (w − u/c; w itself when not
    /// averaging).
    #[inline]
    fn average_at(&self, i: usize) -> f32 {
        match self.u.get(i) {
            Some(&u) => (self.w[i] as f64 - u / self.c) as f32,
            None => self.w[i],
        }
    }

    /// The same block size (2^bits rows) for each of `n_templates` templates.
    pub fn uniform(n_templates: usize, bits: u32, width: usize) -> Result<Weights> {
        Weights::new(&vec![1usize << bits.min(30); n_templates], width)
    }

    /// Total number of weights.
    pub fn n_params(&self) -> usize {
        self.w.len()
    }
    /// Weights that are not zero, per template.
    pub fn nonzero_per_template(&self) -> Vec<usize> {
        (0..self.n_templates()).map(|t| self.block(t).iter().filter(|&&x| x != 0.0).count()).collect()
    }
    /// All weights of template t's block.
    pub fn block(&self, t: usize) -> &[f32] {
        &self.w[self.layout.block_range(t)]
    }

    /// The row of feature `f` of template t.
    #[inline(always)]
    pub fn row(&self, t: usize, f: u64) -> &[f32] {
        let s = self.row_start(t, f);
        &self.w[s..s + self.layout.width]
    }

    /// Partial score of width-1 features given as (template, feature) pairs.
    pub fn partial(&self, feats: &[(usize, u64)]) -> f64 {
        feats.iter().map(|&(t, f)| self.get(t, f) as f64).sum()
    }

    /// Starts keeping the averaging sums (training).
    pub fn start_averaging(&mut self) {
        self.u = vec![0.0; self.w.len()];
        crate::util::prefetch::huge_pages(&mut self.u);
        self.c = 1.0;
    }

    /// Starts keeping the AdaGrad sums ([`Weights::update_adagrad`]), with ℓ2
    /// strength `l2` per step (0: none).
    pub fn start_adagrad(&mut self, l2: f32) {
        self.g2 = vec![0.0; self.w.len()];
        crate::util::prefetch::huge_pages(&mut self.g2);
        self.l2 = l2;
        if self.l2 > 0.0 {
            self.last = vec![0; self.w.len()];
            crate::util::prefetch::huge_pages(&mut self.last);
        }
    }

    /// Applies the ℓ2 decay weight i owes since its last one: w ← w·(1 − η·λ)^Δt with
    /// η its current AdaGrad rate, Δt the steps since (lazy: only touched weights pay,
    /// when touched, and every weight at [`Weights::flush_l2`]).
    #[inline]
    fn decay(&mut self, i: usize) {
        let now = self.c as u32;
        let dt = now - self.last[i];
        if dt > 0 && self.g2[i] > 0.0 && self.w[i] != 0.0 {
            let keep = (1.0 - (self.l2 / self.g2[i].sqrt()).min(1.0)).powi(dt as i32);
            let w = self.w[i];
            self.update_at(i, w * keep - w);
        }
        self.last[i] = now;
    }

    /// Fixes template t's weights at their average so far, for good: later averages
    /// see them unchanged (the stagewise baseline freezes a template this way).
    /// O(block).
    pub fn freeze_template(&mut self, t: usize) {
        if self.u.is_empty() {
            return;
        }
        for i in self.layout.block_range(t) {
            self.w[i] = self.average_at(i);
            self.u[i] = 0.0;
        }
    }

    /// Brings every weight's ℓ2 decay up to date (end of an epoch). O(weights).
    pub fn flush_l2(&mut self) {
        self.flush_l2_range(0..self.w.len());
    }

    /// The same for template t's block only (the others stay as they are).
    pub fn flush_l2_template(&mut self, t: usize) {
        self.flush_l2_range(self.layout.block_range(t));
    }

    fn flush_l2_range(&mut self, range: Range<usize>) {
        if self.l2 > 0.0 {
            for i in range {
                self.decay(i);
            }
        }
    }

    /// An AdaGrad step (Duchi, Hazan & Singer 2011) of w[row(t, f)][k] along `grad`:
    /// w += grad / √(Σ grad²) over every gradient this weight has seen (learning rate
    /// 1), so a weight moves by at most 1 per step whatever the gradient's size
    /// (and the averaging sum, if on); with ℓ2, the weight's decay is brought up to
    /// date first. Needs [`Weights::start_adagrad`].
    #[inline]
    pub fn update_adagrad(&mut self, t: usize, f: u64, k: usize, grad: f32) {
        let i = self.row_start(t, f) + k;
        if self.l2 > 0.0 {
            self.decay(i);
        }
        self.g2[i] += grad * grad;
        let step = grad / self.g2[i].sqrt();
        self.update_at(i, step);
    }

    /// Starts loading the training state of w[row(t, f)][k] (the weight, its averaging
    /// and AdaGrad sums, its ℓ2 stamp: one random cache line each) without waiting, so
    /// a batch of [`Weights::update_adagrad`] calls after it overlaps its misses.
    #[inline]
    pub fn prefetch_update(&self, t: usize, f: u64, k: usize) {
        use crate::util::prefetch::prefetch;
        let i = self.row_start(t, f) + k;
        prefetch(&self.w, i);
        prefetch(&self.u, i);
        prefetch(&self.g2, i);
        prefetch(&self.last, i);
    }

    /// The AdaGrad sum of squared gradients of w[row(t, f)][k] (0 when not started).
    pub fn adagrad_sum(&self, t: usize, f: u64, k: usize) -> f32 {
        self.g2.get(self.row_start(t, f) + k).copied().unwrap_or(0.0)
    }

    /// Ends one training example (advances the averaging clock).
    pub fn tick(&mut self) {
        self.c += 1.0;
    }

    /// w[row(t, f)][k] += delta (and the averaging sum, if on).
    #[inline]
    pub fn update(&mut self, t: usize, f: u64, k: usize, delta: f32) {
        let i = self.row_start(t, f) + k;
        self.w[i] += delta;
        if !self.u.is_empty() {
            self.u[i] += self.c * delta as f64;
        }
    }

    /// A step of w[row(t, f)][k] by `d` under the training rule: an averaged perceptron
    /// step ([`Weights::update`]) or an AdaGrad one ([`Weights::update_adagrad`]).
    #[inline]
    pub fn step(&mut self, perceptron: bool, t: usize, f: u64, k: usize, d: f32) {
        if perceptron {
            self.update(t, f, k, d);
        } else {
            self.update_adagrad(t, f, k, d);
        }
    }

    /// Weight at absolute index `i` (see [`Weights::row_start`]).
    #[inline]
    pub fn at(&self, i: usize) -> f32 {
        self.w[i]
    }

    /// w[i] += delta at an absolute index (and the averaging sum, if on).
    #[inline]
    pub fn update_at(&mut self, i: usize, delta: f32) {
        self.w[i] += delta;
        if !self.u.is_empty() {
            self.u[i] += self.c * delta as f64;
        }
    }

    /// The averaged weights w − u / c (a copy without averaging sums).
    pub fn averaged(&self) -> Weights {
        let w = (0..self.w.len()).map(|i| self.average_at(i)).collect();
        Weights::plain(self.layout.clone(), w)
    }

    /// Raw parts for model files: (width, rows per template, weights).
    pub fn to_parts(&self) -> (usize, Vec<usize>, &[f32]) {
        (self.layout.width, self.layout.row_counts(), &self.w)
    }

    /// Rebuilds weights from [`Weights::to_parts`]; checks that the sizes agree.
    pub fn from_parts(width: usize, rows: &[usize], w: Vec<f32>) -> Result<Weights> {
        let mut out = Weights::new(rows, width)?;
        if out.w.len() != w.len() {
            return Err(Error::InvalidArgument(format!(
                "weight table has {} values, its blocks need {}",
                w.len(),
                out.w.len()
            )));
        }
        out.w = w;
        Ok(out)
    }

    /// Keeps only the blocks of templates `keep` (in that order).
    pub fn select(&self, keep: &[usize]) -> Result<Weights> {
        let mut rows = Vec::with_capacity(keep.len());
        let mut w = Vec::new();
        for &t in keep {
            if t >= self.n_templates() {
                return Err(Error::InvalidArgument(format!("template index {t} out of range")));
            }
            rows.push(self.rows(t));
            w.extend_from_slice(self.block(t));
        }
        Weights::from_parts(self.layout.width, &rows, w)
    }
}

/// One template's weights: f32 while training, 8-bit with a scale once frozen.
#[derive(Debug, Clone, Copy)]
pub enum Block<'a> {
    Dense(&'a [f32]),
    Quantized { q: &'a [i8], scale: f32 },
}

/// Read access to per-template hashed weights, trainable or frozen.
pub trait WeightTable: Sync {
    fn layout(&self) -> &Layout;
    /// Weights per row.
    fn width(&self) -> usize {
        self.layout().width
    }
    fn n_templates(&self) -> usize {
        self.layout().blocks.len()
    }
    /// Rows of template t's block (a power of two).
    fn rows(&self, t: usize) -> usize {
        self.layout().rows(t)
    }
    /// Template t's whole block; feature f's row starts at `(f & (rows − 1)) · width`.
    fn template_block(&self, t: usize) -> Block<'_>;
    /// Weight of feature `f` of template t (column 0).
    fn get(&self, t: usize, f: u64) -> f32;
    /// acc += row(t, f). O(width).
    fn add_row(&self, t: usize, f: u64, acc: &mut [f32]);
    /// Adds row(t, f) as the `i`-th row (from 0) of one [`WeightTable::add_located_rows`]
    /// call: `acc` then holds, bit for bit, what that call leaves after its first i + 1
    /// rows. The rows are added one at a time (the prefix-margin rule checks its margin
    /// after each), but a decision that adds them all must end on the full model's sum,
    /// or a margin no lead reaches would parse otherwise than an infinite one. `base`
    /// (starting as `acc` does) and `ints` (starting at 0) carry the sum between calls.
    /// Default: a float add, as the batch adds. O(width).
    fn add_row_running(
        &self,
        t: usize,
        f: u64,
        i: usize,
        ints: &mut [i32],
        base: &mut [f32],
        acc: &mut [f32],
    ) {
        let _ = (i, ints, base);
        self.add_row(t, f, acc);
    }
    /// Index of the first weight of feature `f`'s row in template t's block.
    #[inline(always)]
    fn row_start(&self, t: usize, f: u64) -> usize {
        self.layout().row_start(t, f)
    }

    /// acc += Σ row(t, f) over `feats` = (template, feature) pairs. O(|feats| · width).
    fn add_rows(&self, feats: &[(u32, u64)], acc: &mut [f32]) {
        self.add_rows_with(feats.len(), |i| (feats[i].0 as usize, feats[i].1), acc);
    }

    /// [`WeightTable::add_rows`] over the pairs `feat(0) .. feat(n − 1)`: rows are
    /// located and prefetched a chunk at a time, then summed, so a chunk's cache
    /// misses overlap.
    fn add_rows_with(&self, n: usize, feat: impl Fn(usize) -> (usize, u64), acc: &mut [f32]) {
        const CHUNK: usize = INTEGER_ROWS;
        let mut rows = [RowAt::default(); CHUNK];
        let mut done = 0;
        while done < n {
            let rows = &mut rows[..(n - done).min(CHUNK)];
            for (i, r) in rows.iter_mut().enumerate() {
                let (t, f) = feat(done + i);
                *r = RowAt { start: self.row_start(t, f), template: t };
            }
            done += rows.len();
            self.prefetch_rows(rows);
            self.add_located_rows(rows, acc);
        }
    }

    /// acc += Σ over templates t of row(t, t-th feature of `feats`) (one feature per
    /// template, in template order), the rows located in `rows`, a buffer reused
    /// across calls.
    fn add_template_rows(
        &self,
        feats: impl IntoIterator<Item = u64>,
        rows: &mut Vec<RowAt>,
        acc: &mut [f32],
    ) {
        rows.clear();
        self.layout().locate_each(feats, rows);
        self.prefetch_rows(rows);
        self.add_located_rows(rows, acc);
    }

    /// Starts loading `rows` into the cache without waiting for them (see
    /// [`crate::util::prefetch`]); a later [`WeightTable::add_located_rows`] finds them there.
    fn prefetch_rows(&self, rows: &[RowAt]);

    /// acc += Σ of the located `rows`. O(|rows| · width).
    fn add_located_rows(&self, rows: &[RowAt], acc: &mut [f32]);

    /// The whole table of 8-bit weights and each block's scale, for a caller that reads
    /// located weights itself (the tagger's lines); None: not quantized.
    fn quantized_parts(&self) -> Option<(&[i8], &[f32])> {
        None
    }
}

/// A located feature row: the index of its first weight, and its template.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowAt {
    pub start: usize,
    pub template: usize,
}

impl WeightTable for Weights {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn template_block(&self, t: usize) -> Block<'_> {
        Block::Dense(self.block(t))
    }
    #[inline(always)]
    fn get(&self, t: usize, f: u64) -> f32 {
        self.w[self.row_start(t, f)]
    }
    #[inline(always)]
    fn add_row(&self, t: usize, f: u64, acc: &mut [f32]) {
        for (a, w) in acc.iter_mut().zip(self.row(t, f)) {
            *a += w;
        }
    }
    fn prefetch_rows(&self, rows: &[RowAt]) {
        for r in rows {
            crate::util::prefetch::prefetch_range(&self.w, r.start, self.layout.width);
        }
    }
    fn add_located_rows(&self, rows: &[RowAt], acc: &mut [f32]) {
        let width = self.layout.width;
        for r in rows {
            for (a, w) in acc.iter_mut().zip(&self.w[r.start..r.start + width]) {
                *a += w;
            }
        }
    }
}

/// Rows summed as 16-bit integers at a time by [`QuantizedWeights::add_located_rows`]
/// (128 · 127 ≤ 32767: no overflow), and the widest rows it sums so.
const INTEGER_ROWS: usize = 128;
const MAX_INTEGER_WIDTH: usize = 512;

/// Frozen weights, 8 bits each with one f32 scale per template block (see the
/// module comment). Same layout and hashing as [`Weights`]: a quarter of the bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedWeights {
    layout: Layout,
    scales: Vec<f32>,
    /// The scale of every block when they are all equal: rows then add up as integers.
    shared_scale: Option<f32>,
    q: Vec<i8>,
}

/// The common value of `scales`, if there is one.
fn shared(scales: &[f32]) -> Option<f32> {
    let first = *scales.first()?;
    scales.iter().all(|&s| s == first).then_some(first)
}

impl QuantizedWeights {
    /// Rounds every block of `w` to 8 bits: q = round(w / s), s = max |w| / 127
    /// (s = 0 for an all-zero block). Error per weight ≤ s / 2. O(weights).
    pub fn quantize(w: &Weights) -> QuantizedWeights {
        Self::quantize_with(w, false)
    }

    /// Like [`QuantizedWeights::quantize`] with one scale for the whole table
    /// (s = max |w| over all blocks / 127): coarser for blocks of small weights, but
    /// a sum of rows is then a sum of small integers (see `add_rows_with`), ~3× fewer
    /// instructions per weight for wide rows such as label scores.
    pub fn quantize_shared(w: &Weights) -> QuantizedWeights {
        Self::quantize_with(w, true)
    }

    fn quantize_with(w: &Weights, one_scale: bool) -> QuantizedWeights {
        let mut scales = Vec::with_capacity(w.n_templates());
        let mut q = Vec::with_capacity(w.n_params());
        crate::util::prefetch::huge_pages(&mut q);
        let table_max = w.w.iter().fold(0f32, |m, &x| m.max(x.abs()));
        for t in 0..w.n_templates() {
            let block = w.block(t);
            let max = if one_scale { table_max } else { block.iter().fold(0f32, |m, &x| m.max(x.abs())) };
            let scale = if max > 0.0 && max.is_finite() { max / 127.0 } else { 0.0 };
            let inv = if scale > 0.0 { 1.0 / scale } else { 0.0 };
            q.extend(block.iter().map(|&x| (x * inv).round().clamp(-127.0, 127.0) as i8));
            scales.push(scale);
        }
        let shared_scale = shared(&scales);
        QuantizedWeights { layout: w.layout.clone(), scales, shared_scale, q }
    }

    /// Total number of weights.
    pub fn n_params(&self) -> usize {
        self.q.len()
    }

    /// Weights that are not zero, per template.
    pub fn nonzero_per_template(&self) -> Vec<usize> {
        (0..self.n_templates())
            .map(|t| {
                let (q, _) = self.raw_block(t);
                q.iter().filter(|&&x| x != 0).count()
            })
            .collect()
    }

    fn raw_block(&self, t: usize) -> (&[i8], f32) {
        (&self.q[self.layout.block_range(t)], self.scales[t])
    }

    /// The f32 weights these stand for (s · q).
    pub fn dequantized(&self) -> Weights {
        let mut w = Vec::with_capacity(self.q.len());
        for t in 0..self.n_templates() {
            let (q, s) = self.raw_block(t);
            w.extend(q.iter().map(|&x| s * x as f32));
        }
        Weights::plain(self.layout.clone(), w)
    }

    /// Raw parts for model files: (width, rows per template, scales, weights as bytes).
    pub fn to_parts(&self) -> (usize, Vec<usize>, Vec<f32>, WeightBytes) {
        let bytes = WeightBytes(self.q.clone());
        (self.layout.width, self.layout.row_counts(), self.scales.clone(), bytes)
    }

    /// Rebuilds from [`QuantizedWeights::to_parts`]; checks that the sizes agree. Takes
    /// the bytes by value: they become the weights in place (decoded from a model file,
    /// already in their huge-page allocation: no copy while it loads).
    pub fn from_parts(
        width: usize,
        rows: &[usize],
        scales: Vec<f32>,
        bytes: WeightBytes,
    ) -> Result<QuantizedWeights> {
        let bytes = bytes.0;
        let (layout, len) = Layout::new(rows, width)?;
        if bytes.len() != len || scales.len() != rows.len() {
            return Err(Error::InvalidArgument(format!(
                "weight table has {} values and {} scales, its blocks need {len} and {}",
                bytes.len(),
                scales.len(),
                rows.len()
            )));
        }
        if scales.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return Err(Error::InvalidArgument("weight scales must be finite and ≥ 0".into()));
        }
        let shared_scale = shared(&scales);
        Ok(QuantizedWeights { layout, scales, shared_scale, q: bytes })
    }

    /// Keeps only the blocks of templates `keep` (in that order).
    pub fn select(&self, keep: &[usize]) -> Result<QuantizedWeights> {
        let mut rows = Vec::with_capacity(keep.len());
        let mut scales = Vec::with_capacity(keep.len());
        let mut bytes = Vec::new();
        for &t in keep {
            if t >= self.n_templates() {
                return Err(Error::InvalidArgument(format!("template index {t} out of range")));
            }
            let (q, s) = self.raw_block(t);
            rows.push(self.rows(t));
            scales.push(s);
            bytes.extend(q.iter().map(|&x| x as u8));
        }
        QuantizedWeights::from_parts(self.layout.width, &rows, scales, bytes.into())
    }
}

impl QuantizedWeights {
    /// acc += scale · Σ rows, the rows summed as 16-bit integers up to 128 at a time
    /// (128 · 127 ≤ 32767: no overflow) in an accumulator of `N` ≥ width. O(|rows| · width).
    #[inline]
    fn add_rows_as_integers<const N: usize>(&self, rows: &[RowAt], scale: f32, acc: &mut [f32]) {
        const CHUNK: usize = INTEGER_ROWS;
        let width = self.width();
        for chunk in rows.chunks(CHUNK) {
            let mut sum = [0i16; N];
            let sum = &mut sum[..width];
            for r in chunk {
                let row = &self.q[r.start..r.start + width];
                // Whole pieces of 16 as fixed-size arrays, which compile to SIMD adds;
                // the rest one by one.
                let (sums, sum_rest) = sum.as_chunks_mut::<16>();
                let (pieces, rest) = row.as_chunks::<16>();
                for (s, q) in sums.iter_mut().zip(pieces) {
                    for k in 0..16 {
                        s[k] += q[k] as i16;
                    }
                }
                for (a, &q) in sum_rest.iter_mut().zip(rest) {
                    *a += q as i16;
                }
            }
            for (a, &x) in acc.iter_mut().zip(sum.iter()) {
                *a += scale * x as f32;
            }
        }
    }
}

impl WeightTable for QuantizedWeights {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn template_block(&self, t: usize) -> Block<'_> {
        let (q, scale) = self.raw_block(t);
        Block::Quantized { q, scale }
    }
    fn quantized_parts(&self) -> Option<(&[i8], &[f32])> {
        Some((&self.q, &self.scales))
    }
    #[inline(always)]
    fn get(&self, t: usize, f: u64) -> f32 {
        self.scales[t] * self.q[self.row_start(t, f)] as f32
    }
    #[inline(always)]
    fn add_row(&self, t: usize, f: u64, acc: &mut [f32]) {
        let s = self.row_start(t, f);
        let scale = self.scales[t];
        for (a, &q) in acc.iter_mut().zip(&self.q[s..s + self.layout.width]) {
            *a += scale * q as f32;
        }
    }

    /// With one shared scale the batch sums each [`INTEGER_ROWS`] rows as integers and
    /// scales that sum once: so here, `ints` the integer sum of this stretch of rows,
    /// `base` the scaled sums of the stretches before, `acc` = base + scale · ints.
    fn add_row_running(
        &self,
        t: usize,
        f: u64,
        i: usize,
        ints: &mut [i32],
        base: &mut [f32],
        acc: &mut [f32],
    ) {
        let width = self.width();
        match self.shared_scale {
            Some(scale) if width <= MAX_INTEGER_WIDTH => {
                let s = self.row_start(t, f);
                for (n, &q) in ints.iter_mut().zip(&self.q[s..s + width]) {
                    *n += q as i32;
                }
                if (i + 1).is_multiple_of(INTEGER_ROWS) {
                    for (b, n) in base.iter_mut().zip(ints.iter_mut()) {
                        *b += scale * *n as f32;
                        *n = 0;
                    }
                }
                for ((a, &b), &n) in acc.iter_mut().zip(base.iter()).zip(ints.iter()) {
                    *a = b + scale * n as f32;
                }
            }
            _ => self.add_row(t, f, acc),
        }
    }

    fn prefetch_rows(&self, rows: &[RowAt]) {
        let width = self.layout.width;
        for r in rows {
            crate::util::prefetch::prefetch_range(&self.q, r.start, width);
        }
    }

    /// With one shared scale and rows of at most 512 weights, up to 128 rows at a
    /// time are summed as 16-bit integers (128 · 127 ≤ 32767: no overflow), then
    /// scaled once; rows of 4 (move scores) are unrolled.
    fn add_located_rows(&self, rows: &[RowAt], acc: &mut [f32]) {
        const MAX_WIDTH: usize = MAX_INTEGER_WIDTH;
        let width = self.width();
        match self.shared_scale {
            // Label rows are usually ≤ 64 wide: a small accumulator to clear.
            Some(scale) if width <= 64 => self.add_rows_as_integers::<64>(rows, scale, acc),
            Some(scale) if width <= MAX_WIDTH => self.add_rows_as_integers::<MAX_WIDTH>(rows, scale, acc),
            _ if width == 4 && acc.len() == 4 => {
                // In registers, row after row onto acc: the sum a row-by-row add makes.
                let mut sum = [acc[0], acc[1], acc[2], acc[3]];
                for r in rows {
                    let (scale, q) = (self.scales[r.template], &self.q[r.start..r.start + 4]);
                    for k in 0..4 {
                        sum[k] += scale * q[k] as f32;
                    }
                }
                acc.copy_from_slice(&sum);
            }
            _ => {
                for r in rows {
                    let scale = self.scales[r.template];
                    for (a, &q) in acc.iter_mut().zip(&self.q[r.start..r.start + width]) {
                        *a += scale * q as f32;
                    }
                }
            }
        }
    }
}

/// How many template evaluations were made (one per template per scored part), so
/// methods can report the share of templates computed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateCounts {
    pub per_template: Vec<u64>,
}

impl TemplateCounts {
    pub fn new(n_templates: usize) -> Self {
        TemplateCounts { per_template: vec![0; n_templates] }
    }
    #[inline]
    pub fn add(&mut self, t: usize, n: u64) {
        self.per_template[t] += n;
    }
    pub fn merge(&mut self, other: &TemplateCounts) {
        if self.per_template.len() < other.per_template.len() {
            self.per_template.resize(other.per_template.len(), 0);
        }
        for (a, b) in self.per_template.iter_mut().zip(&other.per_template) {
            *a += b;
        }
    }
    pub fn total(&self) -> u64 {
        self.per_template.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn l2_decays_a_weight_by_its_own_rate_for_every_step_since_its_last() {
        let mut w = Weights::new(&[8], 1).unwrap();
        w.start_adagrad(0.01);
        w.update_adagrad(0, 3, 0, 2.0); // g2 = 4, step 2/2 = 1
        assert_eq!(w.get(0, 3), 1.0);
        for _ in 0..10 {
            w.tick();
        }
        w.flush_l2(); // 10 steps at rate 1/√4: × (1 − 0.005)^10
        let want = 0.995f32.powi(10);
        assert!((w.get(0, 3) - want).abs() < 1e-6, "{} vs {want}", w.get(0, 3));
        w.flush_l2(); // nothing more is owed
        assert!((w.get(0, 3) - want).abs() < 1e-6);
        // The next step first pays the decay owed since the flush.
        for _ in 0..5 {
            w.tick();
        }
        w.update_adagrad(0, 3, 0, 0.0);
        assert!((w.get(0, 3) - want * 0.995f32.powi(5)).abs() < 1e-6);
        // Without ℓ2 nothing decays.
        let mut plain = Weights::new(&[8], 1).unwrap();
        plain.start_adagrad(0.0);
        plain.update_adagrad(0, 3, 0, 2.0);
        for _ in 0..10 {
            plain.tick();
        }
        plain.flush_l2();
        assert_eq!(plain.get(0, 3), 1.0);
    }

    #[test]
    fn blocks_are_separate_and_sized() {
        let mut w = Weights::new(&[4, 8], 3).unwrap();
        assert_eq!(w.n_params(), 36);
        w.update(0, 5, 2, 1.5);
        assert_eq!(w.row(0, 5), &[0.0, 0.0, 1.5]);
        assert_eq!(w.row(0, 1), &[0.0, 0.0, 1.5]); // 5 & 3 == 1: same row
        assert_eq!(w.row(1, 5), &[0.0; 3]);
        assert_eq!(w.nonzero_per_template(), vec![1, 0]);
        assert!(Weights::new(&[3], 1).is_err());
        assert!(Weights::new(&[4], 0).is_err());
        assert_eq!(rows_for(100, 4, 20), 256);
        assert_eq!(rows_for(0, 4, 20), 16);
        assert_eq!(rows_for(1 << 25, 4, 20), 1 << 20);
    }

    #[test]
    fn select_and_parts_round_trip() {
        let mut w = Weights::new(&[4, 8, 2], 1).unwrap();
        w.update(1, 3, 0, 2.0);
        w.update(2, 1, 0, -1.0);
        let s = w.select(&[2, 1]).unwrap();
        assert_eq!(s.get(0, 1), -1.0);
        assert_eq!(s.get(1, 3), 2.0);
        let (width, rows, vals) = w.to_parts();
        assert_eq!(Weights::from_parts(width, &rows, vals.to_vec()).unwrap(), w);
        assert!(Weights::from_parts(1, &rows, vec![0.0; 3]).is_err());
    }

    #[test]
    fn weight_bytes_keep_the_byte_string_wire_form() {
        // The model files' form (serde_bytes's before): a length, then the bytes.
        let w = WeightBytes(vec![1, -1, 127, -127, 0]);
        let wire = postcard::to_allocvec(&w).unwrap();
        assert_eq!(wire, [5, 1, 255, 127, 129, 0]);
        assert_eq!(postcard::from_bytes::<WeightBytes>(&wire).unwrap(), w);
        // A format that writes bytes as a sequence of numbers reads back the same.
        let seq = de::value::SeqDeserializer::<_, de::value::Error>::new([1u8, 255, 127, 129, 0].into_iter());
        assert_eq!(WeightBytes::deserialize(seq).unwrap(), w);
        let buf = de::value::BytesDeserializer::<de::value::Error>::new(&[1, 255, 127, 129, 0]);
        assert_eq!(WeightBytes::deserialize(buf).unwrap(), w);
        assert_eq!(WeightBytes::from(vec![1u8, 255, 127, 129, 0]), w);
    }

    #[test]
    fn quantized_parts_round_trip_and_select() {
        let mut w = Weights::new(&[4, 8], 2).unwrap();
        w.update(0, 1, 1, -2.5);
        w.update(1, 6, 0, 0.5);
        w.update(1, 7, 1, 0.25);
        let q = QuantizedWeights::quantize(&w);
        assert_eq!(q.n_params(), 24);
        assert_eq!(q.nonzero_per_template(), vec![1, 2]);
        // The largest weight of each block is exact; others within half a step.
        let mut acc = [0f32; 2];
        q.add_row(0, 1, &mut acc);
        assert_eq!(acc, [0.0, -2.5]);
        assert_eq!(q.get(1, 6), 0.5);
        assert!((q.dequantized().row(1, 7)[1] - 0.25).abs() <= 0.5 / 127.0 / 2.0);
        let (width, rows, scales, bytes) = q.to_parts();
        assert_eq!(QuantizedWeights::from_parts(width, &rows, scales.clone(), bytes.clone()).unwrap(), q);
        assert!(QuantizedWeights::from_parts(
            width,
            &rows,
            scales.clone(),
            WeightBytes(bytes.0[1..].to_vec())
        )
        .is_err());
        assert!(QuantizedWeights::from_parts(width, &rows, vec![f32::NAN, 1.0], bytes.clone()).is_err());
        assert!(QuantizedWeights::from_parts(0, &rows, scales, bytes).is_err());
        let s = q.select(&[1]).unwrap();
        assert_eq!(s.get(0, 6), 0.5);
        assert!(q.select(&[2]).is_err());
        // An all-zero block quantizes to zeros with scale 0.
        let z = QuantizedWeights::quantize(&Weights::new(&[4], 1).unwrap());
        assert_eq!(z.get(0, 3), 0.0);
    }

    #[test]
    fn shared_scale_sums_rows_as_integers() {
        let mut w = Weights::new(&[8, 16, 4], 51).unwrap();
        for (i, f) in (0..40u64).enumerate() {
            w.update(i % 3, f * 7, (i * 13) % 51, (i as f32 - 17.0) / 3.0);
        }
        let q = QuantizedWeights::quantize_shared(&w);
        assert!(q.shared_scale.is_some());
        assert!(QuantizedWeights::quantize(&w).shared_scale.is_none());
        let feats: Vec<(u32, u64)> = (0..30).map(|i| ((i % 3) as u32, (i * 7) as u64)).collect();
        let (mut ints, mut floats) = (vec![0f32; 51], vec![0f32; 51]);
        q.add_rows(&feats, &mut ints);
        q.dequantized().add_rows(&feats, &mut floats);
        for (a, b) in ints.iter().zip(&floats) {
            assert!((a - b).abs() < 1e-3, "{a} vs {b}");
        }
        let (width, rows, scales, bytes) = q.to_parts();
        assert!(QuantizedWeights::from_parts(width, &rows, scales, bytes).unwrap().shared_scale.is_some());
    }

    /// A three-template table of `width`-wide rows with 60 pseudo-random weights, quantized
    /// with one shared scale or one per block.
    fn random_table(width: usize, shared: bool, seed: u64) -> QuantizedWeights {
        let mut w = Weights::new(&[8, 16, 4], width).unwrap();
        for i in 0..60u64 {
            let x = crate::templates::hash::fmix(seed ^ i);
            w.update(
                (x % 3) as usize,
                x >> 8,
                (x >> 40) as usize % width,
                ((x >> 20) % 200) as f32 / 7.0 - 14.0,
            );
        }
        if shared {
            QuantizedWeights::quantize_shared(&w)
        } else {
            QuantizedWeights::quantize(&w)
        }
    }

    /// `n` (template, feature) pairs over [`random_table`]'s three templates.
    fn random_feats(n: usize, seed: u64) -> impl Iterator<Item = (usize, u64)> {
        (0..n as u64).map(move |i| ((i % 3) as usize, crate::templates::hash::fmix(seed + i)))
    }

    proptest! {
        /// Summing located rows (every path: 4-wide move rows, 16-bit integer sums in
        /// pieces of 16 plus a rest, over chunks of 128 rows) equals summing the
        /// dequantized rows.
        #[test]
        fn located_row_sums_match_dequantized(
            width in prop::sample::select(vec![1usize, 4, 16, 21, 51]),
            shared in any::<bool>(),
            n in 0usize..300,
            seed in any::<u64>(),
        ) {
            let q = random_table(width, shared, seed);
            let feats: Vec<(u32, u64)> = random_feats(n, seed).map(|(t, f)| (t as u32, f)).collect();
            let (mut got, mut want) = (vec![0f32; width], vec![0f32; width]);
            q.add_rows(&feats, &mut got);
            q.dequantized().add_rows(&feats, &mut want);
            for (a, b) in got.iter().zip(&want) {
                prop_assert!((a - b).abs() < 1e-2, "{} vs {}", a, b);
            }
            // One feature per template, in template order: the same rows.
            let each: Vec<u64> = (0..3).map(|t| crate::templates::hash::fmix(seed ^ t)).collect();
            let pairs: Vec<(u32, u64)> = each.iter().enumerate().map(|(t, &f)| (t as u32, f)).collect();
            let (mut by_template, mut by_pairs) = (vec![0f32; width], vec![0f32; width]);
            q.add_template_rows(each.iter().copied(), &mut Vec::new(), &mut by_template);
            q.add_rows(&pairs, &mut by_pairs);
            prop_assert_eq!(by_template, by_pairs);
        }

        /// Rows added one at a time (`add_row_running`, from a nonzero start) hold after
        /// each row exactly the bits one `add_located_rows` call over those rows leaves,
        /// past the 128-row stretches a shared scale sums as integers, for every table.
        #[test]
        fn running_row_sums_are_the_batch_sums_bit_for_bit(
            width in prop::sample::select(vec![1usize, 4, 16, 51]),
            shared in any::<bool>(),
            n in 0usize..300,
            seed in any::<u64>(),
        ) {
            let q = random_table(width, shared, seed);
            let feats: Vec<(usize, u64)> = random_feats(n, seed).collect();
            let start: Vec<f32> = (0..width).map(|k| if k % 3 == 0 { -1e9 } else { 0.0 }).collect();
            let (mut ints, mut base, mut acc) = (vec![0i32; width], start.clone(), start.clone());
            for (i, &(t, f)) in feats.iter().enumerate() {
                q.add_row_running(t, f, i, &mut ints, &mut base, &mut acc);
                if i % 37 == 36 || i + 1 == n {
                    let rows: Vec<RowAt> = feats[..=i].iter().map(|&(t, f)| RowAt { start: q.row_start(t, f), template: t }).collect();
                    let mut want = start.clone();
                    q.add_located_rows(&rows, &mut want);
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    prop_assert_eq!(bits(&acc), bits(&want), "after {} rows", i + 1);
                }
            }
        }

        /// Every quantized weight is within half a quantization step (max |w| / 254)
        /// of the f32 weight, and the trait reads agree with the dequantized table.
        #[test]
        fn quantization_error_is_half_a_step(vals in prop::collection::vec(-100f32..100.0, 16)) {
            let mut w = Weights::new(&[8, 8], 1).unwrap();
            for (i, &v) in vals.iter().enumerate() {
                w.update(i / 8, (i % 8) as u64, 0, v);
            }
            let q = QuantizedWeights::quantize(&w);
            let d = q.dequantized();
            for t in 0..2 {
                let max = w.block(t).iter().fold(0f32, |m, &x| m.max(x.abs()));
                for f in 0..8u64 {
                    prop_assert!((Weights::get(&w, t, f) - d.get(t, f)).abs() <= max / 254.0 * 1.0001 + 1e-6);
                    prop_assert_eq!(WeightTable::get(&q, t, f), d.get(t, f));
                }
            }
        }

        /// Lazy averaging equals the plain average of the weights after every step.
        #[test]
        fn lazy_average_matches_explicit(updates in prop::collection::vec(prop::collection::vec((0u64..8, -3i8..4), 0..4), 1..30)) {
            let mut w = Weights::new(&[8], 1).unwrap();
            w.start_averaging();
            let mut plain = [0f64; 8];
            let mut sum = [0f64; 8];
            for step in &updates {
                for &(f, d) in step {
                    w.update(0, f, 0, d as f32);
                    plain[f as usize] += d as f64;
                }
                for (s, p) in sum.iter_mut().zip(&plain) { *s += p; }
                w.tick();
            }
            let avg = w.averaged();
            // Average over the states after each step, counting the initial zero state too.
            let steps = updates.len() as f64;
            for (i, s) in sum.iter().enumerate() {
                let want = s / (steps + 1.0);
                prop_assert!((avg.get(0, i as u64) as f64 - want).abs() < 1e-4, "{} vs {}", avg.get(0, i as u64), want);
            }
        }
    }
}
