use super::*;
use crate::WordStrs;
use label_stop::LabelStop;
use score::Split;

/// A toy language: "DET ADJ* NOUN VERB DET NOUN ADV?" with fixed attachments, so a
/// first-order model can learn it perfectly.
fn toy(n_sent: usize, seed: u64) -> Treebank {
    let mut rng = Rng::new(seed);
    let mut tb = Treebank::new();
    let nouns = ["dog", "cat", "bird", "man"];
    let verbs = ["sees", "likes", "bites"];
    for _ in 0..n_sent {
        let mut w: Vec<(String, &str, i32, &str)> = vec![];
        let n_adj = (rng.next_u64() % 3) as usize;
        // subject NP: DET ADJ* NOUN ; NOUN is at 2 + n_adj
        let subj = 2 + n_adj as i32;
        let verb = subj + 1;
        w.push(("the".into(), "DET", subj, "det"));
        for _ in 0..n_adj {
            w.push(("big".into(), "ADJ", subj, "amod"));
        }
        w.push((nouns[(rng.next_u64() % 4) as usize].into(), "NOUN", verb, "nsubj"));
        w.push((verbs[(rng.next_u64() % 3) as usize].into(), "VERB", 0, "root"));
        w.push(("a".into(), "DET", verb + 2, "det"));
        w.push((nouns[(rng.next_u64() % 4) as usize].into(), "NOUN", verb, "obj"));
        if rng.next_u64().is_multiple_of(2) {
            w.push(("now".into(), "ADV", verb, "advmod"));
        }
        let ws: Vec<WordStrs> = w.iter().map(|(f, p, h, d)| WordStrs::simple(f, p, *h, d)).collect();
        tb.push_sentence(&ws, vec![]);
    }
    tb
}

fn small_templates() -> GraphTemplates {
    let arc = "upos(h) & upos(m) & dir & dist\nform(h) & upos(m)\nupos(h) & upos(b) & upos(m)\nupos(m) & dir";
    let sib = "upos(h) & upos(s) & upos(m)\nupos(s) & upos(m) & dir";
    let lab = "upos(h) & upos(m) & dir\nform(m)";
    GraphTemplates {
        arc: TemplateSet::parse(arc, Family::Arc, 3).unwrap(),
        sib: TemplateSet::parse(sib, Family::Arc, 3).unwrap(),
        lab: TemplateSet::parse(lab, Family::Arc, 3).unwrap(),
    }
}

#[test]
fn learns_a_toy_language_and_parses_held_out_sentences() {
    let train_tb = toy(200, 1);
    let test_tb = toy(50, 2);
    let config = GraphConfig { epochs: 5, ..Default::default() };
    let mut seen = vec![];
    let model = train(&train_tb, small_templates(), config, |st, _| seen.push(st.epoch)).unwrap();
    assert_eq!(seen, vec![1, 2, 3, 4, 5]);
    let mut blank = test_tb.clone();
    blank.words.head.iter_mut().for_each(|h| *h = NO_HEAD);
    let parsed = model.parse(&blank, 1).unwrap();
    let (uas, las) = crate::eval::attachment(&test_tb, &parsed).unwrap();
    assert!(uas > 99.0, "uas {uas}");
    assert!(las > 99.0, "las {las}");
    // Threads do not change the result.
    let parsed4 = model.parse(&blank, 3).unwrap();
    assert_eq!(parsed.words.head, parsed4.words.head);
}

#[test]
fn training_is_deterministic_for_a_seed() {
    let tb = toy(60, 3);
    let c = GraphConfig { epochs: 2, ..Default::default() };
    let a = train(&tb, small_templates(), c.clone(), |_, _| {}).unwrap();
    let b = train(&tb, small_templates(), c, |_, _| {}).unwrap();
    assert_eq!(a.arc_w, b.arc_w);
    assert_eq!(a.lab_w, b.lab_w);
}

#[test]
fn template_subset_scores_add_up() {
    let tb = toy(40, 4);
    let model =
        train(&tb, small_templates(), GraphConfig { epochs: 1, ..Default::default() }, |_, _| {}).unwrap();
    let prep = model.prepare(&tb);
    let mut sc = Scratch::default();
    let mut counts = TemplateCounts::new(model.n_arc_templates());
    for s in 0..5 {
        let all = model.arc_scores(&tb, &prep, s, None, false, None, &mut sc).unwrap();
        let a = model.arc_scores(&tb, &prep, s, Some(&[0, 2]), false, Some(&mut counts), &mut sc).unwrap();
        let b = model.arc_scores(&tb, &prep, s, Some(&[1, 3]), false, None, &mut sc).unwrap();
        for i in 0..all.len() {
            assert!((all[i] - a[i] - b[i]).abs() < 1e-3, "{} vs {} + {}", all[i], a[i], b[i]);
        }
    }
    assert!(counts.per_template[0] > 0 && counts.per_template[1] == 0);
    assert!(model.arc_scores(&tb, &prep, 0, Some(&[9]), true, None, &mut sc).is_err());
}

#[test]
fn bad_inputs_are_errors() {
    let tb = toy(5, 5);
    let mut blank = tb.clone();
    blank.words.head.iter_mut().for_each(|h| *h = NO_HEAD);
    assert!(GraphTrainer::new(&blank, small_templates(), GraphConfig::default()).is_err());
    let mut t = small_templates();
    t.arc = TemplateSet::parse("upos(s) & upos(m)", Family::Arc, 3).unwrap();
    assert!(GraphTrainer::new(&tb, t, GraphConfig::default()).is_err());
    let c = GraphConfig { order: 3, ..Default::default() };
    assert!(GraphTrainer::new(&tb, small_templates(), c).is_err());
    assert!(DecoderKind::parse("greedy").is_err());
}

#[test]
fn model_files_round_trip_and_refuse_damage() {
    let tb = toy(30, 6);
    let c = GraphConfig { epochs: 1, ..Default::default() };
    let model = train(&tb, small_templates(), c, |_, _| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.depfs");
    model.save(&path).unwrap();
    let back = GraphModel::load(&path).unwrap();
    assert_eq!(back.arc_w, model.arc_w);
    assert_eq!(back.lab_w, model.lab_w);
    assert_eq!(back.labels, model.labels);
    assert_eq!(back.templates, model.templates);
    assert_eq!(back.length_dict, model.length_dict);
    assert_eq!(back.parse(&tb, 1).unwrap().words.head, model.parse(&tb, 1).unwrap().words.head);
    // Truncation and bit flips give one Model error naming the file.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = GraphModel::load(&path).unwrap_err().to_string();
    assert!(e.contains("g.depfs") && e.contains("truncated"), "{e}");
    let mut flipped = bytes.clone();
    let k = flipped.len() - 10;
    flipped[k] ^= 0x55;
    std::fs::write(&path, &flipped).unwrap();
    assert!(GraphModel::load(&path).unwrap_err().to_string().contains("checksum"));
}

/// Weights with pseudo-random values in every row.
fn random_weights(af: &ArcFeatures, bits: u32, seed: u64) -> Weights {
    let mut w = Weights::uniform(af.len(), bits, 1).unwrap();
    let mut rng = Rng::new(seed);
    for t in 0..af.len() {
        for r in 0..(1u64 << bits) {
            w.update(t, r, 0, (rng.next_u64() % 1000) as f32 / 100.0 - 5.0);
        }
    }
    w
}

#[test]
fn hot_loops_equal_the_reference_sums() {
    let tb = toy(6, 11);
    let text = "upos(h) & upos(m) & dir & dist\nform(h)\nupos(m)\nupos(h) & upos(b) & upos(m) & dir\n\
                form(h-1) & upos(m+1)\ndist";
    let set = TemplateSet::parse(text, Family::Arc, 3).unwrap();
    let af = ArcFeatures::compile(&set).unwrap();
    let w = random_weights(&af, 6, 3);
    // Three sibling templates: f32 sums in another order would differ in their bits.
    let sib_text = "upos(h) & upos(s) & upos(m)\nform(s) & dir\nupos(s) & form(m) & dist";
    let sib_set = TemplateSet::parse(sib_text, Family::Arc, 3).unwrap();
    let sf = ArcFeatures::compile(&sib_set).unwrap();
    let sw = random_weights(&sf, 5, 4);
    let (vh, svh) = (VocabHashes::new(&tb, &af.attrs), VocabHashes::new(&tb, &sf.attrs));
    let (mut sent, mut ssent) = (ArcSent::default(), ArcSent::default());
    let all: Vec<usize> = (0..af.len()).collect();
    let split = Split::new(&af, &all);
    for s in 0..tb.len() {
        af.prepare(&vh, &tb, s, &mut sent);
        sf.prepare(&svh, &tb, s, &mut ssent);
        let n1 = sent.n1;
        let mut mask = vec![true; n1 * n1];
        mask[n1 + 2] = false; // prune 2 -> 1
        let (mut got, mut sib) = (Vec::new(), Vec::new());
        score::arc_scores(&af, &w, &sent, &split, Some(&mask), &mut got, None);
        score::sibling_scores(&sf, &sw, &ssent, &[0, 1, 2], &mut sib);
        for m in 1..n1 {
            for h in 0..n1 {
                if h == m {
                    continue;
                }
                let mut want = 0f32;
                for t in 0..af.len() {
                    af.for_each(&sent, t, h, m, Second::default(), |f| want += w.get(t, f));
                }
                if mask[m * n1 + h] {
                    assert!((got[m * n1 + h] - want as f64).abs() < 1e-3, "arc {h}->{m}");
                } else {
                    assert_eq!(got[m * n1 + h], f64::NEG_INFINITY);
                }
                let inner = if m > h { h..m } else { m + 1..h + 1 };
                for p in inner {
                    let second = Second { sib: (p != h).then_some(p), grand: None };
                    let mut want = 0f32;
                    for t in 0..sf.len() {
                        sf.for_each(&ssent, t, h, m, second, |f| want += sw.get(t, f));
                    }
                    // The same f32 sum, template by template: the same bits.
                    assert_eq!(sib[(m * n1 + h) * n1 + p], want as f64, "part ({h}, {m}, {p})");
                }
            }
        }
    }
}

#[test]
fn second_order_and_cle_models_learn_the_toy_language() {
    let train_tb = toy(150, 12);
    let test_tb = toy(40, 13);
    for config in [
        GraphConfig { order: 2, epochs: 3, ..Default::default() },
        GraphConfig { decoder: DecoderKind::Cle, epochs: 3, ..Default::default() },
        GraphConfig { update: Update::Perceptron, prune: false, epochs: 3, ..Default::default() },
    ] {
        let model = train(&train_tb, small_templates(), config.clone(), |_, _| {}).unwrap();
        let parsed = model.parse(&test_tb, 1).unwrap();
        let (uas, _) = crate::eval::attachment(&test_tb, &parsed).unwrap();
        assert!(uas > 99.0, "{config:?}: uas {uas}");
    }
}

/// Every sentence of `tb` prepared for `af`, and its mask: entry i of sentence s's
/// n1 × n1 matrix is kept when `keep(s, n1, i)`.
fn prepared_masked(
    tb: &Treebank,
    af: &ArcFeatures,
    keep: impl Fn(usize, usize, usize) -> bool,
) -> (Vec<ArcSent>, Vec<Vec<bool>>) {
    let vh = VocabHashes::new(tb, &af.attrs);
    let mut sents = vec![ArcSent::default(); tb.len()];
    let mut masks = vec![];
    for (s, sent) in sents.iter_mut().enumerate() {
        af.prepare(&vh, tb, s, sent);
        let n1 = sent.n1;
        masks.push((0..n1 * n1).map(|i| keep(s, n1, i)).collect());
    }
    (sents, masks)
}

/// One scoring item per sentence: its partials, its mask, its scores.
fn to_score<'a>(
    sents: &'a [ArcSent],
    masks: &'a [Vec<bool>],
    outs: &'a mut [Vec<f64>],
) -> Vec<score::ToScore<'a>> {
    sents
        .iter()
        .zip(masks)
        .zip(outs.iter_mut())
        .map(|((sent, mask), out)| score::ToScore { sent, mask: Some(mask), out })
        .collect()
}

