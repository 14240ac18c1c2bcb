#!/usr/bin/env python3
"""Server memory across writes (issue 34): does `flowrag serve` hold its RSS
flat while documents are inserted and deleted?

Copies STORE (and its segment directory) to a scratch directory, starts
`flowrag serve` on loopback over the copy, answers QUESTIONS once (the RSS
"after open"), then WRITES times: inserts one new document (a passage of
CORPUS under a fresh id) with POST /v1/documents, asks one question, deletes
the document again with DELETE /v1/documents/{id}, asks one question. Every
EVERY writes it samples the server's /proc status: VmRSS and its split into
RssAnon (private memory: malloc) and RssFile (mapped file pages: the
segment, shared with other processes and the page cache). Also times each
insert and delete (HTTP round trip) and when queries see it: while the
request runs, a `bm25` query for the passage's text is polled every 20 ms,
and the time from the request's start to the first answer that lists the
document (insert) or no longer lists it (delete) is its visibility.
With --load-threads N, N threads ask METHOD questions back to back from the
first write to the last, and their latency (HTTP round trip, so an upper
bound on the server's) is reported as p50 / p99 / max: do queries stay fast
while the writes run? With --settle S, S seconds after the last write (the
persister has then written and mapped its segment) the questions are asked
again and the RSS sampled once more: what the writes left behind.

Usage: bench/server_writes_rss.py --db STORE [--corpus corpus.jsonl]
         [--questions questions.jsonl] [--writes 100] [--every 10]
         [--method qafd] [--pause SECONDS] [--flowrag build/release/tools/flowrag]
         [--keep DIR] [--load-threads N] [--settle SECONDS]

Prints one markdown table row per sample and the ratios of the last sample
to the first.
"""
import argparse
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
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, body=None, method=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read() or b"{}")


def memory(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024.0  # MiB
    return out


class QueryLoad:
    """`threads` threads asking questions back to back until stop(). Each
    thread t gets its own asker from make_ask(t) (a kept-alive connection,
    say) and calls it with i = t, t + threads, ...; the asker returns
    whether the answer was a success. Latencies in ms."""

    def __init__(self, make_ask, threads):
        self.latencies, self.errors = [], 0
        self._threads_n = threads
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(make_ask, t))
                         for t in range(threads)]
        for t in self._threads:
            t.start()

    def _run(self, make_ask, t):
        ask = make_ask(t)
        i = t
        while not self._stop.is_set():
            start = time.perf_counter()
            ok = ask(i)
            self.latencies.append((time.perf_counter() - start) * 1000)
            self.errors += not ok
            i += self._threads_n

    def stop(self):
        """Joins the threads; their latencies as p50 / p99 / max."""
        self._stop.set()
        for t in self._threads:
            t.join()
        q = sorted(self.latencies)
        if not q:
            return "no query finished"
        return (f"{len(q)} queries: p50 {q[len(q) // 2]:.1f} ms, "
                f"p99 {q[min(len(q) - 1, int(len(q) * 0.99))]:.1f} ms, max {q[-1]:.1f} ms, "
                f"{self.errors} errors")


