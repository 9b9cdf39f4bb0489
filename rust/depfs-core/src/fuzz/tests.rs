//! Replays the saved fuzz corpora (`fuzz/corpus/<target>/`, kept by `make fuzz`) through
//! the entry points, on stable Rust and without libFuzzer: every input a fuzzer once found
//! interesting must still run cleanly. Unit tests for the bugs the fuzzers found sit beside
//! the code they fixed.

use std::path::PathBuf;

use super::*;

/// Calls `entry` on every file of the corpus of `target`; a panicking input fails the
/// test with its file name (the other inputs still run).
fn replay(target: &str, entry: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    let failed: Vec<String> = files
        .iter()
        .filter(|f| {
            let data = std::fs::read(f).expect("corpus file reads");
            std::panic::catch_unwind(|| entry(&data)).is_err()
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{} of {} inputs panicked: {failed:?}", failed.len(), files.len());
}

#[test]
fn conllu_corpus_replays() {
    replay("conllu", conllu);
}

#[test]
fn model_corpus_replays() {
    replay("model", model);
}

#[test]
fn templates_corpus_replays() {
    replay("templates", templates);
}
