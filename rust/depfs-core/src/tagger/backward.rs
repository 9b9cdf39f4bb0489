//! The backward pass: a cheap right-to-left UPOS classifier run over the sentence before
//! the left-to-right tagger, whose templates then read its tags as `bupos(i±k)`: right
//! context the greedy left-to-right pass has not decided yet (bidirectional inference,
//! Toutanova et al. 2003, here as two greedy passes). The pass reads the form attributes,
//! `ambig` and its own tags to the right; its candidates are the tag dictionary's. It may
//! predict XPOS instead (`TaggerOptions::backward_xpos`): its candidates are then the XPOS
//! values of the form's UPOS candidates, and `bupos` holds XPOS tags.
//!
//! Training: the left-to-right pass must learn from tags as good as it will meet, not
//! from the tags of a pass that has seen the sentence. So the training treebank's
//! `bupos` are jackknifed: each of [`FOLDS`] contiguous blocks of sentences is tagged by
//! a backward pass trained on the others; the pass stored in the model is then trained
//! on every sentence. (The tag dictionary is the whole training treebank's in every fold,
//! as for the left-to-right pass.) Each pass trains [`EPOCHS`] epochs of the averaged
//! perceptron on its own predictions to the right, as it runs at tagging time.

use super::*;

/// Folds of the jackknife that tags the training treebank's `bupos`.
pub const FOLDS: usize = 4;
/// Training epochs of a backward pass.
pub const EPOCHS: usize = 10;

/// Runs backward pass `cm` over the sentence of `n` words in `sc` (its form table and
/// ambiguity classes set), right to left, writing each word's tag to the history's
/// `bupos`; `entry(i)` is word i's dictionary entry. O(words · candidates · templates).
pub(super) fn run<'e, W: WeightTable>(
    cm: &ColumnModel<W>,
    lexicon: &Lexicon,
    n: usize,
    entry: impl Fn(usize) -> Option<&'e FormEntry>,
    sc: &mut Scratch,
) {
    run_forms(cm, lexicon, n, |i| (None, entry(i)), sc);
}

/// [`run`] with `word(i)` word i's form id in the treebank being tagged (None: not
/// tagging), whose candidates are then kept in `sc`, and its dictionary entry.
pub(super) fn run_forms<'e, W: WeightTable>(
    cm: &ColumnModel<W>,
    lexicon: &Lexicon,
    n: usize,
    word: impl Fn(usize) -> (Option<u32>, Option<&'e FormEntry>),
    sc: &mut Scratch,
) {
    sc.hist.reset_back();
    for i in (1..=n).rev() {
        let cands = match word(i) {
            (Some(fid), e) => {
                sc.cands_of_form.get(fid, N_COLUMNS, 0, || candidates(cm, lexicon, e, &mut sc.all))
            }
            (None, e) => candidates(cm, lexicon, e, &mut sc.all),
        };
        let pred = if cands.len() == 1 {
            cands[0]
        } else {
            cm.feats.features(&sc.hist, i, &mut sc.feats);
            cm.best(&sc.feats, cands, &mut sc.dec)
        };
        sc.hist.set_back(i, cm.salts[pred as usize]);
    }
}

/// Candidates of a word: its dictionary entry's UPOS tags (for an XPOS pass, the XPOS
/// values of each of them, merged), else every class, into `out`. O(candidates · log).
pub(super) fn candidates<'o>(
    cm: &ColumnModel<impl Sized>,
    lexicon: &Lexicon,
    entry: Option<&FormEntry>,
    out: &'o mut Vec<u32>,
) -> &'o [u32] {
    out.clear();
    let c = lexicon.candidates(UPOS, entry, 0, "");
    if cm.column == UPOS {
        out.extend_from_slice(c);
    } else {
        for &u in c {
            out.extend_from_slice(lexicon.candidates(XPOS, entry, u, ""));
        }
        out.sort_unstable();
        out.dedup();
    }
    if out.is_empty() {
        out.extend(0..cm.classes.len() as u32);
    }
    out
}

