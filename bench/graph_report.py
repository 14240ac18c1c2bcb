#!/usr/bin/env python3
"""Builds the knowledge graph of every benchmark and writes one markdown report.

For each benchmark folder in ../shared/data/bench:
  * the offline graph: `flowrag index` (built-in embedder, heuristic extractor,
    chunking none) into a fresh store, --runs times: median wall time, peak RSS
    (from /proc via os.wait4), store bytes, nodes and edges per kind;
  * where the folder ships openie.jsonl: the same for `index --extractor none`
    followed by `import-openie` (the LLM OpenIE graph).

Usage: bench/graph_report.py [--flowrag build/release/tools/flowrag] [--runs 3]
           [--out bench/out/graph.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE_KINDS = ["Passage", "Entity", "EntityDescription", "Fact"]
EDGE_KINDS = ["MENTIONS", "RELATED_TO", "DESCRIBES", "SYNONYM"]


def timed(cmd):
    """Runs cmd; returns (wall seconds, peak RSS in MiB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024.0


def build(flowrag, bench_dir, db, openie):
    steps = []
    if openie:
        steps.append([flowrag, "index", bench_dir, "--db", db, "--chunking", "none",
                      "--extractor", "none", "-q"])
        steps.append([flowrag, "import-openie", os.path.join(bench_dir, "openie.jsonl"),
                      "--db", db, "-q"])
    else:
        steps.append([flowrag, "index", bench_dir, "--db", db, "--chunking", "none",
                      "--extractor", "heuristic", "-q"])
    wall, peak = 0.0, 0.0
    for cmd in steps:
        w, p = timed(cmd)
        wall += w
        peak = max(peak, p)
    return wall, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--bench-root", default=os.path.join(ROOT, "../shared/data/bench"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/graph.md"))
    args = ap.parse_args()
    benches = sorted(d for d in os.listdir(args.bench_root)
                     if os.path.isfile(os.path.join(args.bench_root, d, "corpus.jsonl")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for bench in benches:
            bdir = os.path.join(args.bench_root, bench)
            sources = ["offline"]
            if os.path.isfile(os.path.join(bdir, "openie.jsonl")):
                sources.append("openie")
            for source in sources:
                walls, peaks, db = [], [], None
                for r in range(args.runs):
                    db = os.path.join(tmp, f"{bench}-{source}-{r}.db")
                    w, p = build(args.flowrag, bdir, db, source == "openie")
                    walls.append(w)
                    peaks.append(p)
                stats = json.loads(subprocess.run([args.flowrag, "stats", "--db", db, "--json"],
                                                  capture_output=True, text=True, check=True).stdout)
                g = stats["graph"]
                row = {"bench": bench, "source": source, "seconds": statistics.median(walls),
                       "peak_mib": statistics.median(peaks), "mib": stats["file_bytes"] / 2**20,
                       "nodes": g["nodes"], "edges": g["edges"],
                       "isolated": g["isolated_ratio"], "avg_degree": g["average_degree"],
                       "graph_mib": g["memory_bytes"] / 2**20}
                rows.append(row)
                print(f"{bench:16s} {source:8s} {row['seconds']:.2f} s, peak {row['peak_mib']:.0f} "
                      f"MiB, store {row['mib']:.1f} MiB, nodes {g['nodes']}, edges {g['edges']}",
                      flush=True)
    lines = [
        "# Knowledge graph build",
        "",
        f"Machine: {os.cpu_count()} cores. Command: `bench/graph_report.py --runs {args.runs}`. "
        "Time and peak RSS: median over runs of a fresh build (offline: `flowrag index` with the "
        "built-in embedder and heuristic extractor, ingestion and passage embedding included; "
        "openie: `index --extractor none` + `import-openie`). Store = SQLite file size; graph = "
        "in-memory snapshot graph.",
        "",
        "| benchmark | graph | s | peak MiB | store MiB | graph MiB | " +
        " | ".join(NODE_KINDS) + " | " + " | ".join(EDGE_KINDS) + " | isolated % | avg degree |",
        "|---|---|---|---|---|---|" + "---|" * (len(NODE_KINDS) + len(EDGE_KINDS) + 2),
    ]
    for r in rows:
        lines.append(f"| {r['bench']} | {r['source']} | {r['seconds']:.2f} | {r['peak_mib']:.0f} | "
                     f"{r['mib']:.1f} | {r['graph_mib']:.1f} | " +
                     " | ".join(str(r["nodes"].get(k, 0)) for k in NODE_KINDS) + " | " +
                     " | ".join(str(r["edges"].get(k, 0)) for k in EDGE_KINDS) +
                     f" | {100 * r['isolated']:.1f} | {r['avg_degree']:.2f} |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
