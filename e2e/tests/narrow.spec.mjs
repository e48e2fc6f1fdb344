// Phones: at 320 and 360 px every place, every kind of card and every
// dialog fits the window, measured, not eyeballed: nothing sticks out past
// its right edge and the page never scrolls sideways (only code blocks and
// other boxes made to scroll may be wider, inside their own scrolling box).
// The cards: the calculator, notes, tasks, memory, JavaScript and Python,
// files, web, an MCP tool, an approval (inline and as a dialog) and a
// model's reply with its tool cards. At 360 px each place is compared with
// its committed baseline (e2e/support/screens.mjs).
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { expectScreen, openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { e2ePorts, repoRoot } from '../support/env.mjs';
import { requirePeers, startEverything } from '../support/mcp.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';
import { grantFolder, runSkill, withoutPickers } from '../support/sandbox.mjs';
import { close, listen } from '../support/servers.mjs';

const PLACES = ['chat', 'notes', 'tasks', 'memory', 'skills', 'servers', 'activity', 'settings'];
const project = path.join(repoRoot, 'e2e', 'fixtures', 'project');
const ports = e2ePorts();
const PAGE = `http://127.0.0.1:${ports.pages}/narrow`;
// What differs from run to run: hidden in the compared pictures.
const CHANGING = [
  '[data-testid=build]',
  '[data-testid=storage-usage]',
  '[data-testid=local-servers]',
  '[data-testid=python-state]',
  'tr.log-row td:nth-child(1)',
  'tr.log-row td:nth-child(5)',
  '.log-row .when',
  '.log-row .duration',
  '.card-meta',
  '.conversation-detail',
  '.server-card .server-url',
  '.server-card .server-era',
  'p.muted > code',
];

/// What sticks out past the right edge of the window, in `scope`.
async function overflowing(page, scope = 'main') {
  return page.evaluate((scope) => {
    const out = [];
    const root = document.scrollingElement;
    if (root.scrollWidth > window.innerWidth + 1) out.push(`the page is ${root.scrollWidth}px wide`);
    for (const el of document.querySelectorAll('main.content, .timeline, .modal')) {
      if (el.scrollWidth > el.clientWidth + 1) out.push(`${el.className} scrolls sideways (${el.scrollWidth} > ${el.clientWidth})`);
    }
    // A box that scrolls sideways by design holds its content; the page's
    // own scroller does not count as one.
    const scrollsItself = (el) => {
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        if (a.matches('main, .content, .modal-backdrop')) return false;
        if (a.matches('pre, textarea')) return true;
        const x = getComputedStyle(a).overflowX;
        if (x === 'auto' || x === 'scroll') return a.getBoundingClientRect().right <= window.innerWidth + 1;
      }
      return false;
    };
    for (const el of document.querySelectorAll(`${scope} *`)) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (getComputedStyle(el).visibility === 'hidden' || el.closest('.visually-hidden,[hidden]')) continue;
      if (r.right > window.innerWidth + 1 && !scrollsItself(el)) {
        const what = `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : ''}`;
        out.push(`${what} ends at ${Math.round(r.right)}`);
      }
    }
    return [...new Set(out)].slice(0, 10);
  }, scope);
}

async function run(page, line) {
  const n = await page.locator('.result-card').count();
  await runCommand(page, line);
  await expect(page.locator('.result-card')).toHaveCount(n + 1);
  return page.locator('.result-card').nth(n);
}

const nav = (page, name) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

