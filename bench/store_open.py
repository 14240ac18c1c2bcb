#!/usr/bin/env python3
"""Cold-open cost and insert visibility of a store; writes bench/out/store_open.md.

Two measurements, each the median of --runs:
  * cold query: a fresh `flowrag query --db <store> "<question>"` process (default method),
    wall time and peak resident memory (ru_maxrss of the child), on each --cold store;
  * insert visibility: `flowrag serve` on a copy of the --serve store, one new document
    POSTed to /v1/documents, then /v1/query asked for its unique phrase until the
    document comes back; reported are the POST latency and the time from sending the POST
    to the first query that returns the new passage.

Stores are built with `flowrag index <bench> --chunking none` unless they exist in --cache.

Usage: bench/store_open.py [--flowrag build/release/tools/flowrag] [--runs 3]
           [--cold 2wiki] [--serve hotpotqa-train] [--cache DIR] [--out bench/out/store_open.md]
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from graph_report import timed
from retrieval_report import ROOT, cpu_model, git_commit, run, write_report

QUESTION = "Who is the director of the film?"


def store_for(flowrag, bench_root, bench, cache):
    db = os.path.join(cache, bench + ".db")
    if not os.path.exists(db):
        run([flowrag, "index", os.path.join(bench_root, bench), "--db", db, "--chunking", "none",
             "-q"])
    return db


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    if resp.status != 200:
        sys.exit(f"{method} {path}: HTTP {resp.status} {data[:300]!r}")
    return json.loads(data)


def wait_ready(port, proc):
    for _ in range(600):
        if proc.poll() is not None:
            sys.exit("flowrag serve exited early")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
    sys.exit("flowrag serve did not come up")


def insert_visibility(flowrag, db, runs):
    """(POST ms, visible ms) per run, each inserting a new document into a served store."""
    port = free_port()
    proc = subprocess.Popen([flowrag, "serve", "--db", db, "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples = []
    try:
        wait_ready(port, proc)
        for i in range(runs):
            phrase = f"Zorbelline Quaffington {i} moored the Vexillon barge"
            doc = {"id": f"bench-insert-{i}", "title": f"Vexillon barge {i}",
                   "text": phrase + " at the Ostrel quay in 1901."}
            posted = []
            t0 = time.perf_counter()
            writer = threading.Thread(target=lambda: (
                request(port, "POST", "/v1/documents", {"documents": [doc], "chunking": "none"}),
                posted.append(time.perf_counter())))
            writer.start()
            while True:  # queries run while the POST is in flight
                r = request(port, "POST", "/v1/query",
                            {"question": phrase, "method": "bm25", "top_k": 1})
                top = r["retrieval"]["passages"]
                if top and top[0]["document_id"] == doc["id"]:
                    break
                if time.perf_counter() - t0 > 60:
                    sys.exit("inserted document not visible after 60 s")
            seen = time.perf_counter()
            writer.join()
            posted = posted[0]
            samples.append(((posted - t0) * 1e3, (seen - t0) * 1e3))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return samples


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--bench-root", default=os.path.join(ROOT, "../shared/data/bench"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold", default="2wiki", help="comma-separated benchmarks")
    ap.add_argument("--serve", default="hotpotqa-train")
    ap.add_argument("--cache", default="", help="folder of prebuilt <bench>.db stores")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/store_open.md"))
    args = ap.parse_args()
    flowrag = os.path.abspath(args.flowrag)

    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or tmp
        lines = [
            "# Store open and insert visibility",
            "",
            f"Machine: {cpu_model()}, {os.cpu_count()} cores. flowrag commit: `{git_commit()}` "
            "(release build).",
            f"Command: `bench/store_open.py --runs {args.runs} --cold {args.cold} "
            f"--serve {args.serve}`. Median of {args.runs} runs.",
            "",
            "| store | documents | cold `flowrag query` (default method, qafd) wall s | peak RSS MiB |",
            "|---|---|---|---|",
        ]
        for bench in args.cold.split(","):
            db = store_for(flowrag, args.bench_root, bench, cache)
            samples = [timed([flowrag, "query", "--db", db, QUESTION]) for _ in range(args.runs)]
            docs = sum(1 for _ in open(os.path.join(args.bench_root, bench, "corpus.jsonl")))
            lines.append(f"| {bench} | {docs} | {statistics.median(s[0] for s in samples):.3f} | "
                         f"{statistics.median(s[1] for s in samples):.0f} |")
            print(lines[-1], flush=True)

        served = os.path.join(tmp, "served.db")
        shutil.copyfile(store_for(flowrag, args.bench_root, args.serve, cache), served)
        samples = insert_visibility(flowrag, served, args.runs)
        lines += [
            "",
            f"Insert of one document into a served `{args.serve}` store (`flowrag serve`, "
            "POST /v1/documents while /v1/query is asked in a loop until it returns the new "
            "passage):",
            "",
            "| POST ms | visible after ms |",
            "|---|---|",
            f"| {statistics.median(s[0] for s in samples):.1f} | "
            f"{statistics.median(s[1] for s in samples):.1f} |",
        ]
        print(lines[-1], flush=True)
        write_report(args.out, lines)


if __name__ == "__main__":
    main()