/// Each sentence's scores before any template: 0, -inf where its mask prunes.
fn reset_all(sents: &[ArcSent], masks: &[Vec<bool>]) -> Vec<Vec<f64>> {
    sents
        .iter()
        .zip(masks)
        .map(|(sent, mask)| {
            let mut o = Vec::new();
            score::reset_scores(sent.n1, Some(mask), &mut o);
            o
        })
        .collect()
}

#[test]
fn batched_and_quantized_scores_equal_one_sentence_at_a_time() {
    let tb = toy(9, 21);
    let text = "upos(h) & upos(m) & dir & dist\nform(h)\nupos(m)\nupos(h) & upos(b) & upos(m) & dir\nform(h-1) & upos(m+1)";
    let set = TemplateSet::parse(text, Family::Arc, 3).unwrap();
    let af = ArcFeatures::compile(&set).unwrap();
    let w = random_weights(&af, 6, 5);
    let q = crate::weights::QuantizedWeights::quantize(&w);
    let all: Vec<usize> = (0..af.len()).collect();
    let split = Split::new(&af, &all);
    // A different pruning pattern per sentence.
    let (sents, masks) = prepared_masked(&tb, &af, |s, _, i| (i + s) % 3 != 0);
    let mut outs = reset_all(&sents, &masks);
    let mut items = to_score(&sents, &masks, &mut outs);
    // A second table read with the same features: its sums go to outs2, the first
    // table's are unchanged (checked against one sentence at a time below).
    let q2 = crate::weights::QuantizedWeights::quantize(&random_weights(&af, 6, 6));
    let mut outs2 = reset_all(&sents, &masks);
    let mut refs: Vec<&mut Vec<f64>> = outs2.iter_mut().collect();
    score::add_arc_scores_dual(&af, &q, Some((&q2, refs.as_mut_slice())), &mut items, &split, None);
    for s in 0..tb.len() {
        let mut alone = Vec::new();
        score::arc_scores(&af, &q2, &sents[s], &split, Some(&masks[s]), &mut alone, None);
        assert_eq!(outs2[s], alone, "second table, sentence {s}");
    }
    let dq = q.dequantized();
    for s in 0..tb.len() {
        let (mut one, mut dense) = (Vec::new(), Vec::new());
        score::arc_scores(&af, &q, &sents[s], &split, Some(&masks[s]), &mut one, None);
        score::arc_scores(&af, &dq, &sents[s], &split, Some(&masks[s]), &mut dense, None);
        assert_eq!(outs[s], one, "sentence {s}");
        for (a, b) in one.iter().zip(&dense) {
            assert!(a == b || (a - b).abs() < 1e-3, "{a} vs {b}");
        }
    }
}

/// A batch whose masks leave few arcs (a DynFS round's): words that head no arc or
/// modify none get no per-word term, and every listed arc of every sentence, in both
/// tables, still gets the sum of its features' weights.
#[test]
fn sparse_batches_equal_the_reference_sums() {
    let tb = toy(12, 23);
    let text = "upos(h) & upos(m) & dir & dist\nform(h)\nupos(m)\nupos(h) & upos(b) & upos(m) & dir\n\
                form(h-1) & upos(m+1)\nxpos(h)\nform(m) & upos(m)";
    let set = TemplateSet::parse(text, Family::Arc, 3).unwrap();
    let af = ArcFeatures::compile(&set).unwrap();
    let q = crate::weights::QuantizedWeights::quantize(&random_weights(&af, 6, 9));
    let q2 = crate::weights::QuantizedWeights::quantize(&random_weights(&af, 6, 10));
    let all: Vec<usize> = (0..af.len()).collect();
    let split = Split::new(&af, &all);
    // Every third modifier keeps the heads of one parity; the others keep none.
    let (sents, masks) = prepared_masked(&tb, &af, |s, n1, i| (i / n1 + s) % 3 == 0 && (i % n1 + s) % 2 == 0);
    let (mut outs, mut outs2) = (reset_all(&sents, &masks), reset_all(&sents, &masks));
    let mut items = to_score(&sents, &masks, &mut outs);
    let mut refs: Vec<&mut Vec<f64>> = outs2.iter_mut().collect();
    score::add_arc_scores_dual(&af, &q, Some((&q2, refs.as_mut_slice())), &mut items, &split, None);
    drop(items);
    let mut listed = 0;
    for (s, sent) in sents.iter().enumerate() {
        let n1 = sent.n1;
        for (table, got) in [(&q, &outs[s]), (&q2, &outs2[s])] {
            for m in 1..n1 {
                for h in (0..n1).filter(|&h| h != m) {
                    let got = got[m * n1 + h];
                    if !masks[s][m * n1 + h] {
                        assert_eq!(got, f64::NEG_INFINITY, "sentence {s}, pruned arc {h}->{m}");
                        continue;
                    }
                    listed += 1;
                    let mut want = 0f32;
                    for t in 0..af.len() {
                        af.for_each(sent, t, h, m, Second::default(), |f| want += table.get(t, f));
                    }
                    assert!((got - want as f64).abs() < 1e-3, "sentence {s}, arc {h}->{m}: {got} vs {want}");
                }
            }
        }
    }
    assert!(listed > 20, "only {listed} arcs listed");
}

/// Several groups in one scoring call (the first-order DynFS last round) add each
/// group's sum on its own, as one call per group: the same scores bit for bit, in both
/// tables; and the template counts are those of the calls one by one.
#[test]
fn groups_scored_in_one_call_equal_one_call_per_group() {
    let tb = toy(9, 22);
    let text = "upos(h) & upos(m) & dir & dist\nform(h)\nupos(m)\nupos(h) & upos(b) & upos(m) & dir\nform(h-1) & upos(m+1)\nform(m) & upos(h) & dir";
    let set = TemplateSet::parse(text, Family::Arc, 3).unwrap();
    let af = ArcFeatures::compile(&set).unwrap();
    let q = crate::weights::QuantizedWeights::quantize(&random_weights(&af, 6, 7));
    let q2 = crate::weights::QuantizedWeights::quantize(&random_weights(&af, 6, 8));
    // Every shape in each group: a general, a head-only or modifier-only, a between.
    let (g1, g2) = (Split::new(&af, &[0, 1, 3]), Split::new(&af, &[2, 4, 5]));
    let (sents, masks) = prepared_masked(&tb, &af, |s, _, i| (i + 2 * s) % 3 != 1);
    let start = || {
        let mut outs = reset_all(&sents, &masks);
        // Scores already there (earlier rounds) stay under the groups' sums.
        for o in &mut outs {
            o.iter_mut().enumerate().for_each(|(i, v)| *v += (i % 7) as f64 * 0.3);
        }
        outs
    };
    let run = |one_call: bool| {
        let mut outs = start();
        let mut outs2 = outs.clone();
        let mut counts = crate::weights::TemplateCounts::new(af.len());
        let mut items = to_score(&sents, &masks, &mut outs);
        let mut refs: Vec<&mut Vec<f64>> = outs2.iter_mut().collect();
        if one_call {
            let second = Some((&q2, refs.as_mut_slice()));
            score::add_arc_scores_groups(&af, &q, second, &mut items, &[&g1, &g2], Some(&mut counts));
        } else {
            for g in [&g1, &g2] {
                let second = Some((&q2, refs.as_mut_slice()));
                score::add_arc_scores_dual(&af, &q, second, &mut items, g, Some(&mut counts));
            }
        }
        drop(items);
        (outs, outs2, counts)
    };
    let (one, one2, counts) = run(true);
    let (each, each2, counts_each) = run(false);
    assert_eq!(one, each, "first table");
    assert_eq!(one2, each2, "second table");
    assert_eq!(counts, counts_each);
    assert!(counts.total() > 0);
    // Not the sum of the two groups as one group (float sums in another order), so the
    // groups were added one by one: at least one score differs in its last bits.
    let both = Split::new(&af, &[0, 1, 2, 3, 4, 5]);
    let mut merged = start();
    let mut items = to_score(&sents, &masks, &mut merged);
    score::add_arc_scores_batch(&af, &q, &mut items, &both, None);
    drop(items);
    assert_ne!(merged, one, "the groups' sums were merged");
}

