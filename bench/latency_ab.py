#!/usr/bin/env python3
"""A/B query latency of two flowrag binaries on one store; writes a Markdown table.

For each of --runs rounds and each method, `flowrag eval --format json` runs with binary A
then binary B (then B then A in the next round, so drift and cache warmth fall on both),
on the same store. Reported per method: the median over rounds of each run's p50 and p99
(Engine::Query wall time, single thread), and B/A.

Usage: bench/latency_ab.py --a OLD_FLOWRAG --b NEW_FLOWRAG --db STORE
           [--bench ../shared/data/bench/2wiki] [--methods bm25,...] [--runs 3]
           [--out bench/out/latency_ab.md]
The store is built with --b (`flowrag index BENCH --chunking none`) when it does not exist.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from retrieval_report import ALL_METHODS, ROOT, cpu_model, git_commit


def eval_latency(flowrag, bench, db, method):
    out = subprocess.run([flowrag, "eval", "--bench", bench, "--db", db, "--method", method,
                          "--format", "json"], check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    return report["latency_ms"]["p50"], report["latency_ms"]["p99"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="the binary before")
    ap.add_argument("--b", required=True, help="the binary after")
    ap.add_argument("--db", required=True)
    ap.add_argument("--bench", default=os.path.join(ROOT, "../shared/data/bench/2wiki"))
    ap.add_argument("--methods", default=ALL_METHODS)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/latency_ab.md"))
    args = ap.parse_args()
    if not os.path.exists(args.db):
        subprocess.run([args.b, "index", args.bench, "--db", args.db, "--chunking", "none", "-q"],
                       check=True)
    methods = args.methods.split(",")
    samples = {(m, side): [] for m in methods for side in "ab"}
    for r in range(args.runs):
        order = "ab" if r % 2 == 0 else "ba"
        for m in methods:
            for side in order:
                binary = args.a if side == "a" else args.b
                samples[(m, side)].append(eval_latency(binary, args.bench, args.db, m))
            print(f"round {r + 1} {m}: a={samples[(m, 'a')][-1]} b={samples[(m, 'b')][-1]}",
                  file=sys.stderr)
    lines = ["# Query latency A/B", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores. Tree: `{git_commit()}`.",
             f"A = `{os.path.basename(args.a)}`, B = `{os.path.basename(args.b)}`, store "
             f"`{os.path.basename(args.db)}` ({os.path.basename(args.bench.rstrip('/'))}, built "
             "by B with `--chunking none`).",
             f"Command: `bench/latency_ab.py --a {args.a} --b {args.b} --db {args.db} "
             f"--runs {args.runs}`. Each round runs every method with A and B back to back "
             "(alternating which goes first); the table holds the median over rounds of each "
             "run's p50 / p99 of Engine::Query wall time (ms, single thread).", "",
             "| method | A p50 | B p50 | B/A p50 | A p99 | B p99 | B/A p99 |",
             "|---|---|---|---|---|---|---|"]
    for m in methods:
        a50 = statistics.median(s[0] for s in samples[(m, "a")])
        b50 = statistics.median(s[0] for s in samples[(m, "b")])
        a99 = statistics.median(s[1] for s in samples[(m, "a")])
        b99 = statistics.median(s[1] for s in samples[(m, "b")])
        lines.append(f"| {m} | {a50:.3f} | {b50:.3f} | {b50 / a50:.2f} | {a99:.3f} | {b99:.3f} "
                     f"| {b99 / a99:.2f} |")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
