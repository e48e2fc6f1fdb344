// Hearth as an MCP server for the person's other agents, with the tab
// open: real clients Hearth did not write (the official Python SDK over
// Streamable HTTP and over the stdio bridge, in both protocol eras; the
// official TypeScript SDK) connect with a credential made in Settings →
// Agents, list the tools, and create a note that the person approves in
// a dialog naming the agent; the note shows in Notes and in Activity as
// the agent's. Then: a denial is an error the agent reads; revoking ends
// a session mid-way; with the tab closed an agent is told to open
// Hearth; attacks from a web page, a forged Host, the app's key, a skill
// not shared, a self-approval, oversized and malformed messages are all
// refused with nothing run; and the conformance suite's server scenarios.
import { test, expect } from '@playwright/test';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { connectAgent, endpoint, pythonAgent, typescriptAgent } from '../support/agents.mjs';
import { e2eKey, e2ePorts, repoRoot } from '../support/env.mjs';
import { freePort, peersDir, requirePeers } from '../support/mcp.mjs';
import { close, listen, rawRequest } from '../support/servers.mjs';

test.beforeAll(() => requirePeers());

const APP_PORT = e2ePorts().app;

function nav(page, name) {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
}

/// The Activity rows an agent's calls left.
async function agentRows(page, name) {
  await nav(page, 'Activity').click();
  return page.locator(`tr.log-row[data-agent="${name}"]`);
}

test('an agent on the Python SDK lists the tools, creates a note the person approves, and reads it back', async ({ page }) => {
  const errors = await openApp(page);
  const key = await connectAgent(page, 'Claude Code');
  await expect(page.getByTestId('agent-snippet')).toContainText('claude mcp add --transport http hearth');
  await saveScreenshot(page, 'agents-connected');
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page.locator('.agent-card[data-agent="Claude Code"]')).toBeVisible();

  const agent = pythonAgent(key, [
    { do: 'list_tools' },
    { do: 'call', name: 'notes', arguments: { action: 'create', title: 'Ideas from Claude', body: 'Use Hearth as shared memory', tags: ['agents'] }, progress: true },
    { do: 'list_resources' },
    { do: 'pause' },
  ]);
  try {
    const connected = await agent.next();
    expect(connected).toMatchObject({ step: 'connected', protocol: '2026-07-28', server: 'hearth' });
    const tools = await agent.next();
    expect(tools.tools).toEqual(['memory', 'notes', 'tasks']);
    const notesTool = tools.result.tools.find((t) => t.name === 'notes');
    expect(notesTool.inputSchema.properties.action.enum).toContain('create');

    // The call waits for the person, in a dialog that names the agent.
    const dialog = page.getByRole('dialog', { name: 'Notes' });
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('.approval-origin')).toHaveText('Claude Code wants to create a note');
    await expect(dialog).toContainText('"title": "Ideas from Claude"');
    await expect(dialog).toContainText('Claude Code is an agent you connected');
    await expect(page.locator('.agent-call[data-asking="true"]')).toContainText('Claude Code');
    await saveScreenshot(page, 'agents-approval');
    await dialog.getByRole('button', { name: 'Allow once' }).click();

    const created = await agent.next();
    expect(created.result.isError).toBe(false);
    expect(created.result.structuredContent.note.title).toBe('Ideas from Claude');
    expect(created.result.content[0].text).toContain('Ideas from Claude');
    expect(created.progress.map((p) => p.message)).toContain('Waiting for the person to approve Notes in Hearth');
    const noteId = created.result.structuredContent.note.id;

    const resources = await agent.next();
    expect(resources.result.resources.map((r) => r.uri)).toContain(`hearth://note/${noteId}`);
    await agent.next(); // paused

    // The note is in Notes, and in Activity as the agent's.
    await nav(page, 'Notes').click();
    await expect(page.getByRole('option', { name: /Ideas from Claude/ })).toBeVisible();
    const rows = await agentRows(page, 'Claude Code');
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText('from Claude Code');
    await rows.first().click();
    await expect(page.getByTestId('activity-origin')).toHaveText('Claude Code, an agent you connected');
    await page.keyboard.press('Escape');

    // A resource read is a notes read, as the agent: it runs (reads do
    // not ask) and is logged.
    agent.resume();
    const reader = pythonAgent(key, [{ do: 'read', uri: `hearth://note/${noteId}` }]);
    try {
      await reader.next();
      const read = await reader.next();
      expect(read.result.contents[0]).toMatchObject({
        uri: `hearth://note/${noteId}`,
        mimeType: 'text/markdown',
        text: '# Ideas from Claude\n\n#agents\n\nUse Hearth as shared memory\n',
      });
    } finally {
      reader.stop();
    }
    await expect(await agentRows(page, 'Claude Code')).toHaveCount(2);
  } finally {
    agent.stop();
  }
  expect(errors).toEqual([]);
});

