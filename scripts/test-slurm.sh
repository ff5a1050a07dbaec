#!/usr/bin/env bash
# make test-slurm: routebench's Slurm executor against a real one-node
# Slurm (scripts/slurm-local.sh), in a temp dir; every daemon it starts is
# stopped on every exit path. Cases:
#   1. the smoke profile submitted with --wait while one train stage fails
#      on purpose: its evaluate and the report are cancelled and reported
#      (slurm status), the other stages finish;
#   2. a resubmit after the fix submits only what is left and --wait exports
#      RESULTS.md: same keys as a local reproduce, gate difference 0, the
#      same RESULTS.md bytes;
#   3. a resubmit of a finished plan makes no sbatch call;
#   4. a train job sent the pre-limit signal (scancel --signal=USR1 --batch)
#      requeues itself and resumes to the weights of an uninterrupted run;
#   5. two submissions of one plan at once compute each stage once.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/routebench}
source scripts/slurm-local.sh
trap slurm_stop EXIT
T=$(mktemp -d /tmp/routebench-slurm-test.XXXXXX)
trap 'slurm_stop; rm -rf "$T"' EXIT
start=$SECONDS
# On failure: the queue, the daemons' last lines, then the reason last, where
# a CI log's tail shows it.
fail() {
	{
		squeue -h -t all -o '%i %j %T %r' 2>/dev/null | grep -v ' COMPLETED ' || true
		[ -n "${SLURM_DIR:-}" ] && tail -n 12 "$SLURM_DIR/slurmctld.log" "$SLURM_DIR/slurmd.log" 2>/dev/null
		echo "test-slurm: FAIL: $*"
	} >&2
	exit 1
}
slurm_start

# A store path with a space and a command substitution in it: quoted in the
# job scripts, it must work and run nothing.
S="$T/store \$(touch $T/INJECTED)"
L="$T/local-store"
cat > "$T/site.json" <<JSON
{"default": {"cpus": 1, "mem": "1G", "time": "30:00"}, "kinds": {"train": {"cpus": 1}, "evaluate": {"cpus": 1}}}
JSON
sub() { "$BIN" slurm submit --profile smoke --store "$S" --site "$T/site.json" --poll 1s --poll-max 3s "$@"; }

echo "== local reproduce (the reference)"
t0=$SECONDS
"$BIN" reproduce --profile smoke --store "$L" --out "$T/local-out" > "$T/local.log" 2>&1 || { tail -20 "$T/local.log"; fail "local reproduce"; }
echo "local reproduce: $((SECONDS - t0)) s"

victim=$("$BIN" plan --json --profile smoke --store "$L" | grep -o '"name": "train/[^"]*"' | head -1 | cut -d'"' -f4)
echo "== 1. submit with $victim failing on purpose"
t0=$SECONDS
if ROUTEBENCH_SLURM_FAIL_STAGE=$victim sub --wait --out "$T/slurm-out" > "$T/sub1.log" 2>&1; then
	cat "$T/sub1.log"; fail "--wait succeeded although $victim failed"
fi
grep -q "cannot finish" "$T/sub1.log" || { cat "$T/sub1.log"; fail "--wait did not say the plan cannot finish"; }
"$BIN" slurm status --profile smoke --store "$S" > "$T/status1.log"
grep -qE "^  $victim +failed" "$T/status1.log" || { cat "$T/status1.log"; fail "status does not report $victim failed"; }
grep -q "failed on purpose" "$T/status1.log" || { cat "$T/status1.log"; fail "status does not show the end of $victim's log"; }
eval_of=${victim/train/evaluate}
grep -qE "^  $eval_of +skipped" "$T/status1.log" || { cat "$T/status1.log"; fail "status does not report $eval_of skipped"; }
grep -qE "^  report +skipped" "$T/status1.log" || { cat "$T/status1.log"; fail "status does not report the report skipped"; }
[ -z "$(squeue -h -t PENDING,RUNNING)" ] || { squeue; fail "jobs still pending after the failure"; }
echo "case 1 ok: $victim failed, $eval_of and report skipped ($((SECONDS - t0)) s)"

