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
    assert!(e.starts_with("directive \"#! colour = 4\" (line 1): unknown directive"), "{e}");
    // A template's error still names a template.
    let e = TemplateSet::parse("#! max_atoms = 2\nupos(h) & upos(m) & form(m)", Family::Arc, 3).unwrap_err();
    assert!(e.to_string().starts_with("template \"upos(h) & upos(m) & form(m)\" (line 2)"), "{e}");
    assert!(TemplateSet::parse("#! max_atoms = x\n", Family::Arc, 3).is_err());
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn atom_pairs_of_known_templates() {
    let c = cfg("upos(STACK_1 lc pw) & form(QUEUE_0)").unwrap();
    assert_eq!(c.atom_pairs(), owned(&[("STACK_1 lc pw", "upos"), ("QUEUE_0", "form")]));
    let c = cfg("DEP(stack_0) & lval(QUEUE_0 LC) & dist").unwrap();
    assert_eq!(c.atom_pairs(), owned(&[("STACK_0", "deprel"), ("QUEUE_0 lc", "lval"), ("", "dist")]));
    let a = arc("dist & upos(m) & dir & upos(h)").unwrap();
    assert_eq!(a.atom_pairs(), owned(&[("h", "upos"), ("m", "upos"), ("", "dir"), ("", "dist")]));
    let a = arc("feat:Case(m-1) & prefix:4(h+2) & xpos(b)").unwrap();
    assert_eq!(a.atom_pairs(), owned(&[("h+2", "prefix:4"), ("m-1", "feat:Case"), ("b", "xpos")]));
    let a = arc("upos(g) & upos(s) & sdist").unwrap();
    assert_eq!(a.atom_pairs(), owned(&[("s", "upos"), ("g", "upos"), ("", "sdist")]));
    assert_eq!(a.n_word_atoms(), 2);
}

/// parse(render(atoms)) == template for every template of every shipped set.
#[test]
fn every_shipped_template_round_trips_through_its_atoms() {
    let mut n = 0;
    for &(name, family, _) in defaults::DEFAULT_SETS {
        for t in defaults::load(name).unwrap().templates {
            let pairs = t.atom_pairs();
            let rendered: Vec<String> =
                pairs.iter().map(|(a, b)| syntax::render_atom(a, b).unwrap()).collect();
            assert_eq!(rendered.join(" & "), t.text, "{name}");
            let back = Template::from_atoms(&pairs, family, MAX_ATOMS_BOUND).unwrap();
            assert_eq!(back, t, "{name}");
            let mut reversed = pairs.clone();
            reversed.reverse();
            assert_eq!(Template::from_atoms(&reversed, family, MAX_ATOMS_BOUND).unwrap().id, t.id);
            n += 1;
        }
    }
    assert!(n > 300, "{n}");
}

