//! UD-data tests of the arc-eager system (marker `ud`: each test returns early,
//! saying so, when the data directory is missing). Run with `--nocapture` to see
//! the pseudo-projective rates.

use std::path::PathBuf;

use depfs_core::heads::is_projective;
use depfs_core::io::conllu::{read_path, ReadOptions};
use depfs_core::transition::projective::{deprojectivize, projectivize};
use depfs_core::transition::{static_sequence, GoldTree};
use depfs_core::Treebank;

fn data_file(lang: &str, split: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("DEPFS_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ud"));
    let p = dir.join(lang).join(format!("{split}.conllu"));
    if p.exists() {
        Some(p)
    } else {
        eprintln!("ud: skipped, {} not found (set DEPFS_DATA)", p.display());
        None
    }
}

fn read(lang: &str, split: &str) -> Option<Treebank> {
    let p = data_file(lang, split)?;
    Some(read_path(&p, &ReadOptions::default()).expect("UD file reads"))
}

fn heads_u32(tb: &Treebank, s: usize) -> Vec<u32> {
    tb.heads(s).iter().map(|&h| h as u32).collect()
}

#[test]
fn ud_static_oracle_round_trip_en_ewt_dev() {
    let Some(tb) = read("en_ewt", "dev") else { return };
    let (mut projective, mut rebuilt) = (0, 0);
    for s in 0..tb.len() {
        let heads = heads_u32(&tb, s);
        if !is_projective(&heads) {
            continue;
        }
        projective += 1;
        let gold = GoldTree::new(&heads, tb.deprels(s));
        let (moves, c) = static_sequence(&gold).expect("every move of the static oracle is valid");
        assert!(moves.len() <= 2 * heads.len());
        assert_eq!(&c.heads()[1..], &heads[..], "sentence {s}: heads differ");
        assert_eq!(&c.labels()[1..], tb.deprels(s), "sentence {s}: labels differ");
        rebuilt += 1;
    }
    eprintln!("ud: en_ewt dev: {rebuilt} of {projective} projective trees rebuilt ({} sentences)", tb.len());
    assert_eq!(rebuilt, projective);
    assert!(projective * 10 > tb.len() * 9, "en_ewt dev is mostly projective");
}

/// Projectivise then deprojectivise: every tree comes out projective, and the
/// share of trees restored exactly is reported (and must stay high).
fn pseudo_projective_rate(lang: &str) -> Option<(usize, usize, f64)> {
    let tb = read(lang, "train")?;
    let (proj, stats) = projectivize(&tb);
    for s in 0..proj.len() {
        assert!(is_projective(&heads_u32(&proj, s)), "{lang} sentence {s} still non-projective");
    }
    let mut back = proj.clone();
    deprojectivize(&mut back);
    let mut restored = 0;
    let mut nonproj = 0;
    let (mut lifted_arcs, mut lifted_back) = (0, 0);
    for s in 0..tb.len() {
        let orig = tb.heads(s);
        if is_projective(&heads_u32(&tb, s)) {
            assert_eq!(back.heads(s), orig, "{lang} sentence {s}: projective tree changed");
            continue;
        }
        nonproj += 1;
        let labels_same = tb
            .deprels(s)
            .iter()
            .zip(back.deprels(s))
            .all(|(&a, &b)| tb.vocabs.deprel.str(a) == back.vocabs.deprel.str(b));
        if back.heads(s) == orig && labels_same {
            restored += 1;
        }
        for (i, &h) in orig.iter().enumerate() {
            if proj.heads(s)[i] != h {
                lifted_arcs += 1;
                if back.heads(s)[i] == h {
                    lifted_back += 1;
                }
            }
        }
    }
    assert_eq!(nonproj, stats.nonprojective_sentences);
    let rate = restored as f64 / nonproj.max(1) as f64;
    eprintln!(
        "ud: {lang} train: {nonproj} of {} trees non-projective, {} words lifted; \
         projectivise+deprojectivise restores {restored} of them ({:.1}%), lifted arcs back {lifted_back}/{lifted_arcs} ({:.1}%)",
        tb.len(),
        stats.lifted_words,
        100.0 * rate,
        100.0 * lifted_back as f64 / lifted_arcs.max(1) as f64
    );
    Some((nonproj, restored, rate))
}

#[test]
fn ud_pseudo_projective_round_trip_en_ewt() {
    if let Some((_, _, rate)) = pseudo_projective_rate("en_ewt") {
        assert!(rate > 0.8, "only {rate} restored");
    }
}

#[test]
fn ud_pseudo_projective_round_trip_pt_bosque() {
    if let Some((_, _, rate)) = pseudo_projective_rate("pt_bosque") {
        assert!(rate > 0.8, "only {rate} restored");
    }
}