impl TaggerTrainer {
    /// The training treebank's `bupos` (by word position), jackknifed over [`FOLDS`]
    /// blocks of sentences, and the backward pass trained on all of them, from the
    /// untrained pass `base`. O(FOLDS · EPOCHS · words · candidates · templates).
    pub(super) fn train_backward_passes(
        &self,
        base: &ColumnModel<Weights>,
        seed: u64,
        max_bits: u32,
    ) -> Result<(Vec<u64>, ColumnModel<QuantizedWeights>)> {
        let n_s = self.tb.len();
        let all: Vec<usize> = (0..n_s).collect();
        let full = self.train_backward(base, &all, seed, max_bits)?;
        let mut back = vec![NONE_VALUE; self.tb.n_words()];
        let folds = FOLDS.min(n_s);
        let mut sc = Scratch::default();
        for k in 0..folds {
            let (lo, hi) = (k * n_s / folds, (k + 1) * n_s / folds);
            let rest: Vec<usize> = (0..lo).chain(hi..n_s).collect();
            // A treebank of one sentence has no other fold: the full pass tags it.
            let trained;
            let cm = if rest.is_empty() {
                &full
            } else {
                trained = self.train_backward(base, &rest, seed.wrapping_add(k as u64 + 1), max_bits)?;
                &trained
            };
            for s in lo..hi {
                let (start, n) = self.start_plain(s, &mut sc);
                run(cm, &self.core.lexicon, n, |i| self.entry_at(start + i - 1), &mut sc);
                for i in 1..=n {
                    back[start + i - 1] = sc.hist.back_at(i);
                }
            }
        }
        Ok((back, full))
    }

    /// Word `pos`'s dictionary entry for UPOS ([`CaseRules::upos_entry`]).
    fn entry_at(&self, pos: usize) -> Option<&FormEntry> {
        self.core.case.upos_entry(self.core.lexicon.entry(self.tb.vocabs.form.str(self.tb.words.form[pos])))
    }

    /// Starts sentence s in `sc` without the backward tags; its first word's position and
    /// its length.
    fn start_plain(&self, s: usize, sc: &mut Scratch) -> (usize, usize) {
        start_sentence(&self.core.slots, &self.vh, &self.ambig, &self.tb, s, sc);
        let meta = &self.tb.sentences[s];
        (meta.start as usize, meta.len as usize)
    }

    /// A backward pass trained on sentences `sents` (see the module comment), its weight
    /// blocks sized by the (feature, gold class) pairs met on gold tags to the right.
    fn train_backward(
        &self,
        base: &ColumnModel<Weights>,
        sents: &[usize],
        seed: u64,
        max_bits: u32,
    ) -> Result<ColumnModel<QuantizedWeights>> {
        let mut cm = base.clone();
        let m = self.core.columns.iter().position(|c| c.column == cm.column).unwrap_or(0);
        let gold = &self.gold[m];
        let mut sc = Scratch::default();
        let mut cands = Vec::new();
        let mut pairs = vec![HashSet::new(); cm.set.len()];
        for &s in sents {
            let (start, n) = self.start_plain(s, &mut sc);
            sc.hist.reset_back();
            for i in (1..=n).rev() {
                let g = gold[start + i - 1];
                candidates(&cm, &self.core.lexicon, self.entry_at(start + i - 1), &mut cands);
                if cands.len() > 1 {
                    cm.feats.features(&sc.hist, i, &mut sc.feats);
                    for (t, &f) in sc.feats.iter().enumerate() {
                        pairs[t].insert(cm.key(f, g));
                    }
                }
                sc.hist.set_back(i, cm.salts[g as usize]);
            }
        }
        let rows: Vec<usize> = pairs.iter().map(|p| rows_for(2 * p.len(), 6, max_bits)).collect();
        cm.weights = Weights::new(&rows, 1)?;
        cm.weights.start_averaging();
        let mut rng = Rng::new(seed);
        let mut order = sents.to_vec();
        for _ in 0..EPOCHS {
            for i in (1..order.len()).rev() {
                order.swap(i, rng.index(i + 1));
            }
            for &s in &order {
                let (start, n) = self.start_plain(s, &mut sc);
                sc.hist.reset_back();
                for i in (1..=n).rev() {
                    let g = gold[start + i - 1];
                    candidates(&cm, &self.core.lexicon, self.entry_at(start + i - 1), &mut cands);
                    let pred = if cands.len() == 1 {
                        cands[0]
                    } else {
                        cm.feats.features(&sc.hist, i, &mut sc.feats);
                        let p = cm.best(&sc.feats, &cands, &mut sc.dec);
                        if p != g && cands.contains(&g) {
                            for (t, &f) in sc.feats.iter().enumerate() {
                                let (kg, kp) = (cm.key(f, g), cm.key(f, p));
                                cm.weights.update(t, kg, 0, 1.0);
                                cm.weights.update(t, kp, 0, -1.0);
                            }
                        }
                        p
                    };
                    sc.hist.set_back(i, cm.salts[pred as usize]);
                    cm.weights.tick();
                }
            }
        }
        Ok(cm.quantized())
    }
}
