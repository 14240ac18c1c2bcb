#!/usr/bin/env python3
"""Index runs of two corpora started together on one new store against running them one after
the other; writes bench/out/concurrent_index.md.

The scenario of issue 32: `flowrag index A --db s.db & flowrag index B --db s.db & wait`, as
two processes, on a new SQLite store (and with --postgres on a PostgreSQL workspace), --trials
times, the second started --stagger seconds after the first (0: together). Each result is
compared with the store of the serial runs in the order the two runs took the writer lock
(the journal's run ids): every table by value (scale_out.CONTENT: documents, passages,
entities with types, keys, mentions, descriptions, relations, facts and their sources,
synonyms, linked names, extraction state, cached vectors), ids replaced by what they name.
Extraction rows are compared by passage, extractor and status, not by the dictionary
fingerprint they record: a passage of the first corpus extracted after the second corpus
came in records the dictionary of both, the same extraction the serial run's relinking makes.

Also reported: wall time of each concurrent pair against the serial pair (median of trials).

Usage: bench/concurrent_index.py [--flowrag build/release/tools/flowrag]
           [--corpora 2wiki,hotpotqa-train] [--trials 4] [--stagger 0,0.5] [--postgres]
           [--out bench/out/concurrent_index.md]
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from retrieval_report import ROOT, cpu_model, git_commit, write_report
import scale_out

DATA = os.path.join(ROOT, "..", "shared", "data", "bench")


def index_cmd(flowrag, corpus, db):
    return [flowrag, "index", os.path.join(DATA, corpus, "corpus.jsonl"), "--db", db, "-q"]


def run_together(flowrag, corpora, db, stagger):
    """Starts one `flowrag index` per corpus, the i-th stagger·i seconds after the first."""
    t0 = time.perf_counter()
    procs = []
    for i, corpus in enumerate(corpora):
        if i:
            time.sleep(stagger)
        procs.append(subprocess.Popen(index_cmd(flowrag, corpus, db), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {' '.join(p.args)}\n{err[-2000:]}")
    return time.perf_counter() - t0


def run_order(db, pg_base_url, corpora):
    """The corpora in the order their runs began (index_runs ids)."""
    sql = "SELECT sources FROM index_runs ORDER BY id"
    if pg_base_url is None:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        sources = [r[0] for r in conn.execute(sql)]
        conn.close()
    else:
        workspace = db.rsplit("workspace=", 1)[1]
        sources = subprocess.run(
            ["psql", pg_base_url, "-X", "-q", "-A", "-t", "-c",
             f"SET search_path TO \"{workspace}\"", "-c", sql],
            check=True, capture_output=True, text=True).stdout.split("\n")
    order = []
    for s in sources:
        for c in corpora:
            if f"/{c}/" in s:
                order.append(c)
    return tuple(order)


def comparable(content):
    """The content without the dictionary fingerprint of each extraction (see the header)."""
    content = dict(content)
    content["extraction_state"] = sorted(r[:3] for r in content["extraction_state"])
    return content


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build", "release", "tools",
                                                      "flowrag"))
    ap.add_argument("--corpora", default="2wiki,hotpotqa-train")
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--stagger", default="0,0.5")
    ap.add_argument("--postgres", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "concurrent_index.md"))
    args = ap.parse_args()
    corpora = args.corpora.split(",")
    work = tempfile.mkdtemp(prefix="flowrag-concurrent-")
    pg_script = pg_url = None
    if args.postgres:
        pg_script, pg_url = scale_out.pg_server(os.path.join(work, "pg"))
    stores = iter(range(10**6))

    def new_store():
        n = next(stores)
        if pg_url is None:
            return os.path.join(work, f"s{n}.db")
        return scale_out.with_workspace(pg_url, f"w{n}")

    serial, serial_wall = {}, {}

    def serial_store(order):
        if order not in serial:
            db = os.path.join(work, "serial_" + "_".join(order) + ".db")
            t0 = time.perf_counter()
            for c in order:
                subprocess.run(index_cmd(args.flowrag, c, db), check=True,
                               stdout=subprocess.DEVNULL)
            serial_wall[order] = time.perf_counter() - t0
            serial[order] = comparable(scale_out.content(db, None))
        return serial[order]

    rows = []
    try:
        for stagger in [float(s) for s in args.stagger.split(",")]:
            for trial in range(args.trials):
                db = new_store()
                wall = run_together(args.flowrag, corpora, db, stagger)
                order = run_order(db, pg_url, corpora)
                got = comparable(scale_out.content(db, pg_url))
                verdict = scale_out.content_diff(serial_store(order), got,
                                                 ("serial", "concurrent"))
                rows.append((stagger, trial + 1, " then ".join(order), wall, verdict))
                print(f"stagger {stagger} s, trial {trial + 1}: {verdict} ({wall:.1f} s)",
                      flush=True)
    finally:
        if pg_script:
            subprocess.run([pg_script, "stop", os.path.join(work, "pg")], check=False,
                           stdout=subprocess.DEVNULL)
    backend = "PostgreSQL workspace" if pg_url else "SQLite file"
    lines = [
        "# Concurrent index runs against serial runs",
        "",
        f"`bench/concurrent_index.py --corpora {args.corpora} --trials {args.trials} "
        f"--stagger {args.stagger}{' --postgres' if pg_url else ''}`, commit {git_commit()}, "
        f"{cpu_model()}, {os.cpu_count()} cores. Store: a new {backend} per trial; the "
        "reference: SQLite stores of the serial runs in the order the runs took the writer "
        "lock. Compared: every table by value (see the script's header).",
        "",
        "| stagger (s) | trial | lock order | wall (s) | content against the serial store |",
        "| --- | --- | --- | --- | --- |",
    ]
    for stagger, trial, order, wall, verdict in rows:
        lines.append(f"| {stagger:g} | {trial} | {order} | {wall:.1f} | {verdict} |")
    lines += ["", "| serial order | wall (s) |", "| --- | --- |"]
    for order, wall in serial_wall.items():
        lines.append(f"| {' then '.join(order)} | {wall:.1f} |")
    together = [w for s, _, _, w, _ in rows if s == 0]
    if together:
        lines += ["", f"Median wall of the pairs started together: "
                      f"{statistics.median(together):.1f} s."]
    write_report(args.out, lines)
    if any(not r[4].startswith("identical") for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
