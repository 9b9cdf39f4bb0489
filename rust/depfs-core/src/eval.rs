//! Attachment scores of a system treebank against gold, on gold tokenisation.
//!
//! Follows the definitions of the CoNLL 2018 shared-task scorer (Zeman et al.
//! 2018, `conll18_ud_eval.py`) for the case where both files share the gold
//! words: UAS = share of words with the gold HEAD; LAS = HEAD and the universal
//! part of DEPREL (before `:`) both right. Multiword-token ranges and empty
//! nodes are not words in the layout and are never scored. Not in the shared
//! task but customary: label accuracy (DEPREL alone) and every score again
//! without the words whose gold UPOS is `PUNCT`.
//!
//! Tagging, as the same scorer does on gold words: UPOS, XPOS, UFeats (the universal
//! features only, in sorted order), AllTags (UPOS, XPOS and UFeats all right) and Lemmas
//! (a gold lemma `_` counts as right).
//!
//! Vocabularies are per treebank, so labels and forms are compared through
//! their strings: each vocabulary is mapped once, then words are compared by
//! id. Cost O(|vocab| + |words|).

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::treebank::{Treebank, Vocab, NO_HEAD};

/// Options of [`evaluate`].
#[derive(Debug, Clone, Copy, Default)]
pub struct EvalOptions {
    /// Compare whole DEPREL values (`nsubj:pass` ≠ `nsubj`) instead of the universal part.
    pub full_labels: bool,
    /// Score the tag columns only: HEAD and DEPREL may be `_` on either side (a tagger's
    /// dev set, a corpus without trees); the tree scores are then 0.
    pub tags_only: bool,
}

/// Correct-word counts; percentages are derived from them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scores {
    /// Scored words (multiword ranges and empty nodes excluded).
    pub words: usize,
    /// Scored words whose gold UPOS is not `PUNCT`.
    pub words_nopunct: usize,
    pub uas_correct: usize,
    pub las_correct: usize,
    pub label_correct: usize,
    pub uas_correct_nopunct: usize,
    pub las_correct_nopunct: usize,
    pub label_correct_nopunct: usize,
    pub upos_correct: usize,
    pub xpos_correct: usize,
    pub ufeats_correct: usize,
    pub alltags_correct: usize,
    pub lemma_correct: usize,
    /// Scored words whose UPOS, XPOS, FEATS, LEMMA is not `_` in gold (a column gold
    /// lacks is not scored: say so rather than print 0) and in the system (a column it
    /// lacks was not predicted).
    pub gold_filled: [usize; 4],
    pub system_filled: [usize; 4],
}

/// The tag columns `Scores::gold_filled` and `system_filled` count, in their order.
pub const TAG_COLUMNS: [&str; 4] = ["UPOS", "XPOS", "FEATS", "LEMMA"];

fn percent(correct: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * correct as f64 / total as f64
    }
}

impl Scores {
    pub fn uas(&self) -> f64 {
        percent(self.uas_correct, self.words)
    }
    pub fn las(&self) -> f64 {
        percent(self.las_correct, self.words)
    }
    pub fn label_acc(&self) -> f64 {
        percent(self.label_correct, self.words)
    }
    pub fn uas_nopunct(&self) -> f64 {
        percent(self.uas_correct_nopunct, self.words_nopunct)
    }
    pub fn las_nopunct(&self) -> f64 {
        percent(self.las_correct_nopunct, self.words_nopunct)
    }
    pub fn label_acc_nopunct(&self) -> f64 {
        percent(self.label_correct_nopunct, self.words_nopunct)
    }
    pub fn upos(&self) -> f64 {
        percent(self.upos_correct, self.words)
    }
    pub fn xpos(&self) -> f64 {
        percent(self.xpos_correct, self.words)
    }
    pub fn ufeats(&self) -> f64 {
        percent(self.ufeats_correct, self.words)
    }
    pub fn alltags(&self) -> f64 {
        percent(self.alltags_correct, self.words)
    }
    pub fn lemmas(&self) -> f64 {
        percent(self.lemma_correct, self.words)
    }
}

/// The part of a label that is compared: everything before the first `:`, or all of it.
fn label_key(label: &str, full_labels: bool) -> &str {
    if full_labels {
        label
    } else {
        label.split(':').next().unwrap_or(label)
    }
}

