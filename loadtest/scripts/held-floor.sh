#!/usr/bin/env bash
# Kestrel alone against Laharsub's poll, each a fresh process holding N connections with one request waiting
# on each (hold-connections.py): Kestrel's own cost is the floor under memory per held poll and under what a
# collection copies (docs/performance.md, "Kestrel's floor").
#   loadtest/scripts/held-floor.sh heap N [VARIANT...]       VARIANT: held, routed, laharsub (default: all three)
#       The managed heap after an induced full GC before and while they are held, and RSS. With DUMPS=DIR it
#       also writes DIR/VARIANT.dmp while they are held, for
#       'dotnet loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll types DIR/VARIANT.dmp 60'.
#   loadtest/scripts/held-floor.sh pauses N SECONDS [VARIANT...]      VARIANT: timer, laharsub (default: both)
#       Every request is answered 204 after SECONDS (KestrelFloor's timer; a poll's timeout) and sent again at
#       once, so that requests come and go as polls do; records the GC pauses over RECORD s (default 120)
#       from 2 x SECONDS in. Set DOTNET_GCgen0size to make collections frequent enough to see.
# Build first: dotnet build Laharsub.sln -c Release. SERVER_DLL overrides the Laharsub server measured.
set -uo pipefail
mode=$1; count=$2; shift 2
case "$mode" in
  heap) defaults=(held routed laharsub) ;;
  pauses) seconds=$1; shift; defaults=(timer laharsub) ;;
  *) echo "mode must be heap or pauses" >&2; exit 2 ;;
esac
variants=("$@"); [ ${#variants[@]} -eq 0 ] && variants=("${defaults[@]}")
root=$(cd "$(dirname "$0")/../.." && pwd)
sampler="$root/loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll"
heap() { dotnet "$sampler" gc "$1" | grep -o 'total [0-9.]* MiB' | grep -o '[0-9.]*'; }
rss() { awk '/VmRSS/ {print $2/1024}' "/proc/$1/status"; }
for variant in "${variants[@]}"; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  if [ "$variant" = laharsub ]; then
    dll=$(realpath "${SERVER_DLL:-$root/src/Server/Host/bin/Release/net10.0/Laharsub.Server.Host.dll}")
    ( cd "$(dirname "$dll")" && exec dotnet "$dll" --urls "http://127.0.0.1:$port" --Logging:LogLevel:Default=Warning \
        --Laharsub:Limits:MaxConnectionsPerClient=0 --Laharsub:Limits:MaxWaitingPollsPerClient=0 --Laharsub:Demo:Enabled=false ) >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
    topic=$(curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "http://127.0.0.1:$port/ps/topics/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["topicId"])')
    path="/ps/subscriptions?topics=$topic&timeout=${seconds:-120}"
  else
    args=("$variant"); [ "$variant" = timer ] && args+=("$seconds")
    dotnet "$root/loadtest/scripts/KestrelFloor/bin/Release/net10.0/Laharsub.KestrelFloor.dll" "$port" "${args[@]}" >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
    path="/held"
  fi
  sleep 2
  log=$(mktemp)
  if [ "$mode" = pauses ]; then
    record=${RECORD:-120}
    python3 "$root/loadtest/scripts/hold-connections.py" "http://127.0.0.1:$port$path" "$count" $((2 * seconds + record + 10)) --again > "$log" &
    holder=$!
    sleep $((2 * seconds))
    echo "== $variant: $(tail -1 "$log")"
    dotnet "$sampler" pauses "$server" "$record" | grep -v '^ *mark:'
    echo "   $(tail -1 "$log")"
  else
    heap0=$(heap "$server"); rss0=$(rss "$server")
    python3 "$root/loadtest/scripts/hold-connections.py" "http://127.0.0.1:$port$path" "$count" 90 > "$log" &
    holder=$!
    for _ in $(seq 1 80); do grep -q "open $count " "$log" && break; sleep 1; done
    sleep 5
    heapn=$(heap "$server"); rssn=$(rss "$server")
    if [ -n "${DUMPS:-}" ]; then
      mkdir -p "$DUMPS"
      "$(dotnet --list-runtimes | awk '/Microsoft.NETCore.App/ {v=$2; p=$3} END {gsub(/[\[\]]/,"",p); print p "/" v}')/createdump" -f "$DUMPS/$variant.dmp" "$server" >/dev/null
    fi
    held=$(tail -1 "$log" | grep -o 'open [0-9]*')
    python3 - "$variant" "$count" "$heap0" "$heapn" "$rss0" "$rssn" "$held" <<'PY'
import sys
v, n, h0, hn, r0, rn, held = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:7]), sys.argv[7]
print(f"{v:9} {held}: managed heap {h0:.1f} -> {hn:.1f} MiB = {(hn-h0)*1048576/n/1024:.2f} KiB per held request; RSS {r0:.0f} -> {rn:.0f} MiB = {(rn-r0)*1024/n:.1f} KiB")
PY
  fi
  kill "$holder" "$server" 2>/dev/null; wait "$holder" "$server" 2>/dev/null; rm -f "$log"
done
