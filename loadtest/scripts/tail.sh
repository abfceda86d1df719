#!/usr/bin/env bash
# Attributes a run's slow deliveries to causes (docs/performance.md, "Attributing the tail"):
#   loadtest/scripts/tail.sh OUT_DIR -- LOADTEST_ARGS...
# Starts the standalone server (Release build) on a free loopback port pinned to core SERVER_CPUS (default 0),
# with the LoadTestClient's own server settings (15 s TTL, caps off) as ab-servers.sh does; records its GC pauses
# and runtime counters every COUNTER_MS (default 100) with HeapSampler for the whole run; runs the LoadTestClient
# on core CLIENT_CPUS (default 1) with --slow-log; stops the server and prints the attribution
# (loadtest/scripts/tail_attribution.py; TAIL_ARGS adds to its options, e.g. TAIL_ARGS="--queue-threshold 4").
# SERVER_ARGS adds to the server's arguments (words), SERVER_ENV sets environment variables for it alone, e.g.
# SERVER_ENV=DOTNET_GCGen0MaxBudget=400000 (names case-sensitive, values hex); SERVER_DLL names another build. LOADTEST_ARGS may carry --slow-ms N.
# Output in OUT_DIR: slow.csv, slow.client-gc.csv, server-gc.csv, server-counters.csv, attributed.csv,
# attribution.txt, run/ (the LoadTestClient's reports) and the logs.
# Build first: dotnet build Laharsub.sln -c Release.
set -uo pipefail
out=${1:?usage: loadtest/scripts/tail.sh OUT_DIR -- LOADTEST_ARGS...}; shift
[ "${1:-}" = "--" ] && shift
root=$(cd "$(dirname "$0")/../.." && pwd)
dll=$(realpath "${SERVER_DLL:-$root/src/Server/Host/bin/Release/net10.0/Laharsub.Server.Host.dll}")
sampler="$root/loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll"
client="$root/loadtest/LoadTestClient/bin/Release/net10.0/Laharsub.LoadTestClient.dll"
for built in "$dll" "$sampler" "$client"; do
  [ -f "$built" ] || { echo "$built is missing: build first (dotnet build Laharsub.sln -c Release)" >&2; exit 2; }
done
mkdir -p "$out"
out=$(realpath "$out")
server_cpus=${SERVER_CPUS:-0}; client_cpus=${CLIENT_CPUS:-1}
server_args=(); read -r -a server_args <<< "${SERVER_ARGS:-}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
( cd "$(dirname "$dll")" && exec env -u DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS ${SERVER_ENV:-} taskset -c "$server_cpus" dotnet "$dll" \
    --urls "http://127.0.0.1:$port" --Logging:LogLevel:Default=Warning --Laharsub:MessageTimeToLive=00:00:15 --Laharsub:MaxTopics=100000 \
    --Laharsub:MaxPollTimeout=00:02:00 --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
    --Laharsub:Demo:Enabled=false "${server_args[@]}" ) > "$out/server.log" 2>&1 &
server_pid=$!
stop_server() { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }
trap stop_server EXIT
healthy=
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && { healthy=1; break; }; sleep 0.2; done
[ -n "$healthy" ] || { echo "the server did not answer /health within 20 s; see $out/server.log" >&2; exit 1; }

# The sampler shares the generator's core, not the server's. It records until the server exits.
rm -f "$out/server-gc.csv" "$out/server-counters.csv"
taskset -c "$client_cpus" dotnet "$sampler" pauses "$server_pid" 86400 --csv "$out/server-gc.csv" \
    --counters "$out/server-counters.csv" --interval-ms "${COUNTER_MS:-100}" > "$out/server-gc.txt" 2>&1 &
sampler_pid=$!
# Its session is open once it has written the files' headers.
for _ in $(seq 1 150); do [ -s "$out/server-gc.csv" ] && break; kill -0 "$sampler_pid" 2>/dev/null || break; sleep 0.2; done
[ -s "$out/server-gc.csv" ] || { echo "HeapSampler did not start recording within 30 s; see $out/server-gc.txt" >&2; exit 1; }

dotnet "$client" --url "http://127.0.0.1:$port/" --server-pid "$server_pid" --client-cpus "$client_cpus" \
    --out "$out/run" --slow-log "$out/slow.csv" "$@" 2>&1 | tee "$out/load.log" | grep -E "^(== |RESULT|  latency|  server|INVALID|VALID|slow log|error)"
load_status=${PIPESTATUS[0]}
stop_server
trap - EXIT
# The sampler's session ends with the server; give it a bound all the same.
for _ in $(seq 1 150); do kill -0 "$sampler_pid" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$sampler_pid" 2>/dev/null; then
  echo "HeapSampler still running 30 s after the server stopped: stopping it (its files hold what it wrote)" >&2
  kill "$sampler_pid" 2>/dev/null
fi
wait "$sampler_pid" 2>/dev/null
if [ ! -f "$out/slow.csv" ]; then
  echo "the LoadTestClient wrote no slow log (exit $load_status); see $out/load.log" >&2
  exit 1
fi
tail_args=(); read -r -a tail_args <<< "${TAIL_ARGS:-}"
python3 "$root/loadtest/scripts/tail_attribution.py" --slow "$out/slow.csv" --client-gc "$out/slow.client-gc.csv" \
    --server-gc "$out/server-gc.csv" --counters "$out/server-counters.csv" --csv "$out/attributed.csv" "${tail_args[@]}" | tee "$out/attribution.txt"
exit "$load_status"
