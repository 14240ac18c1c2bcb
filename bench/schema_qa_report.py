#!/usr/bin/env python3
"""Multi-source QA with schema contracts (issue 6, acceptance 2): TAT-QA and HybridQA dev.

Needs the folders of bench/schema_qa_prepare.py under --workdir (runs it when they are missing).
Per context folder W/<dataset>/<id>/ (sources in sources/, questions in questions.jsonl) two
methods, each on a fresh store under W/runs/<dataset>/<id>/:

  schema (the schema-guided agent):
    flowrag schema induce W/<ds>/<id>/sources --out RUN/schema.yaml
    flowrag ingest W/<ds>/<id>/sources --schema RUN/schema.yaml --db RUN/schema.db -q
    flowrag ask --db RUN/schema.db --pipeline schema --questions RUN/questions.jsonl --json
  dense (plain dense retrieval over the same sources flattened to text, W/<ds>_flat/<id>/):
    flowrag index W/<ds>_flat/<id> --db RUN/flat.db -q
    flowrag ask --db RUN/flat.db --method dense --pipeline single --questions ... --json
  then `flowrag stats --db STORE --json` for each store.

The questions file handed to flowrag holds only {"id","question"}; the gold answers never enter
a source folder or a store. When `ask` has no --questions option yet, one `flowrag ask
"QUESTION" ... --json` process per question. The schema contract is written beside the store,
not into the source folder, so a later scan never profiles it.

Metrics (x100 where a rate), per dataset and method, and for TAT-QA per answer_from and
answer_type:
  * cited recall: the gold answer (for a list: every part) occurs, normalised (lower case,
    whitespace collapsed, $ and % removed, thousands commas dropped, at token boundaries), in the
    text of the passages the answer cites (citation passage_id -> retrieval.passages[].text;
    the citation quote when the passage is not in the list);
  * R@5: the same over the top-5 retrieved passages;
  * EM / F1: SQuAD normalisation (lower case, punctuation and articles removed); numbers compared
    as numbers after removing $ , % and scale words, to the gold's decimals; multi-span answers
    as the set of parts;
  * abstain: answered=false;
  * times: median ingest (induce + ingest, or index) wall time per context and per record
    (table rows + text files), median schema-induce wall time, median ask latency (the
    answer's time_ms);
  * provenance completeness and link validity: the "schema" object of `flowrag stats --json`,
    minimum over contexts ("n/a" when stats has no such figures).

Usage: bench/schema_qa_report.py [--limit N] [--datasets tatqa,hybridqa] [--methods schema,dense]
           [--bin build/release/tools/flowrag] [--workdir /tmp/schemaqa] [--jobs 2]
           [--out bench/out/schema_qa.md]
       bench/schema_qa_report.py --selftest
"""
import argparse
import concurrent.futures
import csv
import json
import os
import re
import shutil
import statistics
import string
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------------------------------------
# Normalisation and metrics


def normalize_evidence(s):
    """Lower case, $ and % removed, thousands commas dropped, whitespace collapsed."""
    s = str(s).lower().replace("\u2212", "-").replace("\u2019", "'")
    s = re.sub(r"[$%]", " ", s)
    s = re.sub(r"(?<=\d),(?=\d)", "", s)
    return re.sub(r"\s+", " ", s).strip()


def contains_answer(text, answer):
    """True when the normalised answer occurs in the normalised text at token boundaries."""
    a = normalize_evidence(answer)
    if not a:
        return False
    t = normalize_evidence(text)
    pat = r"(?<![a-z0-9])" + re.escape(a) + r"(?![a-z0-9])(?!\.\d)"
    return re.search(pat, t) is not None


def evidence_hit(texts, answers):
    """Every gold part occurs in one of the texts (their concatenation for multi-part gold)."""
    joined = "\n".join(texts)
    return bool(answers) and all(contains_answer(joined, a) for a in answers)


_SCALE_WORDS = {"thousand", "thousands", "million", "millions", "billion", "billions",
                "percent", "k", "m", "bn", "mn"}
_ARTICLES = {"a", "an", "the"}
_PUNCT = set(string.punctuation) | {"\u2019", "\u2018", "\u201c", "\u201d", "\u2013", "\u2014"}


