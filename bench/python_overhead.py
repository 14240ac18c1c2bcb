#!/usr/bin/env python3
"""What the Python binding costs (issue 24), written to bench/out/python_overhead.md.

1. Per-query overhead of flowrag.Engine.query over the C++ Engine::Query on
   the 2wiki store, methods bm25 and ppr: bench/query_loop (C++) and this
   script (Python) each run a warm-up pass over the 101 questions and then
   --repeat passes; a run's figure is the median over questions of each
   question's median time; each side is run --runs times and the median run
   is reported. Also the Python time minus the retrieval's own
   RetrievalDiagnostics.time_ms.
2. Index time of 2wiki (--chunking none, --extractor heuristic) into a
   fresh store with the built-in hashed embedder and with a Python callable
   (a NumPy hashing embedder, 1024 signed buckets of crc32 word hashes),
   --runs runs each (median), and the time spent inside the callable.

Run without nice on an otherwise idle machine, with the venv python that
has flowrag installed (scripts/test.sh makes build/release/python-venv):
  build/release/python-venv/bin/python bench/python_overhead.py
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

import flowrag

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hashing_embedder(dim=1024):
    """A NumPy hashing embedder: word -> crc32 -> signed bucket."""
    spent = [0.0]

    def embed(texts):
        start = time.perf_counter()
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, text in enumerate(texts):
            hs = np.fromiter((zlib.crc32(w.encode()) for w in re.findall(r"\w+", text.lower())),
                             dtype=np.uint32)
            np.add.at(out[i], hs % dim, np.where((hs >> 20) & 1, 1.0, -1.0))
        spent[0] += time.perf_counter() - start
        return out

    return embed, spent


def questions(bench):
    with open(os.path.join(bench, "questions.jsonl"), encoding="utf-8") as f:
        return [json.loads(line)["question"] for line in f if line.strip()]


def python_query_run(db, qs, method, repeat):
    with flowrag.Engine(db, read_only=True) as eng:
        wall = [[] for _ in qs]
        own = [[] for _ in qs]
        for p in range(-1, repeat):
            for i, q in enumerate(qs):
                start = time.perf_counter()
                r = eng.query(q, method=method, top_k=5)
                ms = (time.perf_counter() - start) * 1000
                if p >= 0:
                    wall[i].append(ms)
                    own[i].append(r.diagnostics.time_ms)
    per_q = [statistics.median(w) for w in wall]
    per_own = [statistics.median(o) for o in own]
    return {"p50_ms": statistics.median(per_q), "per_question_ms": per_q,
            "retrieval_ms": per_own}


def cpp_query_run(loop, db, bench, method, repeat):
    out = subprocess.run([loop, db, bench, method, str(repeat)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def median_run(runs):
    return sorted(runs, key=lambda r: r["p50_ms"])[len(runs) // 2]


def query_overhead(args, qs):
    rows = []
    for method in ("bm25", "ppr"):
        cpp = [cpp_query_run(args.query_loop, args.db, args.bench, method, args.repeat)
               for _ in range(args.runs)]
        py = [python_query_run(args.db, qs, method, args.repeat) for _ in range(args.runs)]
        c, p = median_run(cpp), median_run(py)
        paired = statistics.median(a - b for a, b in zip(p["per_question_ms"],
                                                            c["per_question_ms"]))
        beyond_retrieval = statistics.median(
            a - b for a, b in zip(p["per_question_ms"], p["retrieval_ms"]))
        rows.append({"method": method, "cpp_p50_ms": c["p50_ms"], "python_p50_ms": p["p50_ms"],
                     "overhead_p50_ms": p["p50_ms"] - c["p50_ms"],
                     "overhead_paired_p50_ms": paired,
                     "python_minus_retrieval_p50_ms": beyond_retrieval,
                     "cpp_runs_p50_ms": [r["p50_ms"] for r in cpp],
                     "python_runs_p50_ms": [r["p50_ms"] for r in py]})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def index_once(bench, embedder):
    with tempfile.TemporaryDirectory() as d:
        with flowrag.Engine(os.path.join(d, "s.db"), embedder=embedder) as eng:
            start = time.perf_counter()
            r = eng.index([bench], chunking="none", extractor="heuristic")
            total = time.perf_counter() - start
        return {"seconds": total, "embed_seconds": r.embed_seconds,
                "graph_seconds": r.graph_seconds, "extract_seconds": r.extract_seconds,
                "passages_embedded": r.passages_embedded,
                "graph_texts_embedded": r.graph_texts_embedded}


def random_embedder(dim):
    """Random dense vectors: the graph phase's cost at full density."""
    rng = np.random.default_rng(0)
    return lambda texts: rng.standard_normal((len(texts), dim), dtype=np.float32)


