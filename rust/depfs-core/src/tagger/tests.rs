use super::*;

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