/// For every id of `vocab`, a dense key id such that two labels get the same id
/// exactly when their compared parts are equal. `keys` is shared by both sides.
fn label_key_ids<'a>(vocab: &'a Vocab, full: bool, keys: &mut HashMap<&'a str, u32>) -> Vec<u32> {
    vocab
        .strings()
        .iter()
        .map(|s| {
            let next = keys.len() as u32;
            *keys.entry(label_key(s, full)).or_insert(next)
        })
        .collect()
}

/// The universal features of UD (v2), the ones UFeats compares.
const UNIVERSAL_FEATURES: &[&str] = &[
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number", "Case",
    "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident", "Polarity", "Person",
    "Polite",
];

/// The compared part of a FEATS value: its universal features, sorted.
fn ufeats_key(feats: &str) -> String {
    let mut kept: Vec<&str> = feats
        .split('|')
        .filter(|f| f.split_once('=').is_some_and(|(k, _)| UNIVERSAL_FEATURES.contains(&k)))
        .collect();
    kept.sort_unstable();
    kept.join("|")
}

/// Dense key ids of two vocabularies' strings under `key`: equal ids exactly when the
/// keys are equal. O(|vocabularies|).
fn key_ids(gold: &Vocab, system: &Vocab, key: impl Fn(&str) -> String) -> (Vec<u32>, Vec<u32>) {
    let mut keys: HashMap<String, u32> = HashMap::new();
    let mut ids = |v: &Vocab| -> Vec<u32> {
        v.strings()
            .iter()
            .map(|s| {
                let next = keys.len() as u32;
                *keys.entry(key(s)).or_insert(next)
            })
            .collect()
    };
    let g = ids(gold);
    (g, ids(system))
}

/// `sentence 3 (sent_id = x)`: how errors name a sentence (1-based, as a person counts).
fn sentence_name(tb: &Treebank, s: usize) -> String {
    match tb.sentences[s].sent_id() {
        Some(id) => format!("sentence {} (sent_id = {id})", s + 1),
        None => format!("sentence {}", s + 1),
    }
}

/// (UAS, LAS) in percent, punctuation included, LAS on the universal part of DEPREL:
/// the one figure training reports on dev, the benches and the examples print.
pub fn attachment(gold: &Treebank, system: &Treebank) -> Result<(f64, f64)> {
    let s = evaluate(gold, system, EvalOptions::default())?;
    Ok((s.uas(), s.las()))
}

