//! The graph parser's view of the decoders: one reusable workspace per thread.
//!
//! TEMPORARY: until the decoders branch (`crate::decode`) is on main, this file holds
//! a plain first-order Eisner (1996) so the parser can be trained and tested; the
//! merge replaces the bodies with calls to `crate::decode` workspaces.

use super::DecoderKind;
use crate::{Error, Result};

#[derive(Debug, Default)]
pub struct DecodeWs {
    chart: Vec<f64>,
    back: Vec<u32>,
}

impl DecodeWs {
    /// Best tree under first-order scores `scores[m * n1 + h]`; heads[0] = -1.
    pub fn first(&mut self, kind: DecoderKind, scores: &[f64], n1: usize) -> Result<Vec<i32>> {
        match kind {
            DecoderKind::Eisner => eisner_single_root(self, scores, n1),
            DecoderKind::Cle => Err(Error::InvalidArgument(
                "the cle decoder needs the decoders module (not merged yet)".into(),
            )),
        }
    }

    /// Best projective tree under arc + adjacent-sibling scores.
    pub fn second(&mut self, _arc: &[f64], _sib: &[f64], _n1: usize) -> Result<Vec<i32>> {
        Err(Error::InvalidArgument("second-order decoding needs the decoders module".into()))
    }
}

/// Eisner's O(n³) algorithm with one child of ROOT (ROOT as position 0, the root
/// word's span attached last). Charts `[kind][s][t]`: 0 = complete right, 1 = complete
/// left, 2 = incomplete right (s → t), 3 = incomplete left (t → s).
fn eisner_single_root(ws: &mut DecodeWs, scores: &[f64], n1: usize) -> Result<Vec<i32>> {
    let mut heads = vec![-1i32; n1];
    if n1 <= 1 {
        return Ok(heads);
    }
    let idx = |k: usize, s: usize, t: usize| (k * n1 + s) * n1 + t;
    ws.chart.clear();
    ws.chart.resize(4 * n1 * n1, f64::NEG_INFINITY);
    ws.back.clear();
    ws.back.resize(4 * n1 * n1, 0);
    for s in 0..n1 {
        ws.chart[idx(0, s, s)] = 0.0;
        ws.chart[idx(1, s, s)] = 0.0;
    }
    let sc = |h: usize, m: usize| scores[m * n1 + h];
    for len in 1..n1 {
        for s in 0..n1 - len {
            let t = s + len;
            // Incomplete spans: split r, cr[s][r] + cl[r+1][t].
            let (mut best, mut arg) = (f64::NEG_INFINITY, s);
            for r in s..t {
                let v = ws.chart[idx(0, s, r)] + ws.chart[idx(1, r + 1, t)];
                if v > best {
                    best = v;
                    arg = r;
                }
            }
            // s → t (ROOT may take only the whole sentence as child: handled below).
            if s != 0 {
                ws.chart[idx(2, s, t)] = best + sc(s, t);
                ws.back[idx(2, s, t)] = arg as u32;
            } else if t == n1 - 1 {
                // unused: ROOT's child is chosen at the end
            }
            ws.chart[idx(3, s, t)] = if s == 0 { f64::NEG_INFINITY } else { best + sc(t, s) };
            ws.back[idx(3, s, t)] = arg as u32;
            // Complete spans.
            let (mut bl, mut al) = (f64::NEG_INFINITY, s);
            for r in s..t {
                let v = ws.chart[idx(1, s, r)] + ws.chart[idx(3, r, t)];
                if v > bl {
                    bl = v;
                    al = r;
                }
            }
            ws.chart[idx(1, s, t)] = bl;
            ws.back[idx(1, s, t)] = al as u32;
            let (mut br, mut ar) = (f64::NEG_INFINITY, s + 1);
            for r in s + 1..=t {
                let v = ws.chart[idx(2, s, r)] + ws.chart[idx(0, r, t)];
                if v > br {
                    br = v;
                    ar = r;
                }
            }
            ws.chart[idx(0, s, t)] = br;
            ws.back[idx(0, s, t)] = ar as u32;
        }
    }
    // ROOT's single child r: cl[1][r] + cr[r][n] + score(0, r).
    let (mut best, mut root) = (f64::NEG_INFINITY, 1);
    for r in 1..n1 {
        let v = ws.chart[idx(1, 1, r)] + ws.chart[idx(0, r, n1 - 1)] + sc(0, r);
        if v > best {
            best = v;
            root = r;
        }
    }
    if !best.is_finite() {
        return Err(Error::NoSpanningTree("every tree has an arc scored -inf".into()));
    }
    heads[root] = 0;
    let mut stack = vec![(1usize, 1usize, root), (0, root, n1 - 1)];
    while let Some((k, s, t)) = stack.pop() {
        if s == t {
            continue;
        }
        let r = ws.back[idx(k, s, t)] as usize;
        match k {
            0 => {
                stack.push((2, s, r));
                stack.push((0, r, t));
            }
            1 => {
                stack.push((1, s, r));
                stack.push((3, r, t));
            }
            2 => {
                heads[t] = s as i32;
                stack.push((0, s, r));
                stack.push((1, r + 1, t));
            }
            _ => {
                heads[s] = t as i32;
                stack.push((0, s, r));
                stack.push((1, r + 1, t));
            }
        }
    }
    Ok(heads)
}
