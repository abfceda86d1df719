#!/usr/bin/env bash
# CPU profile of a pinned Laharsub (core 0) under the LoadTestClient (core 1), split by binary and symbol.
#   loadtest/scripts/profile-pinned.sh OUT_DIR [TRANSPORT] [LOADTEST_ARGS...]
# TARGET=floor profiles loadtest/Floor instead (long poll only), the same way. OUT_DIR/phases.txt splits the
# samples by phase of the request path (perf_phases.py).
# Default load: seed1-200 with every client publishing every 0.125 s (6,400 deliveries/s), 15 s warm-up;
# perf samples the server at 499 Hz for 15 s of the measured window. Needs linux-perf.
# DOTNET_PerfMapEnabled=1 writes /tmp/perf-PID.map; DOTNET_EnableWriteXorExecute=0 keeps JIT-compiled code
# at the addresses that map names (with W^X on, perf sees it as "memfd:doublemapper" and cannot name it).
set -euo pipefail
out=${1:?usage: profile-pinned.sh OUT_DIR [TRANSPORT] [LOADTEST_ARGS...]}; transport=${2:-sse}; shift $(( $# < 2 ? $# : 2 ))
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
dotnet build "$root/src/Server/Host" -c Release -nologo -v quiet >/dev/null
target=${TARGET:-laharsub}
process=$([ "$target" = floor ] && echo "Laharsub.Floor.dll" || echo "Laharsub.Server.Host.dll")
dotnet run -c Release --project "$root/loadtest/LoadTestClient" -- --target "$target" --preset seed1 --topics 200 --interval 0.125 --transport "$transport" \
  --warmup 15 --duration 25 --server-cpus 0 --client-cpus 1 --no-build \
  --server-env DOTNET_PerfMapEnabled=1 --server-env DOTNET_EnableWriteXorExecute=0 "$@" > "$out/run.txt" 2>&1 &
run=$!
# The server answers /health within seconds; the window opens after the warm-up.
for _ in $(seq 1 100); do pid=$(pgrep -n -f "$process" || true); [ -n "$pid" ] && break; sleep 0.2; done
[ -n "${pid:-}" ] || { echo "the server did not start; see $out/run.txt" >&2; exit 1; }
sleep 20
perf record -F 499 -g -p "$pid" -o "$out/perf.data" -- sleep 15
wait "$run" || true
perf report -i "$out/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -15 | tee "$out/dso.txt"
perf report -i "$out/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -60 > "$out/symbols.txt"
perf script -i "$out/perf.data" -F ip,sym,dso 2>/dev/null | python3 "$root/loadtest/scripts/perf_phases.py" > "$out/phases.txt"
cat "$out/phases.txt"
grep -E "VALID|INVALID" "$out/run.txt" | head -2