def parse_number(s):
    """A number in an answer: "$1,496.5", "(9,819)", "-12.6%", "12.5 million" -> float, or None."""
    t = str(s).strip().lower().replace("\u2212", "-").replace("\u2013", "-")
    t = re.sub(r"[$€£¥%,\s]", "", t)
    for w in sorted(_SCALE_WORDS, key=len, reverse=True):
        if t.endswith(w) and len(t) > len(w) and (t[-len(w) - 1].isdigit() or t[-len(w) - 1] == ")"):
            t = t[:-len(w)]
            break
    neg = t.startswith("(") and t.endswith(")")
    if neg:
        t = t[1:-1]
    if not re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)", t):
        return None
    v = float(t)
    return -v if neg else v


def _decimals(s):
    m = re.search(r"\.(\d+)", str(s))
    return len(m.group(1)) if m else 0


def normalize_answer(s):
    """SQuAD: lower case, numbers canonical, punctuation, articles and scale words removed."""
    s = str(s).lower()
    s = re.sub(r"(?<=\d),(?=\d)", "", s)
    s = re.sub(r"[$%€£]", " ", s)
    s = "".join(" " if ch in _PUNCT and ch != "." else ch for ch in s)
    s = re.sub(r"\.(?!\d)", " ", s)  # a full stop, not a decimal point
    toks = []
    for tok in s.split():
        if tok in _ARTICLES or tok in _SCALE_WORDS:
            continue
        if re.fullmatch(r"-?\d+(\.\d+)?", tok):
            tok = repr(float(tok)).rstrip("0").rstrip(".") if "." in tok else str(int(tok))
        toks.append(tok)
    return " ".join(toks)


def _numbers_equal(pred, gold):
    g, p = parse_number(gold), parse_number(pred)
    if g is None or p is None:
        return None
    d = _decimals(gold)
    return round(abs(p), d) == round(abs(g), d) and (p < 0) == (g < 0) or abs(p - g) < 1e-9


def _f1_tokens(pred_toks, gold_toks):
    if not pred_toks or not gold_toks:
        return float(pred_toks == gold_toks)
    common = {}
    for t in gold_toks:
        common[t] = common.get(t, 0) + 1
    same = 0
    for t in pred_toks:
        if common.get(t, 0) > 0:
            same += 1
            common[t] -= 1
    if same == 0:
        return 0.0
    p, r = same / len(pred_toks), same / len(gold_toks)
    return 2 * p * r / (p + r)


def split_parts(text):
    parts = re.split(r"\s*(?:;|,(?!\d{3})(?:\s*and\s+)?|\s+and\s+)\s*", str(text))
    return [p for p in (normalize_answer(x) for x in parts) if p]


def em_f1(pred, answers, answer_type=""):
    """(EM, F1) in [0, 1] of one predicted text against the gold answers (a list)."""
    if not answers:
        return 0.0, 0.0
    if len(answers) > 1 or answer_type == "multi-span":
        gold = sorted(normalize_answer(a) for a in answers)
        pparts = sorted(split_parts(pred))
        em = float(set(gold) == set(pparts) or normalize_answer(pred) in
                   {" ".join(gold), " ".join(normalize_answer(a) for a in answers)})
        f1 = _f1_tokens(" ".join(pparts).split(), " ".join(gold).split())
        return em, max(f1, em)
    gold = answers[0]
    num = _numbers_equal(pred, gold)
    if num is not None:
        return float(num), float(num)
    ng, np_ = normalize_answer(gold), normalize_answer(pred)
    em = float(ng == np_)
    return em, max(em, _f1_tokens(np_.split(), ng.split()))


EVIDENCE_BUDGET = 2000  # characters of ranked evidence for R@2k


def evidence_prefix(answer, budget=EVIDENCE_BUDGET):
    """The ranked passages' texts, in order, cut at `budget` characters in all."""
    out, left = [], budget
    for t in passage_texts(answer):
        if left <= 0:
            break
        out.append(t[:left])
        left -= len(t)
    return out


def passage_texts(answer, k=None):
    ps = (answer.get("retrieval") or {}).get("passages") or []
    return [p.get("text", "") for p in (ps[:k] if k else ps)]


