# A one-node Slurm cluster in a temp dir, for `make test-slurm` (sourced by
# scripts/test-slurm.sh). slurm_start writes a config for this machine's
# cores and memory (slurmd -C), starts munged (its own socket, key and pid
# file in the temp dir), slurmctld and slurmd, and waits for `scontrol
# ping`; slurm_stop stops exactly those three processes, by the pids their
# pid files name. Call slurm_stop from an EXIT trap.
# Needs root and the slurm-wlm and munge packages.
# SLURM_LOCAL_CGROUP=1 makes memory a consumable resource enforced by
# cgroups (task/cgroup on cgroup v1, CR_Core_Memory), so that a job past
# its --mem ends OUT_OF_MEMORY as on a real cluster; slurm_cgroup_ok says
# whether this machine allows it (a writable v1 memory controller).

slurm_start() {
	SLURM_DIR=$(mktemp -d /tmp/routebench-slurm.XXXXXX)
	local d=$SLURM_DIR host node
	mkdir -p "$d/state" "$d/spool" "$d/munge"
	chmod 700 "$d/munge"
	host=$(hostname -s)
	node=$(slurmd -C | head -1) # NodeName=... CPUs=... RealMemory=...
	[[ $node == NodeName=* ]] || { echo "slurm_start: slurmd -C printed no NodeName line: $node" >&2; return 1; }
	local task=task/none proctrack=proctrack/linuxproc select=CR_Core
	if [ -n "${SLURM_LOCAL_CGROUP:-}" ]; then
		task=task/cgroup proctrack=proctrack/cgroup select=CR_Core_Memory
		printf '%s\n' CgroupPlugin=cgroup/v1 CgroupMountpoint=/sys/fs/cgroup CgroupAutomount=no \
			ConstrainRAMSpace=yes ConstrainSwapSpace=yes > "$d/cgroup.conf"
	fi
	dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
	chmod 400 "$d/munge/munge.key"
	munged --force --key-file="$d/munge/munge.key" --socket="$d/munge/munge.sock" \
		--pid-file="$d/munge/munged.pid" --log-file="$d/munge/munged.log" --seed-file="$d/munge/seed" \
		|| { echo "slurm_start: munged did not start (log: $d/munge/munged.log)" >&2; return 1; }
	cat > "$d/slurm.conf" <<CONF
ClusterName=routebench-ci
SlurmctldHost=$host
SlurmctldPort=${SLURM_TEST_CTLD_PORT:-6917}
SlurmdPort=${SLURM_TEST_SLURMD_PORT:-6918}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.sock
SlurmUser=root
SlurmdUser=root
ProctrackType=$proctrack
TaskPlugin=$task
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=$select
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
ReturnToService=2
MinJobAge=86400
MpiDefault=none
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
$node State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$d/slurm.conf
	slurmctld -i -f "$SLURM_CONF" || { echo "slurm_start: slurmctld did not start (log: $d/slurmctld.log)" >&2; return 1; }
	slurmd -f "$SLURM_CONF" || { echo "slurm_start: slurmd did not start (log: $d/slurmd.log)" >&2; return 1; }
	local i
	for i in $(seq 60); do
		if scontrol ping >/dev/null 2>&1 && sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
			echo "slurm: one-node cluster up in $d ($node)"
			return 0
		fi
		sleep 0.5
	done
	echo "slurm_start: the cluster did not answer in 30 s (logs in $d)" >&2
	tail -5 "$d/slurmctld.log" "$d/slurmd.log" >&2
	return 1
}

slurm_cgroup_ok() {
	[ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]
}

slurm_stop() {
	[ -n "${SLURM_DIR:-}" ] || return 0
	local f pid
	for f in "$SLURM_DIR/slurmd.pid" "$SLURM_DIR/slurmctld.pid" "$SLURM_DIR/munge/munged.pid"; do
		[ -s "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null || continue
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	done
	if [ -z "${SLURM_KEEP:-}" ]; then rm -rf "$SLURM_DIR"; else echo "slurm: kept $SLURM_DIR"; fi
	SLURM_DIR=
}
