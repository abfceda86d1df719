#!/usr/bin/env bash
# Presence on against off, on Redis, alternating: Redis commands/s and CPU over the measured window, and the server's
# CPU and RSS (one server pinned to core 0 on a private redis-server on port 7203; the generator on core 1).
#   loadtest/scripts/presence-redis.sh SERVER_DLL ROUNDS OUT_DIR -- LOADTEST_ARGS...   (e.g. --preset seed3 --topics 2000)
set -u
dll=$1; rounds=$2; out=$3; shift 3; [ "${1:-}" = "--" ] && shift
mkdir -p $out
redis-server --port 7203 --save '' --appendonly no --daemonize yes --logfile $out/redis.log
sleep 0.5
one() {
  local label=$1 round=$2 extra=$3; shift 3
  local port=$((19000 + RANDOM % 1000))
  ( cd $(dirname $dll) && taskset -c 0 dotnet $dll --urls http://127.0.0.1:$port --Logging:LogLevel:Default=Warning \
     --Laharsub:MaxTopics=100000 --Laharsub:MaxPollTimeout=00:02:00 --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
     --Laharsub:Redis:Configuration=127.0.0.1:7203 --Laharsub:Redis:KeyPrefix=p$round$label: --Laharsub:MessageTimeToLive=00:00:15 --Laharsub:Demo:Enabled=false > $out/server-$round-$label.log 2>&1 ) &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.2; done
  local spid; spid=$(pgrep -P $pid -f "$dll" || echo $pid)
  dotnet run -c Release --no-build --project "$(dirname "$0")/../../loadtest/LoadTestClient" -- --url http://127.0.0.1:$port/ --server-pid $spid --client-cpus 1 \
    --out $out/$round-$label "$@" $extra > $out/lt-$round-$label.log 2>&1 &
  local lt=$!
  # Redis's counters over the measured window only: sampled when the generator reports it measures, and at its last measuring line.
  while ! grep -q "measuring 0/" $out/lt-$round-$label.log 2>/dev/null; do sleep 0.2; kill -0 $lt 2>/dev/null || break; done
  local c0 t0 u0; c0=$(redis-cli -p 7203 info stats | grep total_commands_processed | tr -d '\r' | cut -d: -f2); t0=$(date +%s.%N); u0=$(redis-cli -p 7203 info cpu | grep -E "^used_cpu_(sys|user):" | tr -d '\r' | cut -d: -f2 | paste -sd+ | bc)
  while ! grep -q "draining\|^-- " $out/lt-$round-$label.log 2>/dev/null; do sleep 0.2; kill -0 $lt 2>/dev/null || break; done
  local c1 t1 u1; c1=$(redis-cli -p 7203 info stats | grep total_commands_processed | tr -d '\r' | cut -d: -f2); t1=$(date +%s.%N); u1=$(redis-cli -p 7203 info cpu | grep -E "^used_cpu_(sys|user):" | tr -d '\r' | cut -d: -f2 | paste -sd+ | bc)
  wait $lt
  echo "round $round $label: redis commands/s in the window $(python3 -c "print(round(($c1-$c0)/($t1-$t0)))"), redis CPU $(python3 -c "print(round(100*($u1-$u0)/($t1-$t0),1))")% of a core" | tee -a $out/runs.txt
  grep -E "^   server|^   redis|deliveries expected|latency \(ms\) from creation|^-- " $out/lt-$round-$label.log | tee -a $out/runs.txt
  kill $spid 2>/dev/null; wait $pid 2>/dev/null
}
for r in $(seq 1 $rounds); do
  if [ $((r % 2)) -eq 1 ]; then one off $r ""  "$@"; one presence $r "--presence" "$@"
  else one presence $r "--presence" "$@"; one off $r "" "$@"; fi
done
redis-cli -p 7203 shutdown nosave
