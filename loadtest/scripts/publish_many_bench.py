#!/usr/bin/env python3
"""One message to N topics: N publishes against one multi-topic publish, end to end over HTTP/1.1.

    python3 loadtest/scripts/publish_many_bench.py BASE_URL [TOPICS=100] [ROUNDS=200]

BASE_URL is a running server's root on loopback (http://127.0.0.1:PORT). Creates TOPICS topics, then
alternates ROUNDS rounds of each way on one keep-alive connection: TOPICS `POST /ps/topics/{id}` one after
another, and one `POST /ps/topics/publish?topics=...`. Prints the median and p90 wall time of a round of
each, and the ratio. Nobody subscribes: this is the publish side's cost, store round trips included (one
script on Redis against TOPICS). Loopback only.
"""
import http.client, json, statistics, sys, time
from urllib.parse import urlparse

base = urlparse(sys.argv[1])
topics_count = int(sys.argv[2]) if len(sys.argv) > 2 else 100
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 200
assert base.hostname.startswith("127."), "loopback only"
conn = http.client.HTTPConnection(base.hostname, base.port, timeout=30)

def call(method, path, body=None, content_type=None):
    conn.request(method, path, body=body, headers={"Content-Type": content_type} if content_type else {})
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        sys.exit(f"{method} {path}: {response.status} {data[:300]!r}")
    return json.loads(data) if data else None

topics = [call("POST", "/ps/topics", b"{}", "application/json")["topicId"] for _ in range(topics_count)]
many = "/ps/topics/publish?topics=" + ",".join(map(str, topics))
body = b"0123456789"
single, multi = [], []
for _ in range(rounds):
    start = time.perf_counter()
    for topic in topics:
        call("POST", f"/ps/topics/{topic}", body, "application/octet-stream")
    single.append(time.perf_counter() - start)
    start = time.perf_counter()
    answer = call("POST", many, body, "application/octet-stream")
    multi.append(time.perf_counter() - start)
    assert len(answer["messages"]) == topics_count
def q(values, p):
    return sorted(values)[min(len(values) - 1, int(p * len(values)))] * 1e3
print(f"{topics_count} topics, {rounds} rounds each, alternating")
print(f"  {topics_count} single publishes: median {q(single, 0.5):.2f} ms, p90 {q(single, 0.9):.2f} ms a round")
print(f"  one multi-topic publish: median {q(multi, 0.5):.2f} ms, p90 {q(multi, 0.9):.2f} ms")
print(f"  ratio of medians: {q(single, 0.5) / q(multi, 0.5):.1f}x")
