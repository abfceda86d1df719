#!/usr/bin/env bash
# The server's garbage collector under load: starts SERVER_DLL on a free loopback port, runs the LoadTestClient
# against it, and part-way through looks at the server's managed heap.
#   loadtest/scripts/gc-under-load.sh pauses LABEL SERVER_DLL OUT_DIR -- LOADTEST_ARGS...
#       Records every GC pause (by phase, with the bytes promoted) from DELAY s (default 25) into the load
#       for RECORD s (default 25): OUT_DIR/gc-LABEL.txt.
#   loadtest/scripts/gc-under-load.sh heap LABEL SERVER_DLL OUT_DIR -- LOADTEST_ARGS...
#       DELAY s in (default 35), induces a full GC, prints the heap and the polls waiting (their quotient is
#       the live heap per held poll), and writes OUT_DIR/LABEL.dmp for
#       'dotnet loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll types OUT_DIR/LABEL.dmp 60'.
#   loadtest/scripts/gc-under-load.sh young LABEL SERVER_DLL OUT_DIR -- LOADTEST_ARGS...
#       DELAY s in (default 35), writes OUT_DIR/LABEL.dmp without inducing a GC and prints what of generation 0
#       is reachable (HeapSampler young): what the next gen0 collection copies, by type.
# SERVER_ARGS adds to the server's arguments, e.g. SERVER_ARGS=--Kestrel:Limits:MaxConcurrentConnections=19628 for
# seed3-3900, whose 19,500 polls need more connections than the server's own reserve leaves (FileLimits.cs).
# SERVER_ENV sets environment variables for the server alone, e.g. SERVER_ENV=DOTNET_GCGen0MaxBudget=400000 (names are case-sensitive; values hex).
# Build first: dotnet build Laharsub.sln -c Release. The run itself is in OUT_DIR/LABEL/ (summary.csv).
set -uo pipefail
mode=$1; label=$2; dll=$(realpath "$3"); out=$4; shift 4; [ "${1:-}" = "--" ] && shift
case "$mode" in pauses|heap|young) ;; *) echo "mode must be pauses, heap or young" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
sampler="$root/loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll"
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
( cd "$(dirname "$dll")" && exec env ${SERVER_ENV:-} dotnet "$dll" --urls "http://127.0.0.1:$port" \
    --Logging:LogLevel:Default=Warning --Laharsub:MessageTimeToLive=00:00:15 --Laharsub:MaxTopics=100000 \
    --Laharsub:MaxPollTimeout=00:02:00 --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
    --Laharsub:Demo:Enabled=false ${SERVER_ARGS:-} ) > "$out/server-$label.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
dotnet "$root/loadtest/LoadTestClient/bin/Release/net10.0/Laharsub.LoadTestClient.dll" --url "http://127.0.0.1:$port/" \
    --server-pid "$server_pid" --out "$out/$label" "$@" > "$out/load-$label.log" 2>&1 &
load_pid=$!
if [ "$mode" = pauses ]; then
  sleep "${DELAY:-25}"
  dotnet "$sampler" pauses "$server_pid" "${RECORD:-25}" > "$out/gc-$label.txt" 2>&1
else
  sleep "${DELAY:-35}"
  [ "$mode" = heap ] && dotnet "$sampler" gc "$server_pid"
  createdump="$(dotnet --list-runtimes | awk '/Microsoft.NETCore.App/ {v=$2; p=$3} END {gsub(/[\[\]]/,"",p); print p "/" v}')/createdump"
  "$createdump" -f "$out/$label.dmp" "$server_pid" | tail -1
  grep -o 'polls waiting *[0-9]*' "$out/load-$label.log" | tail -1
fi
wait "$load_pid"
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
[ "$mode" = young ] && dotnet "$sampler" young "$out/$label.dmp" "${TOP:-40}"
if [ "$mode" = pauses ]; then
  grep -v '^ *mark:' "$out/gc-$label.txt" | tail -8
  python3 - "$out/$label/summary.csv" <<'PY'
import csv, sys
r = next(csv.DictReader(open(sys.argv[1])))
print("p50", r["latency_p50_ms"], "p99", r["latency_p99_ms"], "p99.9", r["latency_p999_ms"],
      "cpu/delivery", r["server_cpu_us_per_delivery"], "valid", r["valid"], "load", r["load_average"])
PY
fi
