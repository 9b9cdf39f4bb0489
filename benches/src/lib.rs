//! Bench-only package; the benches live in `benches/*.rs` (see Cargo.toml).
