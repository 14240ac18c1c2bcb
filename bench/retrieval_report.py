#!/usr/bin/env python3
"""Runs every retrieval method on every benchmark and writes one markdown report.

For each benchmark folder in ../shared/data/bench (or --bench-root):
  * index time: `flowrag index` of corpus.jsonl into a fresh store, --runs times,
    median wall time (built-in embedder, chunking none: the benchmark passages);
  * per method: `flowrag eval --format json`, --runs times; Recall@k from the
    first run (retrieval is deterministic), latency p50/p99 as the median over runs.

Usage: bench/retrieval_report.py [--flowrag build/release/tools/flowrag]
           [--methods bm25,dense,hybrid] [--runs 3] [--out bench/out/retrieval.md]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{res.stderr}")
    return res.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--bench-root", default=os.path.join(ROOT, "../shared/data/bench"))
    ap.add_argument("--benchmarks", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--methods", default="bm25,dense,hybrid")
    ap.add_argument("--k", default="1,2,5,10")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--set", action="append", default=[], help="method option key=value")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/retrieval.md"))
    args = ap.parse_args()

    benches = sorted(d for d in os.listdir(args.bench_root)
                     if os.path.isfile(os.path.join(args.bench_root, d, "corpus.jsonl")))
    if args.benchmarks:
        wanted = args.benchmarks.split(",")
        benches = [b for b in benches if b in wanted]
    methods = args.methods.split(",")
    ks = args.k.split(",")
    set_args = [a for s in args.set for a in ("--set", s)]

    lines = [
        "# Retrieval quality and latency",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores. flowrag: `{os.path.relpath(args.flowrag, ROOT)}`.",
        f"Command: `bench/retrieval_report.py --runs {args.runs} --methods {args.methods}`"
        + (f" {' '.join(set_args)}" if set_args else "") + ".",
        f"Recall@k ×100 (passage level; document level for `medical`); latency = wall time of one "
        f"query, single thread, median over {args.runs} runs of each run's p50/p99.",
        "",
    ]
    index_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for bench in benches:
            bdir = os.path.join(args.bench_root, bench)
            times = []
            db = None
            for r in range(args.runs):
                db = os.path.join(tmp, f"{bench}-{r}.db")
                t0 = time.perf_counter()
                run([args.flowrag, "index", bdir, "--db", db, "--chunking", "none", "-q"])
                times.append(time.perf_counter() - t0)
            stats = json.loads(run([args.flowrag, "stats", "--db", db, "--json"]))
            index_rows.append((bench, stats["passages"], statistics.median(times),
                               stats["file_bytes"] / 2**20))
            lines += [f"## {bench}", "",
                      "| method | " + " | ".join(f"R@{k}" for k in ks) + " | p50 ms | p99 ms |",
                      "|---|" + "---|" * (len(ks) + 2)]
            for method in methods:
                reports = []
                for _ in range(args.runs):
                    out = run([args.flowrag, "eval", "--bench", bdir, "--db", db, "--method", method,
                               "--k", args.k, "--format", "json", "-q", *set_args])
                    reports.append(json.loads(out.strip().splitlines()[-1]))
                rec = reports[0]["recall"]
                p50 = statistics.median(r["latency_ms"]["p50"] for r in reports)
                p99 = statistics.median(r["latency_ms"]["p99"] for r in reports)
                lines.append(f"| {method} | " + " | ".join(f"{rec[k]:.1f}" for k in ks) +
                             f" | {p50:.3f} | {p99:.3f} |")
                print(f"{bench:16s} {method:8s} " + " ".join(f"R@{k}={rec[k]:.1f}" for k in ks) +
                      f" p50={p50:.3f}ms p99={p99:.3f}ms", flush=True)
            lines.append("")
            # Keep only the last store of each benchmark around until the end.
    lines += ["## Index time (built-in embedder)", "",
              "| benchmark | passages | index s (median) | store MiB |", "|---|---|---|---|"]
    for bench, n, secs, mib in index_rows:
        lines.append(f"| {bench} | {n} | {secs:.2f} | {mib:.1f} |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
