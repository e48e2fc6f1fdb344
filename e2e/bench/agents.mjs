// Hearth as an MCP server for agents, as figures (never assertions):
//   - tools/call round trip of a note search, agent → hearth serve → the
//     tab → back, from the official Python SDK client (2026-07-28), 100
//     sequential calls: p50, p99, errors;
//   - the same client and calls against the MCP server-everything peer
//     on this machine (its echo tool): the anchor of the ratio;
//   - the tab's own call path for those same calls (each Activity
//     record's duration: the permission check, the search, the record);
//   - 10 agents at once, each with its own credential, 20 calls each:
//     p50, p99, errors.
// The agents' note searches are reads, so nobody is asked.
// Usage: node e2e/bench/agents.mjs (after trunk build and the native hearth)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions, repoRoot } from '../support/env.mjs';
import { figure, median, ratio } from './figures.mjs';
import { peersDir, requirePeers, startEverything, startHearth } from '../support/mcp.mjs';

const SEQUENTIAL = 100;
const AGENTS = 10;
const EACH = 20;
const python = path.join(peersDir, '.venv', 'bin', 'python');
const script = path.join(repoRoot, 'e2e', 'support', 'agent_client.py');

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};

function summary(xs) {
  return `p50 ${pct(xs, 0.5).toFixed(2)} ms, p99 ${pct(xs, 0.99).toFixed(2)} ms, min ${Math.min(...xs).toFixed(2)} ms (n=${xs.length})`;
}

/// Runs the Python SDK agent with `steps`; resolves to its reports.
function agent(url, key, steps, mode = 'auto') {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [script, 'http', url, mode, JSON.stringify(steps)], {
      env: { ...process.env, HEARTH_AGENT_KEY: key },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
    child.on('exit', (code) => {
      const reports = out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
      const failed = reports.find((r) => r.error);
      if (code !== 0 || failed) reject(new Error(`agent failed (${code}): ${JSON.stringify(failed)}\n${err}`));
      else resolve(reports);
    });
  });
}

/// The app's own call to its API (Settings → Agents does the same).
async function appCall(hearth, method, apiPath, body) {
  const r = await fetch(`${hearth.url}${apiPath}`, {
    method,
    headers: {
      'x-hearth-token': hearth.key,
      origin: hearth.url,
      'sec-fetch-site': 'same-origin',
      'content-type': 'application/json',
    },
    body: body && JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${apiPath}: ${r.status} ${await r.text()}`);
  return r.json();
}

requirePeers();
const hearth = await startHearth({ mcpServers: {} });
const everything = await startEverything();
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const endpoint = `${hearth.url}/mcp/server`;
  const page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on('pageerror', (e) => console.error(`  page error: ${e.message}`));
  await page.goto(`${hearth.url}/#token=${hearth.key}`);
  await page.waitForSelector('body[data-ready]');
  // Something to search: 200 notes, made from the command bar's /note.
  for (let i = 0; i < 200; i++) {
    const composer = page.getByRole('textbox', { name: 'Message or command' });
    await composer.fill(`/note Trip note ${i} #travel\nBook the tram to Belém, day ${i}`);
    await composer.press('Enter');
  }
  await page.waitForFunction(() => document.querySelectorAll('.result-card[data-skill="notes"]').length >= 200, null, { timeout: 120_000 });
  const agents = [];
  for (let i = 0; i < AGENTS; i++) {
    agents.push(await appCall(hearth, 'POST', '/api/agents', { name: `Agent ${i}`, client: 'other' }));
  }
  // The first agent makes the tab open its channel; reload so it does.
  await page.reload();
  await page.waitForSelector('body[data-ready]');
  await page.waitForFunction(async (url) => {
    const r = await fetch(`${url}/api/agents/summary`, { headers: { 'x-hearth-token': localStorage.getItem('hearth.server-key') } });
    return (await r.json()).tabs >= 1;
  }, hearth.url, { timeout: 30_000 });

  const search = { action: 'search', query: 'tram Belém', limit: 5 };
  const warm = { do: 'calls', name: 'notes', arguments: search, count: 10 };
  const [, , , seq] = await agent(endpoint, agents[0].credential, [
    { do: 'list_tools' }, warm, { do: 'calls', name: 'notes', arguments: search, count: SEQUENTIAL },
  ]);
  console.log(`  notes search via hearth serve + tab, ${SEQUENTIAL} sequential: ${summary(seq.ms)}, errors ${seq.errors}`);
  const viaHearth = { figure: 'agent tools/call round trip, note search via hearth serve + tab (p50)', value: pct(seq.ms, 0.5) };
  figure({ ...viaHearth, unit: 'ms', detail: `${summary(seq.ms)}, errors ${seq.errors}` });
  figure({ figure: 'agent tools/call round trip, 100 sequential (p99)', value: pct(seq.ms, 0.99), unit: 'ms' });
  figure({ figure: 'agent tools/call, 100 sequential: errors', value: seq.errors, unit: 'calls', goal: { max: 0 } });

  const [, , , direct] = await agent(everything.url, 'unused', [
    { do: 'list_tools' },
    { do: 'calls', name: 'echo', arguments: { message: 'hi' }, count: 10 },
    { do: 'calls', name: 'echo', arguments: { message: 'hi' }, count: SEQUENTIAL },
  ]);
  console.log(`  echo on server-everything directly, ${SEQUENTIAL} sequential: ${summary(direct.ms)}`);
  const anchor = { figure: 'tools/call round trip, Python SDK → server-everything directly (p50)', value: pct(direct.ms, 0.5) };
  figure({ ...anchor, unit: 'ms', detail: summary(direct.ms) });
  ratio('agent round trip via Hearth against server-everything directly', viaHearth, anchor);

  // The tab's own part: the call path's duration in each agent call's
  // Activity record.
  await page.goto(`${hearth.url}/#/activity`);
  const inTab = await page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('hearth');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction('activity', 'readonly');
      const all = tx.objectStore('activity').getAll();
      all.onsuccess = () => resolve(all.result
        .filter((r) => r.origin && r.origin.agent)
        .map((r) => r.result.duration_ms));
      all.onerror = () => reject(all.error);
    };
  }));
  console.log(`  the tab's own call path for those calls (Activity durations): ${summary(inTab)}`);
  const own = { figure: "the tab's own call path for an agent's note search (p50)", value: median(inTab) };
  figure({ ...own, unit: 'ms', detail: summary(inTab) });
  ratio('agent round trip via Hearth against the tab\'s own call path', viaHearth, own);

  // Ten agents at once.
  const t0 = performance.now();
  const runs = await Promise.all(agents.map((a) => agent(endpoint, a.credential, [
    { do: 'calls', name: 'notes', arguments: search, count: EACH },
  ])));
  const wall = performance.now() - t0;
  const all = runs.flatMap((r) => r[1].ms);
  const errors = runs.reduce((n, r) => n + r[1].errors, 0);
  console.log(`  ${AGENTS} agents at once, ${EACH} calls each: ${summary(all)}, errors ${errors}, ${(all.length / (wall / 1000)).toFixed(1)} calls/s overall`);
  figure({ figure: `${AGENTS} concurrent agents: tools/call p50`, value: pct(all, 0.5), unit: 'ms', detail: summary(all) });
  figure({ figure: `${AGENTS} concurrent agents: tools/call p99`, value: pct(all, 0.99), unit: 'ms' });
  figure({ figure: `${AGENTS} concurrent agents: errors`, value: errors, unit: 'calls', goal: { max: 0 } });
} finally {
  await browser.close();
  everything.stop();
  hearth.stop();
}
