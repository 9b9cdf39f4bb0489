//! Word clusters in the arc-eager parser's templates: the feature values, training with a
//! table (and the refusals without one), and the table inside the model file.

use std::sync::Arc;

use super::parser::{ArcEagerParser, TrainOptions, Trainer};
use super::TrainingSet;
use crate::io::model::{load_model, Model};
use crate::tagger::clusters::{none_value, Clusters};
use crate::templates::attrs::{VocabCache, VocabHashes};
use crate::templates::hash::hash_str;
use crate::templates::Attr;
use crate::treebank::{Treebank, WordStrs, NO_HEAD};

/// A synthetic table over the toy treebank's words: determiners under 00, nouns under
/// 01 (dog and cat share 3 bits), verbs under 10; "kitten" is cat's twin, unseen in training.
const TABLE: &str = "000\tthe\t9\n001\ta\t5\n0110\tdog\t4\n0111\tcat\t3\n0111\tkitten\t1\n\
                     0110101\tdogs\t2\n100\tbarks\t1\n101\tsees\t1\n1011\tsleep\t1\n11\t.\t9\n";

fn table() -> Arc<Clusters> {
    Arc::new(Clusters::parse(TABLE, "toy.paths").unwrap())
}

fn toy(copies: usize) -> Treebank {
    let mut tb = Treebank::new();
    for _ in 0..copies {
        for sentence in super::testing::toy_sentences() {
            tb.push_sentence(&sentence, vec![]);
        }
    }
    tb
}

fn sentence(forms: &[&str]) -> Treebank {
    let words: Vec<WordStrs> = forms.iter().map(|f| WordStrs::simple(f, "X", NO_HEAD, "_")).collect();
    let mut tb = Treebank::new();
    tb.push_sentence(&words, vec![]);
    tb
}

/// Configuration templates that read no tags and no forms: only cluster paths (so a
/// parse can only follow the clusters) and the labels built so far.
const CLUSTER_ONLY: &str = "cluster(QUEUE_0)\ncluster(STACK_0)\ncluster(STACK_0) & cluster(QUEUE_0)\n\
                            cluster:2(QUEUE_1)\ncluster:2(STACK_0) & cluster:2(QUEUE_0) & cluster:2(QUEUE_1)\n\
                            deprel(STACK_0 lc)\n";

fn train(text: &str, tb: &Treebank, clusters: Option<Arc<Clusters>>) -> crate::Result<ArcEagerParser> {
    let set = ArcEagerParser::compile_set(text)?;
    let opts = TrainOptions { epochs: 4, clusters, ..TrainOptions::default() };
    ArcEagerParser::train(set, tb, &opts, |_| true)
}

/// `cluster:K` is the hash of the path's first K bits (all of a shorter path), `cluster`
/// of the whole path; a form is looked up as written, then lower-cased; a word the
/// table lacks has the "none" value. The training path (cached tables) and the parse
/// path give the same values.
#[test]
fn cluster_values_prefixes_case_and_none() {
    let tb = sentence(&["Dog", "cat", "dogs", "wolf", "The"]);
    let attrs = [Attr::Cluster(3), Attr::Cluster(4), Attr::Cluster(0), Attr::Form];
    let c = table();
    let parse = VocabHashes::with_clusters(&tb, &attrs, Some(&c));
    let train = VocabHashes::with_cache(&tb, &attrs, &VocabCache::default(), Some(&c));
    let start = tb.sentences[0].start as usize;
    let v = |vh: &VocabHashes, slot: usize, word: usize| vh.value(&tb, slot, start + word);
    for slot in 0..attrs.len() {
        for w in 0..5 {
            assert_eq!(v(&parse, slot, w), v(&train, slot, w), "slot {slot}, word {w}");
        }
    }
    let (dog, cat, dogs, wolf, the) = (0, 1, 2, 3, 4);
    assert_eq!(v(&parse, 0, dog), hash_str("011"), "Dog: dog's path, lower-cased");
    assert_eq!(v(&parse, 0, dog), v(&parse, 0, cat), "dog and cat share 3 bits");
    assert_ne!(v(&parse, 1, dog), v(&parse, 1, cat), "but not 4");
    assert_eq!(v(&parse, 1, dogs), v(&parse, 1, dog), "dogs extends dog's path");
    assert_eq!(v(&parse, 2, dogs), hash_str("0110101"));
    assert_eq!(v(&parse, 2, the), hash_str("000"), "3 bits for a 4-bit prefix of a 3-bit path");
    assert_eq!(v(&parse, 1, the), hash_str("000"));
    for slot in 0..3 {
        assert_eq!(v(&parse, slot, wolf), none_value());
    }
    // Without a table every word has the "none" value (the trainer refuses that first).
    let bare = VocabHashes::with_cache(&tb, &attrs, &VocabCache::default(), None);
    assert_eq!(v(&bare, 0, dog), none_value());
}

