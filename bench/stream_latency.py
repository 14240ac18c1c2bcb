#!/usr/bin/env python3
"""Streamed answers: time to the first answer token against the whole answer, and the cost
of the OpenAI-compatible endpoint over POST /v1/query. Writes bench/out/stream_latency.md.

Three measurements against one `flowrag serve` on STORE (loopback):

1. Model answers, streamed (POST /v1/query, "stream": true). The chat model is a local
   OpenAI-compatible endpoint started by this script that writes a fixed short-style answer
   of --words words, one word per chunk, --word-ms apart (a stand-in with a known pace, so
   what is measured is flowrag's pass-through: retrieval, prompt, relaying each piece). Each
   run asks a question new to the store, so its LLM response cache never answers.
   Reported: time to the `retrieval` event, to the first `token`, and to the `answer` event.
2. The offline answerer, streamed: the same three times.
3. Offline, not streamed: POST /v1/query against POST /v1/chat/completions with the same
   question and method (interleaved runs), i.e. what the OpenAI shape costs.

Usage: bench/stream_latency.py --db STORE [--flowrag build/release/tools/flowrag]
           [--runs 30] [--words 40] [--word-ms 25] [--method qafd] [--port 18561]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from retrieval_report import ROOT, cpu_model, git_commit, write_report


class PacedModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/chat/completions that streams at a fixed pace."""
    words = 40
    word_ms = 25

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        words = [f"word{i}" for i in range(self.words)]
        pieces = ['{"reasoning": "from [1]", "final_answer": "'] + [w + " " for w in words] + \
                 ['", "citations": [1]}']
        if not body.get("stream"):
            content = "".join(pieces) if body.get("response_format") is None else \
                '{"keywords": [], "high_level_keywords": [], "low_level_keywords": []}'
            out = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": content}}],
                              "usage": {"prompt_tokens": 100, "completion_tokens": 10}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for p in pieces:
            chunk = {"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            time.sleep(self.word_ms / 1000)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def start_model(words, word_ms):
    PacedModel.words, PacedModel.word_ms = words, word_ms
    server = ThreadingHTTPServer(("127.0.0.1", 0), PacedModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def wait_healthy(port, deadline_s=60):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"flowrag serve on port {port} did not come up")


def streamed(port, question, method):
    """(ms to retrieval, ms to first token, ms to answer) of one streamed query."""
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", "/v1/query", json.dumps({"question": question, "method": method,
                                                "stream": True}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    times = {}
    event = ""
    while True:
        line = r.fp.readline()
        if not line:
            break
        line = line.decode().rstrip("\r\n")
        if line.startswith("event: "):
            event = line[7:]
            times.setdefault(event, (time.perf_counter() - t0) * 1000)
    c.close()
    return times.get("retrieval"), times.get("token"), times.get("answer")


def post_ms(port, path, body):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    if r.status != 200:
        raise SystemExit(f"{path}: HTTP {r.status}")
    return (time.perf_counter() - t0) * 1000


def median_row(name, triples):
    cols = list(zip(*triples))
    return "| " + name + " | " + " | ".join(f"{statistics.median(c):.1f}" for c in cols) + " |"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--words", type=int, default=40)
    ap.add_argument("--word-ms", type=int, default=25)
    ap.add_argument("--method", default="qafd")
    ap.add_argument("--port", type=int, default=18561)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/stream_latency.md"))
    args = ap.parse_args()

    model = start_model(args.words, args.word_ms)
    # The store caches model answers by prompt: the questions are new to it
    # in every invocation, not only within one.
    salt = f"{os.getpid()}-{int(time.time())}"
    questions = [f"Who founded the observatory? ({salt}-{i})" for i in range(args.runs)]
    results = {}
    for label, env in (("model", {"FLOWRAG_LLM_BASE_URL": f"http://127.0.0.1:{model.server_port}/v1",
                                  "FLOWRAG_LLM_MODEL": "paced", "FLOWRAG_LLM_API_KEY": ""}),
                       ("offline", {})):
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("FLOWRAG_LLM_")}
        full_env.update(env)
        server = subprocess.Popen([args.flowrag, "serve", "--db", args.db, "--port",
                                   str(args.port), "--threads", "4"], env=full_env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_healthy(args.port)
            streamed(args.port, "warm up", args.method)
            results[label] = [streamed(args.port, q, args.method) for q in questions]
            if label == "offline":
                query, chat = [], []
                for q in questions:
                    query.append(post_ms(args.port, "/v1/query", {"question": q, "method": args.method}))
                    chat.append(post_ms(args.port, "/v1/chat/completions",
                                        {"model": f"flowrag-{args.method}",
                                         "messages": [{"role": "user", "content": q}]}))
                results["overhead"] = (query, chat)
        finally:
            server.terminate()
            server.wait()
    model.shutdown()

    query, chat = results["overhead"]
    lines = [
        "# Streamed answers: time to first token, and the OpenAI-compatible endpoint's cost",
        "",
        f"Generated by `bench/stream_latency.py --db {args.db} --runs {args.runs} --words "
        f"{args.words} --word-ms {args.word_ms} --method {args.method}` at commit "
        f"{git_commit()} on {cpu_model()} ({os.cpu_count()} cores). Medians of {args.runs} runs "
        "over loopback, each run a new question (no response-cache hits).",
        "",
        f"The model is a local OpenAI-compatible endpoint that streams a {args.words}-word answer, "
        f"one word per chunk, {args.word_ms} ms apart (about "
        f"{args.words * args.word_ms} ms of generation): the figures show what flowrag adds "
        "before and while relaying it.",
        "",
        "| answerer | to `retrieval` (ms) | to first `token` (ms) | to `answer` (ms) |",
        "|---|---|---|---|",
        median_row("chat model, streamed", results["model"]),
        median_row("offline (extractive)", results["offline"]),
        "",
        "Offline, not streamed, same questions (interleaved):",
        "",
        "| endpoint | median (ms) | p90 (ms) |",
        "|---|---|---|",
        f"| POST /v1/query | {statistics.median(query):.2f} | {sorted(query)[int(0.9 * (len(query) - 1))]:.2f} |",
        f"| POST /v1/chat/completions | {statistics.median(chat):.2f} | {sorted(chat)[int(0.9 * (len(chat) - 1))]:.2f} |",
        f"| overhead | {statistics.median(chat) - statistics.median(query):+.2f} | |",
    ]
    write_report(args.out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
