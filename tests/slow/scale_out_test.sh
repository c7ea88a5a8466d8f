#!/usr/bin/env bash
# The shipped design sweep run three ways, the merged tables compared byte for byte:
#   1. locally:        framesim sweep S -j 2 -o local
#   2. GNU parallel:   one job per shard (--shard I/4), then framesim merge shard-* -o merged-parallel
#   3. Slurm:          a single-node cluster started here on loopback (munged, slurmctld, slurmd with a private
#                      slurm.conf), framesim sweep S --emit slurm, sbatch, then framesim merge DIR/shard-*
# results.csv and results.json (apart from the command that wrote it) of both merges must equal the local ones. Every daemon started here is stopped
# on exit (a trap, and a watchdog in case this script is killed). Exit code 77 (skipped) when a tool is missing
# and cannot be installed (`make deps-slow`).
#
# usage: scale_out_test.sh FRAMESIM_BINARY PROJECT_SOURCE_DIR
set -euo pipefail

FRAMESIM=${1:?usage: scale_out_test.sh FRAMESIM_BINARY PROJECT_SOURCE_DIR}
SRC=${2:?usage: scale_out_test.sh FRAMESIM_BINARY PROJECT_SOURCE_DIR}
FRAMESIM=$(realpath "$FRAMESIM")
SRC=$(realpath "$SRC")
export PATH="$PATH:/usr/sbin:/sbin"

say() { printf 'scale_out: %s\n' "$*"; }
fail() { printf 'scale_out: FAIL: %s\n' "$*" >&2; exit 1; }
skip() { printf 'scale_out: SKIP: %s\n' "$*"; exit 77; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# A job array task id in our own environment (ctest run inside a Slurm job) would shard the local sweep.
for v in $(compgen -e); do
  case $v in SLURM_* | SBATCH_* | SQUEUE_* | SINFO_* | SCONTROL_* | PARALLEL*) unset "$v" ;; esac
done

[[ -x $FRAMESIM ]] || fail "$FRAMESIM: not an executable (the framesim binary)"
[[ -f $SRC/hardware/seed_reference.yaml ]] || fail "$SRC: not the framesim source folder"

# ---------------------------------------------------------------------------------------------------------------
# Tools: GNU parallel, munge, Slurm. Installed the Makefile's way (make deps-slow) when missing and allowed.
TOOLS=(parallel munged munge unmunge slurmctld slurmd sbatch squeue sinfo scontrol scancel timeout hostname)
missing_tools() {
  local t out=()
  for t in "${TOOLS[@]}"; do command -v "$t" > /dev/null 2>&1 || out+=("$t"); done
  echo "${out[*]:-}"
}
missing=$(missing_tools)
if [[ -n $missing ]]; then
  say "missing: $missing; trying make deps-slow (apt-get: parallel slurm-wlm munge)"
  if command -v apt-get > /dev/null && command -v make > /dev/null &&
    { [[ $(id -u) == 0 ]] || sudo -n true 2> /dev/null; }; then
    timeout 300 make -C "$SRC" deps-slow < /dev/null || say "make deps-slow failed"
  else
    say "cannot install: no apt-get or make, or neither root nor password-less sudo"
  fi
  missing=$(missing_tools)
  [[ -z $missing ]] || skip "needed tools are missing and could not be installed: $missing"
fi

