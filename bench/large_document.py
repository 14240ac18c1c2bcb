#!/usr/bin/env python3
"""Indexing time and peak memory of one large document; writes bench/out/large_document.md.

Per size (MiB): one JSONL document of ordinary English sentences (a fixed vocabulary, a
seeded generator, so every run indexes the same text) is indexed into a fresh store with
`flowrag index <file> --db <fresh> --extractor <x> -q`; wall time and peak resident memory
(ru_maxrss of the child) are the median of --runs. Indexing is linear in the corpus when the
seconds per MiB stay flat across sizes (issue 21: 1 / 2 / 4 MiB took 1.5 / 16 / 61 s).

Usage: bench/large_document.py [--flowrag build/release/tools/flowrag] [--sizes 1,4,16]
           [--extractor none] [--runs 3] [--out bench/out/large_document.md]
"""
import argparse
import json
import os
import platform
import random
import statistics
import tempfile

from graph_report import timed
from retrieval_report import ROOT, cpu_model, git_commit, write_report

WORDS = ("river bridge town mountain lake forest engine harbour castle market school garden "
         "valley island museum railway station library theatre painter writer composer king "
         "queen bishop general merchant sailor farmer built crossed painted founded wrote "
         "visited ruled near after before during with across the old new northern").split()


def write_document(path, mib, seed=1):
    rng = random.Random(seed)
    target = mib * 1024 * 1024
    parts, size = [], 0
    while size < target:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + ". "
        parts.append(sentence)
        size += len(sentence)
    with open(path, "w") as f:
        f.write(json.dumps({"id": f"big{mib}", "title": f"Big {mib}",
                            "text": "".join(parts)[:target]}) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--extractor", default="none")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/large_document.md"))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mib in (int(s) for s in args.sizes.split(",")):
            doc = os.path.join(tmp, f"big{mib}.jsonl")
            write_document(doc, mib)
            walls, peaks = [], []
            for run in range(args.runs):
                db = os.path.join(tmp, f"s{mib}-{run}.db")
                wall, peak = timed([args.flowrag, "index", doc, "--db", db, "--extractor",
                                    args.extractor, "-q"])
                walls.append(wall)
                peaks.append(peak)
            wall = statistics.median(walls)
            rows.append(f"| {mib} | {wall:.2f} | {wall / mib:.2f} | {statistics.median(peaks):.0f} |")
            print(rows[-1], flush=True)
    write_report(args.out, [
        "# Indexing one large document",
        "",
        f"Machine: {os.cpu_count()} cores, {cpu_model()}, {platform.system()}; commit "
        f"{git_commit()}; extractor `{args.extractor}`; median of {args.runs} runs.",
        "",
        "```",
        f"bench/large_document.py --sizes {args.sizes} --extractor {args.extractor} "
        f"--runs {args.runs}",
        "```",
        "",
        "| MiB | index s | s per MiB | peak RSS MiB |",
        "|---|---|---|---|",
        *rows,
    ])


if __name__ == "__main__":
    main()
