use super::*;
use crate::templates::DEFAULT_MAX_ATOMS;

/// The output's lemmas, made in reused buffers ([`LemmaBuf`]), are those [`apply_script`]
/// makes afresh: scripts that keep or lower-case the form, forms known only lower-cased
/// (the entry's flag), non-ASCII forms (whose lower-casing may change their length), a
/// script that does not fit and one that would leave nothing; in an order where each
/// word follows a longer one (a buffer left with the last lemma's tail shows).
#[test]
fn lemmas_made_in_buffers_are_those_made_afresh() {
    let scripts = [
        Script::between("Walked", "walk"),
        Script::between("walked", "walk"),
        Script::between("ÉTÉS", "été"),
        Script::between("İstanbul", "istanbul"),
        Script::between("--", "-"),
        Script::between("went", "go"),
        Script::between("a", "a"),
    ];
    let forms = ["CONDEMNED", "Walked", "walked", "ÉTÉS", "été", "İSTANBUL", "-", "a-", "went", "x", "Σ"];
    let entry = FormEntry::default();
    let mut buf = LemmaBuf::default();
    let mut made = 0;
    for s in &scripts {
        for form in forms {
            for e in [None, Some((&entry, false)), Some((&entry, true))] {
                let w = Word { form, entry: e, fid: None };
                let want = apply_script(s, &w);
                assert_eq!(buf.apply(s, &w), want, "script {:?} on {form:?}, entry {:?}", s, e.map(|e| e.1));
                made += usize::from(want != form);
            }
        }
    }
    assert!(made > 20, "the scripts changed only {made} forms");
}

/// A script that would leave no lemma gives the form instead: "strip -" (from `--` →
/// `-`) on the form `-` (an empty LEMMA is not CoNLL-U: the tagger's output must read).
#[test]
fn a_script_never_makes_an_empty_lemma() {
    let s = Script::between("--", "-");
    assert_eq!(s.apply("-").as_deref(), Some(""), "the script alone leaves nothing");
    assert_eq!(apply_script(&s, &Word { form: "-", entry: None, fid: None }), "-");
    assert_eq!(apply_script(&s, &Word { form: "a-", entry: None, fid: None }), "a");
}

/// Line-local hashing: every class of a feature lies in one line of 64 rows (one cache
/// line of 8-bit weights), spread over it, and the line depends on the feature; without
/// it a class's row is `combine(f, salt)` as in taggers saved before.
#[test]
fn line_hashing_keeps_the_classes_of_a_feature_in_one_line() {
    use std::collections::HashSet;
    let set = TemplateSet::parse("form(i)", Family::Token, DEFAULT_MAX_ATOMS).unwrap();
    let classes: Vec<String> = (0..40).map(|k| format!("C{k}")).collect();
    let lined = ColumnModel::new(UPOS, set, classes.clone(), (), true, &mut Slots::default()).unwrap();
    let plain = ColumnModel { lines: false, ..lined.clone() };
    for f in [1u64, 0xdead_beef, u64::MAX, 12_345 << 20, combine(3, 4)] {
        let lines: HashSet<u64> = (0..40).map(|c| lined.key(f, c) >> 6).collect();
        assert_eq!(lines.len(), 1, "one line for every class of feature {f:#x}");
        let rows: HashSet<u64> = (0..40).map(|c| lined.key(f, c) & 63).collect();
        assert!(rows.len() > 20, "40 classes spread over the line: {} rows", rows.len());
        for (c, k) in classes.iter().enumerate() {
            assert_eq!(plain.key(f, c as u32), combine(f, salt(UPOS, k)));
        }
    }
    let lines: HashSet<u64> = (0..200u64).map(|f| lined.key(combine(f, 7), 0) >> 6).collect();
    assert!(lines.len() > 190, "features take different lines: {}", lines.len());
    // Up to 64 classes, one row each; beyond, hashed rows of the one line.
    let f = combine(5, 6);
    assert_eq!((0..40).map(|c| lined.key(f, c) & 63).collect::<HashSet<_>>().len(), 40);
    let set = TemplateSet::parse("form(i)", Family::Token, DEFAULT_MAX_ATOMS).unwrap();
    let many: Vec<String> = (0..100).map(|k| format!("C{k}")).collect();
    let wide = ColumnModel::new(UPOS, set, many, (), true, &mut Slots::default()).unwrap();
    assert_eq!((0..100).map(|c| wide.key(f, c) >> 6).collect::<HashSet<_>>().len(), 1);
    let rows = (0..100).map(|c| wide.key(f, c) & 63).collect::<HashSet<_>>().len();
    assert!(rows > 40, "100 classes spread over the line: {rows} rows");
}

