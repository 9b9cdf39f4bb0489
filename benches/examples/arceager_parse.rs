//! Parses en_ewt test (or another treebank) with a saved arc-eager model, for
//! profiling the parse loop alone:
//! `cargo run --release -p depfs-benches --example arceager_parse -- MODEL [reps] [treebank]`.
//! Prints words/s over the repetitions (one thread; the model is loaded once) and UAS.

use std::time::Instant;

use depfs_core::io::conllu::{read_path, ReadOptions};
use depfs_core::transition::parser::ArcEagerParser;

fn main() -> depfs_core::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let model =
        ArcEagerParser::load(std::path::Path::new(args.get(1).map_or("model.depfs", String::as_str)))?;
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let dir = std::env::var("DEPFS_DATA").unwrap_or_else(|_| "../shared/data/ud".into());
    let tb = read_path(
        args.get(3).cloned().unwrap_or_else(|| format!("{dir}/en_ewt/test.conllu")),
        &ReadOptions::default(),
    )?;
    // A fourth argument parses by the prefix-margin rule at that margin.
    let margin: Option<f32> = args.get(4).and_then(|s| s.parse().ok());
    let t0 = Instant::now();
    let mut out = model.parse_with(&tb, 1, false, margin)?.0;
    for _ in 1..reps {
        out = model.parse_with(&tb, 1, false, margin)?.0;
    }
    let secs = t0.elapsed().as_secs_f64() / reps as f64;
    let right = (0..tb.n_words()).filter(|&i| out.words.head[i] == tb.words.head[i]).count();
    println!(
        "{:.0} words/s (1 thread, mean of {reps}); UAS {:.2}",
        tb.n_words() as f64 / secs,
        100.0 * right as f64 / tb.n_words() as f64
    );
    Ok(())
}
