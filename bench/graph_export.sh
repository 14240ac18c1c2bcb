#!/usr/bin/env bash
# Graph export and graph browser figures on one store: `flowrag export` time
# and bytes per format (median of --runs runs), then `flowrag serve` on
# loopback and the latency of GET /v1/graph/entities/{id} (the neighbourhood)
# and of the entity search, median and max of --requests requests each
# (curl's total time), for the entity with most facts among the search hits.
#
#   flowrag index ../shared/data/bench/2wiki/corpus.jsonl --db /tmp/g.db
#   bench/graph_export.sh --db /tmp/g.db
#
# Options: --db STORE (required) --runs N (default 3) --requests N (default 21)
# --query Q (entity search, default "a") --flowrag BIN (default
# build/release/tools/flowrag) --port P (default 18931).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
db=""
runs=3
requests=21
query=a
flowrag="$root/build/release/tools/flowrag"
port=18931
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --query) query=$2; shift 2 ;;
    --flowrag) flowrag=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$db" ] || { echo "--db STORE is required" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
maximum() { sort -g | tail -1; }

for format in graphml jsonl; do
  : > "$tmp/times"
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$flowrag" export -q --db "$db" --format "$format" \
      --out "$tmp/out.$format"
    cut -d' ' -f1 "$tmp/time" >> "$tmp/times"
  done
  echo "export $format: $(stat -c %s "$tmp/out.$format") bytes, median $(median < "$tmp/times") s" \
       "of $runs runs, peak RSS $(cut -d' ' -f2 "$tmp/time") KiB (last run)"
done
"$flowrag" export --db "$db" --entities-only --out "$tmp/entities.graphml" 2>&1 | sed 's/^/entities-only /'

"$flowrag" serve --db "$db" --port "$port" > "$tmp/serve.log" 2>&1 &
server=$!
for _ in $(seq 200); do
  curl -sf "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break
  sleep 0.1
done
base="http://127.0.0.1:$port/v1/graph"
hub=$(curl -sf "$base/entities?q=$query&limit=100" |
      python3 -c 'import json,sys; e=json.load(sys.stdin)["entities"]; h=max(e, key=lambda x: x["facts"]); print(h["id"], h["facts"], h["name"])')
id=${hub%% *}
echo "neighbourhood of entity $hub (facts, name)"
time_of() {
  : > "$tmp/lat"
  for _ in $(seq "$requests"); do
    curl -s -o /dev/null -w '%{time_total}\n' "$1" >> "$tmp/lat"
  done
  echo "$2: median $(median < "$tmp/lat") s, max $(maximum < "$tmp/lat") s over $requests requests"
}
time_of "$base/entities/$id" "GET /v1/graph/entities/{id} (40 neighbours, 3 facts each)"
time_of "$base/entities/$id?neighbours=200&facts_per_neighbour=20" "GET /v1/graph/entities/{id} (200 neighbours, 20 facts each)"
time_of "$base/entities?q=$query&limit=20" "GET /v1/graph/entities?q=$query"
fact=$(curl -sf "$base/entities/$id" | python3 -c 'import json,sys; print([e for e in json.load(sys.stdin)["edges"] if e["kind"]=="RELATED_TO"][0]["fact"])')
time_of "$base/facts/$fact/passages" "GET /v1/graph/facts/{id}/passages"
