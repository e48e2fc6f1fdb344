// Agents for the journeys: real MCP clients Hearth did not write, talking
// to the `hearth serve` Playwright started, with a credential made in
// Settings → Agents. The official Python SDK runs as a child process
// (agent_client.py, from the peers' venv) and reports each step as a JSON
// line; the official TypeScript SDK is loaded from the peers'
// node_modules into the test itself.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from '@playwright/test';
import { e2ePorts, hearthBin, repoRoot } from './env.mjs';
import { peersDir } from './mcp.mjs';

const python = path.join(peersDir, '.venv', 'bin', 'python');
const script = path.join(repoRoot, 'e2e', 'support', 'agent_client.py');

/// Hearth's MCP endpoint on the server Playwright started.
export function endpoint() {
  return `http://127.0.0.1:${e2ePorts().app}/mcp/server`;
}

/// Connects an agent in Settings → Agents; returns its credential.
export async function connectAgent(page, name, { client = 'claude-code' } = {}) {
  await page.goto('/#/settings');
  const panel = page.locator('.agents-panel');
  await panel.getByLabel('Agent', { exact: true }).selectOption(client);
  await panel.getByLabel('Agent name').fill(name);
  await panel.getByRole('button', { name: 'Connect', exact: true }).click();
  const credential = panel.getByTestId('agent-credential');
  await expect(credential).toBeVisible();
  const key = (await credential.getByTestId('agent-key').textContent()).trim();
  expect(key).toMatch(/^hearth_agent_[A-Za-z0-9_-]{40,}$/);
  return key;
}

/// Reads a child process's stdout as one JSON record a line: `next()`
/// gives the next record (failing with the end of its stderr when none
/// comes in time).
export function jsonLines(child) {
  const lines = [];
  const waiters = [];
  let buffer = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    buffer += d;
    let at;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      if (!line.trim()) continue;
      const record = JSON.parse(line);
      const w = waiters.shift();
      if (w) w(record);
      else lines.push(record);
    }
  });
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-8000); });
  return {
    next(timeoutMs = 60_000) {
      if (lines.length) return Promise.resolve(lines.shift());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the agent said nothing in ${timeoutMs} ms; stderr:\n${stderr}`)), timeoutMs);
        waiters.push((r) => { clearTimeout(timer); resolve(r); });
      });
    },
    stderr: () => stderr,
  };
}

/// The Python SDK as an agent, running `steps` (see agent_client.py).
/// `transport` is 'http' or 'stdio'; `mode` 'auto' (2026-07-28) or
/// 'legacy' (2025-11-25).
export function pythonAgent(key, steps, { transport = 'http', mode = 'auto', url = endpoint() } = {}) {
  const args = transport === 'stdio'
    ? [script, 'stdio', hearthBin, url, mode, JSON.stringify(steps)]
    : [script, 'http', url, mode, JSON.stringify(steps)];
  const child = spawn(python, args, {
    env: { ...process.env, HEARTH_AGENT_KEY: key },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const { next, stderr } = jsonLines(child);
  return {
    /// The next step's report.
    next,
    /// Lets a paused agent go on.
    resume() {
      child.stdin.write('\n');
    },
    stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
    },
    stderr,
  };
}

/// The official TypeScript SDK client (npm @modelcontextprotocol/sdk),
/// over Streamable HTTP with the agent's credential, connected.
export async function typescriptAgent(key, url = endpoint()) {
  const sdk = path.join(peersDir, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
  const { Client } = await import(pathToFileURL(path.join(sdk, 'index.js')).href);
  const { StreamableHTTPClientTransport } = await import(pathToFileURL(path.join(sdk, 'streamableHttp.js')).href);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'hearth-e2e-typescript', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
