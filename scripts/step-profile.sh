#!/usr/bin/env bash
# make step-profile: where a native training step's time goes. A CPU
# profile (go test -cpuprofile) of BenchmarkStepProfile (model/nativetrain)
# at the cpu-v1 shape (d 128, 2 layers, T 128, batch 16) and the protocol
# shape (T 512, batch 8), for rope, random-qkv and path, each sample put in
# one category by its stack (docs/training.md, "Where a step's time goes"):
#   PaTH transport under model/nativetrain/householder_*.go (its chunked transport and, in the
#                  backward pass, the softmax rows it runs with; GEMMs included)
#   attention      under model/nativetrain/attention.go (kernels included)
#   optimizer      under (*Trainer).adamW
#   transpose/pack a model/native packing or transpose function
#   GEMM           the packed sgemm of model/native and its micro-kernels
#   elementwise    other model/nativetrain code and model/native's row passes: activations,
#                  norms, softmax, rotation, embeddings, loss
#   runtime        the Go runtime: scheduling, synchronisation, GC
#   other          the rest (memclr/memmove, syscalls)
# Only the timed steps are profiled: trainer construction and the first
# (page-faulting) step are left out. Percent of
# the profiled step samples; a second table splits GEMM by the trainer
# function that called it where the stack shows it (products run on the
# caller's goroutine; tiles on native's workers show no caller).
# Profiles and the text stacks stay in $OUT (default .routebench/step-profile);
# REPORT_ONLY=1 prints the tables again from them.
set -eo pipefail
GO=${GO:-go}
OUT=${OUT:-.routebench/step-profile}
mkdir -p "$OUT"
# REPORT_ONLY=1 re-buckets the profiles already in $OUT without running.
[ -n "$REPORT_ONLY" ] || $GO test -c -o "$OUT/nativetrain.test" ./model/nativetrain/
runs=()
for shape in cpu-v1 protocol; do
  n=20; [ $shape = protocol ] && n=10
  for v in rope random-qkv path; do
    r=$shape.$v
    runs+=("$r")
    [ -z "$REPORT_ONLY" ] || continue
    # The profile covers the timed steps only (bench_test.go's stepProfileEnv).
    ROUTEBENCH_STEP_CPUPROFILE="$OUT/$r.prof" "$OUT/nativetrain.test" -test.run '^$' \
      -test.bench "^BenchmarkStepProfile\$/^shape=$shape\$/^variant=$v\$" -test.benchtime ${n}x > "$OUT/$r.bench"
    $GO tool pprof -traces -lines "$OUT/nativetrain.test" "$OUT/$r.prof" > "$OUT/$r.traces" 2>/dev/null
  done
done