echo "== 2. resubmit after the fix"
t0=$SECONDS
sub --wait --out "$T/slurm-out" > "$T/sub2.log" 2>&1 || { cat "$T/sub2.log"; fail "resubmit after the fix"; }
grep -q ", 3 submitted" "$T/sub2.log" || { cat "$T/sub2.log"; fail "the resubmit should submit $victim, $eval_of and report only"; }
keys() { "$BIN" plan --json --profile smoke --store "$1" | grep -E '"(name|key)"' | tr -d ' ,'; }
diff <(keys "$L") <(keys "$S") || fail "the stage keys differ between the local and the Slurm store"
"$BIN" gate --profile smoke --store "$S" > "$T/gate.log" 2>&1 || { cat "$T/gate.log"; fail "gate on the Slurm store"; }
# RESULTS.md is the report's volatile file: it quotes each stage's run
# date, wall time and the speed benchmarks' timings, different on every
# run. Equal keys (the report's hashes every input's stable output) and a
# gate difference of 0 are the comparison; every other exported file must
# match byte for byte.
(cd "$T/local-out" && find . -type f ! -name RESULTS.md | sort) > "$T/files"
[ -s "$T/files" ] || fail "the local reproduce exported no file but RESULTS.md"
while read -r f; do cmp "$T/local-out/$f" "$T/slurm-out/$f" || fail "$f differs from the local reproduce's"; done < "$T/files"
[ ! -e "$T/INJECTED" ] || fail "the store path's \$(...) ran"
echo "case 2 ok: same keys, gate passes, the $(wc -l < "$T/files") exported files but RESULTS.md identical ($((SECONDS - t0)) s)"
grep -h "slurm submit\|slurm: smoke done" "$T/sub1.log" "$T/sub2.log"

echo "== 3. resubmit of a finished plan"
sub > "$T/sub3.log" 2>&1 || { cat "$T/sub3.log"; fail "resubmit"; }
grep -q "0 submitted (sbatch calls: 0" "$T/sub3.log" || { cat "$T/sub3.log"; fail "a resubmit of a finished plan called sbatch"; }
echo "case 3 ok: $(tail -1 "$T/sub3.log")"

echo "== 4. a train job sent the pre-limit signal requeues and resumes"
t0=$SECONDS
P="$T/preempt-store"
cp -a "$S" "$P" # the smoke stages, tokenize among them, are cached
popts=(--profile smoke --set variants=rope --set steps=${SLURM_TEST_STEPS:-3000})
psub() { "$BIN" slurm submit "${popts[@]}" --store "$P" --site "$T/site.json" --poll 1s --poll-max 3s "$@"; }
psub > "$T/sub4.log" 2>&1 || { cat "$T/sub4.log"; fail "submit for the preemption case"; }
tjob=$(grep -E '^submitted train/rope ' "$T/sub4.log" | awk '{print $4}')
tlog=$(grep -E '^submitted train/rope ' "$T/sub4.log" | awk '{print $5}')
[ -n "$tjob" ] || { cat "$T/sub4.log"; fail "no train/rope job submitted"; }
# Signal it once it has written a checkpoint into its work dir (smoke:
# every 20 steps), which is in the store, where the requeued job looks.
for _ in $(seq 240); do
	[ -n "$(find "$P/work" -path '*/scratch/*' -type f ! -name '.*' 2>/dev/null | head -1)" ] && break
	sleep 0.25
