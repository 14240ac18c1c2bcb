"""Building the extension module flowrag._flowrag with CMake.

The C++ sources are the repository around python/ (or FLOWRAG_SOURCE_DIR).
Without FLOWRAG_BUILD_DIR a Release build of the target _flowrag is
configured in python/build/cmake-<python>-<interpreter hash> (Ninja when
present), one folder per base interpreter, so a second install, from any
venv of the same Python, only relinks what changed. FLOWRAG_BUILD_DIR=<a
build folder configured with -DFLOWRAG_PYTHON=ON> builds the target there
instead, reusing that folder's static libraries (scripts/test.sh uses
build/release). CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs.

Each step's output goes to <build folder>/flowrag-build.log (the last
install's); a failure raises BuildError with one line naming the missing
prerequisite (cmake, a C++ compiler, Python's headers, pybind11, a library
of the C++ core) or the first compiler error, and the log's path.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from .errors import BuildError

MIN_CMAKE = (3, 20)  # the repository's cmake_minimum_required
LOG_NAME = "flowrag-build.log"

PYBIND11_HINT = ("pybind11 (its CMake package) not found: install it (Debian: apt-get install "
                 "pybind11-dev; or pip install pybind11, then install flowrag with "
                 "--no-build-isolation)")
COMPILER_HINT = "no C++ compiler found: install g++ >= 11 (Debian: apt-get install g++) or set CXX"
LIBRARY_HINT = ("not found: the C++ core needs its development package (scripts/setup.sh "
                "installs them on Debian)")


def build_extension(python_dir: Path) -> Path:
    """Builds _flowrag for this interpreter; returns the built module file."""
    cmake = find_cmake()
    configured = os.environ.get("FLOWRAG_BUILD_DIR")
    if configured:
        build_dir = existing_build_dir(Path(configured))
        _start_log(build_dir)
    else:
        build_dir = python_dir / "build" / f"cmake-{_interpreter_key()}"
        _start_log(build_dir)
        configure(cmake, source_dir(python_dir), build_dir)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    run_step([cmake, "--build", str(build_dir), "--target", "_flowrag", "-j", jobs], build_dir,
             "build")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = build_dir / "python" / f"_flowrag{suffix}"
    if not built.is_file():
        found = sorted(p.name for p in (build_dir / "python").glob("_flowrag*"))
        raise BuildError(f"{build_dir} was configured for another Python: it holds {found}, "
                         f"{sys.executable} needs _flowrag{suffix}")
    return built


def find_cmake() -> str:
    """The cmake on PATH, at least MIN_CMAKE."""
    cmake = shutil.which("cmake")
    if not cmake:
        raise BuildError("cmake not found on PATH: install CMake >= 3.20 (Debian: apt-get install "
                         "cmake; or pip install cmake)")
    out = subprocess.run([cmake, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"version (\d+)\.(\d+)", out)
    if not match or tuple(map(int, match.groups())) < MIN_CMAKE:
        version = ".".join(match.groups()) if match else "of unknown version"
        raise BuildError(f"cmake {version} at {cmake} is too old: the C++ core needs CMake >= 3.20")
    return cmake


def source_dir(python_dir: Path) -> Path:
    src = Path(os.environ.get("FLOWRAG_SOURCE_DIR") or python_dir.parent).resolve()
    if not (src / "include" / "flowrag" / "engine.h").is_file():
        raise BuildError(f"{src} holds no flowrag sources: build python/ inside a checkout of the "
                         "repository, or set FLOWRAG_SOURCE_DIR")
    return src


def existing_build_dir(build_dir: Path) -> Path:
    build_dir = build_dir.resolve()
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file() or "FLOWRAG_PYTHON:BOOL=ON" not in cache.read_text(errors="replace"):
        raise BuildError(f"FLOWRAG_BUILD_DIR={build_dir} is not a CMake build configured with "
                         "-DFLOWRAG_PYTHON=ON")
    return build_dir


def configure(cmake: str, source: Path, build_dir: Path) -> None:
    """Configures (or refreshes) the Release build of `source` in `build_dir`."""
    fresh = not (build_dir / "CMakeCache.txt").is_file()
    if fresh:
        check_compiler()
    check_python_headers()
    cmd = [cmake, "-S", str(source), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
           "-DFLOWRAG_PYTHON=ON", "-DFLOWRAG_BUILD_TESTS=OFF", "-DFLOWRAG_BUILD_BENCH=OFF",
           f"-DPython_EXECUTABLE={_base_interpreter()}"]
    pybind11_dir = _pip_pybind11_dir()
    if pybind11_dir:
        cmd.append(f"-Dpybind11_DIR={pybind11_dir}")
    if fresh and shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    if shutil.which("ccache"):
        cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    run_step(cmd, build_dir, "configure")


def check_compiler() -> None:
    cxx = os.environ.get("CXX", "").split()
    if cxx:
        if not shutil.which(cxx[0]):
            raise BuildError(f"CXX={cxx[0]} not found: {COMPILER_HINT}")
    elif not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        raise BuildError(COMPILER_HINT)


def check_python_headers() -> None:
    include = Path(sysconfig.get_path("include"))
    if not (include / "Python.h").is_file():
        raise BuildError(f"Python.h of {sys.executable} is not in {include}: install the Python "
                         "headers (Debian: apt-get install python3-dev)")


def _start_log(build_dir: Path) -> None:
    """Empties the build folder's log: it holds the steps of one install."""
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / LOG_NAME).write_text("")