#[test]
fn cost_augmented_training_keeps_updating_until_the_margin_covers_the_loss() {
    // On a separable toy language plain MIRA stops updating once the gold trees win;
    // cost-augmented decoding still finds trees within a Hamming-loss margin of gold.
    // (No length dictionary: on the toy language it leaves only the gold arcs.)
    let tb = toy(200, 6);
    let updates = |cost_augmented: bool| {
        let config = GraphConfig { cost_augmented, prune: false, ..Default::default() };
        let mut t = GraphTrainer::new(&tb, small_templates(), config).unwrap();
        (0..4).map(|_| t.epoch().unwrap().updates).collect::<Vec<_>>()
    };
    let (plain, augmented) = (updates(false), updates(true));
    assert_eq!(plain[3], 0, "plain MIRA has separated the toy data: {plain:?}");
    assert!(augmented[0] > plain[0], "{augmented:?} vs {plain:?}");
    assert!(augmented.iter().sum::<u64>() > plain.iter().sum::<u64>());
}

/// The open chain: groups added one after the other give the one-group scores; a
/// group added to some arcs leaves the others as they were; locks and removals bind
/// the decoder; the chain with all templates and the labeler stage is the parse.
#[test]
fn open_chain_accumulates_groups_and_decodes_under_locks() {
    let tb = toy(40, 4);
    let model =
        // Unpruned training: on the toy the length dictionary leaves only gold arcs,
        // and the weights would stay 0.
        train(&tb, small_templates(), GraphConfig { epochs: 2, prune: false, ..Default::default() }, |_, _| {})
            .unwrap();
    let prep = model.prepare(&tb);
    let (mut sc, mut ws) = (Scratch::default(), DecodeWs::default());
    let parsed = model.parse(&tb, 1).unwrap();
    let (mut changed, mut decoded) = (0, 0);
    for s in 0..8 {
        let mut o = OpenSentence::default();
        model.open_pruned(&tb, &prep, s, true, &mut o);
        let n1 = o.n1();
        model.add_group(&mut o, &[0, 2], None, None).unwrap();
        model.add_group(&mut o, &[1, 3], None, None).unwrap();
        let all = model.arc_scores(&tb, &prep, s, None, true, None, &mut sc).unwrap();
        for (i, (a, b)) in o.scores.iter().zip(&all).enumerate() {
            assert!(a == b || (a - b).abs() < 1e-3, "arc {i}: {a} vs {b}");
        }
        // The chain with one group and the labeler stage is the parse.
        let mut whole = OpenSentence::default();
        model.open_sentence(&tb, &prep, s, &mut whole);
        model.add_group(&mut whole, &[0, 1, 2, 3], None, None).unwrap();
        let heads = model.decode_open(&whole, &mut ws).unwrap();
        let labels = model.label(&tb, &prep, s, &heads, &mut sc);
        let start = parsed.sentences[s].start as usize;
        assert_eq!(&heads[1..], &parsed.words.head[start..start + n1 - 1]);
        for (m, &l) in labels.iter().enumerate().skip(1) {
            let want = parsed.vocabs.deprel.str(parsed.words.deprel[start + m - 1]);
            assert_eq!(model.labels[l as usize], want);
        }

        // A group added to the arcs into one word only (the word where that group
        // scores most arcs): those get both groups' scores, every other arc keeps the
        // first group's, bit for bit (no pruning here, so the word has rival heads).
        let g1 = model.arc_scores(&tb, &prep, s, Some(&[1]), false, None, &mut sc).unwrap();
        let word = (1..n1).max_by_key(|&m| (0..n1).filter(|&h| g1[m * n1 + h] != 0.0).count()).unwrap();
        let mut part = OpenSentence::default();
        model.open_pruned(&tb, &prep, s, false, &mut part);
        model.add_group(&mut part, &[0], None, None).unwrap();
        let before = part.scores.clone();
        let into: Vec<bool> = (0..n1 * n1).map(|i| i / n1 == word).collect();
        model.add_group(&mut part, &[1], Some(&into), None).unwrap();
        let both = model.arc_scores(&tb, &prep, s, Some(&[0, 1]), false, None, &mut sc).unwrap();
        for i in 0..n1 * n1 {
            if into[i] && i % n1 != word {
                assert!(
                    (part.scores[i] - both[i]).abs() < 1e-3,
                    "arc {i}: {} vs {}",
                    part.scores[i],
                    both[i]
                );
                changed += usize::from(part.scores[i] != before[i]);
            } else {
                assert_eq!(part.scores[i].to_bits(), before[i].to_bits(), "arc {i} outside the mask changed");
            }
        }
        assert!(model.add_group(&mut part, &[9], None, None).is_err());
        assert!(model.add_group(&mut part, &[0], Some(&[true]), None).is_err());

        // Lock the worst-scoring arc into the last word, remove the parse's arc into
        // word 1 (the unpruned chain, so a tree remains).
        let last = n1 - 1;
        let worst = (0..n1)
            .filter(|&h| h != last && whole.scores[last * n1 + h].is_finite())
            .min_by(|&a, &b| whole.scores[last * n1 + a].total_cmp(&whole.scores[last * n1 + b]))
            .unwrap();
        let locked_score = whole.scores[last * n1 + worst];
        whole.lock(last, worst);
        assert!(!whole.is_open(last, worst));
        model.add_group(&mut whole, &[0, 1, 2, 3], None, None).unwrap();
        assert_eq!(whole.scores[last * n1 + worst], locked_score, "a locked arc got more features");
        if last != 1 {
            whole.remove(1, heads[1] as usize);
        }
        if let Ok(forced) = model.decode_open(&whole, &mut ws) {
            decoded += 1;
            assert_eq!(forced[last], worst as i32);
            if last != 1 {
                assert_ne!(forced[1], heads[1]);
            }
        }
    }
    assert!(changed > 0, "the second group changed no arc");
    assert!(decoded > 0, "no sentence had a tree under its locks");
}

/// A sentence longer than MAX_EXACT_WORDS is parsed in chunks into one single-rooted
/// tree; the short sentences around it get the parse they get alone.
#[test]
fn long_sentences_are_parsed_in_chunks_into_one_tree() {
    let tb = toy(40, 4);
    let model =
        train(&tb, small_templates(), GraphConfig { epochs: 1, ..Default::default() }, |_, _| {}).unwrap();
    // Sentence 1: the toy sentences one after the other, about 1,000 words.
    let mut long: Vec<WordStrs<'_>> = Vec::new();
    for s in (0..tb.len()).cycle() {
        let meta = &tb.sentences[s];
        long.extend((meta.start as usize..(meta.start + meta.len) as usize).map(|i| tb.word_strs(i)));
        if long.len() > 2 * MAX_EXACT_WORDS {
            break;
        }
    }
    let mut input = Treebank::new();
    let short =
        |s: usize| tb.sentences[s].start as usize..(tb.sentences[s].start + tb.sentences[s].len) as usize;
    input.push_sentence(&short(0).map(|i| tb.word_strs(i)).collect::<Vec<_>>(), vec![]);
    input.push_sentence(&long, vec![]);
    input.push_sentence(&short(1).map(|i| tb.word_strs(i)).collect::<Vec<_>>(), vec![]);
    assert_eq!(long_sentences(&input), 1);
    let out = model.parse(&input, 1).unwrap();
    let heads = out.heads(1);
    assert_eq!(heads.len(), long.len());
    assert_eq!(heads.iter().filter(|&&h| h == 0).count(), 1, "one root");
    assert!((1..=heads.len()).all(|d| crate::heads::dominates(heads, 0, d)), "every word reaches ROOT");
    let alone = model.parse(&tb, 1).unwrap();
    for (s, t) in [(0, 0), (2, 1)] {
        assert_eq!(out.heads(s), alone.heads(t));
        assert_eq!(out.deprels(s).len(), alone.deprels(t).len());
    }
}

