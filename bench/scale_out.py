#!/usr/bin/env python3
"""Indexing into PostgreSQL with parallel workers against SQLite; writes bench/out/scale_out.md.

For one benchmark corpus (default 2wiki):
  * index it into a SQLite file, then into PostgreSQL workspaces with --workers 1, 2 and 3
    in one process, and with --processes concurrent `flowrag index` processes of one worker
    each, each --runs times into a fresh store; median wall time and peak RSS of each
    configuration (the processes' largest);
  * check that every PostgreSQL store holds the same documents, passages, nodes and edges
    (by kind) as the SQLite store (`flowrag stats --json`), and the same stored content:
    every row of the store's tables by value, ids replaced by what they name (a document
    by its external id, a passage by document and ordinal, an entity by name and type, a
    fact by its triple), compared as sorted lists (SQLite through Python's sqlite3,
    PostgreSQL through psql);
  * time a cold `flowrag query --method bm25` (open, load the persisted snapshot, one query)
    on the SQLite store and on one PostgreSQL store, median of --runs;
  * peak RSS of `flowrag serve` on each after one query.

It starts its own PostgreSQL server (scripts/pg_test_server.sh, fsync off, Unix socket) in
a temporary directory and stops it at the end.

Usage: bench/scale_out.py [--flowrag build/release/tools/flowrag] [--bench 2wiki]
           [--workers 1,2,3] [--processes 2] [--runs 3] [--out bench/out/scale_out.md]
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from graph_report import timed
from retrieval_report import ROOT, cpu_model, git_commit, write_report

QUESTION = "Who was born first, Kurt Weill or Leonard Bernstein?"
COMPARED = ("documents", "passages")


def pg_server(directory):
    script = os.path.join(ROOT, "scripts", "pg_test_server.sh")
    subprocess.run([script, "start", directory], check=True, stdout=subprocess.DEVNULL)
    url = subprocess.run([script, "url", directory], check=True, capture_output=True,
                         text=True).stdout.strip()
    return script, url


def with_workspace(url, name):
    return url + ("&" if "?" in url else "?") + "workspace=" + name


def index_cmd(flowrag, corpus, db, workers):
    return [flowrag, "index", corpus, "--db", db, "--chunking", "none", "--extractor",
            "heuristic", "--workers", str(workers), "-q"]


def median_of(samples):
    """(median wall, median peak RSS) of (wall, peak) samples."""
    return (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples))


def concurrent_index(cmds):
    """Runs cmds at once; returns (wall seconds, largest peak RSS in MiB)."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for c in cmds]
    peak = 0.0
    for p in procs:
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"failed: {' '.join(p.args)}\n{p.stderr.read()}")
        peak = max(peak, usage.ru_maxrss / 1024.0)
    return time.perf_counter() - t0, peak


def counts(flowrag, db):
    out = subprocess.run([flowrag, "stats", "--db", db, "--json"], check=True,
                         capture_output=True, text=True).stdout
    stats = json.loads(out)
    c = {k: stats[k] for k in COMPARED}
    c.update({"nodes." + k: v for k, v in stats["graph"]["nodes"].items()})
    c.update({"edges." + k: v for k, v in stats["graph"]["edges"].items()})
    return c


# The store's rows by value (ids replaced by what they name), one query per table, in the
# SQL both backends speak. The embedding vector is compared by its hex text.
PASSAGE = "(SELECT d.external_id || '#' || p.ordinal FROM passages p JOIN documents d ON " \
          "d.id = p.document_id WHERE p.id = {})"
ENTITY = "(SELECT e.name || '|' || e.type FROM entities e WHERE e.id = {})"
FACT = ("(SELECT " + ENTITY.format("f.subject_id") + " || ' ' || r.text || ' ' || " +
        ENTITY.format("f.object_id") + " FROM facts f JOIN relations r ON r.id = f.relation_id "
        "WHERE f.id = {})")
