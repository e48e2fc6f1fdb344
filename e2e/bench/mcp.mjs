// MCP in the browser, as figures (never assertions): against real servers
// started here on 127.0.0.1 and the app in headless Chromium,
//   - connect time: from "Add server" (or Reconnect) until the card says
//     connected — handshake, tools/list, resources, templates, prompts and
//     registering the tools as skills;
//   - tools/call round trip: the call path's own duration (permission
//     check, the MCP call, the Activity record) of an always-allowed echo,
//     through the browser's fetch transport (server-everything, 2025-11-25)
//     and through hearth serve's stdio bridge (a stdio server);
//   - 1,000 tools: connecting a server with 1,000 tools, and a
//     discover_skills call while they are registered.
// Usage: node e2e/bench/mcp.mjs (after trunk build and cargo build -p hearth-proxy)
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions } from '../support/env.mjs';
import { figure } from './figures.mjs';
import { requirePeers, startAppsServer, startEverything, startHearth, stdioServerConfig } from '../support/mcp.mjs';

const CALLS = 30;
const RECONNECTS = 5;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function summary(xs, unit = 'ms') {
  const s = [...xs].sort((a, b) => a - b);
  const p90 = s[Math.min(s.length - 1, Math.floor(s.length * 0.9))];
  return `median ${median(xs).toFixed(1)} ${unit}, p90 ${p90.toFixed(1)} ${unit}, min ${s[0].toFixed(1)} ${unit} (n=${xs.length})`;
}

function nav(page, name) {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
}

/// Clicks `button` inside the page and waits, in the page, until the card
/// of `server` has left and come back to "connected"; returns the time.
async function timeConnect(page, server, buttonSelector) {
  return page.evaluate(async ({ server, buttonSelector }) => {
    const cardSel = `.server-card[data-server="${server}"]`;
    const t0 = performance.now();
    document.querySelector(buttonSelector).click();
    let left = !document.querySelector(cardSel) || document.querySelector(cardSel).dataset.status !== 'connected';
    return new Promise((resolve, reject) => {
      const check = () => {
        const card = document.querySelector(cardSel);
        const status = card && card.dataset.status;
        if (status !== 'connected') left = true;
        if (status === 'failed') { observer.disconnect(); reject(new Error(card.textContent)); }
        if (left && status === 'connected') { observer.disconnect(); resolve(performance.now() - t0); }
      };
      const observer = new MutationObserver(check);
      observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
      check();
    });
  }, { server, buttonSelector });
}

async function addServer(page, url, name) {
  await nav(page, 'Servers').click();
  await page.getByLabel('Server URL').fill(url);
  await page.getByLabel('Server name').fill(name);
  return timeConnect(page, name, '.add-server button[type="submit"]');
}

async function reconnects(page, name) {
  const out = [];
  for (let i = 0; i < RECONNECTS; i++) {
    out.push(await timeConnect(page, name, `.server-card[data-server="${name}"] .server-actions button.small`));
  }
  return out;
}

async function switchOn(page, skillId) {
  await nav(page, 'Skills').click();
  const row = page.locator(`.skill[data-skill="${skillId}"]`);
  await row.getByRole('switch').check();
}

function ms(text) {
  const m = /([\d.]+)\s*(ms|s)\b/.exec(text);
  if (!m) return NaN;
  return m[2] === 's' ? parseFloat(m[1]) * 1000 : parseFloat(m[1]);
}

/// Runs `line` CALLS times (the first allowed always) and returns the
/// call path's durations from the result cards.
async function roundTrips(page, skillId, line) {
  await nav(page, 'Chat').click();
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  const cards = page.locator(`.result-card[data-skill="${skillId}"]`);
  const before = await cards.count();
  await composer.fill(line);
  await composer.press('Enter');
  await page.getByRole('dialog').getByRole('button', { name: 'Always allow this skill' }).click();
  await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length >= n, [`.result-card[data-skill="${skillId}"]`, before + 1]);
  for (let i = 1; i <= CALLS; i++) {
    await composer.fill(line);
    await composer.press('Enter');
    await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length >= n, [`.result-card[data-skill="${skillId}"]`, before + 1 + i]);
  }
  const statuses = await cards.evaluateAll((els) => els.map((e) => e.dataset.status));
  if (statuses.some((s) => s !== 'completed')) throw new Error(`a call of ${skillId} did not complete: ${statuses.join(', ')}`);
  const texts = await cards.locator('.card-duration').allTextContents();
  // Cards are in call order; the first call waited for the person.
  return texts.slice(before + 1).map(ms).filter(Number.isFinite);
}

