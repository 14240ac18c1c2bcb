"""Argument checks of the public API: wrong types raise TypeError, bad values
flowrag.InvalidArgument, each naming the function and the argument."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import InvalidArgument


def type_name(value: Any) -> str:
    return type(value).__name__


def check_str(where: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{where}: {name} must be str, not {type_name(value)}")
    return value


def check_bool(where: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{where}: {name} must be bool, not {type_name(value)}")
    return value


def check_int(where: str, name: str, value: Any, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: {name} must be int, not {type_name(value)}")
    if value < minimum:
        raise InvalidArgument(f"{where}: {name} must be >= {minimum}, got {value}")
    return value


def check_number(where: str, name: str, value: Any, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{where}: {name} must be a number, not {type_name(value)}")
    if not value >= minimum:
        raise InvalidArgument(f"{where}: {name} must be >= {minimum}, got {value}")
    return float(value)


def param_text(value: Any) -> str:
    """A method option value as the engine reads it (bool as true/false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return value if isinstance(value, str) else repr(value)
    raise TypeError(f"expected str, int, float or bool, not {type_name(value)}")


def check_params(where: str, params: Any) -> dict[str, str]:
    """``params`` ({"qafd.alpha": 50, ...}) as the engine's string map."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TypeError(f"{where}: params must be a dict of option -> value, not "
                        f"{type_name(params)}")
    out = {}
    for key, value in params.items():
        if not isinstance(key, str):
            raise TypeError(f"{where}: params keys must be str, not {type_name(key)} ({key!r})")
        try:
            out[key] = param_text(value)
        except TypeError as e:
            raise TypeError(f"{where}: params[{key!r}]: {e}") from None
    return out


def check_sources(where: str, sources: Any) -> list[str]:
    """Paths: one str/PathLike, or an iterable of them."""
    if isinstance(sources, (str, os.PathLike)):
        return [os.fspath(sources)]
    if isinstance(sources, (bytes, Mapping)) or not isinstance(sources, Iterable):
        raise TypeError(f"{where}: sources must be a path or a list of paths or documents, "
                        f"not {type_name(sources)}")
    out = []
    for i, s in enumerate(sources):
        if not isinstance(s, (str, os.PathLike)):
            raise TypeError(f"{where}: sources[{i}] must be a path (str or os.PathLike), "
                            f"not {type_name(s)}")
        out.append(os.fspath(s))
    return out


def check_documents(where: str, documents: list[Any]) -> list[tuple[str, str, str]]:
    """Documents {"id", "title", "text"} as (id, title, text) tuples."""
    out = []
    for i, d in enumerate(documents):
        if not isinstance(d, Mapping):
            raise TypeError(f"{where}: documents[{i}] must be a dict with \"id\" and \"text\", "
                            f"not {type_name(d)}")
        fields = []
        for key, required in (("id", True), ("title", False), ("text", True)):
            if key not in d:
                if required:
                    raise InvalidArgument(f"{where}: documents[{i}] has no \"{key}\"")
                fields.append("")
                continue
            if not isinstance(d[key], str):
                raise TypeError(f"{where}: documents[{i}][\"{key}\"] must be str, not "
                                f"{type_name(d[key])}")
            fields.append(d[key])
        out.append((fields[0], fields[1], fields[2]))
    return out


def check_texts(where: str, texts: Any) -> list[str]:
    if isinstance(texts, str):
        return [texts]
    if not isinstance(texts, Iterable):
        raise TypeError(f"{where}: texts must be a list of str, not {type_name(texts)}")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"{where}: texts[{i}] must be str, not {type_name(t)}")
    return out
