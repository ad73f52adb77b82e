# fabriclb — set-up and everyday commands. See README.md.
#
#   make install   create .venv and build everything optimised (CLI: .venv/bin/fabriclb)
#   make demo      install, then run the quick-start scenario and print its summary
#   make test      install, then cargo test (core) and pytest (Python package, CLI)
#   make bench     named benchmarks with the speed probe as yardstick
#   make fuzz      the long fuzzer: mutated scenarios through validate and short runs
#   make docs      regenerate docs/SCENARIO_REFERENCE.md and docs/scenario.schema.json
#   make clean     remove build outputs (keeps .venv)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# The machines are small and shared: cargo's job count defaults to 2 unless set.
export CARGO_BUILD_JOBS ?= 2

# The extension is rebuilt when any Rust source, manifest or the package metadata changes;
# the Python sources are installed in editable mode and need no rebuild. No build isolation:
# the maturin installed in .venv builds (quicker, no download per build); it must be on PATH.
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml $(wildcard Cargo.lock)
STAMP := $(VENV)/.fabriclb-installed

.PHONY: install demo test test-rust test-python fuzz bench docs clean reproduce-quick

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.tools-installed: | $(BIN)/python
	$(BIN)/pip install --quiet -U pip maturin
	touch $@

$(STAMP): $(VENV)/.tools-installed pyproject.toml $(RUST_SOURCES)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pip install --quiet --no-build-isolation -e '.[dev]'
	touch $@

demo: install
	$(BIN)/fabriclb run scenarios/quickstart.toml --out out/quickstart
	$(BIN)/fabriclb reproduce conga-fig2 conga-fig12 --quick --skip-waiting --out out/demo

# The quick form of every ready experiment (about two minutes each on 2 cores), then the
# reproduction table docs/REPRODUCTION.md. Not part of `make test`.
reproduce-quick: install
	$(BIN)/fabriclb reproduce all --quick --skip-waiting --out out/reproduce
	$(BIN)/python tools/gen_reproduction.py out/reproduce

test: install test-rust test-python

test-rust:
	cargo test --workspace --exclude fabriclb-py

test-python: install
	$(BIN)/pytest -q python/tests

# `make test` runs a short deterministic budget of the same fuzzer (python/tests/test_fuzz.py).
FUZZ_EXAMPLES ?= 1500
fuzz: install
	FABRICLB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FABRICLB_FUZZ_SEED=$${FABRICLB_FUZZ_SEED:-$$(date +%s)} \
		$(BIN)/pytest -q -s -p no:cacheprovider --timeout=0 python/tests/test_fuzz.py

bench: install
	$(BIN)/fabriclb bench --probe --repeat 3 LS128 FT432 LS2048

docs: install
	$(BIN)/python tools/gen_reference.py

clean:
	cargo clean
	rm -rf out python/fabriclb/*.so $(STAMP) .pytest_cache
