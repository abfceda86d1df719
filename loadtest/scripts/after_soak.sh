#!/usr/bin/env bash
# The check after a soak (soak.sh calls it): with the load gone, the server's heap after a full GC;
# then 10,000 aborted polls (aborted_polls.py); then 0 polls waiting, 0 connections left, and the heap
# after a full GC again. Appends to OUT_DIR/after.txt and stops the server (SIGTERM) at the end.
#   loadtest/scripts/after_soak.sh OUT_DIR [POLLS=10000]
set -euo pipefail
out=$1; polls=${2:-10000}
root=$(cd "$(dirname "$0")/../.." && pwd)
sampler=$root/loadtest/scripts/HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll
pid=$(cat "$out/server.pid"); port=$(cat "$out/port")
log() { echo "$(date -u +%T) $*" | tee -a "$out/after.txt"; }
state() {
  log "  RSS $(awk '/^VmRSS:/ {print $2, $3}' /proc/$pid/status), open fds $(ls /proc/$pid/fd | wc -l)," \
      "established connections to :$port $(ss -Htn state established "( sport = :$port )" | wc -l), load $(cut -d' ' -f1-3 /proc/loadavg)"
  log "  $(dotnet "$sampler" gc "$pid")"
}
log "idle 30 s after the load"; sleep 30; state
log "aborted polls: $polls"
python3 "$root/loadtest/scripts/aborted_polls.py" "http://127.0.0.1:$port" "$polls" 500 2>&1 | tee -a "$out/after.txt"
log "idle 15 s after the aborted polls"; sleep 15; state
kill -TERM "$pid"
