"""An agent for Hearth's journeys and benchmarks, on the official MCP
Python SDK (PyPI `mcp` 2.x): a client Hearth did not write.

Usage:
  python agent_client.py http URL MODE STEPS
  python agent_client.py stdio HEARTH_BIN URL MODE STEPS

The credential comes from HEARTH_AGENT_KEY. MODE is the SDK's connect
mode: "auto" (probes server/discover: 2026-07-28) or "legacy" (the
initialize handshake: 2025-11-25). "http" speaks Streamable HTTP to URL;
"stdio" starts `HEARTH_BIN mcp serve --stdio --url URL` and speaks to it.
STEPS is a JSON list, each one of:
  {"do": "list_tools"}
  {"do": "call", "name": "...", "arguments": {...}, "progress": true}
  {"do": "list_resources"}
  {"do": "read", "uri": "..."}
  {"do": "pause"}           waits for a line on stdin before going on
  {"do": "calls", "name": ..., "arguments": ..., "count": N}
                            N sequential calls, timed (for benchmarks)
Every step prints one JSON line on stdout: what came back, or the error.
"""

import json
import os
import sys
import time

import anyio
import httpx2
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def emit(record):
    print(json.dumps(record), flush=True)


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run_steps(client, steps):
    for step in steps:
        what = step["do"]
        try:
            if what == "list_tools":
                result = await client.list_tools()
                emit({"step": what, "tools": [t.name for t in result.tools], "result": dump(result)})
            elif what == "call":
                progress = []

                async def on_progress(value, total, message):
                    progress.append({"progress": value, "message": message})

                result = await client.call_tool(
                    step["name"],
                    step.get("arguments", {}),
                    progress_callback=on_progress if step.get("progress") else None,
                )
                emit({"step": what, "result": dump(result), "progress": progress})
            elif what == "list_resources":
                result = await client.list_resources()
                emit({"step": what, "result": dump(result)})
            elif what == "read":
                result = await client.read_resource(step["uri"])
                emit({"step": what, "result": dump(result)})
            elif what == "pause":
                emit({"step": what})
                await anyio.to_thread.run_sync(sys.stdin.readline)
            elif what == "calls":
                times, errors = [], 0
                for _ in range(step["count"]):
                    t0 = time.perf_counter()
                    try:
                        result = await client.call_tool(step["name"], step.get("arguments", {}))
                        if result.is_error:
                            errors += 1
                    except Exception:  # noqa: BLE001 - counted, not fatal
                        errors += 1
                    times.append((time.perf_counter() - t0) * 1000.0)
                emit({"step": what, "ms": times, "errors": errors})
            else:
                emit({"step": what, "error": f"unknown step {what!r}"})
        except Exception as e:  # noqa: BLE001 - every failure is reported
            error = getattr(e, "error", None)
            emit({
                "step": what,
                "error": str(e),
                "code": getattr(error, "code", None),
            })


async def main():
    kind = sys.argv[1]
    key = os.environ["HEARTH_AGENT_KEY"]
    if kind == "http":
        url, mode, steps = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"},
            timeout=httpx2.Timeout(30.0, read=600.0),
        )
        target = streamable_http_client(url, http_client=http)
    elif kind == "stdio":
        hearth, url, mode, steps = sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
        target = StdioServerParameters(
            command=hearth,
            args=["mcp", "serve", "--stdio", "--url", url],
            env={"HEARTH_AGENT_KEY": key, "PATH": os.environ.get("PATH", "")},
        )
    else:
        raise SystemExit(f"unknown transport {kind!r}")
    try:
        async with Client(target, mode=mode, read_timeout_seconds=600) as client:
            info = client.server_info
            emit({
                "step": "connected",
                "protocol": client.protocol_version,
                "server": info.name if info else None,
            })
            await run_steps(client, steps)
    except Exception as e:  # noqa: BLE001 - a failed connect is a result too
        error = getattr(e, "error", None)
        emit({"step": "connect", "error": str(e), "code": getattr(error, "code", None)})


if __name__ == "__main__":
    anyio.run(main)
