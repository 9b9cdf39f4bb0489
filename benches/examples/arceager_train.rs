//! Trains the arc-eager parser on a UD treebank and reports dev/test scores and
//! parse speed. `cargo run --release -p depfs-benches --example arceager_train -- [lang] [epochs] [templates]`
//! (data from $DEPFS_DATA, default ../shared/data/ud; SAVE=path writes the model).

use std::time::Instant;

use depfs_core::io::conllu::{read_path, ReadOptions};
use depfs_core::templates::defaults;
use depfs_core::transition::parser::{ArcEagerParser, TrainOptions, Trainer};
use depfs_core::Treebank;

/// (UAS, LAS) in percent from the one scorer.
fn scores(gold: &Treebank, sys: &Treebank) -> (f64, f64) {
    depfs_core::eval::attachment(gold, sys).expect("the parse has the gold words")
}

fn main() -> depfs_core::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let lang = args.get(1).map_or("en_ewt", |s| s.as_str());
    let epochs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let set_name = args.get(3).map_or("arc_eager", |s| s.as_str());
    let dir = std::env::var("DEPFS_DATA").unwrap_or_else(|_| "../shared/data/ud".into());
    let read = |split: &str| read_path(format!("{dir}/{lang}/{split}.conllu"), &ReadOptions::default());
    let (train, dev, test) = (read("train")?, read("dev")?, read("test")?);
    let set = match std::fs::read_to_string(set_name) {
        Ok(text) => ArcEagerParser::compile_set(&text)?,
        Err(_) => defaults::load(set_name)?,
    };
    let t0 = Instant::now();
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f64>().ok());
    let mut opts = TrainOptions { epochs, ..TrainOptions::default() };
    if let Some(v) = env("MIN_LIFTED") {
        opts.min_lifted_label_count = v as usize;
    }
    if let Some(v) = env("SEED") {
        opts.seed = v as u64;
    }
    if let Some(v) = env("LABEL_T") {
        opts.label_max_templates = v as usize;
    }
    if let Some(v) = env("EXPLORE_FROM") {
        opts.explore_from = v as usize;
    }
    if let Some(v) = env("EXPLORE_P") {
        opts.explore_p = v;
    }
    if let Some(v) = env("LABEL_MAXF") {
        opts.label_max_features = v as usize;
    }
    if let Some(v) = env("PSEUDO") {
        opts.pseudo_projective = v != 0.0;
    }
    if let Some(v) = env("MAX_BITS") {
        opts.max_bits = v as u32;
    }
    if let Some(v) = env("LABEL_BITS") {
        opts.label_max_bits = v as u32;
    }
    let mut tr = Trainer::new(set, &train, &opts)?;
    println!("prepared in {:.1}s", t0.elapsed().as_secs_f64());
    for _ in 0..epochs {
        let r = tr.epoch();
        if std::env::var_os("NO_DEV").is_some() {
            println!(
                "epoch {} train acc {:.4} ({:.1}s)",
                r.epoch,
                r.train_accuracy,
                t0.elapsed().as_secs_f64()
            );
            continue;
        }
        let p = tr.averaged();
        let (u, l) = scores(&dev, &p.parse(&dev, 1)?);
        // The same parser before 8-bit quantization, to show what the rounding costs.
        let (u32_, l32) = scores(&dev, &tr.averaged_f32().parse(&dev, 1)?);
        println!(
            "epoch {} train acc {:.4} dev UAS {u:.2} LAS {l:.2} (f32 weights: {u32_:.2} {l32:.2}) ({:.1}s)",
            r.epoch,
            r.train_accuracy,
            t0.elapsed().as_secs_f64()
        );
    }
    let p: ArcEagerParser = tr.averaged();
    println!("trained in {:.1}s", t0.elapsed().as_secs_f64());
    if let Ok(path) = std::env::var("SAVE") {
        p.save(std::path::Path::new(&path))?;
    }
    println!(
        "{} templates, {} score labels; move params {}",
        p.n_templates(),
        p.label_templates.len(),
        p.move_weights().n_params()
    );
    let reps: usize = std::env::var("PARSE_REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let t1 = Instant::now();
    let mut out = p.parse(&test, 1)?;
    for _ in 1..reps {
        out = p.parse(&test, 1)?;
    }
    let secs = t1.elapsed().as_secs_f64() / reps as f64;
    let (u, l) = scores(&test, &out);
    println!("test UAS {u:.2} LAS {l:.2}; {:.0} words/s (1 thread)", test.n_words() as f64 / secs);
    // Accuracy on the arcs that are non-projective in the gold trees.
    let (mut np, mut np_u, mut np_l) = (0usize, 0usize, 0usize);
    for s in 0..test.len() {
        let start = test.sentences[s].start as usize;
        for (d, nonprojective) in depfs_core::heads::nonprojective_arcs(test.heads(s)).into_iter().enumerate()
        {
            if !nonprojective {
                continue;
            }
            np += 1;
            let i = start + d;
            if out.words.head[i] == test.words.head[i] {
                np_u += 1;
                if out.vocabs.deprel.str(out.words.deprel[i]) == test.vocabs.deprel.str(test.words.deprel[i])
                {
                    np_l += 1;
                }
            }
        }
    }
    println!(
        "non-projective gold arcs: {np}, attached right {np_u} ({:.1}%), with label {np_l} ({:.1}%)",
        100.0 * np_u as f64 / np.max(1) as f64,
        100.0 * np_l as f64 / np.max(1) as f64
    );
    Ok(())
}
