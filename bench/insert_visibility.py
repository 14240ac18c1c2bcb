#!/usr/bin/env python3
"""When does a query see an inserted document? (issue 34: visible within 100 ms)

Copies STORE (and its segment directory) to a scratch directory, starts
`flowrag serve` on loopback over the copy, then N times: sends an insert of
one new document (POST /v1/documents) on a raw socket and, from the moment
the request is sent, polls a `bm25` query for the document's title on a
kept-alive connection until the answer cites the document. Prints each
insert's visibility, the polls it took and one poll's round trip (the
figure's resolution: about 0.5 ms), the request's total time (which goes on
with the extraction after the document is visible), and the median
visibility. bench/server_writes_rss.py measures the same through urllib
(a new connection and 20 ms of sleep per poll: a coarser figure).

--in-place inserts into STORE itself (a 10^6 store is too large to copy).

--deletes: once an insert's request has returned, deletes the document
(DELETE /v1/documents/{id}) the same way and polls until the answer no
longer cites it: the delete's visibility and request time.

--load-threads N --questions FILE: N threads ask FILE's questions (METHOD,
top 5) back to back on kept-alive connections from the first write to the
last, and their latency is reported as p50 / p99 / max (issue 34 point 3:
writes visible while queries run, and the queries' p99 meanwhile).

--wrk --questions FILE: bench/server_load.sh's load instead (wrk -t2 -c16
--latency with bench/server_query.lua over FILE's first 50 questions,
METHOD, top 5) from the first write to the last, and wrk's report after
(issue 34 point 3 asks for it under that script's load). The server then
has --connections + 4 workers, as server_load.sh gives it, so the writes
and the polls find one free.

Usage: bench/insert_visibility.py --db STORE [--inserts 5] [--in-place]
         [--deletes] [--load-threads N --questions questions.jsonl [--method qafd]]
         [--wrk --questions questions.jsonl [--connections 16]]
         [--flowrag build/release/tools/flowrag] [--keep DIR]
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from server_writes_rss import QueryLoad, copy_store, free_port  # same directory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wait_for(port, server, log):
    for _ in range(600):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/healthz")
            c.getresponse().read()
            return
        except OSError:
            if server.poll() is not None:
                sys.exit("insert_visibility: the server ended; see " + log)
            time.sleep(0.1)
    sys.exit("insert_visibility: the server did not answer")


def probe(n):
    """The n-th probe document's id and title."""
    return f"visibility-probe-{n}", f"Quolvanex Prime {n}"


def insert_request(n):
    doc_id, title = probe(n)
    body = json.dumps({"documents": [{"id": doc_id, "title": title,
                                      "text": f"{title} is a river first recorded in 1801."}]})
    return (f"POST /v1/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}")


def delete_request(n):
    doc_id, _ = probe(n)
    return (f"DELETE /v1/documents/{doc_id} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Length: 0\r\n\r\n")


def one_write(port, n, request, want_cited):
    """Sends `request` and polls until the probe's title query cites the
    probe document (want_cited) or no longer does."""
    doc_id, title = probe(n)
    query = json.dumps({"question": title, "method": "bm25", "top_k": 1})
    poller = http.client.HTTPConnection("127.0.0.1", port)
    poller.connect()
    insert = socket.create_connection(("127.0.0.1", port))
    start = time.perf_counter()
    insert.sendall(request.encode())
    polls = 0
    while True:
        poller.request("POST", "/v1/query", body=query,
                       headers={"Content-Type": "application/json"})
        answer = poller.getresponse().read()
        polls += 1
        if (doc_id.encode() in answer) == want_cited:
            visible = time.perf_counter() - start
            break
    poll_start = time.perf_counter()
    poller.request("POST", "/v1/query", body=query, headers={"Content-Type": "application/json"})
    poller.getresponse().read()
    poll = time.perf_counter() - poll_start
    insert.settimeout(3600)
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = insert.recv(65536)
        if not chunk:
            break
        reply += chunk
    total = time.perf_counter() - start
    insert.close()
    poller.close()
    if not reply.startswith(b"HTTP/1.1 200"):
        sys.exit("insert_visibility: the write failed: " + reply[:200].decode(errors="replace"))
    return visible * 1000, polls, poll * 1000, total * 1000


