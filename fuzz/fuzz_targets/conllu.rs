//! Fuzz target: see `depfs_core::fuzz::conllu`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| depfs_core::fuzz::conllu(data));