def cited_texts(answer):
    by_id = {}
    for p in (answer.get("retrieval") or {}).get("passages") or []:
        by_id[p.get("passage_id")] = p.get("text", "")
    out = []
    for c in answer.get("citations") or []:
        pid = c.get("passage_id")
        out.append(by_id[pid] if pid in by_id else c.get("quote", ""))
    return out


def answer_text(answer):
    v = answer.get("answer", answer.get("text", ""))
    return v if isinstance(v, str) else json.dumps(v)


def score(question, answer):
    """Per-question metrics of one answer object (None: the answer is missing)."""
    golds = question["answers"]
    if answer is None:
        return {"missing": 1, "cited": 0.0, "r5": 0.0, "r2k": 0.0, "chars5": None, "em": 0.0,
                "f1": 0.0, "abstain": 1.0, "latency": None}
    em, f1 = em_f1(answer_text(answer), golds, question.get("answer_type", ""))
    return {"missing": 0,
            "cited": float(evidence_hit(cited_texts(answer), golds)),
            "r5": float(evidence_hit(passage_texts(answer, 5), golds)),
            "r2k": float(evidence_hit(evidence_prefix(answer), golds)),
            "chars5": sum(len(t) for t in passage_texts(answer, 5)),
            "em": em, "f1": f1,
            "abstain": float(not answer.get("answered", bool(answer_text(answer)))),
            "latency": answer.get("time_ms")}


