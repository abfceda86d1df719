#!/usr/bin/env python3
"""Opens long polls and abandons them, then checks that the server lets go of every one.

    python3 loadtest/scripts/aborted_polls.py BASE_URL [TOTAL=10000] [BATCH=500]

BASE_URL is the server root on loopback (http://127.0.0.1:PORT). Creates two topics, then, batch by
batch: opens BATCH connections each sending `GET /ps/subscriptions?topics=A,B&timeout=60`, waits until
the server reports them all waiting (topic info `waitingPolls`), and closes them: half with a FIN, half
with a reset (SO_LINGER 0). It waits (at most 10 s) for `waitingPolls` to return to 0 after each batch
and prints how long that took; exits 1 if polls are left waiting at the end.
"""
import http.client, json, socket, struct, sys, time
from urllib.parse import urlparse

base = urlparse(sys.argv[1])
total = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 500
host, port = base.hostname, base.port
assert host.startswith("127."), "loopback only"

def request(method, path):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request(method, path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, json.loads(body) if body else None

def waiting(topics):
    return sum(request("GET", f"/ps/topics/{t}")[1]["waitingPolls"] for t in topics)

def wait_for(predicate, seconds):
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if predicate():
            return time.monotonic() - start
        time.sleep(0.05)
    return None

topics = [request("POST", "/ps/topics")[1]["topicId"] for _ in range(2)]
query = f"/ps/subscriptions?topics={topics[0]},{topics[1]}&timeout=60"
print(f"topics {topics}; {total} polls in batches of {batch}")
opened = 0
worst_drain = 0.0
started = time.monotonic()
while opened < total:
    n = min(batch, total - opened)
    sockets = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(f"GET {query} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: application/json\r\n\r\n".encode())
        sockets.append(s)
    registered = wait_for(lambda: waiting(topics) == 2 * n, 20)   # each poll waits on both topics
    if registered is None:
        print(f"batch at {opened}: only {waiting(topics)} of {2 * n} topic waits registered after 20 s", file=sys.stderr)
    for i, s in enumerate(sockets):
        if i % 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # RST
        s.close()
    drained = wait_for(lambda: waiting(topics) == 0, 10)
    opened += n
    if drained is None:
        print(f"after {opened} polls: {waiting(topics)} still waiting 10 s after their connections closed", file=sys.stderr)
        drained = 10.0
    worst_drain = max(worst_drain, drained)
print(f"{opened} polls opened and abandoned in {time.monotonic() - started:.1f} s; slowest batch drained in {worst_drain:.2f} s")
time.sleep(2)
left = waiting(topics)
print(f"waitingPolls on the two topics now: {left}")
sys.exit(0 if left == 0 else 1)
