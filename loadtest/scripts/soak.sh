#!/usr/bin/env bash
# Soak: the standalone server's Release build under the LoadTestClient for a long run, then the
# aborted-poll check (after_soak.sh). Its RSS is sampled every 10 s from /proc; its System.Runtime counters
# (GC heap size, GC committed) every 10 s and every garbage collection by loadtest/scripts/HeapSampler.
#   loadtest/scripts/soak.sh OUT_DIR [DURATION_SECONDS=1800] [TOPICS=400]
# TRANSPORTS=longpoll,sse,websocket splits the topics between one LoadTestClient per transport (default
# longpoll alone), and CHURN=10000 adds loadtest/scripts/churn.py holding that many connections that come and
# go (polls, SSE and WebSockets in turn) for the whole run; its output is churn.log.
# Build first: dotnet build src/Server/Host -c Release && dotnet build loadtest/LoadTestClient -c Release
#              && dotnet build loadtest/scripts/HeapSampler -c Release
# Output: OUT_DIR/server.log, server.pid, port, rss.csv (unix time, VmRSS KiB, 1-min load average),
# counters.csv, gcs.csv (HeapSampler), load_start and load_end (unix times), loadtest.log and the
# LoadTestClient's reports in OUT_DIR/report/, after.txt. Then plot:
#   python3 loadtest/scripts/plot_soak.py OUT_DIR $(cat OUT_DIR/load_start) $(cat OUT_DIR/load_end) soak.png
set -euo pipefail
out=$1; duration=${2:-1800}; topics=${3:-400}
root=$(cd "$(dirname "$0")/../.." && pwd)
dll=$root/src/Server/Host/bin/Release/net10.0/Laharsub.Server.Host.dll
sampler=$root/loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "$port" > "$out/port"
( cd "$(dirname "$dll")" && exec env -u DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS dotnet "$dll" --urls "http://127.0.0.1:$port" \
    --Logging:LogLevel:Default=Warning --Laharsub:MessageTimeToLive=00:00:15 \
    --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 \
    --Laharsub:Demo:Enabled=false ) > "$out/server.log" 2>&1 &
server_pid=$!
echo "$server_pid" > "$out/server.pid"
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
echo "server pid $server_pid on port $port"
# RSS sampler: runs until the server exits.
( echo "unix_time,vmrss_kib,load1"
  while kill -0 "$server_pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || echo "")
    echo "$(date +%s),$rss,$(cut -d' ' -f1 /proc/loadavg)"
    sleep 10
  done ) > "$out/rss.csv" &
# The runtime's own view, over EventPipe; these end by themselves when the server exits.
if [ -f "$sampler" ]; then
  dotnet "$sampler" counters "$server_pid" 10 "$out/counters.csv" > "$out/counters.out" 2>&1 &
  dotnet "$sampler" gcs "$server_pid" "$out/gcs.csv" > "$out/gcs.out" 2>&1 &
else
  echo "no HeapSampler build ($sampler): RSS only" | tee -a "$out/loadtest.log"
fi
echo "== load before: $(cat /proc/loadavg)" >> "$out/loadtest.log"
IFS=, read -r -a transports <<< "${TRANSPORTS:-longpoll}"
churn=${CHURN:-0}
date +%s > "$out/load_start"
if [ "$churn" -gt 0 ]; then
  python3 "$root/loadtest/scripts/churn.py" "http://127.0.0.1:$port" "$churn" "$((duration + 10))" > "$out/churn.log" 2>&1 &
  churn_pid=$!
fi
clients=()
for transport in "${transports[@]}"; do
  suffix=$([ ${#transports[@]} -gt 1 ] && echo "-$transport" || true)
  dotnet run -c Release --no-build --project "$root/loadtest/LoadTestClient" -- --url "http://127.0.0.1:$port/" \
    --server-pid "$server_pid" --preset seed1 --topics "$((topics / ${#transports[@]}))" --transport "$transport" \
    --warmup 10 --duration "$duration" --out "$out/report$suffix" > "$out/loadtest$suffix.out" 2>&1 &
  clients+=($!)
done
for client in "${clients[@]}"; do wait "$client" || echo "LoadTestClient (pid $client) exited $?" >> "$out/loadtest.log"; done
cat "$out"/loadtest*.out >> "$out/loadtest.log"
if [ "$churn" -gt 0 ]; then wait "$churn_pid" || echo "churn.py exited $?" >> "$out/loadtest.log"; fi
date +%s > "$out/load_end"
echo "== load after: $(cat /proc/loadavg)" >> "$out/loadtest.log"
"$root/loadtest/scripts/after_soak.sh" "$out"