def find_figures(obj, prefix=""):
    """Flattens a stats "schema" object into {dotted.key: number}."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(find_figures(v, f"{prefix}{k}."))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out[prefix[:-1]] = float(obj)
    return out


def pick_figure(figs, *words):
    for k, v in figs.items():
        if all(w in k.lower() for w in words):
            return v
    return None


def selftest():
    # evidence normalisation
    assert contains_answer("Total sales; 2019: $1,496.5; 2018: $1,202.9.", "$1,496.5")
    assert contains_answer("item: Fixed Price; 2019: $ 1,452.4;", "$1,452.4")
    assert contains_answer("rate was 21.0% in 2019", "21.0%")
    assert not contains_answer("rate was 21.05% in 2019", "21.0%")
    assert not contains_answer("there were 13 of them", "3")
    assert contains_answer("there were 3 of them", "3")
    assert not contains_answer("1496.5", "1496")
    assert contains_answer("Walter  Payton\nplayed", "walter payton")
    assert evidence_hit(["fixed-price type and", "cost-plus type"], ["fixed-price type",
                                                                     "cost-plus type"])
    assert not evidence_hit(["fixed-price type"], ["fixed-price type", "cost-plus type"])
    assert not evidence_hit(["anything"], [])
    # numbers
    assert parse_number("$1,496.5") == 1496.5
    assert parse_number("(9,819)") == -9819
    assert parse_number("-12.6%") == -12.6
    assert parse_number("12.5 million") == 12.5
    assert parse_number("Jerry") is None
    assert em_f1("1,496.5", ["$1,496.5"]) == (1.0, 1.0)
    assert em_f1("$1496.50", ["1496.5"]) == (1.0, 1.0)
    assert em_f1("-12.60", ["-12.6"]) == (1.0, 1.0)
    assert em_f1("12.6", ["-12.6"]) == (0.0, 0.0)
    assert em_f1("2.1 million", ["2.1"]) == (1.0, 1.0)
    assert em_f1("6.67", ["6.67"])[0] == 1.0
    assert em_f1("6.7", ["6.67"])[0] == 0.0
    # SQuAD text
    assert em_f1("The Jerry.", ["Jerry"]) == (1.0, 1.0)
    em, f1 = em_f1("Emmitt Smith", ["Emmitt James Smith"])
    assert em == 0.0 and abs(f1 - 0.8) < 1e-9, f1
    assert em_f1("", ["Jerry"]) == (0.0, 0.0)
    # multi-span: the set of parts
    gold = ["fixed-price type", "cost-plus type", "time-and-material type"]
    assert em_f1("cost-plus type, fixed-price type and time-and-material type", gold,
                 "multi-span")[0] == 1.0
    em, f1 = em_f1("fixed-price type", gold, "multi-span")
    assert em == 0.0 and 0.0 < f1 < 1.0
    assert em_f1("2019; 2018", ["2018", "2019"], "multi-span")[0] == 1.0
    assert em_f1("$1,200, and $3,400", ["1200", "3400"], "multi-span")[0] == 1.0
    # answer objects
    ans = {"answer": "$1,496.5", "answered": True, "time_ms": 1.5,
           "citations": [{"marker": 1, "passage_id": 7, "quote": "q"},
                         {"marker": 2, "passage_id": 99, "quote": "cost-plus type"}],
           "retrieval": {"passages": [{"passage_id": 3, "text": "nothing"},
                                      {"passage_id": 7, "text": "Total sales 1,496.5"}]}}
    s = score({"answers": ["1,496.5"], "answer_type": "span"}, ans)
    assert s["cited"] == 1.0 and s["r5"] == 1.0 and s["em"] == 1.0 and s["abstain"] == 0.0
    s = score({"answers": ["cost-plus type"], "answer_type": "span"}, ans)
    assert s["cited"] == 1.0 and s["r5"] == 0.0  # from the quote of a passage not retrieved
    s = score({"answers": ["nothing"]}, dict(ans, answered=False, citations=[]))
    assert s["cited"] == 0.0 and s["r5"] == 1.0 and s["abstain"] == 1.0
    assert score({"answers": ["x"]}, None)["missing"] == 1
    cells = metric_cells([dict(score({"answers": ["x"]}, None), in_sources=1.0)])
    assert cells[1:] == ["n/a"] * 7 + ["100.0"], cells
    # R@2k: the same evidence budget for every method; 2 chars of the second passage fit.
    long = {"retrieval": {"passages": [{"passage_id": 1, "text": "x" * 1998},
                                       {"passage_id": 2, "text": "gold answer here"}]}}
    assert score({"answers": ["gold"]}, long)["r2k"] == 0.0
    assert score({"answers": ["gold"]}, long)["r5"] == 1.0
    assert score({"answers": ["gold"]}, long)["chars5"] == 2014
    short = {"retrieval": {"passages": [{"passage_id": 1, "text": "x" * 10},
                                        {"passage_id": 2, "text": "gold answer here"}]}}
    assert score({"answers": ["gold"]}, short)["r2k"] == 1.0
    figs = find_figures({"quality": {"provenance_completeness": 1.0, "link_validity": 0.98},
                         "sources": 3, "ok": True})
    assert pick_figure(figs, "provenance") == 1.0 and pick_figure(figs, "link", "valid") == 0.98
    assert pick_figure(figs, "absent") is None and "ok" not in figs
    print("selftest passed")


# ---------------------------------------------------------------------------------------------
# Running flowrag


def run(cmd, timeout=3600, wait_for_binary=600):
    """(returncode, stdout, stderr, seconds) of one command. While the binary cannot be started
    (missing, or being relinked: permission denied, text file busy) waits and retries, up to
    wait_for_binary seconds; the seconds returned are those of the run that started."""
    deadline = time.monotonic() + wait_for_binary
    while True:
        t0 = time.perf_counter()
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            break
        except subprocess.TimeoutExpired:
            return 124, "", f"timeout after {timeout}s", time.perf_counter() - t0
        except OSError as e:
            if time.monotonic() > deadline:
                return 127, "", f"cannot run {cmd[0]}: {e}", 0.0
            time.sleep(5)
    return res.returncode, res.stdout, res.stderr, time.perf_counter() - t0


def short(cmd):
    return " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))


class Flowrag:
    def __init__(self, path):
        self.path = path
        rc, out, err, _ = run([path, "ask", "--help"])
        self.batch_questions = "--questions" in out + err
        rc, out, err, _ = run([path, "--help"])
        self.has_ingest = re.search(r"^\s+ingest\s", out, re.M) is not None

    def ask_all(self, db, args, questions, qfile, errors):
        """{id: answer object} for the questions; --questions when available."""
        answers = {}
        if self.batch_questions:
            rc, out, err, _ = run([self.path, "ask", "--db", db, *args, "--questions", qfile,
                                   "--json"])
            if rc != 0:
                errors.append(f"ask --questions: rc={rc}: {err.strip()[-300:]}")
            lines = [l for l in out.splitlines() if l.strip()]
            for i, line in enumerate(lines):
                try:
                    a = json.loads(line)
                except json.JSONDecodeError:
                    errors.append(f"ask --questions: line {i + 1} is not JSON")
                    continue
                qid = a.get("id", questions[i]["id"] if i < len(questions) else None)
                answers[qid] = a
            return answers
        for q in questions:
            rc, out, err, _ = run([self.path, "ask", "--db", db, *args, "--json", "--",
                                   q["question"]])
            if rc != 0:
                errors.append(f"ask {q['id']}: rc={rc}: {err.strip()[-300:]}")
                continue
            try:
                answers[q["id"]] = json.loads(out)
            except json.JSONDecodeError:
                errors.append(f"ask {q['id']}: output is not JSON")
        return answers

    def stats(self, db, errors):
        rc, out, err, _ = run([self.path, "stats", "--db", db, "--json"])
        if rc != 0:
            errors.append(f"stats: rc={rc}: {err.strip()[-300:]}")
            return {}
        try:
            return json.loads(out)
        except json.JSONDecodeError:
            errors.append("stats: output is not JSON")
            return {}


def count_records(src_dir):
    """Table rows plus text files of one source folder."""
    n = 0
    for dirpath, _, files in os.walk(src_dir):
        for f in files:
            p = os.path.join(dirpath, f)
            if f.endswith(".csv"):
                with open(p, encoding="utf-8", newline="") as fh:
                    n += max(0, sum(1 for _ in csv.reader(fh)) - 1)
            else:
                n += 1
    return n


def store_of(method):
    """(store kind, retrieval method or None for the agent) of a report method."""
    if method == "schema":
        return "schema", None
    if method == "dense":
        return "flat", "dense"
    kind, retrieval = method.split("-", 1)
    return {"store": "schema", "rows": "rows"}[kind], retrieval


def write_rows_folder(flat, rows_dir):
    """The flattened sources with the table cut to one document per row (rows.jsonl), the
    other files as they are: retrieval over row-sized passages, like the agent's records."""
    if os.path.isdir(rows_dir):
        shutil.rmtree(rows_dir)
    shutil.copytree(flat, rows_dir)
    table = os.path.join(rows_dir, "table.txt")
    if not os.path.exists(table):
        return
    with open(table, encoding="utf-8") as f:
        lines = [l.strip() for l in f if l.strip()]
    os.remove(table)
    with open(os.path.join(rows_dir, "rows.jsonl"), "w", encoding="utf-8") as f:
        for i, line in enumerate(lines):
            f.write(json.dumps({"id": f"row-{i + 1}", "title": f"table row {i + 1}", "text": line},
                               ensure_ascii=False) + "\n")