CONTENT = {
    "documents": "SELECT external_id, title, source, content_hash, chunking, text FROM documents",
    "passages": "SELECT " + PASSAGE.format("p0.id") + ", begin_offset, end_offset, embed_hash "
                "FROM passages p0",
    "entities": "SELECT name, type, synonyms_done FROM entities",
    "entity_keys": "SELECT key, " + PASSAGE.format("k.passage_id") + ", " +
                   ENTITY.format("k.entity_id") + ", surface FROM entity_keys k",
    "mentions": "SELECT " + PASSAGE.format("m.passage_id") + ", " + ENTITY.format("m.entity_id") +
                ", surface, type, count, defining FROM mentions m",
    "descriptions": "SELECT " + ENTITY.format("x.entity_id") + ", " +
                    PASSAGE.format("x.passage_id") + ", text FROM descriptions x",
    "relations": "SELECT text FROM relations",
    "facts": "SELECT " + FACT.format("f0.id") + " FROM facts f0",
    "fact_sources": "SELECT " + FACT.format("s.fact_id") + ", " + PASSAGE.format("s.passage_id") +
                    " FROM fact_sources s",
    "synonyms": "SELECT " + ENTITY.format("a") + ", " + ENTITY.format("b") +
                ", similarity FROM synonyms",
    "linked_names": "SELECT key FROM linked_names",
    "extraction_state": "SELECT " + PASSAGE.format("passage_id") + ", extractor, status, detail "
                        "FROM extraction_state",
    "embeddings": "SELECT model, text_hash, dim, {hex} FROM embeddings",
}


def normalise(v):
    if v is None:
        return ""
    if isinstance(v, bytes):
        return v.hex()
    s = str(v)
    try:
        return repr(int(s))
    except ValueError:
        pass
    try:
        f = float(s)  # 1.0 from SQLite is 1 from psql
    except ValueError:
        return s
    return repr(int(f)) if f.is_integer() and abs(f) < 2**53 else repr(f)


def rows_of(table, rows):
    """Sorted normalised rows; a synonym edge is unordered (its ends are stored as a < b by
    id, and ids depend on the order workers created the entities)."""
    rows = [tuple(map(normalise, r)) for r in rows]
    if table == "synonyms":
        rows = [tuple(sorted(r[:2])) + r[2:] for r in rows]
    return sorted(rows)


def content(db, pg_base_url):
    """{table: sorted list of normalised rows} of the store `db`."""
    out = {}
    if pg_base_url is None:
        import sqlite3
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        for table, sql in CONTENT.items():
            rows = conn.execute(sql.format(hex="lower(hex(vector))")).fetchall()
            out[table] = rows_of(table, rows)
        conn.close()
        return out
    workspace = db.rsplit("workspace=", 1)[1]
    for table, sql in CONTENT.items():
        text = subprocess.run(
            ["psql", pg_base_url, "-X", "-q", "-A", "-t", "-F", "\x1f", "-R", "\x1e", "-c",
             f"SET search_path TO \"{workspace}\"", "-c",
             sql.format(hex="encode(vector, 'hex')")],
            check=True, capture_output=True, text=True).stdout
        if text.endswith("\n"):
            text = text[:-1]  # psql ends its output with one
        out[table] = rows_of(table, [r.split("\x1f") for r in text.split("\x1e") if r])
    return out


def content_diff(reference, got, labels=("SQLite", "PostgreSQL")):
    """'identical' or the tables whose rows differ, with a row of each side (named by
    `labels`: the reference's, then got's)."""
    bad = []
    for t in CONTENT:
        if reference[t] == got[t]:
            continue
        only_ref = sorted(set(reference[t]) - set(got[t]))
        only_got = sorted(set(got[t]) - set(reference[t]))
        sample = (f"e.g. {labels[0]} {str(only_ref[0])[:160] if only_ref else '-'}, "
                  f"{labels[1]} {str(only_got[0])[:160] if only_got else '-'}")
        bad.append(f"{t} ({len(only_ref)} of {len(reference[t])} rows only in the {labels[0]} "
                   f"store, {len(only_got)} only in the {labels[1]} store; {sample})")
    return "identical" if not bad else "DIFFERS in " + "; ".join(bad)


