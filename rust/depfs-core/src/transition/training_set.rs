//! A treebank prepared once for training arc-eager models on it: projectivised (Nivre
//! & Nilsson 2005, when asked), its label set and label columns, the gold trees the
//! static oracle rebuilds, vocabulary hashes per attribute and distinct-feature counts
//! per template (for block sizing), both computed on first use. The selection methods
//! train hundreds of models on one treebank; each pays only for what is new to it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::guide::Work;
use super::local::LabelSet;
use super::parser::gold_tree;
use super::projective;
use super::system::{Configuration, GoldTree};
use crate::tagger::clusters::Clusters;
use crate::templates::attrs::{VocabCache, VocabHashes};
use crate::templates::config_feats::ConfigFeatures;
use crate::templates::syntax::Attr;
use crate::templates::TemplateSet;
use crate::treebank::{Treebank, NO_HEAD};
use crate::{Error, Result};

/// A training treebank and everything derived from it that does not depend on the
/// templates of a model.
#[derive(Debug)]
pub struct TrainingSet {
    /// The treebank as trained on (projectivised if `pseudo_projective`).
    pub treebank: Arc<Treebank>,
    pub pseudo_projective: bool,
    pub min_lifted_label_count: usize,
    /// Labels in first-use order, ROOT and fallback labels.
    pub labels: LabelSet,
    /// Labels seen on LEFT-ARCs (0) and RIGHT-ARCs (1).
    pub label_cols: [Vec<u32>; 2],
    /// Per label: seen on an arc from ROOT / on another arc.
    pub root_ok: Vec<bool>,
    pub nonroot_ok: Vec<bool>,
    /// Gold tree of each sentence the static oracle rebuilds (complete, projective,
    /// single-rooted); `usable` lists them.
    pub golds: Vec<Option<GoldTree>>,
    pub usable: Vec<usize>,
    /// Sentences with no UPOS on any word where others are tagged (raw text joined to a
    /// treebank by mistake): not trained on, as `fit` of a treebank skips them.
    pub untagged: Vec<usize>,
    /// The word-cluster table that `cluster` attributes read (None: none).
    pub clusters: Option<Arc<Clusters>>,
    vocab: VocabCache,
    /// Distinct features along the static oracle's paths, by template text.
    distinct: Mutex<HashMap<String, usize>>,
}

impl TrainingSet {
    /// Prepares `train`: projectivises it (if asked, then lifted labels seen fewer than
    /// `min_lifted_label_count` times become plain labels), builds the label set and
    /// the gold trees. O(words).
    pub fn new(
        train: &Treebank,
        pseudo_projective: bool,
        min_lifted_label_count: usize,
    ) -> Result<TrainingSet> {
        Self::with_clusters(train, pseudo_projective, min_lifted_label_count, None)
    }

    /// [`TrainingSet::new`] whose `cluster` attributes read `clusters`.
    pub fn with_clusters(
        train: &Treebank,
        pseudo_projective: bool,
        min_lifted_label_count: usize,
        clusters: Option<Arc<Clusters>>,
    ) -> Result<TrainingSet> {
        let mut tb = if pseudo_projective { projective::projectivize(train).0 } else { train.clone() };
        if pseudo_projective {
            projective::drop_rare_lifted_labels(&mut tb, min_lifted_label_count);
        }
        // Untagged sentences among tagged ones are left out, here as in `fit` of a
        // treebank (a parser would read the tags yet learn that none are needed).
        let mut untagged = crate::io::model::untagged_sentences(&tb);
        if untagged.len() == tb.len() {
            untagged.clear(); // raw text alone: a model of forms, as the user asked
        }
        let mut trained = vec![true; tb.len()];
        untagged.iter().for_each(|&s| trained[s] = false);
        // The label set: every DEPREL used in training, in first-use order.
        let mut labels: Vec<String> = Vec::new();
        let mut label_ids = vec![super::NONE; tb.vocabs.deprel.len()];
        let mut counts: Vec<(u64, u64)> = Vec::new(); // (on arcs from ROOT, on other arcs)
        let mut label_cols: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        for s in (0..tb.len()).filter(|&s| trained[s]) {
            for (i, (&h, &l)) in tb.heads(s).iter().zip(tb.deprels(s)).enumerate() {
                if h == NO_HEAD {
                    continue;
                }
                if label_ids[l as usize] == super::NONE {
                    label_ids[l as usize] = labels.len() as u32;
                    labels.push(tb.vocabs.deprel.str(l).to_string());
                    counts.push((0, 0));
                }
                // A head right of its dependent is a LEFT-ARC, left of it (or ROOT) a RIGHT-ARC.
                let cols = &mut label_cols[usize::from(h as usize <= i)];
                if !cols.contains(&label_ids[l as usize]) {
                    cols.push(label_ids[l as usize]);
                }
                let c = &mut counts[label_ids[l as usize] as usize];
                if h == 0 {
                    c.0 += 1
                } else {
                    c.1 += 1
                }
            }
        }
        let golds: Vec<Option<GoldTree>> =
            (0..tb.len()).map(|s| if trained[s] { gold_tree(&tb, s, &label_ids) } else { None }).collect();
        let usable: Vec<usize> = (0..tb.len()).filter(|&s| golds[s].is_some()).collect();
        if usable.is_empty() {
            return Err(Error::InvalidArgument(if pseudo_projective {
                "no training sentence has a complete single-rooted tree".into()
            } else {
                // (the oracle rebuilds projective trees only: with pseudo-projective
                // lifting off, a non-projective one is not learned from)
                "no training sentence has a complete single-rooted projective tree \
                 (pseudo_projective=False keeps non-projective trees as they are, and the \
                 arc-eager oracle cannot rebuild them)"
                    .into()
            }));
        }
        let most = |f: fn(&(u64, u64)) -> u64| {
            (0..counts.len()).max_by_key(|&i| (f(&counts[i]), std::cmp::Reverse(i))).unwrap_or(0) as u32
        };
        let root_label = most(|c| c.0);
        let fallback_label =
            labels.iter().position(|l| l == "dep").map_or_else(|| most(|c| c.1), |i| i as u32);
        Ok(TrainingSet {
            treebank: Arc::new(tb),
            pseudo_projective,
            min_lifted_label_count,
            labels: LabelSet { labels, root_label, fallback_label, pseudo_projective },
            label_cols,
            root_ok: counts.iter().map(|c| c.0 > 0).collect(),
            nonroot_ok: counts.iter().map(|c| c.1 > 0).collect(),
            golds,
            usable,
            untagged,
            clusters,
            vocab: VocabCache::default(),
            distinct: Mutex::default(),
        })
    }

