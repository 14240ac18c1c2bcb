#!/usr/bin/env bash
# Builds and runs the whole test suite twice: the -O2 release build, then an
# AddressSanitizer + UndefinedBehaviorSanitizer build. Installs missing
# packages first. Tests that need ../shared/data skip (with a message) when
# it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
jobs="$(nproc)"

# Options are set explicitly: scripts/demo.sh configures the same directory
# without tests.
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DFLOWRAG_BUILD_TESTS=ON \
  -DFLOWRAG_BUILD_BENCH=ON >/dev/null
cmake --build build/release -j"$jobs"
ctest --test-dir build/release --output-on-failure -j"$jobs"

cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DFLOWRAG_SANITIZE=ON \
  -DFLOWRAG_BUILD_TESTS=ON -DFLOWRAG_BUILD_BENCH=OFF >/dev/null
cmake --build build/sanitize -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/sanitize --output-on-failure -j"$jobs"
