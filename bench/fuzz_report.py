#!/usr/bin/env python3
"""Runs the libFuzzer targets (tests/fuzz, built with -DFLOWRAG_FUZZ=ON) and writes bench/out/fuzz.md.

Each target runs on a COPY of its seed corpus (tests/fuzz/corpus/<target>) in a scratch
directory, so the committed corpus never grows by itself, one target at a time, under `nice`,
until --runs executions or --seconds of wall time, whichever comes first (at least one of them
is required). libFuzzer stops at the first crash, leak, UBSan report or timeout; its input is
kept under <scratch>/artifacts/<target>/ and listed at the end. Minimise it
(`<target>_fuzz -minimize_crash=1 -runs=10000 <file>`), copy it to tests/fuzz/crashes/<target>/,
fix the bug and run again: fuzz_corpus_test replays it from then on.

Per target the report has the executions, executions per second, edges covered (libFuzzer's
`cov:`), features (`ft:`) from libFuzzer's last status line, the wall time, and the number of
crashing inputs found. Rows of targets not run this time are kept from the existing report.

Usage: bench/fuzz_report.py [--build build/fuzz] [--targets documents,llm_json,...]
           [--runs 1000000] [--seconds 1800] [--scratch DIR] [--out bench/out/fuzz.md]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from retrieval_report import ROOT, cpu_model, git_commit, write_report

# -max_len per target: enough for the seeds' shapes, small enough to keep inputs fast.
MAX_LEN = {
    "documents": 4096,
    "html_text": 8192,
    "pdf_text": 8192,
    "records": 4096,
    "llm_json": 4096,
    "schema_contract": 8192,
    "openie": 8192,
    "spider_tables": 8192,
    "spider2_ddl": 8192,
    "sqlite_file": 16384,
    "server_request": 8192,
    "store_open": 65536,
    "snapshot": 40000,
    "hnsw_index": 8192,
}
STATUS = re.compile(r"^#(\d+)\s+\S+\s+cov: (\d+) ft: (\d+)")
ARTIFACT = ("crash-", "leak-", "timeout-", "oom-", "slow-unit-")


def targets_in(corpus_root):
    return sorted(d for d in os.listdir(corpus_root) if os.path.isdir(os.path.join(corpus_root, d)))


def run_target(binary, seeds, scratch, target, runs, seconds, rss_limit_mb, timeout_s):
    """Runs one fuzzer; returns a dict of its results."""
    corpus = os.path.join(scratch, "corpus", target)
    artifacts = os.path.join(scratch, "artifacts", target)
    shutil.rmtree(corpus, ignore_errors=True)
    shutil.copytree(seeds, corpus)
    os.makedirs(artifacts, exist_ok=True)
    cmd = ["nice", "-n", "10", binary, corpus, f"-rss_limit_mb={rss_limit_mb}",
           f"-timeout={timeout_s}", f"-max_len={MAX_LEN.get(target, 4096)}",
           f"-artifact_prefix={artifacts}/", "-print_final_stats=1"]
    if runs:
        cmd.append(f"-runs={runs}")
    if seconds:
        cmd.append(f"-max_total_time={seconds}")
    log_path = os.path.join(scratch, f"{target}.log")
    print(f"{target}: {' '.join(cmd[3:])}", flush=True)
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        env = dict(os.environ, UBSAN_OPTIONS="print_stacktrace=1")  # where, not just what
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    wall = time.monotonic() - t0
    r = parse_log(log_path, wall, artifacts)
    r.update(target=target, rc=rc)
    return r


def parse_log(log_path, wall, artifacts):
    """The statistics of one libFuzzer log, and the crashing inputs in `artifacts`."""
    executions = cov = ft = 0
    exec_per_s = None
    with open(log_path, errors="replace") as log:
        for line in log:
            m = STATUS.match(line)
            if m:
                executions, cov, ft = int(m.group(1)), int(m.group(2)), int(m.group(3))
            elif line.startswith("stat::number_of_executed_units:"):
                executions = int(line.split(":")[-1])
            elif line.startswith("stat::average_exec_per_sec:"):
                exec_per_s = int(line.split(":")[-1])
    found = sorted(os.path.join(artifacts, f) for f in os.listdir(artifacts) if f.startswith(ARTIFACT))
    if exec_per_s is None:
        exec_per_s = int(executions / wall) if wall > 0 else 0
    return {"executions": executions, "exec_s": exec_per_s, "cov": cov, "ft": ft, "wall": wall,
            "crashes": len(found), "artifacts": found, "log": log_path}


def row_of(r):
    return (f"| {r['target']} | {r['executions']:,} | {r['exec_s']:,} | {r['cov']:,} | "
            f"{r['ft']:,} | {r['wall']:.0f} | {r['crashes']} | {r['budget']} |")


def budget_of(args):
    return " ".join(x for x in (f"--runs {args.runs}" if args.runs else "",
                                f"--seconds {args.seconds}" if args.seconds else "") if x)


def old_rows(path):
    """target -> table row of an existing report."""
    rows = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if line.startswith("| ") and len(cells) == 8 and cells[0] not in ("target", "---"):
                    rows[cells[0]] = line.rstrip("\n")
    return rows


def clang_version():
    try:
        out = subprocess.run(["clang++-14", "--version"], capture_output=True, text=True).stdout
        return out.splitlines()[0] if out else "clang"
    except OSError:
        return "clang"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build/fuzz"))
    ap.add_argument("--targets", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--runs", type=int, default=0, help="executions per target")
    ap.add_argument("--seconds", type=int, default=0, help="wall-time limit per target")
    ap.add_argument("--rss-limit-mb", type=int, default=2048)
    ap.add_argument("--timeout", type=int, default=10, help="seconds per input")
    ap.add_argument("--scratch", default="", help="work directory (default: a temp dir, kept)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/fuzz.md"))
    args = ap.parse_args()
    if not args.runs and not args.seconds:
        sys.exit("give --runs N and/or --seconds N")

    corpus_root = os.path.join(ROOT, "tests/fuzz/corpus")
    targets = args.targets.split(",") if args.targets else targets_in(corpus_root)
    scratch = args.scratch or tempfile.mkdtemp(prefix="flowrag-fuzz-")
    os.makedirs(scratch, exist_ok=True)
    results = []
    for target in targets:
        binary = os.path.join(args.build, "tests/fuzz", f"{target}_fuzz")
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} missing: build it with -DFLOWRAG_FUZZ=ON (doc/fuzzing.md)")
        r = run_target(binary, os.path.join(corpus_root, target), scratch, target, args.runs,
                       args.seconds, args.rss_limit_mb, args.timeout)
        print(f"  {r['executions']:,} executions, {r['exec_s']:,}/s, cov {r['cov']}, "
              f"ft {r['ft']}, {r['wall']:.0f} s, {r['crashes']} crashes", flush=True)
        r["budget"] = budget_of(args)
        results.append(r)
        write(args, results)  # after each target: an interrupted run keeps what it measured
    artifacts = [a for r in results for a in r["artifacts"]]
    if artifacts:
        print("inputs that crashed, leaked or hung (logs in " + scratch + "):")
        for a in artifacts:
            print("  " + a)
        sys.exit(1)


def write(args, results):
    """Writes the report: the rows of `results` over those of the existing report."""
    rows = old_rows(args.out)
    for r in results:
        rows[r["target"]] = row_of(r)
    lines = [
        "# Fuzzing: libFuzzer targets of every parser",
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores (shared, `nice`; up to two fuzzers at once). "
        f"flowrag commit: `{git_commit()}`; {clang_version()}, "
        "`-fsanitize=fuzzer,address,undefined`, RelWithDebInfo (build/fuzz, doc/fuzzing.md).",
        f"Last command: `bench/fuzz_report.py {budget_of(args)}"
        + (f" --targets {args.targets}" if args.targets else "")
        + "`; rows of targets it did not run are kept from earlier runs, each with its budget "
        "(libFuzzer stops at whichever of -runs and -max_total_time comes first). "
        f"`-rss_limit_mb={args.rss_limit_mb} -timeout={args.timeout}`, `-max_len` per target "
        "(bench/fuzz_report.py MAX_LEN), on a scratch copy of tests/fuzz/corpus/<target>.",
        "Executions, exec/s, cov (edges) and ft (features) are libFuzzer's final statistics; "
        "crashes counts the crash, leak, timeout and OOM inputs of the run (libFuzzer stops at the "
        "first; each fixed one is kept in tests/fuzz/crashes/<target>/).",
        "",
        "| target | executions | exec/s | cov | ft | wall s | crashes | budget |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [rows[t] for t in sorted(rows)]
    write_report(args.out, lines)


if __name__ == "__main__":
    main()
