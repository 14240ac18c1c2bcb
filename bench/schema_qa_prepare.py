#!/usr/bin/env python3
"""Lay out TAT-QA dev and HybridQA dev as folders of source files for the schema-contract QA bench.

Per TAT-QA context (id: the table uid) and per HybridQA table (id: the table id, sanitised),
the files a user would have, plus the questions kept outside the sources:

  OUT/<dataset>/<id>/sources/table.csv        the table: one header row, RFC 4180 (csv module)
  OUT/<dataset>/<id>/sources/text/p<order>.txt   TAT-QA paragraphs
  OUT/<dataset>/<id>/sources/passages/<Title>.txt  HybridQA linked passages ("# Title" first line)
  OUT/<dataset>/<id>/sources/about.md         HybridQA table title, section and intro
  OUT/<dataset>/<id>/questions.jsonl          {"id","question","answers":[...],"answer_type",
                                               "answer_from","scale"}
  OUT/<dataset>_flat/<id>/table.txt           the same table flattened, one line per row
                                               ("item: X; 2019: Y; ..."), plus the same text,
                                               passage and about files (dense baseline)
  OUT/<dataset>/manifest.jsonl                {"id","source_id","questions","rows","columns",
                                               "header_rows","passages"} per folder

The questions (with the gold answers) live beside sources/, not in it, so that neither schema
induction nor ingestion (both scan folders recursively and read JSONL) can see the answers.

Header rows of TAT-QA tables are found from the top (a row is a header row while none of its
value cells is a number other than a year, and it is the first row, or its first cell is blank,
or some value cell is filled); they are joined per column with a space. A row that fills only
one value cell of several (a banner such as "Years Ended December 31,") is a caption and names
no column; a row with several filled cells and gaps ("Domestic", "", "International", "") spans
the gaps to its right. A blank first column is named `item`; blank and repeated names become
`col<N>` (1-based column number).

Usage: bench/schema_qa_prepare.py [--out /tmp/schemaqa] [--limit N] [--datasets tatqa,hybridqa]
           [--data /work/shared/data]
"""
import argparse
import csv
import json
import os
import re
import shutil
import sys
import unicodedata
import urllib.parse

DEFAULT_DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "../../shared/data"))
if not os.path.isdir(DEFAULT_DATA):
    DEFAULT_DATA = "/work/shared/data"

_NUM_RE = re.compile(r"^\(?[-+−–]?\(?\d[\d,]*(\.\d+)?\)?%?\)?$|^\(?[-+−–]?\.\d+\)?%?$")
_YEAR_RE = re.compile(r"^(19|20)\d\d\b")
_CURRENCY = "$€£¥"
# a one-cell header row that reads on in the row below ("Balance at Beginning of") is no caption
_CONTINUED_RE = re.compile(r"\b(of|in|for|and|at|to|per|the)$")


def is_value(cell):
    """True for a number as a table holds it ($1,452.4, (9,819), 21.0%, $—), not a year."""
    s = cell.strip()
    if not s:
        return False
    if s in ("—", "–", "-", "$—", "$ —", "$-", "$ -", "—%", "-%", "nm", "n/a", "N/A", "NM"):
        return True
    t = "".join(ch for ch in s if ch not in _CURRENCY and not ch.isspace())
    if not _NUM_RE.match(t):
        return False
    digits = t.strip("()%+-−–")
    if re.fullmatch(r"(19|20)\d\d", digits):
        return False  # a bare year is a column name, not a value
    return True


def _is_header_row(row, index):
    if index == 0:
        return True  # TAT-QA tables always open with a header row (one has "31," in it)
    values = row[1:]
    if any(is_value(c) for c in values):
        return False
    filled = [c for c in values if c.strip()]
    first = row[0].strip()
    if not filled:
        return False  # a section row ("Assets", "", "")
    if len(filled) == 1 and not first and filled[0].strip().endswith(":"):
        return False  # a section row in a value column ("", "Operations Data:", "", "")
    return True


def split_header(table):
    """Returns (header_rows, data_rows): header rows are the leading non-value rows."""
    n = 0
    while n < len(table) - 1 and _is_header_row(table[n], n):
        n += 1
    return table[:n], table[n:]


def build_header(header_rows, width):
    """One header row from the header rows; names are unique and never blank."""
    parts = [[] for _ in range(width)]
    header_rows = [[c.strip() for c in row] + [""] * (width - len(row)) for row in header_rows]
    widest = max((sum(1 for c in row[1:] if c) for row in header_rows), default=0)
    for k, row in enumerate(header_rows):
        filled = [i for i in range(1, width) if row[i]]
        last_row = k == len(header_rows) - 1
        if (len(filled) == 1 and width > 2 and widest >= 2
                and not _CONTINUED_RE.search(row[filled[0]])):
            pass  # a caption ("Years Ended December 31,", "(in millions)") names no column
        else:
            cells = list(row)
            if len(filled) >= 2 and len(filled) < width - 1 and not last_row:
                # a spanning group row: each filled cell spans the blanks to its right
                last = ""
                for i in range(1, width):
                    if row[i]:
                        last = row[i]
                    elif last:
                        cells[i] = last
            for i in range(1, width):
                if cells[i]:
                    parts[i].append(cells[i])
        if row[0]:
            parts[0].append(row[0])
    names = [re.sub(r"\s+", " ", " ".join(p)).strip() for p in parts]
    return unique_names(names)