test('over the stdio bridge, in the 2025-11-25 era: a denial is an error the agent reads', async ({ page }) => {
  await openApp(page);
  const key = await connectAgent(page, 'Claude Desktop', { client: 'claude-desktop' });
  await expect(page.getByTestId('agent-snippet')).toContainText('"HEARTH_AGENT_KEY"');
  await page.getByRole('button', { name: 'Done' }).click();
  const agent = pythonAgent(key, [
    { do: 'list_tools' },
    { do: 'call', name: 'tasks', arguments: { action: 'create', title: 'Water the plants' } },
  ], { transport: 'stdio', mode: 'legacy' });
  try {
    expect(await agent.next()).toMatchObject({ step: 'connected', protocol: '2025-11-25' });
    expect((await agent.next()).tools).toEqual(['memory', 'notes', 'tasks']);
    const dialog = page.getByRole('dialog', { name: 'Tasks' });
    await expect(dialog.locator('.approval-origin')).toHaveText('Claude Desktop wants to add a task');
    await dialog.getByRole('button', { name: 'Deny' }).click();
    const denied = await agent.next();
    expect(denied.result.isError).toBe(true);
    expect(denied.result.content[0].text).toBe('Hearth did not run Tasks: you denied this Tasks call');
    expect(denied.result._meta['app.hearth/status']).toBe('denied');
  } finally {
    agent.stop();
  }
  await nav(page, 'Tasks').click();
  await expect(page.getByText('Water the plants')).toHaveCount(0);
  const rows = await agentRows(page, 'Claude Desktop');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute('data-status', 'denied');
});

test('the TypeScript SDK: "always allow" for one agent stops asking that agent only', async ({ page }) => {
  await openApp(page);
  const key = await connectAgent(page, 'Codex', { client: 'codex' });
  await page.getByRole('button', { name: 'Done' }).click();
  const client = await typescriptAgent(key);
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['memory', 'notes', 'tasks']);
    const first = client.callTool({ name: 'memory', arguments: { action: 'remember', text: 'Prefers tea' } });
    const dialog = page.getByRole('dialog', { name: 'Memory' });
    await expect(dialog.locator('.approval-origin')).toHaveText('Codex wants to remember something about you');
    await dialog.getByRole('button', { name: 'Always allow for Codex' }).click();
    expect((await first).isError).toBe(false);
    // Asked once: the next change from Codex runs at once.
    const second = await client.callTool({ name: 'memory', arguments: { action: 'remember', text: 'Works Mondays' } });
    expect(second.isError).toBe(false);
    expect(second.structuredContent.memory.text).toBe('Works Mondays');
    await expect(page.locator('.agent-card[data-agent="Codex"] .agent-always')).toContainText('memory');
  } finally {
    await client.close();
  }
  // The person's own settings did not change: memory is not always
  // allowed for their model.
  await nav(page, 'Skills').click();
  const memory = page.locator('.skill[data-skill="memory"]');
  await expect(memory.locator('.grant')).toHaveCount(0);
  await expect(memory.getByLabel('Approval for Memory')).not.toHaveValue('always-allow');
});

test('revoking an agent mid-session: its next call fails', async ({ page }) => {
  await openApp(page);
  const key = await connectAgent(page, 'goose', { client: 'goose' });
  await page.getByRole('button', { name: 'Done' }).click();
  const agent = pythonAgent(key, [
    { do: 'list_tools' },
    { do: 'pause' },
    { do: 'list_tools' },
  ], { mode: 'legacy' });
  try {
    expect((await agent.next()).step).toBe('connected');
    expect((await agent.next()).tools).toHaveLength(3);
    await agent.next(); // paused
    const card = page.locator('.agent-card[data-agent="goose"]');
    await card.getByRole('button', { name: 'Revoke…' }).click();
    await page.getByRole('alertdialog', { name: 'Revoke goose?' }).getByRole('button', { name: 'Revoke' }).click();
    await expect(card).toHaveCount(0);
    agent.resume();
    const after = await agent.next();
    expect(after.error).toMatch(/revoked|credential|401|Unauthorized/i);
  } finally {
    agent.stop();
  }
});

