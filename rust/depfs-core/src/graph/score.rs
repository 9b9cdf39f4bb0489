//! Scoring parts with arc templates and hashed weights: the hot loops of the graph parser.

use crate::templates::arc::{ArcFeatures, ArcSent, Second};
use crate::weights::{TemplateCounts, Weights};

/// Splits template indices into (plain, in-between) lists.
fn split(af: &ArcFeatures, active: &[usize]) -> (Vec<usize>, Vec<usize>) {
    active.iter().partition(|&&t| !af.templates[t].has_between())
}

/// `out[m * n1 + h]` = Σ over templates in `active` of the weights of arc h → m's
/// features (row 0 and the diagonal are 0, decoders ignore them).
///
/// O(n² · P + n³ · B) for P plain and B in-between templates; the inner loop runs over
/// templates with two cached partial hashes per (h, m) and one weight load each.
pub fn arc_scores(
    af: &ArcFeatures,
    w: &Weights,
    sent: &ArcSent,
    active: &[usize],
    out: &mut Vec<f64>,
    counts: Option<&mut TemplateCounts>,
) {
    let n1 = sent.n1;
    out.clear();
    out.resize(n1 * n1, 0.0);
    let (plain, between) = split(af, active);
    for m in 1..n1 {
        let row = &mut out[m * n1..(m + 1) * n1];
        for (h, cell) in row.iter_mut().enumerate() {
            if h == m {
                continue;
            }
            let mut s = 0f32;
            for &t in &plain {
                s += w.get(t, af.plain(sent, t, h, m));
            }
            for &t in &between {
                af.for_each(sent, t, h, m, Second::default(), |f| s += w.get(t, f));
            }
            *cell = s as f64;
        }
    }
    if let Some(c) = counts {
        let arcs = ((n1 - 1) * (n1 - 1)) as u64;
        for &t in active {
            c.add(t, arcs);
        }
    }
}

/// Second-order sibling scores in the layout of the decoders:
/// `out[(m * n1 + h) * n1 + s]` with `s == h` for the innermost child. Only the
/// entries a projective decoder can use (s between h and m, or s == h) are filled.
/// O(n³ · T).
pub fn sibling_scores(af: &ArcFeatures, w: &Weights, sent: &ArcSent, active: &[usize], out: &mut Vec<f64>) {
    let n1 = sent.n1;
    out.clear();
    out.resize(n1 * n1 * n1, 0.0);
    for h in 0..n1 {
        for m in 1..n1 {
            if m == h {
                continue;
            }
            let base = (m * n1 + h) * n1;
            let inner = if m > h { h..m } else { m + 1..h + 1 };
            for s in inner {
                let second = Second { sib: (s != h).then_some(s), grand: None };
                let mut acc = 0f32;
                for &t in active {
                    af.for_each(sent, t, h, m, second, |f| acc += w.get(t, f));
                }
                out[base + s] = acc as f64;
            }
        }
    }
}

/// Label scores of arc h → m: `out[l]` = Σ_t row(t, f)[l]. O(T · L).
pub fn label_scores(af: &ArcFeatures, w: &Weights, sent: &ArcSent, h: usize, m: usize, out: &mut [f32]) {
    out.fill(0.0);
    for t in 0..af.len() {
        af.for_each(sent, t, h, m, Second::default(), |f| w.add_row(t, f, out));
    }
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

/// Sibling of each word in a tree (the previous child of its head on the same side,
/// closer to the head), `None` for innermost children. heads[0] = -1.
pub fn siblings(heads: &[i32]) -> Vec<Option<usize>> {
    let n1 = heads.len();
    let mut out = vec![None; n1];
    for h in 0..n1 {
        let mut prev = None;
        for m in h + 1..n1 {
            if heads[m] == h as i32 {
                out[m] = prev;
                prev = Some(m);
            }
        }
        let mut prev = None;
        for m in (1..h).rev() {
            if heads[m] == h as i32 {
                out[m] = prev;
                prev = Some(m);
            }
        }
    }
    out
}
