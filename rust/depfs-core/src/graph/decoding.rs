//! The graph parser's view of the decoders ([`crate::decode`]): one reusable
//! workspace per thread, single root (UD trees have one child of ROOT).

use super::DecoderKind;
use crate::decode::{CleWorkspace, Eisner2Workspace, EisnerWorkspace};
use crate::Result;

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