def build_store(fr, kind, src, flat, rundir):
    """Builds one store of a context: (db, build s or None, induce s or None, errors)."""
    errors = []
    if kind == "schema":
        schema = os.path.join(rundir, "schema.yaml")
        db = os.path.join(rundir, "schema.db")
        rc, out, err, induce_s = run([fr.path, "schema", "induce", src, "--out", schema])
        if rc != 0:
            return db, None, None, [f"schema induce: rc={rc}: {err.strip()[-300:]}"]
        rc, out, err, ingest_s = run([fr.path, "ingest", src, "--schema", schema, "--db", db, "-q"])
        if rc != 0:
            return db, None, induce_s, [f"ingest: rc={rc}: {err.strip()[-300:]}"]
        return db, induce_s + ingest_s, induce_s, errors
    folder = flat
    if kind == "rows":
        folder = os.path.join(rundir, "rows_sources")
        write_rows_folder(flat, folder)
    db = os.path.join(rundir, kind + ".db")
    rc, out, err, secs = run([fr.path, "index", folder, "--db", db, "-q"])
    if rc != 0:
        return db, None, None, [f"index: rc={rc}: {err.strip()[-300:]}"]
    return db, secs, None, errors


def run_context(fr, workdir, dataset, cid, methods):
    """Runs the methods on one context folder; returns {method: result dict}."""
    base = os.path.join(workdir, dataset, cid)
    src = os.path.join(base, "sources")
    flat = os.path.join(workdir, dataset + "_flat", cid)
    rundir = os.path.join(workdir, "runs", dataset, cid)
    if os.path.isdir(rundir):
        shutil.rmtree(rundir)
    os.makedirs(rundir)
    questions = [json.loads(l) for l in open(os.path.join(base, "questions.jsonl"),
                                             encoding="utf-8") if l.strip()]
    qfile = os.path.join(rundir, "questions.jsonl")
    with open(qfile, "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps({"id": q["id"], "question": q["question"]},
                               ensure_ascii=False) + "\n")
    records = count_records(src)
    source_texts = []  # the flattened copy holds every source text (table rows as lines)
    for dirpath, _, files in os.walk(flat):
        for f in sorted(files):
            with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                source_texts.append(fh.read())
    in_sources = {q["id"]: float(evidence_hit(source_texts, q["answers"])) for q in questions}
    results = {}
    stores = {}  # kind -> (db, build seconds or None, induce seconds, errors)
    for method in methods:
        errors, r = [], {"records": records, "questions": questions}
        kind, retrieval = store_of(method)
        if kind not in stores:
            stores[kind] = build_store(fr, kind, src, flat, rundir)
        db, r["build_s"], r["induce_s"], build_errors = stores[kind]
        errors += build_errors
        rc = 0 if r["build_s"] is not None else 1
        ask_args = (["--pipeline", "schema"] if retrieval is None
                    else ["--method", retrieval, "--pipeline", "single"])
        answers = {}
        if rc == 0:
            st = fr.stats(db, errors)
            r["schema_figures"] = find_figures(st["schema"]) if "schema" in st else None
            r["documents"] = st.get("documents")
            answers = fr.ask_all(db, ask_args, questions, qfile, errors)
            with open(os.path.join(rundir, method + "_answers.jsonl"), "w",
                      encoding="utf-8") as f:
                for q in questions:
                    if q["id"] in answers:
                        f.write(json.dumps(dict(answers[q["id"]], id=q["id"]),
                                           ensure_ascii=False) + "\n")
        r["scores"] = [dict(score(q, answers.get(q["id"])), answer_type=q.get("answer_type", ""),
                            answer_from=q.get("answer_from", ""), in_sources=in_sources[q["id"]])
                       for q in questions]
        r["errors"] = errors
        results[method] = r
    return results


