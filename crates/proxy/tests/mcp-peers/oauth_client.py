"""An agent that signs in to Hearth through MCP's authorization spec, on
the official MCP Python SDK (PyPI `mcp` 2.x, `OAuthClientProvider`): a
client Hearth did not write, doing discovery, dynamic registration,
authorization with PKCE, the token exchange, then MCP requests.

Usage:
  python oauth_client.py URL STEPS [CLIENT_NAME]

Its "browser" is this script: it opens the authorization URL, follows
redirects and the waiting page's reloads as a browser does (it runs no
script, and Hearth's pages have none), and lands on the client's own
loopback listener, which takes the code as a native client's does. The
person's consent is given elsewhere, in the Hearth tab.

STEPS is a JSON list, each one of:
  {"do": "list_tools"}
  {"do": "call", "name": "...", "arguments": {...}}
  {"do": "pause"}           waits for a line on stdin before going on
Every event prints one JSON line on stdout: "page" (the title of each
page the browser shows), "connected", each step's result or error, and
"failed" if signing in fails.
"""

import asyncio
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)


def emit(record):
    print(json.dumps(record), flush=True)


class Memory(TokenStorage):
    """Tokens and the registration, kept for this run only."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Listener:
    """The client's loopback listener for the authorization response."""

    def __init__(self):
        self.query = None
        self.arrived = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                outer.query = parse_qs(urlparse(self.path).query)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"You can close this window.")
                outer.arrived.set()

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


REFRESH = re.compile(r'http-equiv="refresh" content="\d+;url=([^"]+)"')
TITLE = re.compile(r"<h1>(.*?)</h1>")


async def browse(url, timeout_s=300):
    """Goes where a browser goes from `url`: redirects, and the waiting
    page's reloads, until a page with no reload, or the listener."""
    shown = None
    async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as web:
        deadline = asyncio.get_running_loop().time() + timeout_s
        while asyncio.get_running_loop().time() < deadline:
            res = await web.get(url)
            if res.status_code in (301, 302, 303, 307, 308):
                url = urljoin(url, res.headers["location"])
                continue
            text = res.text
            title = TITLE.search(text)
            title = title.group(1) if title else text[:200]
            if title != shown:
                emit({"step": "page", "status": res.status_code, "title": title})
                shown = title
            reload = REFRESH.search(text)
            if not reload:
                return
            await asyncio.sleep(0.3)
            url = urljoin(url, reload.group(1).replace("&amp;", "&"))


async def main():
    url, steps = sys.argv[1], json.loads(sys.argv[2])
    name = sys.argv[3] if len(sys.argv) > 3 else "Claude Code"
    listener = Listener()
    browsing = []

    async def redirect_handler(authorization_url):
        emit({"step": "authorize", "url": authorization_url})
        browsing.append(asyncio.create_task(browse(authorization_url)))

    async def callback_handler():
        while not listener.arrived.is_set():
            if browsing and browsing[-1].done():
                browsing[-1].result()
                if not listener.arrived.is_set():
                    raise RuntimeError("the browser stopped before coming back to the client")
            await asyncio.sleep(0.1)
        query = listener.query
        listener.arrived.clear()
        if "error" in query:
            raise RuntimeError(f"authorization failed: {query['error'][0]}: {query.get('error_description', [''])[0]}")
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name=name,
            redirect_uris=[listener.uri],
            grant_types=["authorization_code"],
            response_types=["code"],
        ),
        storage=Memory(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    http = httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30.0, read=600.0))
    try:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=600) as client:
            emit({"step": "connected", "protocol": client.protocol_version})
            for step in steps:
                what = step["do"]
                try:
                    if what == "list_tools":
                        result = await client.list_tools()
                        emit({"step": what, "tools": [t.name for t in result.tools]})
                    elif what == "call":
                        result = await client.call_tool(step["name"], step.get("arguments", {}))
                        emit({"step": what, "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)})
                    elif what == "pause":
                        emit({"step": what})
                        await anyio.to_thread.run_sync(sys.stdin.readline)
                    else:
                        emit({"step": what, "error": f"unknown step {what!r}"})
                except Exception as e:  # noqa: BLE001 - every failure is reported
                    emit({"step": what, "error": f"{type(e).__name__}: {e}"})
    except BaseException as e:  # noqa: BLE001 - reported, then the exit code says it
        inner = e
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        emit({"step": "failed", "error": f"{type(inner).__name__}: {inner}"})
        sys.exit(1)
    finally:
        listener.server.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
