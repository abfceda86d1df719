#!/usr/bin/env python3
"""Per-variant p50/p99/p99.9 (ms, from creation) and server CPU per delivery of an ab-settings.sh run: ab_settings_summary.py OUT_DIR/runs.txt"""
import sys,re,collections
rows=collections.defaultdict(list); cur=None
for line in open(sys.argv[1]):
    m=re.match(r'== round (\d+) (\S+)',line)
    if m: cur=m.group(2); continue
    m=re.search(r'latency \(ms\) from creation.*p50 ([\d.]+).*p99 ([\d.]+)\s+p99.9 ([\d.]+)',line)
    if m and cur: rows[cur].append(['p50',m.group(1),'p99',m.group(2),'p99.9',m.group(3)])
    m=re.search(r'CPU ([\d.]+)% of one core, ([\d.]+) µs per delivery',line)
    if m and cur and 'server pid' in line: rows[cur][-1]+=['cpu%',m.group(1),'us',m.group(2)]
    if 'INVALID' in line and cur: rows[cur][-1]+=['INVALID']
for k,v in rows.items():
    us=[float(r[r.index('us')+1]) for r in v if 'us' in r]
    print(k, 'mean µs/dlv %.0f'%(sum(us)/len(us)) if us else '', v)
