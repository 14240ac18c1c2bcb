#!/usr/bin/env bash
# MCP tool-call latency as the official TypeScript SDK client sees it
# (js/clients/mcp_client.mjs): the median of N `query` calls over stdio
# (`flowrag mcp`) and over Streamable HTTP (`flowrag serve`, POST /mcp), on
# the demo store, per retrieval method, beside the engine's own median time
# (time_ms of the results). Writes bench/out/mcp_latency.md.
#
#   bench/mcp_latency.sh                     # --repeat 50, methods bm25 and auto
#   bench/mcp_latency.sh --repeat 20 --flowrag build/release/tools/flowrag
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
flowrag="$root/build/release/tools/flowrag"
repeat=50
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --flowrag) flowrag=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$flowrag" index -q "$root/examples/demo" --db "$work/demo.db"
"$flowrag" serve --db "$work/demo.db" --port 0 2> "$work/serve.log" &
server_pid=$!
port=""
for _ in $(seq 100); do
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$work/serve.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$work/serve.log" >&2; exit 1; }

client="$root/js/clients/mcp_client.mjs"
row() {  # transport method json
  python3 -c '
import json, sys
l = json.loads(sys.argv[3])["latency"]
print("| %s | %s | %d | %.2f | %.3f |" % (sys.argv[1], sys.argv[2], l["calls"], l["medianMs"], l["engineMedianMs"]))
' "$@"
}
{
  echo "# MCP tool-call latency"
  echo
  echo "\`bench/mcp_latency.sh --repeat $repeat\` on $(date -u +%Y-%m-%d), $(nproc) cores"
  echo "($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), release build, demo store"
  echo "(36 documents). \`query\` with top_k 5, called by the TypeScript SDK client one at a time;"
  echo "median over the calls, client side, and the engine's own retrieval time (time_ms)."
  echo
  echo "| transport | method | calls | median ms (client) | median ms (engine) |"
  echo "| --- | --- | --- | --- | --- |"
  for method in bm25 auto; do
    out=$(node "$client" stdio "$flowrag" "$work/demo.db" --repeat "$repeat" --latency-method "$method")
    row stdio "$method" "$out"
    out=$(node "$client" http "http://127.0.0.1:$port/mcp" --repeat "$repeat" --latency-method "$method")
    row "HTTP (/mcp)" "$method" "$out"
  done
} | tee "$root/bench/out/mcp_latency.md"
