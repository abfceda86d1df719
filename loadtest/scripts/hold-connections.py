#!/usr/bin/env python3
"""Holds N HTTP/1.1 connections to a loopback server, each with one GET waiting, for SECONDS, then exits.

    hold-connections.py URL N SECONDS [--again]

With --again, every answer (bodiless: 204, as a timed-out poll or KestrelFloor's timer mode gives)
is followed at once by the same request on the same connection, so that requests come and go as
polls do. Prints what is held every 5 s. Loopback only: it is a measuring tool, not a load generator.
"""
import asyncio, sys, time, urllib.parse

async def main():
    url, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    again = "--again" in sys.argv[4:]
    target = urllib.parse.urlsplit(url)
    if not target.hostname.startswith("127.") and target.hostname != "localhost":
        sys.exit("loopback only: the URL's host must be 127.x.x.x or localhost")
    path = target.path + ("?" + target.query if target.query else "")
    request = f"GET {path} HTTP/1.1\r\nHost: {target.netloc}\r\n\r\n".encode()
    stats = {"open": 0, "answers": 0, "failed": 0}
    deadline = time.monotonic() + seconds
    opening = asyncio.Semaphore(100)

    async def connection():
        async with opening:
            try:
                reader, writer = await asyncio.open_connection(target.hostname, target.port)
            except OSError:
                stats["failed"] += 1
                return
        stats["open"] += 1
        writer.write(request)
        buffered = b""
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    chunk = await asyncio.wait_for(reader.read(65536), remaining)
                except asyncio.TimeoutError:
                    break
                if not chunk:
                    stats["failed"] += 1
                    break
                buffered += chunk
                while b"\r\n\r\n" in buffered:
                    _, buffered = buffered.split(b"\r\n\r\n", 1)
                    stats["answers"] += 1
                    if again:
                        writer.write(request)
        except OSError:
            stats["failed"] += 1
        finally:
            stats["open"] -= 1
            writer.close()

    async def report():
        while time.monotonic() < deadline:
            print(f"{time.strftime('%H:%M:%S')} open {stats['open']} answers {stats['answers']} failed {stats['failed']}", flush=True)
            await asyncio.sleep(5)

    reporter = asyncio.create_task(report())
    await asyncio.gather(*(connection() for _ in range(count)))
    reporter.cancel()
    print(f"done: answers {stats['answers']} failed {stats['failed']}", flush=True)

asyncio.run(main())
