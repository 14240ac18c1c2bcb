#!/usr/bin/env python3
"""Runs every retrieval method on every benchmark and graph source; writes one markdown report.

For each benchmark folder in ../shared/data/bench (or --bench-root) and each graph source:
  * offline: `flowrag index` of corpus.jsonl (built-in embedder, heuristic extractor,
    chunking none: the benchmark passages);
  * openie (only where the folder ships openie.jsonl): `flowrag index --extractor none`
    followed by `flowrag import-openie` (the LLM OpenIE graph);
  index time is the median wall time over --runs fresh builds. Per method:
  `flowrag eval --format json`, --runs times; Recall@k from the first run (retrieval is
  deterministic), latency p50/p99 as the median over runs of each run's percentile, nodes and
  edges touched per query as the median over questions.

Writes, per benchmark, one Recall table (methods x graph source) and one latency table.

Usage: bench/retrieval_report.py [--flowrag build/release/tools/flowrag]
           [--methods bm25,dense,...] [--benchmarks 2wiki,...] [--graphs offline,openie]
           [--language english-s|none|english|...]
           [--runs 3] [--out bench/out/retrieval.md]
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
ALL_METHODS = "bm25,dense,hybrid,ppr,semflow,qafd,sa,onehop"


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


def build_store(flowrag, bdir, db, source, index_args=()):
    """Builds one store; returns the wall time in seconds."""
    t0 = time.perf_counter()
    if source == "openie":
        run([flowrag, "index", bdir, "--db", db, "--chunking", "none", "--extractor", "none", "-q",
             *index_args])
        run([flowrag, "import-openie", os.path.join(bdir, "openie.jsonl"), "--db", db, "-q"])
    else:
        run([flowrag, "index", bdir, "--db", db, "--chunking", "none", "-q", *index_args])
    return time.perf_counter() - t0


def evaluate(flowrag, bdir, db, method, k, runs, set_args):
    reports = []
    for _ in range(runs):
        out = run([flowrag, "eval", "--bench", bdir, "--db", db, "--method", method, "--k", k,
                   "--format", "json", "-q", *set_args])
        reports.append(json.loads(out.strip().splitlines()[-1]))
    first = reports[0]
    return {
        "recall": first["recall"],
        "p50": statistics.median(r["latency_ms"]["p50"] for r in reports),
        "p99": statistics.median(r["latency_ms"]["p99"] for r in reports),
        "nodes": first.get("touched_p50", {}).get("nodes", 0),
        "edges": first.get("touched_p50", {}).get("edges", 0),
        "pushes": first.get("touched_p50", {}).get("iterations", 0),
    }


def write_report(path, lines):
    """Writes markdown lines to path (creating its folder) and says so."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


def git_commit():
    res = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--bench-root", default=os.path.join(ROOT, "../shared/data/bench"))
    ap.add_argument("--benchmarks", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--graphs", default="offline,openie",
                    help="graph sources; openie only where openie.jsonl exists")
    ap.add_argument("--methods", default=ALL_METHODS)
    ap.add_argument("--k", default="2,5")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--set", action="append", default=[], help="method option key=value")
    ap.add_argument("--language", default="",
                    help="flowrag index --language (default: the tokeniser's, english-s)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/retrieval.md"))
    args = ap.parse_args()
    if not os.path.isdir(args.bench_root):
        sys.exit(f"no benchmark folder at {args.bench_root} (../shared/data/bench)")

    benches = sorted(d for d in os.listdir(args.bench_root)
                     if os.path.isfile(os.path.join(args.bench_root, d, "corpus.jsonl")))
    if args.benchmarks:
        wanted = args.benchmarks.split(",")
        benches = [b for b in benches if b in wanted]
    methods = args.methods.split(",")
    ks = args.k.split(",")
    graphs = args.graphs.split(",")
    set_args = [a for s in args.set for a in ("--set", s)]

    lines = [
        "# Retrieval quality and latency",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores. flowrag commit: "
        f"`{git_commit()}` (release build).",
        f"Command: `bench/retrieval_report.py --runs {args.runs} --methods {args.methods} "
        f"--graphs {args.graphs}`" + (f" {' '.join(set_args)}" if set_args else "") +
        (f" --language {args.language}" if args.language else "") + ".",
        "Recall@k x100 (passage level; document level for `medical`). Graph `offline` = built-in "
        "hashed embedder + heuristic extractor; `openie` = the benchmark's LLM OpenIE triples "
        "imported into a store indexed with the same embedder. Latency = wall time of one "
        f"Engine::Query, single thread, median over {args.runs} runs of each run's p50/p99; "
        "nodes / edge visits / pushes = median per query of the nodes the method touched, the "
        "edges its solver visited and its pushes (SA: expansions).",
        "",
    ]
    index_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for bench in benches:
            bdir = os.path.join(args.bench_root, bench)
            sources = [g for g in graphs
                       if g == "offline" or os.path.isfile(os.path.join(bdir, "openie.jsonl"))]
            results = {}
            for source in sources:
                times, db = [], None
                for r in range(args.runs):
                    db = os.path.join(tmp, f"{bench}-{source}-{r}.db")
                    if os.path.exists(db):
                        os.remove(db)
                    index_args = ["--language", args.language] if args.language else []
                    times.append(build_store(args.flowrag, bdir, db, source, index_args))
                stats = json.loads(run([args.flowrag, "stats", "--db", db, "--json"]))
                store_bytes = stats["file_bytes"] + stats.get("segments", {}).get("live_bytes", 0)
                index_rows.append((bench, source, stats["passages"], statistics.median(times),
                                   store_bytes / 2**20))
                for method in methods:
                    res = evaluate(args.flowrag, bdir, db, method, args.k, args.runs, set_args)
                    results[(method, source)] = res
                    print(f"{bench:16s} {source:8s} {method:8s} " +
                          " ".join(f"R@{k}={res['recall'][k]:.1f}" for k in ks) +
                          f" p50={res['p50']:.3f}ms p99={res['p99']:.3f}ms "
                          f"nodes={res['nodes']:.0f} edges={res['edges']:.0f}", flush=True)
            lines += [f"## {bench}", "",
                      "| method | " + " | ".join(f"{s} R@{k}" for s in sources for k in ks) + " |",
                      "|---|" + "---|" * (len(ks) * len(sources))]
            for method in methods:
                lines.append(f"| {method} | " + " | ".join(
                    f"{results[(method, s)]['recall'][k]:.1f}" for s in sources for k in ks) + " |")
            lines += ["", "| method | graph | p50 ms | p99 ms | nodes touched | edge visits | pushes |",
                      "|---|---|---|---|---|---|---|"]
            for source in sources:
                for method in methods:
                    r = results[(method, source)]
                    lines.append(f"| {method} | {source} | {r['p50']:.3f} | {r['p99']:.3f} | "
                                 f"{r['nodes']:.0f} | {r['edges']:.0f} | {r['pushes']:.0f} |")
            lines.append("")
            for r in range(args.runs):  # free disk space before the next benchmark
                for source in sources:
                    p = os.path.join(tmp, f"{bench}-{source}-{r}.db")
                    if os.path.exists(p):
                        os.remove(p)
    lines += ["## Index time (built-in embedder)", "",
              "| benchmark | graph | passages | index s (median) | store MiB (file and live segments) |",
              "|---|---|---|---|---|"]
    for bench, source, n, secs, mib in index_rows:
        lines.append(f"| {bench} | {source} | {n} | {secs:.2f} | {mib:.1f} |")
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