test('with the tab closed, an agent is told to open Hearth', async ({ page, context }) => {
  await openApp(page);
  const key = await connectAgent(page, 'Claude Code');
  await page.getByRole('button', { name: 'Done' }).click();
  await page.close();
  // The tab said it was leaving; give the server a moment to hear it.
  await new Promise((r) => setTimeout(r, 500));
  const agent = pythonAgent(key, [{ do: 'list_tools' }]);
  try {
    await agent.next();
    const listing = await agent.next();
    expect(listing.error).toContain('open Hearth to use its skills');
  } finally {
    agent.stop();
  }
  // Opened again, the tab answers once more.
  const again = await context.newPage();
  await openApp(again);
  const back = pythonAgent(key, [{ do: 'list_tools' }]);
  try {
    await back.next();
    expect((await back.next()).tools).toHaveLength(3);
  } finally {
    back.stop();
  }
});

test('attacks: a web page, a forged Host, the app key, an unshared skill, self-approval, bad messages — refused, nothing runs', async ({ page, browser }) => {
  await openApp(page);
  const key = await connectAgent(page, 'Claude Code');
  await page.getByRole('button', { name: 'Done' }).click();
  const modern = (method, params = {}) => JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: {
      ...params,
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
  const create = modern('tools/call', { name: 'notes', arguments: { action: 'create', title: 'pwned' } });
  const agentHeaders = (extra = {}) => ({
    host: `127.0.0.1:${APP_PORT}`,
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'notes',
    ...extra,
  });

  // 1. A web page of another origin, in the same browser, with the real
  // credential (it cannot have it, but even so).
  const pagePort = await freePort();
  const attacker = await listen(pagePort, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>Cute cats</title><h1>cats</h1>');
  });
  try {
    const evil = await browser.newPage();
    await evil.goto(`http://localhost:${pagePort}/`);
    const outcome = await evil.evaluate(async ({ url, key, body }) => {
      const out = {};
      try {
        const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
        out.cors = `read ${r.status}`;
      } catch {
        out.cors = 'blocked';
      }
      try {
        // A "simple" request needs no preflight: it reaches the server.
        await fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body });
        out.simple = 'sent';
      } catch {
        out.simple = 'blocked';
      }
      return out;
    }, { url: endpoint(), key, body: create });
    expect(outcome.cors).toBe('blocked');
    await evil.close();
  } finally {
    await close(attacker);
  }
  const fromPage = await rawRequest(APP_PORT, { method: 'POST', path: '/mcp/server', headers: agentHeaders({ origin: `http://localhost:${pagePort}`, 'sec-fetch-site': 'cross-site' }), body: create });
  expect(fromPage.status).toBe(403);

  // 2. A forged (rebinding) Host; 3. the app's own key as a credential.
  expect((await rawRequest(APP_PORT, { method: 'POST', path: '/mcp/server', headers: agentHeaders({ host: 'evil.example' }), body: create })).status).toBe(403);
  const appKey = await rawRequest(APP_PORT, { method: 'POST', path: '/mcp/server', headers: agentHeaders({ authorization: `Bearer ${e2eKey()}` }), body: create });
  expect(appKey.status).toBe(401);
  expect(appKey.json.error.message).toContain("the Hearth app's own key");

  // 4. A skill not shared with the agent (the calculator), and one that
  // came from an MCP server would be the same: unknown to the agent.
  const unshared = await rawRequest(APP_PORT, {
    method: 'POST',
    path: '/mcp/server',
    // A plain JSON answer, so the refusal reads as one body.
    headers: agentHeaders({ 'mcp-name': 'calculator', accept: 'application/json' }),
    body: modern('tools/call', { name: 'calculator', arguments: { expression: '1+1' } }),
  });
  expect(unshared.status).toBe(200);
  expect(unshared.json.error.message).toContain('Unknown tool: calculator');

  // 5. Self-approval: while its call waits for the person, the agent tries
  // to answer it on the tab's channel, and to always-allow itself.
  const waiting = rawRequest(APP_PORT, { method: 'POST', path: '/mcp/server', headers: agentHeaders({ accept: 'application/json' }), body: create });
  const dialog = page.getByRole('dialog', { name: 'Notes' });
  await expect(dialog).toBeVisible();
  const agentOnly = { host: `127.0.0.1:${APP_PORT}`, authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  for (const [method, p, body] of [
    ['POST', '/api/agents/reply', JSON.stringify({ relay: 'r1', tab: 'tab-1', result: { content: [], isError: false } })],
    ['PUT', '/api/agents/anything', JSON.stringify({ always: ['notes'] })],
    ['GET', '/api/agents', undefined],
  ]) {
    const r = await rawRequest(APP_PORT, { method, path: p, headers: agentOnly, body });
    expect(r.status, `${method} ${p}`).toBe(403);
  }
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Deny' }).click();
  const answered = await waiting;
  expect(answered.json.result.isError).toBe(true);

  // 6. Oversized and malformed messages.
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(2 * 1024 * 1024) } });
  expect((await rawRequest(APP_PORT, { method: 'POST', path: '/mcp/server', headers: agentHeaders({ 'mcp-method': 'tools/list' }), body: big })).status).toBe(413);
  const broken = await rawRequest(APP_PORT, { method: 'POST', path: '/mcp/server', headers: agentHeaders(), body: '{"jsonrpc":"2.0","id":1,"method":' });
  expect(broken.status).toBe(400);
  expect(broken.json.error.code).toBe(-32700);

  // Nothing ran: the one call that reached the tab was denied, no note.
  await nav(page, 'Notes').click();
  await expect(page.getByRole('option', { name: /pwned/ })).toHaveCount(0);
  const rows = await agentRows(page, 'Claude Code');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute('data-status', 'denied');
  await expect(page.locator('tr.log-row[data-status="completed"]')).toHaveCount(0);
});