/// A second-order model cuts a long sentence into chunks of CHUNK_WORDS_2 (its sibling
/// scoring is cubic in the chunk): each chunk's arcs inside it are the parse of the chunk
/// alone, and each later chunk's root joins the first's as `dep` (a label the toy
/// language never uses), one per chunk.
#[test]
fn second_order_models_parse_long_sentences_in_shorter_chunks() {
    let tb = toy(120, 6);
    let config = GraphConfig { order: 2, epochs: 1, ..Default::default() };
    let model = train(&tb, small_templates(), config, |_, _| {}).unwrap();
    let mut long: Vec<WordStrs<'_>> = Vec::new();
    for s in 0..tb.len() {
        let meta = &tb.sentences[s];
        long.extend((meta.start as usize..(meta.start + meta.len) as usize).map(|i| tb.word_strs(i)));
    }
    assert!(long.len() > MAX_EXACT_WORDS && long.len() > 2 * CHUNK_WORDS);
    let mut input = Treebank::new();
    input.push_sentence(&long, vec![]);
    let out = model.parse(&input, 1).unwrap();
    let heads = out.heads(0).to_vec();
    let joins = out.deprels(0).iter().filter(|&&d| out.vocabs.deprel.str(d) == "dep").count();
    assert_eq!(joins, long.len().div_ceil(CHUNK_WORDS_2) - 1);
    for first in [CHUNK_WORDS_2, 3 * CHUNK_WORDS_2] {
        let mut alone = Treebank::new();
        alone.push_sentence(&long[first..first + CHUNK_WORDS_2], vec![]);
        let own = model.parse(&alone, 1).unwrap().heads(0).to_vec();
        for (j, &h) in own.iter().enumerate().filter(|&(_, &h)| h != 0) {
            assert_eq!(heads[first + j], h + first as i32, "chunk at {first}, word {j}");
        }
    }
}

/// Training skips a sentence over MAX_EXACT_WORDS words (its decode would be cubic in
/// its length) and says which sentences it used; a treebank of long sentences only is
/// refused with one error.
#[test]
fn training_skips_sentences_longer_than_the_exact_bound() {
    let tb = toy(10, 5);
    // A complete chain tree of MAX_EXACT_WORDS + 1 words: word i's head is i - 1.
    let n = MAX_EXACT_WORDS + 1;
    let forms: Vec<String> = (0..n).map(|i| format!("w{}", i % 7)).collect();
    let chain: Vec<WordStrs<'_>> = (0..n)
        .map(|i| WordStrs::simple(&forms[i], "NOUN", i as i32, if i == 0 { "root" } else { "dep" }))
        .collect();
    let word =
        |s: usize| tb.sentences[s].start as usize..(tb.sentences[s].start + tb.sentences[s].len) as usize;
    let mut input = Treebank::new();
    input.push_sentence(&word(0).map(|i| tb.word_strs(i)).collect::<Vec<_>>(), vec![]);
    input.push_sentence(&chain, vec![]);
    input.push_sentence(&word(1).map(|i| tb.word_strs(i)).collect::<Vec<_>>(), vec![]);
    let mut t = GraphTrainer::new(&input, small_templates(), GraphConfig::default()).unwrap();
    assert_eq!(t.used_sentences(), &[0, 2]);
    assert_eq!(t.skipped_sentences, 1);
    assert!(t.epoch().is_ok());
    let mut only_long = Treebank::new();
    only_long.push_sentence(&chain, vec![]);
    let err =
        GraphTrainer::new(&only_long, small_templates(), GraphConfig::default()).err().expect("refused");
    assert!(err.to_string().contains(&format!("at most {MAX_EXACT_WORDS} words")), "{err}");
}

/// Version-4 files (no training information) still load and parse the same; version-5
/// files keep the training information.
#[test]
fn version_4_files_load_and_version_5_keeps_info() {
    use crate::io::model::{load_model, save_version, ModelFileV4};
    let tb = toy(20, 3);
    let mut model =
        train(&tb, small_templates(), GraphConfig { epochs: 1, ..Default::default() }, |_, _| {}).unwrap();
    model.info = r#"{"train": {"sentences": 20}}"#.into();
    let dir = tempfile::tempdir().unwrap();
    let (v5, v4) = (dir.path().join("m5.depfs"), dir.path().join("m4.depfs"));
    model.save(&v5).unwrap();
    let loaded = load_model(&v5).unwrap();
    assert_eq!((loaded.version, loaded.info.as_str()), (5, model.info.as_str()));
    let old = ModelFileV4 { inputs: loaded.inputs.clone(), model: loaded.model };
    save_version(&v4, 4, "graph", &old).unwrap();
    let back = GraphModel::load(&v4).unwrap();
    assert_eq!(load_model(&v4).unwrap().version, 4);
    assert_eq!(back.info, "");
    assert_eq!(back.inputs, model.inputs);
    let (a, b) = (model.parse(&tb, 1).unwrap(), back.parse(&tb, 1).unwrap());
    assert_eq!(a.words.head, b.words.head);
    assert_eq!(GraphModel::load(&v5).unwrap().info, model.info);
}

/// A parser file with a tagger inside: the parser loads as before, the tagger comes back
/// (found by the payload's variant), a file without one has none, and a tagger file
/// that claims to hold another tagger is refused.
#[test]
fn a_tagger_inside_a_parser_file_round_trips() {
    use crate::io::model::{embedded_tagger, load_model, save_version, ModelFile};
    use crate::tagger::{Tagger, TaggerOptions, TaggerTrainer};
    let tb = toy(30, 4);
    let model =
        train(&tb, small_templates(), GraphConfig { epochs: 1, ..Default::default() }, |_, _| {}).unwrap();
    let set = TemplateSet::parse("form(i)\nsuffix:2(i)", Family::Token, 3).unwrap();
    let sets = [set.clone(), set.clone(), set.clone(), set];
    let mut trainer = TaggerTrainer::new(&tb, sets, &TaggerOptions::default()).unwrap();
    trainer.epoch();
    let tagger = trainer.model();
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (dir.path().join("with.depfs"), dir.path().join("without.depfs"));
    model.save_with_tagger(&with, "{}", Some(tagger.to_file("tagger info"))).unwrap();
    model.save(&without).unwrap();
    assert_eq!(crate::io::model::peek_kind(&with).unwrap(), "graph");
    let back = GraphModel::load(&with).unwrap();
    assert_eq!(back.parse(&tb, 1).unwrap().words.head, model.parse(&tb, 1).unwrap().words.head);
    let inside = Tagger::load_embedded(&with).unwrap().expect("the tagger inside");
    assert_eq!(inside.info, "tagger info");
    assert_eq!(
        inside.tag_with(&tb, 1, None).unwrap().0.words.upos,
        tagger.tag_with(&tb, 1, None).unwrap().0.words.upos
    );
    assert!(Tagger::load_embedded(&without).unwrap().is_none());
    assert!(embedded_tagger(&without).unwrap().is_none());
    // A tagger holding a tagger is no file depfs writes: refused, not loaded.
    let odd = dir.path().join("odd.depfs");
    let loaded = load_model(&with).unwrap();
    let t = loaded.tagger.unwrap();
    let nested = ModelFile {
        inputs: vec![],
        info: String::new(),
        model: crate::io::model::with_tagger(t.model, Some(tagger.to_file(""))),
    };
    save_version(&odd, 5, "tagger", &nested).unwrap();
    let err = Tagger::load(&odd).unwrap_err().to_string();
    assert!(err.contains("odd.depfs") && err.contains("cannot hold a tagger"), "{err}");
}

/// A toy model with random arc weights: trees are far from gold, so the rounds of
/// dynamic feature selection have something to decide.
fn noisy_model(seed: u64) -> (Treebank, GraphModel) {
    let tb = toy(30, 11);
    let m = train(
        &tb,
        small_templates(),
        GraphConfig { epochs: 1, prune: false, ..Default::default() },
        |_, _| {},
    )
    .unwrap();
    let arc = QuantizedWeights::quantize(&random_weights(&m.arc, 6, seed));
    let model = m.with_weights(arc, m.sib_w.clone(), m.lab_w.clone());
    (tb, model)
}

fn spec(threshold: f32) -> Dynfs {
    spec_of(vec![vec![0], vec![2, 1], vec![3]], threshold)
}

/// A DynFS spec of `groups` with a policy of zero weights at `threshold`.
fn spec_of(groups: Vec<Vec<u32>>, threshold: f32) -> Dynfs {
    Dynfs {
        weights: vec![0.0; dynfs::n_features(groups.len())],
        groups,
        threshold,
        arc_w: None,
        prune_margin: None,
        tree_margin: None,
        label: None,
        lex: Vec::new(),
    }
}

#[test]
fn dynfs_that_never_locks_is_the_full_parse() {
    let (tb, model) = noisy_model(5);
    let full = model.parse(&tb, 1).unwrap();
    let sp = spec(1.0); // w · ψ = 0 is never > 1
    let run = model
        .parse_dynfs(&tb, &sp, Decider::Linear { weights: &sp.weights, threshold: 1.0 }, false, 1)
        .unwrap();
    assert_eq!(run.parsed.words.head, full.words.head);
    assert_eq!(run.parsed.words.deprel, full.words.deprel);
    let st = run.stats;
    assert_eq!(st.locks, 0);
    assert_eq!(st.evaluated, st.full, "every arc gets every group");
    assert_eq!(st.sentences, tb.len() as u64);
    assert_eq!(st.rounds, 3 * tb.len() as u64);
    // Threads and batches do not change the result.
    let run2 = model
        .parse_dynfs(&tb, &sp, Decider::Linear { weights: &sp.weights, threshold: 1.0 }, false, 2)
        .unwrap();
    assert_eq!(run2.parsed.words.head, full.words.head);
}