/// The lemma back-off for unknown words offers only scripts seen with two forms or more:
/// "Mar" → "March" (append "ch") is that word's own and must not make "Miramar" into
/// "Miramarch"; the known word keeps its script.
#[test]
fn the_suffix_back_off_offers_only_productive_lemma_scripts() {
    let w = |form, script| Seen { form, classes: [Some(0), None, None, Some(script)] };
    // Script 0: the identity (two forms); script 1: append "ch" (one form, seen twice).
    let words = [w("Omar", 0), w("bar", 0), w("Mar", 1), w("Mar", 1)];
    let lex = Lexicon::build(&words, 1, 2, 2);
    assert_eq!(lex.candidates(LEMMA, None, 0, "Miramar"), &[0]);
    let mar = lex.entry("Mar").unwrap().0;
    assert_eq!(lex.candidates(LEMMA, Some(mar), 0, "Mar"), &[1]);
}

/// A prefix-margin trainer of four templates per column on a toy treebank (UPOS: DET,
/// NOUN, VERB, no form seen twice: every tag a candidate), started on its first sentence.
fn prefix_trainer(perceptron: bool, full: f32) -> Result<(TaggerTrainer, Scratch)> {
    // Word 1 heads the sentence, the others depend on it.
    let row = |i: usize, form: &str, upos: &str| {
        format!("{i}\t{form}\t{form}\t{upos}\t{upos}\t_\t{}\tdep\t_\t_\n", usize::from(i > 1))
    };
    let text = [
        row(1, "the", "DET") + &row(2, "dog", "NOUN"),
        row(1, "a", "DET") + &row(2, "cat", "NOUN") + &row(3, "runs", "VERB"),
    ]
    .join("\n")
        + "\n";
    let tb = crate::io::conllu::read_str(&text, &Default::default())?;
    let set =
        TemplateSet::parse("form(i)\nsuffix:2(i)\nform(i-1)\nform(i+1)", Family::Token, DEFAULT_MAX_ATOMS)?;
    let opts = TaggerOptions {
        prefix_margin: Some(1.0),
        prefix_perceptron: perceptron,
        prefix_full: full,
        ..TaggerOptions::default()
    };
    let trainer = TaggerTrainer::new(&tb, std::array::from_fn(|_| set.clone()), &opts)?;
    let mut sc = Scratch::default();
    trainer.start(0, &mut sc);
    Ok((trainer, sc))
}

/// Each template's weights of the UPOS classes 0..3 for word 1 of the started sentence.
fn upos_rows(cm: &ColumnModel<Weights>, sc: &Scratch) -> Vec<[f32; 3]> {
    (0..cm.feats.len())
        .map(|t| {
            let f = cm.feats.feature(t, &sc.hist, 1);
            std::array::from_fn(|c| cm.weights.get(t, cm.key(f, c as u32)))
        })
        .collect()
}

const STEP1: PrefixStep = PrefixStep { margin: 1.0, all_prefixes: false, perceptron: true, full: 0.0 };

