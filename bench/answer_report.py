#!/usr/bin/env python3
"""EM/F1 of the answer pipelines with every retriever on every benchmark; one markdown report.

For each benchmark folder in ../shared/data/bench (or --bench-root) the offline store is built
as bench/retrieval_report.py builds it (built-in embedder, heuristic extractor, chunking none),
or reused from --store-dir when present. Then, per method and pipeline:
  flowrag eval --bench DIR --db STORE --method M --answers --pipeline P --format json
Answers are deterministic (offline extractive answerer unless a chat model is configured), so
one run per cell. Also reports R@5 of the evidence the answer used and the answer latency p50,
whether cot's EM is at least single's in every row, and the demo: the 12 questions of
examples/demo_questions.jsonl asked with `flowrag ask` on examples/demo (default chunking),
counted right by exact match.

Usage: bench/answer_report.py [--flowrag build/release/tools/flowrag] [--methods ...]
           [--benchmarks 2wiki,...] [--pipelines single,cot] [--store-dir /tmp/db]
           [--no-demo] [--out bench/out/answers.md]
"""
import argparse
import json
import os
import re
import string
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from retrieval_report import (ALL_METHODS, ROOT, build_store, cpu_model, git_commit,  # noqa: E402
                              run, write_report)

DEMO_QUESTIONS = os.path.join(ROOT, "examples/demo_questions.jsonl")


def normalize(s):
    """SQuAD/HotpotQA answer normalisation (flowrag's NormalizeAnswer)."""
    s = "".join(c for c in s.lower() if c not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def demo_section(flowrag, store_dir, methods, pipelines):
    """The demo questions answered right, per method and pipeline, and the misses."""
    db = os.path.join(store_dir, "demo.db")
    if not os.path.exists(db):
        run([flowrag, "index", os.path.join(ROOT, "examples/demo"), "--db", db, "-q"])
    with open(DEMO_QUESTIONS) as f:
        questions = [json.loads(line) for line in f if line.strip()]
    lines = ["", "## demo (examples/demo, 12 questions, `flowrag ask`)", "",
             "| method | " + " | ".join(f"{p} right" for p in pipelines) + " | missed |",
             "|---|" + "---|" * (len(pipelines) + 1)]
    for method in methods:
        cells, missed = [], []
        for pipeline in pipelines:
            out = run([flowrag, "ask", "--db", db, "--method", method, "--pipeline", pipeline,
                       "--questions", DEMO_QUESTIONS])
            answers = [json.loads(line) for line in out.splitlines() if line.strip()]
            right = 0
            for q, a in zip(questions, answers):
                if normalize(a.get("answer", "")) in {normalize(g) for g in q["answers"]}:
                    right += 1
                else:
                    missed.append(f"{pipeline} {q['id']}")
            cells.append(f"{right}/{len(questions)}")
            print(f"{'demo':16} {method:8} {pipeline:9} {right}/{len(questions)}", flush=True)
        lines.append(f"| {method} | " + " | ".join(cells) + f" | {', '.join(missed) or '-'} |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--bench-root", default=os.path.join(ROOT, "../shared/data/bench"))
    ap.add_argument("--benchmarks", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--methods", default=ALL_METHODS)
    ap.add_argument("--pipelines", default="single,cot")
    ap.add_argument("--store-dir", default="/tmp/db")
    ap.add_argument("--no-demo", action="store_true", help="skip the demo questions")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/answers.md"))
    args = ap.parse_args()

    benches = sorted(d for d in os.listdir(args.bench_root)
                     if os.path.isfile(os.path.join(args.bench_root, d, "questions.jsonl")))
    if args.benchmarks:
        benches = [b for b in benches if b in args.benchmarks.split(",")]
    methods = args.methods.split(",")
    pipelines = args.pipelines.split(",")
    os.makedirs(args.store_dir, exist_ok=True)
    lines = [
        "# Answer quality (EM / F1)",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores. flowrag commit: `{git_commit()}`.",
        f"Command: `bench/answer_report.py --methods {args.methods} --pipelines {args.pipelines}`.",
        "Offline extractive answerer (no chat model), offline graph. EM/F1 x100 with SQuAD/HotpotQA "
        "normalisation, best over the gold answers. R@5: recall of the answer's evidence (for cot: "
        "the first round's passages first, then later rounds'). p50: answer latency in ms.",
    ]
    if not args.no_demo:
        lines += demo_section(args.flowrag, args.store_dir, methods, pipelines)
    worse = []  # rows where a later pipeline's EM is below the first's
    for bench in benches:
        bdir = os.path.join(args.bench_root, bench)
        db = os.path.join(args.store_dir, bench + ".db")
        if not os.path.exists(db):
            build_store(args.flowrag, bdir, db, "offline")
        header = "| method | " + " | ".join(f"{p} EM | {p} F1 | {p} R@5 | {p} p50" for p in pipelines) + " |"
        lines += ["", f"## {bench}", "", header, "|---|" + "---|" * (4 * len(pipelines))]
        for method in methods:
            cells, ems = [], []
            for pipeline in pipelines:
                out = run([args.flowrag, "eval", "--bench", bdir, "--db", db, "--method", method,
                           "--k", "5", "--answers", "--pipeline", pipeline, "--format", "json", "-q"])
                r = json.loads(out.strip().splitlines()[-1])
                ems.append(r["em"])
                cells += [f"{r['em']:.1f}", f"{r['f1']:.1f}", f"{r['recall']['5'] * 1:.1f}",
                          f"{r['latency_ms']['p50']:.2f}"]
                print(f"{bench:16} {method:8} {pipeline:9} EM={r['em']:.1f} F1={r['f1']:.1f}",
                      flush=True)
            worse += [f"{bench} {method} {p}" for p, em in zip(pipelines[1:], ems[1:]) if em < ems[0]]
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
    if len(pipelines) > 1:
        lines += ["", f"EM of {', '.join(pipelines[1:])} at least {pipelines[0]}'s in every row: "
                  + ("yes." if not worse else "no: " + "; ".join(worse) + ".")]
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