#[test]
fn dynfs_that_always_locks_stops_after_the_first_group() {
    let (tb, model) = noisy_model(6);
    let sp = spec(-1.0); // w · ψ = 0 is always > -1
    let run = model
        .parse_dynfs(&tb, &sp, Decider::Linear { weights: &sp.weights, threshold: -1.0 }, false, 1)
        .unwrap();
    let st = run.stats;
    assert_eq!(st.evaluated * 4, st.full, "one template of four on every arc");
    assert_eq!(st.rounds, tb.len() as u64);
    assert_eq!(st.early, tb.len() as u64);
    // The tree is the non-projective tree of the first group's scores.
    assert_trees_decode(&model, &tb, &run.parsed, Some(&[0]), DecoderKind::Cle);
}

/// Every tree of `parsed` is what `kind` decodes from `model`'s scores of `tb` over the
/// arc templates `active` (all of them when None).
fn assert_trees_decode(
    model: &GraphModel,
    tb: &Treebank,
    parsed: &Treebank,
    active: Option<&[usize]>,
    kind: DecoderKind,
) {
    let prep = model.prepare(tb);
    let (mut sc, mut ws) = (Scratch::default(), DecodeWs::default());
    for s in 0..tb.len() {
        let scores = model.arc_scores(tb, &prep, s, active, false, None, &mut sc).unwrap();
        let heads = ws.first(kind, &scores, tb.heads(s).len() + 1).unwrap();
        let start = tb.sentences[s].start as usize;
        assert_eq!(&heads[1..], &parsed.words.head[start..start + heads.len() - 1], "sentence {s}");
    }
}

#[test]
fn the_expert_locks_only_gold_arcs_and_records_its_states() {
    let (tb, model) = noisy_model(7);
    let sp = spec(0.0);
    let never = model
        .parse_dynfs(&tb, &sp, Decider::Linear { weights: &sp.weights, threshold: 1.0 }, false, 1)
        .unwrap();
    let expert = model.parse_dynfs(&tb, &sp, Decider::Expert, true, 1).unwrap();
    let (uas_never, _) = crate::eval::attachment(&tb, &never.parsed).unwrap();
    let (uas_expert, _) = crate::eval::attachment(&tb, &expert.parsed).unwrap();
    assert!(uas_expert > uas_never + 5.0, "expert {uas_expert} vs full {uas_never}");
    assert!(expert.stats.evaluated < expert.stats.full);
    let st = expert.stats;
    assert!(st.locks > 0 && st.locks < st.decisions);
    assert_eq!(expert.labels.len() as u64, st.decisions);
    assert_eq!(expert.rows.len(), expert.labels.len() * dynfs::n_features(3));
    assert_eq!(expert.labels.iter().filter(|&&l| l == 1).count() as u64, st.locks);
    // Without recording: the same parse, no rows.
    let quiet = model.parse_dynfs(&tb, &sp, Decider::Expert, false, 1).unwrap();
    assert_eq!(quiet.parsed.words.head, expert.parsed.words.head);
    assert!(quiet.rows.is_empty());
}

#[test]
fn dynfs_specs_and_models_are_checked_and_round_trip() {
    let (tb, mut model) = noisy_model(8);
    let bad = |groups: Vec<Vec<u32>>, n_w: usize| Dynfs {
        groups,
        weights: vec![0.0; n_w],
        threshold: 0.0,
        arc_w: None,
        prune_margin: None,
        tree_margin: None,
        label: None,
        lex: Vec::new(),
    };
    assert!(
        bad(vec![vec![0, 1], vec![2]], dynfs::n_features(2)).check(4, 0).is_err(),
        "template 3 in no group"
    );
    assert!(bad(vec![vec![0, 1], vec![1, 2, 3]], dynfs::n_features(2)).check(4, 0).is_err(), "in two groups");
    assert!(bad(vec![vec![0, 1, 2, 9]], dynfs::n_features(1)).check(4, 0).is_err(), "out of range");
    assert!(bad(vec![vec![0, 1], vec![], vec![2, 3]], dynfs::n_features(3)).check(4, 0).is_err(), "empty");
    assert!(bad(vec![vec![0, 1], vec![2, 3]], 3).check(4, 0).is_err(), "weights");
    assert!(bad(vec![vec![0, 1], vec![2, 3]], dynfs::n_features(2)).check(4, 0).is_ok());
    let wrong = bad(vec![vec![0, 1], vec![2, 3]], dynfs::n_features(2));
    assert!(model
        .parse_dynfs(&tb, &wrong, Decider::Linear { weights: &[0.0; 3], threshold: 0.0 }, false, 1)
        .is_err());

    let mut sp = spec(0.25);
    sp.weights[3] = 2.0;
    model.dynfs = Some(sp.clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.depfs");
    model.save(&path).unwrap();
    let back = GraphModel::load(&path).unwrap();
    assert_eq!(back.dynfs, Some(sp));
    assert_eq!(crate::io::model::peek_kind(&path).unwrap(), "graph");
}

#[test]
fn a_policy_that_locks_before_the_last_group_skips_exactly_that_group() {
    let (tb, model) = noisy_model(9);
    let mut sp = spec(0.5);
    // Only the one-hot of "next group = 3" (index 2) pushes w · ψ over the threshold.
    sp.weights[dynfs::BASE_FEATURES + 2] = 1.0;
    let run = model
        .parse_dynfs(&tb, &sp, Decider::Linear { weights: &sp.weights, threshold: 0.5 }, false, 1)
        .unwrap();
    let st = run.stats;
    assert_eq!(st.evaluated * 4, st.full * 3, "groups 1 and 2 (three templates of four) on every arc");
    assert_eq!(st.rounds, 2 * tb.len() as u64);
    assert_eq!(st.locks + st.propagated, tb.n_words() as u64);
}

/// A toy second-order model with random arc and sibling weights (arc templates 0..4,
/// sibling templates 4..6 in the spec's numbering).
fn noisy_model2(seed: u64) -> (Treebank, GraphModel) {
    let tb = toy(30, 12);
    let config = GraphConfig { order: 2, epochs: 1, prune: false, ..Default::default() };
    let m = train(&tb, small_templates(), config, |_, _| {}).unwrap();
    let arc = QuantizedWeights::quantize(&random_weights(&m.arc, 6, seed));
    let sib = QuantizedWeights::quantize(&random_weights(&m.sib, 6, seed + 100));
    (tb, m.with_weights(arc, sib, m.lab_w.clone()))
}

/// Three first-order groups, then the two sibling templates one group each.
fn spec2(threshold: f32) -> Dynfs {
    spec_of(vec![vec![0], vec![2, 1], vec![3], vec![5], vec![4]], threshold)
}

fn linear(sp: &Dynfs) -> Decider<'_> {
    Decider::Linear { weights: &sp.weights, threshold: sp.threshold }
}

#[test]
fn second_order_dynfs_that_never_locks_is_the_full_second_order_parse() {
    let (tb, model) = noisy_model2(21);
    let full = model.parse(&tb, 1).unwrap();
    let sp = spec2(1.0);
    let run = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    assert_eq!(run.parsed.words.head, full.words.head);
    assert_eq!(run.parsed.words.deprel, full.words.deprel);
    let st = run.stats;
    assert_eq!((st.locks, st.evaluated), (0, st.full));
    assert_eq!(st.sib_evaluated, st.sib_full, "every usable part gets both sibling groups");
    assert!(st.sib_full > 0);
    assert_eq!(st.rounds, 5 * tb.len() as u64);
    let run2 = model.parse_dynfs(&tb, &sp, linear(&sp), false, 2).unwrap();
    assert_eq!(run2.parsed.words.head, full.words.head, "threads do not change the parse");
}

#[test]
fn sibling_scores_change_the_second_order_parse_of_the_toy_model() {
    // Without this, the test above could pass with the sibling rounds doing nothing.
    let (tb, model) = noisy_model2(21);
    let full = model.parse(&tb, 1).unwrap();
    let mut sp = spec2(0.5);
    // Lock every arc before the first sibling group (next group index 3): the parse is
    // then the first-order projective tree of round K₁ and no sibling part is scored.
    sp.weights[dynfs::BASE_FEATURES + 3] = 1.0;
    let run = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    let st = run.stats;
    assert_eq!(st.evaluated, st.full, "every first-order group on every arc");
    assert_eq!(st.sib_evaluated, 0);
    assert_eq!(st.locks + st.propagated, tb.n_words() as u64);
    assert_ne!(run.parsed.words.head, full.words.head, "sibling scores change some tree");
    assert_trees_decode(&model, &tb, &run.parsed, None, DecoderKind::Eisner);
}

#[test]
fn second_order_locks_in_a_sibling_round_skip_exactly_the_last_sibling_group() {
    let (tb, model) = noisy_model2(22);
    let mut sp = spec2(0.5);
    // Lock only before the last group (index 4): both sibling rounds' decisions before
    // it add, the last one locks everything.
    sp.weights[dynfs::BASE_FEATURES + 4] = 1.0;
    let run = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    let st = run.stats;
    assert_eq!(st.evaluated, st.full);
    // Template 5 (one of two sibling templates) on every usable part.
    assert_eq!(2 * st.sib_evaluated, st.sib_full);
    assert_eq!(st.rounds, 4 * tb.len() as u64);
    assert_eq!(st.locks + st.propagated, tb.n_words() as u64);
    // Every word is attached and every tree projective (Eisner2's).
    for s in 0..tb.len() {
        let start = tb.sentences[s].start as usize;
        let n = tb.heads(s).len();
        let mut heads = vec![-1];
        heads.extend_from_slice(&run.parsed.words.head[start..start + n]);
        assert!(crate::heads::is_projective(&heads[1..]), "sentence {s}: {heads:?}");
    }
}

