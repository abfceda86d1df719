#!/usr/bin/env bash
# Fault script: the seed1 workload through the .NET client (loadtest/scripts/FaultClient) while servers
# are killed and restarted under it. Not for CI: it takes minutes and kills processes it starts.
#   loadtest/scripts/faults.sh memory OUT_DIR [TOPICS=200] [ROUNDS=3]
#       One standalone in-memory server; ROUNDS x (kill -9, restart) then ROUNDS x (SIGTERM, restart).
#   loadtest/scripts/faults.sh redis OUT_DIR [TOPICS=200] [ROUNDS=1]
#       A private redis-server and two instances on it, clients given both addresses; ROUNDS x (kill -9
#       instance A, restart it; kill -9 instance B, restart it).
# Build first: dotnet build src/Server/Host -c Release && dotnet build loadtest/scripts/FaultClient -c Release
# Output in OUT_DIR: faults.csv (kind, instance, fault time, time the process was gone, time it answered
# /health again, in unix ms), the client's summary.json, outages.csv and timeline.csv, server logs,
# loadavg.txt, and analysis.txt (loadtest/scripts/analyze_faults.py).
set -euo pipefail
mode=$1; out=$2; topics=${3:-200}; rounds=${4:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
dll=$root/src/Server/Host/bin/Release/net10.0/Laharsub.Server.Host.dll
client_dll=$root/loadtest/scripts/FaultClient/bin/Release/net10.0/Laharsub.FaultClient.dll
settle=20   # seconds of steady load before the first fault and between faults
mkdir -p "$out"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
declare -A pids ports
extra=()

start_server() {  # name
  local name=$1
  ( cd "$(dirname "$dll")" && exec dotnet "$dll" --urls "http://127.0.0.1:${ports[$name]}" \
      --Logging:LogLevel:Default=Warning --Laharsub:MessageTimeToLive=00:01:00 \
      --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
      --Laharsub:Demo:Enabled=false "${extra[@]}" ) >> "$out/server-$name.log" 2>&1 &
  pids[$name]=$!
  for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:${ports[$name]}/health" && return 0; sleep 0.1; done
  echo "server $name did not answer /health within 30 s; see $out/server-$name.log" >&2; return 1
}

fault() {  # signal name
  local signal=$1 name=$2 t0 t1 t2
  t0=$(now_ms)
  kill "-$signal" "${pids[$name]}"
  wait "${pids[$name]}" 2>/dev/null || true
  t1=$(now_ms)
  start_server "$name"
  t2=$(now_ms)
  echo "$signal,$name,$t0,$t1,$t2" >> "$out/faults.csv"
  echo "$(date -u +%T) $signal $name: gone after $((t1 - t0)) ms, answering /health again $((t2 - t0)) ms after the signal; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/loadavg.txt"
}

echo "kind,instance,fault_ms,gone_ms,healthy_ms" > "$out/faults.csv"
: > "$out/loadavg.txt"
case $mode in
  memory)
    rounds=${rounds:-3}
    ports[a]=$(free_port); start_server a
    urls="http://127.0.0.1:${ports[a]}/ps/"
    schedule=(); for _ in $(seq 1 "$rounds"); do schedule+=("KILL a"); done; for _ in $(seq 1 "$rounds"); do schedule+=("TERM a"); done ;;
  redis)
    rounds=${rounds:-1}
    redis_port=$(free_port)
    redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no > "$out/redis.log" 2>&1 &
    redis_pid=$!
    for _ in $(seq 1 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    extra=(--Laharsub:Redis:Configuration=127.0.0.1:$redis_port)
    ports[a]=$(free_port); ports[b]=$(free_port); start_server a; start_server b
    urls="http://127.0.0.1:${ports[a]}/ps/,http://127.0.0.1:${ports[b]}/ps/"
    schedule=(); for _ in $(seq 1 "$rounds"); do schedule+=("KILL a" "KILL b"); done ;;
  *) echo "mode must be memory or redis" >&2; exit 2 ;;
esac
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null; true; }
trap cleanup EXIT

duration=$(( (settle + 10) * ${#schedule[@]} + settle + 15 ))   # a restart takes up to ~10 s on a busy machine
echo "$(date -u +%T) $mode: $topics topics x 2 clients, ${#schedule[@]} faults, $duration s; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/loadavg.txt"
dotnet "$client_dll" --url "$urls" --topics "$topics" --duration "$duration" --out "$out" > "$out/client.log" 2>&1 &
client_pid=$!
sleep $((settle + 5))   # topics created, clients running
for step in "${schedule[@]}"; do
  fault $step
  sleep "$settle"
done
wait "$client_pid"
echo "$(date -u +%T) done; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/loadavg.txt"
python3 "$root/loadtest/scripts/analyze_faults.py" "$out" | tee "$out/analysis.txt"
