"""flowrag.evaluate: Recall@k (and EM/F1) on a benchmark folder, as
``flowrag eval`` computes them (include/flowrag/eval.h)."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Sequence

from . import _checks as ck
from . import _flowrag


def cache_dir() -> str:
    """Where evaluate() keeps a store per benchmark: FLOWRAG_CACHE_DIR, else
    $XDG_CACHE_HOME/flowrag, else ~/.cache/flowrag (as the CLI)."""
    if os.environ.get("FLOWRAG_CACHE_DIR"):
        return os.environ["FLOWRAG_CACHE_DIR"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "flowrag")
    if os.environ.get("HOME"):
        return os.path.join(os.environ["HOME"], ".cache", "flowrag")
    return ".flowrag-cache"


def _bench_name(bench: str) -> str:
    try:
        with open(os.path.join(bench, "meta.json"), encoding="utf-8") as f:
            name = json.load(f).get("name")
        if isinstance(name, str) and name:
            return name
    except (OSError, ValueError, AttributeError):
        pass
    return os.path.basename(os.path.normpath(bench))


def evaluate(bench: Any, *, methods: Sequence[str] = ("auto",), db: Any = None,
             ks: Sequence[int] = (1, 2, 5, 10), limit: int = 0,
             params: Optional[Mapping[str, Any]] = None, answers: bool = False,
             pipeline: str = "single", chunking: str = "none", embedder: Any = None,
             chat: Any = None, progress: bool = False) -> dict[str, "_flowrag.EvalReport"]:
    """Evaluates each of ``methods`` on the benchmark folder ``bench``
    (corpus.jsonl, questions.jsonl, meta.json) and returns {method: EvalReport}.

    ``db`` None: a store per benchmark in :func:`cache_dir`; an empty store
    gets the corpus indexed first, a store holding documents is evaluated as
    it is. ``answers`` also answers every question with ``pipeline`` and
    scores EM/F1.
    """
    from ._engine import Engine
    where = "evaluate"
    if not isinstance(bench, (str, os.PathLike)):
        raise TypeError(f"{where}: bench must be a path, not {ck.type_name(bench)}")
    bench = os.fspath(bench)
    ck.check_str(where, "chunking", chunking)
    if db is None:
        os.makedirs(cache_dir(), exist_ok=True)
        db = os.path.join(cache_dir(), f"{_bench_name(bench)}-{chunking}.db")
    with Engine(db, embedder=embedder, chat=chat) as eng:
        if eng.stats().documents == 0:
            eng.index([bench], chunking=chunking, progress=progress)
        return evaluate_engine(eng, bench, methods=methods, ks=ks, limit=limit, params=params,
                               answers=answers, pipeline=pipeline)


def evaluate_engine(eng: Any, bench: Any, *, methods: Sequence[str], ks: Sequence[int],
                    limit: int, params: Optional[Mapping[str, Any]], answers: bool,
                    pipeline: str) -> dict[str, "_flowrag.EvalReport"]:
    where = "evaluate"
    if not isinstance(bench, (str, os.PathLike)):
        raise TypeError(f"{where}: bench must be a path, not {ck.type_name(bench)}")
    if isinstance(methods, str):
        methods = [methods]
    ks = [ck.check_int(where, f"ks[{i}]", k, 1) for i, k in enumerate(ks)]
    reports = {}
    for i, method in enumerate(methods):
        o = _flowrag.EvalOptions()
        o.ks = ks
        o.limit = ck.check_int(where, "limit", limit, 0)
        o.query.method = ck.check_str(where, f"methods[{i}]", method)
        o.query.params = ck.check_params(where, params)
        o.answers = ck.check_bool(where, "answers", answers)
        o.answer.pipeline = ck.check_str(where, "pipeline", pipeline)
        reports[method] = eng._native.evaluate(os.fspath(bench), o)
    return reports