#[test]
fn the_second_order_expert_locks_only_gold_arcs() {
    let (tb, model) = noisy_model2(23);
    let sp = spec2(1.0);
    let never = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    let expert = model.parse_dynfs(&tb, &sp, Decider::Expert, true, 1).unwrap();
    let (uas_never, _) = crate::eval::attachment(&tb, &never.parsed).unwrap();
    let (uas_expert, _) = crate::eval::attachment(&tb, &expert.parsed).unwrap();
    assert!(uas_expert > uas_never + 5.0, "expert {uas_expert} vs full {uas_never}");
    let st = expert.stats;
    assert!(st.sib_evaluated < st.sib_full && st.evaluated < st.full);
    assert_eq!(expert.rows.len(), expert.labels.len() * dynfs::n_features(5));
    assert_eq!(expert.labels.iter().filter(|&&l| l == 1).count() as u64, st.locks);
    // Before the second sibling group the policy sees what the first one changed: its
    // scores are arc + best sibling part (the arc sums no longer change).
    let width = dynfs::n_features(5);
    let after_sib: Vec<&[f32]> =
        expert.rows.chunks(width).filter(|r| r[dynfs::BASE_FEATURES + 4] == 1.0).collect();
    assert!(!after_sib.is_empty());
    assert!(after_sib.iter().any(|r| r[12] != 0.0), "the score's change with the sibling group");
}

#[test]
fn second_order_specs_are_checked() {
    let (tb, model) = noisy_model2(24);
    let with = |groups: Vec<Vec<u32>>| Dynfs {
        weights: vec![0.0; dynfs::n_features(groups.len())],
        groups,
        threshold: 0.0,
        arc_w: None,
        prune_margin: None,
        tree_margin: None,
        label: None,
        lex: Vec::new(),
    };
    let err = |g: Vec<Vec<u32>>| model.check_dynfs(&with(g)).unwrap_err().to_string();
    assert!(err(vec![vec![0, 1, 2, 3]]).contains("sibling template 0 is in no group"));
    assert!(err(vec![vec![0, 1, 2, 3, 4], vec![5]]).contains("mixes"));
    assert!(err(vec![vec![0, 1], vec![4, 5], vec![2, 3]]).contains("first-order groups come first"));
    assert!(err(vec![vec![4, 5], vec![0, 1, 2, 3]]).contains("first group"));
    assert!(err(vec![vec![0, 1, 2, 3], vec![4, 5, 6]]).contains("out of range"));
    assert!(model.check_dynfs(&with(vec![vec![0, 1, 2, 3], vec![4, 5]])).is_ok());
    // A first-order model has no sibling templates.
    let (_, first) = noisy_model(8);
    assert!(first.check_dynfs(&with(vec![vec![0, 1, 2, 3], vec![4, 5]])).is_err());
    // Saved and loaded with the spec.
    let mut m = model.clone();
    m.dynfs = Some(spec2(0.25));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m2.depfs");
    m.save(&path).unwrap();
    assert_eq!(GraphModel::load(&path).unwrap().dynfs, Some(spec2(0.25)));
    let _ = tb;
}

/// The sibling parts a tree can use: scored exactly where arc h → m and (s ≠ h) arc
/// h → s are allowed, with the bits of each part's sum template by template (the
/// batched scorer's rows located in one pass, summed in another), and counted.
#[test]
fn sibling_parts_are_scored_only_where_both_arcs_are_allowed() {
    let (tb, model) = noisy_model2(25);
    let prep = model.prepare(&tb);
    let mut rng = Rng::new(5);
    let mut sent = ArcSent::default();
    let active: Vec<usize> = (0..model.sib.len()).collect();
    let (sf, sw) = (&model.sib, &model.sib_w);
    for s in 0..tb.len() {
        model.sib.prepare(&prep.sib, &tb, s, &mut sent);
        let n1 = sent.n1;
        let reference = |h: usize, m: usize, x: usize| {
            let second = Second { sib: (x != h).then_some(x), grand: None };
            let mut acc = 0f32;
            for &t in &active {
                sf.for_each(&sent, t, h, m, second, |f| acc += sw.get(t, f));
            }
            acc as f64
        };
        let arc: Vec<f64> = (0..n1 * n1)
            .map(|_| if rng.next_u64().is_multiple_of(3) { f64::NEG_INFINITY } else { 0.0 })
            .collect();
        let mut got = vec![0.0; n1 * n1 * n1];
        // Half the modifiers one at a time, the rest in one call, scored 7 parts at a time.
        let mut buf = score::SibParts::with_batch(7);
        let (one, rest): (Vec<usize>, Vec<usize>) = (1..n1).partition(|m| m % 2 == 0);
        let mut parts = 0;
        for m in one {
            parts += score::add_sibling_parts(
                &model.sib,
                &model.sib_w,
                &sent,
                &active,
                &arc,
                &[m],
                &mut buf,
                &mut got,
            );
        }
        parts += score::add_sibling_parts(
            &model.sib,
            &model.sib_w,
            &sent,
            &active,
            &arc,
            &rest,
            &mut buf,
            &mut got,
        );
        let mut want_parts = 0;
        for m in 1..n1 {
            for h in (0..n1).filter(|&h| h != m) {
                for x in 0..n1 {
                    let i = (m * n1 + h) * n1 + x;
                    let between = (h.min(m) < x && x < h.max(m)) || x == h;
                    let usable =
                        between && arc[m * n1 + h].is_finite() && (x == h || arc[x * n1 + h].is_finite());
                    want_parts += u64::from(usable);
                    let want = if usable { reference(h, m, x) } else { 0.0 };
                    assert_eq!(got[i], want, "sentence {s}: part ({h}, {m}, {x})");
                }
            }
        }
        assert_eq!(parts, want_parts, "sentence {s}");
        assert_eq!(score::count_sibling_parts(&arc, n1), want_parts, "sentence {s}");
    }
}

#[test]
fn second_order_rounds_switch_to_the_models_own_arc_sums_before_the_sibling_rounds() {
    // The first-order rounds score with other (the rounds') weights; a policy that never
    // locks still gives the full second-order parse, and one that locks everything
    // before the sibling groups gives the rounds' weights' projective tree.
    let (tb, model) = noisy_model2(26);
    let full = model.parse(&tb, 1).unwrap();
    let rounds = QuantizedWeights::quantize(&random_weights(&model.arc, 6, 77));
    let mut sp = spec2(1.0);
    sp.arc_w = Some(std::sync::Arc::new(rounds.clone()));
    let run = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    assert_eq!(run.parsed.words.head, full.words.head);
    let mut locking = sp.clone();
    locking.threshold = 0.5;
    locking.weights[dynfs::BASE_FEATURES + 3] = 1.0;
    let run = model.parse_dynfs(&tb, &locking, linear(&locking), false, 1).unwrap();
    let other = model.with_weights(rounds, model.sib_w.clone(), model.lab_w.clone());
    let prep = model.prepare(&tb);
    let (mut sc, mut ws) = (Scratch::default(), DecodeWs::default());
    let mut differ = false;
    for s in 0..tb.len() {
        let scores = other.arc_scores(&tb, &prep, s, None, false, None, &mut sc).unwrap();
        let heads = ws.first(DecoderKind::Eisner, &scores, tb.heads(s).len() + 1).unwrap();
        let start = tb.sentences[s].start as usize;
        let got = &run.parsed.words.head[start..start + heads.len() - 1];
        assert_eq!(&heads[1..], got, "sentence {s}");
        differ |= got != &full.words.head[start..start + heads.len() - 1];
    }
    assert!(differ, "the rounds' weights give other trees than the full model");
}

/// The toy model with a labeler of five templates and random label weights (8-bit, a
/// scale per template), so that leads vary from word to word and template to template.
fn label_model(seed: u64) -> (Treebank, GraphModel) {
    let tb = toy(20, 12);
    let mut templates = small_templates();
    let lab = "upos(h) & upos(m) & dir\nform(m)\nform(h)\nupos(m) & dist\nform(h) & upos(m)";
    templates.lab = TemplateSet::parse(lab, Family::Arc, 3).unwrap();
    let m = train(&tb, templates, GraphConfig { epochs: 1, ..Default::default() }, |_, _| {}).unwrap();
    let width = m.labels.len();
    let mut w = Weights::uniform(m.lab.len(), 5, width).unwrap();
    let mut rng = Rng::new(seed);
    for t in 0..m.lab.len() {
        for r in 0..32u64 {
            for k in 0..width {
                w.update(t, r, k, (rng.next_u64() % 1000) as f32 / 100.0 - 5.0);
            }
        }
    }
    let lab_w = QuantizedWeights::quantize(&w);
    (tb.clone(), m.with_weights(m.arc_w.clone(), m.sib_w.clone(), lab_w))
}

/// Algorithm 1 of Strubell et al. on one word's label, written plainly: templates in
/// `stop.order`, each one's rows added (`add_row`), the lead (best minus second, by a
/// sort) checked after every `every`-th; the label (first best) and templates added.
fn reference_label(model: &GraphModel, sent: &ArcSent, h: usize, m: usize, stop: &LabelStop) -> (u32, u64) {
    reference_label_among(model, sent, h, m, stop, None)
}

