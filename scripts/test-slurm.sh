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
#   5. two submissions of one plan at once compute each stage once;
#   6. a dependent job whose input is hidden (renamed away, then back within
#      the job's input wait) waits for it and computes only its own stage;
#   7. an input hidden past the wait fails the job, naming the input's key,
#      and nothing recomputes it;
#   8. two attempts of one stage at once on one store without flock
#      (ROUTEBENCH_STORE_NOFLOCK=1, as on Lustre noflock) work in their own
#      dirs and leave one committed output; no read sees a damaged entry.
#   9. a job whose configuration differs from the submitter's (a site
#      "binary" wrapper adds a --set) fails before computing anything, and
#      --wait ends at once, printing both recipes;
#  10. a site argument that overrides a managed flag is refused, naming it,
#      and nothing is submitted.
#  11. two Unix users (root and a user this script creates, both in a group
#      it creates) submit one plan to one group-shared store at once: each
#      sees only their own jobs (squeue --me), both --wait succeed, and
#      every store directory stays group-writable in the store's group.
#  12. a sweep's three train stages go in one job array throttled to one
#      running task (array_throttle 1), the evaluates in an array lined up
#      with it (aftercorr); each task runs its own stage once; the study
#      is exported; the same sweep submitted held and cancelled before any
#      task started shows every stage cancelled (not not-submitted);
#  13. on a cluster restarted with cgroup memory limits (SLURM_LOCAL_CGROUP;
#      skipped, saying so, where the memory cgroup is not writable), a
#      tokenize job given 32M ends OUT_OF_MEMORY, status shows it and the
#      retry, a resubmit runs it with the site's mem_retry (1G), and
#      --wait retries such a job by itself, once.
#  14. a lab: the checkout is root's, two more users it creates (skipped,
#      saying so, where it cannot) share a group store under umask 022.
#      Without safe.directory a user's plan fails naming the fix; with it,
#      a plan creates nothing in the fresh store; B runs the plan on Slurm,
#      C's submit of it finds everything cached (the report too: one report
#      run, one label for root, B and C), C writes a stage of its own
#      beside B's directories, store check passes (and names a directory
#      made by hand under umask 022); a train output removed after its job
#      completed shows `missing` in slurm status.
# SLURM_TEST_CASES="6 7 8" runs those cases only (cases 1-5 run together).
# Case 13 restarts the cluster, so it runs last.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/routebench}
source scripts/slurm-local.sh
trap slurm_stop EXIT
T=$(mktemp -d /tmp/routebench-slurm-test.XXXXXX)
# Unix users for the lab cases (11, 14): made here (as root), removed on exit.
grp=rbtest-share made_group= made_users=()
cleanup() {
	slurm_stop
	local u
	for u in "${made_users[@]}"; do userdel "$u"; done
	[ -z "$made_group" ] || groupdel "$grp"
	rm -rf "$T"
}
trap cleanup EXIT
# lab_user NAME: NAME exists, in group $grp, and reaches the cluster and
# $T; sets lab_why and fails where this machine cannot make it.
lab_user() {
	if [ "$(id -u)" != 0 ] || ! command -v useradd > /dev/null || ! command -v runuser > /dev/null; then
		lab_why="a second Unix user needs root, useradd and runuser (uid $(id -u))"
		return 1
	fi
	getent group "$grp" > /dev/null || { groupadd "$grp" && made_group=1; } || { lab_why="groupadd $grp failed"; return 1; }
	if ! id "$1" > /dev/null 2>&1; then
		useradd -M -N -g "$grp" -s /bin/bash "$1" || { lab_why="useradd $1 failed"; return 1; }
		made_users+=("$1")
	fi
	chmod 711 "$SLURM_DIR" "$SLURM_DIR/munge" "$T"
	chmod 644 "$SLURM_CONF"
}
# as USER HOME UMASK CMD...: CMD as USER, in this checkout, with that HOME
# (its git config) and umask.
as() {
	local u=$1 h=$2 m=$3
	shift 3
	runuser -u "$u" -- env PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME="$h" bash -c 'umask "$1"; cd "$2"; shift 2; exec "$@"' _ "$m" "$PWD" "$@"
}
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
want() { [ -z "${SLURM_TEST_CASES:-}" ] || [[ " $SLURM_TEST_CASES " == *" $1 "* ]]; }
# keyof STAGE ARGS...: the stage's key in the plan of ARGS (a store among them).
keyof() { local st=$1; shift; "$BIN" plan --json "$@" | grep -A8 "\"name\": \"$st\"" | grep -o '"key": "[0-9a-f]*"' | head -1 | cut -d'"' -f4; }
# jobof STAGE LOG: the job id `slurm submit` printed for STAGE.
jobof() { awk -v s="$1" '$1 == "submitted" && $2 == s {print $4}' "$2"; }

