#!/usr/bin/env python3
"""Staleness of replicated query servers: two `flowrag serve` processes on one store.

Each round inserts one document through server A (POST /v1/documents) and then polls server
B (POST /v1/query, bm25, every 2 ms) until B returns it. Staleness is the time from A's
answer (the write committed) to the first query of B that returns the document; the insert
latency is A's answer time. The documents are deleted again through A at the end.

Usage: bench/replica_staleness.py --db STORE [--flowrag build/release/tools/flowrag]
           [--rounds 50] [--ports 18501,18502]
STORE is a SQLite file or a postgresql:// URL that already holds a store (flowrag index).
"""
import argparse
import json
import statistics
import subprocess
import time
import urllib.request


def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


def delete(port, doc_id):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/documents/{doc_id}", method="DELETE")
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()


def wait_healthy(port, deadline_s=60):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"server on port {port} did not come up")


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--flowrag", default="build/release/tools/flowrag")
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--ports", default="18501,18502")
    args = ap.parse_args()
    pa, pb = (int(p) for p in args.ports.split(","))
    servers = [subprocess.Popen([args.flowrag, "serve", "--db", args.db, "--port", str(p)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for p in (pa, pb)]
    try:
        wait_healthy(pa)
        wait_healthy(pb)
        stale, insert = [], []
        for i in range(args.rounds):
            doc_id = f"staleness-{i}"
            token = f"qzx{i}staleness"
            t0 = time.monotonic()
            post(pa, "/v1/documents",
                 {"documents": [{"id": doc_id, "title": f"Probe {i}", "text": f"{token} probe"}]})
            t1 = time.monotonic()
            while doc_id not in post(pb, "/v1/query",
                                     {"question": token, "method": "bm25", "top_k": 1}):
                time.sleep(0.002)
            t2 = time.monotonic()
            insert.append((t1 - t0) * 1000)
            stale.append((t2 - t1) * 1000)
        for i in range(args.rounds):
            delete(pa, f"staleness-{i}")
        print(f"rounds {args.rounds}: staleness p50 {statistics.median(stale):.1f} ms, "
              f"p99 {percentile(stale, 99):.1f} ms, max {max(stale):.1f} ms; "
              f"insert through A p50 {statistics.median(insert):.1f} ms, "
              f"p99 {percentile(insert, 99):.1f} ms")
    finally:
        for s in servers:
            s.terminate()
        for s in servers:
            s.wait()


if __name__ == "__main__":
    main()
