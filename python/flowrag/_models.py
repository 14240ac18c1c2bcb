"""Models for an Engine: Python callables, or OpenAI-compatible endpoints.

An embedder is ``fn(texts: list[str]) -> array`` of shape ``(len(texts), dim)``
(a NumPy array, a list of lists, anything ``numpy.asarray`` reads); rows are
L2-normalised by the engine. A chat model is ``fn(messages: list[dict]) -> str``
where each message is ``{"role": ..., "content": ...}``; it may also return a
dict with ``"content"`` (and ``"prompt_tokens"``, ``"completion_tokens"``), and
when it accepts the keyword arguments ``temperature``, ``max_tokens`` and
``json_mode`` (or ``**kwargs``) it gets them.

The engine calls them from its own threads, one call at a time per
interpreter (each call holds the GIL).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Optional

from . import _flowrag

__all__ = ["OpenAIEmbedder", "OpenAIChat", "PythonEmbedder", "PythonChatModel",
           "python_embedder", "python_chat_model"]

PythonEmbedder = _flowrag.PythonEmbedder
PythonChatModel = _flowrag.PythonChatModel


@dataclass(frozen=True)
class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, TEI, ...)."""

    model: str = "text-embedding-3-small"
    base_url: str = "https://api.openai.com/v1"
    api_key: str = ""          # empty: no Authorization header (local servers)
    batch_size: int = 64       # inputs per request
    timeout_ms: int = 30000    # per request
    concurrency: int = 4       # requests in flight
    max_retries: int = 4
    dimensions: int = 0        # 0: the model's own

    def _native(self) -> "_flowrag.OpenAiEmbedderOptions":
        o = _flowrag.OpenAiEmbedderOptions()
        o.model, o.base_url, o.api_key = self.model, self.base_url, self.api_key
        o.batch_size, o.timeout_ms = self.batch_size, self.timeout_ms
        o.max_concurrency, o.max_retries, o.dimensions = (
            self.concurrency, self.max_retries, self.dimensions)
        return o


@dataclass(frozen=True)
class OpenAIChat:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint (OpenAI, vLLM, Ollama, ...)."""

    model: str = "gpt-4o-mini"
    base_url: str = "https://api.openai.com/v1"
    api_key: str = ""
    timeout_ms: int = 120000
    concurrency: int = 4
    max_retries: int = 4

    def _native(self) -> "_flowrag.OpenAiChatOptions":
        o = _flowrag.OpenAiChatOptions()
        o.model, o.base_url, o.api_key = self.model, self.base_url, self.api_key
        o.timeout_ms, o.max_concurrency, o.max_retries = (
            self.timeout_ms, self.concurrency, self.max_retries)
        return o


def _callable_name(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"{module}.{name}" if module else name


def _accepts_options(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return True
    names = {p.name for p in params}
    return {"temperature", "max_tokens", "json_mode"} <= names


def python_embedder(fn: Callable[[list[str]], Any], *, name: Optional[str] = None,
                    dimension: int = 0) -> PythonEmbedder:
    """A callable as the engine's embedder.

    ``name`` identifies the model in the store's embedding cache (vectors are
    kept per name: change it when the model changes); default: the callable's
    qualified name. ``dimension`` 0 takes the width of the first answer.
    """
    if not callable(fn):
        raise TypeError(f"embedder: expected a callable, got {type(fn).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"embedder name: expected str, got {type(name).__name__}")
    _check_count("embedder dimension", dimension, minimum=0)
    return PythonEmbedder(fn, name or _callable_name(fn), dimension)


def python_chat_model(fn: Callable[..., Any], *, name: Optional[str] = None) -> PythonChatModel:
    """A callable as the engine's chat model (``Answer.answerer`` is ``llm:python:<name>``)."""
    if not callable(fn):
        raise TypeError(f"chat: expected a callable, got {type(fn).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"chat name: expected str, got {type(name).__name__}")
    return PythonChatModel(fn, name or _callable_name(fn), _accepts_options(fn))


def _check_count(what: str, value: Any, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected int, got {type(value).__name__}")
    if value < minimum:
        from .errors import InvalidArgument
        raise InvalidArgument(f"{what}: expected an int >= {minimum}, got {value}")
    return value


def engine_models(options: "_flowrag.EngineOptions", embedder: Any, chat: Any) -> None:
    """Sets the model fields of ``options`` from Engine(embedder=..., chat=...)."""
    if embedder is None:
        pass
    elif isinstance(embedder, str):
        if embedder not in ("hash", "openai"):
            from .errors import InvalidArgument
            raise InvalidArgument(
                f'embedder "{embedder}": expected "hash", "openai", an OpenAIEmbedder or a callable')
        options.embedder = embedder
    elif isinstance(embedder, OpenAIEmbedder):
        options.embedder = "openai"
        options.openai_embedder = embedder._native()
    elif isinstance(embedder, _flowrag.Embedder):
        options.custom_embedder = embedder
    elif callable(embedder):
        options.custom_embedder = python_embedder(embedder)
    else:
        raise TypeError("embedder: expected None, 'hash', 'openai', an OpenAIEmbedder or a "
                        f"callable, got {type(embedder).__name__}")
    if chat is None:
        pass
    elif isinstance(chat, OpenAIChat):
        options.openai_chat = chat._native()
    elif isinstance(chat, _flowrag.ChatModel):
        options.chat_model = chat
    elif callable(chat):
        options.chat_model = python_chat_model(chat)
    else:
        raise TypeError("chat: expected None, an OpenAIChat or a callable, got "
                        f"{type(chat).__name__}")
