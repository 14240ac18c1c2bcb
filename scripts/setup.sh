#!/usr/bin/env bash
# Installs every build and test dependency of flowrag from Debian packages.
# Idempotent: packages already present are skipped, and apt is not touched
# when nothing is missing. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  lld                           # the linker (CMakeLists.txt: -fuse-ld=lld when present)
  libsqlite3-dev sqlite3
  libpq-dev postgresql-15       # the PostgreSQL store and its tests' server
  nlohmann-json3-dev
  libcurl4-openssl-dev
  libcpp-httplib-dev
  libcli11-dev
  libhnswlib-dev
  libyaml-cpp-dev
  libpoppler-cpp-dev            # PDF ingestion (src/ingest/pdf_text.h)
  libicu-dev libstemmer-dev   # Unicode tokenisation: ICU word breaks and NFKC, Snowball stemmers
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libfaiss-dev libopenblas-pthread-dev   # bench/vector_quantization --faiss (Faiss IVF and HNSW)
  python3 python3-networkx     # graph_export_test reads the GraphML export back with NetworkX
  python3-dev python3-venv python3-pip pybind11-dev   # the Python package (python/)
  python3-numpy python3-pytest python3-setuptools python3-wheel python3-build
  chromium fonts-dejavu-core   # the viewer test (headless browser)
  wrk curl                     # bench/server_load.sh
  nodejs npm                   # js/: the viewer's graph library, the tests' real clients
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# A machine whose Node.js came from elsewhere (with its own npm) keeps it.
if command -v npm >/dev/null && command -v node >/dev/null; then
  kept=()
  for p in "${missing[@]}"; do
    [ "$p" = nodejs ] || [ "$p" = npm ] || kept+=("$p")
  done
  missing=("${kept[@]}")
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all Debian packages present"
else
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The npm packages of js/ (package-lock.json pins them): installed again only
# when the lock file changed since the last install.
js_dir="$(cd "$(dirname "$0")/.." && pwd)/js"
if ! cmp -s "$js_dir/package-lock.json" "$js_dir/node_modules/.flowrag-installed-lock"; then
  echo "setup: npm ci in js/"
  (cd "$js_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$js_dir/package-lock.json" "$js_dir/node_modules/.flowrag-installed-lock"
fi