requirePeers();
const hearth = await startHearth(stdioServerConfig());
const everything = await startEverything();
const many = await startAppsServer(['--tools', '1000']);
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on('pageerror', (e) => console.error(`  page error: ${e.message}`));
  // Opened as a person does: from the launch link, which carries the key.
  await page.goto(`${hearth.url}/#token=${hearth.key}`);
  await page.waitForSelector('body[data-ready]');
  await page.goto(`${hearth.url}/#/servers`);

  const first = await addServer(page, everything.url, 'everything');
  console.log(`  connect, server-everything (2025-11-25, browser fetch): first ${first.toFixed(1)} ms; reconnect ${summary(await reconnects(page, 'everything'))}`);
  await switchOn(page, 'everything__echo');
  const direct = await roundTrips(page, 'everything__echo', '/everything__echo {"message":"hi"}');
  console.log(`  tools/call round trip, browser fetch transport → server-everything: ${summary(direct)}`);
  figure({ figure: 'MCP connect, server-everything (first)', value: first, unit: 'ms' });
  figure({ figure: 'MCP tools/call round trip, browser → server-everything', value: median(direct), unit: 'ms', detail: summary(direct) });

  await nav(page, 'Servers').click();
  const stdioFirst = await timeConnect(page, 'py', '.stdio-server[data-stdio="py"] button');
  console.log(`  connect, stdio server through hearth serve: first ${stdioFirst.toFixed(1)} ms (includes starting the process); reconnect ${summary(await reconnects(page, 'py'))}`);
  await switchOn(page, 'py__echo');
  const bridged = await roundTrips(page, 'py__echo', '/py__echo {"message":"hi"}');
  console.log(`  tools/call round trip, browser → hearth serve stdio bridge → stdio server: ${summary(bridged)}`);
  figure({ figure: 'MCP tools/call round trip through the stdio bridge', value: median(bridged), unit: 'ms', detail: summary(bridged) });

  const manyFirst = await addServer(page, many.url, 'many');
  const count = await page.locator('.server-card[data-server="many"] .server-tools li').count();
  console.log(`  connect, ${count} tools (PyPI mcp 2.x, 2026-07-28): first ${manyFirst.toFixed(1)} ms; reconnect ${summary(await reconnects(page, 'many'))}`);
  await nav(page, 'Skills').click();
  const registered = await page.locator('.skill[data-skill^="many__"]').count();
  console.log(`  skills registered from it: ${registered}`);
  await switchOn(page, 'many__inventory_417');
  await nav(page, 'Chat').click();
  const discoveries = [];
  for (let i = 0; i < 10; i++) {
    const composer = page.getByRole('textbox', { name: 'Message or command' });
    await composer.fill('/discover_skills {"query": "archive shipments"}');
    await composer.press('Enter');
    await page.waitForFunction((n) => document.querySelectorAll('.result-card[data-skill="discover_skills"]').length >= n, i + 1);
  }
  for (const t of await page.locator('.result-card[data-skill="discover_skills"] .card-duration').allTextContents()) discoveries.push(ms(t));
  console.log(`  discover_skills with those tools registered (call path): ${summary(discoveries)}`);
  figure({ figure: `MCP connect, a server with ${count} tools (first)`, value: manyFirst, unit: 'ms' });
  figure({ figure: `discover_skills with ${count} MCP tools registered (call path)`, value: median(discoveries), unit: 'ms', detail: summary(discoveries) });
} finally {
  await browser.close();
  many.stop();
  everything.stop();
  hearth.stop();
}
