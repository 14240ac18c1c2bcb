"""Writing a wheel (PEP 427, PEP 491) without the `wheel` package.

A wheel is a zip of the installed files plus a `<name>-<version>.dist-info`
folder holding METADATA (core metadata 2.1), WHEEL (format version and
tags) and RECORD (every file's sha256 and size, RECORD itself last without
them). Files are written in a fixed order with a fixed timestamp
(SOURCE_DATE_EPOCH when set), so the same inputs give the same wheel.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

GENERATOR = "flowrag_build (python/backend)"


def wheel_tag() -> str:
    """`<python>-<abi>-<platform>` of this interpreter, as pip expects it.

    CPython: cp311-cp311 (d for a debug build, t for a free-threaded one);
    other implementations: their SOABI's first two parts (PyPy:
    pp310-pypy310_pp73). The platform is sysconfig's (linux_x86_64).
    """
    version = f"{sys.version_info[0]}{sys.version_info[1]}"
    name = sys.implementation.name
    if name == "cpython":
        interpreter = f"cp{version}"
        abi = interpreter
        abi += "d" if sysconfig.get_config_var("Py_DEBUG") else ""
        abi += "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
    else:
        interpreter = {"pypy": "pp"}.get(name, name) + version
        soabi = sysconfig.get_config_var("SOABI") or "none"
        abi = "_".join(soabi.split("-")[:2]).replace(".", "_")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{abi}-{platform}"


def metadata_text(project: dict, readme_dir: Path) -> str:
    """Core metadata 2.1 (the METADATA file) of the [project] table."""
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}",
             f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    body = ""
    if "readme" in project:
        readme = readme_dir / project["readme"]
        content_type = "text/markdown" if readme.suffix == ".md" else "text/plain"
        lines.append(f"Description-Content-Type: {content_type}")
        body = "\n" + readme.read_text(encoding="utf-8")
    return "\n".join(lines) + "\n" + body


def dist_info_name(project: dict) -> str:
    return f"{_normalized(project['name'])}-{project['version']}.dist-info"


def wheel_name(project: dict, tag: str) -> str:
    return f"{_normalized(project['name'])}-{project['version']}-{tag}.whl"


def write_metadata_dir(directory: Path, project: dict, readme_dir: Path) -> str:
    """prepare_metadata_for_build_wheel: `<dist-info>/METADATA` in `directory`."""
    dist_info = directory / dist_info_name(project)
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(metadata_text(project, readme_dir), encoding="utf-8")
    return dist_info.name


class WheelWriter:
    """Builds one wheel at `path`: add() files, then close() writes the
    dist-info files and RECORD. Not thread-safe; one use."""

    def __init__(self, path: Path, project: dict, tag: str, readme_dir: Path):
        self._zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self._project = project
        self._tag = tag
        self._readme_dir = readme_dir
        self._record: list[str] = []
        self._date = time.gmtime(max(int(os.environ.get("SOURCE_DATE_EPOCH", 315532800)),
                                     315532800))[:6]

    def add_file(self, arcname: str, source: Path) -> None:
        executable = os.access(source, os.X_OK)
        self.add_bytes(arcname, source.read_bytes(), executable)

    def add_bytes(self, arcname: str, data: bytes, executable: bool = False) -> None:
        info = zipfile.ZipInfo(arcname, date_time=self._date)
        info.external_attr = (0o755 if executable else 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self._zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        self._record.append(f"{arcname},sha256={digest.decode()},{len(data)}")

    def close(self) -> None:
        dist_info = dist_info_name(self._project)
        self.add_bytes(f"{dist_info}/METADATA",
                       metadata_text(self._project, self._readme_dir).encode())
        wheel = (f"Wheel-Version: 1.0\nGenerator: {GENERATOR}\nRoot-Is-Purelib: false\n"
                 f"Tag: {self._tag}\n")
        self.add_bytes(f"{dist_info}/WHEEL", wheel.encode())
        record = "\n".join(self._record + [f"{dist_info}/RECORD,,"]) + "\n"
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=self._date)
        info.external_attr = 0o644 << 16
        self._zip.writestr(info, record, compress_type=zipfile.ZIP_DEFLATED)
        self._zip.close()


def _normalized(name: str) -> str:
    """The distribution name as wheel file names spell it (PEP 427, PEP 503)."""
    return re.sub(r"[-_.]+", "_", name).lower()