/// Perceptron prefix steps (Algorithm 2 with averaged perceptron steps): from zero
/// weights every prefix violates, so template j moves by its count of violating
/// prefixes, T − j (+ to the gold, − to the loss class, the first rival on ties),
/// unscaled by AdaGrad; then the first prefix leads and nothing moves. The trainer
/// refuses a negative full-sum step and stagewise training with perceptron steps.
#[test]
fn a_perceptron_prefix_step_moves_template_j_by_its_count_of_violating_prefixes() {
    let (mut trainer, sc) = prefix_trainer(true, 0.0).unwrap();
    let mut ps = PrefixScratch::default();
    let cm = &mut trainer.core.columns[0];
    assert_eq!((cm.column, cm.classes.len()), (UPOS, 3));
    let n = cm.feats.len();
    let pred = cm.learn_prefix(&sc.hist, 1, &[0, 1, 2], 0, STEP1, &mut ps);
    assert_eq!(pred, 0, "no prefix leads: the full sum's first best");
    let after = upos_rows(cm, &sc);
    for (j, row) in after.iter().enumerate() {
        let k = (n - j) as f32;
        assert_eq!(*row, [k, -k, 0.0], "template {j}");
    }
    cm.learn_prefix(&sc.hist, 1, &[0, 1, 2], 0, STEP1, &mut ps);
    assert_eq!(upos_rows(cm, &sc), after, "the first prefix leads by 2T: no step");
    assert!(prefix_trainer(true, -1.0).is_err());
    assert!(prefix_trainer(true, f32::NAN).is_err());
    let (mut stagewise, _) = prefix_trainer(true, 0.0).unwrap();
    assert!(stagewise.set_stage(Some(0)).is_err(), "stagewise takes AdaGrad steps");
    let (mut stagewise, _) = prefix_trainer(false, 0.0).unwrap();
    stagewise.set_stage(Some(0)).unwrap();
}

/// The full sum: when the first prefix already leads (Algorithm 2 learns nothing) but
/// the sum of all templates picks another class, every template takes the full model's
/// step of the given size (+ gold, − the sum's pick); once the sum is right it is left
/// alone.
#[test]
fn the_tagger_s_full_sum_takes_the_full_models_update_when_a_prefix_settles_but_the_sum_is_wrong() {
    let (mut trainer, sc) = prefix_trainer(true, 2.0).unwrap();
    let mut ps = PrefixScratch::default();
    let cm = &mut trainer.core.columns[0];
    let feats: Vec<u64> = (0..cm.feats.len()).map(|t| cm.feats.feature(t, &sc.hist, 1)).collect();
    // Template 0 puts the gold (0) 2 ahead; each later one adds 3 to class 2.
    cm.weights.update(0, cm.key(feats[0], 0), 0, 2.0);
    for (t, &f) in feats.iter().enumerate().skip(1) {
        cm.weights.update(t, cm.key(f, 2), 0, 3.0);
    }
    let before = upos_rows(cm, &sc);
    let step = PrefixStep { full: 2.0, ..STEP1 };
    assert_eq!(cm.learn_prefix(&sc.hist, 1, &[0, 1, 2], 0, STEP1, &mut ps), 0);
    assert_eq!(upos_rows(cm, &sc), before, "without the full sum nothing moves");
    let pred = cm.learn_prefix(&sc.hist, 1, &[0, 1, 2], 0, step, &mut ps);
    assert_eq!(pred, 0, "the rule stops at the first prefix");
    for (t, (a, b)) in upos_rows(cm, &sc).iter().zip(&before).enumerate() {
        assert_eq!(*a, [b[0] + 2.0, b[1], b[2] - 2.0], "template {t}");
    }
    for (t, &f) in feats.iter().enumerate() {
        cm.weights.update(t, cm.key(f, 0), 0, 3.0);
    }
    let right = upos_rows(cm, &sc);
    cm.learn_prefix(&sc.hist, 1, &[0, 1, 2], 0, step, &mut ps);
    assert_eq!(upos_rows(cm, &sc), right, "a right sum is left alone");
}

/// A trainer over `text` (CoNLL-U rows) with `form(i)` templates for every column.
fn rules_trainer(text: &str, opts: TaggerOptions) -> Result<TaggerTrainer> {
    let tb = crate::io::conllu::read_str(text, &Default::default())?;
    let set = TemplateSet::parse("form(i)\nsuffix:2(i)", Family::Token, DEFAULT_MAX_ATOMS)?;
    TaggerTrainer::new(&tb, std::array::from_fn(|_| set.clone()), &opts)
}

/// One sentence per word: `(form, lemma, upos, xpos, feats)`.
fn one_word_sentences(words: &[(&str, &str, &str, &str, &str)]) -> String {
    words.iter().map(|(f, l, u, x, ft)| format!("1\t{f}\t{l}\t{u}\t{x}\t{ft}\t0\troot\t_\t_\n\n")).collect()
}

