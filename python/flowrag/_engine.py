"""flowrag.Engine: one store (a SQLite file or a PostgreSQL workspace) and
the in-memory snapshot queries read.

Thread-safety: query, ask, stats and embed may run from many threads at
once, beside one index or delete (writers take turns); every call releases
the GIL while the engine works. The a* methods run the same calls in a
worker thread for asyncio.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _checks as ck
from . import _flowrag
from ._models import engine_models
from .errors import InvalidArgument, NotFound

PathLike = Union[str, "os.PathLike[str]"]
Document = Mapping[str, str]


class Engine:
    """A flowrag engine over one store.

    >>> eng = flowrag.Engine("docs.db")            # or "postgresql://...?workspace=name"
    >>> eng.index(["docs/"])                       # or [{"id", "title", "text"}, ...]
    >>> eng.query("Who designed the Brannock lens?", method="qafd", top_k=5)

    ``embedder``: None (what the store was indexed with, else the built-in
    hashed embedder), ``"hash"``, ``"openai"`` (configured by FLOWRAG_EMBED_*),
    an :class:`OpenAIEmbedder`, or a callable ``list[str] -> (n, dim) array``
    (see :func:`python_embedder` for naming it). ``chat``: None (FLOWRAG_LLM_*
    when set, else offline), an :class:`OpenAIChat`, or a callable
    ``messages -> str`` (:func:`python_chat_model`). A chat model is used by
    the "llm" extractor (and "auto", the default), the graph methods'
    query-time steps and ask().
    """

    def __init__(self, db: PathLike, *, embedder: Any = None, chat: Any = None,
                 read_only: bool = False, hash_dimension: int = 1024,
                 hnsw_threshold: int = 20000, passage_ann: str = "auto",
                 writer_wait_ms: int = 3_600_000,
                 follow_store: bool = False, language: str = "") -> None:
        where = "Engine()"
        if not isinstance(db, (str, os.PathLike)):
            raise TypeError(f"{where}: db must be a path or a postgresql:// URL, not "
                            f"{ck.type_name(db)}")
        o = _flowrag.EngineOptions()
        engine_models(o, embedder, chat)
        o.read_only = ck.check_bool(where, "read_only", read_only)
        o.hash_dimension = ck.check_int(where, "hash_dimension", hash_dimension, 1)
        o.hnsw_threshold = ck.check_int(where, "hnsw_threshold", hnsw_threshold, 0)
        # "auto", "hnsw" or "int8": the passage index above hnsw_threshold.
        o.passage_ann = ck.check_str(where, "passage_ann", passage_ann)
        o.writer_wait_ms = ck.check_int(where, "writer_wait_ms", writer_wait_ms, 0)
        o.follow_store = ck.check_bool(where, "follow_store", follow_store)
        # "" = the store's, else "english-s"; "none" or a Snowball language (doc/text.md).
        o.language = ck.check_str(where, "language", language)
        self._native = _flowrag.Engine.open(os.fspath(db), o)

    # ---- lifecycle

    @property
    def location(self) -> str:
        """The store: a file path, or the PostgreSQL URL without its password."""
        return self._native.location

    @property
    def closed(self) -> bool:
        return self._native.closed

    def close(self) -> None:
        """Closes the store; later calls raise FailedPrecondition. Calls still
        running finish first (on their own reference). Idempotent."""
        self._native.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<flowrag.Engine {self.location!r} ({state})>"

    # ---- writing

    def index(self, sources: Union[PathLike, Iterable[Union[PathLike, Document]]], *,
              chunking: str = "window", extractor: str = "auto", workers: int = 1,
              batch_size: int = 256, embed_batch_size: int = 512,
              window_words: int = 500, overlap_words: int = 200,
              skip_bad_records: bool = False, refit: bool = False, dry_run: bool = False,
              llm_prompt_style: str = "openie",
              progress: bool = False) -> "_flowrag.IndexReport":
        """Indexes paths (directories of .txt/.md, .jsonl, .json lists, benchmark
        folders) or documents ``{"id", "title", "text"}`` given directly.

        Unchanged documents are skipped; a document whose id exists is
        replaced. ``chunking``: "window" (500-word windows, 200 overlap),
        "boundary" or "none". ``extractor``: "auto", "heuristic", "llm" or
        "none". Ctrl-C stops between batches: what was committed stays and
        the next run resumes. Errors name the file and line, or the document
        (``documents[3].text``).
        """
        where = "Engine.index"
        items = list(sources) if not isinstance(sources, (str, os.PathLike, Mapping)) and \
            isinstance(sources, Iterable) else sources
        o = _flowrag.IndexOptions()
        o.chunking = ck.check_str(where, "chunking", chunking)
        o.extractor = ck.check_str(where, "extractor", extractor)
        o.llm_prompt_style = ck.check_str(where, "llm_prompt_style", llm_prompt_style)
        o.workers = ck.check_int(where, "workers", workers, 1)
        o.batch_size = ck.check_int(where, "batch_size", batch_size, 1)
        o.embed_batch_size = ck.check_int(where, "embed_batch_size", embed_batch_size, 1)
        o.window_words = ck.check_int(where, "window_words", window_words, 1)
        o.overlap_words = ck.check_int(where, "overlap_words", overlap_words, 0)
        o.skip_bad_records = ck.check_bool(where, "skip_bad_records", skip_bad_records)
        o.refit = ck.check_bool(where, "refit", refit)
        o.dry_run = ck.check_bool(where, "dry_run", dry_run)
        o.progress = ck.check_bool(where, "progress", progress)
        if isinstance(items, list) and items and isinstance(items[0], Mapping):
            return self._native.index_documents(ck.check_documents(where, items), o)
        return self._native.index(ck.check_sources(where, items), o)

    def delete(self, document_ids: Union[str, Iterable[str]], *,
               missing_ok: bool = False) -> int:
        """Deletes documents by id (and what only they supported in the graph);
        returns how many were deleted. An id not in the store raises NotFound
        (those before it are deleted) unless ``missing_ok``."""
        where = "Engine.delete"
        ids = [document_ids] if isinstance(document_ids, str) else document_ids
        if not isinstance(ids, Iterable):
            raise TypeError(f"{where}: document_ids must be str or a list of str, not "
                            f"{ck.type_name(document_ids)}")
        ids = list(ids)
        for i, d in enumerate(ids):
            if not isinstance(d, str):
                raise TypeError(f"{where}: document_ids[{i}] must be str, not {ck.type_name(d)}")
        deleted = 0
        for d in ids:
            try:
                self._native.delete(d)
                deleted += 1
            except NotFound:
                if not missing_ok:
                    raise
        return deleted

    def compact(self) -> None:
        """Writes the store's segments now: the snapshot of a store written
        before segments (or by a process that could not write them) becomes
        one segment, its snapshot parts dropped (``flowrag compact``)."""
        self._native.compact()

    def refresh(self) -> bool:
        """Loads what other processes wrote to the store; True when it changed."""
        return self._native.refresh()

    # ---- reading

    def query(self, question: str, *, method: str = "auto", top_k: int = 5,
              params: Optional[Mapping[str, Any]] = None,
              explain: bool = False) -> "_flowrag.RetrievalResult":
        """Ranked passages for ``question``.

        ``method``: see :func:`methods` ("auto" is qafd on a store with a
        graph, else hybrid). ``params`` override the method's options
        (:func:`method_options` lists them), e.g. ``{"qafd.alpha": 50}``.
        ``explain`` also computes the subgraph's edges and a path per passage.
        """
        return self._native.query(question, _query_options("Engine.query", question, method,
                                                            top_k, params, explain))

    def ask(self, question: str, *, pipeline: str = "auto", method: str = "auto",
            top_k: int = 5, params: Optional[Mapping[str, Any]] = None,
            answerer: str = "auto", style: str = "short", max_steps: int = 3,
            context_passages: int = 5, deadline_ms: float = 0.0) -> "_flowrag.Answer":
        """A grounded answer with citations, steps, usage and the retrieval.

        ``pipeline``: "single", "cot", "decompose", "schema" or "auto".
        ``answerer``: "auto" (the chat model when there is one, else
        "extractive"), "extractive" or "llm". A chat model that fails
        mid-pipeline gives the extractive answer, said in ``warnings``.
        """
        where = "Engine.ask"
        o = _flowrag.AnswerOptions()
        o.query = _query_options(where, question, method, top_k, params, False)
        o.pipeline = ck.check_str(where, "pipeline", pipeline)
        o.answerer = ck.check_str(where, "answerer", answerer)
        o.style = ck.check_str(where, "style", style)
        o.max_steps = ck.check_int(where, "max_steps", max_steps, 1)
        o.context_passages = ck.check_int(where, "context_passages", context_passages, 1)
        o.deadline_ms = ck.check_number(where, "deadline_ms", deadline_ms)
        return self._native.ask(question, o)

    def stats(self) -> "_flowrag.StoreStats":
        """Documents, passages, embeddings and graph statistics of the store."""
        return self._native.stats()

    def embed(self, texts: Union[str, Sequence[str]]) -> np.ndarray:
        """The engine embedder's vectors of ``texts``: a (n, dim) float32 array."""
        return self._native.embed(ck.check_texts("Engine.embed", texts))

    def evaluate(self, bench: PathLike, *, methods: Sequence[str] = ("auto",),
                 ks: Sequence[int] = (1, 2, 5, 10), limit: int = 0,
                 params: Optional[Mapping[str, Any]] = None, answers: bool = False,
                 pipeline: str = "single") -> dict[str, "_flowrag.EvalReport"]:
        """Recall@k (and with ``answers`` EM/F1) of each method on a benchmark
        folder (questions.jsonl) whose corpus this store holds."""
        from ._evaluate import evaluate_engine
        return evaluate_engine(self, bench, methods=methods, ks=ks, limit=limit,
                               params=params, answers=answers, pipeline=pipeline)

    # ---- asyncio: the same calls in a worker thread

    async def aindex(self, *args: Any, **kwargs: Any) -> "_flowrag.IndexReport":
        return await asyncio.to_thread(self.index, *args, **kwargs)

    async def aquery(self, *args: Any, **kwargs: Any) -> "_flowrag.RetrievalResult":
        return await asyncio.to_thread(self.query, *args, **kwargs)

    async def aask(self, *args: Any, **kwargs: Any) -> "_flowrag.Answer":
        return await asyncio.to_thread(self.ask, *args, **kwargs)

    async def adelete(self, *args: Any, **kwargs: Any) -> int:
        return await asyncio.to_thread(self.delete, *args, **kwargs)

    async def astats(self) -> "_flowrag.StoreStats":
        return await asyncio.to_thread(self.stats)


def _query_options(where: str, question: Any, method: Any, top_k: Any, params: Any,
                   explain: Any) -> "_flowrag.QueryOptions":
    ck.check_str(where, "question", question)
    o = _flowrag.QueryOptions()
    o.method = ck.check_str(where, "method", method)
    o.top_k = ck.check_int(where, "top_k", top_k, 1)
    o.params = ck.check_params(where, params)
    o.explain = ck.check_bool(where, "explain", explain)
    return o


def methods() -> list[str]:
    """The retrieval methods: "auto", then bm25, dense, hybrid and the graph methods."""
    return _flowrag.methods()


def method_options(method: str) -> list["_flowrag.MethodOption"]:
    """The per-query options ``method`` reads (``params`` of query/ask), with
    their types and defaults. InvalidArgument for an unknown method or "auto"."""
    ck.check_str("method_options", "method", method)
    return _flowrag.method_options(method)
