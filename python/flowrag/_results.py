"""to_dict() and repr() for the result classes of the extension module.

Each result class lists its fields in ``_fields``; to_dict() converts them
recursively (nested results, lists and dicts) into plain Python values that
json.dumps accepts.
"""

from __future__ import annotations

from typing import Any

from . import _flowrag

RESULT_TYPES = (
    _flowrag.ScoredPassage, _flowrag.RetrievalDiagnostics, _flowrag.GraphNode,
    _flowrag.GraphEdge, _flowrag.RetrievalResult, _flowrag.MethodOption, _flowrag.Citation,
    _flowrag.TokenUsage, _flowrag.AnswerStep, _flowrag.Answer, _flowrag.IndexReport,
    _flowrag.GraphStats, _flowrag.SchemaStats, _flowrag.SegmentFileStats, _flowrag.SegmentStats,
    _flowrag.StoreStats, _flowrag.QuestionRecord,
    _flowrag.EvalReport,
)


def _plain(value: Any) -> Any:
    if hasattr(type(value), "_fields"):
        return to_dict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def to_dict(self: Any) -> dict[str, Any]:
    """The result as plain dicts, lists and scalars (json.dumps-able)."""
    return {name: _plain(getattr(self, name)) for name in type(self)._fields}


def _short(value: Any) -> str:
    if isinstance(value, list):
        return f"[{len(value)} items]"
    if isinstance(value, str) and len(value) > 60:
        return repr(value[:57] + "...")
    if hasattr(type(value), "_fields"):
        return f"{type(value).__name__}(...)"
    return repr(value)


def _repr(self: Any) -> str:
    fields = ", ".join(f"{n}={_short(getattr(self, n))}" for n in type(self)._fields[:8])
    more = ", ..." if len(type(self)._fields) > 8 else ""
    return f"{type(self).__name__}({fields}{more})"


def _scores(self: Any) -> Any:
    import numpy as np
    return np.fromiter((p.score for p in self.passages), dtype=np.float64,
                       count=len(self.passages))


def install() -> None:
    for cls in RESULT_TYPES:
        cls.to_dict = to_dict
        cls.__repr__ = _repr
    _flowrag.RetrievalResult.scores = property(
        _scores, doc="The passages' scores, best first, as a float64 NumPy array.")
