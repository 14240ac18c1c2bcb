"""Shared fixtures: the repository's demo corpus, fresh stores, and toy
models (a NumPy hashing embedder, a scripted chat model)."""

import json
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

import flowrag

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "demo"
QUESTIONS = [json.loads(line) for line in
             (REPO / "examples" / "demo_questions.jsonl").read_text().splitlines() if line]


def hashing_embedder(dim=64):
    """Words hashed into ``dim`` signed buckets: a deterministic toy model."""
    def embed(texts):
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                h = zlib.crc32(word.encode())
                out[i, h % dim] += 1.0 if (h >> 20) & 1 else -1.0
        return out
    return embed


class ScriptedChat:
    """A chat model answering every prompt with one fixed short answer."""

    def __init__(self, answer="Wrenfield"):
        self.answer = answer
        self.calls = 0

    def __call__(self, messages):
        assert all(set(m) == {"role", "content"} for m in messages)
        self.calls += 1
        # Both the answer prompt's and the chain-of-thought step's fields.
        return json.dumps({"reasoning": "the passages say so", "final_answer": self.answer,
                           "answer_possible": True, "provided_context": "the passages",
                           "citations": [1]})


@pytest.fixture
def store(tmp_path):
    return str(tmp_path / "store.db")


@pytest.fixture
def demo(store):
    """An engine over a fresh store holding the demo corpus and its graph."""
    with flowrag.Engine(store) as eng:
        eng.index([DEMO], extractor="heuristic")
        yield eng