def cold_query(flowrag, db, runs):
    cmd = [flowrag, "query", "--db", db, "--method", "bm25", QUESTION]
    samples = [timed(cmd) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def serve_peak(flowrag, db):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([flowrag, "serve", "--db", db, "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body = json.dumps({"question": QUESTION, "method": "ppr"}).encode()
        deadline = time.time() + 120
        while True:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/query", data=body,
                                             headers={"Content-Type": "application/json"})
                urllib.request.urlopen(req, timeout=60).read()
                break
            except OSError:
                if time.time() > deadline:
                    sys.exit(f"serve on {db} did not answer")
                time.sleep(0.2)
        with open(f"/proc/{proc.pid}/status") as f:
            hwm = next(line for line in f if line.startswith("VmHWM:"))
        return int(hwm.split()[1]) / 1024.0
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flowrag", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--data", default=os.path.join(ROOT, "../shared/data/bench"))
    ap.add_argument("--bench", default="2wiki")
    ap.add_argument("--workers", default="1,2,3")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/scale_out.md"))
    args = ap.parse_args()
    corpus = os.path.join(args.data, args.bench)
    if not os.path.isdir(corpus):
        sys.exit(f"{corpus}: missing (benchmark data lives in ../shared/data)")

    tmp = tempfile.mkdtemp(prefix="flowrag-scale-")
    os.chmod(tmp, 0o755)  # the server runs as its own user
    script, url = pg_server(os.path.join(tmp, "pg"))
    rows, checks = [], []
    try:
        samples = []
        for i in range(args.runs):
            sqlite_db = os.path.join(tmp, f"store{i}.db")
            samples.append(timed(index_cmd(args.flowrag, corpus, sqlite_db, 1)))
        rows.append(("SQLite", "1 process, 1 worker", *median_of(samples)))
        reference = counts(args.flowrag, sqlite_db)
        stores = []  # (label, last store) for the content check at the end
        runs = [(f"1 process, {w} worker{'s' if w > 1 else ''}", [w])
                for w in map(int, args.workers.split(","))]
        if args.processes > 1:
            runs.append((f"{args.processes} processes, 1 worker each", [1] * args.processes))
        pg_store = None
        for label, workers in runs:
            samples = []
            for i in range(args.runs):
                db = with_workspace(url, "w" + "_".join(map(str, workers)) + f"_{len(rows)}_{i}")
                samples.append(concurrent_index([index_cmd(args.flowrag, corpus, db, w)
                                                 for w in workers]))
            rows.append(("PostgreSQL", label, *median_of(samples)))
            got = counts(args.flowrag, db)
            diff = {k: (reference.get(k), got.get(k)) for k in set(reference) | set(got)
                    if reference.get(k) != got.get(k)}
            checks.append((label, "same counts as SQLite" if not diff
                           else f"counts DIFFER: {diff}"))
            stores.append(db)
            pg_store = pg_store or db
        opens = [("SQLite", *cold_query(args.flowrag, sqlite_db, args.runs),
                  serve_peak(args.flowrag, sqlite_db)),
                 ("PostgreSQL", *cold_query(args.flowrag, pg_store, args.runs),
                  serve_peak(args.flowrag, pg_store))]
        # Last: the rows held in this process would count in the peak RSS of
        # the children forked after (Linux inherits the high-water mark).
        reference_content = content(sqlite_db, None)
        checks = [(label, verdict + "; content " + content_diff(reference_content,
                                                                 content(db, url)))
                  for (label, verdict), db in zip(checks, stores)]
    finally:
        subprocess.run([script, "stop", os.path.join(tmp, "pg")], stdout=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)

    lines = [f"# Indexing `{args.bench}` into PostgreSQL with parallel workers", "",
             f"Machine: {cpu_model()}, {os.cpu_count()} cores; commit {git_commit()}; "
             f"PostgreSQL on the same machine over a Unix socket (fsync off). "
             f"Command: `bench/scale_out.py --bench {args.bench} --workers {args.workers} "
             f"--processes {args.processes} --runs {args.runs}`.", "",
             f"Index wall and peak RSS: median of {args.runs} run(s), each into a fresh store.",
             "", "| store | indexers | index wall | peak RSS (largest process) |",
             "|---|---|---|---|"]
    lines += [f"| {s} | {label} | {wall:.1f} s | {peak:.0f} MiB |"
              for s, label, wall, peak in rows]
    lines += ["", "Documents, passages, nodes and edges by kind, and the stored content by value "
              "(every table's rows, ids replaced by what they name), against the SQLite store "
              "(last run of each configuration):", ""]
    lines += [f"- {label}: {verdict}" for label, verdict in checks]
    lines += ["", f"Cold `flowrag query --method bm25` (median of {args.runs}) and `serve` "
              "peak RSS after one ppr query:", "",
              "| store | cold query wall | its peak RSS | serve peak RSS |", "|---|---|---|---|"]
    lines += [f"| {s} | {w:.2f} s | {p:.0f} MiB | {sp:.0f} MiB |" for s, w, p, sp in opens]
    write_report(args.out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
