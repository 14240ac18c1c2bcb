#!/usr/bin/env bash
# Load test of POST /v1/query: starts `flowrag serve` on loopback over a
# benchmark store and drives it with wrk (Debian package wrk), questions taken
# from the benchmark's questions.jsonl; prints throughput and p50/p99 latency.
#
#   bench/server_load.sh                          # 2wiki, qafd, -t2 -c16 -d20s
#   bench/server_load.sh --method bm25 --duration 5s
#   bench/server_load.sh --db demo.db --questions questions.jsonl --duration 3s
#   bench/server_load.sh --bench ../shared/data/bench/hotpotqa-train --writes 20 --duration 60s
#
# --writes N: while wrk runs, N times insert one new document (a passage of
# the benchmark's corpus under a fresh id) with POST /v1/documents and delete
# it again with DELETE /v1/documents/{id}, one at a time; prints the median,
# p90 and max latency of each (curl's total time).
#
# Options: --bench DIR (default ../shared/data/bench/2wiki) --db STORE (default:
# a cache store indexed from DIR on first use, like `flowrag eval`) --questions
# FILE (default DIR/questions.jsonl) --limit N (questions, default 50)
# --method M (default qafd) --pipeline P (default single) --top-k K (default 5)
# --threads T --connections C --duration D (wrk; default 2, 16, 20s)
# --writes N (default 0) --flowrag BIN (default build/release/tools/flowrag).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bench="$root/../shared/data/bench/2wiki"
db=""
questions=""
limit=50
method=qafd
pipeline=single
top_k=5
threads=2
connections=16
duration=20s
flowrag="$root/build/release/tools/flowrag"
writes=0

while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --questions) questions=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --method) method=$2; shift 2 ;;
    --pipeline) pipeline=$2; shift 2 ;;
    --top-k) top_k=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --writes) writes=$2; shift 2 ;;
    --flowrag) flowrag=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "server_load: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

for tool in wrk curl python3; do
  command -v "$tool" >/dev/null || { echo "server_load: $tool not found (scripts/setup.sh)" >&2; exit 1; }
done
[ -x "$flowrag" ] || { echo "server_load: $flowrag not built" >&2; exit 1; }
[ -n "$questions" ] || questions="$bench/questions.jsonl"
[ -f "$questions" ] || { echo "server_load: $questions not found" >&2; exit 1; }

if [ -z "$db" ]; then
  cache="${FLOWRAG_CACHE_DIR:-$HOME/.cache/flowrag}"
  mkdir -p "$cache"
  db="$cache/server_load_$(basename "$bench").db"
  if [ ! -f "$db" ]; then
    echo "server_load: indexing $bench into $db" >&2
    "$flowrag" index "$bench" --db "$db" --chunking none -q
  fi
fi

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# One request body per line: the first $limit questions.
python3 - "$questions" "$limit" "$method" "$pipeline" "$top_k" > "$work/bodies.jsonl" <<'PY'
import json, sys
path, limit, method, pipeline, top_k = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
with open(path) as f:
    for n, line in enumerate(f):
        if n >= limit:
            break
        q = json.loads(line)["question"]
        print(json.dumps({"question": q, "method": method, "pipeline": pipeline, "top_k": top_k}))
PY

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Every open keep-alive connection holds a worker: one per connection, and spare.
"$flowrag" serve --db "$db" --host 127.0.0.1 --port "$port" --threads $((connections + 4)) \
  2> "$work/server.log" &
server_pid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
url="http://127.0.0.1:$port/v1/query"
# Warm-up (and a check that the method answers): every question once.
while IFS= read -r body; do
  code=$(curl -s -o "$work/reply.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "$body" "$url")
  if [ "$code" != 200 ]; then
    echo "server_load: warm-up query failed with HTTP $code: $(head -c 300 "$work/reply.json")" >&2
    exit 1
  fi
done < "$work/bodies.jsonl"

echo "store         $db ($(wc -l < "$work/bodies.jsonl") questions from $questions)"
echo "request       POST /v1/query method=$method pipeline=$pipeline top_k=$top_k"
echo "load          wrk -t$threads -c$connections -d$duration on loopback ($(nproc) cores)"
if [ "$writes" -eq 0 ]; then
  wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$root/bench/server_query.lua" \
    "$url" -- "$work/bodies.jsonl"
  exit 0
fi

# Writes under load: wrk in the background, one insert then one delete at a time.
python3 - "$bench/corpus.jsonl" "$writes" "$work" <<'PY'
import json, sys
corpus, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(corpus) as f:
    for i, line in enumerate(f):
        if i >= n:
            break
        d = json.loads(line)
        doc = {"id": f"bench-write-{i}", "title": d.get("title", ""), "text": d["text"]}
        with open(f"{work}/write-{i}.json", "w") as out:
            json.dump({"documents": [doc]}, out)
PY
wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$root/bench/server_query.lua" \
  "$url" -- "$work/bodies.jsonl" > "$work/wrk.txt" &
wrk_pid=$!
sleep 2
base="http://127.0.0.1:$port/v1/documents"
for i in $(seq 0 $((writes - 1))); do
  [ -f "$work/write-$i.json" ] || break
  curl -sf -o /dev/null -w '%{time_total}\n' -H 'Content-Type: application/json' \
    --data-binary "@$work/write-$i.json" "$base" >> "$work/insert.txt"
  curl -sf -o /dev/null -w '%{time_total}\n' -X DELETE "$base/bench-write-$i" >> "$work/delete.txt"
done
kill -0 "$wrk_pid" 2>/dev/null || echo "server_load: note: wrk ended before the writes did (raise --duration)" >&2
wait "$wrk_pid"
cat "$work/wrk.txt"
python3 - "$work/insert.txt" "$work/delete.txt" <<'PY'
import statistics, sys
for name, path in (("insert", sys.argv[1]), ("delete", sys.argv[2])):
    xs = sorted(float(x) * 1000 for x in open(path))
    p90 = xs[min(len(xs) - 1, int(0.9 * len(xs)))]
    print(f"{name:6s} n={len(xs)} median {statistics.median(xs):.0f} ms, p90 {p90:.0f} ms, max {xs[-1]:.0f} ms")
PY
