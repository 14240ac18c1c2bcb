"""flowrag: a graph retrieval engine for RAG, from Python.

    import flowrag
    eng = flowrag.Engine("docs.db")
    eng.index(["docs/"])
    hits = eng.query("Who designed the Brannock lens?", method="qafd", top_k=5)
    ans = eng.ask("...", pipeline="cot")

The engine is C++ (include/flowrag/); this package wraps its extension
module ``flowrag._flowrag``. Results are typed objects with ``to_dict()``;
errors are :class:`flowrag.Error` subclasses carrying the engine's status
code and message. Models can be Python callables: see :class:`Engine`.
"""

from __future__ import annotations

from ._prerequisites import check_prerequisites

check_prerequisites()

from . import _flowrag  # noqa: E402  (after the check, which names what is missing)
from ._engine import Engine, method_options, methods
from ._evaluate import cache_dir, evaluate
from ._flowrag import (Answer, AnswerStep, ChatModel, Citation, Embedder, EvalReport,
                       GraphEdge, GraphNode, GraphStats, IndexReport, MethodOption,
                       QuestionRecord, RetrievalDiagnostics, RetrievalResult, SchemaStats,
                       ScoredPassage, SegmentFileStats, SegmentStats, StoreStats,
                       TokenUsage)
from ._models import (OpenAIChat, OpenAIEmbedder, PythonChatModel, PythonEmbedder,
                      python_chat_model, python_embedder)
from ._results import install as _install_results
from .errors import (AlreadyExists, Cancelled, Corruption, DeadlineExceeded, Error,
                     FailedPrecondition, Internal, InvalidArgument, IoError, NotFound,
                     Unavailable)

_install_results()

__version__ = "0.1.0"

__all__ = [
    "Engine", "evaluate", "methods", "method_options", "cache_dir",
    "OpenAIEmbedder", "OpenAIChat", "PythonEmbedder", "PythonChatModel", "python_embedder",
    "python_chat_model", "Embedder", "ChatModel",
    "RetrievalResult", "ScoredPassage", "RetrievalDiagnostics", "GraphNode", "GraphEdge",
    "Answer", "Citation", "AnswerStep", "TokenUsage", "IndexReport", "StoreStats",
    "GraphStats", "SchemaStats", "SegmentStats", "SegmentFileStats", "EvalReport", "QuestionRecord", "MethodOption",
    "Error", "InvalidArgument", "NotFound", "AlreadyExists", "Corruption", "IoError",
    "Unavailable", "DeadlineExceeded", "FailedPrecondition", "Cancelled", "Internal",
]
