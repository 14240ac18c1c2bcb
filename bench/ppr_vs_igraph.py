#!/usr/bin/env python3
"""flowrag's PPR solvers against python-igraph on the same graph and reset vectors.

Runs bench/ppr_export (built with the bench targets) on a store holding a
benchmark's offline graph: it writes the HippoRAG 2 PPR graph (passages +
entities, undirected, weighted as retrieval/ppr_retriever.h) and the `ppr`
retriever's reset vector for the first --limit questions, and with --solve
solves each with flowrag's local push and power iteration (median of --runs).
This script loads the graph into igraph and runs
`personalized_pagerank(damping=0.5, reset=..., weights='weight', directed=False,
implementation='prpack')` --runs times per question, then reports wall time
(median) of each solver and agreement of the top-10 passages.

Usage: bench/ppr_vs_igraph.py [--db ~/.cache/flowrag/2wiki-none.db]
           [--bench ../shared/data/bench/2wiki] [--export build/release/bench/ppr_export]
           [--limit 20] [--runs 5]
The store is made by `flowrag eval --bench ../shared/data/bench/2wiki ...`
(or `flowrag index`). Exits 0 with a message when python-igraph is missing
(`apt-get install python3-igraph`, then run with /usr/bin/python3).
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", default=os.path.expanduser("~/.cache/flowrag/2wiki-none.db"))
    ap.add_argument("--bench", default=os.path.join(ROOT, "..", "shared", "data", "bench", "2wiki"))
    ap.add_argument("--export", default=os.path.join(ROOT, "build", "release", "bench", "ppr_export"))
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--epsilon", default="3e-6", help="push threshold (the ppr retriever's default)")
    args = ap.parse_args()

    try:
        import igraph
    except ImportError:
        print("python-igraph is not installed for this interpreter "
              f"({sys.executable}); install python3-igraph (Debian) and run with "
              "/usr/bin/python3. Skipping the comparison.")
        return 0
    if not os.path.exists(args.export):
        print(f"{args.export} not found: build the bench targets (FLOWRAG_BUILD_BENCH=ON). Skipping.")
        return 0
    if not os.path.exists(args.db):
        print(f"{args.db} not found: run `flowrag eval --bench {args.bench} --method ppr` first. Skipping.")
        return 0

    with tempfile.TemporaryDirectory() as out:
        cmd = [args.export, "--db", args.db, "--questions", os.path.join(args.bench, "questions.jsonl"),
               "--out", out, "--limit", str(args.limit), "--runs", str(args.runs),
               "--epsilon", args.epsilon, "--solve"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"failed: {' '.join(cmd)}\n{res.stderr}")
        with open(os.path.join(out, "graph.tsv")) as f:
            n, num_passages = map(int, f.readline().split())
            edges, weights = [], []
            for line in f:
                u, v, w = line.split()
                edges.append((int(u), int(v)))
                weights.append(float(w))
        t0 = time.perf_counter()
        g = igraph.Graph(n=n, edges=edges, directed=False)
        g.es["weight"] = weights
        load_s = time.perf_counter() - t0
        timings = json.load(open(os.path.join(out, "timings.json")))

        rows = []
        for t in timings:
            i = t["question"]
            reset = [0.0] * n
            with open(os.path.join(out, f"reset_{i}.tsv")) as f:
                for line in f:
                    node, w = line.split()
                    reset[int(node)] = float(w)
            ig_ms = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                pr = g.personalized_pagerank(damping=0.5, reset=reset, weights="weight",
                                             directed=False, implementation="prpack")
                ig_ms.append((time.perf_counter() - t0) * 1000)
            push, power = {}, {}
            with open(os.path.join(out, f"flowrag_{i}.tsv")) as f:
                for line in f:
                    p, a, b = line.split()
                    push[int(p)] = float(a)
                    power[int(p)] = float(b)
            ig = {p: pr[p] for p in range(num_passages)}

            def top(d, k=10):
                return [p for p, _ in sorted(d.items(), key=lambda x: (-x[1], x[0]))[:k]]

            ig_top = top(ig)
            rows.append({
                "igraph_ms": statistics.median(ig_ms),
                "push_ms": t["push_ms"],
                "power_ms": t["power_ms"],
                "push_top10": len(set(top(push)) & set(ig_top)) / 10,
                "power_top10": len(set(top(power)) & set(ig_top)) / 10,
                "push_same_order": top(push) == ig_top,
                "power_max_abs": max(abs(power[p] - ig[p]) for p in ig),
                "push_max_abs": max(abs(push[p] - ig[p]) for p in ig),
                "pushes": t["pushes"],
                "push_edges": t["push_edges"],
            })

    def med(key):
        return statistics.median(r[key] for r in rows)

    print(f"graph: {n} nodes ({num_passages} passages), {len(edges)} undirected edges; "
          f"igraph load {load_s:.2f} s; {len(rows)} questions, median of {args.runs} runs each")
    print("| solver | median ms / query | top-10 overlap with igraph | max |score − igraph| |")
    print("|---|---|---|---|")
    print(f"| igraph personalized_pagerank (PRPACK) | {med('igraph_ms'):.3f} | 1.000 | 0 |")
    print(f"| flowrag power iteration (tol 1e-10) | {med('power_ms'):.3f} | "
          f"{statistics.mean(r['power_top10'] for r in rows):.3f} | {max(r['power_max_abs'] for r in rows):.2e} |")
    print(f"| flowrag local push (eps {args.epsilon}) | {med('push_ms'):.3f} | "
          f"{statistics.mean(r['push_top10'] for r in rows):.3f} | {max(r['push_max_abs'] for r in rows):.2e} |")
    print(f"push: median {med('pushes'):.0f} pushes, {med('push_edges'):.0f} edge visits; "
          f"identical top-10 order on {sum(r['push_same_order'] for r in rows)}/{len(rows)} questions")
    ratios = [r["igraph_ms"] / r["push_ms"] for r in rows if r["push_ms"] > 0]
    print(f"speed ratio igraph / push: median {statistics.median(ratios):.0f}x "
          f"(per question min {min(ratios):.0f}x); mean top-10 overlap "
          f"{statistics.mean(r['push_top10'] for r in rows):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