    /// Vocabulary hashes of the training treebank for `attrs` (each attribute's table
    /// computed once per set).
    pub fn vocab_hashes(&self, attrs: &[Attr]) -> VocabHashes {
        VocabHashes::with_cache(&self.treebank, attrs, &self.vocab, self.clusters.as_deref())
    }

    /// Distinct features of each template of `set` along the static oracle's paths
    /// (estimated by linear counting), counting only templates not seen before.
    /// O(decisions · new templates).
    pub fn distinct_features(&self, set: &TemplateSet) -> Result<Vec<usize>> {
        let mut known = self.distinct.lock().unwrap_or_else(|e| e.into_inner());
        let mut new: Vec<usize> = Vec::new();
        for (i, t) in set.templates.iter().enumerate() {
            if !known.contains_key(&t.text) && !new.iter().any(|&j| set.templates[j].text == t.text) {
                new.push(i);
            }
        }
        if !new.is_empty() {
            let sub = set.subset(&new)?;
            let mut counters: Vec<DistinctCounter> = (0..sub.len()).map(|_| DistinctCounter::new()).collect();
            self.oracle_features(&sub, |feats| {
                for (counter, &f) in counters.iter_mut().zip(feats) {
                    counter.add(f);
                }
            })?;
            for (t, counter) in sub.templates.iter().zip(&counters) {
                known.insert(t.text.clone(), counter.estimate());
            }
        }
        Ok(set.templates.iter().map(|t| known[&t.text]).collect())
    }
}

impl TrainingSet {
    /// Calls `f` with the features of `set` (one per template) in every configuration
    /// of the static oracle's paths through the usable sentences. O(decisions · |set|).
    pub fn oracle_features(&self, set: &TemplateSet, mut f: impl FnMut(&[u64])) -> Result<()> {
        let feats = ConfigFeatures::compile(set)?;
        let vh = self.vocab_hashes(&feats.attrs);
        let (mut work, mut c) = (Work::default(), Configuration::default());
        for &s in &self.usable {
            let gold = self.golds[s].as_ref().expect("usable sentence");
            c.reset(gold.len());
            work.attrs.fill(&vh, &self.treebank, s);
            while let Some(m) = super::oracle::static_move(&c, gold) {
                work.feats.clear();
                feats.extract(&c, &work.attrs, None, &mut work.scratch, &mut work.feats);
                f(&work.feats);
                m.apply(&mut c);
            }
        }
        Ok(())
    }
}

/// Estimates distinct values by linear counting over a 2^22-bit map
/// (Whang et al. 1990): n ≈ −m ln(zero bits / m).
struct DistinctCounter {
    bits: Vec<u64>,
}

impl DistinctCounter {
    const M: usize = 1 << 22;
    fn new() -> Self {
        DistinctCounter { bits: vec![0; Self::M / 64] }
    }
    fn add(&mut self, h: u64) {
        let i = (crate::templates::hash::fmix(h) as usize) & (Self::M - 1);
        self.bits[i / 64] |= 1 << (i % 64);
    }
    fn estimate(&self) -> usize {
        let ones: u64 = self.bits.iter().map(|w| w.count_ones() as u64).sum();
        let zeros = (Self::M as u64 - ones).max(1) as f64;
        (-(Self::M as f64) * (zeros / Self::M as f64).ln()) as usize
    }
}
