use super::*;
use proptest::prelude::*;

fn arc(text: &str) -> Result<Template> {
    Template::parse(text, 7, Family::Arc, DEFAULT_MAX_ATOMS)
}
fn cfg(text: &str) -> Result<Template> {
    Template::parse(text, 7, Family::Config, DEFAULT_MAX_ATOMS)
}

#[test]
fn canonical_form_sorts_atoms_and_normalises_names() {
    let t = arc("dist&UPOS( m ) & dir & POS(h)").unwrap();
    assert_eq!(t.text, "upos(h) & upos(m) & dir & dist");
    assert_eq!(t.id, arc("upos(h) & upos(m) & dir & dist").unwrap().id);
    assert_eq!(t.id, hash::hash_str(&t.text));
    assert_eq!(
        arc("form(h-2) & xpos(m+1) & prefix:4(h)").unwrap().text,
        "form(h-2) & prefix:4(h) & xpos(m+1)"
    );
    assert_eq!(arc("feat:Number(m)").unwrap().text, "feat:Number(m)");
    let c = cfg("POS(stack_1 LC pw) & DEP(QUEUE_0) & dist").unwrap();
    assert_eq!(c.text, "upos(STACK_1 lc pw) & deprel(QUEUE_0) & dist");
    assert_eq!(arc("upos(h) & upos(b) & upos(m)").unwrap().text, "upos(h) & upos(m) & upos(b)");
}

#[test]
fn order_and_cost() {
    assert_eq!(arc("upos(h) & upos(s) & upos(m)").unwrap().order(), 2);
    assert_eq!(arc("upos(h) & upos(m)").unwrap().order(), 1);
    let plain = arc("upos(h) & upos(m)").unwrap().cost;
    let between = arc("upos(h) & upos(b) & upos(m)").unwrap().cost;
    assert!(between > plain * 2.0);
    assert!(cfg("upos(STACK_0 lc lc)").unwrap().cost > cfg("upos(STACK_0)").unwrap().cost);
}

#[test]
fn errors_quote_text_and_line() {
    let cases: &[(&str, Family, &str)] = &[
        ("upos(x)", Family::Arc, "bad arc address"),
        ("upos(h+3)", Family::Arc, "offsets"),
        ("colour(h)", Family::Arc, "unknown attribute"),
        ("upos(h) & upos(h)", Family::Arc, "repeated"),
        ("upos(h) & upos(m) & form(h) & form(m)", Family::Arc, "limit is 3"),
        ("upos(b) & xpos(b)", Family::Arc, "at most one in-between"),
        ("deprel(h)", Family::Arc, "only in configuration"),
        ("upos(h", Family::Arc, "closing parenthesis"),
        ("upos(h) &", Family::Arc, "empty atom"),
        ("prefix(h)", Family::Arc, "needs a length"),
        ("prefix:0(h)", Family::Arc, "1..9"),
        ("feat(h)", Family::Arc, "needs a key"),
        ("upos(STACK_0 up)", Family::Config, "unknown navigation step"),
        ("upos(TOP)", Family::Config, "STACK_i or QUEUE_i"),
        ("dir & upos(STACK_0)", Family::Config, "only in arc"),
        ("dist", Family::Config, "needs a word atom"),
        ("upos(STACK_x)", Family::Config, "bad index"),
    ];
    for (text, fam, want) in cases {
        let e = Template::parse(text, 7, *fam, 3).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(want), "{text}: {msg}");
        assert!(msg.contains(&format!("{text:?}")), "{text}: {msg}");
        assert!(msg.contains("line 7"), "{msg}");
    }
}

#[test]
fn max_atoms_is_configurable_and_edge_atoms_are_free() {
    let t = "upos(h) & upos(m) & form(h) & form(m) & dir & dist";
    assert!(Template::parse(t, 1, Family::Arc, 4).is_ok());
    assert!(Template::parse(t, 1, Family::Arc, 3).is_err());
}

#[test]
fn set_files_comments_duplicates_and_lines() {
    let text = "# header\nupos(h) & upos(m)\n\n upos(m)&upos(h)  # same\nform(h)\n";
    let set = TemplateSet::parse(text, Family::Arc, 3).unwrap();
    assert_eq!(set.len(), 2);
    assert_eq!(TemplateSet::parse(&set.to_text(), Family::Arc, 3).unwrap(), set);
    let e = TemplateSet::parse("upos(h)\n\nbogus(m)\n", Family::Arc, 3).unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
    assert_eq!(set.subset(&[1]).unwrap().templates[0].text, "form(h)");
    assert!(set.subset(&[5]).is_err());
}

#[test]
fn missing_template_file_names_the_path() {
    let e = TemplateSet::from_file("/nonexistent/t.txt", Family::Arc, 3).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/t.txt"));
}

#[test]
fn default_sets_parse_and_have_no_duplicates() {
    for name in defaults::names() {
        let set = defaults::load(name).unwrap();
        let (_, _, text) = defaults::DEFAULT_SETS.iter().find(|s| s.0 == name).unwrap();
        let lines = text.lines().filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')).count();
        assert_eq!(set.len(), lines, "{name} has duplicate templates");
        assert!(!set.is_empty());
    }
    assert_eq!(defaults::load("second_order").unwrap().order(), 2);
    assert_eq!(defaults::load("first_order").unwrap().order(), 1);
    assert!(defaults::load("nope").is_err());
}

fn arb_arc_atom() -> impl Strategy<Value = String> {
    let attr = prop::sample::select(vec![
        "form",
        "lower",
        "lemma",
        "upos",
        "xpos",
        "shape",
        "prefix:3",
        "suffix:2",
        "feat:Number",
    ]);
    let addr = prop::sample::select(vec!["h", "m", "h-1", "h+2", "m-2", "m+1", "b", "s", "g"]);
    prop_oneof![
        (attr, addr).prop_map(|(a, d)| format!("{a}({d})")),
        Just("dir".to_string()),
        Just("dist".to_string()),
    ]
}

proptest! {
    /// Parsing the canonical text gives the same template; atom order never matters.
    #[test]
    fn canonical_round_trip(atoms in prop::collection::vec(arb_arc_atom(), 1..5), seed in any::<u64>()) {
        let text = atoms.join(" & ");
        if let Ok(t) = Template::parse(&text, 1, Family::Arc, 3) {
            let again = Template::parse(&t.text, 1, Family::Arc, 3).unwrap();
            prop_assert_eq!(&again, &t);
            let mut shuffled = atoms.clone();
            let k = (seed as usize) % shuffled.len();
            shuffled.rotate_left(k);
            let t2 = Template::parse(&shuffled.join("&"), 1, Family::Arc, 3).unwrap();
            prop_assert_eq!(t2.id, t.id);
        }
    }
}

#[test]
fn file_directive_sets_the_atom_limit() {
    let four = "upos(h) & upos(m) & form(h) & form(m)";
    assert!(TemplateSet::parse(four, Family::Arc, 3).is_err());
    let set = TemplateSet::parse(&format!("#! max_atoms = 4\n{four}\n"), Family::Arc, 3).unwrap();
    assert_eq!(set.len(), 1);
    let e = TemplateSet::parse("#! colour = 4\n", Family::Arc, 3).unwrap_err().to_string();
    assert!(e.contains("unknown directive") && e.contains("line 1"), "{e}");
    assert!(TemplateSet::parse("#! max_atoms = x\n", Family::Arc, 3).is_err());
}
