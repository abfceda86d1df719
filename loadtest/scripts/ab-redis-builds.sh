#!/usr/bin/env bash
# A/B of two server builds on Redis, alternating (A B, B A, ...): Redis commands per second over each whole run,
# and the server's CPU (pinned to core 0; the generator on core 1). Each server has Streams:HeartbeatInterval=1 s, so
# that idle streams' heartbeats show (docs/performance.md, "quiet waits read nothing").
#   loadtest/scripts/ab-redis-builds.sh A_DLL B_DLL ROUNDS OUT_DIR -- LOADTEST_ARGS...
set -u
a_dll=$1; b_dll=$2; rounds=$3; out=$4; shift 4; [ "${1:-}" = "--" ] && shift
mkdir -p $out
redis-server --port 7201 --save '' --appendonly no --daemonize yes --logfile $out/redis.log
sleep 0.5
one() {
  local label=$1 dll=$2 round=$3; shift 3
  local port=$((18000 + RANDOM % 1000))
  ( cd $(dirname $dll) && taskset -c 0 dotnet $dll --urls http://127.0.0.1:$port --Logging:LogLevel:Default=Warning \
     --Laharsub:MaxTopics=100000 --Laharsub:MaxPollTimeout=00:02:00 --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
     --Laharsub:Redis:Configuration=127.0.0.1:7201 --Laharsub:Redis:KeyPrefix=ab$round$label: --Laharsub:Streams:HeartbeatInterval=00:00:01 \
     --Laharsub:MessageTimeToLive=00:10:00 --Laharsub:Demo:Enabled=false > $out/server-$round-$label.log 2>&1 ) &
  local pid=$!
  for _ in $(seq 1 100); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 0.2; done
  local spid; spid=$(pgrep -P $pid -f "$dll" || echo $pid)
  local c0; c0=$(redis-cli -p 7201 info stats | grep total_commands_processed | tr -d '\r' | cut -d: -f2)
  local t0; t0=$(date +%s.%N)
  dotnet run -c Release --no-build --project "$(dirname "$0")/../../loadtest/LoadTestClient" -- --url http://127.0.0.1:$port/ --server-pid $spid --client-cpus 1 \
    --out $out/$round-$label "$@" > $out/lt-$round-$label.log 2>&1
  local c1; c1=$(redis-cli -p 7201 info stats | grep total_commands_processed | tr -d '\r' | cut -d: -f2)
  local t1; t1=$(date +%s.%N)
  echo "round $round $label: redis commands/s $(python3 -c "print(round(($c1-$c0)/($t1-$t0)))") ; $(grep -E '^   server ' $out/lt-$round-$label.log | head -1) ; $(grep -E 'deliveries expected' $out/lt-$round-$label.log)" | tee -a $out/runs.txt
  kill $spid 2>/dev/null; wait $pid 2>/dev/null
}
for r in $(seq 1 $rounds); do
  if [ $((r % 2)) -eq 1 ]; then one A "$a_dll" $r "$@"; one B "$b_dll" $r "$@"
  else one B "$b_dll" $r "$@"; one A "$a_dll" $r "$@"; fi
done
redis-cli -p 7201 shutdown nosave
