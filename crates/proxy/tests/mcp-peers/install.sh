#!/bin/sh
# Installs the MCP test peers into this folder, from the npm and PyPI
# registries only, and skips whatever is already in place:
#   node_modules/  @modelcontextprotocol/server-everything (2025-11-25 peer),
#                  @modelcontextprotocol/sdk (benchmark client),
#                  @modelcontextprotocol/conformance, and Node 22 (npm "node")
#   .venv/         PyPI mcp 2.x (2026-07-28 peer)
# `cargo xtask test` and `cargo xtask bench` run it. With --check it installs
# nothing: it says what is missing or out of date and exits 1, which is how
# the tests find out (they fail with that reason).
# Usage: sh crates/proxy/tests/mcp-peers/install.sh [--check]
set -eu
cd "$(dirname "$0")"

check=0
[ "${1:-}" = "--check" ] && check=1
missing=""

if [ ! -x node_modules/.bin/mcp-server-everything ] \
  || [ ! -x node_modules/.bin/node ] \
  || [ ! -f node_modules/.package-lock.json ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  if [ $check = 1 ]; then
    missing="$missing npm packages (node_modules/ missing or older than package-lock.json);"
  else
    echo "mcp-peers: installing npm packages" >&2
    npm ci --no-audit --no-fund --loglevel=error
  fi
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import mcp, uvicorn" 2>/dev/null \
  || [ requirements.txt -nt .venv/pyvenv.cfg ]; then
  if [ $check = 1 ]; then
    missing="$missing the Python peer (.venv/ missing, incomplete or older than requirements.txt);"
  else
    echo "mcp-peers: installing the Python peer" >&2
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    touch .venv/pyvenv.cfg
  fi
fi

if [ -n "$missing" ]; then
  echo "The MCP test peers in $(pwd) are not installed:$missing" \
    "cargo xtask test installs them (or run: sh crates/proxy/tests/mcp-peers/install.sh)." >&2
  exit 1
fi
