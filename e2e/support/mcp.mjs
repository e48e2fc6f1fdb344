// MCP servers for the journeys, started by the tests on 127.0.0.1: npm's
// server-everything (2025-11-25), PyPI mcp 2.x servers (2026-07-28) — the
// peers' modern_server.py and our mcp_test_server.py (an MCP App, no-CORS
// and OAuth variants) — and extra `hearth serve` instances with their own
// config directory (for stdio servers). Everything is stopped by pid.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { hearthBin, hearthDist, repoRoot } from './env.mjs';
import { expect } from '@playwright/test';

export const peersDir = path.join(repoRoot, 'crates', 'proxy', 'tests', 'mcp-peers');
const python = path.join(peersDir, '.venv', 'bin', 'python');
const node = path.join(peersDir, 'node_modules', '.bin', 'node');

let checked = false;

/// Fails with what is missing unless the peers are installed (`cargo xtask
/// test` and `cargo xtask bench` install them; this installs nothing).
export function requirePeers() {
  if (checked) return;
  try {
    execFileSync('sh', [path.join(peersDir, 'install.sh'), '--check'], { stdio: 'pipe' });
  } catch (e) {
    throw new Error(`The MCP test peers are not installed: ${String(e.stderr || e.message).trim()}`);
  }
  checked = true;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, child, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited early (${child.exitCode})`);
    const open = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

class Peer {
  constructor(child, port, url) {
    this.child = child;
    this.port = port;
    this.url = url;
  }

  stop() {
    if (this.child.exitCode === null) process.kill(this.child.pid, 'SIGTERM');
  }

  /// Stops the process and waits until it has exited (its port is free).
  async stopAndWait() {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    process.kill(this.child.pid, 'SIGTERM');
    await exited;
  }
}

async function start(command, args, { env = {}, cwd = peersDir, what, urlPath = '/mcp', port }) {
  const fullEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(fullEnv)) if (v === undefined) delete fullEnv[k];
  const child = spawn(command, args, { cwd, env: fullEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  try {
    await waitForPort(port, child, what);
  } catch (e) {
    if (child.exitCode === null) process.kill(child.pid, 'SIGTERM');
    throw new Error(`${e.message}\n${stderr}`);
  }
  return new Peer(child, port, `http://127.0.0.1:${port}${urlPath}`);
}

/// server-everything over Streamable HTTP (sessions, SSE, CORS *), on
/// `port` or a free one.
export async function startEverything(port) {
  port = port || await freePort();
  const script = path.join(peersDir, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  return start(node, [script, 'streamableHttp'], { env: { PORT: String(port) }, what: 'server-everything', port });
}

/// The peers' PyPI mcp 2.x server (2026-07-28, with CORS).
export async function startModern() {
  const port = await freePort();
  return start(python, [path.join(peersDir, 'modern_server.py'), String(port)], { what: 'the modern Python server', port });
}

/// Our test server with an MCP App; `flags` e.g. ['--no-cors'] or ['--oauth'].
export async function startAppsServer(flags = []) {
  const port = await freePort();
  const script = path.join(repoRoot, 'e2e', 'support', 'mcp_test_server.py');
  return start(python, [script, String(port), ...flags], { what: `the MCP test server ${flags.join(' ')}`, port });
}

/// Another `hearth serve`, with `mcp-servers.json` = `stdio` in its own
/// config directory. Returns { url, stop }.
export async function startHearth(stdio) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-e2e-'));
  fs.writeFileSync(path.join(dir, 'mcp-servers.json'), JSON.stringify(stdio, null, 2));
  const port = await freePort();
  const peer = await start(
    hearthBin,
    ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', hearthDist, '--config-dir', dir],
    { what: 'hearth serve', port, urlPath: '/', cwd: repoRoot, env: { HEARTH_CONFIG: undefined, HEARTH_CONFIG_DIR: undefined, HEARTH_MCP_SERVERS: undefined } },
  );
  const stop = peer.stop.bind(peer);
  peer.stop = () => { stop(); fs.rmSync(dir, { recursive: true, force: true }); };
  peer.url = `http://127.0.0.1:${port}`;
  // The key its launch link carries (kept in its config directory).
  peer.key = fs.readFileSync(path.join(dir, 'api-token'), 'utf8').trim();
  return peer;
}

/// The stdio test server of the native bridge tests.
export function stdioServerConfig() {
  return { mcpServers: { py: { command: 'python3', args: [path.join(peersDir, 'stdio_server.py')] } } };
}

/// A place in the main navigation (cards also link to Skills).
export function nav(page, name) {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
}

/// Adds a server in the Servers panel as a person does; answers its card.
export async function addServer(page, url, name, { relay = false } = {}) {
  await nav(page, 'Servers').click();
  await page.getByLabel('Server URL').fill(url);
  await page.getByLabel('Server name').fill(name);
  if (relay) {
    await page.locator('.more-options summary').click();
    await page.getByLabel('Connect through Hearth').check();
  }
  await page.getByRole('button', { name: 'Add server' }).click();
  return page.locator(`.server-card[data-server="${name}"]`);
}

/// Switches a skill on in the Skills place; answers its row.
export async function switchOn(page, skillId) {
  await nav(page, 'Skills').click();
  const row = page.locator(`.skill[data-skill="${skillId}"]`);
  await row.getByRole('switch').check();
  await expect(row).not.toHaveClass(/disabled/);
  return row;
}
