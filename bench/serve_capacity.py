#!/usr/bin/env python3
"""What a replica needs to serve a store: time to its first answer and memory after many queries.

Starts `flowrag serve --read-only --db STORE` (--writable: without --read-only), and from the moment it is started asks one
`qafd` /v1/query until it is answered (the first answer after start), then asks --queries
distinct questions one at a time on one kept-alive connection and reports:
  * first answer: seconds from starting the process to the first 200 reply;
  * per-query latency as the client sees it (loopback HTTP included): p50, p99, max;
  * the server's VmRSS, VmHWM, RssAnon and RssFile (/proc) after the first answer, after
    every --every queries and at the end.

The distinct questions are the --questions file's (JSON lines with a "question" field),
then "What is <title>?" for titles of the --corpus file (JSON lines with a "title" field),
each once, until --queries are reached.

Issue 34, point 2: at 10^6 passages the first answer under 1 s after start, and under
3 GiB after 1,000 distinct qafd queries.

--memory-limit MIB runs the server in a memory cgroup of that limit (a replica's container:
cgroup v1 `memory` or v2 `memory.max`, which needs root), so that the segment pages it reads
are charged to it and the kernel evicts the coldest when the limit is reached; with
--drop-caches (root) the page cache is dropped first, so that no page the server maps was
charged elsewhere before. The table then also shows the cgroup's usage.

--sections SEGMENT prints, after the last query, how much of each section of the store's
segment file the server holds (bench/segment_residency.py).

Usage: bench/serve_capacity.py --db STORE [--corpus corpus.jsonl] [--questions q.jsonl]
           [--queries 1000] [--every 250] [--method qafd]
           [--memory-limit MIB [--drop-caches]] [--sections SEGMENT] [--writable]
           [--flowrag build/release/tools/flowrag]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time

import segment_residency
from server_writes_rss import ROOT, free_port, memory


def memory_row(pid):
    """The server's VmRSS, VmHWM, RssAnon and RssFile in MiB, as table cells."""
    m = memory(pid)
    return " | ".join(f"{m[k]:.0f}" for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"))


def questions(args):
    seen = []
    known = set()

    def add(q):
        if q and q not in known:
            known.add(q)
            seen.append(q)

    if args.questions:
        with open(args.questions) as f:
            for line in f:
                if line.strip():
                    add(json.loads(line).get("question", ""))
    if args.corpus and len(seen) < args.queries:
        with open(args.corpus) as f:
            for line in f:
                if len(seen) >= args.queries:
                    break
                title = json.loads(line).get("title", "") if line.strip() else ""
                if title:
                    add(f"What is {title}?")
    if len(seen) < args.queries:
        sys.exit(f"serve_capacity: only {len(seen)} distinct questions for --queries "
                 f"{args.queries}: give --corpus")
    return seen[:args.queries]


class MemoryCgroup:
    """A memory cgroup of `limit_mib` for one process (v1 `memory` or v2), removed at close."""

    def __init__(self, limit_mib):
        name = f"flowrag-serve-{os.getpid()}"
        v1 = "/sys/fs/cgroup/memory"
        v2 = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"
        if os.path.exists(os.path.join(v1, "memory.limit_in_bytes")):
            self.path, limit_file, self.usage_file = (os.path.join(v1, name), "memory.limit_in_bytes",
                                                      "memory.usage_in_bytes")
        elif os.path.exists(os.path.join(v2, "cgroup.controllers")):
            self.path, limit_file, self.usage_file = os.path.join(v2, name), "memory.max", "memory.current"
        else:
            sys.exit("serve_capacity: --memory-limit needs a cgroup memory controller")
        os.mkdir(self.path)
        with open(os.path.join(self.path, limit_file), "w") as f:
            f.write(str(limit_mib << 20))

    def enter(self):  # in the child, before exec
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def usage_mib(self):
        with open(os.path.join(self.path, self.usage_file)) as f:
            return int(f.read()) >> 20

    def close(self):
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def ask(conn, question, method):
    body = json.dumps({"question": question, "method": method, "top_k": 5})
    conn.request("POST", "/v1/query", body=body, headers={"Content-Type": "application/json"})
    reply = conn.getresponse()
    data = reply.read()
    return reply.status, data


def first_answer(port, server, question, method, started):
    while True:
        if server.poll() is not None:
            sys.exit("serve_capacity: the server ended before answering")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            status, data = ask(conn, question, method)
            if status == 200:
                return time.perf_counter() - started, conn
            sys.exit(f"serve_capacity: first query answered {status}: {data[:200]!r}")
        except (ConnectionRefusedError, ConnectionResetError):
            time.sleep(0.005)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--corpus")
    ap.add_argument("--questions")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--every", type=int, default=250)
    ap.add_argument("--method", default="qafd")
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--memory-limit", type=int, metavar="MIB")
    ap.add_argument("--drop-caches", action="store_true")
    ap.add_argument("--sections", metavar="SEGMENT")
    ap.add_argument("--writable", action="store_true",
                    help="serve the store writable (no --read-only): its open as a writer's")
    args = ap.parse_args()
    asked = questions(args)
    port = free_port()
    group = MemoryCgroup(args.memory_limit) if args.memory_limit else None
    if args.drop_caches:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3")

    def row(pid):
        cells = memory_row(pid)
        return f"{cells} | {group.usage_mib()}" if group else cells

    started = time.perf_counter()
    mode = [] if args.writable else ["--read-only"]
    server = subprocess.Popen([args.flowrag, "serve", *mode, "--db", args.db,
                               "--host", "127.0.0.1", "--port", str(port), "--threads", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              preexec_fn=group.enter if group else None)
    try:
        first, conn = first_answer(port, server, asked[0], args.method, started)
        limit = f"; memory limit {args.memory_limit} MiB" if group else ""
        cache = "; page cache dropped first" if args.drop_caches else ""
        opened = "; writable" if args.writable else ""
        print(f"store {args.db}{opened}; method {args.method}; {len(asked)} distinct questions{limit}{cache}\n")
        print(f"first answer {first:.3f} s after start\n")
        print("| queries | RSS MiB | HWM MiB | anonymous MiB | file MiB |" +
              (" cgroup usage MiB |" if group else ""))
        print("|---|---|---|---|---|" + ("---|" if group else ""))
        print(f"| 1 | {row(server.pid)} |")
        latencies = []
        for n, q in enumerate(asked[1:], start=2):
            t = time.perf_counter()
            status, data = ask(conn, q, args.method)
            latencies.append((time.perf_counter() - t) * 1000)
            if status != 200:
                sys.exit(f"serve_capacity: query {n} answered {status}: {data[:200]!r}")
            if n % args.every == 0 or n == len(asked):
                print(f"| {n} | {row(server.pid)} |", flush=True)
        latencies.sort()
        if latencies:  # --queries 1 asks only the first question
            p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
            print(f"\nlatency (client, loopback HTTP) over {len(latencies)} queries: "
                  f"p50 {statistics.median(latencies):.2f} ms, p99 {p99:.2f} ms, "
                  f"max {latencies[-1]:.2f} ms")
        if args.sections:
            print(f"\nresident sections of {args.sections} after the last query:\n")
            segment_residency.print_table(
                segment_residency.resident_sections(server.pid, args.sections), 40)
    finally:
        server.terminate()
        server.wait()
        if group:
            group.close()


if __name__ == "__main__":
    main()
