"""The package's metadata from pyproject.toml's [project] table.

Python 3.11+ reads the file with tomllib. Older Pythons (3.9, 3.10) have no
TOML reader in the standard library and the backend may not depend on one
(requires = []), so read_project_table falls back to read_project_subset: it
reads exactly the TOML this file uses in [project] (`key = "string"` and
`key = ["string", ...]`, arrays over several lines, comments) and refuses
anything else by line, so a new kind of entry fails loudly instead of being
misread. tests/test_build_backend.py checks both readers agree on the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .errors import BuildError

# The [project] keys the backend turns into wheel metadata (wheel.py).
SUPPORTED_KEYS = {"name", "version", "description", "readme", "requires-python",
                  "dependencies", "classifiers"}

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_KEY = re.compile(r"^([A-Za-z0-9_-]+)\s*=\s*(.*)$")


def read_project_table(pyproject: Path) -> dict:
    """[project] of `pyproject`, checked to use only SUPPORTED_KEYS."""
    try:
        import tomllib
    except ModuleNotFoundError:
        project = read_project_subset(pyproject.read_text(encoding="utf-8"), pyproject.name)
    else:
        with open(pyproject, "rb") as f:
            project = tomllib.load(f).get("project", {})
    for key in ("name", "version"):
        if not isinstance(project.get(key), str):
            raise BuildError(f"{pyproject}: [project].{key} must be a string")
    unsupported = sorted(set(project) - SUPPORTED_KEYS)
    if unsupported:
        raise BuildError(f"{pyproject}: [project] keys {unsupported} are not supported by the "
                         "in-tree backend (python/backend/flowrag_build)")
    return project


def read_project_subset(text: str, where: str = "pyproject.toml") -> dict:
    """[project] of the TOML `text`, reading only string and string-array values."""
    project: dict = {}
    table = None
    pending = None  # (key, first line number, text so far) of an unfinished array
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).strip()
        if pending:
            key, first, so_far = pending
            so_far += " " + line
            if line.endswith("]"):
                project[key] = _string_array(so_far, where, first)
                pending = None
            else:
                pending = (key, first, so_far)
            continue
        if not line:
            continue
        if line.startswith("["):
            table = line.strip("[] ")
            if table.startswith("project."):
                raise BuildError(f"{where}:{number}: [{table}] is not supported by the in-tree "
                                 "backend (python/backend/flowrag_build)")
            continue
        if table != "project":
            continue
        match = _KEY.match(line)
        if not match:
            raise BuildError(f"{where}:{number}: expected `key = value` in [project]")
        key, value = match.groups()
        if value.startswith("[") and not value.endswith("]"):
            pending = (key, number, value)
        elif value.startswith("["):
            project[key] = _string_array(value, where, number)
        else:
            project[key] = _string(value, where, number)
    if pending:
        raise BuildError(f"{where}:{pending[1]}: the array of {pending[0]} is not closed")
    return project


def _strip_comment(line: str) -> str:
    """`line` without a # comment (a # inside a string stays)."""
    in_string = escaped = False
    for i, c in enumerate(line):
        if escaped:
            escaped = False
        elif c == "\\" and in_string:
            escaped = True
        elif c == '"':
            in_string = not in_string
        elif c == "#" and not in_string:
            return line[:i]
    return line


def _string(value: str, where: str, number: int) -> str:
    if not _STRING.fullmatch(value):
        raise BuildError(f"{where}:{number}: the in-tree backend reads only \"strings\" and "
                         "arrays of them in [project] on Python < 3.11")
    return json.loads(value)


def _string_array(value: str, where: str, number: int) -> list:
    rest = _STRING.sub("", value[1:-1])
    if rest.replace(",", "").strip():
        raise BuildError(f"{where}:{number}: the in-tree backend reads only arrays of "
                         "\"strings\" in [project] on Python < 3.11")
    return [json.loads(s) for s in _STRING.findall(value[1:-1])]
