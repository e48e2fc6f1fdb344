"""A minimal MCP server over stdio (2025-11-25), standard library only.

Hearth's stdio bridge tests drive it to check restarts, backoff, idle
stops, stderr capture and id mapping. Tools: echo, pid (which process
answered), count (progress notifications), crash (exits with status 3).
"""

import json
import os
import sys

TOOLS = [
    {"name": "echo", "description": "Echoes its message", "inputSchema": {
        "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}},
    {"name": "pid", "description": "Returns the server's process id", "inputSchema": {"type": "object"}},
    {"name": "count", "description": "Reports progress up to n", "inputSchema": {
        "type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "crash", "description": "Exits at once", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(request_id, value):
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": value}]}})


def handle(message):
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if request_id is None:
        return  # notifications need no answer
    if method == "initialize":
        version = params.get("protocolVersion", "2025-11-25")
        send({"jsonrpc": "2.0", "id": request_id, "result": {
            "protocolVersion": version if version in ("2025-11-25", "2025-06-18", "2025-03-26") else "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stdio-test-server", "version": "1.0.0"},
            "instructions": "A stdio test server."}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            text(request_id, "Echo: " + str(args.get("message", "")))
        elif name == "pid":
            text(request_id, str(os.getpid()))
        elif name == "count":
            token = (params.get("_meta") or {}).get("progressToken")
            n = int(args.get("n", 3))
            for i in range(1, n + 1):
                if token is not None:
                    send({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": i, "total": n}})
            text(request_id, f"counted to {n}")
        elif name == "crash":
            print("crashing on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main():
    print(f"stdio test server {os.getpid()} ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        line = line.strip()
        if line:
            handle(json.loads(line))


if __name__ == "__main__":
    main()