def run_step(cmd: list, build_dir: Path, step: str) -> None:
    """Runs `cmd`, its output appended to the build folder's log."""
    log = build_dir / LOG_NAME
    print(f"flowrag: {step}: {' '.join(cmd)} (log: {log})", flush=True)
    with open(log, "a", encoding="utf-8", errors="replace") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        start = out.tell()
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        with open(log, encoding="utf-8", errors="replace") as f:
            f.seek(start)
            output = f.read()
        raise BuildError(f"{summarize_failure(output, step)} (log: {log})")


def summarize_failure(output: str, step: str) -> str:
    """One line saying what failed in the CMake `output` of `step`."""
    if re.search(r'provided by\s+"pybind11"', output):
        return PYBIND11_HINT
    if "No CMAKE_CXX_COMPILER could be found" in output:
        return COMPILER_HINT
    match = re.search(r"Could NOT find Python \(missing: ([^)]*)\)", output)
    if match:
        return (f"CMake found no Python development files for {sys.executable} (missing: "
                f"{match.group(1).strip()}): install the Python headers (Debian: apt-get install "
                "python3-dev)")
    for pattern in (r'provided by\s+"([^"]+)"', r"Could NOT find (\S+)",
                    r"No package '([^']+)' found", r"Package '([^']+)',.* not found"):
        match = re.search(pattern, output)
        if match:
            return f"{match.group(1)} {LIBRARY_HINT}"
    match = (re.search(r"^CMake Error[^\n]*:\n((?:  .*\n?|\n)+)", output, re.M)
             or re.search(r"^CMake Error: (.*)$", output, re.M))
    if match:  # the message of the first CMake error, over its lines
        first = " ".join(line.strip() for line in match.group(1).splitlines() if line.strip())
    else:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if re.search(r"\berror\b", line, re.I)]
        first = (errors or lines or ["no output"])[0]
    return f"CMake {step} failed: {first[:300]}"


def _base_interpreter() -> str:
    """The interpreter a venv was made from (the same headers and module suffix)."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _interpreter_key() -> str:
    """cpython-311-<hash of the base interpreter's path>: one build folder each."""
    digest = hashlib.sha256(_base_interpreter().encode()).hexdigest()[:8]
    return f"{sys.implementation.cache_tag}-{digest}"


def _pip_pybind11_dir():
    """pybind11's CMake folder when it is pip-installed where this build runs."""
    try:
        import pybind11
    except ImportError:
        return None
    return pybind11.get_cmake_dir()
