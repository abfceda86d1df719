#!/usr/bin/env python3
"""RSS growth of a Laharsub host when filled with worst-case bodies and read in JSON and multipart
(docs/reliability.md, "Memory bounded by configuration").
usage: memory-rss.py HOSTDLL CASE LIMIT [REDIS-CONFIGURATION [--Setting=value ...]]
CASE: lt200k | ctl200k | ct256 | byte1 (filled until 507) | lt4k (17,000 4 KiB '<' bodies, for Redis)
Environment: GC=1 forces a full collection before each RSS reading with loadtest/scripts/HeapSampler
("gc PID", built with dotnet build -c Release; HEAPSAMPLER names another build); WARM=1 first runs a
tenth of the traffic on a topic that is then deleted."""
import sys, os, subprocess, socket, time, json, http.client
dll, case, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
redis = sys.argv[4] if len(sys.argv) > 4 else None
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
args = ["dotnet", dll, f"--urls=http://127.0.0.1:{port}", f"--Laharsub:MaxRetainedBytes={limit}",
        "--Laharsub:MaxMessagesPerTopic=100000", "--Laharsub:MessageTimeToLive=01:00:00", "--Laharsub:Demo:Enabled=false",
        ]
if redis and redis != "-": args.append(f"--Laharsub:Redis:Configuration={redis}")
extra = [a for a in sys.argv[5:]]
args += extra
p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=os.path.dirname(dll))
GC = os.environ.get("GC") == "1"
def collect():
    if GC: subprocess.run(["dotnet", os.environ.get("HEAPSAMPLER", os.path.join(os.path.dirname(os.path.abspath(__file__)),
        "HeapSampler/bin/Release/net10.0/Laharsub.HeapSampler.dll")), "gc", str(p.pid)], check=True, stdout=subprocess.DEVNULL); time.sleep(3)
def rss():
    for line in open(f"/proc/{p.pid}/status"):
        if line.startswith("VmRSS"): return int(line.split()[1]) * 1024
def req(method, path, body=None, headers={}):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=body, headers=headers); r = c.getresponse(); d = r.read(); c.close(); return r.status, d
for _ in range(300):
    try:
        if req("GET", "/health")[0] in (200, 503): break
    except OSError: time.sleep(0.1)
WARM = int(os.environ.get("WARM", "0"))
if case == "lt200k": body, ct, n = b"<" * 200_000, "text/plain", 10**9
elif case == "ct256": body, ct, n = b"x", "text/plain; x=" + "a" * 242, 10**9
elif case == "byte1": body, ct, n = b"x", "text/plain", 10**9
elif case == "ctl200k": body, ct, n = b"\x01" * 200_000, "text/plain", 10**9
elif case == "lt4k": body, ct, n = b"<" * 4096, "text/plain", 17000
def fill(topic, n):
  conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
  stored = 0
  while stored < n:
    conn.request("POST", f"/ps/topics/{topic}", body=body, headers={"Content-Type": ct}); r = conn.getresponse(); r.read()
    if r.status != 201: break
    stored += 1
  return stored
def readall(topic, stored, accept):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60); frm = 1
    while frm <= stored:
        c.request("GET", f"/ps/subscriptions?topics={topic}:{frm}&timeout=0", headers={"Accept": accept}); r = c.getresponse(); d = r.read()
        if accept == "application/json":
            ms = [m for m in json.loads(d)["messages"] if "messageId" in m]
            if not ms: break
            frm = ms[-1]["messageId"] + 1
        else:
            k = d.count(b"Laharsub-Message-Id: ")
            if k == 0: break
            frm += k
def run(n):
  st, d = req("POST", "/ps/topics"); topic = json.loads(d)["topicId"]
  stored = fill(topic, n)
  for _ in range(2): readall(topic, stored, "application/json"); readall(topic, stored, "multipart/mixed")
  return topic, stored
if WARM:
  # Warm-up: the same traffic for a tenth of the limit, then the topic deleted: pools, threads and GC budgets grow to the shape of the traffic first.
  t, k = run(max(1, int(limit / 10 / (len(body) + len(ct) + 700))))
  req("DELETE", f"/ps/topics/{t}")
time.sleep(1); collect(); before = rss()
topic, stored = run(n)
time.sleep(2); pre = rss(); collect(); after = rss(); print(f"before-gc={pre/1e6:.1f}MB")
st, h = req("GET", "/health")
counted = json.loads(h)["checks"]["laharsub"]["data"]["retainedBytes"]
print(f"case={case} limit={limit} stored={stored} counted={counted} rss_before={before/1e6:.1f}MB rss_after={after/1e6:.1f}MB growth={(after-before)/1e6:.1f}MB factor={(after-before)/limit:.2f}")
p.kill(); p.wait()
