#!/usr/bin/env python3
"""How much stripping diacritics would change matching on the English benchmarks.

For each benchmark folder (corpus.jsonl, questions.jsonl) under ../shared/data/bench: question
words (NFKC + casefold, \\w+) with diacritics; those absent from the corpus accented but present
stripped; plain question words found in the corpus only accented; vocabulary pairs and titles that
stripping would merge. Figures in bench/out/unicode_tokenizer.md; the decision in doc/text.md.

Usage: bench/diacritics_stats.py
"""
import collections
import json
import os
import re
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def fold(s): return unicodedata.normalize('NFKC', s).casefold()
def strip(s): return ''.join(c for c in unicodedata.normalize('NFD', s) if not unicodedata.combining(c))
word = re.compile(r"\w+", re.U)
for b in ['2wiki','musique-dev','hotpotqa-train','2wiki-train','musique-train']:
    d=os.path.join(ROOT, '../shared/data/bench', b)
    vocab=collections.Counter(); titles=set()
    for l in open(d+'/corpus.jsonl'):
        j=json.loads(l); titles.add(j['title'])
        for w in word.findall(fold(j['title']+' '+j['text'])): vocab[w]+=1
    acc=[w for w in vocab if strip(w)!=w]
    # question words with diacritics
    qn=qacc=qmiss_kept=qhelp_strip=qhurt=0
    for l in open(d+'/questions.jsonl'):
        q=json.loads(l)['question']
        for w in word.findall(fold(q)):
            qn+=1
            s=strip(w)
            stripped_forms = {x for x in [w] }
            if s!=w:
                qacc+=1
                if w not in vocab and s in vocab: qhelp_strip+=1
            else:
                # ascii-ish question word: would stripping let it meet accented corpus words?
                pass
    # plain question words whose only corpus occurrences are accented variants
    strip_index=collections.defaultdict(set)
    for w in vocab: strip_index[strip(w)].add(w)
    plain_help=0
    for l in open(d+'/questions.jsonl'):
        q=json.loads(l)['question']
        for w in word.findall(fold(q)):
            if strip(w)==w and w not in vocab and any(v!=w for v in strip_index.get(w,())): plain_help+=1
    # title collisions when stripping
    keys=collections.defaultdict(set)
    for t in titles: keys[strip(fold(t))].add(fold(t))
    coll=[v for v in keys.values() if len(v)>1]
    merged_vocab=sum(1 for k,v in strip_index.items() if len(v)>1)
    print(f"{b}: question words {qn}, with diacritics {qacc}, accented q-word absent but stripped present {qhelp_strip}, plain q-word absent but accented corpus form present {plain_help}; corpus words with diacritics {len(acc)} of {len(vocab)}; vocab words merged by stripping {merged_vocab}; title keys merged by stripping {len(coll)} e.g. {[sorted(c) for c in coll[:3]]}")
