#!/usr/bin/env bash
# The main job on the built-in defaults: install what is missing, build,
# index the demo corpus (examples/demo) and answer example questions.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DFLOWRAG_BUILD_TESTS=OFF \
  -DFLOWRAG_BUILD_BENCH=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target flowrag_cli

flowrag=build/release/tools/flowrag
db=build/demo.db
echo
echo "== flowrag index examples/demo --db $db"
"$flowrag" index examples/demo --db "$db"
"$flowrag" stats --db "$db"

# A few of the demo questions (examples/demo_questions.jsonl).
questions=(
  "Which company built the research vessel of the institute that Winnie Lusk directed?"
  "In which town was the founder of the Lantern Tide Festival born?"
  "How long is the River Ostrel?"
  "Which was patented first, the Vey propeller or the Brannock lens?"
)
for q in "${questions[@]}"; do
  echo
  echo "== flowrag query --db $db --top-k 3 \"$q\""
  "$flowrag" query --db "$db" --top-k 3 "$q"
done