done
[ -n "$(find "$P/work" -path '*/scratch/*' -type f ! -name '.*' 2>/dev/null | head -1)" ] || { cat "$tlog"; fail "train/rope wrote no checkpoint to interrupt"; }
squeue -h -j "$tjob" -o %T | grep -q RUNNING || { cat "$tlog"; fail "train/rope's job $tjob is not running when signalled"; }
scancel --signal=USR1 --batch "$tjob"
# slurmctld holds a requeued batch job back (BeginTime, about 2 minutes);
# release it once it is back in the queue, but not in the second of the
# requeue: slurmd revoked the first launch's credential then, at a
# one-second resolution, and kills a relaunch within that second ("Job
# credential revoked", the job FAILED) -- the hazard the hold exists for.
for _ in $(seq 120); do
	if squeue -h -j "$tjob" -o '%T %r' 2>/dev/null | tee -a "$T/states4" | grep -q '^PENDING BeginTime'; then
		sleep 2
		scontrol update JobId="$tjob" StartTime=now
		break
	fi
	sleep 0.25
done
psub --wait --out "$T/preempt-out" > "$T/wait4.log" 2>&1 || { sort "$T/states4" | uniq -c; cat "$T/wait4.log" "$tlog"; fail "waiting for the preempted plan"; }
grep -q "requeueing job $tjob" "$tlog" || { cat "$tlog"; fail "train/rope's job did not requeue itself on USR1"; }
grep -q "resumed from step" "$tlog" || { cat "$tlog"; fail "the requeued train/rope did not resume from a checkpoint"; }
scontrol show job "$tjob" | grep -qE 'Restarts=1\b' || { scontrol show job "$tjob"; fail "job $tjob was not restarted once"; }
# The requeued job itself must finish the stage: a --wait that resubmitted
# it after a failed relaunch would also resume, and hide that failure.
scontrol show job "$tjob" | grep -qE 'JobState=COMPLETED\b' || { scontrol show job "$tjob"; fail "job $tjob did not complete after its requeue"; }
# The reference: the same stages uninterrupted, locally. Equal evaluate
# keys mean equal weights: evaluate's key hashes train's output digest.
"$BIN" run evaluate/rope "${popts[@]}" --store "$L" > "$T/local4.log" 2>&1 || { cat "$T/local4.log"; fail "local reference of the preemption case"; }
pkeys() { "$BIN" plan --json "${popts[@]}" --store "$1" | grep -A8 -E '"name": "(train|evaluate)/rope"' | grep -E '"(name|key)"' | tr -d ' ,'; }
diff <(pkeys "$L") <(pkeys "$P") || fail "the resumed train/rope's weights differ from an uninterrupted run's"
echo "case 4 ok: job $tjob requeued on USR1, resumed, same weights as an uninterrupted run ($((SECONDS - t0)) s)"

echo "== 5. two submissions of one plan at once"
t0=$SECONDS
copts=(--profile smoke --set variants=alibi --set steps=300)
csub() { "$BIN" slurm submit "${copts[@]}" --store "$P" --site "$T/site.json" --poll 1s --poll-max 3s "$@"; }
csub > "$T/sub5a.log" 2>&1 & a=$!
csub > "$T/sub5b.log" 2>&1 & b=$!
wait "$a" || { cat "$T/sub5a.log"; fail "first concurrent submission"; }
wait "$b" || { cat "$T/sub5b.log"; fail "second concurrent submission"; }
csub --wait --out "$T/conc-out" > "$T/wait5.log" 2>&1 || { cat "$T/wait5.log"; fail "waiting for the concurrent plan"; }
for st in train/alibi evaluate/alibi; do
	n=$(cat "$T"/slurm/*.log | grep -cE "^$st +[0-9a-f]{12}  ran") || true
	[ "$n" = 1 ] || { grep -hE "^$st " "$T"/slurm/*.log; fail "$st was computed $n times by two concurrent submissions"; }
done
echo "case 5 ok: $(grep -h 'slurm submit' "$T/sub5a.log" "$T/sub5b.log" | sed 's/^slurm submit smoke: //' | paste -sd'|') ; each stage ran once ($((SECONDS - t0)) s)"
echo "test-slurm: all cases passed in $((SECONDS - start)) s"
