//! The graph parser's chain, open: prepare a sentence once, add the scores of template
//! groups to the arcs still open (accumulating, never overwriting), decode under the
//! arcs removed so far, then label. The parser runs it with one group (all templates);
//! He, Daumé & Eisner (2013), *Dynamic Feature Selection for Dependency Parsing*, run
//! it in rounds: after each group a policy locks confident arcs (their modifier's other
//! arcs are removed, the arc gets no more groups) or adds the next group.
//!
//! Scores are `scores[m * n1 + h]` for arc h → m, n1 = words + 1; -inf = removed.

use super::score::{self, Split};
use super::{DecoderKind, GraphModel, Prepared};
use crate::decode::{CleWorkspace, Eisner2Workspace, EisnerWorkspace};
use crate::templates::arc::ArcSent;
use crate::templates::attrs::SentAttrs;
use crate::weights::{TemplateCounts, WeightTable};
use crate::Result;
use crate::{Error, Treebank};

#[derive(Debug, Default)]
pub struct DecodeWs {
    eisner: EisnerWorkspace,
    cle: CleWorkspace,
    eisner2: Eisner2Workspace,
}

impl DecodeWs {
    /// Best tree under first-order scores `scores[m * n1 + h]`; heads[0] = -1.
    pub fn first(&mut self, kind: DecoderKind, scores: &[f64], n1: usize) -> Result<Vec<i32>> {
        match kind {
            DecoderKind::Eisner => self.eisner.decode(scores, n1, true),
            DecoderKind::Cle => self.cle.decode(scores, n1, true),
        }
    }

    /// Best projective tree under arc + adjacent-sibling scores
    /// (`sib[(m * n1 + h) * n1 + s]`, `s == h` for the innermost child).
    pub fn second(&mut self, arc: &[f64], sib: &[f64], n1: usize) -> Result<Vec<i32>> {
        self.eisner2.decode(arc, sib, n1, true)
    }
}

/// One sentence in the chain: partial hashes of the arc templates (computed once), the
/// arcs still open to template groups, and the scores accumulated so far.
#[derive(Debug, Default)]
pub struct OpenSentence {
    /// Sentence index in its treebank.
    pub s: usize,
    pub(crate) arc: ArcSent,
    /// `open[m * n1 + h]`: arc h → m still receives template groups.
    pub(crate) open: Vec<bool>,
    /// Accumulated scores; -inf = removed (pruned by the length dictionary, or ruled
    /// out by a lock).
    pub scores: Vec<f64>,
    /// Arcs to score in one [`GraphModel::add_group`] call.
    pub(crate) todo: Vec<bool>,
    /// UPOS hashes for the length dictionary.
    upos: SentAttrs,
}

impl OpenSentence {
    /// Words + 1 (ROOT).
    pub fn n1(&self) -> usize {
        self.arc.n1
    }

    /// Whether arc h → m still receives template groups.
    pub fn is_open(&self, m: usize, h: usize) -> bool {
        self.open[m * self.arc.n1 + h]
    }

    /// Decides m's head: every other arc into m is removed and h → m gets no more
    /// groups (its score so far stays, so decoding keeps it).
    pub fn lock(&mut self, m: usize, h: usize) {
        let n1 = self.arc.n1;
        for g in (0..n1).filter(|&g| g != m) {
            self.open[m * n1 + g] = false;
            if g != h {
                self.scores[m * n1 + g] = f64::NEG_INFINITY;
            }
        }
    }

    /// Removes arc h → m from the tree search.
    pub fn remove(&mut self, m: usize, h: usize) {
        let i = m * self.arc.n1 + h;
        self.open[i] = false;
        self.scores[i] = f64::NEG_INFINITY;
    }

    /// Starts the scores over at 0 on every arc still open (-inf elsewhere).
    fn reset(&mut self) {
        score::reset_scores(self.arc.n1, Some(&self.open), &mut self.scores);
    }
}

impl<W: WeightTable> GraphModel<W> {
    /// Prepares sentence s of `tb` for the chain into `o` (buffers reused): partial
    /// hashes of the arc templates and, when the model prunes, the length-dictionary
    /// mask; scores 0 on every arc left open. O(n · T + n²).
    pub fn open_sentence(&self, tb: &Treebank, prep: &Prepared, s: usize, o: &mut OpenSentence) {
        self.open_pruned(tb, prep, s, self.config.prune, o);
    }

    /// [`Self::open_sentence`], pruning with the length dictionary or not.
    pub fn open_pruned(&self, tb: &Treebank, prep: &Prepared, s: usize, prune: bool, o: &mut OpenSentence) {
        o.s = s;
        self.arc.prepare(&prep.arc, tb, s, &mut o.arc);
        let n1 = o.arc.n1;
        if prune {
            o.upos.fill(&prep.upos, tb, s);
            self.length_dict.fill_mask(&o.upos, &mut o.open);
        } else {
            o.open.clear();
            o.open.extend((0..n1 * n1).map(|i| i / n1 != 0 && i / n1 != i % n1));
        }
        o.reset();
    }

    /// Adds the scores of the arc templates `group` (indices into the arc set) to the
    /// open arcs of `o` that `arcs` selects (all open arcs when `None`). O(a · |group|)
    /// for a arcs scored.
    pub fn add_group(
        &self,
        o: &mut OpenSentence,
        group: &[usize],
        arcs: Option<&[bool]>,
        counts: Option<&mut TemplateCounts>,
    ) -> crate::Result<()> {
        self.check_templates(group)?;
        let n1 = o.arc.n1;
        if arcs.is_some_and(|a| a.len() != n1 * n1) {
            return Err(Error::InvalidArgument(format!("the arc mask must have {} entries", n1 * n1)));
        }
        o.todo.clear();
        o.todo.extend(o.open.iter().enumerate().map(|(i, &open)| open && arcs.is_none_or(|a| a[i])));
        let split = Split::new(&self.arc, group);
        let mut item = [score::ToScore { sent: &o.arc, mask: Some(&o.todo), out: &mut o.scores }];
        score::add_arc_scores_batch(&self.arc, &self.arc_w, &mut item, &split, counts);
        Ok(())
    }

    /// The best tree under the scores of `o` with the first-order decoder (removed arcs
    /// never chosen); heads[0] = -1. An error when the removed arcs leave no tree.
    pub fn decode_open(&self, o: &OpenSentence, ws: &mut DecodeWs) -> crate::Result<Vec<i32>> {
        ws.first(self.config.decoder, &o.scores, o.arc.n1)
    }
}