/// Scores `system` against `gold`. Both must hold the same sentences with the same
/// words (FORM by FORM); the first divergence is reported as `Error::Alignment`.
/// A gold word without HEAD or DEPREL, or a system word without HEAD (`_`: the system
/// is not a parse), is an `InvalidArgument` naming the side, sentence and word.
pub fn evaluate(gold: &Treebank, system: &Treebank, opts: EvalOptions) -> Result<Scores> {
    if gold.len() != system.len() {
        return Err(Error::Alignment(format!(
            "gold has {} sentences, system has {}",
            gold.len(),
            system.len()
        )));
    }
    // System form id -> gold form id (u32::MAX: a form gold never uses).
    let form_map: Vec<u32> =
        system.vocabs.form.strings().iter().map(|s| gold.vocabs.form.get(s).unwrap_or(u32::MAX)).collect();
    let mut keys = HashMap::new();
    let gold_label = label_key_ids(&gold.vocabs.deprel, opts.full_labels, &mut keys);
    let system_label = label_key_ids(&system.vocabs.deprel, opts.full_labels, &mut keys);
    let punct = gold.vocabs.upos.get("PUNCT");
    let same = |s: &str| s.to_string();
    let (g_upos, s_upos) = key_ids(&gold.vocabs.upos, &system.vocabs.upos, same);
    let (g_xpos, s_xpos) = key_ids(&gold.vocabs.xpos, &system.vocabs.xpos, same);
    let (g_feats, s_feats) = key_ids(&gold.vocabs.feats, &system.vocabs.feats, ufeats_key);
    let (g_lemma, s_lemma) = key_ids(&gold.vocabs.lemma, &system.vocabs.lemma, same);
    let no_lemma = gold.vocabs.lemma.get("_");

    let mut sc = Scores::default();
    for (s, (gm, sm)) in gold.sentences.iter().zip(&system.sentences).enumerate() {
        let (gr, sr) = (gm.range(), sm.range());
        let g_forms = &gold.words.form[gr.clone()];
        let s_forms = &system.words.form[sr.clone()];
        let mismatch = g_forms.iter().zip(s_forms).position(|(&g, &sys)| form_map[sys as usize] != g);
        if let Some(i) = mismatch {
            return Err(Error::Alignment(format!(
                "{}: word {}: gold form {:?}, system form {:?}",
                sentence_name(gold, s),
                i + 1,
                gold.vocabs.form.str(g_forms[i]),
                system.vocabs.form.str(s_forms[i])
            )));
        }
        if g_forms.len() != s_forms.len() {
            // The shorter side ends first: name the first word it lacks.
            let i = g_forms.len().min(s_forms.len());
            let (side, form) = if g_forms.len() > i {
                ("gold", gold.vocabs.form.str(g_forms[i]))
            } else {
                ("system", system.vocabs.form.str(s_forms[i]))
            };
            return Err(Error::Alignment(format!(
                "{}: gold has {} words, system has {} (first unmatched: {side} word {} {form:?})",
                sentence_name(gold, s),
                g_forms.len(),
                s_forms.len(),
                i + 1
            )));
        }
        let lacks = |side: &str, i: usize, what: &str| {
            Error::InvalidArgument(format!(
                "{side} {}: word {} ({:?}) has no {what}",
                sentence_name(gold, s),
                i + 1,
                gold.vocabs.form.str(g_forms[i])
            ))
        };
        // O(words of the sentence)
        for (i, (g, sys)) in gr.zip(sr).enumerate() {
            let g_head = gold.words.head[g];
            let trees = !opts.tags_only; // (else the tree counts stay 0)
            if trees && g_head == NO_HEAD {
                return Err(lacks("gold", i, "HEAD"));
            }
            if trees && gold.words.deprel[g] == 0 {
                return Err(lacks("gold", i, "DEPREL"));
            }
            if trees && system.words.head[sys] == NO_HEAD {
                return Err(lacks("system", i, "HEAD (it is not a parse)"));
            }
            let head_ok = trees && g_head == system.words.head[sys];
            let label_ok = trees
                && gold_label[gold.words.deprel[g] as usize]
                    == system_label[system.words.deprel[sys] as usize];
            let is_punct = punct == Some(gold.words.upos[g]);
            sc.words += 1;
            sc.uas_correct += head_ok as usize;
            sc.las_correct += (head_ok && label_ok) as usize;
            sc.label_correct += label_ok as usize;
            let (gw, sw) = (&gold.words, &system.words);
            let upos_ok = g_upos[gw.upos[g] as usize] == s_upos[sw.upos[sys] as usize];
            let xpos_ok = g_xpos[gw.xpos[g] as usize] == s_xpos[sw.xpos[sys] as usize];
            let feats_ok = g_feats[gw.feats[g] as usize] == s_feats[sw.feats[sys] as usize];
            sc.upos_correct += upos_ok as usize;
            sc.xpos_correct += xpos_ok as usize;
            sc.ufeats_correct += feats_ok as usize;
            sc.alltags_correct += (upos_ok && xpos_ok && feats_ok) as usize;
            sc.lemma_correct += (Some(gw.lemma[g]) == no_lemma
                || g_lemma[gw.lemma[g] as usize] == s_lemma[sw.lemma[sys] as usize])
                as usize;
            // Id 0 is `_` in every vocabulary.
            for (c, (gc, sc_)) in
                [(&gw.upos, &sw.upos), (&gw.xpos, &sw.xpos), (&gw.feats, &sw.feats), (&gw.lemma, &sw.lemma)]
                    .into_iter()
                    .enumerate()
            {
                sc.gold_filled[c] += (gc[g] != 0) as usize;
                sc.system_filled[c] += (sc_[sys] != 0) as usize;
            }
            if !is_punct {
                sc.words_nopunct += 1;
                sc.uas_correct_nopunct += head_ok as usize;
                sc.las_correct_nopunct += (head_ok && label_ok) as usize;
                sc.label_correct_nopunct += label_ok as usize;
            }
        }
    }
    Ok(sc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::treebank::{ExtraKind, ExtraLine, WordStrs};

    fn w<'a>(form: &'a str, upos: &'a str, head: i32, deprel: &'a str) -> WordStrs<'a> {
        WordStrs::simple(form, upos, head, deprel)
    }

    fn one(words: &[WordStrs<'_>], sent_id: &str) -> Treebank {
        let mut tb = Treebank::new();
        tb.push_sentence(words, vec![format!("# sent_id = {sent_id}")]);
        tb
    }

    /// "The dog barks ." gold; the system is wrong on one head and one subtype.
    fn gold_and_system() -> (Treebank, Treebank) {
        let gold = one(
            &[
                w("The", "DET", 2, "det"),
                w("dog", "NOUN", 3, "nsubj:pass"),
                w("barks", "VERB", 0, "root"),
                w(".", "PUNCT", 3, "punct"),
            ],
            "s1",
        );
        let system = one(
            &[
                w("The", "DET", 3, "det"),     // head wrong, label right
                w("dog", "NOUN", 3, "nsubj"),  // head right, subtype differs
                w("barks", "VERB", 0, "root"), // right
                w(".", "PUNCT", 2, "obj"),     // both wrong (punctuation)
            ],
            "s1",
        );
        (gold, system)
    }

    #[test]
    fn tagging_scores_follow_conll2018() {
        let word = |form, lemma, upos, xpos, feats| WordStrs {
            form,
            lemma,
            upos,
            xpos,
            feats,
            head: 0,
            deprel: "root",
            deps: "_",
            misc: "_",
        };
        let gold = one(
            &[
                word("Dogs", "dog", "NOUN", "NNS", "Number=Plur"),
                word("run", "_", "VERB", "VBP", "Mood=Ind|Tense=Pres"),
                word("fast", "fast", "ADV", "RB", "_"),
            ],
            "s1",
        );
        let system = one(
            &[
                // UFeats: a non-universal feature is ignored.
                word("Dogs", "dogs", "NOUN", "NNS", "Number=Plur|Xtra=Yes"),
                // Gold lemma `_`: any lemma counts; universal features compared sorted.
                word("run", "ran", "VERB", "VB", "Tense=Pres|Mood=Ind"),
                word("fast", "fast", "ADJ", "RB", "Degree=Pos"),
            ],
            "s1",
        );
        let sc = evaluate(&gold, &system, EvalOptions::default()).unwrap();
        assert_eq!(
            (sc.upos_correct, sc.xpos_correct, sc.ufeats_correct, sc.alltags_correct, sc.lemma_correct),
            (2, 2, 2, 1, 2)
        );
        assert!((sc.alltags() - 100.0 / 3.0).abs() < 1e-12);
        // Each percentage reads its own count over all words.
        let two_thirds = 200.0 / 3.0;
        for (name, got) in
            [("UPOS", sc.upos()), ("XPOS", sc.xpos()), ("UFeats", sc.ufeats()), ("Lemmas", sc.lemmas())]
        {
            assert!((got - two_thirds).abs() < 1e-12, "{name}: {got}");
        }
    }

    /// Lemmas: equal strings count, a gold `_` counts, a differing lemma does not; the
    /// counts of right and wrong lemmas differ so that neither test can be inverted unseen.
    #[test]
    fn lemmas_count_matches_and_gold_underscores() {
        let word = |form, lemma| WordStrs { lemma, ..w(form, "X", 0, "root") };
        let gold = one(&[word("a", "a"), word("b", "b"), word("c", "c"), word("d", "_")], "s1");
        let system = one(&[word("a", "a"), word("b", "b"), word("c", "x"), word("d", "_")], "s1");
        let sc = evaluate(&gold, &system, EvalOptions::default()).unwrap();
        assert_eq!(sc.lemma_correct, 3);
    }

    #[test]
    fn hand_computed_scores_with_punct_and_subtypes() {
        let (gold, system) = gold_and_system();
        let sc = evaluate(&gold, &system, EvalOptions::default()).unwrap();
        // heads right: dog, barks = 2/4; labels (universal) right: The, dog, barks = 3/4;
        // both: dog, barks = 2/4. Without "." : 3 words, heads 2, labels 3, both 2.
        assert_eq!(
            sc,
            Scores {
                words: 4,
                words_nopunct: 3,
                uas_correct: 2,
                las_correct: 2,
                label_correct: 3,
                uas_correct_nopunct: 2,
                las_correct_nopunct: 2,
                label_correct_nopunct: 3,
                // Tags are scored in `tagging_scores_follow_conll2018`.
                ..sc
            }
        );
        assert_eq!(sc.uas(), 50.0);
        assert_eq!(sc.label_acc(), 75.0);
        assert!((sc.uas_nopunct() - 200.0 / 3.0).abs() < 1e-12);
        assert!((sc.las_nopunct() - 200.0 / 3.0).abs() < 1e-12);
        assert_eq!(sc.label_acc_nopunct(), 100.0);

        // Full labels: nsubj:pass vs nsubj is now wrong.
        let full = evaluate(&gold, &system, EvalOptions { full_labels: true, ..Default::default() }).unwrap();
        assert_eq!((full.las_correct, full.label_correct), (1, 2));
        assert_eq!((full.las_correct_nopunct, full.label_correct_nopunct), (1, 2));
    }

    #[test]
    fn perfect_system_scores_100() {
        let (gold, _) = gold_and_system();
        let sc = evaluate(&gold, &gold, EvalOptions::default()).unwrap();
        assert_eq!((sc.uas(), sc.las(), sc.label_acc(), sc.las_nopunct()), (100.0, 100.0, 100.0, 100.0));
    }

    #[test]
    fn multiword_ranges_and_empty_nodes_are_not_scored() {
        // "vámonos al mar": 1-2 vamos nos, 3-4 a el, 5 mar; an empty node 5.1.
        let words = [
            w("vamos", "VERB", 0, "root"),
            w("nos", "PRON", 1, "obj"),
            w("a", "ADP", 5, "case"),
            w("el", "DET", 5, "det"),
            w("mar", "NOUN", 1, "obl"),
        ];
        let mut gold = one(&words, "es1");
        gold.sentences[0].extra = vec![
            ExtraLine {
                before_word: 1,
                kind: ExtraKind::MultiWord { first: 1, last: 2 },
                text: "1-2\tvámonos\t_\t_\t_\t_\t_\t_\t_\t_".into(),
            },
            ExtraLine {
                before_word: 3,
                kind: ExtraKind::MultiWord { first: 3, last: 4 },
                text: "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_".into(),
            },
            ExtraLine {
                before_word: 6,
                kind: ExtraKind::EmptyNode { after: 5, minor: 1 },
                text: "5.1\tir\tir\tVERB\t_\t_\t_\t_\t1:conj\t_".into(),
            },
        ];
        let mut system = gold.clone();
        system.sentences[0].extra.clear(); // extras never matter
        system.words.head[3] = 1; // "el" attached wrongly
        let sc = evaluate(&gold, &system, EvalOptions::default()).unwrap();
        // 5 words, not 7 lines: 4 heads right.
        assert_eq!((sc.words, sc.uas_correct, sc.las_correct, sc.label_correct), (5, 4, 4, 5));
        assert_eq!(sc.uas(), 80.0);
    }

    #[test]
    fn vocabularies_differ_between_treebanks() {
        // Same strings interned in a different order in the system treebank.
        let gold = one(&[w("a", "X", 0, "root"), w("b", "X", 1, "dep:x")], "s");
        let mut system = Treebank::new();
        system.vocabs.form.intern("zzz");
        system.vocabs.deprel.intern("dep:y");
        system.vocabs.deprel.intern("other");
        system.push_sentence(&[w("a", "X", 0, "root"), w("b", "X", 1, "dep:y")], vec![]);
        let sc = evaluate(&gold, &system, EvalOptions::default()).unwrap();
        assert_eq!((sc.uas_correct, sc.las_correct), (2, 2));
        let full = evaluate(&gold, &system, EvalOptions { full_labels: true, ..Default::default() }).unwrap();
        assert_eq!(full.las_correct, 1);
    }

    #[test]
    fn missing_system_head_or_gold_deprel_is_refused() {
        let gold = one(&[w("a", "X", 2, "dep"), w("b", "X", 0, "root")], "s");
        let system = one(&[w("a", "X", 2, "dep"), w("b", "X", NO_HEAD, "root")], "s");
        let err = evaluate(&gold, &system, EvalOptions::default()).unwrap_err().to_string();
        assert!(err.starts_with("system sentence 1 (sent_id = s): word 2 (\"b\") has no HEAD"), "{err}");
        let gold = one(&[w("a", "X", 2, "_"), w("b", "X", 0, "root")], "s");
        let err = evaluate(&gold, &gold, EvalOptions::default()).unwrap_err().to_string();
        assert!(err.starts_with("gold sentence 1 (sent_id = s): word 1 (\"a\") has no DEPREL"), "{err}");
    }

    /// Words with a value in each tag column, gold and system apart: the scorer's caller
    /// shows a tag score only where both have the column.
    #[test]
    fn filled_tag_columns_are_counted_per_side() {
        let (gold, mut system) = gold_and_system();
        system.words.upos[0] = 0;
        let sc = evaluate(&gold, &system, EvalOptions::default()).unwrap();
        assert_eq!((sc.gold_filled, sc.system_filled), ([4, 0, 0, 0], [3, 0, 0, 0]));
    }

    #[test]
    fn missing_gold_head_is_refused() {
        let gold = one(&[w("a", "X", NO_HEAD, "root")], "s");
        let err = evaluate(&gold, &gold, EvalOptions::default()).unwrap_err();
        assert!(err.to_string().contains("word 1 (\"a\") has no HEAD"), "{err}");
        // Tags only: no tree needed on either side, the tree scores 0.
        let system = one(&[w("a", "Y", NO_HEAD, "_")], "s");
        let tags = EvalOptions { tags_only: true, ..Default::default() };
        let sc = evaluate(&gold, &system, tags).unwrap();
        assert_eq!((sc.words, sc.upos_correct, sc.uas_correct, sc.label_correct), (1, 0, 0, 0));
        assert_eq!(evaluate(&gold, &gold, tags).unwrap().upos_correct, 1);
    }

    #[test]
    fn form_mismatch_names_sentence_word_and_forms() {
        let mut gold = one(&[w("a", "X", 0, "root")], "first");
        gold.push_sentence(
            &[w("x", "X", 0, "root"), w("y", "X", 1, "dep")],
            vec!["# sent_id = second".into()],
        );
        let mut system = one(&[w("a", "X", 0, "root")], "first");
        system.push_sentence(&[w("x", "X", 0, "root"), w("Y", "X", 1, "dep")], vec![]);
        let err = evaluate(&gold, &system, EvalOptions::default()).unwrap_err();
        assert!(matches!(err, Error::Alignment(_)));
        assert_eq!(
            err.to_string(),
            "sentence 2 (sent_id = second): word 2: gold form \"y\", system form \"Y\""
        );
    }

    #[test]
    fn word_and_sentence_count_mismatch() {
        let gold = one(&[w("a", "X", 0, "root"), w("b", "X", 1, "dep")], "s1");
        let system = one(&[w("a", "X", 0, "root")], "s1");
        let err = evaluate(&gold, &system, EvalOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sentence 1 (sent_id = s1): gold has 2 words, system has 1 (first unmatched: gold word 2 \"b\")"
        );
        let err = evaluate(&system, &gold, EvalOptions::default()).unwrap_err();
        assert!(err.to_string().ends_with("(first unmatched: system word 2 \"b\")"), "{err}");

        let mut two = gold.clone();
        two.push_sentence(&[w("c", "X", 0, "root")], vec![]);
        let err = evaluate(&gold, &two, EvalOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "gold has 1 sentences, system has 2");
    }

    #[test]
    fn empty_treebanks_score_zero_without_dividing_by_zero() {
        let sc = evaluate(&Treebank::new(), &Treebank::new(), EvalOptions::default()).unwrap();
        assert_eq!((sc.words, sc.uas(), sc.las_nopunct()), (0, 0.0, 0.0));
    }
}
