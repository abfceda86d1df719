#!/usr/bin/env python3
"""Keeps N connections churning against a loopback Laharsub server for SECONDS, then checks it let go of them.

    python3 loadtest/scripts/churn.py BASE_URL [CONNECTIONS=10000] [SECONDS=1800] [MIN_LIFE=20] [MAX_LIFE=60]

BASE_URL is the server root on loopback (http://127.0.0.1:PORT). Creates 50 topics of its own and publishes
one message a second to one of them, round robin. Holds CONNECTIONS connections, each a long poll
(timeout=60, polled again on the same connection after every answer), a Server-Sent Events stream or a
laharsub.v1 WebSocket, in turn, on two of its topics; each lives a random MIN_LIFE..MAX_LIFE seconds and is
then closed (every other one with a reset, SO_LINGER 0) and replaced by a new one. Counts what each kind
received and every refusal or failure, every 10 s. At the end it closes everything and waits (at most 20 s)
for the server's topic info to show no waiting subscription left on its topics; exits 1 if any is left, or if
any connection got an answer other than 200 (poll, stream), 204 (quiet poll) or 101 (WebSocket).
Loopback only: a soak tool, not a load generator for other hosts.
"""
import asyncio, base64, http.client, json, os, random, socket, struct, sys, time
from urllib.parse import urlparse

base = urlparse(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 1800
min_life = float(sys.argv[4]) if len(sys.argv) > 4 else 20
max_life = float(sys.argv[5]) if len(sys.argv) > 5 else 60
host, port = base.hostname, base.port
if not host.startswith("127."):
    sys.exit("loopback only: the URL's host must be 127.x.x.x")

def rest(method, path, body=None):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.request(method, path, body=body, headers={"Content-Type": "text/plain"} if body else {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, json.loads(data) if data else None

topics = [rest("POST", "/ps/topics")[1]["topicId"] for _ in range(50)]
stats = {k: 0 for k in ["opened", "closed", "refused", "failed", "poll_answers", "poll_quiet", "sse_events", "ws_frames", "published"]}
statuses = {}
deadline = time.monotonic() + seconds
opening = asyncio.Semaphore(200)

def subscription_path(i):
    a, b = topics[i % 50], topics[(i + 1) % 50]
    return f"/ps/subscriptions?topics={a},{b}"

async def read_head(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    statuses[status] = statuses.get(status, 0) + 1
    length = 0
    for line in head.split(b"\r\n")[1:]:
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, length

async def poll(reader, writer, path, until):
    while time.monotonic() < until:
        writer.write(f"GET {path}&timeout=60 HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: application/json\r\n\r\n".encode())
        status, length = await asyncio.wait_for(read_head(reader), until - time.monotonic())
        if length:
            await reader.readexactly(length)
        if status == 200:
            stats["poll_answers"] += 1
        elif status == 204:
            stats["poll_quiet"] += 1
        else:
            stats["refused"] += 1
            return

async def sse(reader, writer, path, until):
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    status, _ = await asyncio.wait_for(read_head(reader), 10)
    if status != 200:
        stats["refused"] += 1
        return
    while time.monotonic() < until:
        chunk = await asyncio.wait_for(reader.read(65536), until - time.monotonic())
        if not chunk:
            return
        stats["sse_events"] += chunk.count(b"\ndata: ")

async def websocket(reader, writer, path, until):
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: laharsub.v1\r\n\r\n").encode())
    status, _ = await asyncio.wait_for(read_head(reader), 10)
    if status != 101:
        stats["refused"] += 1
        return
    while time.monotonic() < until:
        header = await asyncio.wait_for(reader.readexactly(2), until - time.monotonic())
        length = header[1] & 0x7F
        if length == 126:
            length = struct.unpack(">H", await reader.readexactly(2))[0]
        elif length == 127:
            length = struct.unpack(">Q", await reader.readexactly(8))[0]
        await reader.readexactly(length)
        stats["ws_frames"] += 1

kinds = [poll, sse, websocket]

async def connection(i):
    while time.monotonic() < deadline:
        until = min(deadline, time.monotonic() + random.uniform(min_life, max_life))
        async with opening:
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
            except (OSError, asyncio.TimeoutError):
                stats["failed"] += 1
                await asyncio.sleep(1)
                continue
        stats["opened"] += 1
        try:
            await kinds[i % 3](reader, writer, subscription_path(i), until)
        except asyncio.TimeoutError:
            pass
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            if time.monotonic() < until - 1:
                stats["failed"] += 1
        if i % 2:
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()
        stats["closed"] += 1

async def publisher():
    n = 0
    loop = asyncio.get_running_loop()
    while time.monotonic() < deadline:
        topic = topics[n % 50]
        status, _ = await loop.run_in_executor(None, rest, "POST", f"/ps/topics/{topic}", b"churn")
        stats["published" if status == 201 else "refused"] += 1
        n += 1
        await asyncio.sleep(1)

async def report():
    while time.monotonic() < deadline:
        await asyncio.sleep(10)
        print(f"{time.strftime('%H:%M:%S')} {json.dumps(stats)} statuses {statuses}", flush=True)

async def main():
    tasks = [asyncio.create_task(connection(i)) for i in range(count)]
    await asyncio.gather(publisher(), report(), *tasks)

asyncio.run(main())

def waiting():
    return sum(rest("GET", f"/ps/topics/{t}")[1]["waitingPolls"] for t in topics)

left = waiting()
for _ in range(200):
    if left == 0:
        break
    time.sleep(0.1)
    left = waiting()
print(f"final {json.dumps(stats)} statuses {statuses}; waiting subscriptions left on the churn topics: {left}", flush=True)
bad = {s: n for s, n in statuses.items() if s not in (101, 200, 204)}
sys.exit(0 if left == 0 and not bad else 1)
