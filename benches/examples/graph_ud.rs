//! Train and evaluate the graph parser on a UD treebank:
//! `cargo run --release -p depfs-benches --example graph_ud -- en_ewt [order] [decoder] [epochs]`.
//! Reads $DEPFS_DATA/<tb>/{train,dev,test}.conllu (default ../shared/data/ud); MAX_BITS sets the
//! largest weight block (2^bits rows). Prints per-epoch DEV scores (choose templates and
//! epochs on these), then the final model's test scores, the share of template evaluations
//! the length dictionary saves, and parse speed (wall and CPU time).
//! UPDATE=perceptron selects the perceptron (default MIRA); COST_AUG=0 turns off
//! cost-augmented training decodes; ARC_TEMPLATES=file replaces the
//! first-order set, SIB_TEMPLATES=file the second-order (sibling) set; NO_TEST=1 reports the
//! final scores on dev instead of test (for selection runs that must not see test).

use depfs_core::eval::attachment;
use depfs_core::graph::{train, DecoderKind, GraphConfig, GraphTemplates};
use depfs_core::Treebank;
use std::time::Instant;

fn load(path: &str) -> Treebank {
    depfs_core::io::conllu::read_path(path, &Default::default()).expect("read treebank")
}

/// CPU time of this process in seconds (Linux; the machine may be shared, so wall time overstates).
fn cpu_seconds() -> f64 {
    // utime + stime of all threads, fields 14 and 15 of /proc/self/stat, in 1/100 s.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = after.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
    f.get(11).zip(f.get(12)).map_or(0.0, |(u, s)| (u + s) / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map_or("en_ewt", String::as_str);
    let order: u8 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let decoder = DecoderKind::parse(args.get(3).map_or("eisner", String::as_str)).expect("decoder");
    let epochs: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(10);
    let data = std::env::var("DEPFS_DATA").unwrap_or_else(|_| "../shared/data/ud".into());
    let train_tb = load(&format!("{data}/{name}/train.conllu"));
    let dev_tb = load(&format!("{data}/{name}/dev.conllu"));
    let no_test = std::env::var("NO_TEST").is_ok_and(|v| v == "1");
    let (final_name, test_tb) =
        if no_test { ("dev", dev_tb.clone()) } else { ("test", load(&format!("{data}/{name}/test.conllu"))) };
    let max_bits: u32 = std::env::var("MAX_BITS").ok().and_then(|s| s.parse().ok()).unwrap_or(18);
    let update = match std::env::var("UPDATE").as_deref() {
        Ok("perceptron") => depfs_core::graph::Update::Perceptron,
        _ => depfs_core::graph::Update::Mira { c: 1.0 },
    };
    let cost_augmented = std::env::var("COST_AUG").map_or(true, |v| v != "0");
    let config =
        GraphConfig { order, decoder, epochs, max_bits, update, cost_augmented, ..Default::default() };
    let t0 = Instant::now();
    let mut templates = GraphTemplates::defaults().expect("templates");
    if let Ok(path) = std::env::var("ARC_TEMPLATES") {
        templates.arc =
            depfs_core::templates::TemplateSet::from_file(&path, depfs_core::templates::Family::Arc, 3)
                .expect("arc templates");
    }
    if let Ok(path) = std::env::var("SIB_TEMPLATES") {
        templates.sib =
            depfs_core::templates::TemplateSet::from_file(&path, depfs_core::templates::Family::Arc, 3)
                .expect("sibling templates");
    }
    let model = train(&train_tb, templates, config, |st, tr| {
        let m = tr.model();
        let p = m.parse(&dev_tb, 1).expect("parse");
        let (u, l) = attachment(&dev_tb, &p).expect("scores");
        // The same model before 8-bit quantization, to show what the rounding costs.
        let p32 = tr.model_f32().parse(&dev_tb, 1).expect("parse");
        let (u32_, l32) = attachment(&dev_tb, &p32).expect("scores");
        eprintln!(
            "epoch {} train-uas {:.4} label-acc {:.4} {:.1}s | dev UAS {:.2} LAS {:.2} (f32 weights: {:.2} {:.2})",
            st.epoch,
            st.train_uas,
            st.train_label_acc,
            st.seconds,
            u,
            l,
            u32_,
            l32
        );
    })
    .expect("train");
    let train_s = t0.elapsed().as_secs_f64();
    {
        let prep = model.prepare(&test_tb);
        let mut sc = depfs_core::graph::Scratch::default();
        let mut counts = depfs_core::weights::TemplateCounts::new(model.n_arc_templates());
        let mut counts_all = depfs_core::weights::TemplateCounts::new(model.n_arc_templates());
        for s in 0..test_tb.len() {
            model.arc_scores(&test_tb, &prep, s, None, true, Some(&mut counts), &mut sc).expect("scores");
            model
                .arc_scores(&test_tb, &prep, s, None, false, Some(&mut counts_all), &mut sc)
                .expect("scores");
        }
        let st = model.length_dict.prune_stats(&test_tb);
        println!(
            "template evaluations per word: pruned {:.0}, unpruned {:.0}; dictionary prunes {:.2}% gold, {:.2}% non-gold arcs",
            counts.total() as f64 / test_tb.n_words() as f64,
            counts_all.total() as f64 / test_tb.n_words() as f64,
            100.0 * st.gold_pruned as f64 / st.gold_arcs as f64,
            100.0 * st.other_pruned as f64 / st.other_arcs as f64
        );
    }
    let t1 = Instant::now();
    let c1 = cpu_seconds();
    let parsed = model.parse(&test_tb, 1).expect("parse");
    let parse_s = t1.elapsed().as_secs_f64();
    let parse_cpu = cpu_seconds() - c1;
    let (u, l) = attachment(&test_tb, &parsed).expect("scores");
    println!(
        "{name} {final_name} order {order} {}: UAS {:.2} LAS {:.2} | train {:.0}s (incl. per-epoch dev parses) | parse {:.0} words/s wall, {:.0} words/s CPU (1 thread) | params arc {} sib {} lab {}",
        decoder.name(),
        u,
        l,
        train_s,
        test_tb.n_words() as f64 / parse_s,
        test_tb.n_words() as f64 / parse_cpu,
        model.arc_w.n_params(),
        model.sib_w.n_params(),
        model.lab_w.n_params()
    );
}
