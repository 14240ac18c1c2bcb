"""The PEP 517 build backend of the flowrag Python package (in-tree:
pyproject.toml names it with backend-path = ["backend"] and requires = []).

Why not setuptools: its backend needs the `wheel` package for bdist_wheel
(setuptools < 70.1; a pyenv Python 3.11 has setuptools 65 and no wheel and
stops at "invalid command 'bdist_wheel'"), and under build isolation pip
downloads setuptools and wheel, which an offline machine cannot. This
backend needs only the standard library, CMake and a C++ compiler, so
`pip install ./python` works with and without build isolation, offline, in
any CPython >= 3.9 (a venv, pyenv, conda; Debian's own in a venv), and
`python -m build --wheel python/` too. It builds the extension module
(extension.py) and writes the wheel itself (wheel.py): the flowrag/
package's .py, .pyi and py.typed files, the module, and the metadata of
pyproject.toml's [project] (pyproject.py).

Hooks: build_wheel; build_editable (PEP 660: the module is copied into
python/flowrag/ and a finder makes `import flowrag` load that folder, so
Python edits are live, C++ edits need the install again);
prepare_metadata_for_build_wheel/_editable; get_requires_for_build_wheel/
_editable (nothing). No sdist: the module builds from the C++ sources
around python/, so the package builds from a checkout (build_sdist says
so). config_settings are ignored; the environment variables are
extension.py's.

A missing prerequisite or a failed step ends the hook with one line
`flowrag: ...` naming it (SystemExit), not a traceback.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

from . import extension, pyproject, wheel
from .errors import BuildError

PYTHON_DIR = Path(__file__).resolve().parents[2]  # python/: pyproject.toml, flowrag/
PACKAGE = "flowrag"
EDITABLE_FINDER = "__editable___flowrag_finder"


def _one_line_errors(hook):
    @functools.wraps(hook)
    def run(*args, **kwargs):
        try:
            return hook(*args, **kwargs)
        except BuildError as e:
            sys.exit(f"flowrag: {e}")
    return run


def _project() -> dict:
    return pyproject.read_project_table(PYTHON_DIR / "pyproject.toml")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


@_one_line_errors
def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return wheel.write_metadata_dir(Path(metadata_directory), _project(), PYTHON_DIR)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


@_one_line_errors
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    module = extension.build_extension(PYTHON_DIR)
    tag = wheel.wheel_tag()
    name = wheel.wheel_name(project, tag)
    writer = wheel.WheelWriter(Path(wheel_directory) / name, project, tag, PYTHON_DIR)
    for source in package_files():
        writer.add_file(source.relative_to(PYTHON_DIR).as_posix(), source)
    writer.add_file(f"{PACKAGE}/{module.name}", module)
    writer.close()
    return name


@_one_line_errors
def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    module = extension.build_extension(PYTHON_DIR)
    _replace_file(module, PYTHON_DIR / PACKAGE / module.name)
    tag = wheel.wheel_tag()
    name = wheel.wheel_name(project, tag)
    writer = wheel.WheelWriter(Path(wheel_directory) / name, project, tag, PYTHON_DIR)
    writer.add_bytes(f"{EDITABLE_FINDER}.py", editable_finder(PYTHON_DIR).encode())
    writer.add_bytes(f"__editable__.{PACKAGE}-{project['version']}.pth",
                     f"import {EDITABLE_FINDER}\n".encode())
    writer.close()
    return name


@_one_line_errors
def build_sdist(sdist_directory, config_settings=None):
    raise BuildError("no sdist: the extension module builds from the C++ sources around "
                     "python/, so build a wheel from a checkout (python -m build --wheel python/)")


def package_files() -> list:
    """The flowrag/ package's files that go into a wheel, in a fixed order."""
    root = PYTHON_DIR / PACKAGE
    files = [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
             and (p.suffix in (".py", ".pyi") or p.name == "py.typed")]
    return sorted(files)


def editable_finder(python_dir: Path) -> str:
    """The module an editable install's .pth imports: `import flowrag` loads
    python_dir/flowrag, and nothing else of python_dir becomes importable."""
    return f'''"""flowrag installed in editable mode from {python_dir} (PEP 660)."""
import sys
from importlib.machinery import PathFinder


class FlowragEditableFinder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != {PACKAGE!r}:
            return None
        return PathFinder.find_spec(name, [{str(python_dir)!r}])


sys.meta_path.append(FlowragEditableFinder)
'''


def _replace_file(source: Path, target: Path) -> None:
    """Copies `source` over `target` atomically (a running process that has
    the old module loaded keeps its copy)."""
    temporary = target.with_name(target.name + ".tmp")
    shutil.copyfile(source, temporary)
    os.replace(temporary, target)
