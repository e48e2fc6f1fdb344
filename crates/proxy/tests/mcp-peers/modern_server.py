"""A 2026-07-28 MCP server on PyPI `mcp` 2.x, for Hearth's tests and benchmarks.

Usage: python modern_server.py PORT

Serves http://127.0.0.1:PORT/mcp with a CORS layer (a browser tab must be
able to reach it) and offers every kind of thing Hearth's client handles:
text, image, audio, resource links, embedded resources, structured content
and tool errors; progress; a multi-round (input_required) tool; a tool with
an x-mcp-header parameter; an app-only MCP Apps tool; a tool that changes
the tool list; paged-looking many tools; resources, a template, prompts.
Binds to 127.0.0.1 only.
"""

import base64
import sys

import anyio
from typing import Annotated

import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import (
    AudioContent,
    ListResourcesResult,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcp.server.mcpserver.resources import TextResource
from pydantic import BaseModel, Field
from starlette.middleware.cors import CORSMiddleware

# A 1x1 PNG and a 44-byte silent WAV, base64.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00@\x1f\x00\x00\x01\x00\x08\x00data\x00\x00\x00\x00"
).decode()

class PagedServer(MCPServer):
    """Lists resources three at a time, so clients must follow cursors."""

    PAGE = 3

    async def _handle_list_resources(self, ctx, params):
        everything = await self.list_resources()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.PAGE
        return ListResourcesResult(
            resources=everything[start:end],
            next_cursor=str(end) if end < len(everything) else None,
        )


server = PagedServer(
    name="hearth-modern-peer",
    version="1.0.0",
    instructions="A test server for Hearth. Use echo to repeat text.",
)


@server.tool(description="Echoes back the input string")
def echo(message: str) -> str:
    return f"Echo: {message}"


class Sum(BaseModel):
    sum: float


@server.tool(description="Adds two numbers and returns the sum as structured content")
def add(a: float, b: float) -> Sum:
    return Sum(sum=a + b)


@server.tool(description="Returns one block of every content type")
def every_content() -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(text="some text"),
            ImageContent(data=PNG, mime_type="image/png"),
            AudioContent(data=WAV, mime_type="audio/wav"),
            ResourceLink(uri="test://static/hello", name="hello", mime_type="text/plain"),
            EmbeddedResource(
                resource=TextResourceContents(uri="test://static/hello", mime_type="text/plain", text="Hello, world")
            ),
        ],
        structured_content={"kinds": 5},
    )


@server.tool(description="Always fails, as a tool-level error")
def fail(reason: str = "it was asked to") -> CallToolResult:
    return CallToolResult(content=[TextContent(text=f"failed because {reason}")], is_error=True)


@server.tool(description="Counts up, reporting progress for each step")
async def count(steps: int, ctx: Context) -> str:
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"counted to {steps}"


@server.tool(description="Waits, so that a client can cancel it")
async def wait(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "waited"


@server.tool(description="Greets someone, asking for their name first")
def greet(ctx: Context) -> str | InputRequiredResult:
    answers = ctx.input_responses
    if not answers or "who" not in answers:
        return InputRequiredResult(
            input_requests={
                "who": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message="What is your name?",
                        requested_schema={
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"],
                        },
                    )
                )
            },
            request_state="greet-round-1",
        )
    answer = answers["who"]
    content = getattr(answer, "content", None) or {}
    return f"Hello, {content.get('name', 'stranger')} (state {ctx.request_state})"


@server.tool(description="Reports the region it was routed to")
def where(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], ctx: Context) -> str:
    header = (ctx.headers or {}).get("mcp-param-region")
    return f"region {region}, header {header}"


@server.tool(
    description="Refreshes the chart; only the server's own app calls it",
    meta={"ui": {"resourceUri": "ui://charts/view.html", "visibility": ["app"]}},
)
def refresh_chart() -> str:
    return "refreshed"


@server.tool(description="Removes nothing, but says it might", annotations=ToolAnnotations(destructive_hint=True))
def risky() -> str:
    return "nothing happened"


@server.tool(description="Adds a tool and tells subscribers the list changed")
async def grow(ctx: Context) -> str:
    name = f"grown_{len(server._tool_manager.list_tools())}"
    server.add_tool(lambda: "I grew", name=name, description="A tool added at run time")
    await ctx.notify_tools_changed()
    return f"added {name}"


@server.resource("test://static/hello", mime_type="text/plain", description="A greeting")
def hello() -> str:
    return "Hello, world"


@server.resource("test://static/blob", mime_type="application/octet-stream", description="Three bytes")
def blob() -> bytes:
    return b"\x00\x01\x02"


for n in range(1, 6):
    server.add_resource(
        TextResource(uri=f"test://notes/{n}", name=f"note-{n}", text=f"note number {n}", mime_type="text/plain")
    )


@server.resource("test://items/{item_id}", mime_type="text/plain", description="An item by id")
def item(item_id: str) -> str:
    return f"item {item_id}"


@server.prompt(description="A simple prompt")
def simple() -> str:
    return "Say hello."


@server.prompt(description="A prompt about a topic")
def topic(subject: str, tone: str = "plain") -> str:
    return f"Write about {subject} in a {tone} tone."


def app():
    inner = server.streamable_http_app(host="127.0.0.1")
    return CORSMiddleware(
        inner,
        allow_origins=["*"],
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=["*"],
        expose_headers=["Mcp-Session-Id", "MCP-Protocol-Version", "WWW-Authenticate"],
    )


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(), host="127.0.0.1", port=port, log_level="warning")
