#!/usr/bin/env bash
# Builds and runs the whole test suite twice: the -O2 release build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build. The release build also makes the
# Python package's extension module (python/), which is installed into a
# venv and tested with pytest after the release tests. Both builds are unity
# builds, the libraries' and the tests' (FLOWRAG_UNITY, CMakeLists.txt;
# FLOWRAG_TEST_UNITY, tests/CMakeLists.txt); FLOWRAG_UNITY=OFF in the
# environment turns both off for build/release, whose incremental builds
# then recompile single files.
# Installs missing packages first. Tests that need ../shared/data skip
# (with a message) when it is absent. Both runs share one PostgreSQL test
# server (scripts/pg_test_server.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
jobs="$(nproc)"

# Options are set explicitly: scripts/demo.sh configures the same directory
# without tests.
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DFLOWRAG_BUILD_TESTS=ON \
  -DFLOWRAG_BUILD_BENCH=ON -DFLOWRAG_PYTHON=ON -DPython_EXECUTABLE=/usr/bin/python3 \
  -DFLOWRAG_UNITY="${FLOWRAG_UNITY:-ON}" -DFLOWRAG_TEST_UNITY="${FLOWRAG_UNITY:-ON}" >/dev/null
cmake --build build/release -j"$jobs"

# One throwaway PostgreSQL server for both runs: the tests that need it read
# FLOWRAG_TEST_POSTGRES (each uses its own workspace). Stopped on exit,
# failure included.
pg_dir="$(mktemp -d /tmp/flowrag-pg.XXXXXX)"
trap '"$PWD/scripts/pg_test_server.sh" stop "$pg_dir" >/dev/null 2>&1 || true' EXIT
FLOWRAG_TEST_POSTGRES="$(./scripts/pg_test_server.sh start "$pg_dir")"
export FLOWRAG_TEST_POSTGRES

ctest --test-dir build/release --output-on-failure -j"$jobs"

# The Python package, from the module the release build made (its build
# backend reuses build/release through FLOWRAG_BUILD_DIR), in a venv that
# sees Debian's numpy and pytest; no network. python/tests/test_install.py
# also installs it with the README's commands into fresh venvs of Debian's
# Python and of a Python built elsewhere without `wheel` (pyenv).
venv=build/release/python-venv
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
FLOWRAG_BUILD_DIR="$PWD/build/release" "$venv/bin/python" -m pip install -q --no-index ./python
"$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests

# The sanitizer build runs after the release tests and pytest, not beside
# them: in the background it took the idle cores, but a loaded machine made
# a timing test fail (pytest's Ctrl-C during an index, on a clean clone).
cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DFLOWRAG_SANITIZE=ON \
  -DFLOWRAG_BUILD_TESTS=ON -DFLOWRAG_BUILD_BENCH=OFF -DFLOWRAG_UNITY=ON -DFLOWRAG_TEST_UNITY=ON \
  >/dev/null
cmake --build build/sanitize -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/sanitize --output-on-failure -j"$jobs"
