#!/usr/bin/env python3
"""/healthz latency of `flowrag serve` while slow and idle clients hold connections;
writes bench/out/server_slow_clients.md.

Each run starts `flowrag serve` on the demo store (examples/demo, indexed once), then:
  * --slow clients send a request head one byte per second (never finishing within the run),
  * --idle connections are opened and send nothing,
  * --probes GET /healthz requests are made one after another, each on a new connection
    (connect, request, whole response), timing out after --probe-timeout seconds.
Reported per scenario: p50 and p99 of the probe latency and the probes that failed (timeout,
refusal or error), the median over --runs runs (a fresh server each run). The baseline
scenario probes the same server with no other client.

Usage: bench/server_slow_clients.py [--flowrag build/release/tools/flowrag] [--runs 3]
           [--slow 64] [--idle 1000] [--probes 300] [--serve-arg=--threads=8 ...]
           [--out bench/out/server_slow_clients.md]
"""
import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from retrieval_report import ROOT, cpu_model, git_commit, run, write_report
from store_open import free_port, wait_ready

SLOW_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4096 + b"\r\n\r\n"


def raise_open_files(needed):
    """Raises the soft open-files limit (inherited by the server) to cover `needed`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(hard, needed)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def trickle(socks, stop):
    """Sends the next byte of SLOW_HEAD on every socket once a second until `stop`."""
    sent = 0
    while not stop.wait(1.0) and sent < len(SLOW_HEAD):
        for s in socks:
            try:
                s.send(SLOW_HEAD[sent:sent + 1])
            except OSError:
                pass  # closed by the server: stays closed
        sent += 1


def probe(port, timeout):
    """Seconds for one GET /healthz on a new connection; None when it failed."""
    t0 = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    if not data.startswith(b"HTTP/1.1 200"):
        return None
    return time.perf_counter() - t0


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100.0 * (len(values) - 1))))]


def one_run(flowrag, db, serve_args, slow, idle, probes, timeout):
    """(p50 ms, p99 ms, failed probes) for one fresh server with `slow` and `idle` clients."""
    port = free_port()
    proc = subprocess.Popen([flowrag, "serve", "--db", db, "--port", str(port)] + serve_args,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    socks = []
    stop = threading.Event()
    try:
        wait_ready(port, proc)
        slow_socks = [connect(port) for _ in range(slow)]
        socks = slow_socks + [connect(port) for _ in range(idle)]
        trickler = threading.Thread(target=trickle, args=(slow_socks, stop))
        trickler.start()
        time.sleep(1.5)  # every connection accepted, the slow ones a byte in
        samples = [probe(port, timeout) for _ in range(probes)]
        stop.set()
        trickler.join()
    finally:
        stop.set()
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait(timeout=60)
    ok = [s * 1e3 for s in samples if s is not None]
    if not ok:
        return float("nan"), float("nan"), len(samples)
    return percentile(ok, 50), percentile(ok, 99), len(samples) - len(ok)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--slow", type=int, default=64)
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--probes", type=int, default=300)
    ap.add_argument("--probe-timeout", type=float, default=5.0)
    ap.add_argument("--serve-arg", action="append", default=[],
                    help="extra argument of flowrag serve (repeatable)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/server_slow_clients.md"))
    args = ap.parse_args()
    flowrag = os.path.abspath(args.flowrag)
    limit = raise_open_files(args.slow + args.idle + 256)
    if limit < args.slow + args.idle + 64:
        sys.exit(f"open-files limit {limit} too low for {args.slow + args.idle} connections")

    scenarios = [("no other client", 0, 0),
                 (f"{args.slow} slow-header + {args.idle} idle connections", args.slow, args.idle)]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "demo.db")
        run([flowrag, "index", os.path.join(ROOT, "examples/demo"), "--db", db, "-q"])
        lines = [
            "# /healthz under slow and idle clients",
            "",
            f"Machine: {cpu_model()}, {os.cpu_count()} cores (load average {load:.1f} at the "
            "start). "
            f"flowrag commit: `{git_commit()}` (release build), `flowrag serve` defaults"
            + (f" plus `{' '.join(args.serve_arg)}`" if args.serve_arg else "") + ".",
            f"Command: `bench/server_slow_clients.py --runs {args.runs} --slow {args.slow} "
            f"--idle {args.idle} --probes {args.probes}`.",
            "",
            f"Slow clients send a request head one byte per second; idle connections send "
            f"nothing. {args.probes} GET /healthz probes, one after another, each on a new "
            f"connection (timeout {args.probe_timeout:g} s). Median over {args.runs} runs, "
            "a fresh server each run.",
            "",
            "| clients | /healthz p50 ms | p99 ms | failed probes |",
            "|---|---|---|---|",
        ]
        for name, slow, idle in scenarios:
            results = [one_run(flowrag, db, args.serve_arg, slow, idle, args.probes,
                               args.probe_timeout) for _ in range(args.runs)]
            lines.append(f"| {name} | {statistics.median(r[0] for r in results):.2f} | "
                         f"{statistics.median(r[1] for r in results):.2f} | "
                         f"{statistics.median(r[2] for r in results):.0f} |")
            print(lines[-1], flush=True)
        write_report(args.out, lines)


if __name__ == "__main__":
    main()
