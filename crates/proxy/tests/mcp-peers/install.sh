#!/bin/sh
# Installs the MCP test peers into this folder, from the npm and PyPI
# registries only, and skips whatever is already in place:
#   node_modules/  @modelcontextprotocol/server-everything (2025-11-25 peer),
#                  @modelcontextprotocol/sdk (benchmark client),
#                  @modelcontextprotocol/conformance, and Node 22 (npm "node")
#   .venv/         PyPI mcp 2.x (2026-07-28 peer)
# Usage: sh crates/proxy/tests/mcp-peers/install.sh
set -eu
cd "$(dirname "$0")"

if [ ! -x node_modules/.bin/mcp-server-everything ] \
  || [ ! -x node_modules/.bin/node ] \
  || [ ! -f node_modules/.package-lock.json ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "mcp-peers: installing npm packages" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import mcp, uvicorn" 2>/dev/null \
  || [ requirements.txt -nt .venv/pyvenv.cfg ]; then
  echo "mcp-peers: installing the Python peer" >&2
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  touch .venv/pyvenv.cfg
fi
