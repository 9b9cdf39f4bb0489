//! Mutated inputs through the three readers of untrusted bytes: the CoNLL-U reader, the
//! model loader and the template parser. Each case is derived from a seed by the one
//! RNG, so the same corpus replays on every run (in seconds); every case must end in
//! `Ok` or a typed error naming the source — never a panic.
//!
//! Model payloads are mutated *behind* the checksum (the CRC is recomputed), so the
//! decoder and the consistency checks of each model kind see the damage, not just the
//! container's CRC check.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use depfs_core::io::conllu::{read_bytes, ReadOptions};
use depfs_core::templates::{Family, TemplateSet};
use depfs_core::util::Rng;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

/// One mutation of `bytes`: flip, insert, delete or duplicate a few bytes, swap two
/// lines, or truncate.
fn mutate(bytes: &[u8], rng: &mut Rng, from: usize) -> Vec<u8> {
    let mut v = bytes.to_vec();
    let span = v.len() - from;
    let at = |rng: &mut Rng| from + rng.index(span.max(1));
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                let i = at(rng);
                if i < v.len() {
                    v[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => {
            let i = at(rng).min(v.len());
            let b = [b'\t', b'\n', b'_', b'0', b'-', b'#', 0xff, b'9'][rng.index(8)];
            v.insert(i, b);
        }
        2 => {
            let i = at(rng);
            let n = 1 + rng.index(16);
            v.drain(i.min(v.len())..(i + n).min(v.len()));
        }
        3 => {
            let i = at(rng);
            let n = 1 + rng.index(64);
            let piece: Vec<u8> = v[i.min(v.len())..(i + n).min(v.len())].to_vec();
            v.splice(i.min(v.len())..i.min(v.len()), piece);
        }
        4 => {
            let mut lines: Vec<&[u8]> = v.split(|&b| b == b'\n').collect();
            if lines.len() > 2 {
                let (a, b) = (rng.index(lines.len()), rng.index(lines.len()));
                lines.swap(a, b);
            }
            v = lines.join(&b'\n');
        }
        _ => v.truncate(at(rng)),
    }
    v
}

#[test]
fn mutated_conllu_never_panics() {
    let text = std::fs::read(data("input.conllu")).unwrap();
    let mut rng = Rng::new(2026);
    let (mut ok, mut errors) = (0, 0);
    for case in 0..1500 {
        let bytes = mutate(&text, &mut rng, 0);
        let got = catch_unwind(|| read_bytes(&bytes, "fuzz.conllu", &ReadOptions::default()));
        match got {
            Ok(Ok(_)) => ok += 1,
            Ok(Err(e)) => {
                errors += 1;
                assert!(e.to_string().starts_with("fuzz.conllu"), "case {case}: {e}");
            }
            Err(_) => panic!("case {case}: the reader panicked"),
        }
    }
    // The mutations reach both outcomes (a check that cannot fail would not).
    assert!(ok > 50 && errors > 500, "ok {ok}, errors {errors}");
}

/// Header bytes before the payload: magic 8, version 4, kind length 4, kind, payload
/// length 8, CRC 4.
fn payload_start(file: &[u8]) -> usize {
    let kind_len = u32::from_le_bytes(file[12..16].try_into().unwrap()) as usize;
    16 + kind_len + 8 + 4
}

/// `file` with its payload mutated and its length and CRC made to match again.
fn mutate_payload(file: &[u8], rng: &mut Rng) -> Vec<u8> {
    let start = payload_start(file);
    let payload = mutate(&file[start..], rng, 0);
    let mut out = file[..start - 12].to_vec();
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

#[test]
fn mutated_model_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.depfs");
    let mut rng = Rng::new(7);
    let (mut ok, mut errors) = (0, 0);
    for name in ["arceager.depfs", "graph1.depfs", "graph2.depfs"] {
        let file = std::fs::read(data(name)).unwrap();
        for case in 0..250 {
            // Mostly behind the checksum; sometimes the header itself.
            let bytes =
                if case % 5 == 0 { mutate(&file, &mut rng, 0) } else { mutate_payload(&file, &mut rng) };
            std::fs::write(&path, &bytes).unwrap();
            let got = catch_unwind(AssertUnwindSafe(|| {
                let a = depfs_core::transition::parser::ArcEagerParser::load(&path).map(|_| ());
                let g = depfs_core::graph::GraphModel::load(&path).map(|_| ());
                a.and(g)
            }));
            match got {
                Ok(Ok(())) => ok += 1,
                Ok(Err(e)) => {
                    errors += 1;
                    assert!(e.to_string().contains("fuzz.depfs"), "{name} case {case}: {e}");
                }
                Err(_) => panic!("{name} case {case}: the loader panicked"),
            }
        }
    }
    assert!(errors > 600, "ok {ok}, errors {errors}");
}

#[test]
fn mutated_templates_never_panic() {
    let mut rng = Rng::new(11);
    let sources = [
        (Family::Arc, include_str!("../src/templates/sets/first_order.txt")),
        (Family::Config, include_str!("../src/templates/sets/arc_eager.txt")),
    ];
    let (mut ok, mut errors) = (0, 0);
    for (family, text) in sources {
        for case in 0..600 {
            let bytes = mutate(text.as_bytes(), &mut rng, 0);
            let text = String::from_utf8_lossy(&bytes);
            match catch_unwind(|| TemplateSet::parse(&text, family, 4)) {
                Ok(Ok(_)) => ok += 1,
                Ok(Err(_)) => errors += 1,
                Err(_) => panic!("{family:?} case {case}: the template parser panicked"),
            }
        }
    }
    assert!(ok > 50 && errors > 200, "ok {ok}, errors {errors}");
}
