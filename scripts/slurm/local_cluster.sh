#!/usr/bin/env bash
# Installs (if missing) and runs a single-node Slurm "cluster" on this machine, from Debian's
# packages (slurm-wlm 22.05: slurmctld + slurmd, and munge), without systemd. It is meant for
# trying the scripts of scripts/slurm/ on one machine (see prove_local.sh); a real cluster
# already has Slurm and needs none of this.
#
#   scripts/slurm/local_cluster.sh start [--force]   # install, configure, start; waits until the node is idle
#   scripts/slurm/local_cluster.sh status            # daemons and `sinfo`; exit 0 only if the node is usable
#   scripts/slurm/local_cluster.sh stop              # stops slurmd, slurmctld and munged (by their pid files)
#
# Must run as root (Debian 12 or similar). `start` is idempotent: it does nothing but wait for
# the node when everything already runs. It writes /etc/slurm/slurm.conf (marked with the
# comment line below) and refuses to overwrite a slurm.conf it did not write unless --force.
# The node and the controller talk over 127.0.0.1 only.
#
# Environment: START_TIMEOUT (seconds to wait for the node to be idle, default 60).
set -euo pipefail

readonly MARK="# written by trellis-lab scripts/slurm/local_cluster.sh"
readonly CONF_DIR=/etc/slurm
readonly CONF="$CONF_DIR/slurm.conf"
readonly CGROUP_CONF="$CONF_DIR/cgroup.conf"
readonly LOG_DIR=/var/log/slurm
readonly CTLD_PID=/run/slurmctld.pid
readonly SLURMD_PID=/run/slurmd.pid
readonly MUNGE_PID=/run/munge/munged.pid
readonly MUNGE_KEY=/etc/munge/munge.key
START_TIMEOUT="${START_TIMEOUT:-60}"

die() { echo "local_cluster: error: $*" >&2; exit 1; }
say() { echo "local_cluster: $*"; }

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit "${1:-2}"
}

