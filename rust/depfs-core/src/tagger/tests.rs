use super::*;

/// A script that would leave no lemma gives the form instead: "strip -" (from `--` →
/// `-`) on the form `-` (an empty LEMMA is not CoNLL-U: the tagger's output must read).
#[test]
fn a_script_never_makes_an_empty_lemma() {
    let s = Script::between("--", "-");
    assert_eq!(s.apply("-").as_deref(), Some(""), "the script alone leaves nothing");
    assert_eq!(apply_script(&s, &Word { form: "-", entry: None }), "-");
    assert_eq!(apply_script(&s, &Word { form: "a-", entry: None }), "a");
}

/// The lemma back-off for unknown words offers only scripts seen with two forms or more:
/// "Mar" → "March" (append "ch") is that word's own and must not make "Miramar" into
/// "Miramarch"; the known word keeps its script.
#[test]
fn the_suffix_back_off_offers_only_productive_lemma_scripts() {
    let w = |form, script| Seen { form, classes: [Some(0), None, None, Some(script)] };
    // Script 0: the identity (two forms); script 1: append "ch" (one form, seen twice).
    let words = [w("Omar", 0), w("bar", 0), w("Mar", 1), w("Mar", 1)];
    let lex = Lexicon::build(&words, 1, 2);
    assert_eq!(lex.candidates(LEMMA, None, 0, "Miramar"), &[0]);
    let mar = lex.entry("Mar").unwrap().0;
    assert_eq!(lex.candidates(LEMMA, Some(mar), 0, "Mar"), &[1]);
}
