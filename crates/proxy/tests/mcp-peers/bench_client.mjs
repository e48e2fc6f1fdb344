// Times tools/call round trips with the official TypeScript SDK client, for
// comparison with Hearth's client on the same server.
// Usage: node bench_client.mjs URL TOOL ARGS_JSON COUNT
// Prints one JSON line: {"client":"typescript-sdk","samples_ms":[...]}
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, argsJson, countText] = process.argv.slice(2);
const count = Number(countText);
const args = JSON.parse(argsJson);

const client = new Client({ name: "hearth-bench", version: "1.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
// Warm up the connection and the server's code paths.
for (let i = 0; i < 20; i++) await client.callTool({ name: tool, arguments: args });
const samples = [];
for (let i = 0; i < count; i++) {
  const t0 = performance.now();
  await client.callTool({ name: tool, arguments: args });
  samples.push(performance.now() - t0);
}
await transport.close();
console.log(JSON.stringify({ client: "typescript-sdk", samples_ms: samples }));