/// FEATS by XPOS: a verb form seen twice, both times plural, is still offered the
/// singular when the predicted XPOS (VBD) takes both for many forms; a rare FEATS value of
/// the pair (seen with one form: a typo) is not offered; without the rule the dictionary's
/// entry alone stands, and a word's other columns are untouched.
#[test]
fn feats_candidates_widen_by_the_productive_values_of_the_predicted_xpos() {
    const SG: &str = "Number=Sing|Tense=Past";
    const PL: &str = "Number=Plur|Tense=Past";
    let mut words = vec![("founded", "found", "VERB", "VBD", PL), ("founded", "found", "VERB", "VBD", PL)];
    let forms: Vec<String> = (0..6).map(|k| format!("walk{k}ed")).collect();
    for f in &forms {
        words.push((f, "walk", "VERB", "VBD", SG));
        words.push((f, "walk", "VERB", "VBD", PL));
    }
    words.push(("tipyed", "type", "VERB", "VBD", "Number=Sing|Tense=Past|Typo=Yes"));
    let text = one_word_sentences(&words);
    let opts = |k| TaggerOptions { feats_by_xpos: k, ..TaggerOptions::default() };
    let widened = rules_trainer(&text, opts(Some(3))).unwrap();
    let plain = rules_trainer(&text, opts(None)).unwrap();
    let core = &widened.core;
    let class = |col: usize, v: &str| {
        let cm = core.columns.iter().find(|cm| cm.column == col).unwrap();
        cm.classes.iter().position(|c| c == v).unwrap() as u32
    };
    let (verb, vbd) = (class(UPOS, "VERB"), class(XPOS, "VBD"));
    let (sg, pl) = (class(FEATS, SG), class(FEATS, PL));
    let m = core.columns.iter().position(|cm| cm.column == FEATS).unwrap();
    let w = Word { form: "founded", entry: core.lexicon.entry("founded"), fid: None };
    let mut out = Vec::new();
    core.candidates(m, &w, verb, Some(vbd), &mut out);
    assert_eq!(out, [pl, sg], "the dictionary's plural, then the productive singular");
    plain.core.candidates(m, &w, verb, Some(vbd), &mut out);
    assert_eq!(out, [pl], "no rule: the dictionary's alone");
    core.candidates(m, &w, verb, None, &mut out);
    assert_eq!(out, [pl], "no XPOS predicted: no rule");
    // An unknown form backs off to every FEATS of VERB (the typo's too): nothing to add.
    let w = Word { form: "jumped", entry: None, fid: None };
    core.candidates(m, &w, verb, Some(vbd), &mut out);
    assert_eq!(out.len(), 3);
    let rule = core.rules.feats.as_ref().unwrap();
    let typo = class(FEATS, "Number=Sing|Tense=Past|Typo=Yes");
    assert!(!rule.table.iter().flatten().any(|&c| c == typo), "one form: not productive");
}

/// Known lemmas: a form without its (form, UPOS) entry keeps the back-off scripts that
/// make a lemma known with its UPOS ("condemned" → "condemn", not "condemne"), from the
/// longest suffix level that has one; with none, the back-off's own; in training a lemma
/// known only through the word itself does not count.
#[test]
fn the_lemma_back_off_keeps_scripts_that_make_a_known_lemma() {
    // Two scripts of the suffix "ned": strip "d" (zoned, toned), strip "ed" (rained, gained).
    let words = [
        ("zoned", "zone", "VERB", "VBD", "_"),
        ("toned", "tone", "VERB", "VBD", "_"),
        ("rained", "rain", "VERB", "VBD", "_"),
        ("gained", "gain", "VERB", "VBD", "_"),
        ("condemns", "condemn", "VERB", "VBZ", "_"),
    ];
    let text = one_word_sentences(&words);
    let opts = |known_lemmas| TaggerOptions { known_lemmas, ..TaggerOptions::default() };
    let mut trainer = rules_trainer(&text, opts(true)).unwrap();
    let plain = rules_trainer(&text, opts(false)).unwrap();
    let lemma_of = |core: &Core<Weights>, form: &'static str| {
        let m = core.columns.iter().position(|cm| cm.column == LEMMA).unwrap();
        let w = Word { form, entry: core.lexicon.entry(form), fid: None };
        let mut out = Vec::new();
        core.candidates(m, &w, 0, None, &mut out);
        let mut l: Vec<String> =
            out.iter().map(|&s| apply_script(&core.columns[m].scripts[s as usize], &w)).collect();
        l.sort();
        l
    };
    assert_eq!(lemma_of(&plain.core, "condemned"), ["condemn", "condemne"], "both scripts fit");
    assert_eq!(lemma_of(&trainer.core, "condemned"), ["condemn"]);
    assert_eq!(lemma_of(&trainer.core, "yawned"), ["yawn", "yawne"], "no known lemma: both");
    // "rain" is known only through "rained" itself: not for training on "rained", at
    // tagging time it is; "gain", seen twice with "gained", is known for both.
    let known =
        KnownLemmas::build([(0, "rained", "rain"), (0, "gained", "gain"), (0, "Gained", "gain")].into_iter());
    assert!(!known.known(0, "rain", "rained", true) && known.known(0, "rain", "rained", false));
    assert!(known.known(0, "gain", "gained", true) && known.known(0, "rain", "gained", true));
    assert!(!known.known(1, "rain", "x", false), "another UPOS");
    trainer.core.learning = false;
    assert_eq!(lemma_of(&trainer.core, "condemned"), ["condemn"]);
}

