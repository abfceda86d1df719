#!/usr/bin/env bash
# A/B of two server builds under the same load generator, alternating run by run in one window.
#   loadtest/scripts/ab-servers.sh A_DLL B_DLL ROUNDS OUT_DIR -- LOADTEST_ARGS...
# Each run starts the build fresh on a free loopback port with the LoadTestClient's own server settings
# (15 s TTL, caps off), runs this repository's LoadTestClient against it with --url/--server-pid,
# and stops it. Output: OUT_DIR/<round>-<A|B>/ (the LoadTestClient's reports) and OUT_DIR/runs.txt.
# SERVER_CPUS=0 CLIENT_CPUS=1 pin the server (taskset -c) and the generator (--client-cpus) to cores of their own.
# A_SERVER_ARGS / B_SERVER_ARGS and A_CLIENT_ARGS / B_CLIENT_ARGS (words, split on spaces) add to one side's server
# or generator only: the same build in two configurations, e.g. Jwt mode with a token, Origin and keyed publishes
# against Open mode (docs/performance.md).
set -euo pipefail
a_dll=$1; b_dll=$2; rounds=$3; out=$4; shift 4
[ "${1:-}" = "--" ] && shift
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
run_one() {
  local label=$1 dll=$2 round=$3
  shift 3
  local server_args_var="${label}_SERVER_ARGS" client_args_var="${label}_CLIENT_ARGS"
  local server_args=() client_args=()
  read -r -a server_args <<< "${!server_args_var:-}"
  read -r -a client_args <<< "${!client_args_var:-}"
  local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  local pin=(); [ -n "${SERVER_CPUS:-}" ] && pin=(taskset -c "$SERVER_CPUS")
  local client_pin=(); [ -n "${CLIENT_CPUS:-}" ] && client_pin=(--client-cpus "$CLIENT_CPUS")
  ( cd "$(dirname "$dll")" && env -u DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS "${pin[@]}" dotnet "$dll" --urls "http://127.0.0.1:$port" \
      --Logging:LogLevel:Default=Warning --Laharsub:MessageTimeToLive=00:00:15 --Laharsub:MaxTopics=100000 \
      --Laharsub:MaxPollTimeout=00:02:00 --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
      --Laharsub:Demo:Enabled=false "${server_args[@]}" > "$out/server-$round-$label.log" 2>&1 ) &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
  local server_pid; server_pid=$(pgrep -P "$pid" -f "$dll" || echo "$pid")
  echo "== round $round $label ($dll) load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/runs.txt"
  dotnet run -c Release --no-build --project "$root/loadtest/LoadTestClient" -- --url "http://127.0.0.1:$port/" --server-pid "$server_pid" "${client_pin[@]}" \
    --out "$out/$round-$label" "$@" "${client_args[@]}" 2>&1 | tee -a "$out/runs.txt" | grep -E "^(== |RESULT|  latency|  server|INVALID|VALID)" || true
  kill "$server_pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then run_one A "$a_dll" "$round" "$@"; run_one B "$b_dll" "$round" "$@"
  else run_one B "$b_dll" "$round" "$@"; run_one A "$a_dll" "$round" "$@"; fi
done
