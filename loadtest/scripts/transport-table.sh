#!/usr/bin/env bash
# The transport table of docs/performance.md: every shape x every transport x {Laharsub, nchan}, each
# shape and transport one `--compare laharsub,nchan` command (the two servers alternate, each fresh),
# then one per-core find-max per transport (server pinned to core 0, generator to core 1).
#   loadtest/scripts/transport-table.sh OUT_DIR [table|findmax|all]
# Knobs (environment): SHAPES ("seed1:200 seed3:2000 seed3:3900 broadcast:5"), TRANSPORTS
# ("longpoll sse websocket"), DURATION (60), WARMUP_seed1 / WARMUP_seed3 / WARMUP_broadcast (20 / 45 / 20),
# WARMUP_3900 (90: the first long collections of a 19,500-connection Laharsub come in its first minutes),
# FINDMAX_ARGS (the find-max search's shape and steps), FINDMAX_TARGETS (laharsub,floor,nchan). Print the markdown table with
# loadtest/scripts/transport_table.py OUT_DIR. Measure on an otherwise idle machine: no builds beside it.
set -euo pipefail
out=${1:?usage: transport-table.sh OUT_DIR [table|findmax|all]}
what=${2:-all}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
shapes=${SHAPES:-"seed1:200 seed3:2000 seed3:3900 broadcast:5"}
transports=${TRANSPORTS:-"longpoll sse websocket"}
duration=${DURATION:-60}
tool=(dotnet run -c Release --no-build --project "$root/loadtest/LoadTestClient" --)
dotnet build "$root/loadtest/LoadTestClient" -c Release -nologo -v quiet
dotnet build "$root/src/Server/Host" -c Release -nologo -v quiet

if [ "$what" = table ] || [ "$what" = all ]; then
  for shape in $shapes; do
    preset=${shape%%:*}; topics=${shape##*:}
    warmup_var="WARMUP_$preset"; warmup=${!warmup_var:-20}
    [ "$topics" = 3900 ] && warmup=${WARMUP_3900:-90}
    [ "$preset" = seed3 ] && [ "$topics" != 3900 ] && warmup=${WARMUP_seed3:-45}
    for transport in $transports; do
      echo "== $preset-$topics $transport (warm-up $warmup s, $duration s) load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)"
      "${tool[@]}" --preset "$preset" --topics "$topics" --compare laharsub,nchan --transport "$transport" \
        --warmup "$warmup" --duration "$duration" --out "$out/table" --no-build > "$out/$preset-$topics-$transport.txt" 2>&1 \
        || echo "   exit $? (see $out/$preset-$topics-$transport.txt)"
      grep -E "^(seed|broadcast)[^ ]* +[0-9]" "$out/$preset-$topics-$transport.txt" || true
    done
  done
fi

if [ "$what" = findmax ] || [ "$what" = all ]; then
  for transport in $transports; do
    echo "== find-max per core, $transport $(date -u +%H:%M:%S)"
    # shellcheck disable=SC2086
    "${tool[@]}" ${FINDMAX_ARGS:---preset seed1 --topics 200 --interval 0.5 --warmup 5 --duration 15 --find-max-steps 8} \
      --compare "${FINDMAX_TARGETS:-laharsub,floor,nchan}" --transport "$transport" --find-max --server-cpus 0 --client-cpus 1 --no-build \
      --out "$out/findmax-$transport" > "$out/findmax-$transport.txt" 2>&1 || echo "   exit $? (see $out/findmax-$transport.txt)"
    sed -n '/^== find-max (a step/,$p' "$out/findmax-$transport.txt" | grep -E "highest|^   (laharsub|floor|nchan)" || true
  done
fi