/// A tagger with rules is a model variant of its own: saved and loaded, it keeps them and
/// tags the same; one without is written as before (no rules on loading).
#[test]
fn a_tagger_with_rules_keeps_them_through_its_model_file() {
    let words = [
        ("founded", "found", "VERB", "VBD", "Number=Plur"),
        ("founded", "found", "VERB", "VBD", "Number=Plur"),
        ("walked", "walk", "VERB", "VBD", "Number=Sing"),
        ("condemns", "condemn", "VERB", "VBZ", "Number=Sing"),
    ];
    let text = one_word_sentences(&words);
    let dir = tempfile::tempdir().unwrap();
    for (k, opts) in [
        TaggerOptions { feats_by_xpos: Some(1), known_lemmas: true, ..TaggerOptions::default() },
        TaggerOptions::default(),
    ]
    .into_iter()
    .enumerate()
    {
        let mut trainer = rules_trainer(&text, opts.clone()).unwrap();
        trainer.epoch();
        let tagger = trainer.model();
        let path = dir.path().join(format!("t{k}.depfs"));
        tagger.save(&path, "").unwrap();
        let file = load_model(&path).unwrap();
        assert_eq!(matches!(file.model, Model::TaggerRules(_)), k == 0);
        let again = Tagger::load(&path).unwrap();
        assert_eq!(again.core.rules, tagger.core.rules);
        assert_eq!(again.core.rules == TagRules::default(), k == 1);
        let tb = crate::io::conllu::read_str(&text, &Default::default()).unwrap();
        let cols = |t: &Tagger| {
            let out = t.tag(&tb, 1).unwrap();
            let w = &out.words;
            (w.upos.clone(), w.xpos.clone(), w.feats.clone(), w.lemma.clone())
        };
        assert_eq!(cols(&again), cols(&tagger));
    }
}

/// XPOS siblings: VB and VBP share many forms, so a verb seen twice as VB is offered VBP
/// too; VBD shares one form with VB (too few) and is not; a word the dictionary does not
/// know already weighs every XPOS of its UPOS.
#[test]
fn xpos_candidates_widen_by_values_that_share_forms() {
    let mut words = vec![("face", "face", "VERB", "VB", "_"), ("face", "face", "VERB", "VB", "_")];
    let forms: Vec<String> = (0..6).map(|k| format!("walk{k}")).collect();
    for f in &forms {
        words.push((f, f, "VERB", "VB", "_"));
        words.push((f, f, "VERB", "VBP", "_"));
    }
    words.push(("walk0", "walk0", "VERB", "VBD", "_"));
    let text = one_word_sentences(&words);
    let opts = |k| TaggerOptions { xpos_siblings: k, ..TaggerOptions::default() };
    let widened = rules_trainer(&text, opts(Some(3))).unwrap();
    let plain = rules_trainer(&text, opts(None)).unwrap();
    let core = &widened.core;
    let m = core.columns.iter().position(|cm| cm.column == XPOS).unwrap();
    let class = |v: &str| core.columns[m].classes.iter().position(|c| c == v).unwrap() as u32;
    let (vb, vbp) = (class("VB"), class("VBP"));
    let w = Word { form: "face", entry: core.lexicon.entry("face"), fid: None };
    let mut out = Vec::new();
    core.candidates(m, &w, 0, None, &mut out);
    assert_eq!(out, [vb, vbp]);
    plain.core.candidates(m, &w, 0, None, &mut out);
    assert_eq!(out, [vb], "no rule: the dictionary's alone");
    let w = Word { form: "walks", entry: None, fid: None };
    core.candidates(m, &w, 0, None, &mut out);
    assert_eq!(out.len(), 3, "unknown: every XPOS of VERB");
    assert!(core.rules.xpos.as_ref().unwrap().table.iter().flatten().all(|&x| x != class("VBD")));
}