bucket() { # stdin: pprof -traces -lines; stdout: "category<TAB>seconds" and "gemm:caller<TAB>seconds"
  awk '
  function secs(s) { if (s ~ /ms$/) return substr(s, 1, length(s)-2)/1000; if (s ~ /us$/) return substr(s, 1, length(s)-2)/1e6; if (s ~ /s$/) return substr(s, 1, length(s)-1)+0; return 0 }
  function flush(   i, f, cat, caller, leaf, skip, step) {
    if (n == 0) return
    leaf = fn[1]; cat = ""; caller = ""; skip = 0; step = 0
    for (i = 1; i <= n; i++) {
      if (fn[i] ~ /newTestTrainer|nativetrain_test\.benchStep/ && !step) skip = 1
      if (fn[i] ~ /\(\*Trainer\)\.Step$/) step = 1
    }
    if (skip && !step) { n = 0; return }
    if (leaf ~ /^routebench\/model\/native\./ && leaf ~ /[Pp]ack|[Tt]ranspose/) cat = "transpose/pack"
    for (i = 1; i <= n && cat == ""; i++) {
      if (fn[i] !~ /^routebench\/model\/nativetrain\./) continue
      if (fl[i] ~ /householder_/) cat = "PaTH transport"
      else if (fl[i] ~ /\/attention\.go$/) cat = "attention"
      else if (fn[i] ~ /adamW/) cat = "optimizer"
      else if (caller == "") { caller = fn[i]; sub(/^routebench\/model\/nativetrain\./, "", caller); sub(/\.func[0-9.]+$/, "", caller) }
    }
    # model/native also holds the trainer'"'"'s vector row passes (norms, GELU,
    # SiLU, rotation, adds): elementwise work, whoever calls it.
    if (cat == "" && leaf ~ /^routebench\/model\/native\./ && leaf !~ /native\.(kern[0-9]|mm|gemm|\(\*gemmTiles\)|Gemm|MatMul|parallelFor|getScratch|putScratch|ptr)/) cat = "elementwise"
    if (cat == "" && leaf ~ /^routebench\/model\/native\./) cat = "GEMM"
    if (cat == "" && leaf ~ /^routebench\/model\/nativetrain\./) cat = "elementwise"
    if (cat == "" && leaf ~ /^runtime\.(memclr|memmove)/) cat = "other"
    if (cat == "" && leaf ~ /^(runtime|internal\/runtime|sync)[.\/]/) cat = "runtime"
    if (cat == "") cat = "other"
    tot[cat] += v
    if (cat == "GEMM") { if (caller == "") caller = "(native worker)"; gc[caller] += v }
    n = 0
  }
  /^-+\+-+$/ { flush(); next }
  /^ +[0-9.]+(ms|us|s) +/ { flush(); v = secs($1); n = 1; fn[1] = $2; fl[1] = $3; sub(/:[0-9]+$/, "", fl[1]); next }
  n > 0 && NF >= 2 { n++; fn[n] = $1; fl[n] = $2; sub(/:[0-9]+$/, "", fl[n]) }
  END { flush(); for (c in tot) printf "%s\t%.4f\n", c, tot[c]; for (c in gc) printf "gemm:%s\t%.4f\n", c, gc[c] }'
}

cats="GEMM transpose/pack attention PaTH-transport elementwise optimizer runtime other"
for r in "${runs[@]}"; do bucket < "$OUT/$r.traces" > "$OUT/$r.buckets"; done

echo "step-profile: % of a step's CPU samples by category (d_model 128, 2 layers, 4 heads; cpu-v1 = T 128 x batch 16, protocol = T 512 x batch 8)"
{
  printf "category"; for r in "${runs[@]}"; do printf "\t%s" "$r"; done; echo
  for c in $cats; do
    printf "%s" "$c"
    for r in "${runs[@]}"; do
      awk -F'\t' -v c="${c//-/ }" '$1 !~ /^gemm:/ { t += $2 } $1 == c { x = $2 } END { printf "\t%.1f", (t > 0) ? 100*x/t : 0 }' "$OUT/$r.buckets"
    done
    echo
  done
  printf "samples (s)"; for r in "${runs[@]}"; do awk -F'\t' '$1 !~ /^gemm:/ { t += $2 } END { printf "\t%.2f", t }' "$OUT/$r.buckets"; done; echo
  printf "s/step (wall)"; for r in "${runs[@]}"; do awk '/^BenchmarkStepProfile/ { for (i = 1; i < NF; i++) if ($(i+1) == "s/step") printf "\t%s", $i }' "$OUT/$r.bench"; done; echo
  printf "cpu-s/step"; for r in "${runs[@]}"; do awk '/^BenchmarkStepProfile/ { for (i = 1; i < NF; i++) if ($(i+1) == "cpu-s/step") printf "\t%s", $i }' "$OUT/$r.bench"; done; echo
} | column -t -s $'\t'
echo
echo "step-profile: GEMM by calling trainer function (% of that run's GEMM samples, top 5)"
for r in "${runs[@]}"; do
  echo "  $r:"
  awk -F'\t' '$1 ~ /^gemm:/ { sub(/^gemm:/, "", $1); g[$1] = $2; t += $2 } END { for (k in g) printf "%.1f\t%s\n", 100*g[k]/t, k }' "$OUT/$r.buckets" | sort -rn | head -5 | sed 's/^/    /'
done
echo "profiles: $OUT/<shape>.<variant>.prof (go tool pprof -http=: $OUT/nativetrain.test $OUT/<run>.prof)"
