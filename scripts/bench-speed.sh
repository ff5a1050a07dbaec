#!/usr/bin/env bash
# make bench-speed: issue 22's speed figures in one run, written as benchfmt
# to .routebench/bench/<commit>.txt (docs/benchmarks.md):
#   1. sgemm: OpenBLAS on 1 and 2 threads and the native GEMM on 1 and 2
#      workers, a 2048^3 product and the trainer's protocol-shape products
#   2. training GFLOP/s of every default variant at the protocol shape
#   3. native attention at L = 4,096 and 65,536; PaTH evaluation at 1,024
#      and 4,096
#   4. the comparison against the parent commit's file, when there is one
#   5. every GFLOP/s figure as a fraction of this run's OpenBLAS 2-thread peak,
#      and issue 51's three ratios (GEMM, attention at 4,096, a rope training
#      step) with the kernel set that made them
# COUNT (default 3) repetitions of each; about 5-8 minutes on 2 cores.
# KERNELS="avx2 portable" (any of avx512, avx2, portable) runs the whole list
# once per named kernel set (ROUTEBENCH_KERNELS; a set the host cannot run
# fails), each into <commit>-<set>.txt with its own OpenBLAS rows; unset, the
# host's own set runs, into <commit>.txt. QUICK=1 keeps only the benchmarks
# behind the three ratios (the portable set's full list would take hours) and
# runs them in COUNT rounds of one each, so that the peak and the figures
# divided by it see the same load on a shared machine. Needs root for the
# one-time apt-get of libopenblas-dev (a benchmark reference only: no product
# package links it).
set -eo pipefail
GO=${GO:-go}
BIN=${BIN:-bin/routebench}
COUNT=${COUNT:-3}
dir=.routebench/bench
mkdir -p "$dir"

# OpenBLAS's kernel: its own detection (Debian's 0.3.21) or an inherited
# OPENBLAS_CORETYPE (this machine's environment says Haswell: AVX2, half the
# AVX-512 rate) would make the yardstick too low; SkylakeX is its AVX-512
# sgemm kernel. BENCH_OPENBLAS_CORETYPE picks another.
export OPENBLAS_CORETYPE=${BENCH_OPENBLAS_CORETYPE:-SkylakeX}

dpkg -s libopenblas-dev >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libopenblas-dev; }

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
parent=$(git rev-parse --short HEAD^ 2>/dev/null || echo none)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit=$commit-dirty # a file named after a commit holds that commit's figures only
fi
sets=${KERNELS//,/ }
[ -n "$sets" ] || sets=host
ratios=' (Sgemm/impl=native-2t/peak/2048x2048x2048|Attention/variant=rope/L=4096|TrainProtocol/variant=rope) '
echo "bench-speed: COUNT=$COUNT, kernel sets: $sets${QUICK:+ (QUICK: the ratio benchmarks only, in COUNT interleaved rounds)}"
outs=()
for set in $sets; do
  out=$dir/$commit.txt
  if [ "$set" != host ]; then
    out=$dir/$commit-$set.txt
    export ROUTEBENCH_KERNELS=$set
  fi
  outs+=("$out")
  {
    echo "commit: $commit"
    echo "openblas-core: $(OPENBLAS_VERBOSE=2 $GO test -tags noxla,openblas -run '^TestAgreement$' -count 1 -v ./bench/openblas/ 2>&1 | sed -n 's/^Core: //p' | head -1)"
    # The set that runs, as model/native names it (KernelName).
    echo "kernels: $(ROUTEBENCH_KERNELS_CHILD=1 $GO test -run '^TestKernelsEnvChild$' -count 1 -v ./model/native/ | sed -n 's/.*running set: //p')"
    # The kernels are checked against each other (and OpenBLAS) before they are timed.
    $GO test -tags noxla,openblas -run '^TestAgreement$' -count 1 ./bench/openblas/ >&2
    if [ -n "$QUICK" ]; then
      # Rounds, so that the peak and the figures divided by it see the
      # same load on a shared machine.
      for _ in $(seq "$COUNT"); do
        $GO test -tags noxla,openblas -run '^$' -bench '^BenchmarkSgemm$/^impl=(openblas-2t|native-2t)$/^peak$' -count 1 -benchtime 0.3s ./bench/openblas/
        $GO test -run '^$' -bench '^BenchmarkTrainProtocol$/^variant=rope$' -count 1 -benchtime 2x -timeout 60m ./model/nativetrain/
        $GO test -run '^$' -bench '^BenchmarkAttention$/^variant=rope$/^L=4096$' -count 1 -benchtime 3x -timeout 60m ./bench/
      done
    else
      $GO test -tags noxla,openblas -run '^$' -bench '^BenchmarkSgemm$' -count "$COUNT" -benchtime 0.3s ./bench/openblas/
      $GO test -run '^$' -bench '^BenchmarkTrainProtocol$' -count "$COUNT" -benchtime 2x -timeout 30m ./model/nativetrain/
      $GO test -run '^$' -bench '^BenchmarkAttention$/^variant=(rope|random-qkv)$/^L=4096$' -count "$COUNT" -benchtime 3x ./bench/
      ROUTEBENCH_LONG_ATTENTION=1 $GO test -run '^$' -bench '^BenchmarkAttentionLong$' -count "$COUNT" -benchtime 1x -timeout 30m ./bench/
      $GO test -run '^$' -bench '^BenchmarkPathAttention$' -count "$COUNT" -benchtime 2x ./model/nativeeval/
    fi
  } | tee "$out"
  unset ROUTEBENCH_KERNELS
done
out=${outs[0]}

echo
if [ -f "$dir/$parent.txt" ]; then
  echo "bench-speed: against the parent commit $parent ($dir/$parent.txt):"
  "$BIN" bench compare "$dir/$parent.txt" "$out"
else
  echo "bench-speed: no $dir/$parent.txt for the parent commit $parent: no comparison with it (run make bench-speed there to make one)"
  # The nearest older commit that has a file, so that a run still says
  # what changed since the last measured commit (and says which one).
  for c in $(git rev-list --abbrev-commit --max-count=30 HEAD^ 2>/dev/null | tail -n +2); do
    if [ -f "$dir/$c.txt" ]; then
      echo "bench-speed: against the nearest measured ancestor $c ($dir/$c.txt) instead:"
      "$BIN" bench compare "$dir/$c.txt" "$out"
      break
    fi
  done
fi
for out in "${outs[@]}"; do
  echo
  echo "bench-speed: summary, this run ($out, kernels: $(sed -n 's/^kernels: //p' "$out")):"
  "$BIN" bench summary "$out" | tee "$out.summary"
done
echo
echo "bench-speed: issue 51's ratios to this run's OpenBLAS 2-thread peak (targets: GEMM >= 0.85, attention at 4,096 >= 0.7, rope training step >= 0.5):"
for out in "${outs[@]}"; do
  echo "  kernels $(sed -n 's/^kernels: //p' "$out"):"
  grep -E "$ratios" "$out.summary" | awk '{printf "    %-45s median %7s GFLOP/s (range %s-%s, n %s)  ratio %s\n", $1, $2, $3, $4, $5, $6}'
  rm -f "$out.summary"
done
