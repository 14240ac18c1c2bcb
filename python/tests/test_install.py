"""The README's install commands, run as written and offline (pip may reach
no index: PIP_NO_INDEX), into fresh virtual environments:

- Debian's python3 (PEP 668 keeps pip out of it): the README's venv line;
- a Python built outside Debian without the `wheel` package (a pyenv one,
  or FLOWRAG_TEST_FOREIGN_PYTHON): the README's pip line in a venv of it;
- an editable install and `python3 -m build --wheel`.

Each imports the installed package and runs a tiny query. The extension
module comes from the build folder FLOWRAG_BUILD_DIR (default build/release,
configured with -DFLOWRAG_PYTHON=ON), so nothing is compiled again: the
backend only asks CMake whether _flowrag is current. Run it while nothing
else builds in that folder (scripts/test.sh runs the suite after the
build). Skips with the reason when the build folder or a foreign Python is
missing.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conftest import REPO

BUILD_DIR = Path(os.environ.get("FLOWRAG_BUILD_DIR") or REPO / "build" / "release")
DEBIAN_PYTHON = "/usr/bin/python3"

# Indexes two documents and prints the package's file and the top hit.
QUERY = """
import sys, flowrag
with flowrag.Engine(sys.argv[1]) as eng:
    eng.index([{"id": "lens", "title": "Brannock lens",
                "text": "The Brannock lens was designed by Ada Brannock in Wrenfield."},
               {"id": "tide", "title": "Lantern Tide",
                "text": "The Lantern Tide Festival is held every spring in Corvale."}],
              extractor="heuristic")
    hit = eng.query("Who designed the Brannock lens?", method="bm25", top_k=1).passages[0]
    print(flowrag.__file__)
    print(hit.document_id)
"""


def built_module_suffixes():
    return {p.name[len("_flowrag"):] for p in (BUILD_DIR / "python").glob("_flowrag*")}


@pytest.fixture(scope="module", autouse=True)
def build_dir():
    cache = BUILD_DIR / "CMakeCache.txt"
    if not cache.is_file() or "FLOWRAG_PYTHON:BOOL=ON" not in cache.read_text(errors="replace"):
        pytest.skip(f"{BUILD_DIR} is not a build configured with -DFLOWRAG_PYTHON=ON "
                    "(set FLOWRAG_BUILD_DIR)")
    if not built_module_suffixes():
        pytest.skip(f"{BUILD_DIR} has not built the _flowrag target")
    return BUILD_DIR


def readme_install_lines():
    """The commands of the sh block in the README's "## Python" section."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("\n## Python"):]
    section = section[:section.index("\n## ", 1)]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def readme_line(marker):
    lines = [line for line in readme_install_lines() if marker in line]
    assert len(lines) == 1, f"README's Python install block has no single line with {marker!r}"
    return lines[0]


def offline_env(path_first):
    """The environment of an install: `path_first` ahead of PATH (so the
    README's `python3` is the Python under test), no index, the build folder."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_FIND_LINKS")}
    env.update(PATH=f"{path_first}{os.pathsep}{os.environ['PATH']}", PIP_NO_INDEX="1",
               PIP_NO_CACHE_DIR="1", FLOWRAG_BUILD_DIR=str(BUILD_DIR))
    return env


def run(cmd, cwd, env, shell=False):
    done = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, capture_output=True, text=True,
                          timeout=900, executable="/bin/bash" if shell else None)
    return done


def workdir(tmp_path):
    """A folder where ./python is the package (as in the repository's root)."""
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(REPO / "python", work / "python")
    return work


def assert_query_runs(python, work, venv):
    done = run([str(python), "-c", QUERY, str(work / "store.db")], work, offline_env(venv / "bin"))
    assert done.returncode == 0, done.stderr
    where, top = done.stdout.split()
    assert Path(where).is_relative_to(venv), where  # the installed package, not python/
    assert top == "lens"


def test_readme_install_in_a_venv_of_debians_python(tmp_path):
    if not os.access(DEBIAN_PYTHON, os.X_OK):
        pytest.skip(f"no {DEBIAN_PYTHON}")
    work = workdir(tmp_path)
    shim = tmp_path / "shim"
    shim.mkdir()
    os.symlink(DEBIAN_PYTHON, shim / "python3")
    done = run(readme_line("venv --system-site-packages"), work, offline_env(shim), shell=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_query_runs(work / ".venv" / "bin" / "python", work, work / ".venv")


def foreign_python():
    """A CPython not from Debian whose modules the build folder's _flowrag fits."""
    given = os.environ.get("FLOWRAG_TEST_FOREIGN_PYTHON")
    candidates = [given] if given else sorted(
        glob.glob(os.path.expanduser("~/.pyenv/versions/*/bin/python3")), reverse=True)
    suffixes = built_module_suffixes()
    for python in candidates:
        real = os.path.realpath(python)
        if not os.access(python, os.X_OK) or real.startswith(("/usr/", "/bin/")):
            continue
        suffix = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var"
                                 "('EXT_SUFFIX'))"], capture_output=True, text=True).stdout.strip()
        if suffix in suffixes:
            return python
    pytest.skip(f"no Python built outside Debian with a module suffix in {sorted(suffixes)} "
                f"(tried {candidates or 'none'}; set FLOWRAG_TEST_FOREIGN_PYTHON)")


