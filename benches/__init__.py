"""Python end-to-end benchmarks (run as `python -m benches.bench_<name>`)."""