/// A backward pass that predicts XPOS (`backward_xpos`): its classes are XPOS's; a known
/// form's candidates are the XPOS values of its UPOS tags, an unknown form's every XPOS
/// value; trained on the gold XPOS (jackknifed, and the stored pass) it tells VB from VBP,
/// one UPOS, by the word to the left. A treebank without XPOS keeps a UPOS pass.
#[test]
fn a_backward_pass_can_predict_xpos() {
    let row = |i: usize, f: &str, u: &str, x: &str| {
        format!("{i}\t{f}\t{f}\t{u}\t{x}\t_\t{}\tdep\t_\t_\n", usize::from(i > 1))
    };
    let kinds = [
        ("to", "PART", "TO", "VERB", "VB"),
        ("they", "PRON", "PRP", "VERB", "VBP"),
        ("the", "DET", "DT", "NOUN", "NN"),
    ];
    // 4 folds of 3 sentences: each fold holds one sentence of each kind.
    let text: String = (0..12)
        .map(|s| {
            let (w, u, x, ru, rx) = kinds[s % 3];
            row(1, w, u, x) + &row(2, "run", ru, rx) + "\n"
        })
        .collect();
    let parse = |t: &str| TemplateSet::parse(t, Family::Token, DEFAULT_MAX_ATOMS).unwrap();
    let train = |text: &str| {
        let tb = crate::io::conllu::read_str(text, &Default::default()).unwrap();
        let opts = TaggerOptions {
            backward: Some(parse("form(i)\nlower(i-1)\nbupos(i+1)")),
            backward_xpos: true,
            ..TaggerOptions::default()
        };
        TaggerTrainer::new(&tb, std::array::from_fn(|_| parse("form(i)\nbupos(i)")), &opts).unwrap()
    };
    let trainer = train(&text);
    let core = &trainer.core;
    let b = core.backward.as_ref().unwrap();
    let xpos = core.columns.iter().find(|cm| cm.column == XPOS).unwrap();
    assert_eq!((b.column, &b.classes), (XPOS, &xpos.classes));
    let class = |v: &str| xpos.classes.iter().position(|c| c == v).unwrap() as u32;
    let mut out = Vec::new();
    backward::candidates(b, &core.lexicon, core.lexicon.entry("run").map(|e| e.0), &mut out);
    let mut want = vec![class("VB"), class("VBP"), class("NN")];
    want.sort_unstable();
    assert_eq!(out, want, "the XPOS values of VERB and NOUN seen with \"run\"");
    backward::candidates(b, &core.lexicon, None, &mut out);
    assert_eq!(out, (0..xpos.classes.len() as u32).collect::<Vec<_>>(), "unknown: every XPOS");
    let mut sc = Scratch::default();
    for s in 0..12 {
        let gold = b.salts[class(kinds[s % 3].4) as usize];
        let start = trainer.tb.sentences[s].start as usize;
        assert_eq!(trainer.back[start + 1], gold, "jackknifed tag of \"run\" in sentence {s}");
        trainer.start(s, &mut sc);
        let entry =
            |i: usize| core.case.upos_entry(core.lexicon.entry(if i == 1 { kinds[s % 3].0 } else { "run" }));
        backward::run(b, &core.lexicon, 2, entry, &mut sc);
        assert_eq!(sc.hist.back_at(2), gold, "the stored pass on sentence {s}");
    }
    let no_xpos: String = text
        .lines()
        .map(|l| {
            let mut c: Vec<&str> = l.split('\t').collect();
            if c.len() == 10 {
                c[4] = "_";
            }
            c.join("\t") + "\n"
        })
        .collect();
    let upos_pass = train(&no_xpos);
    let b = upos_pass.core.backward.as_ref().unwrap();
    assert_eq!((b.column, &b.classes), (UPOS, &upos_pass.core.columns[0].classes));
}