/// Forwards every request to Hearth's endpoint with the agent's
/// credential added: how the conformance suite, which sends none, reaches
/// an endpoint that needs one. The forwarder stands in for Hearth's
/// address, so a Host or Origin naming the forwarder is turned into
/// Hearth's; any other (the suite's rebinding attack) passes unchanged.
async function credentialForwarder(key) {
  const port = await freePort();
  const mine = `127.0.0.1:${port}`;
  const hearth = `127.0.0.1:${APP_PORT}`;
  const server = await listen(port, (req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${key}` };
    if (headers.host === mine) headers.host = hearth;
    if (headers.origin === `http://${mine}`) headers.origin = `http://${hearth}`;
    const upstream = http.request({
      host: '127.0.0.1',
      port: APP_PORT,
      method: req.method,
      path: req.url,
      headers,
      agent: false,
    }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(upstream);
  });
  return { port, server };
}

test('the conformance suite\'s server scenarios, for both revisions', async ({ page }) => {
  test.setTimeout(300_000);
  await openApp(page);
  const key = await connectAgent(page, 'Conformance suite', { client: 'other' });
  await page.getByRole('button', { name: 'Done' }).click();
  // The host the forwarder is reached at must be one Hearth serves: the
  // suite checks that a rebinding Host is refused and a local one is not.
  const { port, server } = await credentialForwarder(key);
  const node = path.join(peersDir, 'node_modules', '.bin', 'node');
  const suite = path.join(peersDir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-conformance-'));
  const summary = {};
  try {
    for (const revision of ['2025-11-25', '2026-07-28']) {
      const baseline = path.join(repoRoot, 'e2e', 'fixtures', 'conformance', `server-${revision}.yaml`);
      const log = await new Promise((resolve) => {
        execFile(node, [suite, 'server', '--url', `http://127.0.0.1:${port}/mcp/server`, '--requirements', revision, '--expected-failures', baseline, '-o', path.join(out, revision)], {
          timeout: 240_000,
          maxBuffer: 16 * 1024 * 1024,
        }, (error, stdout, stderr) => resolve({ code: error?.code ?? 0, text: `${stdout}\n${stderr}` }));
      });
      fs.writeFileSync(path.join(repoRoot, 'e2e', 'test-results', `conformance-server-${revision}.log`), log.text);
      const passed = log.text.match(/(\d+) passed/);
      const failed = log.text.match(/(\d+) failed/);
      summary[revision] = { passed: passed && Number(passed[1]), failed: failed && Number(failed[1]), exit: log.code };
      expect(log.code, `${revision}: only the expected failures (see the baseline)\n${log.text.slice(-4000)}`).toBe(0);
    }
  } finally {
    await close(server);
    console.log(`conformance server scenarios: ${JSON.stringify(summary)}`);
  }
});