# ---------------------------------------------------------------------------------------------
# Aggregation and the report


def pct(xs):
    return f"{100 * sum(xs) / len(xs):.1f}" if xs else "n/a"


def med(xs, scale=1.0, fmt="{:.3f}"):
    xs = [x for x in xs if x is not None]
    return fmt.format(statistics.median(xs) * scale) if xs else "n/a"


def metric_cells(scores):
    """Questions, then the rates over all of them (a missing answer scores 0 and abstains);
    n/a when flowrag returned no answer at all."""
    missing = sum(s["missing"] for s in scores)
    n = str(len(scores)) + (f" ({missing} without answer)" if missing else "")
    ceiling = pct([s["in_sources"] for s in scores])
    if scores and missing == len(scores):
        return [n] + ["n/a"] * 7 + [ceiling]
    return [n, pct([s["cited"] for s in scores]), pct([s["r5"] for s in scores]),
            med([s["chars5"] for s in scores], 1, "{:.0f}"), pct([s["r2k"] for s in scores]),
            pct([s["em"] for s in scores]), pct([s["f1"] for s in scores]),
            pct([s["abstain"] for s in scores]), ceiling]


METHOD_NAMES = {"schema": "schema agent (ingest + `--pipeline schema`)",
                "dense": "dense, flattened text (`--method dense --pipeline single`)"}
for _r in ("dense", "bm25", "hybrid"):
    METHOD_NAMES[f"store-{_r}"] = f"{_r}, the agent's store (one passage per record)"
    METHOD_NAMES[f"rows-{_r}"] = f"{_r}, flattened text, one passage per table row"


