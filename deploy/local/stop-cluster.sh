#!/usr/bin/env bash
# Stop the cluster that start-cluster.sh started from RUN_DIR (default ./dask-cluster):
# SIGTERM to each process group, then SIGKILL to whatever is left after a grace period.
#
#   deploy/local/stop-cluster.sh [-d RUN_DIR] [-g GRACE_SECONDS]
set -uo pipefail

run_dir=./dask-cluster
grace=5
while getopts "d:g:h" opt; do
  case $opt in
    d) run_dir=$OPTARG ;;
    g) grace=$OPTARG ;;
    *) echo "usage: $0 [-d RUN_DIR] [-g GRACE_SECONDS]" >&2; exit 2 ;;
  esac
done
shopt -s nullglob
pids=()
# Workers first, so that they do not spend their death-timeout looking for the scheduler.
for f in "$run_dir"/worker-*.pid "$run_dir"/scheduler.pid; do
  pid=$(cat "$f" 2>/dev/null) || continue
  [[ $pid =~ ^[0-9]+$ ]] && pids+=("$pid")
done
for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; done
for _ in $(seq $((grace * 10))); do
  alive=0
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
  ((alive)) || break
  sleep 0.1
done
for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; kill -KILL "$pid" 2>/dev/null; done
rm -f "$run_dir"/*.pid "$run_dir"/scheduler.json
exit 0
