"""The in-tree build backend (python/backend/flowrag_build) without a C++
build: pyproject.toml read the same with and without tomllib, the wheel's
files, RECORD, tags and metadata, and every missing prerequisite named in
one line (real CMake runs on tiny projects for CMake's own failures)."""

import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "python" / "backend"))
import flowrag_build  # noqa: E402
from flowrag_build import extension, pyproject, wheel  # noqa: E402
from flowrag_build.errors import BuildError  # noqa: E402

PYPROJECT = REPO / "python" / "pyproject.toml"


def test_pyproject_subset_reader_agrees_with_tomllib():
    tomllib = pytest.importorskip("tomllib")
    expected = tomllib.loads(PYPROJECT.read_text())["project"]
    assert pyproject.read_project_subset(PYPROJECT.read_text()) == expected
    assert expected["dependencies"] == ["numpy"]


def test_pyproject_subset_reader_refuses_what_it_cannot_read():
    with pytest.raises(BuildError, match=r"pyproject.toml:3: .*strings"):
        pyproject.read_project_subset('[project]\nname = "x"\nlicense = {text = "MIT"}\n')
    with pytest.raises(BuildError, match=r":2: \[project.scripts\] is not supported"):
        pyproject.read_project_subset('[project]\n[project.scripts]\nx = "y:z"\n')
    with pytest.raises(BuildError, match=r":2: the array of classifiers is not closed"):
        pyproject.read_project_subset('[project]\nclassifiers = [\n "a",\n')
    text = ('[project]\nname = "a#b" # c\nclassifiers = [ # x\n  "p", # y\n  "q",\n]\n'
            '[tool.x]\ny=1\n')
    assert pyproject.read_project_subset(text) == {"name": "a#b", "classifiers": ["p", "q"]}


def test_project_table_refuses_unsupported_keys(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n'
                                             'urls = ["u"]\n')
    with pytest.raises(BuildError, match=r"\['urls'\] are not supported"):
        pyproject.read_project_table(tmp_path / "pyproject.toml")


def test_wheel_tag_matches_this_interpreter():
    tag = wheel.wheel_tag()
    version = f"{sys.version_info[0]}{sys.version_info[1]}"
    assert tag.startswith(f"cp{version}-cp{version}")
    assert tag.endswith(sysconfig.get_platform().replace("-", "_").replace(".", "_"))


def test_build_wheel_writes_package_module_and_record(tmp_path, monkeypatch):
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = tmp_path / "build" / f"_flowrag{suffix}"
    module.parent.mkdir()
    module.write_bytes(b"\x7fELF not really a module")
    monkeypatch.setattr(extension, "build_extension", lambda python_dir: module)
    out = tmp_path / "dist"
    out.mkdir()
    name = flowrag_build.build_wheel(str(out))
    assert name == f"flowrag-0.1.0-{wheel.wheel_tag()}.whl"
    with zipfile.ZipFile(out / name) as whl:
        names = whl.namelist()
        assert {"flowrag/__init__.py", "flowrag/py.typed", "flowrag/_flowrag.pyi",
                f"flowrag/_flowrag{suffix}"} <= set(names)
        assert not [n for n in names if "__pycache__" in n or n.endswith(".so.tmp")]
        meta = whl.read("flowrag-0.1.0.dist-info/METADATA").decode()
        assert "Name: flowrag\n" in meta and "Requires-Dist: numpy\n" in meta
        assert "Requires-Python: >=3.9\n" in meta and "# flowrag for Python" in meta
        assert f"Tag: {wheel.wheel_tag()}\n" in whl.read("flowrag-0.1.0.dist-info/WHEEL").decode()
        record = whl.read("flowrag-0.1.0.dist-info/RECORD").decode().splitlines()
        assert names[-1] == "flowrag-0.1.0.dist-info/RECORD"
        assert record[-1] == "flowrag-0.1.0.dist-info/RECORD,,"
        assert sorted(r.split(",")[0] for r in record) == sorted(names)
        for row in record[:-1]:
            path, digest, size = row.split(",")
            data = whl.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == f"sha256={expected.decode()}" and int(size) == len(data), path


def test_metadata_hook_writes_the_wheels_metadata(tmp_path):
    name = flowrag_build.prepare_metadata_for_build_wheel(str(tmp_path))
    assert name == "flowrag-0.1.0.dist-info"
    assert "Requires-Dist: numpy" in (tmp_path / name / "METADATA").read_text()


def test_editable_finder_exposes_only_the_package(tmp_path):
    (tmp_path / "flowrag").mkdir()
    (tmp_path / "flowrag" / "__init__.py").write_text("WHERE = 'editable'\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    site = tmp_path / "site"
    site.mkdir()
    (site / f"{flowrag_build.EDITABLE_FINDER}.py").write_text(
        flowrag_build.editable_finder(tmp_path))
    script = (f"import sys; sys.path.insert(0, {str(site)!r}); "
              f"import {flowrag_build.EDITABLE_FINDER}; import flowrag; print(flowrag.WHERE); "
              "import importlib.util as u; print(u.find_spec('tests'))")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True,
                          text=True, cwd=tmp_path / "site")
    assert done.stdout.split() == ["editable", "None"], done.stderr


