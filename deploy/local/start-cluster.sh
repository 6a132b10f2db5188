#!/usr/bin/env bash
# Start a Dask scheduler and N single-threaded workers on this machine, bound to 127.0.0.1.
#
#   deploy/local/start-cluster.sh [-n WORKERS] [-d RUN_DIR] [-p PORT] [-t TLS_DIR]
#
# Writes RUN_DIR/scheduler.json (the scheduler file: clients and workers read the
# address from it), RUN_DIR/*.pid and RUN_DIR/*.log, waits until every worker has
# joined, and prints the scheduler address.  Stop with deploy/local/stop-cluster.sh.
# With -t, the cluster speaks tls:// only, with the certificates that
# deploy/tls/make-certs.sh wrote into TLS_DIR.
set -euo pipefail

workers=2
run_dir=./dask-cluster
port=0            # 0: any free port; the scheduler file says which
tls_dir=
idle_timeout=${ENSSTAB_IDLE_TIMEOUT:-}   # e.g. 10m: the scheduler exits when idle that long
wait_seconds=${ENSSTAB_START_TIMEOUT:-60}

usage() { echo "usage: $0 [-n WORKERS] [-d RUN_DIR] [-p PORT] [-t TLS_DIR]" >&2; exit 2; }
while getopts "n:d:p:t:h" opt; do
  case $opt in
    n) workers=$OPTARG ;;
    d) run_dir=$OPTARG ;;
    p) port=$OPTARG ;;
    t) tls_dir=$OPTARG ;;
    *) usage ;;
  esac
done
[[ $workers =~ ^[1-9][0-9]*$ ]] || { echo "$0: -n must be a positive integer, got '$workers'" >&2; exit 2; }
[[ $port =~ ^[0-9]+$ ]] || { echo "$0: -p must be a port number, got '$port'" >&2; exit 2; }

mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd)
if [[ -e $run_dir/scheduler.pid ]] && kill -0 "$(cat "$run_dir/scheduler.pid")" 2>/dev/null; then
  echo "$0: a scheduler from $run_dir is still running; stop it first with stop-cluster.sh -d $run_dir" >&2
  exit 2
fi
rm -f "$run_dir"/scheduler.json "$run_dir"/*.pid

protocol=tcp
tls_scheduler=() tls_worker=()
if [[ -n $tls_dir ]]; then
  for f in ca.pem scheduler.pem scheduler-key.pem worker.pem worker-key.pem; do
    [[ -r $tls_dir/$f ]] || { echo "$0: -t $tls_dir has no readable $f (run deploy/tls/make-certs.sh $tls_dir)" >&2; exit 2; }
  done
  protocol=tls
  tls_scheduler=(--tls-ca-file "$tls_dir/ca.pem" --tls-cert "$tls_dir/scheduler.pem" --tls-key "$tls_dir/scheduler-key.pem")
  tls_worker=(--tls-ca-file "$tls_dir/ca.pem" --tls-cert "$tls_dir/worker.pem" --tls-key "$tls_dir/worker-key.pem")
  # Refuse plain-text connections, not only offer TLS.
  export DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION=True
fi
idle=()
[[ -n $idle_timeout ]] && idle=(--idle-timeout "$idle_timeout")

# Each process in its own session, so that stop-cluster.sh (or a test's cleanup) can
# kill it and everything it spawned with one signal to its process group.
setsid dask scheduler --host 127.0.0.1 --port "$port" --protocol "$protocol" "${tls_scheduler[@]}" \
  --dashboard-address 127.0.0.1:0 --scheduler-file "$run_dir/scheduler.json" \
  --pid-file "$run_dir/scheduler.pid" "${idle[@]}" >"$run_dir/scheduler.log" 2>&1 < /dev/null &
# Recorded at once (dask rewrites the same pid when it starts), so stop-cluster.sh finds
# the process even if it dies before dask writes its own pid file.
echo $! > "$run_dir/scheduler.pid"

for _ in $(seq $((wait_seconds * 10))); do
  [[ -s $run_dir/scheduler.json ]] && break
  sleep 0.1
done
[[ -s $run_dir/scheduler.json ]] || { echo "$0: no scheduler after ${wait_seconds} s; see $run_dir/scheduler.log" >&2; exit 1; }

for i in $(seq "$workers"); do
  # One thread per worker process: the simulator holds the GIL (see README, Performance).
  # --death-timeout: a worker whose scheduler has gone exits instead of waiting forever.
  setsid dask worker --scheduler-file "$run_dir/scheduler.json" --host 127.0.0.1 --nthreads 1 \
    --name "worker-$i" --dashboard-address 127.0.0.1:0 --death-timeout 60 --memory-limit 0 \
    --local-directory "$run_dir/worker-$i" --pid-file "$run_dir/worker-$i.pid" "${tls_worker[@]}" \
    >"$run_dir/worker-$i.log" 2>&1 < /dev/null &
  echo $! > "$run_dir/worker-$i.pid"
done

# Wait until every worker has registered with the scheduler.
python - "$run_dir/scheduler.json" "$workers" "$wait_seconds" "$tls_dir" <<'PY'
import sys
from distributed import Client
from distributed.security import Security

path, n, timeout, tls = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
security = Security(tls_ca_file=f"{tls}/ca.pem", tls_client_cert=f"{tls}/client.pem",
                    tls_client_key=f"{tls}/client-key.pem", require_encryption=True) if tls else None
with Client(scheduler_file=path, timeout=f"{timeout}s", security=security) as c:
    c.wait_for_workers(n, timeout=timeout)
    print(c.scheduler.address)
PY
