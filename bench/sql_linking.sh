#!/usr/bin/env bash
# Schema-linking P/R/F1 and latency on Spider dev (1,034 questions) and the 24
# Spider 2.0-lite local tasks with gold SQL (and a BIRD-format folder when
# given), for QAFD (defaults and ablations) and the baselines, then linking
# latency per question on the largest Spider dev schema
# (student_transcripts_tracking, 56 columns) and a synthetic schema of 10,000
# columns (bench/sql_link_latency); writes bench/out/sql_linking.md.
# Usage: bench/sql_linking.sh [build dir, default build/release] [BIRD dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
bird=${2:-}
flowrag=$build/tools/flowrag
latency=$build/bench/sql_link_latency
data=../shared/data
out=bench/out/sql_linking.md
sets=(--spider "$data/spider" --spider2 "$data/spider2_lite")
if [[ -n "$bird" ]]; then sets+=(--bird "$bird"); fi
mkdir -p bench/out
# Table rows only (the gold-less lines follow the table).
rows() { grep '^| [a-z]' | grep -v '^| dataset'; }
{
  echo "# Schema linking: Spider dev and Spider 2.0-lite (offline, built-in hashed embedder)"
  echo
  echo "Command: \`bench/sql_linking.sh\` on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(date -u +%Y-%m-%d)."
  echo "Macro averages per question; gold tables/columns from Spider's parsed SQL and, for Spider 2.0-lite, from"
  echo "the SQLite authorizer's reads when the gold SQL is prepared against the DDL-only database. Column scores"
  echo "leave out the questions whose gold SQL reads no column (SELECT count(*) FROM t): they are counted on the"
  echo "lines under the table. bm25-matched is BM25 returning, per question, as many columns as QAFD does."
  echo
  "$flowrag" sql eval "${sets[@]}" --records /tmp/sql_linking_records.jsonl 2>/dev/null
  echo
  echo "## Does the diffusion add value? QAFD against its own seeds and BM25 at QAFD's output size"
  echo
  echo "qafd max_pushes=0 stops the diffusion before its first push: the linked set is the seeds (keyword and"
  echo "value candidates) plus the join closure. sinks=degree (T_v = deg v) and mass=path (m_s = α·Σ_{j∈P} T_j per"
  echo "source-target pair) are where the authors' code and the paper's text differ from the defaults;"
  echo "relevance=max links every node with x_v/max x ≥ select besides the seeds, and with mass=path select=0.5 it"
  echo "is the linker before issue 22. Each bm25 row returns per question as many columns as the QAFD row above it."
  echo
  echo "| dataset | variant | questions | table P | table R | table F1 | column P | column R | column F1 | tables/q | columns/q | p50 ms | p99 ms | exec acc |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  # Each variant: the --set options changed from the defaults ("" = defaults).
  for v in "" "max_pushes=0" "sinks=degree" "mass=path" "relevance=max" "relevance=max mass=path select=0.5"; do
    args=()
    for s in $v; do args+=(--set "$s"); done
    label=qafd
    if [[ -n "$v" ]]; then label="qafd $v"; fi
    "$flowrag" sql eval "${sets[@]}" --method qafd --method bm25-matched "${args[@]}" 2>/dev/null | rows |
      sed "s/| qafd |/| $label |/; s/| bm25-matched |/| bm25 matched to $label |/"
  done
  echo
  echo "QAFD ablations (one option changed from the defaults):"
  echo
  echo "| dataset | variant | questions | table P | table R | table F1 | column P | column R | column F1 | tables/q | columns/q | p50 ms | p99 ms | exec acc |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for s in subqueries=true select=0.1 select=0.3 seeds=6 seeds=8 joins=false weights=product similarity=cosine alpha=2 alpha=50; do
    "$flowrag" sql eval "${sets[@]}" --method qafd --set "$s" 2>/dev/null | rows | sed "s/| qafd |/| qafd $s |/"
  done
  echo
  echo "Linking latency per question (\`$latency ../shared/data/spider\`, median of 5 runs; open = introspection,"
  echo "value index and node embeddings): the largest Spider dev schema and a synthetic schema of 200 tables × 50"
  echo "columns (a foreign-key chain plus one random key per table, 20 rows each, 100 questions naming a column and a value)."
  echo
  "$latency" "$data/spider" student_transcripts_tracking 200 50 5 2>/dev/null
} > "$out"
echo "wrote $out"