def run_hook_in_subprocess(hook, env, cwd):
    """Runs a backend hook as pip does (a fresh interpreter) with `env`."""
    script = (f"import sys; sys.path.insert(0, {str(REPO / 'python' / 'backend')!r}); "
              f"import flowrag_build; flowrag_build.{hook}({str(cwd)!r})")
    return subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                          env=env, cwd=cwd)


def test_missing_cmake_is_one_line(tmp_path):
    done = run_hook_in_subprocess("build_wheel", {"PATH": str(tmp_path)}, tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "flowrag: cmake not found on PATH: install CMake >= 3.20 (Debian: apt-get install cmake; "
        "or pip install cmake)"]


def test_sdist_is_refused_in_one_line(tmp_path):
    done = run_hook_in_subprocess("build_sdist", {"PATH": os.environ["PATH"]}, tmp_path)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("flowrag: no sdist")


def test_missing_compiler_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(BuildError, match=r"^no C\+\+ compiler found: install g\+\+"):
        extension.check_compiler()
    monkeypatch.setenv("CXX", "clang++-99 -stdlib=libc++")
    with pytest.raises(BuildError, match=r"^CXX=clang\+\+-99 not found"):
        extension.check_compiler()


def test_missing_python_headers_are_named(tmp_path, monkeypatch):
    monkeypatch.setattr(extension.sysconfig, "get_path", lambda name: str(tmp_path))
    with pytest.raises(BuildError, match=r"Python.h of .* apt-get install python3-dev"):
        extension.check_python_headers()


def test_wrong_build_and_source_folders_are_named(tmp_path, monkeypatch):
    (tmp_path / "CMakeCache.txt").write_text("FLOWRAG_PYTHON:BOOL=OFF\n")
    with pytest.raises(BuildError, match=r"is not a CMake build configured with -DFLOWRAG_PYTHON"):
        extension.existing_build_dir(tmp_path)
    monkeypatch.setenv("FLOWRAG_SOURCE_DIR", str(tmp_path))
    with pytest.raises(BuildError, match=r"holds no flowrag sources"):
        extension.source_dir(REPO / "python")


def configure_tiny_project(tmp_path, cmake_lists, *extra):
    """extension.run_step on a CMake project of one CMakeLists.txt."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\n" + cmake_lists)
    (tmp_path / "b").mkdir()
    extension.run_step([extension.find_cmake(), "-S", str(tmp_path / "src"), "-B",
                        str(tmp_path / "b"), *extra], tmp_path / "b", "configure")


def test_cmake_failures_name_the_missing_package(tmp_path):
    with pytest.raises(BuildError) as missing:
        configure_tiny_project(tmp_path,
                               "project(t NONE)\nfind_package(pybind11 CONFIG REQUIRED)\n",
                               "-DCMAKE_FIND_ROOT_PATH=/nonexistent",
                               "-DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY")
    message = str(missing.value)
    assert message.startswith(extension.PYBIND11_HINT) and "\n" not in message
    assert message.endswith(f"(log: {tmp_path / 'b' / 'flowrag-build.log'})")


def test_cmake_failures_name_a_missing_library(tmp_path):
    with pytest.raises(BuildError, match=r"^flowrag-absent-lib not found: the C\+\+ core needs"):
        configure_tiny_project(tmp_path, "project(t NONE)\nfind_package(PkgConfig REQUIRED)\n"
                               "pkg_check_modules(X REQUIRED flowrag-absent-lib)\n")


def test_other_cmake_errors_give_their_message(tmp_path):
    with pytest.raises(BuildError, match=r"^CMake configure failed: x.js is missing: run "
                                         r"setup.sh, then configure again. \(log: "):
        configure_tiny_project(tmp_path, 'project(t NONE)\nmessage(FATAL_ERROR "x.js is '
                               'missing: run setup.sh,\n  then configure again.")\n')


def test_compile_errors_give_the_first_error_line():
    output = ("[ 1%] Building CXX object a.o\n/src/a.cc:3:1: error: 'foo' was not declared\n"
              "/src/a.cc:4:1: error: second\ngmake: *** [all] Error 2\n")
    assert extension.summarize_failure(output, "build") == (
        "CMake build failed: /src/a.cc:3:1: error: 'foo' was not declared")


def test_missing_numpy_is_one_line_at_import(tmp_path):
    done = subprocess.run([sys.executable, "-c",
                           "import sys; sys.modules['numpy'] = None; import flowrag"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith("ImportError: flowrag needs numpy, which")
    assert "During handling" not in done.stderr and "_flowrag" not in done.stderr
