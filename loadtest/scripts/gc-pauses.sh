#!/usr/bin/env bash
# GC pauses of a server under load: starts the server DLL on a free loopback port, runs the LoadTestClient
# against it, and records every GC pause (by phase, with the bytes promoted) for part of the run.
#   loadtest/scripts/gc-pauses.sh LABEL SERVER_DLL OUT_DIR -- LOADTEST_ARGS...
# GC_DELAY (s, default 25): when recording starts after the load starts; GC_SECONDS (default 25): how long.
# Build first: dotnet build Laharsub.sln -c Release. Output: OUT_DIR/gc-LABEL.txt, OUT_DIR/LABEL/ (the run).
set -uo pipefail
label=$1; dll=$(realpath "$2"); out=$3; shift 3; [ "${1:-}" = "--" ] && shift
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
( cd "$(dirname "$dll")" && exec dotnet "$dll" --urls "http://127.0.0.1:$port" \
    --Logging:LogLevel:Default=Warning --Laharsub:MessageTimeToLive=00:00:15 --Laharsub:MaxTopics=100000 \
    --Laharsub:MaxPollTimeout=00:02:00 --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
    --Laharsub:Demo:Enabled=false ) > "$out/server-$label.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
dotnet "$root/loadtest/LoadTestClient/bin/Release/net10.0/Laharsub.LoadTestClient.dll" --url "http://127.0.0.1:$port/" \
    --server-pid "$server_pid" --out "$out/$label" "$@" > "$out/load-$label.log" 2>&1 &
load_pid=$!
sleep "${GC_DELAY:-25}"
dotnet "$root/loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll" pauses "$server_pid" "${GC_SECONDS:-25}" > "$out/gc-$label.txt" 2>&1
wait "$load_pid"
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
grep -v '^ *mark:' "$out/gc-$label.txt" | tail -8
python3 - "$out/$label/summary.csv" <<'PY'
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
print("p50", r["latency_p50_ms"], "p99", r["latency_p99_ms"], "p99.9", r["latency_p999_ms"],
      "cpu/delivery", r["server_cpu_us_per_delivery"], "valid", r["valid"], "load", r["load_average"])
PY