let pages;
let everything;
test.beforeAll(async () => {
  requirePeers();
  pages = await listen(ports.pages, (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>A page with a rather long title about hearths and homes</title></head>
      <body><main><h1>Hearths</h1><p>${'A hearth is the place in a home where a fire is kept. '.repeat(12)}</p>
      <p><a href="https://example.org/${'long-path-'.repeat(12)}">a link with a very long address</a></p></main></body></html>`);
  });
  everything = await startEverything();
});

test.afterAll(async () => {
  if (pages) await close(pages);
  if (everything) everything.stop();
});

for (const width of [320, 360]) {
  test(`every place, card and dialog fits a ${width} px window`, { tag: '@baseline' }, async ({ browser, baseURL }) => {
    test.setTimeout(300_000);
    const context = await browser.newContext({ baseURL, viewport: { width, height: 740 } });
    await withoutPickers(context);
    const page = await context.newPage();
    const errors = await openApp(page);
    const fits = async (what, scope) => expect(await overflowing(page, scope), `${what} at ${width} px`).toEqual([]);

    // Every place is in view in the navigation.
    for (const link of await page.locator('nav.sidebar a').all()) {
      await expect(link).toBeInViewport({ ratio: 1 });
    }
    await fits('the empty chat');

    // The core skills' cards.
    await run(page, '/calc 15% of 847');
    await run(page, '/calc 2026-12-25 - 2026-01-01');
    await run(page, '/note Groceries for the long weekend at the lake house #home #weekend\nmilk and eggs');
    await run(page, '/task Renew the passport before the trip to Lisbon tomorrow !high #travel');
    await run(page, '/remember I prefer metric units and the 24-hour clock in everything');
    await fits('core cards');

    // Code: JavaScript and Python, with output, a value and a long line.
    const js = await runSkill(page, 'run_javascript', { code: `console.log('${'x'.repeat(200)}'); ({ answer: 42, list: [1, 2, 3] })` });
    expect(js.status, js.output).toBe('completed');
    const py = await runSkill(page, 'run_python', { code: `print("${'y'.repeat(200)}")\nsum(range(10))` }, { timeout: 150_000 });
    expect(py.status, py.output).toBe('completed');
    const failed = await runSkill(page, 'run_javascript', { code: 'throw new Error("a failure with a message that runs on for quite a while")' });
    expect(failed.status).toBe('failed');
    await fits('code cards');

    // Files from a granted folder.
    await grantFolder(page, project);
    await fits('files granted (chat)');
    const listed = await runSkill(page, 'list_files', { path: 'project' });
    expect(listed.status, listed.output).toBe('completed');
    const read = await runSkill(page, 'read_file', { path: 'project/data.csv' });
    expect(read.status, read.output).toBe('completed');
    await fits('file cards');

    // Web: off (its card offers Enable), then asked for and read.
    const off = await run(page, `/web_fetch ${PAGE}`);
    await expect(off).toHaveAttribute('data-status', 'denied');
    await fits('a refused web card with its Enable offer');
    await off.getByRole('button', { name: 'Enable Web fetch' }).click();
    await runCommand(page, `/web_fetch ${PAGE}`);
    const asking = page.locator('.approval-inline');
    await expect(asking).toBeVisible();
    await fits('an approval in the chat');
    // The same approval as a dialog, from another place.
    await nav(page, 'Notes').click();
    const dialog = page.locator('.modal.approval');
    await expect(dialog).toBeVisible();
    await fits('the approval dialog', '.modal-backdrop');
    await saveScreenshot(page, `narrow-${width}-approval-dialog`);
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    await nav(page, 'Chat').click();
    await expect(page.locator('.result-card[data-skill="web_fetch"][data-status="completed"]')).toHaveCount(1);
    await fits('a web page card');

    // An MCP tool, from a real server.
    await nav(page, 'Servers').click();
    await page.getByLabel('Server URL').fill(everything.url);
    await page.getByLabel('Server name').fill('everything');
    await page.getByRole('button', { name: 'Add server' }).click();
    const server = page.locator('.server-card[data-server="everything"]');
    await expect(server).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await fits('a connected server');
    await nav(page, 'Skills').click();
    await page.locator('.skill[data-skill="everything__echo"]').getByRole('switch').check();
    await nav(page, 'Chat').click();
    await runCommand(page, `/everything__echo {"message":"${'echo '.repeat(40)}"}`);
    await page.locator('.approval-inline').getByRole('button', { name: 'Allow once' }).click();
    await expect(page.locator('.result-card[data-skill="everything__echo"]')).toHaveAttribute('data-status', 'completed');
    await fits('an MCP card');
    await saveScreenshot(page, `narrow-${width}-cards`);

    // Every place with all that in it.
    for (const place of PLACES) {
      await nav(page, place[0].toUpperCase() + place.slice(1)).click();
      await expect(page.locator('main .page, main .chat-layout').first()).toBeVisible();
      if (place === 'notes') await page.getByRole('option').first().click();
      await page.waitForTimeout(150);
      await fits(place);
      await saveScreenshot(page, `narrow-${width}-${place}`);
      if (width === 360) await expectScreen(page, `narrow-360-${place}`, { hide: CHANGING });
    }

    // Dialogs: the skill form, a confirmation, Activity's detail, the skill
    // editor.
    await nav(page, 'Chat').click();
    await runCommand(page, 'jot down an idea');
    await expect(page.getByRole('dialog', { name: 'Notes' })).toBeVisible();
    await fits('the skill form', '.modal-backdrop');
    await page.keyboard.press('Escape');
    await nav(page, 'Activity').click();
    await page.locator('tr.log-row').first().click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await fits("Activity's detail", '.modal-backdrop');
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Clear…' }).click();
    await expect(page.getByRole('alertdialog')).toBeVisible();
    await fits('a confirmation', '.modal-backdrop');
    await page.keyboard.press('Escape');
    await nav(page, 'Skills').click();
    await page.getByRole('button', { name: 'New skill' }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await fits('the skill editor', '.modal-backdrop');
    await page.keyboard.press('Escape');

    // A model's reply with a tool call waiting, then refused.
    const model = await startFakeModel('approval.json');
    try {
      await nav(page, 'Skills').click();
      await useProvider(page, model.base);
      await nav(page, 'Chat').click();
      await page.keyboard.press('Control+Shift+O');
      await say(page, 'Please fetch https://example.com/ for me');
      const call = page.locator('.tool-card[data-skill="web_fetch"]');
      await expect(call).toHaveAttribute('data-state', 'asking');
      await fits('a tool call waiting for approval');
      await page.locator('.timeline').getByRole('dialog', { name: 'Web fetch' }).getByRole('button', { name: 'Deny' }).click();
      await expect(call).toHaveAttribute('data-state', 'denied');
      await expect(page.locator('.message.assistant').last()).toContainText('The fetch came back with:');
      await fits('a reply after a denied call');
      await saveScreenshot(page, `narrow-${width}-reply`);
    } finally {
      await model.stop();
    }
    expect(errors).toEqual([]);
    await context.close();
  });
}
