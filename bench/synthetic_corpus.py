#!/usr/bin/env python3
"""A synthetic corpus of N one-passage documents for capacity measurements (doc/scale.md).

Each document is about one named thing and mentions a few others by name, in sentences of the
length and shape of the benchmark passages (2wiki: ~60 words), so the graph grows with the
corpus as a real one does: every title becomes an entity, every passage links 3-6 others.
Deterministic for a given --seed.

--questions N also writes questions.jsonl beside the corpus (the benchmark
format of ../shared/data/bench: `flowrag eval --bench DIR`): N two-hop
questions, each from one link sentence "A <verb> B." of a random document
A, asking the year B was first recorded ("When was the thing that A <verb>
first recorded?"); gold: A's and B's passages. The corpus is the same with
or without them.

Usage: bench/synthetic_corpus.py --passages 100000 --out /tmp/synth/corpus.jsonl [--seed 7]
         [--questions 200]
"""
import argparse
import json
import os
import random

KINDS = ["river", "town", "company", "band", "film", "bridge", "school", "ship", "novel", "club"]
VERBS = ["was founded by", "lies near", "was named after", "was built by", "is owned by",
         "was written by", "is twinned with", "was renamed by", "was restored by", "borders"]
SYLLABLES = ["al", "bar", "cor", "dun", "el", "fen", "gar", "hol", "ist", "jor", "kel", "lor",
             "mar", "nor", "ost", "pen", "quar", "ros", "sal", "tor", "ul", "ven", "wyn", "zel"]
FILLER = ("It is known for its long history and for the people who lived and worked there. "
          "Records from the period describe its size, its trade and the families connected "
          "with it over several generations.")


def name(rng):
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize() + \
        " " + "".join(rng.choice(SYLLABLES) for _ in range(2)).capitalize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passages", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--questions", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    titles, seen = [], set()
    while len(titles) < args.passages:
        t = name(rng)
        if t not in seen:
            seen.add(t)
            titles.append(t)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    index = {t: i for i, t in enumerate(titles)}
    years, links = [], []
    with open(args.out, "w", encoding="utf-8") as f:
        for i, title in enumerate(titles):
            kind = KINDS[i % len(KINDS)]
            others = [titles[rng.randrange(len(titles))] for _ in range(rng.randint(3, 6))]
            year = rng.randint(1650, 2020)
            sentences = [f"{title} is a {kind} first recorded in {year}."]
            verbs = [rng.choice(VERBS) for _ in others]
            sentences += [f"{title} {v} {o}." for v, o in zip(verbs, others)]
            sentences.append(FILLER)
            f.write(json.dumps({"id": f"synth-{i:08d}", "title": title,
                                "text": " ".join(sentences)}) + "\n")
            years.append(year)
            links.append([(v, index[o]) for v, o in zip(verbs, others) if o != title])
    print(f"{len(titles)} documents -> {args.out}")
    if args.questions > 0:
        write_questions(args, titles, years, links)


def write_questions(args, titles, years, links):
    """Two-hop questions over the corpus's link sentences (module doc)."""
    rng = random.Random(args.seed + 1)
    out = os.path.join(os.path.dirname(os.path.abspath(args.out)), "questions.jsonl")
    written = 0
    with open(out, "w", encoding="utf-8") as f:
        while written < args.questions:
            a = rng.randrange(len(titles))
            if not links[a]:
                continue
            verb, b = rng.choice(links[a])
            f.write(json.dumps({
                "id": f"synth-q{written:05d}",
                "question": f"When was the thing that {titles[a]} {verb} first recorded?",
                "answers": [str(years[b])],
                "gold_ids": [f"synth-{a:08d}", f"synth-{b:08d}"],
                "gold_titles": [titles[a], titles[b]],
                "type": "compositional"}) + "\n")
            written += 1
    print(f"{written} questions -> {out}")


if __name__ == "__main__":
    main()