# ---------------------------------------------------------------------------------------------------------------
# A private work folder (world-searchable: munged insists on it for its socket's path), removed on success.
base=${TMPDIR:-/tmp}
(( ${#base} <= 60 )) || base=/tmp  # the munge socket's path must stay short (sun_path)
WORK=$(mktemp -d "$base/framesim-scale-out.XXXXXX")
chmod 755 "$WORK"
DAEMONS=()      # "name pid" of every daemon started here, in start order
JOB_ID=""
WATCHDOG=""
KEEP_WORK=${FRAMESIM_KEEP_WORK:-0}  # 1: keep the work folder even on success (its logs, shards, tables)

stop_pid() {  # stop_pid NAME PID: TERM, up to 20 s, then KILL; reaps it
  local name=$1 pid=$2 i
  kill -0 "$pid" 2> /dev/null || { wait "$pid" 2> /dev/null || true; return 0; }
  kill -TERM "$pid" 2> /dev/null || true
  for ((i = 0; i < 200; i++)); do
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2> /dev/null; then
    say "$name (pid $pid) did not stop on TERM within 20 s: KILL"
    kill -KILL "$pid" 2> /dev/null || true
  fi
  wait "$pid" 2> /dev/null || true
}

# Processes started (directly or through Slurm) by this test: every one names the work folder on its command
# line or runs in it (slurmstepd and the job's processes).
leftovers() {
  local p cmd
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $p == "$$" || $p == "$BASHPID" || $p == "${WATCHDOG:-x}" ]] && continue
    cmd=$(tr '\0' ' ' 2> /dev/null < "/proc/$p/cmdline") || continue
    if [[ $cmd == *"$WORK"* || $(readlink "/proc/$p/cwd" 2> /dev/null) == "$WORK"* ]]; then
      echo "$p"
    fi
  done
}

show_logs() {
  local f
  for f in "$WORK"/slurm/slurmctld.log "$WORK"/slurm/slurmd.log "$WORK"/munge/munged.log "$WORK"/*.stderr; do
    [[ -s $f ]] || continue
    echo "---- $f (last 25 lines)"
    tail -n 25 "$f"
  done
}

cleanup() {
  local rc=$? i entry left
  trap - EXIT INT TERM
  cd /
  if [[ -n $JOB_ID ]] && [[ -n $(squeue -h -j "$JOB_ID" -o %i 2> /dev/null) ]]; then
    say "cancelling Slurm job $JOB_ID"
    scancel "$JOB_ID" 2> /dev/null || true
    for ((i = 0; i < 100; i++)); do
      [[ -z $(squeue -h -j "$JOB_ID" -o %i 2> /dev/null) ]] && break
      sleep 0.1
    done
  fi
  for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
    entry=${DAEMONS[i]}
    stop_pid "${entry% *}" "${entry#* }"
  done
  [[ -z ${RUN_MUNGE_CREATED:-} ]] || rmdir /run/munge 2> /dev/null || true
  # Job steps (slurmstepd) outlive slurmd by a moment; anything still here after 10 s is killed and reported.
  for ((i = 0; i < 100; i++)); do
    left=$(leftovers)
    [[ -z $left ]] && break
    sleep 0.1
  done
  if [[ -n $left ]]; then
    for i in $left; do
      echo "scale_out: still running after the cluster stopped: $i $(tr '\0' ' ' 2> /dev/null < /proc/"$i"/cmdline)" >&2
      kill -KILL "$i" 2> /dev/null || true
    done
    [[ $rc == 0 ]] && rc=1
  fi
  if [[ -n $WATCHDOG ]]; then
    kill "$WATCHDOG" 2> /dev/null || true
    wait "$WATCHDOG" 2> /dev/null || true
  fi
  if [[ $rc != 0 && $rc != 77 ]]; then
    show_logs >&2
    KEEP_WORK=1
  fi
  if [[ $KEEP_WORK == 1 ]]; then
    say "work folder kept for inspection: $WORK"
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# If this script is killed outright (SIGKILL, e.g. a ctest timeout: no trap runs), the watchdog kills the
# daemons it started, then what they started (job steps, simulations), and removes the work folder.
: > "$WORK/daemons.pids"
(
  while kill -0 $$ 2> /dev/null; do sleep 1; done
  while read -r pid; do kill -KILL "$pid" 2> /dev/null || true; done < "$WORK/daemons.pids"
  sleep 1
  for pid in $(leftovers); do kill -KILL "$pid" 2> /dev/null || true; done
  rm -rf "$WORK"
) < /dev/null > /dev/null 2>&1 &
WATCHDOG=$!

started() {  # started NAME PID
  DAEMONS+=("$1 $2")
  echo "$2" >> "$WORK/daemons.pids"
}

# ---------------------------------------------------------------------------------------------------------------
# The sweep: the shipped scenarios/sweeps/orin_nx_design.yaml, 5 axes, 4 x 2 x 2 x 2 x 2 = 64 points of 6 s each.
SWEEP=$SRC/scenarios/sweeps/orin_nx_design.yaml  # the same absolute path everywhere: results.json records it
POINTS=64

check_table() {  # check_table DIR: a complete table of POINTS rows
  [[ -f $1/results.csv && -f $1/results.json ]] || fail "$1: no results.csv / results.json"
  local rows
  rows=$(($(wc -l < "$1/results.csv") - 1))
  [[ $rows == "$POINTS" ]] || fail "$1/results.csv: $rows rows, expected $POINTS"
}

# ---------------------------------------------------------------------------------------------------------------
say "1/3 local: framesim sweep -j 2"
cd "$WORK"
t0=$(now)
timeout 600 "$FRAMESIM" sweep "$SWEEP" -j 2 -o "$WORK/local" > local.stdout 2> local.stderr ||
  fail "the local sweep failed (exit $?): $(tail -n 5 local.stderr)"
T_LOCAL=$(since "$t0")
check_table "$WORK/local"
say "    local: $POINTS points in $T_LOCAL s"

# ---------------------------------------------------------------------------------------------------------------
say "2/3 GNU parallel: 4 shards, 2 at a time"
mkdir -p "$WORK/parallel"
cd "$WORK/parallel"
export PARALLEL_HOME=$WORK/parallel/home  # not ~/.parallel
t0=$(now)
rc=0
timeout 600 parallel --will-cite -j2 --joblog "$WORK/parallel/joblog" --results "$WORK/parallel/out" \
  "$FRAMESIM" sweep "$SWEEP" --shard {}/4 -o shard-{} ::: 0 1 2 3 > "$WORK/parallel.stdout" 2> "$WORK/parallel.stderr" ||
  rc=$?
[[ $rc == 0 ]] || fail "parallel exited with $rc (number of failed jobs, or 124: timed out); joblog:
$(cat "$WORK/parallel/joblog" 2> /dev/null)"
# The joblog: a header and one line per job; column 7 is the exit value.
jobs_ok=$(awk -F'\t' 'NR > 1 && $7 == 0' "$WORK/parallel/joblog" | wc -l)
[[ $jobs_ok == 4 ]] || fail "parallel joblog shows $jobs_ok of 4 jobs succeeded:
$(cat "$WORK/parallel/joblog")"
timeout 60 "$FRAMESIM" merge shard-0 shard-1 shard-2 shard-3 -o "$WORK/merged-parallel" > "$WORK/merge-parallel.stdout" \
  2> "$WORK/merge-parallel.stderr" || fail "framesim merge of the parallel shards failed: $(cat "$WORK/merge-parallel.stderr")"
T_PARALLEL=$(since "$t0")
check_table "$WORK/merged-parallel"
say "    parallel: 4 jobs + merge in $T_PARALLEL s"

# ---------------------------------------------------------------------------------------------------------------
say "3/3 Slurm: a single-node cluster on 127.0.0.1"
t_cluster=$(now)
RUN_USER=$(id -un)

# munged: a fresh key, its socket, log, pid and seed under the work folder. If that munged does not come up,
# the system's: one already answering on /run/munge/munge.socket.2, or (as root) one started here as user munge
# with the system key. FRAMESIM_TEST_SYSTEM_MUNGE=1 goes straight to the system one (to test that path).
munge_answers() { munge -n -S "$1" 2> /dev/null | unmunge -S "$1" > /dev/null 2>&1; }
wait_munged() {  # wait_munged SOCKET PID: up to 10 s for an answer while PID lives
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -S $1 ]] && munge_answers "$1" && return 0
    kill -0 "$2" 2> /dev/null || return 1
    sleep 0.1
  done
  munge_answers "$1"
}
start_private_munged() {
  mkdir -p "$WORK/munge"
  chmod 755 "$WORK/munge"  # clients must reach the socket; munged refuses a path writable by others
  local key=$WORK/munge/munge.key
  if command -v mungekey > /dev/null; then mungekey --create --keyfile="$key" > /dev/null 2>&1 || rm -f "$key"; fi
  [[ -s $key ]] || dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
  chmod 600 "$key"
  MUNGE_SOCKET=$WORK/munge/munge.socket
  munged --foreground --socket="$MUNGE_SOCKET" --key-file="$key" --log-file="$WORK/munge/munged.log" \
    --pid-file="$WORK/munge/munged.pid" --seed-file="$WORK/munge/munged.seed" > "$WORK/munged.stderr" 2>&1 &
  started munged $!
  wait_munged "$MUNGE_SOCKET" $! || { stop_pid munged $!; return 1; }
}
start_system_munged() {
  MUNGE_SOCKET=/run/munge/munge.socket.2
  munge_answers "$MUNGE_SOCKET" && { say "    using the running system munged ($MUNGE_SOCKET)"; return 0; }
  [[ $(id -u) == 0 ]] && id munge > /dev/null 2>&1 && [[ -s /etc/munge/munge.key ]] && command -v setpriv > /dev/null ||
    return 1
  [[ -d /run/munge ]] || RUN_MUNGE_CREATED=1
  install -d -o munge -g munge -m 755 /run/munge
  setpriv --reuid=munge --regid=munge --init-groups munged --foreground > "$WORK/munged.stderr" 2>&1 &
  started munged $!
  wait_munged "$MUNGE_SOCKET" $! && say "    started the system munged as user munge ($MUNGE_SOCKET)"
}
if [[ ${FRAMESIM_TEST_SYSTEM_MUNGE:-0} == 1 ]] || ! start_private_munged; then
  [[ ${FRAMESIM_TEST_SYSTEM_MUNGE:-0} == 1 ]] || say "    munged with a private socket did not answer ($(tail -n 1 "$WORK/munged.stderr")); trying the system munged"
  start_system_munged || fail "no munged: a private one did not answer and the system one cannot be used or started:
$(cat "$WORK/munged.stderr" 2> /dev/null)"
fi

# Two free TCP ports for slurmctld and slurmd (below the usual ephemeral range).
port_in_use() {
  if command -v ss > /dev/null; then
    [[ -n $(ss -Htan "( sport = :$1 )" 2> /dev/null) ]]
  else
    (echo > "/dev/tcp/127.0.0.1/$1") 2> /dev/null
  fi
}
pick_port() {
  local p i
  for ((i = 0; i < 500; i++)); do
    p=$((20000 + RANDOM % 10000))
    [[ $p == "${1:-0}" ]] && continue
    port_in_use "$p" || { echo "$p"; return 0; }
  done
  return 1
}
CTLD_PORT=$(pick_port) || fail "no free TCP port for slurmctld"
SLURMD_PORT=$(pick_port "$CTLD_PORT") || fail "no free TCP port for slurmd"

NODE=$(hostname -s)
S=$WORK/slurm
mkdir -p "$S/state" "$S/spool" "$S/tmp"
: > "$S/plugstack.conf"  # no SPANK plugins from /etc/slurm
export SLURM_CONF=$S/slurm.conf
cat > "$SLURM_CONF" << EOF
# A private single-node cluster for tests/slow/scale_out_test.sh, on loopback.
ClusterName=framesim-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=$RUN_USER
SlurmdUser=$RUN_USER
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$S/plugstack.conf
TmpFS=$S/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=60
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF

cd "$S"  # the daemons' (and so the job steps') working folder
slurmctld -D -i -f "$SLURM_CONF" > "$WORK/slurmctld.stderr" 2>&1 &
started slurmctld $!
CTLD_PID=$!
for ((i = 0; i < 300; i++)); do
  scontrol ping 2> /dev/null | grep -q 'is UP' && break
  kill -0 "$CTLD_PID" 2> /dev/null || fail "slurmctld exited: $(tail -n 20 "$S/slurmctld.log" "$WORK/slurmctld.stderr" 2> /dev/null)"
  sleep 0.1
done
scontrol ping 2> /dev/null | grep -q 'is UP' || fail "slurmctld did not answer within 30 s"

slurmd -D -f "$SLURM_CONF" -N "$NODE" > "$WORK/slurmd.stderr" 2>&1 &
started slurmd $!
SLURMD_PID=$!
state=""
for ((i = 0; i < 600; i++)); do
  state=$(sinfo -h -N -n "$NODE" -o %t 2> /dev/null | head -n 1 || true)
  [[ $state == idle ]] && break
  kill -0 "$SLURMD_PID" 2> /dev/null || fail "slurmd exited: $(tail -n 20 "$S/slurmd.log" "$WORK/slurmd.stderr" 2> /dev/null)"
  kill -0 "$CTLD_PID" 2> /dev/null || fail "slurmctld exited"
  sleep 0.1
done
[[ $state == idle ]] || fail "node $NODE is \"$state\", not idle, 60 s after slurmd started:
$(sinfo -N -l 2>&1)"
T_CLUSTER=$(since "$t_cluster")
say "    cluster up in $T_CLUSTER s: node $NODE idle, slurmctld :$CTLD_PORT, slurmd :$SLURMD_PORT"

mkdir -p "$WORK/slurm-run"
cd "$WORK/slurm-run"
t0=$(now)
"$FRAMESIM" sweep "$SWEEP" --emit slurm -o "$WORK/slurm-sweep" > "$WORK/emit.stdout" 2> "$WORK/emit.stderr" ||
  fail "framesim sweep --emit slurm failed: $(cat "$WORK/emit.stderr")"
[[ -f $WORK/slurm-sweep/sweep.sbatch ]] || fail "no $WORK/slurm-sweep/sweep.sbatch"
JOB_ID=$(sbatch --parsable "$WORK/slurm-sweep/sweep.sbatch" 2> "$WORK/sbatch.stderr") ||
  fail "sbatch failed: $(cat "$WORK/sbatch.stderr")"
JOB_ID=${JOB_ID%%;*}
say "    submitted job array $JOB_ID"
# Wait (at most 10 minutes) until no task of the array is pending, running or completing.
done_waiting=0
for ((i = 0; i < 6000; i++)); do
  if queue=$(squeue -h -j "$JOB_ID" -o %i 2> "$WORK/squeue.stderr"); then
    [[ -z $queue ]] && { done_waiting=1; break; }
  else
    kill -0 "$CTLD_PID" 2> /dev/null || fail "slurmctld exited while job $JOB_ID ran"
  fi
  sleep 0.1
done
[[ $done_waiting == 1 ]] || fail "job $JOB_ID still queued or running after 600 s:
$(squeue -j "$JOB_ID" 2>&1)"
# Every task of the array completed with exit code 0 (no accounting here: slurmctld keeps the records MinJobAge).
# One line per task: "TASK STATE EXITCODE".
tasks=$(scontrol -o show job "$JOB_ID" 2> /dev/null | sed -n 's/.* ArrayTaskId=\([^ ]*\) .* JobState=\([^ ]*\) .* ExitCode=\([^ ]*\) .*/\1 \2 \3/p' || true)
n_tasks=$(grep -c . <<< "$tasks" || true)
bad=$(grep -v ' COMPLETED 0:0$' <<< "$tasks" || true)
if [[ $n_tasks != "$POINTS" || -n $bad ]]; then
  outputs=""
  while read -r t _; do
    [[ -n $t ]] || continue
    outputs+=$'\n'"---- $WORK/slurm-sweep/slurm-${JOB_ID}_$t.out:"$'\n'"$(tail -n 5 "$WORK/slurm-sweep/slurm-${JOB_ID}_$t.out" 2>&1)"
  done <<< "$bad"
  bad+=$outputs
  fail "job $JOB_ID: $n_tasks tasks (expected $POINTS); not completed with exit code 0 (task, state, exit code):
$bad"
fi
timeout 60 "$FRAMESIM" merge "$WORK"/slurm-sweep/shard-* -o "$WORK/merged-slurm" > "$WORK/merge-slurm.stdout" \
  2> "$WORK/merge-slurm.stderr" || fail "framesim merge of the Slurm shards failed: $(cat "$WORK/merge-slurm.stderr")"
T_SLURM=$(since "$t0")
check_table "$WORK/merged-slurm"
say "    Slurm: emit + $POINTS array tasks + merge in $T_SLURM s"

# ---------------------------------------------------------------------------------------------------------------
# results.json names the command that wrote it (the sweep, or the merge): compared without it. Everything else,
# the input files the shards recorded included, must be the same.
without_command() {  # without_command IN OUT
  python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
j["provenance"].pop("command_line", None)
json.dump(j, open(sys.argv[2], "w"), indent=1, sort_keys=True)' "$1" "$2"
}
for d in local merged-parallel merged-slurm; do
  without_command "$WORK/$d/results.json" "$WORK/$d/results-without-command.json"
done
status=0
for method in merged-parallel merged-slurm; do
  for f in results.csv results-without-command.json; do
    if cmp -s "$WORK/local/$f" "$WORK/$method/$f"; then
      say "identical: $method/$f = local/$f"
    else
      echo "scale_out: DIFFERENT: $method/$f vs local/$f:" >&2
      diff "$WORK/local/$f" "$WORK/$method/$f" | head -n 20 >&2 || true
      status=1
    fi
  done
done
[[ $status == 0 ]] || fail "the merged tables differ from the local one"

say "times: local $T_LOCAL s; GNU parallel $T_PARALLEL s; Slurm cluster start $T_CLUSTER s, job array + merge $T_SLURM s"
say "PASS"