def random_dims(args):
    """--random-dims: one index run per width with random dense vectors."""
    for dim in args.random_dims:
        run = index_once(args.bench, flowrag.python_embedder(random_embedder(dim),
                                                             name=f"random-{dim}"))
        print(json.dumps({"random_dense_dim": dim, **run}), flush=True)


def index_times(args):
    rows = []
    for label in ("built-in (hash)", "Python callable (NumPy hashing)"):
        runs = []
        for _ in range(args.runs):
            if label.startswith("built-in"):
                runs.append(index_once(args.bench, None))
            else:
                fn, spent = hashing_embedder()
                run = index_once(args.bench, flowrag.python_embedder(fn, name="numpy-hash-1024"))
                run["in_callable_seconds"] = spent[0]
                runs.append(run)
        med = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
        rows.append({"embedder": label, "median": med, "runs_seconds": [r["seconds"] for r in runs]})
        print(json.dumps(rows[-1]), flush=True)
    return rows


NOTE = (
    "Passages go through the callable in the embed phase (\"embed passages\": the same work "
    "as the built-in embedder's, plus the calls into Python). The built-in embedder is local: "
    "graph texts (entity names, descriptions, facts, relations) are embedded when the snapshot "
    "is built, into sparse rows, and not stored. A Python embedder is not local (as the "
    "OpenAI-compatible client): in the graph phase every graph text goes through the callable "
    "(\"in the callable\" is the time inside it, passages and graph texts), its vectors are "
    "written to the embedding cache, and SYNONYM edges come from an exact k-nearest-neighbour "
    "search over the entity-name vectors. That phase is most of the difference, and it grows "
    "with the vectors' density: with a callable returning random dense vectors "
    "(`--random-dims 1024,64`) it took 394 s at 1024 dimensions and 28 s at 64, against "
    "about 40 s for these sparse hashed ones.")


def write_markdown(path, args, query_rows, index_rows):
    lines = ["# Python binding overhead (issue 24)", "",
             f"Generated by `bench/python_overhead.py` (runs={args.runs}, repeat={args.repeat}) "
             f"on {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end; "
             f"store {args.db} (`flowrag index {args.bench} --chunking none --extractor "
             "heuristic`), top_k 5.", "",
             "## Per-query time, C++ Engine::Query vs flowrag.Engine.query (ms, p50 over the "
             "101 questions, median of the runs)", "",
             "| method | C++ | Python | overhead | overhead, per question paired | "
             "Python − retrieval's own time_ms | C++ runs | Python runs |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in query_rows:
        lines.append(f"| {r['method']} | {r['cpp_p50_ms']:.4f} | {r['python_p50_ms']:.4f} | "
                     f"{r['overhead_p50_ms']:.4f} | {r['overhead_paired_p50_ms']:.4f} | "
                     f"{r['python_minus_retrieval_p50_ms']:.4f} | "
                     f"{', '.join(f'{x:.4f}' for x in r['cpp_runs_p50_ms'])} | "
                     f"{', '.join(f'{x:.4f}' for x in r['python_runs_p50_ms'])} |")
    lines += ["", "## Index time of 2wiki (s, median of the runs)", "",
              "| embedder | total | embed passages | extract | graph texts + synonyms | "
              "in the callable | passages embedded | graph texts embedded | runs |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in index_rows:
        m = r["median"]
        inside = f"{m['in_callable_seconds']:.2f}" if "in_callable_seconds" in m else "-"
        lines.append(f"| {r['embedder']} | {m['seconds']:.2f} | {m['embed_seconds']:.2f} | "
                     f"{m['extract_seconds']:.2f} | {m['graph_seconds']:.2f} | {inside} | "
                     f"{m['passages_embedded']} | {m['graph_texts_embedded']} | "
                     f"{', '.join(f'{x:.2f}' for x in r['runs_seconds'])} |")
    lines += ["", NOTE, ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", default="/tmp/2wiki.db")
    ap.add_argument("--bench", default=os.path.join(REPO, "..", "shared", "data", "bench",
                                                    "2wiki"))
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-index", action="store_true")
    ap.add_argument("--random-dims", type=lambda v: [int(x) for x in v.split(",")], default=[],
                    help="only index once per width (e.g. 1024,64) with random dense vectors "
                         "and print the phases (the note under the index table)")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "out", "python_overhead.md"))
    args = ap.parse_args()
    args.bench = os.path.abspath(args.bench)
    args.query_loop = os.path.join(args.build, "bench", "query_loop")
    if not os.path.exists(args.db):
        subprocess.run([os.path.join(args.build, "tools", "flowrag"), "index", args.bench,
                        "--db", args.db, "--chunking", "none", "--extractor", "heuristic", "-q"],
                       check=True)
    if args.random_dims:
        random_dims(args)
        return
    query_rows = query_overhead(args, questions(args.bench))
    index_rows = [] if args.skip_index else index_times(args)
    write_markdown(args.out, args, query_rows, index_rows)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
