#!/usr/bin/env bash
# Live managed heap per held poll: starts the server DLL, runs the LoadTestClient against it, and DUMP_DELAY
# seconds in (default 35) induces a full GC, prints the heap, and writes a dump for 'HeapSampler types'.
#   loadtest/scripts/heap-per-poll.sh LABEL SERVER_DLL OUT_DIR -- LOADTEST_ARGS...
# Then: dotnet loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll types OUT_DIR/LABEL.dmp 60
# The heap after the induced GC divided by the polls waiting (printed) is the live heap per held poll.
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
sleep "${DUMP_DELAY:-35}"
dotnet "$root/loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll" gc "$server_pid"
createdump=$(dirname "$(dotnet --list-runtimes | awk '/Microsoft.NETCore.App/ {v=$2; p=$3} END {gsub(/[\[\]]/,"",p); print p "/" v "/createdump"}')")/createdump
"$createdump" -f "$out/$label.dmp" "$server_pid" | tail -1
grep -o 'polls waiting *[0-9]*' "$out/load-$label.log" | tail -1
wait "$load_pid"
kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