def report_dataset(dataset, per_ctx, methods):
    lines = [f"## {dataset}", ""]
    n_ctx = len(per_ctx)
    lines += ["| method | questions | cited recall | R@5 | top-5 chars | R@2k chars | EM | F1 | abstain "
              "| gold in sources | contexts failed |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in methods:
        scores = [s for c in per_ctx for s in c[m]["scores"]]
        failed = sum(1 for c in per_ctx if c[m]["errors"])
        lines.append(f"| {METHOD_NAMES[m]} | " + " | ".join(metric_cells(scores))
                     + f" | {failed}/{n_ctx} |")
    lines += ["", "| method | build per context s (median) | build per record ms (median) | "
              "schema induce s (median) | ask latency ms (median) | provenance completeness (min) "
              "| link validity (min) |", "|---|---|---|---|---|---|---|"]
    for m in methods:
        rs = [c[m] for c in per_ctx]
        per_rec = [r["build_s"] / r["records"] for r in rs if r.get("build_s") and r["records"]]
        lat = [s["latency"] for r in rs for s in r["scores"] if s["latency"] is not None]
        prov, link = "n/a", "n/a"
        if m == "schema":
            figs = [r.get("schema_figures") for r in rs]
            if figs and all(f is not None for f in figs):
                pv = [pick_figure(f, "provenance") for f in figs]
                lv = [pick_figure(f, "link", "valid") for f in figs]
                if all(v is not None for v in pv):
                    prov = f"{min(pv):.4g}"
                if all(v is not None for v in lv):
                    link = f"{min(lv):.4g}"
        induce = med([r.get("induce_s") for r in rs]) if m == "schema" else "-"
        lines.append(f"| {m} | {med([r.get('build_s') for r in rs])} | "
                     f"{med(per_rec, 1000, '{:.2f}')} | {induce} | {med(lat, 1, '{:.2f}')} | "
                     f"{prov} | {link} |")
    for key in ("answer_from", "answer_type"):
        groups = sorted({s[key] for c in per_ctx for m in methods for s in c[m]["scores"]})
        if len(groups) < 2:
            continue
        lines += ["", f"By {key}:", "",
                  "| " + key + " | method | questions | cited recall | R@5 | top-5 chars | R@2k chars "
                  "| EM | F1 | abstain | gold in sources |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for g in groups:
            for m in methods:
                scores = [s for c in per_ctx for s in c[m]["scores"] if s[key] == g]
                lines.append(f"| {g or '(none)'} | {m} | " + " | ".join(metric_cells(scores))
                             + " |")
    errs = [(c["id"], m, e) for c in per_ctx for m in methods for e in c[m]["errors"]]
    if errs:
        lines += ["", f"Errors ({len(errs)}; first 5):", ""]
        lines += [f"- `{cid}` {m}: {e.splitlines()[0][:200] if e else e}" for cid, m, e in errs[:5]]
    return lines


def cpu_line():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"^Model name:\s*(.+)$", out, re.M)
        model = m.group(1).strip() if m else "unknown"
    except OSError:
        model = "unknown"
    return f"{model}, {os.cpu_count()} cores"


def git_commit():
    res = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=0, help="contexts per dataset; 0: all")
    ap.add_argument("--datasets", default="tatqa,hybridqa")
    ap.add_argument("--methods", default="schema,dense")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/release/tools/flowrag"))
    ap.add_argument("--workdir", default="/tmp/schemaqa")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out/schema_qa.md"))
    ap.add_argument("--selftest", action="store_true", help="check the metric functions; exit")
    args = ap.parse_args()
    if args.selftest:
        selftest()
        return
    datasets = args.datasets.split(",")
    methods = args.methods.split(",")
    for m in methods:
        if m not in METHOD_NAMES:
            sys.exit(f"unknown method {m!r} (expected schema or dense)")
    fr = Flowrag(os.path.abspath(args.bin))
    if "schema" in methods and not fr.has_ingest:
        print("warning: this flowrag has no `ingest` command; the schema rows will be n/a",
              file=sys.stderr)
    if not fr.batch_questions:
        print("note: `ask --questions` missing; one ask process per question", file=sys.stderr)
    manifests = {}
    for ds in datasets:
        mpath = os.path.join(args.workdir, ds, "manifest.jsonl")
        if not os.path.exists(mpath):
            subprocess.run([sys.executable, os.path.join(ROOT, "bench/schema_qa_prepare.py"),
                            "--out", args.workdir, "--datasets", ds], check=True)
        ctx = [json.loads(l) for l in open(mpath, encoding="utf-8") if l.strip()]
        manifests[ds] = ctx[:args.limit] if args.limit else ctx
    tasks = [(ds, c["id"]) for ds in datasets for c in manifests[ds]]
    results = {ds: {} for ds in datasets}
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(run_context, fr, args.workdir, ds, cid, methods): (ds, cid)
                for ds, cid in tasks}
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            ds, cid = futs[fut]
            res = fut.result()
            res["id"] = cid
            results[ds][cid] = res
            errs = sum(len(res[m]["errors"]) for m in methods)
            if i % 10 == 0 or i == len(tasks) or errs:
                print(f"[{i}/{len(tasks)}] {ds} {cid}" + (f" ({errs} errors)" if errs else ""),
                      flush=True)
    wall = time.perf_counter() - t0
    cmd = "bench/schema_qa_report.py " + " ".join(a for a in sys.argv[1:])
    lines = [
        "# Multi-source QA with schema contracts (TAT-QA dev, HybridQA dev)",
        "",
        f"Machine: {cpu_line()}. flowrag commit: `{git_commit()}`. "
        f"Command: `{cmd.strip()}` ({len(tasks)} contexts, --jobs {args.jobs}, "
        f"{wall:.0f} s wall).",
        "",
        "Questions: TAT-QA dev, all 1,668 questions of its 278 contexts; HybridQA dev, the 431 "
        "questions (of 3,466) whose table and linked passages are in `../shared/data` "
        "(`hybridqa_ottqa_tables/HYBRIDQA_DEV_QUESTION_IDS_WITH_TABLE.txt`, 359 tables).",
        "",
        "Sources per context from `bench/schema_qa_prepare.py`: the table as `table.csv`, "
        "TAT-QA paragraphs as `text/p<order>.txt`, HybridQA linked passages as "
        "`passages/<Title>.txt` plus `about.md`; the dense baseline indexes the same sources with "
        "the table flattened to one `name: value; ...` line per row. Offline: built-in embedder, "
        "extractive answerer, no chat model; each context is its own store. Commands per "
        "context: `flowrag schema induce SRC --out schema.yaml`, `flowrag ingest SRC --schema "
        "schema.yaml --db schema.db -q`, `flowrag ask --db schema.db --pipeline schema "
        "--questions Q.jsonl --json`; baseline `flowrag index FLAT --db flat.db -q`, "
        "`flowrag ask --db flat.db --method dense --pipeline single --questions Q.jsonl --json`"
        + ("" if fr.batch_questions else " (here one `ask` process per question: this flowrag "
           "has no `--questions`)") + ". Retrieval-only methods over the same sources at the "
        "agent's granularity: `store-*` asks the agent's own store (`schema.db`, one passage per "
        "record, text files as ingested) with `--method dense|bm25|hybrid --pipeline single`; "
        "`rows-*` indexes the flattened sources with the table cut to one document per row "
        "(`rows.jsonl`, titled `table row N`) and asks it the same way.",
        "",
        "Cited recall: the gold answer (every part of a list) occurs in the cited passages "
        "(normalised: lower case, whitespace collapsed, $ % and thousands commas removed, at "
        "token boundaries); R@5: in the top-5 retrieved passages; top-5 chars: their length (median), "
        "since the methods' passages differ in size (a flattened table is cut into 500-word windows "
        "of many rows, a record is one row); R@2k chars: in the first 2,000 characters of the "
        "ranked passages, the same evidence budget for every method. EM/F1: SQuAD normalisation, "
        "numbers as numbers to the gold's decimals (scale words and $ , % removed), multi-span "
        "as the set of parts. Arithmetic and count answers (TAT-QA) are computed values that "
        "mostly occur in no source, so their evidence recall is near zero by construction. "
        "Gold in sources: the gold answer occurs anywhere in the context's sources (the "
        "ceiling of both recalls). Rates x100. Build: schema induce + ingest (schema) or index (dense), wall time of the "
        "processes; per record: divided by table rows + text files. Ask latency: the answer's "
        "`time_ms`. Provenance completeness and link validity: `flowrag stats --json` "
        "\"schema\" object, minimum over contexts.",
    ]
    for ds in datasets:
        per_ctx = [results[ds][c["id"]] for c in manifests[ds]]
        lines += [""] + report_dataset(ds, per_ctx, methods)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