def lend_debians_numpy(venv, tmp_path):
    """Offline there is no numpy to install: the venv sees the test's own
    numpy (Debian's; same module suffix, so the same ABI) through a .pth."""
    import importlib.metadata

    import numpy
    shelf = tmp_path / "numpy-shelf"
    shelf.mkdir()
    os.symlink(Path(numpy.__file__).parent, shelf / "numpy")
    meta = Path(importlib.metadata.distribution("numpy")._path)
    os.symlink(meta, shelf / meta.name)
    site = run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path("
                "'purelib'))"], tmp_path, None).stdout.strip()
    Path(site, "lent-numpy.pth").write_text(f"{shelf}\n")


def test_readme_install_with_a_python_built_outside_debian_without_wheel(tmp_path):
    python = foreign_python()
    work = workdir(tmp_path)
    venv = tmp_path / "foreign-venv"
    done = run([python, "-m", "venv", str(venv)], tmp_path, None)
    assert done.returncode == 0, done.stderr
    vpython = str(venv / "bin" / "python")
    assert run([vpython, "-c", "import wheel"], tmp_path, None).returncode != 0, \
        f"{python}'s venv has the wheel package: the test needs a Python without it"
    install = readme_line("python3 -m pip install ./python")
    numpy_there = run([vpython, "-c", "import numpy"], tmp_path, None).returncode == 0
    if not numpy_there:
        done = run(install, work, offline_env(venv / "bin"), shell=True)
        assert done.returncode != 0 and "numpy" in done.stderr, done.stdout + done.stderr
        lend_debians_numpy(venv, tmp_path)
    done = run(install, work, offline_env(venv / "bin"), shell=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_query_runs(venv / "bin" / "python", work, venv)


def test_editable_install_loads_the_source_folder(tmp_path):
    copy = tmp_path / "work" / "python"
    shutil.copytree(REPO / "python", copy, ignore=shutil.ignore_patterns(
        "build", "dist", "__pycache__", "*.so", "*.egg-info"))
    venv = tmp_path / "venv"
    assert run([DEBIAN_PYTHON, "-m", "venv", "--system-site-packages", str(venv)], tmp_path,
               None).returncode == 0
    env = offline_env(venv / "bin")
    env["FLOWRAG_SOURCE_DIR"] = str(REPO)
    done = run([str(venv / "bin" / "pip"), "install", "-e", str(copy)], tmp_path, env)
    assert done.returncode == 0, done.stdout + done.stderr
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert (copy / "flowrag" / f"_flowrag{suffix}").is_file()
    with open(copy / "flowrag" / "__init__.py", "a") as f:
        f.write("EDITED_IN_PLACE = True\n")
    script = ("import flowrag, importlib.util as u; "
              "print(flowrag.__file__, flowrag.EDITED_IN_PLACE, u.find_spec('backend'))")
    done = run([str(venv / "bin" / "python"), "-c", script], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(copy / "flowrag" / "__init__.py"), "True", "None"]


def test_python_m_build_makes_a_wheel_offline(tmp_path):
    if run([DEBIAN_PYTHON, "-c", "import build"], tmp_path, None).returncode != 0:
        pytest.skip("no python3-build")
    out = tmp_path / "dist"
    done = run([DEBIAN_PYTHON, "-m", "build", "--wheel", "--outdir", str(out),
                str(REPO / "python")], tmp_path, offline_env(Path(DEBIAN_PYTHON).parent))
    assert done.returncode == 0, done.stdout + done.stderr
    wheels = [p.name for p in out.glob("*.whl")]
    assert len(wheels) == 1 and wheels[0].startswith("flowrag-0.1.0-cp"), wheels