/// The candidate lists a tagging keeps per form ([`FormCache`]) are those the dictionary
/// and the rules give each word: a list kept for one UPOS (and, for FEATS under the FEATS
/// rule, one XPOS) is never served for another. Words of one form alternate between
/// tags, each met twice (made or replaced, then kept); every column's kept list must
/// equal the list made afresh.
#[test]
fn candidates_kept_per_form_are_those_made_afresh() {
    const SG: &str = "Number=Sing|Tense=Past";
    const PL: &str = "Number=Plur|Tense=Past";
    const PART: &str = "Tense=Past|VerbForm=Part";
    let mut words = vec![
        ("founded", "found", "VERB", "VBD", PL),
        ("founded", "found", "VERB", "VBD", PL),
        ("Founded", "found", "ADJ", "JJ", "Degree=Pos"),
        ("Founded", "found", "ADJ", "JJ", "Degree=Pos"),
    ];
    let forms: Vec<String> = (0..6).map(|k| format!("walk{k}ed")).collect();
    for f in &forms {
        words.push((f, "walk", "VERB", "VBD", SG));
        words.push((f, "walk", "VERB", "VBD", PL));
        words.push((f, "walk", "VERB", "VBN", PART));
    }
    let text = one_word_sentences(&words);
    let opts = TaggerOptions {
        feats_by_xpos: Some(3),
        xpos_siblings: Some(3),
        known_lemmas: true,
        cased: true,
        ..TaggerOptions::default()
    };
    let trainer = rules_trainer(&text, opts).unwrap();
    let core = &trainer.core;
    let class = |col: usize, v: &str| {
        let cm = core.columns.iter().find(|cm| cm.column == col).unwrap();
        cm.classes.iter().position(|c| c == v).unwrap() as u32
    };
    let (verb, adj) = (class(UPOS, "VERB"), class(UPOS, "ADJ"));
    let (vbd, vbn) = (class(XPOS, "VBD"), class(XPOS, "VBN"));
    let probes = ["founded", "Founded", "FOUNDED", "walk3ed", "jumped", "Jumped"];
    let tags = [(verb, vbd), (verb, vbn), (adj, vbd), (verb, vbd), (adj, vbn), (verb, vbn)];
    let mut cache = FormCache::for_forms(probes.len());
    let (mut buf, mut fresh) = (Vec::new(), Vec::new());
    let mut differ = 0;
    for round in 0..3 {
        for (fid, form) in probes.iter().enumerate() {
            let (upos, xpos) = tags[(fid + round) % tags.len()];
            let w = Word { form, entry: core.lexicon.entry(form), fid: Some(fid as u32) };
            for (m, cm) in core.columns.iter().enumerate() {
                let w = if cm.column == LEMMA { core.lemma_word(&w, upos) } else { w };
                let want = core.candidate_list(m, &w, upos, Some(xpos), &mut fresh).to_vec();
                let key = core.cache_key(cm.column, upos, Some(xpos));
                // Made (or replaced), then kept.
                for _ in 0..2 {
                    let kept = cache
                        .get(fid as u32, m, key, || core.candidate_list(m, &w, upos, Some(xpos), &mut buf));
                    assert_eq!(kept, &want[..], "{form} {} round {round}", COLUMN_NAMES[cm.column]);
                }
            }
        }
        for m in 0..core.columns.len() {
            let w = Word { form: "founded", entry: core.lexicon.entry("founded"), fid: None };
            let a = core.candidate_list(m, &w, verb, Some(vbd), &mut buf).to_vec();
            differ += usize::from(a != core.candidate_list(m, &w, verb, Some(vbn), &mut fresh));
        }
    }
    assert!(differ > 0, "the FEATS of \"founded\" depend on its XPOS: the keys are put to the test");
}
