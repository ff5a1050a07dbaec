#!/usr/bin/env bash
# avx2-emulated: run routebench on a CPU without AVX-512, even on a host that
# has it, and check that it computes the bytes this host computed.
#
# qemu-x86_64 (user mode, TCG) with -cpu max offers AVX2 and FMA but no
# AVX-512 (TCG has none), so under it model/native's start-up detection
# takes the AVX2 set, exactly as on an AVX2 server. The script:
#   1. checks that the emulated CPU runs the AVX2 set and refuses AVX-512
#      (else the comparison below would compare a set with itself);
#   2. runs model/native's bitwise tests there (every kernel of each set the
#      emulated CPU runs, and the mutation that must fail them);
#   3. trains and evaluates smoke-size models natively, with this host's set,
#      into a fresh store, then `routebench verify`s them under the emulator:
#      every stage is recomputed there and must give the same output digests
#      (weights, evaluations), i.e. the store holds one kind of bytes for a
#      key whichever CPU filled it.
# Emulation times say nothing about an AVX2 host's speed (TCG is 10-30x
# slower than the host); this checks dispatch and bits only.
#
# STAGES: what to verify (default: four variants covering the plain, ramp,
# value-transport and PaTH + forget-gate attention forms; STAGES="train
# evaluate" verifies every train and evaluate stage of the smoke profile,
# about 8 minutes on 2 cores). QEMU_CPU: the emulated CPU model (default max).
# EXPECT: the set the emulated CPU must run (default avx2). QEMU_CPU=max,-avx2,-fma
# EXPECT=portable emulates a CPU with neither, the portable set's host class:
# there Go's float64 math.Exp takes another path than with FMA, the
# statistics differ in their last bits, and the check is instead that every
# stage's key differs from this host's (pipeline/mathpath.go).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/routebench}
GO=${GO:-go}
QEMU_CPU=${QEMU_CPU:-max}
EXPECT=${EXPECT:-avx2}
case $EXPECT in
  avx2) want="avx2 assembly" refused=avx512 ;;
  portable) want="portable Go" refused=avx2 ;;
  *) echo "avx2-emulated: EXPECT=$EXPECT: want avx2 or portable" >&2; exit 2 ;;
esac
STAGES=${STAGES:-train/rope evaluate/rope train/alibi evaluate/alibi train/random-qkv evaluate/random-qkv train/path-fox evaluate/path-fox}
dir=.routebench/avx2-emulated
emu() { qemu-x86_64 -cpu "$QEMU_CPU" "$@"; }
die() { echo "avx2-emulated: $*" >&2; exit 1; }

if [ "$(uname -m)" != x86_64 ]; then
  echo "avx2-emulated: not an x86-64 host ($(uname -m)); nothing to check"
  exit 0
fi
command -v qemu-x86_64 >/dev/null || die "qemu-x86_64 not found: make qemu-packages installs it (Debian: apt-get install qemu-user)"
[ -x "$BIN" ] || die "$BIN not found: make build first"
mkdir -p "$dir"
$GO test -c -tags noxla -o "$dir/native.test" ./model/native

running() { ROUTEBENCH_KERNELS_CHILD=1 "$@" -test.run '^TestKernelsEnvChild$' -test.v 2>&1 | sed -n 's/.*running set: //p'; }
host_set=$(running "$dir/native.test")
emu_set=$(running emu "$dir/native.test")
echo "avx2-emulated: this host runs the $host_set set; qemu -cpu $QEMU_CPU runs the $emu_set set ($(qemu-x86_64 --version | head -1))"
[ "$emu_set" = "$want" ] || die "the emulated CPU runs '$emu_set', not the $EXPECT set: the check would not test that host class (for AVX2: QEMU_CPU=max on qemu >= 7.2)"
if out=$(ROUTEBENCH_KERNELS=$refused emu "$BIN" help 2>&1); then
  die "ROUTEBENCH_KERNELS=$refused ran under qemu -cpu $QEMU_CPU: the emulated CPU runs it, so it is not the host class EXPECT=$EXPECT names"
fi
grep -q "cannot run here" <<<"$out" || die "ROUTEBENCH_KERNELS=$refused under qemu failed for another reason than the CPU lacking it:"$'\n'"$out"
echo "avx2-emulated: control: ROUTEBENCH_KERNELS=$refused is refused there ('cannot run here')"

echo "avx2-emulated: model/native's bitwise tests, and the key's math term, under qemu"
emu "$dir/native.test" -test.short -test.run '^(TestKernelSetsBitwise|TestKernelSetsBitwiseCanFail)$' -test.v 2>&1 |
  grep -E '^(--- |ok|PASS|FAIL)|kernel sets compared|caught in' || die "bitwise tests failed under qemu"
$GO test -c -tags noxla -o "$dir/pipeline.test" ./pipeline
emu "$dir/pipeline.test" -test.run '^TestMath' -test.v 2>&1 |
  grep -E '^(--- |ok|PASS|FAIL)|math fingerprint' || die "the math-term tests failed under qemu"

rm -rf "$dir/store"
t0=$SECONDS
# shellcheck disable=SC2086 # STAGES is a list of stage names
"$BIN" run --store "$dir/store" --profile smoke $STAGES > "$dir/host.log" 2>&1 || { tail -20 "$dir/host.log"; die "the native run failed (log: $dir/host.log)"; }
echo "avx2-emulated: filled $dir/store natively with the $host_set set in $((SECONDS - t0)) s: $STAGES"
if [ "$EXPECT" = portable ]; then
  # Without FMA, Go's math.Exp takes its other path (pipeline/mathpath.go):
  # such a host must compute other keys, so that nothing mixes.
  # shellcheck disable=SC2086
  emu "$BIN" status --store "$dir/store" --profile smoke $STAGES > "$dir/emulated.log" 2>&1 || { cat "$dir/emulated.log"; die "status under qemu failed"; }
  if grep -E '^  [^ ]+ +[0-9a-f]{12} +cached' "$dir/emulated.log"; then
    die "under qemu -cpu $QEMU_CPU (no FMA) the stages above hit this host's entries: their float64 statistics differ, so their keys must"
  fi
  head -3 "$dir/emulated.log"
  echo "avx2-emulated: a CPU without FMA computes other keys for every stage (the key's math term): its results never mix with this host's"
  exit 0
fi
t0=$SECONDS
# shellcheck disable=SC2086
if ! emu "$BIN" verify --store "$dir/store" --profile smoke $STAGES > "$dir/emulated.log" 2>&1; then
  grep -v '%' "$dir/emulated.log" | tail -20
  die "verify under qemu -cpu $QEMU_CPU (the $EXPECT set) found outputs that differ from this host's (log: $dir/emulated.log)"
fi
grep -E 'verified|^verify:' "$dir/emulated.log"
if grep -E 'ran \(verify\)' "$dir/emulated.log"; then
  die "the stages above had other keys under qemu -cpu $QEMU_CPU than on this host, so nothing was compared (does this host lack FMA? go test ./pipeline -run TestMath -v)"
fi
echo "avx2-emulated: every stage recomputed under the $EXPECT set gave this host's bytes ($((SECONDS - t0)) s under emulation)"
