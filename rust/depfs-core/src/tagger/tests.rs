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