def unique_names(names):
    out, seen = [], set()
    for i, name in enumerate(names):
        if i == 0 and not name:
            name = "item"
        if not name or name.lower() in seen:
            name = f"col{i + 1}"
            k = 2
            while name.lower() in seen:
                name = f"col{i + 1}_{k}"
                k += 1
        seen.add(name.lower())
        out.append(name)
    return out


def clean_cell(cell):
    return re.sub(r"\s+", " ", str(cell)).strip()


def write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)  # RFC 4180: quotes fields with commas, quotes or newlines; CRLF rows
        w.writerow(header)
        for r in rows:
            w.writerow(r)


def flatten_table(header, rows):
    """One line per row: "name: value; name: value" over the filled cells."""
    lines = []
    for r in rows:
        cells = [f"{h}: {v}" for h, v in zip(header, r) if v]
        if cells:
            lines.append("; ".join(cells) + ".")
    return "\n".join(lines) + "\n"


def safe_name(name, limit=120):
    """A portable file name: no separators, control or reserved characters, bounded in bytes."""
    name = unicodedata.normalize("NFC", name)
    name = re.sub(r'[\x00-\x1f<>:"/\\|?*]', "_", name).strip(" .")
    while len(name.encode("utf-8")) > limit:
        name = name[:-1]
    return name or "_"


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")


def start_context(out, dataset, cid, header, rows):
    """Fresh OUT/<dataset>/<id>/ and OUT/<dataset>_flat/<id>/ holding the table; returns
    (context folder, its sources folder, flat folder)."""
    base = os.path.join(out, dataset, cid)
    flat = os.path.join(out, dataset + "_flat", cid)
    fresh_dir(base)
    fresh_dir(flat)
    src = os.path.join(base, "sources")
    os.makedirs(src)
    write_csv(os.path.join(src, "table.csv"), header, rows)
    write_text(os.path.join(flat, "table.txt"), flatten_table(header, rows))
    return base, src, flat


def write_both(src, flat, relpath, text):
    """The same text file in the sources and in the flattened copy."""
    write_text(os.path.join(src, relpath), text)
    write_text(os.path.join(flat, relpath), text)


def answer_strings(answer):
    if isinstance(answer, list):
        return [str(a).strip() for a in answer if str(a).strip()]
    if isinstance(answer, float) and answer.is_integer():
        return [str(int(answer))]
    return [str(answer).strip()]


def fresh_dir(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)


def prepare_tatqa(data, out, limit, stats):
    contexts = json.load(open(os.path.join(data, "tatqa/tatqa_dataset_dev.json"), encoding="utf-8"))
    if limit:
        contexts = contexts[:limit]
    manifest = []
    for ctx in contexts:
        cid = ctx["table"]["uid"]
        table = [[clean_cell(c) for c in row] for row in ctx["table"]["table"]]
        width = max(len(r) for r in table)
        table = [r + [""] * (width - len(r)) for r in table]
        head_rows, rows = split_header(table)
        header = build_header(head_rows, width)
        rows = [r for r in rows if any(c for c in r)]
        stats["header_rows"][len(head_rows)] = stats["header_rows"].get(len(head_rows), 0) + 1
        if any(re.fullmatch(r"col\d+(_\d+)?", h) for h in header):
            stats["generated_names"].append((cid, header))
        base, src, flat = start_context(out, "tatqa", cid, header, rows)
        for p in ctx["paragraphs"]:
            write_both(src, flat, os.path.join("text", f"p{p['order']}.txt"), p["text"])
        with open(os.path.join(base, "questions.jsonl"), "w", encoding="utf-8") as f:
            for q in ctx["questions"]:
                f.write(json.dumps({"id": q["uid"], "question": q["question"],
                                    "answers": answer_strings(q["answer"]),
                                    "answer_type": q["answer_type"],
                                    "answer_from": q["answer_from"],
                                    "scale": q.get("scale", "")}, ensure_ascii=False) + "\n")
        manifest.append({"id": cid, "source_id": cid, "questions": len(ctx["questions"]),
                         "rows": len(rows), "columns": header, "header_rows": len(head_rows),
                         "passages": len(ctx["paragraphs"])})
    write_manifest(os.path.join(out, "tatqa", "manifest.jsonl"), manifest)
    return manifest


def passage_title(link):
    """ "/wiki/Columbiana,_Ohio" -> "Columbiana, Ohio" """
    t = link[len("/wiki/"):] if link.startswith("/wiki/") else link.lstrip("/")
    return urllib.parse.unquote(t).replace("_", " ").strip()


