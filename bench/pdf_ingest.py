#!/usr/bin/env python3
"""PDF ingestion speed of `flowrag index`; writes bench/out/pdf_ingest.md.

Generates a PDF of --pages pages (bench/pdf_pages.py: --lines lines of
prose per page; once hand-written with Helvetica, once through cairo with an
embedded font and compressed streams), then indexes each into a fresh store --runs times with each
extractor (`--extractor none`, and the default `auto`, which is the offline
heuristic extractor without a chat model) and reports the median wall time
of the whole `flowrag index` process, pages per second by that time, and the
median of the ingest phase it reports (PDF text extraction, chunking, the
store's write), on its stderr line "indexed: ... (ingest X s, embed Y s)".

Usage: bench/pdf_ingest.py [--flowrag build/release/tools/flowrag] [--pages 300]
           [--lines 40] [--runs 3] [--nice 19] [--out bench/out/pdf_ingest.md]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pdf_pages  # noqa: E402
from retrieval_report import ROOT, cpu_model, git_commit, write_report  # noqa: E402

INDEXED = re.compile(r"indexed: .*; ([\d.]+) s \(ingest ([\d.]+) s, embed ([\d.]+) s\)")


def index_once(flowrag, pdf, extractor, work, nice):
    db = os.path.join(work, "store.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    cmd = ["nice", "-n", str(nice)] if nice else []
    cmd += [flowrag, "index", pdf, "--db", db]
    if extractor != "auto":
        cmd += ["--extractor", extractor]
    start = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if res.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{res.stderr}")
    m = INDEXED.search(res.stderr)
    if not m:
        sys.exit(f"no 'indexed:' line in the output of {' '.join(cmd)}:\n{res.stderr}")
    return wall, float(m.group(2)), " ".join(cmd).replace(work, "$TMP")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--lines", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--nice", type=int, default=19)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/pdf_ingest.md"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="flowrag-pdf-bench-") as work:
        rows = []
        sizes = {}
        for producer in ("plain", "cairo"):
            pdf = os.path.join(work, f"survey-{producer}.pdf")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench/pdf_pages.py"), pdf,
                            "--pages", str(args.pages), "--lines", str(args.lines),
                            "--producer", producer], check=True)
            sizes[producer] = os.path.getsize(pdf)
            for extractor in ("none", "auto"):
                walls, ingests = [], []
                for _ in range(args.runs):
                    wall, ingest, cmd = index_once(args.flowrag, pdf, extractor, work, args.nice)
                    walls.append(wall)
                    ingests.append(ingest)
                wall = statistics.median(walls)
                ingest = statistics.median(ingests)
                rows.append((producer, extractor, wall, ingest, walls, cmd))
                print(f"{producer} --extractor {extractor}: median {wall:.2f} s wall = "
                      f"{args.pages / wall:.0f} pages/s; ingest phase {ingest:.2f} s = "
                      f"{args.pages / ingest:.0f} pages/s (runs: {', '.join(f'{w:.2f}' for w in walls)})")

    lines = [
        "# PDF ingestion speed",
        "",
        f"`bench/pdf_ingest.py --pages {args.pages} --lines {args.lines} --runs {args.runs}` "
        f"(commit {git_commit()}; {cpu_model()}, 2 cores shared with other engineers' builds; "
        f"run under `nice -n {args.nice}`, so figures vary with the machine's load).",
        "",
        f"Input: one PDF of {args.pages} pages written by `bench/pdf_pages.py`, "
        f"{args.lines} lines (about {args.lines * 10} words) of generated prose per page, in two "
        f"forms: `plain` (hand-written, Helvetica, uncompressed; {sizes['plain'] / 1024:.0f} KiB) "
        f"and `cairo` (cairo's PDF surface: embedded DejaVu Sans subset, compressed streams; "
        f"{sizes['cairo'] / 1024:.0f} KiB). Each run indexes it into a fresh SQLite store with the "
        "default chunking (500-word windows, 200 overlap) and the built-in embedder. "
        "**Wall**: the whole `flowrag index` process (PDF text, chunking, store, embedding, "
        "extraction, snapshot). **Ingest**: the phase `flowrag index` reports as ingest "
        "(reading the PDF with poppler, chunking, writing the store). Medians of "
        f"{args.runs} runs.",
        "",
        "| PDF | extractor | wall (s) | pages/s (wall) | ingest (s) | pages/s (ingest) | runs (wall, s) |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for producer, extractor, wall, ingest, walls, _ in rows:
        name = "`none`" if extractor == "none" else "default (`auto` = heuristic offline)"
        lines.append(f"| {producer} | {name} | {wall:.2f} | {args.pages / wall:.0f} | {ingest:.2f} | "
                     f"{args.pages / ingest:.0f} | {', '.join(f'{w:.2f}' for w in walls)} |")
    lines += ["", "Commands (per run, on a fresh store; `$TMP` is a scratch directory):", "", "```sh",
              f"bench/pdf_pages.py $TMP/survey-plain.pdf --pages {args.pages} --lines {args.lines}",
              f"bench/pdf_pages.py $TMP/survey-cairo.pdf --pages {args.pages} --lines {args.lines} "
              "--producer cairo"]
    lines += [r[5] for r in rows]
    lines += ["```"]
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
