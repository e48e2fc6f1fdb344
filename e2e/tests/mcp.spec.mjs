// MCP as a person meets it, against real servers each test starts on
// 127.0.0.1: add server-everything in the Servers panel and look at what it
// offers; switch its echo tool on in Skills, find it with discover_skills,
// approve a call and see the result; a server's prompt and resource in the
// composer; an MCP App in its sandbox; the 2026-07-28 Python server; a
// server without CORS, in plain words and then through the relay; stdio
// servers of hearth serve; and an OAuth sign-in through a popup.
//
// The model discovering and calling the echo tool through the fake model
// server is in assistant-skills.spec.mjs; here discover_skills is driven
// from the command bar.
import { test, expect } from '@playwright/test';
import { expectScreen, openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { startCanary } from '../support/sandbox.mjs';
import {
  addServer, nav, requirePeers, startAppsServer, startEverything, startHearth, startModern,
  stdioServerConfig, switchOn,
} from '../support/mcp.mjs';

test.beforeAll(() => requirePeers());

test('server-everything: add it, look at it, switch echo on, find it, approve a call', { tag: '@baseline' }, async ({ page }) => {
  const everything = await startEverything();
  try {
    const errors = await openApp(page, 'servers');
    await expect(page.getByText('No servers yet')).toBeVisible();
    await saveScreenshot(page, 'servers-empty');

    const card = await addServer(page, everything.url, 'everything');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await expect(card.locator('.server-era')).toHaveText('MCP 2025-11-25 (sessions)');
    await expect(card.locator('.server-tools li[data-tool="echo"]')).toBeVisible();
    await expect(card.locator('.server-tools li[data-tool="echo"]')).toContainText('off');
    await card.locator('.server-resources summary').click();
    await expect(card.locator('.server-resources li').first()).toBeVisible();
    await card.locator('.server-prompts summary').click();
    await expect(card.locator('.server-prompts li[data-prompt="args-prompt"]')).toContainText('/everything:args-prompt');
    // The card from its top; its address carries a free port, different each run.
    await card.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await expectScreen(page, 'servers-connected', { hide: ['.server-url'] });

    // Integration tier: off until switched on, named with its server.
    const row = await switchOn(page, 'everything__echo');
    await expect(row.locator('.skill-source')).toContainText('of the MCP server everything');

    // discover_skills finds it now that it is on.
    await nav(page, 'Chat').click();
    await runCommand(page, '/discover_skills {"query": "echo back a message"}');
    await expect(page.locator('.result-card[data-skill="discover_skills"] .card-output')).toContainText('everything__echo');

    // A call asks first; allowed once, it runs on the server.
    await runCommand(page, '/everything__echo {"message":"hi"}');
    const dialog = page.getByRole('dialog', { name: 'Echo Tool' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('"message": "hi"');
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    const result = page.locator('.result-card[data-skill="everything__echo"]');
    await expect(result).toHaveAttribute('data-status', 'completed');
    await expect(result.locator('.card-output')).toHaveText('Echo: hi');
    await saveScreenshot(page, 'mcp-result-card');

    // A prompt of the server as a / command puts its text in the composer.
    const composer = page.getByRole('textbox', { name: 'Message or command' });
    await composer.fill('/everything:ar');
    await expect(page.locator('.suggestions')).toContainText('/everything:args-prompt');
    await runCommand(page, '/everything:args-prompt Lisbon');
    await expect(composer).toHaveValue(/Lisbon/);
    await expect(page.getByRole('status').filter({ hasText: 'is in the composer' })).toBeVisible();

    // A resource attached to the message.
    await page.getByRole('button', { name: 'Attach a resource' }).click();
    const picker = page.getByRole('dialog', { name: 'Attach a resource' });
    await picker.getByLabel('Filter resources').fill('architecture');
    await picker.locator('.picker-item').first().click();
    await expect(picker).toBeHidden();
    await expect(page.locator('.attachment')).toContainText('everything');

    // Switched off, its skills leave; switched on, they come back.
    await nav(page, 'Servers').click();
    await card.getByRole('switch', { name: 'Use everything' }).uncheck();
    await expect(card).toHaveAttribute('data-status', 'off');
    await nav(page, 'Skills').click();
    await expect(page.locator('.skill[data-skill="everything__echo"]')).toHaveCount(0);
    await nav(page, 'Servers').click();
    await card.getByRole('switch', { name: 'Use everything' }).check();
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });

    // Removing asks first, and takes the skills and their settings along.
    await card.getByRole('button', { name: 'Remove…' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Remove everything?' });
    await confirm.getByRole('button', { name: 'Remove server' }).click();
    await expect(card).toHaveCount(0);
    await expect(page.getByText('No servers yet')).toBeVisible();
    expect(errors).toEqual([]);
  } finally {
    everything.stop();
  }
});

test('a server restart does not break the session: Hearth starts a new one', async ({ page }) => {
  let everything = await startEverything();
  try {
    const errors = await openApp(page, 'servers');
    const card = await addServer(page, everything.url, 'everything');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await switchOn(page, 'everything__echo');
    await nav(page, 'Chat').click();
    await runCommand(page, '/everything__echo {"message":"before"}');
    await page.getByRole('dialog', { name: 'Echo Tool' }).getByRole('button', { name: 'Always allow this skill' }).click();
    const results = page.locator('.result-card[data-skill="everything__echo"]');
    await expect(results.last().locator('.card-output')).toHaveText('Echo: before');

    // The same server comes back on the same port without our session: its
    // 404 makes Hearth initialise again, and the call goes through.
    const port = everything.port;
    await everything.stopAndWait();
    everything = await startEverything(port);
    await runCommand(page, '/everything__echo {"message":"after"}');
    await expect(results).toHaveCount(2);
    await expect(results.last()).toHaveAttribute('data-status', 'completed');
    await expect(results.last().locator('.card-output')).toHaveText('Echo: after');
    expect(errors).toEqual([]);
  } finally {
    everything.stop();
  }
});

test('an MCP App renders in its sandbox and calls only its app tools', async ({ page }) => {
  const apps = await startAppsServer();
  try {
    const errors = await openApp(page, 'servers');
    const card = await addServer(page, apps.url, 'apps');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await expect(card.locator('.server-era')).toHaveText('MCP 2026-07-28 (stateless)');
    await expect(card.locator('li[data-tool="app_counter"]')).toContainText('app only');
    await expect(card.locator('li[data-tool="greet"]')).toContainText('has an app');
    await card.locator('.server-instructions summary').click();
    await expect(card.locator('.server-instructions pre')).toHaveText(/greet shows a greeting/);

    // The app-only tool is no skill: the model can never see it.
    await nav(page, 'Skills').click();
    await expect(page.locator('.skill[data-skill="apps__app_counter"]')).toHaveCount(0);
    await switchOn(page, 'apps__greet');

    await nav(page, 'Chat').click();
    await runCommand(page, '/apps__greet {"name":"Ada"}');
    await page.getByRole('dialog', { name: 'greet' }).getByRole('button', { name: 'Allow once' }).click();
    await expect(page.locator('.result-card[data-skill="apps__greet"] .card-output')).toHaveText('Hello, Ada!');

    // An opaque origin either way: sandboxed by its attribute, or, once the
    // service worker controls the page, by the policy header it serves the
    // frame with.
    const outer = page.locator('.mcp-app iframe.mcp-app-frame');
    expect(['allow-scripts', null]).toContain(await outer.getAttribute('sandbox'));
    const outerFrame = await (await outer.elementHandle()).contentFrame();
    await expect.poll(() => outerFrame.evaluate(() => self.origin)).toBe('null');
    const view = page.frameLocator('.mcp-app iframe.mcp-app-frame').frameLocator('iframe');
    await expect(view.locator('#title')).toHaveText(/Greeting app in Hearth/);
    await expect(view.locator('#input')).toHaveText('Input: Ada');
    await expect(view.locator('#result')).toHaveText('Result: Hello, Ada! (structured: Ada)');
    // The sandbox: no network, no way into Hearth's page.
    await expect(view.locator('#network')).toHaveText('network: blocked');
    await expect(view.locator('#isolation')).toHaveText('host page: out of reach');
    await expect(view.locator('#navigation')).toHaveText('top navigation: blocked');
    // Its app-only tool asks like any MCP tool — saying the app asks, not
    // the person — and its allowing buttons wake up only after a moment.
    const ask = page.getByRole('dialog', { name: 'app_counter' });
    await expect(ask).toBeVisible();
    await expect(ask.locator('.approval-origin')).toHaveText('An MCP App of the server apps, not you, wants to run');
    await expect(ask.getByRole('button', { name: 'Allow once' })).toBeEnabled();
    await ask.getByRole('button', { name: 'Always allow this skill' }).click();
    await expect(view.locator('#counter')).toHaveText('Counter: count 1');
    // A tool the model may call but the app may not: refused by Hearth,
    // without asking the person.
    await expect(view.locator('#refused')).toHaveText('model_secret refused: the tool model_secret is not available to this app');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    // The app's message sent around the sandbox proxy, straight to Hearth's
    // window, was ignored: no second ask, the counter ran once.
    await expect(view.locator('#counter')).toHaveText('Counter: count 1');
    expect(page.url()).toContain('#/chat');
    // It told Hearth its size.
    await expect.poll(async () => parseFloat(await outer.evaluate((f) => f.style.height))).toBeGreaterThan(150);
    await page.locator('.mcp-app').scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'mcp-app');

    // A view calling in a loop gets a few calls, then "too many" (allowed
    // for always now, so only the budget stands in the way).
    await view.locator('#burst').click();
    await expect(view.locator('#burst-result')).toHaveText(/^burst: [1-4] ran, (8|9|10|11) refused as too many$/);
    const [ran, refused] = (await view.locator('#burst-result').textContent()).match(/\d+/g).map(Number);
    expect(ran + refused).toBe(12);

    // The app's own calls are in the Activity log, as the app's.
    await nav(page, 'Activity').click();
    await expect(page.locator('tr.log-row')).toHaveCount(2 + ran);
    await expect(page.locator('tr.log-row[data-origin="an MCP App"]')).toHaveCount(1 + ran);
    await expect(page.locator('tr.log-row[data-origin="you"]')).toHaveCount(1);
    expect(errors).toEqual([]);
  } finally {
    apps.stop();
  }
});

test('an MCP App cannot navigate its own frame anywhere it did not declare', async ({ page }) => {
  const apps = await startAppsServer();
  const canary = await startCanary();
  try {
    const errors = await openApp(page, 'servers');
    const card = await addServer(page, apps.url, 'apps');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await switchOn(page, 'apps__escape');
    await nav(page, 'Chat').click();
    await runCommand(page, `/apps__escape {"url":"${canary.url}"}`);
    await page.getByRole('dialog', { name: 'escape' }).getByRole('button', { name: 'Allow once' }).click();
    // The app declared no frame domains, so its sandbox page's policy (the
    // app's own) refuses the navigation: the view's frame ends on the
    // browser's error page, and the request never leaves.
    const outer = await (await page.locator('.mcp-app iframe.mcp-app-frame').elementHandle()).contentFrame();
    const inner = () => outer.childFrames()[0]?.url() ?? '';
    await expect.poll(inner, { timeout: 15_000 }).toMatch(/^(?!about:srcdoc$)./);
    expect(inner()).toBe('chrome-error://chromewebdata/');
    await page.waitForTimeout(500);
    expect(canary.hits().filter((h) => !h.startsWith('TCP'))).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    apps.stop();
    await canary.close();
  }
});

test('an MCP App cannot reach this machine or the local network, whatever it declares', async ({ page }) => {
  const canary = await startCanary();
  const apps = await startAppsServer(['--probe', String(canary.port)]);
  try {
    const errors = await openApp(page, 'servers');
    const card = await addServer(page, apps.url, 'apps');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await switchOn(page, 'apps__probe');
    await nav(page, 'Chat').click();
    await runCommand(page, '/apps__probe {}');
    await page.getByRole('dialog', { name: 'probe' }).getByRole('button', { name: 'Allow once' }).click();
    const app = page.locator('.mcp-app');
    // Every declared address of this machine was left out, and says why.
    const refused = app.locator('.mcp-app-refused');
    await expect(refused).toContainText('127.0.0.1');
    await expect(refused).toContainText('loopback');
    await expect(refused).toContainText('localhost');
    await expect(app.locator('.mcp-app-policy')).toHaveText('sandboxed, no network');
    const view = page.frameLocator('.mcp-app iframe.mcp-app-frame').frameLocator('iframe');
    await expect(view.locator('#probe')).toHaveText('probed 6, reached 0', { timeout: 15_000 });
    await page.waitForTimeout(500);
    expect(canary.hits()).toEqual([]);
    await app.scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'mcp-app-local-refused');
    expect(errors).toEqual([]);
  } finally {
    apps.stop();
    await canary.close();
  }
});

test('the 2026-07-28 Python server connects and its prompts work', async ({ page }) => {
  const modern = await startModern();
  try {
    const errors = await openApp(page, 'servers');
    const card = await addServer(page, modern.url, 'modern');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await expect(card.locator('.server-era')).toHaveText('MCP 2026-07-28 (stateless)');
    await expect(card.locator('.server-impl')).toContainText('hearth-modern-peer');
    await expect(card.locator('li[data-tool="refresh_chart"]')).toContainText('app only');
    await expect(card.locator('.server-resources summary')).toHaveText(/Resources \((8|9|\d\d)\)/);

    await nav(page, 'Chat').click();
    await runCommand(page, '/modern:topic {"subject": "rust", "tone": "calm"}');
    await expect(page.getByRole('textbox', { name: 'Message or command' })).toHaveValue('Write about rust in a calm tone.');
    // The trailing space runs it (a bare command would be completed).
    await runCommand(page, '/modern:topic ');
    await expect(page.locator('.inline-error')).toHaveText('/modern:topic needs subject; e.g. /modern:topic {"subject":"…"}');
    expect(errors).toEqual([]);
  } finally {
    modern.stop();
  }
});

test('a server without CORS fails in plain words, then works through the relay', async ({ page }) => {
  const bare = await startAppsServer(['--no-cors']);
  try {
    await openApp(page, 'servers');
    const card = await addServer(page, bare.url, 'bare');
    await expect(card).toHaveAttribute('data-status', 'failed', { timeout: 30_000 });
    await expect(card.locator('.server-error')).toContainText('CORS');
    await expect(card.locator('.server-error')).toContainText('Connect through Hearth');
    await saveScreenshot(page, 'servers-error');

    await card.getByLabel('Connect bare through Hearth').check();
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await expect(card.locator('li[data-tool="echo"]')).toBeVisible();
    await switchOn(page, 'bare__echo');
    await nav(page, 'Chat').click();
    await runCommand(page, '/bare__echo relayed');
    await page.getByRole('dialog', { name: 'echo' }).getByRole('button', { name: 'Allow once' }).click();
    await expect(page.locator('.result-card[data-skill="bare__echo"] .card-output')).toHaveText('Echo: relayed');
  } finally {
    bare.stop();
  }
});

test('stdio servers come from hearth serve and are switched on in the panel', async ({ page }) => {
  const hearth = await startHearth(stdioServerConfig());
  try {
    const errors = await openApp(page, 'servers', { base: hearth.url, key: hearth.key });
    const listed = page.locator('.stdio-server[data-stdio="py"]');
    await expect(listed).toContainText('stdio_server.py');
    await listed.getByRole('button', { name: 'Use py' }).click();
    const card = page.locator('.server-card[data-server="py"]');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await expect(card.locator('.server-url')).toHaveText('stdio, through hearth serve');
    await expect(card.locator('li[data-tool="pid"]')).toBeVisible();
    await expect(listed.getByRole('button', { name: 'Use py' })).toBeDisabled();
    await page.getByRole('button', { name: 'Check again' }).click();
    await expect(listed).toContainText('running');
    await saveScreenshot(page, 'servers-stdio');
    expect(errors).toEqual([]);
  } finally {
    hearth.stop();
  }
});

test('OAuth: the sign-in runs in a popup and the tokens are kept', async ({ page }) => {
  const guarded = await startAppsServer(['--oauth']);
  try {
    const errors = await openApp(page, 'servers');
    const card = await addServer(page, guarded.url, 'guarded');
    const banner = page.locator('.sign-in[data-server="guarded"]');
    await expect(banner).toContainText('asks you to sign in', { timeout: 30_000 });
    await expect(card.locator('.server-status')).toHaveText('Waiting for sign-in');
    await saveScreenshot(page, 'servers-sign-in');
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      banner.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await expect(popup.getByRole('heading')).toHaveText('Allow Hearth to use the test server?');
    await popup.getByRole('link', { name: 'Approve' }).click();
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await expect(banner).toHaveCount(0);
    await expect(card.locator('li[data-tool="echo"]')).toBeVisible();

    // The tokens stayed in this browser: no sign-in after a reload.
    await page.reload();
    await page.waitForSelector('body[data-ready]');
    await expect(page.locator('.server-card[data-server="guarded"]')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await expect(page.locator('.sign-in')).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    guarded.stop();
  }
});
