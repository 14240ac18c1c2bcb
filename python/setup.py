"""Builds the extension module flowrag._flowrag with CMake.

The C++ sources are the repository around this folder (or
FLOWRAG_SOURCE_DIR). By default a Release build of the target _flowrag is
configured in the build_temp folder (Ninja and ccache when present);
FLOWRAG_BUILD_DIR=<a build folder configured with -DFLOWRAG_PYTHON=ON>
builds the target there instead, reusing that folder's static libraries
(scripts/test.sh uses build/release). CMAKE_BUILD_PARALLEL_LEVEL sets the
build's jobs.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def source_dir() -> Path:
    src = Path(os.environ.get("FLOWRAG_SOURCE_DIR", HERE.parent)).resolve()
    if not (src / "include" / "flowrag" / "engine.h").is_file():
        sys.exit(f"flowrag: {src} holds no flowrag sources: build python/ inside a checkout "
                 "of the repository, or set FLOWRAG_SOURCE_DIR")
    return src


def run(cmd):
    print("flowrag:", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        build_dir = os.environ.get("FLOWRAG_BUILD_DIR")
        if build_dir:
            build_dir = Path(build_dir).resolve()
            cache = build_dir / "CMakeCache.txt"
            if not cache.is_file() or "FLOWRAG_PYTHON:BOOL=ON" not in cache.read_text():
                sys.exit(f"flowrag: FLOWRAG_BUILD_DIR={build_dir} is not a CMake build "
                         "configured with -DFLOWRAG_PYTHON=ON")
        else:
            build_dir = Path(self.build_temp).resolve() / "cmake"
            cmd = ["cmake", "-S", source_dir(), "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                   "-DFLOWRAG_PYTHON=ON", "-DFLOWRAG_BUILD_TESTS=OFF", "-DFLOWRAG_BUILD_BENCH=OFF",
                   f"-DPython_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
                cmd += ["-G", "Ninja"]
            if shutil.which("ccache"):
                cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
            run(cmd)
        run(["cmake", "--build", build_dir, "--target", "_flowrag", "-j", jobs])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / f"_flowrag{suffix}"
        if not built.is_file():
            found = sorted(p.name for p in (build_dir / "python").glob("_flowrag*"))
            sys.exit(f"flowrag: {built} was not built (found {found}): the build folder was "
                     f"configured for another Python than {sys.executable}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("flowrag._flowrag", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
