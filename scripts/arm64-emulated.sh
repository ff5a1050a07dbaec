#!/usr/bin/env bash
# arm64-emulated: the arm64 build (Apple silicon, Graviton, Ampere), run.
# `make test` builds and vets it; this runs it: smoke train + evaluate
# stages under qemu-aarch64 (user mode). arm64 runs the portable kernel set,
# and its bytes are not amd64's (docs/benchmarks.md: they drift from step 7,
# not traced to one expression), so the check is that it runs, that its keys
# differ from this host's (GOARCH is in every key), so
# the two never share a store entry, and with VERIFY=1 that a second
# computation gives the same bytes (another 2.5 minutes). Emulated times say
# nothing about arm64 speed.
#
# STAGES: what to run (default train/rope evaluate/rope).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
STAGES=${STAGES:-train/rope evaluate/rope}
dir=.routebench/arm64-emulated
die() { echo "arm64-emulated: $*" >&2; exit 1; }

command -v qemu-aarch64 >/dev/null || die "qemu-aarch64 not found: make qemu-packages installs it (Debian: apt-get install qemu-user)"
mkdir -p "$dir"
GOARCH=arm64 CGO_ENABLED=0 $GO build -tags noxla -o "$dir/routebench" ./cmd/routebench
rm -rf "$dir/store"
t0=$SECONDS
# shellcheck disable=SC2086 # STAGES is a list of stage names
qemu-aarch64 "$dir/routebench" run --store "$dir/store" --profile smoke $STAGES > "$dir/run.log" 2>&1 ||
  { grep -v '%' "$dir/run.log" | tail -20; die "the arm64 build failed under qemu-aarch64 (log: $dir/run.log)"; }
grep -E '  ran ' "$dir/run.log"
echo "arm64-emulated: ran in $((SECONDS - t0)) s under emulation"
if [ -n "${VERIFY:-}" ]; then
t0=$SECONDS
# shellcheck disable=SC2086
qemu-aarch64 "$dir/routebench" verify --store "$dir/store" --profile smoke $STAGES > "$dir/verify.log" 2>&1 ||
  { grep -v '%' "$dir/verify.log" | tail -20; die "a second arm64 computation gave other bytes (log: $dir/verify.log)"; }
grep -q 'ran (verify)' "$dir/verify.log" && die "verify found stages with no entry: the arm64 keys moved between two runs (log: $dir/verify.log)"
echo "arm64-emulated: a second computation gave the same bytes ($((SECONDS - t0)) s)"
fi
# shellcheck disable=SC2086
if [ -x bin/routebench ] && bin/routebench status --store "$dir/store" --profile smoke $STAGES 2>&1 | grep -E '^  [^ ]+ +[0-9a-f]{12} +cached'; then
  die "this host's build hits the arm64 entries above: the keys must keep the architectures apart"
fi
echo "arm64-emulated: this host's keys differ from arm64's for every stage: nothing mixes"
