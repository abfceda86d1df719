#!/usr/bin/env python3
"""Splits a server's CPU samples (perf record -g) by phase of the request path.

    perf script -i OUT/perf.data -F ip,sym,dso | python3 loadtest/scripts/perf_phases.py [US_PER_DELIVERY]

Each sample goes to the phase of the leaf-most frame of its stack that names one (the first pattern list
that matches that frame, in the order below); samples with no such frame are "other". With the run's CPU
µs per delivery, each phase's share is also given in µs per delivery.
"""
import re, sys

PHASES = [
    ("thread pool: waits, spinning, hops", r"sched_yield|futex|LowLevelLifoSemaphore|LowLevelSpinWaiter|PortableThreadPool|ThreadPoolWorkQueue|ThreadPool\.|WorkerThread|SpinWait|Monitor::|AwaitableSocketAsyncEventArgs\.InvokeContinuation"),
    ("socket send", r"tcp_sendmsg|sock_sendmsg|__sys_sendto|__sys_sendmsg|SocketAsyncContext\.(Try|)Send|SocketPal\.Send|SocketSender|\.Send(Async|ToAsync)?\("),
    ("socket receive, epoll", r"tcp_recvmsg|sock_recvmsg|__sys_recvfrom|__sys_recvmsg|epoll_wait|ep_poll|SocketAsyncEngine|SocketAsyncContext\.(Try|)Receive|SocketPal\.Receive|SocketReceiver"),
    ("GC and allocation", r"gc_heap|WKS::|SVR::|GCHeap|JIT_New|Allocat|memset|GCToEEInterface"),
    ("Kestrel parse", r"HttpParser|TakeStartLine|TakeMessageHeaders|HttpRequestHeaders|Http1Connection\.ParseRequest|OnStartLine|OnHeader"),
    ("HttpContext and features", r"DefaultHttpContext|HttpProtocol|FeatureCollection|HostingApplication|Http1Connection|HttpRequestStream|HttpResponseStream|Http1MessageBody|DefaultHttpRequest|DefaultHttpResponse|HeaderDictionary"),
    ("routing, middleware, endpoint", r"Routing|Matcher|Middleware|RequestDelegate|EndpointFilter|RequestDelegateFactory"),
    ("Kestrel output and pipes", r"Http1OutputProducer|Pipe\.|PipeWriter|PipeReader|ConcurrentPipeWriter|TimingPipeFlusher|ChunkWriter"),
    ("application (Laharsub or the floor)", r"Laharsub\."),
    ("JSON", r"System\.Text\.Json"),
    ("runtime native (libcoreclr: GC, allocation, stubs; unnamed)", r"libcoreclr\.so"),
]
COMPILED = [(name, re.compile(pattern)) for name, pattern in PHASES]

def phase(frames):
    for frame in frames:
        for name, pattern in COMPILED:
            if pattern.search(frame):
                return name
    return "kernel, other" if frames and "kernel" in frames[0] else "other"

counts, total, frames = {}, 0, []
def flush():
    global total, frames
    if frames:
        name = phase(frames)
        counts[name] = counts.get(name, 0) + 1
        total += 1
    frames = []

for line in sys.stdin:
    if not line.strip():
        flush()
    elif line.startswith((" ", "\t")):
        frames.append(line.strip())
    else:
        flush()
flush()
per_delivery = float(sys.argv[1]) if len(sys.argv) > 1 else None
print(f"{total} samples")
print("| phase | share | µs per delivery |" if per_delivery else "| phase | share |")
print("|---|---:|---:|" if per_delivery else "|---|---:|")
for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
    share = n / total
    print(f"| {name} | {share:.1%} | {share * per_delivery:.1f} |" if per_delivery else f"| {name} | {share:.1%} |")
