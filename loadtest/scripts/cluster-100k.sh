#!/usr/bin/env bash
# The 100,000-subscriber run of docs/scale-out.md: a private 3-primary Redis Cluster on ports 7101-7103 (/tmp/rc),
# 6 Laharsub instances and 6 generator processes; 80 % SSE and 20 % long polls, one message per subscriber per minute.
# Writes OUT.log (the LoadTestClient), OUT.load (load average and each shard's ops/s every 10 s), OUT.redis (each
# shard's commands and CPU at the end), OUT.times. Build first: dotnet build -c Release.
#   loadtest/scripts/cluster-100k.sh OUT [LOADTEST_ARGS...]   (e.g. --warmup 90 --duration 120 --max-schedule-lag 100)
set -u
OUT=$1; shift
D=/tmp/rc; rm -rf $D; mkdir -p $D
for p in 7101 7102 7103; do
  mkdir -p $D/$p
  redis-server --port $p --cluster-enabled yes --cluster-config-file $D/$p/nodes.conf --dir $D/$p --save '' --appendonly no --daemonize yes --logfile $D/$p/log --maxclients 10000
done
sleep 1
yes yes | redis-cli --cluster create 127.0.0.1:7101 127.0.0.1:7102 127.0.0.1:7103 --cluster-yes > $D/create.log 2>&1
for _ in $(seq 1 50); do redis-cli -p 7101 cluster info | grep -q "cluster_state:ok" && break; sleep 0.2; done
redis-cli -p 7101 cluster info | head -1
cd "$(dirname "$0")/../.."
date -u +%FT%TZ > $OUT.times
( while sleep 10; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg) $(for p in 7101 7102 7103; do redis-cli -p $p info stats | grep instantaneous_ops_per_sec | tr -d '\r' | cut -d: -f2; done | tr '\n' ' ')"; done ) > $OUT.load &
MON=$!
dotnet run -c Release --no-build --project loadtest/LoadTestClient -- --preset seed3 --topics 20000 --publishers-per-topic 1 --interval 60 \
  --transport sse --long-poll-percent 20 --poll-timeout 120 \
  --servers 6 --redis "127.0.0.1:7101,connectTimeout=30000,syncTimeout=30000,asyncTimeout=30000" \
  --server-setting Redis:Buckets=16 --server-setting MessageTimeToLive=00:10:00 \
  --processes 6 --out $OUT "$@" > $OUT.log 2>&1
kill $MON
date -u +%FT%TZ >> $OUT.times
for p in 7101 7102 7103; do echo "== $p"; redis-cli -p $p info stats | grep -E "total_commands_processed|total_connections"; redis-cli -p $p info cpu | grep -E "used_cpu_(sys|user):"; redis-cli -p $p info memory | grep used_memory_human; redis-cli -p $p dbsize; done > $OUT.redis
for p in 7101 7102 7103; do redis-cli -p $p shutdown nosave; done