/// [`reference_label`] among the labels `allowed` only (None: all): the others start at
/// −inf; one label allowed is taken with no template. UD's root rule: an arc from ROOT
/// takes `root` with no template, another arc any label but `root`.
fn reference_label_among(
    model: &GraphModel,
    sent: &ArcSent,
    h: usize,
    m: usize,
    stop: &LabelStop,
    allowed: Option<&std::collections::BTreeSet<u32>>,
) -> (u32, u64) {
    let root = model.root_label();
    if let (Some(r), 0) = (root, h) {
        return (r, 0);
    }
    let allowed = allowed.filter(|a| root.is_none() || a.iter().ne(root.iter()));
    if let Some(a) = allowed.filter(|a| a.len() == 1) {
        return (*a.first().unwrap(), 0);
    }
    let width = model.lab_w.width();
    let mut scores: Vec<f32> =
        (0..width as u32)
            .map(|l| {
                if allowed.is_none_or(|a| a.contains(&l)) && Some(l) != root {
                    0.0
                } else {
                    f32::NEG_INFINITY
                }
            })
            .collect();
    for (j, &t) in stop.order.iter().enumerate() {
        let t = t as usize;
        model.lab.for_each(sent, t, h, m, Second::default(), |f| model.lab_w.add_row(t, f, &mut scores));
        let mut sorted = scores.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        let lead = if sorted.len() > 1 { sorted[0] - sorted[1] } else { f32::INFINITY };
        if (j + 1) % stop.every as usize == 0 && lead > stop.margin * stop.scale[j] {
            return (score::argmax(&scores) as u32, j as u64 + 1);
        }
    }
    (score::argmax(&scores) as u32, stop.order.len() as u64)
}

#[test]
fn the_labeler_stops_at_the_first_checked_template_whose_lead_exceeds_the_margin() {
    let (tb, model) = label_model(3);
    let prep = model.prepare(&tb);
    let (mut sc, mut sent) = (Scratch::default(), ArcSent::default());
    let (mut stopped_early, mut words) = (0u64, 0u64);
    for every in [1, 2] {
        for margin in [0.0, 3.0, 8.0, 1e30] {
            let stop = LabelStop {
                order: vec![3, 0, 4, 1, 2],
                margin,
                scale: vec![1.0, 0.8, 0.5, 0.3, 0.0],
                every,
                dict: None,
                weights: None,
            };
            stop.check(model.lab.len()).unwrap();
            for s in 0..tb.len() {
                let heads = gold_heads(&tb, s).unwrap();
                let (labels, used) = model.label_stopped(&tb, &prep, s, &heads, &stop, &mut sc);
                model.lab.prepare(&prep.lab, &tb, s, &mut sent);
                let mut want_used = 0;
                for m in 1..heads.len() {
                    let (label, n) = reference_label(&model, &sent, heads[m] as usize, m, &stop);
                    assert_eq!(labels[m], label, "sentence {s} word {m}, margin {margin}, every {every}");
                    want_used += n;
                    stopped_early += u64::from(n < 5);
                    words += 1;
                }
                assert_eq!(used, want_used, "sentence {s}, margin {margin}, every {every}");
            }
        }
    }
    // The margins above cover words that stop early and words that take every template.
    assert!(stopped_early > 0 && stopped_early < words, "{stopped_early} of {words}");
}

/// `tb` with every third noun's label replaced by one of `labels` (so that the nouns'
/// POS triples have several; the others keep one), and per (head UPOS or ROOT, modifier UPOS, head before
/// modifier) the label indices (into `labels`) seen there, by strings.
#[allow(clippy::type_complexity)]
fn relabelled(
    tb: &Treebank,
    labels: &[String],
    seed: u64,
) -> (Treebank, std::collections::BTreeMap<(String, String, bool), std::collections::BTreeSet<u32>>) {
    let mut tb = tb.clone();
    let mut rng = Rng::new(seed);
    let ids: Vec<u32> = labels
        .iter()
        .map(|l| tb.vocabs.deprel.strings().iter().position(|x| **x == **l).unwrap() as u32)
        .collect();
    let noun = tb.vocabs.upos.strings().iter().position(|x| &**x == "NOUN").unwrap() as u32;
    for (d, _) in tb.words.deprel.iter_mut().zip(&tb.words.upos).filter(|(_, &u)| u == noun).step_by(3) {
        *d = ids[(rng.next_u64() % ids.len() as u64) as usize];
    }
    let mut seen: std::collections::BTreeMap<_, std::collections::BTreeSet<u32>> = Default::default();
    for s in 0..tb.len() {
        let r = tb.sentences[s].range();
        let upos = |i: usize| tb.vocabs.upos.str(tb.words.upos[r.start + i]).to_string();
        for (i, (&h, &d)) in tb.heads(s).iter().zip(tb.deprels(s)).enumerate() {
            let head = if h == 0 { "<ROOT>".to_string() } else { upos(h as usize - 1) };
            let label = tb.vocabs.deprel.str(d);
            let l = labels.iter().position(|x| x == label).unwrap() as u32;
            seen.entry((head, upos(i), (h as usize) < i + 1)).or_default().insert(l);
        }
    }
    (tb, seen)
}

#[test]
fn the_label_dictionary_scores_only_the_labels_seen_for_an_arcs_pos_triple() {
    let (tb, model) = label_model(5);
    let (seen_tb, seen) = relabelled(&tb, &model.labels, 9);
    let dict = label_stop::LabelDict::build(&seen_tb, &model.labels);
    assert_eq!(dict.len(), seen.len());
    // ADV's triples left out: an unseen triple allows every label.
    let adv = crate::templates::hash::hash_str("ADV");
    let entries: Vec<_> = dict.entries().into_iter().filter(|e| e.1 != adv).collect();
    let dict = label_stop::LabelDict::from_entries(entries, model.labels.len()).unwrap();
    let prep = model.prepare(&tb);
    let (mut sc, mut sent) = (Scratch::default(), ArcSent::default());
    let (mut single, mut several, mut unseen, mut other) = (0, 0, 0, 0);
    for margin in [0.0, 3.0, 1e30] {
        let stop = LabelStop {
            order: vec![3, 0, 4, 1, 2],
            margin,
            scale: vec![1.0, 0.8, 0.5, 0.3, 0.0],
            every: 2,
            dict: Some(dict.clone()),
            weights: None,
        };
        let plain = LabelStop { dict: None, ..stop.clone() };
        for s in 0..tb.len() {
            let heads = gold_heads(&tb, s).unwrap();
            let (labels, used) = model.label_stopped(&tb, &prep, s, &heads, &stop, &mut sc);
            let (plain_labels, _) = model.label_stopped(&tb, &prep, s, &heads, &plain, &mut sc);
            model.lab.prepare(&prep.lab, &tb, s, &mut sent);
            let r = tb.sentences[s].range();
            let upos = |i: usize| tb.vocabs.upos.str(tb.words.upos[r.start + i]).to_string();
            let mut want_used = 0;
            for m in 1..heads.len() {
                let h = heads[m] as usize;
                let head = if h == 0 { "<ROOT>".to_string() } else { upos(h - 1) };
                let mod_pos = upos(m - 1);
                let allowed = if mod_pos == "ADV" { None } else { seen.get(&(head, mod_pos, h < m)) };
                let (label, n) = reference_label_among(&model, &sent, h, m, &stop, allowed);
                assert_eq!(labels[m], label, "sentence {s} word {m}, margin {margin}");
                want_used += n;
                match allowed.map(|a| a.len()) {
                    None => unseen += 1,
                    Some(1) => single += 1,
                    Some(_) => several += 1,
                }
                other += u32::from(labels[m] != plain_labels[m]);
            }
            assert_eq!(used, want_used, "sentence {s}, margin {margin}");
        }
    }
    // Every kind of word is met, and the dictionary changes some labels.
    assert!(single > 0 && several > 0 && unseen > 0, "{single} {several} {unseen}");
    assert!(other > 0);
}

#[test]
fn a_label_dictionary_is_refused_unless_it_fits_and_is_stored_in_its_own_variant() {
    let (tb, mut model) = label_model(6);
    let n = model.labels.len();
    let bad = |e: Vec<(u64, u64, bool, Vec<u32>)>| label_stop::LabelDict::from_entries(e, n).is_err();
    assert!(bad(vec![(1, 2, true, vec![])]));
    assert!(bad(vec![(1, 2, true, vec![n as u32])]));
    assert!(bad(vec![(1, 2, true, vec![0, 0])]));
    assert!(bad(vec![(1, 2, true, vec![0]), (1, 2, true, vec![1])]));
    assert!(!bad(vec![(1, 2, true, vec![1, 0]), (1, 2, false, vec![1])]));
    let (seen_tb, _) = relabelled(&tb, &model.labels, 2);
    let dict = label_stop::LabelDict::build(&seen_tb, &model.labels);
    let mut sp = spec_of(vec![vec![0, 1, 2, 3]], 0.0);
    let stop = LabelStop {
        order: vec![4, 3, 2, 1, 0],
        margin: 2.0,
        scale: vec![1.0; 5],
        every: 1,
        dict: Some(dict.clone()),
        weights: None,
    };
    sp.label = Some(stop.clone());
    let with = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    model.dynfs = Some(sp.clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dict.depfs");
    model.save(&path).unwrap();
    assert!(matches!(
        crate::io::model::load_model(&path).unwrap().model,
        crate::io::model::Model::GraphDynfsLabelDict(_)
    ));
    let back = GraphModel::load(&path).unwrap();
    assert_eq!(back.dynfs, Some(sp.clone()));
    let again = back.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    assert_eq!(again.parsed.words.deprel, with.parsed.words.deprel);
    // Without the dictionary: the variant of the stop alone, as before.
    sp.label = Some(LabelStop { dict: None, ..stop });
    model.dynfs = Some(sp.clone());
    model.save(&path).unwrap();
    assert!(matches!(
        crate::io::model::load_model(&path).unwrap().model,
        crate::io::model::Model::GraphDynfsLabeled(_)
    ));
    // A label beyond the model's labels is refused in a spec.
    let wide = label_stop::LabelDict::from_entries(vec![(1, 2, true, vec![n as u32])], n + 1).unwrap();
    sp.label.as_mut().unwrap().dict = Some(wide);
    assert!(model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).is_err());
}