def kept_alive_asker(port, questions, method):
    """make_ask for QueryLoad: one kept-alive connection per thread."""
    def make_ask(_):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

        def ask(i):
            body = json.dumps({"question": questions[i % len(questions)], "method": method,
                               "top_k": 5})
            conn.request("POST", "/v1/query", body=body,
                         headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            return response.status == 200
        return ask
    return make_ask


def read_questions(path):
    with open(path) as f:
        return [json.loads(line)["question"] for line in f if line.strip()]


def start_wrk(port, questions, method, connections, scratch):
    """server_load.sh's wrk load, running until stopped (stop_wrk)."""
    bodies = os.path.join(scratch, "bodies.jsonl")
    with open(bodies, "w") as f:
        for q in questions[:50]:
            f.write(json.dumps({"question": q, "method": method, "pipeline": "single",
                                "top_k": 5}) + "\n")
    out = open(os.path.join(scratch, "wrk.txt"), "w")
    return subprocess.Popen(["wrk", "-t2", f"-c{connections}", "-d24h", "--latency", "-s",
                             os.path.join(ROOT, "bench/server_query.lua"),
                             f"http://127.0.0.1:{port}/v1/query", "--", bodies],
                            stdout=out, stderr=subprocess.STDOUT), out


def stop_wrk(wrk, out, scratch):
    """Stops wrk with SIGINT (it then prints its report) and returns it."""
    wrk.send_signal(signal.SIGINT)
    wrk.wait()
    out.close()
    with open(os.path.join(scratch, "wrk.txt")) as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--inserts", type=int, default=5)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--keep", help="scratch directory to keep (default: a temporary one)")
    ap.add_argument("--in-place", action="store_true",
                    help="insert into --db itself, not a copy (a store too large to copy: "
                         "its documents visibility-probe-N stay in it)")
    ap.add_argument("--deletes", action="store_true",
                    help="delete each probe after its insert and time that too")
    ap.add_argument("--load-threads", type=int, default=0)
    ap.add_argument("--questions", help="questions.jsonl for --load-threads")
    ap.add_argument("--method", default="qafd", help="the load's method")
    ap.add_argument("--wrk", action="store_true", help="server_load.sh's wrk load meanwhile")
    ap.add_argument("--connections", type=int, default=16, help="wrk's connections")
    args = ap.parse_args()
    if (args.load_threads > 0 or args.wrk) and not args.questions:
        sys.exit("insert_visibility: --load-threads and --wrk need --questions")
    if args.wrk and shutil.which("wrk") is None:
        sys.exit("insert_visibility: wrk not found (scripts/setup.sh)")
    scratch = args.keep or tempfile.mkdtemp(prefix="flowrag-visibility-")
    os.makedirs(scratch, exist_ok=True)
    db = args.db if args.in_place else copy_store(args.db, scratch)
    port = free_port()
    log = os.path.join(scratch, "server.log")
    with open(log, "w") as out:
        server = subprocess.Popen([args.flowrag, "serve", "--db", db, "--host", "127.0.0.1",
                                   "--port", str(port), "--threads",
                                   str(args.connections + 4 if args.wrk else 4)],
                                  stdout=out, stderr=subprocess.STDOUT)
    wrk = None
    try:
        wait_for(port, server, log)
        visible, gone = [], []
        where = "in place" if args.in_place else f"copy in {scratch}"
        load = ""
        if args.load_threads > 0:
            load = f", {args.load_threads} threads asking {args.method} questions meanwhile"
        if args.wrk:
            load = f", wrk -t2 -c{args.connections} asking {args.method} questions meanwhile"
        print(f"store {args.db} ({where}); {args.inserts} inserts{load}\n")
        print("| write | visible ms | polls | poll ms | request ms |")
        print("|---|---|---|---|---|")
        query_load = None
        if args.load_threads > 0:
            query_load = QueryLoad(kept_alive_asker(port, read_questions(args.questions),
                                                    args.method), args.load_threads)
        if args.wrk:
            wrk = start_wrk(port, read_questions(args.questions), args.method, args.connections,
                            scratch)
            time.sleep(2)
        for n in range(1, args.inserts + 1):
            ms, polls, poll, total = one_write(port, n, insert_request(n), True)
            visible.append(ms)
            print(f"| insert {n} | {ms:.1f} | {polls} | {poll:.1f} | {total:.0f} |", flush=True)
            if args.deletes:
                ms, polls, poll, total = one_write(port, n, delete_request(n), False)
                gone.append(ms)
                print(f"| delete {n} | {ms:.1f} | {polls} | {poll:.1f} | {total:.0f} |",
                      flush=True)
        print(f"\ninsert visible after {statistics.median(visible):.1f} ms "
              f"(median of {len(visible)})")
        if gone:
            print(f"delete visible after {statistics.median(gone):.1f} ms "
                  f"(median of {len(gone)})")
        if query_load is not None:
            print(f"{args.method} queries during the writes ({args.load_threads} threads): "
                  f"{query_load.stop()}")
        if wrk is not None:
            print(f"\n{args.method} queries during the writes (wrk):\n" + stop_wrk(*wrk, scratch))
            wrk = None
    finally:
        if wrk is not None:
            wrk[0].kill()
        server.terminate()
        server.wait()
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