def prepare_hybridqa(data, out, limit, stats):
    tdir = os.path.join(data, "hybridqa_ottqa_tables")
    ids = set(open(os.path.join(tdir, "HYBRIDQA_DEV_QUESTION_IDS_WITH_TABLE.txt")).read().split())
    dev = json.load(open(os.path.join(data, "hybridqa/released_data/dev.json"), encoding="utf-8"))
    traced = {}
    tpath = os.path.join(data, "hybridqa/released_data/dev.traced.json")
    if os.path.exists(tpath):
        for q in json.load(open(tpath, encoding="utf-8")):
            if q["question_id"] in ids:
                kinds = sorted({n[3] for n in q.get("answer-node", [])})
                traced[q["question_id"]] = "-".join(kinds) if kinds else "none"
    by_table = {}
    for q in dev:
        if q["question_id"] in ids:
            by_table.setdefault(q["table_id"], []).append(q)
    tables = sorted(by_table)
    if limit:
        tables = tables[:limit]
    manifest, used = [], set()
    for table_id in tables:
        t = json.load(open(os.path.join(tdir, "traindev_tables_tok", table_id + ".json"),
                           encoding="utf-8"))
        req_path = os.path.join(tdir, "traindev_request_tok", table_id + ".json")
        passages = json.load(open(req_path, encoding="utf-8")) if os.path.exists(req_path) else {}
        cid = safe_name(table_id)
        if cid != table_id:
            stats["renamed_tables"].append(table_id)
        while cid in used:
            cid += "_"
        used.add(cid)
        raw_header = [clean_cell(h[0]) for h in t["header"]]
        header = unique_names(raw_header)
        if header != raw_header:
            stats["hybrid_header_fixes"].append((table_id, raw_header, header))
        rows = [[clean_cell(c[0]) for c in row] for row in t["data"]]
        rows = [r + [""] * (len(header) - len(r)) for r in rows]
        base, src, flat = start_context(out, "hybridqa", cid, header, rows)
        about = f"# {t.get('title', '')}\n\n## {t.get('section_title', '')}\n\n"
        if t.get("section_text"):
            about += t["section_text"].strip() + "\n\n"
        about += (t.get("intro") or "").strip() + "\n"
        write_both(src, flat, "about.md", about)
        names = set()
        for link, text in sorted(passages.items()):
            title = passage_title(link)
            name = safe_name(title.replace(" ", "_"))
            if "/" in title:
                stats["slash_titles"].append(link)
            k = 2
            stem = name
            while name.lower() in names:  # case-insensitive file systems; "A/B" vs "A_B"
                name = f"{stem}_{k}"
                k += 1
            names.add(name.lower())
            write_both(src, flat, os.path.join("passages", name + ".txt"),
                       f"# {title}\n\n{text.strip()}\n")
        with open(os.path.join(base, "questions.jsonl"), "w", encoding="utf-8") as f:
            for q in by_table[table_id]:
                f.write(json.dumps({"id": q["question_id"], "question": q["question"],
                                    "answers": [q["answer-text"].strip()],
                                    "answer_type": "span",
                                    "answer_from": traced.get(q["question_id"], ""),
                                    "scale": ""}, ensure_ascii=False) + "\n")
        manifest.append({"id": cid, "source_id": table_id, "questions": len(by_table[table_id]),
                         "rows": len(rows), "columns": header, "header_rows": 1,
                         "passages": len(passages)})
    write_manifest(os.path.join(out, "hybridqa", "manifest.jsonl"), manifest)
    return manifest


def write_manifest(path, manifest):
    with open(path, "w", encoding="utf-8") as f:
        for m in manifest:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="/tmp/schemaqa")
    ap.add_argument("--limit", type=int, default=0, help="contexts (tables) per dataset; 0: all")
    ap.add_argument("--datasets", default="tatqa,hybridqa")
    ap.add_argument("--data", default=DEFAULT_DATA)
    args = ap.parse_args()
    stats = {"header_rows": {}, "generated_names": [], "renamed_tables": [],
             "hybrid_header_fixes": [], "slash_titles": []}
    for ds in args.datasets.split(","):
        for sub in (ds, ds + "_flat"):
            os.makedirs(os.path.join(args.out, sub), exist_ok=True)
        if ds == "tatqa":
            m = prepare_tatqa(args.data, args.out, args.limit, stats)
        elif ds == "hybridqa":
            m = prepare_hybridqa(args.data, args.out, args.limit, stats)
        else:
            sys.exit(f"unknown dataset {ds!r} (expected tatqa or hybridqa)")
        print(f"{ds}: {len(m)} folders, {sum(x['questions'] for x in m)} questions, "
              f"{sum(x['rows'] for x in m)} table rows, {sum(x['passages'] for x in m)} "
              f"paragraphs/passages -> {os.path.join(args.out, ds)}")
    if "tatqa" in args.datasets:
        print("tatqa header rows per table:", dict(sorted(stats["header_rows"].items())))
        print(f"tatqa tables with generated column names: {len(stats['generated_names'])}")
    if "hybridqa" in args.datasets:
        print(f"hybridqa tables with blank/duplicate header names fixed: "
              f"{len(stats['hybrid_header_fixes'])}; table ids renamed for the file system: "
              f"{len(stats['renamed_tables'])}; passage titles with '/': "
              f"{len(stats['slash_titles'])}")


if __name__ == "__main__":
    main()
