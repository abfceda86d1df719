#!/usr/bin/env bash
# Settings A/B(/C...) of one server build under the same load generator, pinned (server core 0, generator core 1).
#   loadtest/scripts/ab-settings.sh OUT_DIR ROUNDS "LABEL|ENV=VALUE ...|--Setting=value ...[|LOADTEST_ARGS]" ... -- LOADTEST_ARGS...
# SERVER_DLL measures another build than src/Server/Host/bin/Release.
# Each variant is a label, environment variables, server arguments and optionally load generator arguments of its own
# (e.g. "presence|||--presence"); rounds alternate the order
# (ABC, CBA, ...). Each run starts the standalone server fresh (the build in src/Server/Host/bin/Release)
# with the LoadTestClient's server settings, runs the LoadTestClient against it and stops it.
# Output: OUT_DIR/runs.txt and OUT_DIR/ROUND-LABEL/; summarise with loadtest/scripts/ab_settings_summary.py OUT_DIR/runs.txt.
set -uo pipefail
out=$1; rounds=$2; shift 2
variants=(); while [ "$1" != "--" ]; do variants+=("$1"); shift; done; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
dll=${SERVER_DLL:-$root/src/Server/Host/bin/Release/net10.0/Laharsub.Server.Host.dll}
mkdir -p "$out"
run_one() {
  local spec=$1 round=$2; shift 2
  IFS='|' read -r label envs args client_args <<< "$spec"
  local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  ( cd "$(dirname "$dll")" && env -u DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS $envs taskset -c 0 dotnet "$dll" --urls "http://127.0.0.1:$port" \
      --Logging:LogLevel:Default=Warning --Laharsub:MessageTimeToLive=00:00:15 --Laharsub:MaxTopics=100000 \
      --Laharsub:MaxPollTimeout=00:02:00 --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
      --Laharsub:Demo:Enabled=false $args > "$out/server-$round-$label.log" 2>&1 ) &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
  local server_pid; server_pid=$(pgrep -P "$pid" -f "$dll" || echo "$pid")
  echo "== round $round $label [$envs $args${client_args:+ | generator: $client_args}] load: $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)" | tee -a "$out/runs.txt"
  dotnet run -c Release --no-build --project "$root/loadtest/LoadTestClient" -- --url "http://127.0.0.1:$port/" --server-pid "$server_pid" --client-cpus 1 \
    --out "$out/$round-$label" "$@" $client_args >> "$out/runs.txt" 2>&1
  kill "$server_pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then order=("${variants[@]}"); else order=(); for ((i=${#variants[@]}-1;i>=0;i--)); do order+=("${variants[$i]}"); done; fi
  for v in "${order[@]}"; do run_one "$v" "$round" "$@"; done
done
