#!/bin/sh
# Runs the official MCP conformance suite's client scenarios against
# `hearth mcp conformance`, for both protocol revisions Hearth speaks, and
# prints the suite's summaries. Needs install.sh to have run and the
# hearth binary built (pass its path, default target/debug/hearth).
# Usage: sh crates/proxy/tests/mcp-peers/conformance.sh [path/to/hearth] [results-dir]
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
hearth="${1:-$root/target/debug/hearth}"
out="${2:-$root/target/mcp-conformance}"
# The suite's mock authorization servers accept this fixed client ID
# metadata document URL.
command="$hearth mcp conformance --client-metadata-url https://conformance-test.local/client-metadata.json"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
node="$here/node_modules/.bin/node"
status=0
for revision in 2025-11-25 2026-07-28; do
  echo "== required client scenarios for $revision"
  "$node" "$suite" client --command "$command" --requirements "$revision" -o "$out/$revision" \
    > "$out.$revision.log" 2>&1 || status=1
  sed -n '/SUITE SUMMARY/,$p' "$out.$revision.log"
done
for scenario in auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback; do
  echo "== $scenario (2025-03-26, not required)"
  "$node" "$suite" client --command "$command" --scenario "$scenario" --spec-version 2025-03-26 \
    -o "$out/2025-03-26" 2>&1 | grep -E "^(Passed|.*OVERALL)"
done
exit $status