/// A parser that sees only clusters parses a sentence of unseen words (and a case it
/// never saw) as it parses their cluster twins; its file holds the table, and the
/// loaded parser parses exactly as the trained one.
#[test]
fn cluster_parser_generalises_and_round_trips() {
    let tb = toy(10);
    let p = train(CLUSTER_ONLY, &tb, Some(table())).unwrap();
    assert_eq!(p.clusters.as_ref().map(|c| c.len()), Some(10));
    let known = p.parse(&sentence(&["A", "cat", "sees", "the", "dog", "."]), 1).unwrap();
    let twin = p.parse(&sentence(&["A", "kitten", "sees", "THE", "dog", "."]), 1).unwrap();
    assert_eq!(known.words.head, vec![2, 3, 0, 5, 3, 3], "learns the toy grammar from clusters");
    assert_eq!(twin.words.head, known.words.head);
    assert_eq!(twin.words.deprel.len(), known.words.deprel.len());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cl.depfs");
    p.save(&path).unwrap();
    assert!(matches!(load_model(&path).unwrap().model, Model::ArcEagerClusters(_)));
    let back = ArcEagerParser::load(&path).unwrap();
    assert_eq!(back.clusters.as_deref(), p.clusters.as_deref());
    let mut input = tb.clone();
    input.words.head.iter_mut().for_each(|h| *h = NO_HEAD);
    for x in [&input, &sentence(&["Dogs", "sleep", "."]), &sentence(&["a", "wolf", "barks", "."])] {
        let (a, b) = (p.parse(x, 1).unwrap(), back.parse(x, 1).unwrap());
        assert_eq!((&a.words.head, &a.words.deprel), (&b.words.head, &b.words.deprel));
    }
    // A dynamic model keeps its presets beside the table.
    let mut d = p.clone();
    d.dynamic = Some(super::prefix_margin::MarginPresets { train: 10.0, accurate: 4.0, fast: 2.0 });
    d.save(&path).unwrap();
    let back = ArcEagerParser::load(&path).unwrap();
    assert_eq!((back.dynamic, back.clusters.is_some()), (d.dynamic, true));

    // A parser without a table is written as before (the old variant), and a prefix
    // that reads no clusters drops the table.
    let plain = train("upos(QUEUE_0)\nform(STACK_0)\n", &tb, None).unwrap();
    plain.save(&path).unwrap();
    assert!(matches!(load_model(&path).unwrap().model, Model::ArcEager(_)));
    let mixed = train("upos(QUEUE_0)\nupos(STACK_0)\ncluster(QUEUE_0)\n", &tb, Some(table())).unwrap();
    assert!(mixed.clusters.is_some());
    let pre = mixed.prefix(2).unwrap();
    assert!(pre.clusters.is_none());
    pre.save(&path).unwrap();
    assert!(matches!(load_model(&path).unwrap().model, Model::ArcEager(_)));
}

/// Cluster templates without a table, a table no template reads, and replays without
/// a table are refused with one clear error each.
#[test]
fn refusals_without_a_table_or_without_a_reader() {
    let tb = toy(2);
    let e = train(CLUSTER_ONLY, &tb, None).unwrap_err().to_string();
    assert!(e.contains("no cluster table"), "{e}");
    let e = train("upos(QUEUE_0)\n", &tb, Some(table())).unwrap_err().to_string();
    assert!(e.contains("no template reads it"), "{e}");
    // A prepared set: its table serves the models that read it, the others drop it.
    let set = Arc::new(TrainingSet::with_clusters(&tb, true, 20, Some(table())).unwrap());
    let opts = TrainOptions::default();
    let plain = Trainer::on(ArcEagerParser::compile_set("upos(QUEUE_0)\n").unwrap(), &set, &opts).unwrap();
    assert!(plain.averaged().clusters.is_none());
    let bare = Arc::new(TrainingSet::new(&tb, true, 20).unwrap());
    let e = Trainer::on(ArcEagerParser::compile_set(CLUSTER_ONLY).unwrap(), &bare, &opts)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no cluster table"), "{e}");
    let other = TrainOptions { clusters: Some(table()), ..TrainOptions::default() };
    let e = Trainer::on(ArcEagerParser::compile_set(CLUSTER_ONLY).unwrap(), &bare, &other)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("not the training set's"), "{e}");
    // Trajectories replay any templates, but have no table.
    let p = train(CLUSTER_ONLY, &tb, Some(table())).unwrap();
    let traj = p.trajectories(&Arc::new(tb.clone()), 0.5, 1, None).unwrap();
    assert!(!traj.is_empty());
    let e = traj.features(&ArcEagerParser::compile_set(CLUSTER_ONLY).unwrap(), 1).unwrap_err().to_string();
    assert!(e.contains("no word-cluster table"), "{e}");
}