if want 6 || want 7; then
	echo "== 6, 7. a job whose input is hidden from it"
	H="$T/hidden-store"
	for c in 6 7; do
		want $c || continue
		t0=$SECONDS
		# Case 6's input comes back within the wait, case 7's does not.
		wait=60s; [ $c = 7 ] && wait=10s
		cat > "$T/site-wait.json" <<JSON
{"default": {"cpus": 1, "mem": "1G", "time": "30:00"}, "input_wait": "$wait"}
JSON
		hopts=(--profile smoke --set variants=rope --set steps=$((100 + c)) --store "$H")
		hsub() { "$BIN" slurm submit "${hopts[@]}" --site "$T/site-wait.json" --log-dir "$T/logs$c" --poll 1s --poll-max 3s "$@"; }
		"$BIN" run train/rope "${hopts[@]}" > "$T/local$c.log" 2>&1 || { cat "$T/local$c.log"; fail "case $c: training train/rope locally"; }
		k=$(keyof train/rope "${hopts[@]}")
		[ -n "$k" ] || fail "case $c: no key for train/rope"
		# Held, so that the entry is hidden before evaluate/rope's job starts
		# (its submit saw train/rope cached: evaluate/rope waits on no job).
		hsub --sbatch-arg=--hold > "$T/hsub$c.log" 2>&1 || { cat "$T/hsub$c.log"; fail "case $c: submit"; }
		ejob=$(jobof evaluate/rope "$T/hsub$c.log")
		[ -n "$ejob" ] || { cat "$T/hsub$c.log"; fail "case $c: no evaluate/rope job submitted"; }
		grep -q '^submitted train/rope' "$T/hsub$c.log" && fail "case $c: train/rope was submitted although cached"
		idx="$H/index/${k:0:2}/$k"
		mv "$idx" "$idx.hidden"
		scontrol release $(awk '$1 == "submitted" {print $4}' "$T/hsub$c.log")
		elog=$(ls "$T/logs$c"/evaluate_rope.*.log 2>/dev/null || true)
		for _ in $(seq 240); do
			elog=$(ls "$T/logs$c"/evaluate_rope.*.log 2>/dev/null || true)
			[ -n "$elog" ] && grep -q "waiting for input train/rope" "$elog" && break
			sleep 0.25
		done
		grep -q "waiting for input train/rope (key ${k:0:12}" "$elog" || { cat "$elog"; fail "case $c: evaluate/rope's job did not wait for its hidden input"; }
		if [ $c = 6 ]; then
			sleep 3
			mv "$idx.hidden" "$idx"
			hsub --wait --out "$T/hidden-out" > "$T/hwait$c.log" 2>&1 || { cat "$T/hwait$c.log" "$elog"; fail "case 6: waiting for the plan"; }
			grep -qE "^evaluate/rope +[0-9a-f]{12}  ran" "$elog" || { cat "$elog"; fail "case 6: evaluate/rope did not run after its input came back"; }
			n=$(cat "$T/logs$c"/*.log | grep -cE "^(train/rope|tokenize) +[0-9a-f]{12}  ran") || true
			[ "$n" = 0 ] || { cat "$T/logs$c"/*.log; fail "case 6: a job recomputed an input ($n times)"; }
			echo "case 6 ok: job $ejob waited $(grep -c 'waiting for input' "$elog") looks for train/rope, then ran evaluate/rope only; no input recomputed ($((SECONDS - t0)) s)"
		else
			# Not submit --wait: the head would see train/rope missing too and
			# submit it; here only the job's view is hidden.
			for _ in $(seq 240); do
				squeue -h -j "$ejob" -t PENDING,RUNNING,CONFIGURING,COMPLETING 2>/dev/null | grep -q . || break
				sleep 0.5
			done
			grep -q "its input train/rope (key $k) is not in the store" "$elog" || { cat "$elog"; fail "case 7: the job's error does not name the missing input's key"; }
			"$BIN" slurm status "${hopts[@]}" --log-dir "$T/logs$c" > "$T/hstatus7.log" || true
			grep -qE "^  evaluate/rope +failed" "$T/hstatus7.log" || { cat "$T/hstatus7.log"; fail "case 7: status does not show evaluate/rope failed"; }
			n=$(cat "$T/logs$c"/*.log | grep -cE "^(train/rope|tokenize) +[0-9a-f]{12}  ran") || true
			[ "$n" = 0 ] || { cat "$T/logs$c"/*.log; fail "case 7: a job recomputed an input"; }
			mv "$idx.hidden" "$idx"
			echo "case 7 ok: job $ejob failed after its input wait: $(grep -o 'its input train/rope (key [0-9a-f]\{12\}' "$elog" | head -1)...) is not in the store; nothing recomputed ($((SECONDS - t0)) s)"
		fi
	done
fi

if want 8; then
	echo "== 8. two attempts of one stage at once, without flock"
	t0=$SECONDS
	A="$T/attempts-store"
	aopts=(--profile smoke --set variants=alibi --set steps=${SLURM_TEST_ATTEMPT_STEPS:-1500} --store "$A")
	"$BIN" run tokenize "${aopts[@]}" > "$T/local8.log" 2>&1 || { cat "$T/local8.log"; fail "case 8: tokenize locally"; }
	echo '{"default": {"cpus": 1, "mem": "1G", "time": "30:00"}}' > "$T/site8.json"
	"$BIN" slurm submit "${aopts[@]}" --site "$T/site8.json" --log-dir "$T/logs8" --sbatch-arg=--hold > "$T/asub8.log" 2>&1 || { cat "$T/asub8.log"; fail "case 8: submit"; }
	"$BIN" slurm cancel "${aopts[@]}" > "$T/acancel8.log" 2>&1 || { cat "$T/acancel8.log"; fail "case 8: slurm cancel"; }
	held=$(awk '$1 == "submitted" {print $4}' "$T/asub8.log" | paste -sd,)
	[ -z "$(squeue -h -j "$held" -t PENDING,RUNNING)" ] || { squeue -j "$held"; fail "case 8: slurm cancel left jobs of the plan"; }
	grep -q "$(echo "$held" | tr , '\n' | wc -l) jobs cancelled" "$T/acancel8.log" || { cat "$T/acancel8.log"; fail "case 8: slurm cancel did not cancel the plan's $held"; }
	script=$(ls "$T/logs8"/train_alibi.*.sbatch)
	k=$(keyof train/alibi "${aopts[@]}")
	# The same job script twice, as two jobs with no singleton between them
	# (a requeued attempt and its straggler): both run at once.
	ids=()
	for n in 1 2; do
		ids+=("$(ROUTEBENCH_STORE_NOFLOCK=1 sbatch --parsable --cpus-per-task=1 --mem=1G --output="$T/logs8/attempt$n.log" "$script")")
	done
	maxdirs=0 bad=0
	while squeue -h -j "${ids[0]},${ids[1]}" -t PENDING,RUNNING,CONFIGURING,COMPLETING 2>/dev/null | grep -q .; do
		d=$(find "$A/work" -mindepth 2 -maxdepth 2 -name 'job*' 2>/dev/null | wc -l)
		[ "$d" -gt "$maxdirs" ] && maxdirs=$d
		# Reads while they commit: a damaged or torn entry must never be read.
		"$BIN" status "${aopts[@]}" > /dev/null 2> "$T/read8.err" || true
		grep -qE "bad index entry|corrupted|truncated" "$T/read8.err" && { bad=1; cat "$T/read8.err"; }
		sleep 0.2
	done
	[ "$bad" = 0 ] || fail "case 8: a read saw a damaged entry while two attempts committed"
	for n in 1 2; do
		grep -qE "^train/alibi +[0-9a-f]{12}  ran" "$T/logs8/attempt$n.log" || { cat "$T/logs8/attempt$n.log"; fail "case 8: attempt $n did not run train/alibi"; }
	done
	[ "$maxdirs" -ge 2 ] || fail "case 8: the two attempts never had two work dirs at once (max $maxdirs): they did not overlap"
	grep -q "another attempt committed it first" "$T/logs8"/attempt*.log || { cat "$T/logs8"/attempt*.log; fail "case 8: neither attempt found the other's commit (did they overlap?)"; }
	[ -e "$A/index/${k:0:2}/$k" ] || fail "case 8: no committed entry for train/alibi"
	[ -z "$(find "$A/index" -name '.tmp-*')" ] || fail "case 8: temp index files left behind"
	"$BIN" run evaluate/alibi "${aopts[@]}" > "$T/eval8.log" 2>&1 || { cat "$T/eval8.log"; fail "case 8: evaluating the committed output"; }
	grep -qE "^train/alibi +[0-9a-f]{12}  hit" "$T/eval8.log" || { cat "$T/eval8.log"; fail "case 8: the committed train/alibi is not a verified hit"; }
	echo "case 8 ok: slurm cancel cancelled the held plan ($held); jobs ${ids[*]} ran train/alibi at once in $maxdirs work dirs; one entry committed, the second attempt kept it; it reads back verified ($((SECONDS - t0)) s)"
fi

if want 9; then
	echo "== 9. a job that is not the planned stage ends --wait"
	t0=$SECONDS
	M="$T/mismatch-store"
	# Another configuration than the submitter's, as another checkout or
	# binary would give: the job's recipe, and so its key, differ.
	printf '#!/bin/bash\nexec %q "$@" --set steps=77\n' "$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")" > "$T/other-config"
	chmod +x "$T/other-config"
	echo "{\"default\": {\"cpus\": 1, \"mem\": \"1G\", \"time\": \"30:00\"}, \"binary\": {\"train\": \"$T/other-config\"}}" > "$T/site9.json"
	mopts=(--profile smoke --set variants=rope --set steps=109 --store "$M")
	if "$BIN" slurm submit "${mopts[@]}" --site "$T/site9.json" --log-dir "$T/logs9" --poll 1s --poll-max 3s --wait > "$T/wait9.log" 2>&1; then
		cat "$T/wait9.log"; fail "case 9: --wait succeeded with a job of another configuration"
	fi
	grep -q "train/rope (job [0-9]*) is not the stage this submission planned" "$T/wait9.log" || { cat "$T/wait9.log"; fail "case 9: --wait did not end on the mismatch"; }
	grep -qE "recipe [0-9a-f]{64} is not the submitter's [0-9a-f]{64}" "$T/wait9.log" || { cat "$T/wait9.log"; fail "case 9: the two recipes are not printed"; }
	n=$(cat "$T/logs9"/*.log | grep -cE "^train/rope +[0-9a-f]{12}  ran") || true
	[ "$n" = 0 ] || fail "case 9: the mismatched job computed train/rope"
	echo "case 9 ok: --wait ended on train/rope's mismatch after $((SECONDS - t0)) s, both recipes printed, nothing computed"
fi

if want 10; then
	echo "== 10. a site argument that overrides a managed flag"
	before=$(squeue -h -t all | wc -l)
	if "$BIN" slurm submit --profile smoke --store "$T/refused-store" --sbatch-arg=--dependency=afterany:1 > "$T/sub10.log" 2>&1; then
		cat "$T/sub10.log"; fail "case 10: a site --dependency was accepted"
	fi
	grep -q 'sets --dependency, which routebench manages' "$T/sub10.log" || { cat "$T/sub10.log"; fail "case 10: the refusal does not name --dependency"; }
	[ "$(squeue -h -t all | wc -l)" = "$before" ] || fail "case 10: jobs were submitted despite the refusal"
	echo "case 10 ok: $(grep -o 'the sbatch argument.*manages' "$T/sub10.log" | head -1)"
fi

if want 11 && ! lab_user rbtest-b; then
	echo "== 11. skipped: $lab_why"
elif want 11; then
	echo "== 11. two Unix users, one store"
	t0=$SECONDS
	usr=rbtest-b
	U="$T/shared-store"
	mkdir -p "$U" && chgrp "$grp" "$U" && chmod 2775 "$U"
	uopts=(--profile smoke --set variants=rope --set steps=113 --store "$U" --site "$T/site11.json" --poll 1s --poll-max 3s)
	echo '{"default": {"cpus": 1, "mem": "1G", "time": "30:00"}}' > "$T/site11.json"
	chmod 644 "$T/site11.json"
	bin=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
	(umask 002; "$BIN" slurm submit "${uopts[@]}" --log-dir "$T/logs11a" --sbatch-arg=--hold) > "$T/sub11a.log" 2>&1 || { cat "$T/sub11a.log"; fail "case 11: user A's submit"; }
	mkdir -p "$T/logs11b" && chown "$usr" "$T/logs11b"
	# B trusts root's checkout (docs/cluster.md): else git refuses it, and
	# so does every plan B builds.
	as "$usr" "$T/logs11b" 002 git config --global --add safe.directory "$PWD"
	runuser -u "$usr" -- env PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME="$T/logs11b" bash -c 'umask 002; cd "$1"; shift; exec "$@"' _ "$PWD" \
		"$bin" slurm submit "${uopts[@]}" --log-dir "$T/logs11b" --wait --out "$T/logs11b/out" > "$T/sub11b.log" 2>&1 & b=$!
	for _ in $(seq 120); do grep -q "^slurm submit" "$T/sub11b.log" 2>/dev/null && break; sleep 0.25; done
	grep -q "0 already queued or running" "$T/sub11b.log" || { cat "$T/sub11b.log"; fail "case 11: user B's submit took user A's jobs for its own"; }
	scontrol release $(awk '$1 == "submitted" {print $4}' "$T/sub11a.log")
	(umask 002; "$BIN" slurm submit "${uopts[@]}" --log-dir "$T/logs11a" --wait --out "$T/out11a") > "$T/wait11a.log" 2>&1 || { cat "$T/wait11a.log"; fail "case 11: user A's --wait"; }
	wait "$b" || { cat "$T/sub11b.log"; fail "case 11: user B's --wait"; }
	[ -z "$(find "$U" -type d ! -group "$grp")" ] || { find "$U" -type d ! -group "$grp" | head; fail "case 11: store dirs outside the store's group"; }
	[ -z "$(find "$U" -type d ! -perm -g+ws)" ] || { find "$U" -type d ! -perm -g+ws -exec ls -ld {} + | head; fail "case 11: store dirs not group-writable and setgid"; }
	bjobs=$(grep -c '^submitted' "$T/sub11b.log")
	echo "case 11 ok: users root and $usr each submitted their own jobs (B: $bjobs) for one plan, both --wait exported; every store dir is $grp, g+ws ($((SECONDS - t0)) s)"
fi

if want 12; then
	echo "== 12. a sweep's train stages as one throttled job array"
	t0=$SECONDS
	cat > "$T/sweep12.json" <<JSON
{"name": "slurm-array", "profile": "smoke", "set": ["variants=random-qk", "seeds=1", "steps=60"],
 "axes": [{"key": "sigma_min", "values": [0.1, 0.2, 0.35]}]}
JSON
	echo '{"default": {"cpus": 1, "mem": "1G", "time": "30:00"}, "array_throttle": 1}' > "$T/site12.json"
	wopts=(--sweep "$T/sweep12.json" --store "$T/array-store" --site "$T/site12.json" --log-dir "$T/logs12" --poll 1s --poll-max 3s)
	"$BIN" slurm submit "${wopts[@]}" --dry-run > "$T/dry12.log" 2>&1 || { cat "$T/dry12.log"; fail "case 12: dry run"; }
	grep -q "job array of 3 train stages (--array=0-2%1)" "$T/dry12.log" || { cat "$T/dry12.log"; fail "case 12: the dry run shows no throttled array of the 3 train stages"; }
	grep -q "aftercorr:" "$T/dry12.log" || { cat "$T/dry12.log"; fail "case 12: the evaluate array does not line up with the train array (aftercorr)"; }
	# (--outage: should this script stop, the --wait in the background
	# gives up soon after the cluster is gone)
	"$BIN" slurm submit "${wopts[@]}" --outage 20s --wait --out "$T/out12" > "$T/sub12.log" 2>&1 & w=$!
	# The throttle: never two tasks of the train array running at once.
	maxrun=0 tarr=
	while kill -0 "$w" 2>/dev/null; do
		# (awk fails while the log does not exist yet: not an error here)
		[ -n "$tarr" ] || tarr=$(awk '$1 == "array" {sub(":", "", $2); print $2; exit}' "$T/sub12.log" 2>/dev/null || true)
		if [ -n "$tarr" ]; then
			n=$(squeue -h -r -t RUNNING -o %j 2>/dev/null | grep -cx "$tarr") || true
			[ "$n" -gt "$maxrun" ] && maxrun=$n
		fi
		sleep 0.2
	done
	wait "$w" || { cat "$T/sub12.log"; fail "case 12: --wait for the sweep"; }
	grep -q "as 4 jobs, 2 of them job arrays (sbatch calls: 4," "$T/sub12.log" || { cat "$T/sub12.log"; fail "case 12: want 4 sbatch calls (tokenize, the train array, the evaluate array, the study)"; }
	[ "$maxrun" = 1 ] || fail "case 12: $maxrun tasks of the train array ran at once with array_throttle 1"
	# Each task ran its own stage, once: one 'ran' line per task log, three
	# different train stages.
	ran=$(for i in 0 1 2; do grep -E "^[^ ]+ +[0-9a-f]{12}  ran" "$T/logs12/$tarr.$i.log" | awk '{print $1}'; done)
	[ "$(echo "$ran" | grep -c '/train/random-qk$')" = 3 ] && [ "$(echo "$ran" | sort -u | wc -l)" = 3 ] || { echo "$ran"; fail "case 12: the train tasks did not each run one train stage of their own"; }
	[ -s "$T/out12/STUDY-slurm-array.md" ] || { ls "$T/out12"; fail "case 12: no STUDY-slurm-array.md exported"; }
	# Held, then cancelled before any task started: Slurm keeps a record
	# per array without a task index (123_[0-2]); each of its stages is
	# cancelled, none not-submitted.
	hopts=(--sweep "$T/sweep12.json" --store "$T/array-held-store" --site "$T/site12.json" --log-dir "$T/logs12h")
	"$BIN" slurm submit "${hopts[@]}" --sbatch-arg=--hold > "$T/held12.log" 2>&1 || { cat "$T/held12.log"; fail "case 12: the held submission"; }
	"$BIN" slurm cancel "${hopts[@]}" > "$T/cancel12.log" 2>&1 || { cat "$T/cancel12.log"; fail "case 12: slurm cancel of the held arrays"; }
	"$BIN" slurm status "${hopts[@]}" > "$T/status12h.log" 2>&1 || true
	n=$(grep -cE "/train/random-qk +cancelled" "$T/status12h.log") || true
	if [ "$n" != 3 ] || grep -q "not-submitted" "$T/status12h.log"; then
		cat "$T/status12h.log"; squeue -h -r -t all -o '%i %j %T %r'; fail "case 12: after slurm cancel of the held arrays, $n of 3 train stages show cancelled"
	fi
	echo "case 12 ok: train array $tarr (3 tasks, --array=0-2%1, at most $maxrun running), evaluates after it by aftercorr, study exported; $(grep -o 'as 4 jobs.*' "$T/sub12.log" | head -1); held and cancelled, status shows $(grep -cE ' cancelled ' "$T/status12h.log") stages cancelled ($((SECONDS - t0)) s)"
fi

if want 14 && ! { lab_user rbtest-b && lab_user rbtest-c; }; then
	echo "== 14. skipped: $lab_why"
elif want 14; then
	echo "== 14. a lab: root's checkout, a group store, users B and C under umask 022"
	t0=$SECONDS
	W="$T/lab-store"
	mkdir -p "$W" && chgrp "$grp" "$W" && chmod 2775 "$W"
	# The jobs keep umask 022 too (the site's umask; 0002 by default).
	echo '{"default": {"cpus": 1, "mem": "1G", "time": "30:00"}, "umask": "0022"}' > "$T/site14.json"
	chmod 644 "$T/site14.json"
	lopts=(--profile smoke --set variants=rope --set steps=40 --store "$W")
	bin=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
	for u in b c none; do mkdir -p "$T/home14$u"; done
	chown rbtest-b "$T/home14b"; chown rbtest-c "$T/home14c"; chmod 777 "$T/home14none"
	# A user who has not trusted root's checkout: git refuses it, and the
	# plan fails naming the fix (never a report labelled unknown).
	if as rbtest-b "$T/home14none" 022 "$bin" plan "${lopts[@]}" > "$T/plan14none.log" 2>&1; then
		cat "$T/plan14none.log"; fail "case 14: a plan from a checkout another user owns succeeded without safe.directory"
	fi
	grep -q "git config --global --add safe.directory $PWD" "$T/plan14none.log" || { cat "$T/plan14none.log"; fail "case 14: the refusal does not name the safe.directory fix"; }
	for u in b c; do as "rbtest-$u" "$T/home14$u" 022 git config --global --add safe.directory "$PWD"; done
	# A read-only command under umask 022 creates nothing in the store.
	as rbtest-b "$T/home14b" 022 "$bin" plan "${lopts[@]}" > "$T/plan14b.log" 2>&1 || { cat "$T/plan14b.log"; fail "case 14: user B's plan"; }
	[ -z "$(ls -A "$W")" ] || { ls -la "$W"; fail "case 14: a plan created $(ls -A "$W" | paste -sd' ') in the fresh group store"; }
	as rbtest-b "$T/home14b" 022 "$bin" slurm submit "${lopts[@]}" --site "$T/site14.json" --log-dir "$T/home14b/logs" --poll 1s --poll-max 3s --wait --out "$T/home14b/out" > "$T/sub14b.log" 2>&1 || { cat "$T/sub14b.log"; fail "case 14: user B's submit --wait"; }
	# C submits the same plan: every stage is cached for C too, the report
	# among them (its key holds the commit label): nothing to submit.
	as rbtest-c "$T/home14c" 022 "$bin" slurm submit "${lopts[@]}" --site "$T/site14.json" --log-dir "$T/home14c/logs" --poll 1s --poll-max 3s --wait --out "$T/home14c/out" > "$T/sub14c.log" 2>&1 || { cat "$T/sub14c.log"; fail "case 14: user C's submit --wait"; }
	grep -q " 0 submitted as 0 jobs" "$T/sub14c.log" || { cat "$T/sub14c.log"; fail "case 14: user C's submit of B's finished plan submitted jobs (another report key?)"; }
	n=$(cat "$T"/home14b/logs/*.log | grep -cE "^report +[0-9a-f]{12}  ran") || true
	[ "$n" = 1 ] || fail "case 14: the report ran $n times, want once"
	lb=$(grep -o '| commit | `[^`]*`' "$T/home14b/out/RESULTS.md" || true)
	lc=$(grep -o '| commit | `[^`]*`' "$T/home14c/out/RESULTS.md" || true)
	[ -n "$lb" ] && [ "$lb" = "$lc" ] && [[ $lb != *unknown* ]] || fail "case 14: RESULTS.md labels: B's '$lb', C's '$lc'"
	# (the report's key comes further below its name than keyof looks)
	reportkey() { grep -A12 '"name": "report"' | grep -o '"key": "[0-9a-f]*"' | head -1 | cut -d'"' -f4 || true; }
	kr=$("$BIN" plan --json "${lopts[@]}" | reportkey)
	kb=$(as rbtest-b "$T/home14b" 022 "$bin" plan --json "${lopts[@]}" | reportkey)
	[ -n "$kr" ] && [ "$kr" = "$kb" ] || fail "case 14: the report's key is $kr for root (the checkout's owner) and $kb for B"
	# C writes a stage of its own under umask 022, beside the directories
	# B's commands made: no permission error.
	as rbtest-c "$T/home14c" 022 "$bin" run train/alibi --profile smoke --set variants=alibi --set steps=40 --store "$W" > "$T/run14c.log" 2>&1 || { cat "$T/run14c.log"; fail "case 14: user C could not write the store B made under umask 022"; }
	as rbtest-c "$T/home14c" 022 "$bin" store check --store "$W" > "$T/check14.log" 2>&1 || { cat "$T/check14.log"; fail "case 14: store check found directories the group cannot write"; }
	# The control: a directory made by hand under umask 022 is named.
	as rbtest-c "$T/home14c" 022 mkdir "$W/index/zz"
	if as rbtest-c "$T/home14c" 022 "$bin" store check --store "$W" > "$T/check14bad.log" 2>&1; then
		cat "$T/check14bad.log"; fail "case 14: store check passed a directory made under umask 022"
	fi
	grep -q "$W/index/zz .*not group-writable" "$T/check14bad.log" || { cat "$T/check14bad.log"; fail "case 14: store check does not name $W/index/zz"; }
	rmdir "$W/index/zz"
	# A train output removed after its job completed: missing, not done-unseen.
	k=$(keyof train/rope "${lopts[@]}")
	mv "$W/index/${k:0:2}/$k" "$T/train14.entry"
	as rbtest-b "$T/home14b" 022 "$bin" slurm status "${lopts[@]}" --log-dir "$T/home14b/logs" > "$T/status14.log" 2>&1 || true
	mv "$T/train14.entry" "$W/index/${k:0:2}/$k"
	grep -qE "^  train/rope +missing" "$T/status14.log" && grep -q "submit again" "$T/status14.log" || { cat "$T/status14.log"; fail "case 14: status does not show the removed train/rope missing"; }
	echo "case 14 ok: without safe.directory: $(grep -o 'git refuses the checkout [^ ]*' "$T/plan14none.log" | head -1); a plan left the store empty; B's run and C's cached submit share one report ($lb, key ${kr:0:12} for root and B); C wrote beside B under umask 022; store check passes; a removed output shows missing ($((SECONDS - t0)) s)"
fi

if want 1; then
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
grep -q "0 submitted as 0 jobs, 0 of them job arrays (sbatch calls: 0," "$T/sub3.log" || { cat "$T/sub3.log"; fail "a resubmit of a finished plan called sbatch"; }
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
fi # cases 1-5
if want 13; then
	echo "== 13. a job that runs out of memory is retried once with mem_retry"
	if ! slurm_cgroup_ok; then
		echo "case 13 skipped: no writable cgroup v1 memory controller here, so Slurm cannot enforce --mem (the unit tests cover the retry with a fake Slurm)"
	else
		t0=$SECONDS
		slurm_stop
		SLURM_LOCAL_CGROUP=1 slurm_start || fail "case 13: starting the cluster with cgroup memory limits"
		# tokenize's resident set is about 125 MB: 32M runs it out of memory.
		echo '{"default": {"cpus": 1, "mem": "1G", "time": "30:00"}, "kinds": {"tokenize": {"mem": "32M", "mem_retry": "1G"}}}' > "$T/site13.json"
		oopts=(--profile smoke --set variants=rope --set steps=60 --site "$T/site13.json" --poll 1s --poll-max 3s)
		"$BIN" slurm submit "${oopts[@]}" --store "$T/oom-store" --log-dir "$T/logs13" > "$T/sub13a.log" 2>&1 || { cat "$T/sub13a.log"; fail "case 13: submit"; }
		tjob=$(jobof tokenize "$T/sub13a.log")
		for _ in $(seq 240); do
			squeue -h -j "$tjob" -t PENDING,RUNNING,CONFIGURING,COMPLETING 2>/dev/null | grep -q . || break
			sleep 0.5
		done
		st=$(squeue -h -j "$tjob" -t all -o %T)
		[ "$st" = OUT_OF_MEMORY ] || { cat "$T/logs13"/tokenize.*.log; fail "case 13: tokenize's job $tjob ended $st, not OUT_OF_MEMORY"; }
		"$BIN" slurm status "${oopts[@]}" --store "$T/oom-store" --log-dir "$T/logs13" > "$T/status13.log" 2>&1 || true
		grep -qE "^  tokenize +failed +job $tjob OUT_OF_MEMORY" "$T/status13.log" && grep -q "out of memory at 32M: submit (and --wait) retry it once with mem_retry 1G" "$T/status13.log" \
			|| { cat "$T/status13.log"; fail "case 13: status does not show the out-of-memory job and its retry"; }
		"$BIN" slurm submit "${oopts[@]}" --store "$T/oom-store" --log-dir "$T/logs13" --wait --out "$T/out13" > "$T/sub13b.log" 2>&1 || { cat "$T/sub13b.log"; fail "case 13: the resubmit with mem_retry"; }
		grep -qE "^submitted tokenize .*\(mem_retry 1G: job $tjob ran out of memory at 32M\)" "$T/sub13b.log" || { cat "$T/sub13b.log"; fail "case 13: tokenize was not submitted again with mem_retry"; }
		rjob=$(jobof tokenize "$T/sub13b.log")
		[ "$(squeue -h -j "$rjob" -t all -o '%T %m')" = "COMPLETED 1G" ] || { squeue -h -j "$rjob" -t all; fail "case 13: the retry job $rjob did not complete with 1G"; }
		# --wait retries by itself too, once.
		"$BIN" slurm submit "${oopts[@]}" --store "$T/oom-store2" --log-dir "$T/logs13b" --wait --out "$T/out13b" > "$T/wait13.log" 2>&1 || { cat "$T/wait13.log"; fail "case 13: --wait with an out-of-memory job"; }
		grep -q "stage tokenize's job [0-9]* ran out of memory; submitting it again with the site's mem_retry 1G (once)" "$T/wait13.log" || { cat "$T/wait13.log"; fail "case 13: --wait did not retry tokenize with mem_retry"; }
		echo "case 13 ok: tokenize's job $tjob ended OUT_OF_MEMORY at 32M, status said so, the resubmit ran it as job $rjob with 1G and the plan finished; --wait retried by itself as well ($((SECONDS - t0)) s)"
	fi
fi
echo "test-slurm: all cases passed in $((SECONDS - start)) s"