def copy_store(db, scratch):
    target = os.path.join(scratch, os.path.basename(db))
    shutil.copyfile(db, target)
    if os.path.isdir(db + ".segments"):
        shutil.copytree(db + ".segments", target + ".segments")
    return target


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "../shared/data/bench/2wiki/corpus.jsonl"))
    ap.add_argument("--questions",
                    default=os.path.join(ROOT, "../shared/data/bench/2wiki/questions.jsonl"))
    ap.add_argument("--writes", type=int, default=100)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--method", default="qafd")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="then wait this long, ask the questions again and sample the RSS")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="seconds between one insert-and-delete and the next")
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--keep", help="scratch directory kept after the run")
    ap.add_argument("--load-threads", type=int, default=0,
                    help="threads asking questions throughout the writes")
    args = ap.parse_args()

    questions = []
    with open(args.questions) as f:
        for line in f:
            if line.strip():
                questions.append(json.loads(line)["question"])
            if len(questions) >= 50:
                break
    passages = []
    with open(args.corpus) as f:
        for line in f:
            if line.strip():
                passages.append(json.loads(line))
            if len(passages) >= args.writes:
                break

    scratch = args.keep or tempfile.mkdtemp(prefix="flowrag-rss-")
    os.makedirs(scratch, exist_ok=True)
    db = copy_store(args.db, scratch)
    port = free_port()
    log = open(os.path.join(scratch, "server.log"), "w")
    server = subprocess.Popen([args.flowrag, "serve", "--db", db, "--host", "127.0.0.1",
                               "--port", str(port), "--threads", "4"],
                              stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None:
                    sys.exit("server_writes_rss: the server ended; see " + log.name)
                time.sleep(0.1)

        poll_ms = []  # each visibility poll's round trip: the figures' resolution

        def listed(doc_id, text):
            start = time.monotonic()
            answer = request(base + "/v1/query", {"question": text[:300], "method": "bm25",
                                                  "top_k": 10})
            passages = answer.get("retrieval", {}).get("passages", [])
            poll_ms.append((time.monotonic() - start) * 1000)
            return any(p.get("document_id") == doc_id for p in passages)

        def timed_write(write, doc_id, text, want_listed):
            """(round trip ms, visibility ms): `write` runs in a thread while
            the main thread polls until the document's listing is `want_listed`."""
            start = time.monotonic()
            done = {}

            def run():
                write()
                done["ms"] = (time.monotonic() - start) * 1000

            thread = threading.Thread(target=run)
            thread.start()
            seen = None
            # Until seen, or 10 s after the write returned (or at once if it failed).
            while seen is None and (thread.is_alive() or (
                    "ms" in done and time.monotonic() - start < done["ms"] / 1000 + 10)):
                if listed(doc_id, text) == want_listed:
                    seen = (time.monotonic() - start) * 1000
                else:
                    time.sleep(0.02)
            thread.join()
            if "ms" not in done:
                sys.exit("server_writes_rss: the write failed; see the server log")
            if seen is None:
                sys.exit(f"server_writes_rss: {doc_id} not seen 10 s after its write")
            return done["ms"], seen

        def ask(i):
            return request(base + "/v1/query", {"question": questions[i % len(questions)],
                                                "method": args.method, "top_k": 5})

        for i in range(len(questions)):
            ask(i)
        first = memory(server.pid)
        print(f"store {args.db} (copy in {scratch}); {args.writes} inserts and deletes, "
              f"method {args.method}")
        print()
        print("| writes | VmRSS MiB | RssAnon MiB | RssFile MiB | insert ms (median) | "
              "insert visible ms | delete ms (median) | delete visible ms |")
        print("|---|---|---|---|---|---|---|---|")
        print(f"| 0 | {first['VmRSS']:.0f} | {first['RssAnon']:.0f} | {first['RssFile']:.0f} "
              "| | | | |")
        inserts, deletes, insert_seen, delete_seen = [], [], [], []

        def make_ask(_):
            def ask_ok(i):
                ask(i)  # raises on an HTTP error
                return True
            return ask_ok

        load = QueryLoad(make_ask, args.load_threads) if args.load_threads > 0 else None
        last = first
        for n, p in enumerate(passages[:args.writes], start=1):
            doc_id = f"rss-probe-{n}"
            ms, seen = timed_write(
                lambda: request(base + "/v1/documents",
                                {"documents": [{"id": doc_id, "title": p.get("title", ""),
                                                "text": p["text"]}]}), doc_id, p["text"], True)
            inserts.append(ms)
            insert_seen.append(seen)
            ask(n)
            ms, seen = timed_write(
                lambda: request(base + "/v1/documents/" + urllib.parse.quote(doc_id, safe=""),
                                method="DELETE"), doc_id, p["text"], False)
            deletes.append(ms)
            delete_seen.append(seen)
            ask(n + 1)
            time.sleep(args.pause)
            if n % args.every == 0 or n == args.writes:
                last = memory(server.pid)
                print(f"| {n} | {last['VmRSS']:.0f} | {last['RssAnon']:.0f} | "
                      f"{last['RssFile']:.0f} | {statistics.median(inserts[-args.every:]):.0f} | "
                      f"{statistics.median(insert_seen[-args.every:]):.0f} | "
                      f"{statistics.median(deletes[-args.every:]):.0f} | "
                      f"{statistics.median(delete_seen[-args.every:]):.0f} |", flush=True)
        print()
        print(f"RSS after {args.writes} writes / after open: {last['VmRSS'] / first['VmRSS']:.2f} "
              f"(anon {last['RssAnon'] / max(first['RssAnon'], 1):.2f}); peak (VmHWM) "
              f"{last['VmHWM']:.0f} MiB")
        load_summary = load.stop() if load is not None else None
        if args.settle > 0:
            # The background work of the last writes (the persister writing
            # and mapping their segment) ends; the questions asked again.
            time.sleep(args.settle)
            for i, _ in enumerate(questions):
                ask(i)
            settled = memory(server.pid)
            print(f"RSS {args.settle:.0f} s after the last write and {len(questions)} questions: "
                  f"{settled['VmRSS']:.0f} MiB (anon {settled['RssAnon']:.0f}, file "
                  f"{settled['RssFile']:.0f}), {settled['VmRSS'] / first['VmRSS']:.2f} of the "
                  f"open's (anon {settled['RssAnon'] / max(first['RssAnon'], 1):.2f})")
        if load_summary is not None:
            print(f"{args.method} queries during the writes ({args.load_threads} threads): "
                  f"{load_summary}")
        print(f"A visibility poll (bm25 query of the text's first 300 characters, then 20 ms "
              f"of sleep) took {statistics.median(poll_ms):.0f} ms (median of {len(poll_ms)}): "
              f"a write is seen up to that much after it is visible.")
    finally:
        server.terminate()
        server.wait(timeout=60)
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