#[test]
fn an_infinite_label_margin_is_the_full_labeler_and_dynfs_counts_the_labelers_templates() {
    let (tb, mut model) = label_model(4);
    let full = model.parse(&tb, 1).unwrap();
    let mut sp = spec_of(vec![vec![0, 1, 2, 3]], 0.0);
    let order = vec![4, 3, 2, 1, 0];
    for (margin, every) in [(f32::INFINITY, 1), (1e30, 1), (1e30, 3)] {
        sp.label = Some(LabelStop {
            order: order.clone(),
            margin,
            scale: vec![1.0; 5],
            every,
            dict: None,
            weights: None,
        });
        let run = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
        // One group: the full model's arcs; every template of the labeler, in another
        // order (the same sums but for rounding: the toy's labels agree).
        assert_eq!(run.parsed.words.head, full.words.head);
        assert_eq!(run.parsed.words.deprel, full.words.deprel, "margin {margin}");
        // Every template, but none for a word attached to ROOT (its label is `root`).
        assert!(model.root_label().is_some());
        assert_eq!(run.stats.lab_full, (tb.words.head.len() - tb.len()) as u64 * 5);
        assert_eq!(run.stats.lab_evaluated, run.stats.lab_full);
    }
    // A finite margin saves templates; the counts follow.
    sp.label = Some(LabelStop {
        order: order.clone(),
        margin: 2.0,
        scale: vec![1.0; 5],
        every: 1,
        dict: None,
        weights: None,
    });
    let run = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    assert!(run.stats.lab_evaluated < run.stats.lab_full, "{:?}", run.stats);
    // A stop that does not fit the labeler is refused, in a spec and in a model file.
    let bad = LabelStop {
        order: vec![0, 1, 2],
        margin: 2.0,
        scale: vec![1.0; 3],
        every: 1,
        dict: None,
        weights: None,
    };
    sp.label = Some(bad);
    assert!(model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).is_err());
    sp.label = Some(LabelStop {
        order,
        margin: 2.0,
        scale: vec![1.0, 0.5, 0.5, 0.25, 0.0],
        every: 2,
        dict: None,
        weights: None,
    });
    model.dynfs = Some(sp.clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("labeled.depfs");
    model.save(&path).unwrap();
    let back = GraphModel::load(&path).unwrap();
    assert_eq!(back.dynfs, Some(sp.clone()));
    // Without a stop rule the file is the variant older builds write.
    let mut plain = model.clone();
    plain.dynfs.as_mut().unwrap().label = None;
    let old = dir.path().join("plain.depfs");
    plain.save(&old).unwrap();
    assert!(matches!(
        crate::io::model::load_model(&old).unwrap().model,
        crate::io::model::Model::GraphDynfs(_)
    ));
    assert_eq!(GraphModel::load(&old).unwrap().dynfs.unwrap().label, None);
}

#[test]
fn first_order_last_round_rescores_the_earlier_groups_under_the_models_own_weights() {
    // The rounds (groups 1 and 2) score with other weights; the projective last round
    // recomputes them under the model's own on the arcs still open, so a policy that
    // never locks gives the full parse, and the cost counts each group once per arc.
    let (tb, model) = noisy_model(31);
    let full = model.parse(&tb, 1).unwrap();
    let rounds = QuantizedWeights::quantize(&random_weights(&model.arc, 6, 91));
    let mut sp = spec(1.0);
    sp.arc_w = Some(std::sync::Arc::new(rounds.clone()));
    let run = model.parse_dynfs(&tb, &sp, linear(&sp), false, 1).unwrap();
    assert_eq!(run.parsed.words.head, full.words.head);
    assert_eq!(run.stats.locks, 0);
    assert_eq!(run.stats.evaluated, run.stats.full, "every arc gets every group, counted once");
    // The rounds' weights alone (every group, no switch) parse otherwise.
    let other = model.with_weights(rounds, model.sib_w.clone(), model.lab_w.clone());
    assert_ne!(other.parse(&tb, 1).unwrap().words.head, full.words.head);
}

/// A labeler trained with `label_prefix` on `tb` (or plainly with None), 3 epochs.
fn prefix_labeler(tb: &Treebank, label_prefix: Option<(Vec<u32>, usize)>) -> GraphModel {
    let mut templates = small_templates();
    let lab = "upos(h) & upos(m) & dir\nform(m)\nform(h)\nupos(m) & dist\nform(h) & upos(m)";
    templates.lab = TemplateSet::parse(lab, Family::Arc, 3).unwrap();
    let mut t = GraphTrainer::new(tb, templates, GraphConfig::default()).unwrap();
    if let Some((order, every)) = label_prefix {
        t.set_label_prefix(order, every, 5.0, 5.0).unwrap();
    }
    for _ in 0..3 {
        t.epoch().unwrap();
    }
    t.model()
}

#[test]
fn a_prefix_trained_labelers_first_template_is_a_labeler_of_its_own_and_the_arcs_stay() {
    // `upos(m) & dist` first: enough alone for the toy's labels other than ROOT's (dist
    // tells a subject from an object), but the plain labeler leans on the others.
    let tb = toy(60, 3);
    let order = vec![3, 0, 1, 2, 4];
    let plain = prefix_labeler(&tb, None);
    let trained = prefix_labeler(&tb, Some((order.clone(), 1)));
    assert_eq!(plain.arc_w, trained.arc_w, "the labeler's prefixes must not move the arcs");
    // Accuracy of the first template's row alone (argmax; `root` never, as the stop).
    let first = |m: &GraphModel| {
        let (prep, mut sent) = (m.prepare(&tb), ArcSent::default());
        let (t, root) = (order[0] as usize, m.root_label().unwrap() as usize);
        let (mut right, mut words) = (0u32, 0u32);
        let mut row = vec![0f32; m.lab_w.width()];
        for s in 0..tb.len() {
            let heads = gold_heads(&tb, s).unwrap();
            m.lab.prepare(&prep.lab, &tb, s, &mut sent);
            for (w, &d) in tb.deprels(s).iter().enumerate().filter(|&(w, _)| heads[w + 1] != 0) {
                row.fill(0.0);
                m.lab.for_each(&sent, t, heads[w + 1] as usize, w + 1, Second::default(), |f| {
                    m.lab_w.add_row(t, f, &mut row)
                });
                row[root] = f32::NEG_INFINITY;
                right += u32::from(m.labels[score::argmax(&row)] == tb.vocabs.deprel.str(d));
                words += 1;
            }
        }
        f64::from(right) / f64::from(words)
    };
    let (p, t) = (first(&plain), first(&trained));
    assert!(t > 0.99 && t > p + 0.2, "first template alone: prefix-trained {t:.3}, plain {p:.3}");
    // Checked: an order that is no permutation, no interval, a negative margin or step.
    let mut tr = GraphTrainer::new(&tb, small_templates(), GraphConfig::default()).unwrap();
    for (order, every, margin, full) in [
        (vec![0, 0], 1, 1.0, 1.0),
        (vec![0], 1, 1.0, 1.0),
        (vec![1, 0], 0, 1.0, 1.0),
        (vec![1, 0], 1, -1.0, 1.0),
        (vec![1, 0], 1, 1.0, f32::NAN),
    ] {
        assert!(
            tr.set_label_prefix(order.clone(), every, margin, full).is_err(),
            "{order:?} {every} {margin} {full}"
        );
    }
    tr.set_label_prefix(vec![1, 0], 1, 0.0, 0.0).unwrap();
}

#[test]
fn the_stop_adds_its_own_weights_when_it_has_them() {
    // Model a's stop with model b's labeler weights labels as b's stop with its own.
    let tb = toy(40, 5);
    let order = vec![1, 0, 2, 3, 4];
    let a = prefix_labeler(&tb, None);
    let b = prefix_labeler(&tb, Some((order.clone(), 2)));
    let stop = LabelStop {
        order,
        margin: 1.5,
        scale: vec![1.0, 0.8, 0.5, 0.3, 0.0],
        every: 2,
        dict: None,
        weights: None,
    };
    let with_b = LabelStop { weights: Some(std::sync::Arc::new(b.lab_w.clone())), ..stop.clone() };
    let (prep, mut sc) = (a.prepare(&tb), Scratch::default());
    let mut differ = 0;
    for s in 0..tb.len() {
        let heads = gold_heads(&tb, s).unwrap();
        let got = a.label_stopped(&tb, &prep, s, &heads, &with_b, &mut sc);
        assert_eq!(got, b.label_stopped(&tb, &prep, s, &heads, &stop, &mut sc), "sentence {s}");
        differ += usize::from(got != a.label_stopped(&tb, &prep, s, &heads, &stop, &mut sc));
        // An infinite margin is the model's own full labeler, whatever the stop adds.
        let full = LabelStop { margin: f32::INFINITY, ..with_b.clone() };
        assert_eq!(
            a.label_stopped(&tb, &prep, s, &heads, &full, &mut sc).0,
            a.label(&tb, &prep, s, &heads, &mut sc)
        );
    }
    assert!(differ > 0, "the two labelers never differ: the test would not see a mix-up");
    // Weights of another labeler shape are refused.
    let other = LabelStop { weights: Some(std::sync::Arc::new(a.arc_w.clone())), ..stop };
    assert!(a.check_dynfs(&Dynfs { label: Some(other), ..spec(0.0) }).is_err());
}
