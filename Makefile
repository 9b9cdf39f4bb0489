# The one place the project's commands live; README and .ci/run call these targets.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
export DEPFS_DATA ?= $(abspath ../shared/data/ud)
export CARGO_TERM_COLOR ?= never

.PHONY: setup build demo test test-rust test-python wheel-check bench bench-rust lint fmt clean fuzz

$(VENV)/.deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet "maturin>=1.5,<2" numpy click scikit-learn matplotlib "dask[distributed]" pytest hypothesis ruff mypy conllu ufal.chu_liu_edmonds ufal.udpipe "spacy>=3.5,<4"
	touch $@

## setup: create .venv, install Python dependencies and build the extension (release)
setup: $(VENV)/.deps
	$(VENV)/bin/maturin develop --release --quiet

build: setup

## demo: train the arc-eager parser (en_ewt if DEPFS_DATA has it, else synthetic), print two parsed sentences as trees, UAS, LAS, words/s, then the prefix-margin knob (a cascade at its two presets against its full model; `python -m depfs.demo --no-knob` skips it)
demo: setup
	$(PY) -m depfs.demo

## test: every Rust and Python test
test: setup test-rust test-python

test-rust:
	cargo test --workspace --exclude depfs-py --quiet

test-python:
	$(PY) -m pytest -q tests

## wheel-check: `pip wheel .` gives an abi3 wheel (cargo's target/ reused) that installs in a
## fresh venv with cargo off PATH (nothing is compiled), prints --version and parses a file as the tests expect
WHEEL_DIR := target/wheel-check
wheel-check: setup
	rm -rf $(WHEEL_DIR)
	$(PIP) wheel . --no-deps --no-build-isolation --quiet -w $(WHEEL_DIR)
	ls $(WHEEL_DIR)/depfs-*-abi3-*.whl
	$(PYTHON) -m venv $(WHEEL_DIR)/venv
	env PATH=/usr/bin:/bin $(WHEEL_DIR)/venv/bin/python -m pip install --quiet $(WHEEL_DIR)/depfs-*.whl
	cd $(WHEEL_DIR) && env PATH=/usr/bin:/bin venv/bin/depfs --version
	cd $(WHEEL_DIR) && env PATH=/usr/bin:/bin venv/bin/depfs parse $(CURDIR)/tests/data/arceager_v5.depfs \
		$(CURDIR)/tests/data/input.conllu --threads 1 -o parsed.conllu
	cmp $(WHEEL_DIR)/parsed.conllu tests/data/expected/arceager_v5.conllu

## bench: criterion kernels and the Python end-to-end comparisons (writes bench-results/)
bench: setup bench-rust
	$(PY) -m benches.run_all

bench-rust:
	cargo bench -p depfs-benches

## lint: rustfmt, clippy -D warnings, ruff, stub check of _core.pyi
lint: setup
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benches
	$(VENV)/bin/ruff format --check python tests benches
	$(PY) -m mypy.stubtest depfs._core --allowlist .stubtest-allowlist

## fuzz: each libFuzzer target of fuzz/ (CoNLL-U reader, model loader, template parser) for
## FUZZ_SECONDS on one core, with overflow checks on (-a), then its corpus minimised to the inputs
## that cover distinct edges (`cargo fuzz cmin`) in fuzz/corpus/<target>/, which `make test`
## replays. Needs `cargo install cargo-fuzz`; RUSTC_BOOTSTRAP lets stable rustc take cargo fuzz's
## nightly flags. A crash is saved in fuzz/artifacts/<target>/ and stops the run.
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= conllu model templates
fuzz:
	for t in $(FUZZ_TARGETS); do \
		RUSTC_BOOTSTRAP=1 cargo fuzz run -O -a $$t -- -max_total_time=$(FUZZ_SECONDS) \
			-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 && \
		RUSTC_BOOTSTRAP=1 cargo fuzz cmin -O -a $$t -- -use_counters=0 || exit 1; \
	done

fmt:
	cargo fmt --all
	$(VENV)/bin/ruff format python tests benches

clean:
	rm -rf target $(VENV) bench-results