# The pid in pid file $1 if that process is alive and its command name starts with $2.
live_pid() {
  local file=$1 name=$2 pid comm
  [[ -r $file ]] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [[ -n $pid ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  [[ $comm == "$name"* ]] || return 1
  echo "$pid"
}

node_name() { hostname -s; }

node_state() {
  sinfo -h -N -n "$(node_name)" -o '%T' 2>/dev/null | head -n1 || true
}

install_packages() {
  local missing=()
  command -v slurmctld >/dev/null || missing+=(slurmctld)
  command -v slurmd >/dev/null || missing+=(slurmd)
  command -v sbatch >/dev/null || missing+=(slurm-client)
  command -v munged >/dev/null || [[ -x /usr/sbin/munged ]] || missing+=(munge)
  if ((${#missing[@]} == 0)); then return 0; fi
  say "installing slurm-wlm and munge (missing: ${missing[*]})"
  # Without systemd the packages' maintainer scripts must not try to start services: a
  # policy-rc.d that answers 101 ("action forbidden") stops them. Keep one that is already there.
  local made_policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
  fi
  local rc=0
  {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq &&
      apt-get install -y -qq --no-install-recommends slurm-wlm slurmctld slurmd slurm-client munge
  } || rc=$?
  if [[ -n $made_policy ]]; then rm -f /usr/sbin/policy-rc.d; fi
  ((rc == 0)) || die "apt-get install slurm-wlm munge failed (exit $rc)"
}

start_munge() {
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  install -d -o munge -g munge -m 0700 /etc/munge
  if [[ ! -s $MUNGE_KEY ]]; then
    say "creating the munge key $MUNGE_KEY"
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile="$MUNGE_KEY"
    else
      /usr/sbin/create-munge-key -f
    fi
  fi
  chown munge:munge "$MUNGE_KEY"
  chmod 0400 "$MUNGE_KEY"
  if live_pid "$MUNGE_PID" munged >/dev/null; then
    say "munged already runs"
  else
    rm -f "$MUNGE_PID"
    runuser -u munge -- /usr/sbin/munged
    say "munged started"
  fi
  munge -n | unmunge >/dev/null || die "munge does not work (see /var/log/munge/munged.log)"
}

write_config() {
  local force=$1 host cpus mem_total margin mem tmp
  host=$(node_name)
  cpus=$(nproc)
  mem_total=$(free -m | awk '/^Mem:/ {print $2}')
  # Leave room for the OS: slurmd drains a node whose memory is below RealMemory.
  margin=$((mem_total / 20 > 256 ? mem_total / 20 : 256))
  mem=$((mem_total - margin))
  ((mem > 0)) || mem=1
  tmp=$(mktemp)
  cat >"$tmp" <<EOF
$MARK
# Single-node cluster for trying the job scripts locally; regenerate with
# 'scripts/slurm/local_cluster.sh start'. Node and controller use 127.0.0.1 only.
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=60
MinJobAge=300
MaxArraySize=10001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  install -d -m 0755 "$CONF_DIR"
  if [[ -e $CONF ]] && ! grep -qxF "$MARK" "$CONF" && [[ -z $force ]]; then
    rm -f "$tmp"
    die "$CONF exists and was not written by this script; leaving it alone (use 'start --force' to replace it)"
  fi
  if [[ -e $CONF ]] && cmp -s "$tmp" "$CONF"; then
    rm -f "$tmp"
  else
    if [[ -e $CONF ]] && ! grep -qxF "$MARK" "$CONF"; then
      cp -p "$CONF" "$CONF.bak.$(date +%Y%m%d%H%M%S)"
      say "saved the old $CONF beside it (.bak.*)"
    fi
    install -m 0644 "$tmp" "$CONF"
    rm -f "$tmp"
    say "wrote $CONF (node $host, $cpus CPUs, RealMemory=$mem MB)"
  fi
  # Unused with proctrack/linuxproc and task/none, but some builds of slurmd read it anyway.
  if [[ ! -e $CGROUP_CONF ]] || grep -qxF "$MARK" "$CGROUP_CONF"; then
    printf '%s\nCgroupPlugin=autodetect\nConstrainCores=no\nConstrainRAMSpace=no\n' "$MARK" >"$CGROUP_CONF"
  fi
  install -d -m 0755 /var/spool/slurmctld /var/spool/slurmd "$LOG_DIR"
}

# Epoch seconds of the live slurmd's registration (SlurmdStartTime), or 0.
slurmd_registered() {
  local t
  t=$(scontrol show node "$(node_name)" 2>/dev/null | sed -n 's/.*SlurmdStartTime=\([^ ]*\).*/\1/p')
  date -d "${t:-none}" +%s 2>/dev/null || echo 0
}

# Waits until the node is usable; with an argument, also until a slurmd started at or after
# that epoch second has registered (slurmctld restores the node's last state from its state
# files before the new slurmd has said anything).
wait_for_node() {
  local since=${1:-0} host state deadline resumed=""
  host=$(node_name)
  deadline=$((SECONDS + START_TIMEOUT))
  while :; do
    state=$(node_state)
    if ((since > 0)) && (($(slurmd_registered) < since)); then state="waiting for slurmd to register (was ${state:-unknown})"; fi
    case $state in
      idle* | mixed* | allocated* | completing*) say "node $host is $state"; return 0 ;;
      down* | drain* | fail*)
        # Left down or drained by an earlier run of this machine: bring it back once.
        if [[ -z $resumed ]]; then
          scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true
          resumed=1
        fi
        ;;
    esac
    if ((SECONDS >= deadline)); then
      echo "local_cluster: error: node $host not idle after ${START_TIMEOUT}s (state: '${state:-no answer}')." >&2
      echo "  sinfo -R says: $(sinfo -h -R 2>/dev/null | head -n3 || true)" >&2
      echo "  see $LOG_DIR/slurmctld.log and $LOG_DIR/slurmd.log; last lines:" >&2
      tail -n 5 "$LOG_DIR/slurmctld.log" "$LOG_DIR/slurmd.log" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 1
  done
}

cmd_start() {
  local force=""
  for a in "$@"; do
    case $a in
      --force) force=1 ;;
      *) die "unknown option for start: $a" ;;
    esac
  done
  ((EUID == 0)) || die "must run as root (it installs packages and starts daemons)"
  local t0=$SECONDS
  install_packages
  if live_pid "$CTLD_PID" slurmctld >/dev/null && live_pid "$SLURMD_PID" slurmd >/dev/null; then
    start_munge
    say "slurmctld and slurmd already run"
    wait_for_node
    return 0
  fi
  write_config "$force"
  start_munge
  if live_pid "$CTLD_PID" slurmctld >/dev/null; then
    say "slurmctld already runs"
  else
    rm -f "$CTLD_PID"
    slurmctld || die "slurmctld did not start (see $LOG_DIR/slurmctld.log)"
    say "slurmctld started"
  fi
  local since=0
  if live_pid "$SLURMD_PID" slurmd >/dev/null; then
    say "slurmd already runs"
  else
    rm -f "$SLURMD_PID"
    since=$(($(date +%s) - 1))
    slurmd || die "slurmd did not start (see $LOG_DIR/slurmd.log)"
    say "slurmd started"
  fi
  wait_for_node "$since"
  say "ready in $((SECONDS - t0))s"
  sinfo
}

stop_one() {
  local file=$1 name=$2 pid i
  if ! pid=$(live_pid "$file" "$name"); then
    say "$name is not running"
    return 0
  fi
  kill -TERM "$pid"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || { say "stopped $name (pid $pid)"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  say "killed $name (pid $pid): it did not stop within 10s"
}

cmd_stop() {
  ((EUID == 0)) || die "must run as root"
  stop_one "$SLURMD_PID" slurmd
  stop_one "$CTLD_PID" slurmctld
  stop_one "$MUNGE_PID" munged
}

cmd_status() {
  local ok=0 pid name file
  for name in munged slurmctld slurmd; do
    case $name in
      munged) file=$MUNGE_PID ;;
      slurmctld) file=$CTLD_PID ;;
      slurmd) file=$SLURMD_PID ;;
    esac
    if pid=$(live_pid "$file" "$name"); then
      echo "$name: running (pid $pid)"
    else
      echo "$name: not running"
      ok=3
    fi
  done
  if [[ -e $CONF ]]; then
    if grep -qxF "$MARK" "$CONF"; then echo "slurm.conf: $CONF (ours)"; else echo "slurm.conf: $CONF (not ours)"; fi
  else
    echo "slurm.conf: none"
  fi
  if command -v sinfo >/dev/null && ((ok == 0)); then
    sinfo || ok=3
    case $(node_state) in idle* | mixed* | allocated* | completing*) ;; *) ok=3 ;; esac
  fi
  return "$ok"
}

main() {
  (($# >= 1)) || usage
  local cmd=$1
  shift
  case $cmd in
    start) cmd_start "$@" ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    -h | --help | help) usage 0 ;;
    *) echo "local_cluster: unknown command '$cmd'" >&2; usage ;;
  esac
}

main "$@"