#[test]
fn from_atoms_builds_new_templates_and_rejects_bad_pairs() {
    let t =
        Template::from_atoms(&[("QUEUE_0 lc rs", "LEX"), ("STACK_2 h", "rval")], Family::Config, 3).unwrap();
    assert_eq!(t.text, "rval(STACK_2 h) & form(QUEUE_0 lc rs)");
    assert_eq!(t.id, hash::hash_str(&t.text));
    // (pairs, family, quoted text, message)
    type Case = (&'static [(&'static str, &'static str)], Family, &'static str, &'static str);
    let cases: &[Case] = &[
        (&[("h", "colour")], Family::Arc, "colour(h)", "unknown attribute"),
        (&[("h", "upos"), ("x", "upos")], Family::Arc, "upos(h) & upos(x)", "bad arc address"),
        (&[("", "upos")], Family::Arc, "upos", "expected attr(address)"),
        (&[("h", "dir")], Family::Arc, "dir(h)", "unknown attribute"),
        (&[("h) & upos(m", "upos")], Family::Arc, "upos(h) & upos(m)", "may not contain"),
        (&[("h", "")], Family::Arc, "(h)", "empty attribute"),
        (&[("h", "upos"), ("h", "UPOS")], Family::Arc, "upos(h) & UPOS(h)", "repeated"),
        (&[("STACK_0", "upos"), ("", "dir")], Family::Config, "upos(STACK_0) & dir", "only in arc"),
    ];
    for (pairs, family, text, want) in cases {
        let msg = Template::from_atoms(pairs, *family, 3).unwrap_err().to_string();
        assert!(msg.contains(want), "{pairs:?}: {msg}");
        assert!(msg.contains(&format!("{text:?}")), "{pairs:?}: {msg}");
    }
    let none: &[(&str, &str)] = &[];
    assert!(Template::from_atoms(none, Family::Arc, 3).unwrap_err().to_string().contains("no atoms"));
    let four = [("h", "upos"), ("m", "upos"), ("h", "form"), ("m", "form")];
    assert!(Template::from_atoms(&four, Family::Arc, 3).is_err());
    assert_eq!(Template::from_atoms(&four, Family::Arc, 4).unwrap().n_word_atoms(), 4);
}

#[test]
fn default_set_text_and_family() {
    let (family, text) = defaults::text("nilsson_nugues").unwrap();
    assert_eq!(family, Family::Config);
    assert!(text.contains("POS(QUEUE_0)"));
    assert!(defaults::text("nope").unwrap_err().to_string().contains("first_order"));
}

#[test]
fn non_ascii_addresses_are_errors_not_panics() {
    // Found by tests/mutated_inputs.rs: a multi-byte first character was split mid-byte.
    for text in ["upos(\u{FFFD}h)", "upos(é)", "form(m\u{1F600})"] {
        assert!(TemplateSet::parse(text, Family::Arc, 3).is_err(), "{text}");
    }
}

#[test]
fn offsets_at_the_ends_of_i8_are_errors_not_overflows() {
    // `(-128i8).abs()` overflows (a panic in a debug build) while checking the range.
    let err = arc("upos(h-128)").unwrap_err().to_string();
    assert!(err.contains("bad arc address"), "{err}");
    let err = Template::parse("form(i-128)", 1, Family::Token, 3).unwrap_err().to_string();
    assert!(err.contains("bad token address"), "{err}");
    assert!(arc("upos(m+127)").is_err());
}

/// `cluster` (the whole path) and `cluster:K` (K bits, 1..32) are token attributes of the
/// form, readable to the right, and configuration attributes of any node; arc templates
/// refuse them.
#[test]
fn cluster_attributes_are_token_and_config_with_bits_in_range() {
    let tok = |t: &str| Template::parse(t, 1, Family::Token, DEFAULT_MAX_ATOMS);
    let t = tok("CLUSTER:6(i+1) & cluster(i)").unwrap();
    assert_eq!(t.text, "cluster(i) & cluster:6(i+1)");
    assert_eq!(
        t.atoms,
        vec![
            Atom::TokenWord { attr: Attr::Cluster(0), offset: 0 },
            Atom::TokenWord { attr: Attr::Cluster(6), offset: 1 }
        ]
    );
    assert!(tok("cluster:32(i)").is_ok());
    let c = cfg("upos(QUEUE_0) & CLUSTER:4(stack_0 h) & cluster(QUEUE_1)").unwrap();
    assert_eq!(c.text, "cluster:4(STACK_0 h) & upos(QUEUE_0) & cluster(QUEUE_1)");
    assert!(c.atoms.contains(&Atom::ConfigWord {
        attr: NodeAttr::Word(Attr::Cluster(4)),
        addr: ConfigAddr { base: Base::Stack(0), steps: vec![Step::H] }
    }));
    assert!(c.atoms.contains(&Atom::ConfigWord {
        attr: NodeAttr::Word(Attr::Cluster(0)),
        addr: ConfigAddr { base: Base::Queue(1), steps: vec![] }
    }));
    for bad in ["cluster:0(i)", "cluster:33(i)", "cluster:x(i)", "cluster:(i)"] {
        let e = tok(bad).unwrap_err().to_string();
        assert!(e.contains("bits of cluster must be 1..32"), "{bad}: {e}");
    }
    let e = cfg("cluster:33(STACK_0)").unwrap_err().to_string();
    assert!(e.contains("bits of cluster must be 1..32"), "{e}");
    let e = arc("cluster(h)").unwrap_err().to_string();
    assert!(e.contains("exists only in token and configuration templates"), "{e}");
}
