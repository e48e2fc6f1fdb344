// The assistant against the scripted fake model server: discovery and
// tool calls, loaded skills across reloads, approvals inline, Stop, errors
// in plain words, edit and regenerate, conversations, and no-model mode.
import { test, expect } from '@playwright/test';
import { expectScreen, openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { reloadApp, say, startFakeModel, startFakeModelOn, useProvider } from '../support/model.mjs';

const lastReply = (page) => page.locator('.message.assistant').last();

test('15% of 847: the model discovers the calculator, calls it, and the skill stays loaded after a reload', { tag: '@baseline' }, async ({ page }) => {
  const model = await startFakeModel('percent.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    await expect(page.getByRole('heading', { name: 'Ask anything' })).toBeVisible();
    await saveScreenshot(page, 'assistant-empty');

    // Figures, not assertions: Enter → first streamed words, and → the
    // answer after three model requests and two tool calls.
    // Timed in the page (Enter keydown → the DOM change), not by polling.
    const timing = page.evaluate(() => new Promise((resolve) => {
      let sent = 0;
      let first = 0;
      document.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !sent) sent = performance.now(); }, true);
      const seen = () => {
        const texts = [...document.querySelectorAll('.message.assistant .message-text')].map((t) => t.textContent);
        if (!first && texts.some((t) => t.includes('Let me'))) first = performance.now();
        if (texts.some((t) => t.includes('127.05'))) {
          observer.disconnect();
          resolve({ first: first - sent, answer: performance.now() - sent });
        }
      };
      const observer = new MutationObserver(seen);
      observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    }));
    await say(page, "What's 15% of 847?");
    await expect(page.locator('.message.user .bubble')).toHaveText("What's 15% of 847?");
    await expect(lastReply(page).locator('.message-text')).toHaveText('15% of 847 is 127.05.');
    const t = await timing;
    console.log(`figure: fake server, Enter to first streamed text ${t.first.toFixed(0)} ms; to the answer (3 requests, 2 tool calls) ${t.answer.toFixed(0)} ms`);
    const discover = page.locator('.tool-card[data-skill="discover_skills"]');
    await expect(discover).toHaveAttribute('data-state', 'completed');
    await expect(discover.locator('.card-output')).toHaveText('Loaded Calculator');
    const calc = page.locator('.tool-card[data-skill="calculator"]');
    await expect(calc).toHaveAttribute('data-state', 'completed');
    await expect(calc.locator('.card-output')).toHaveText('127.05');
    await expect(calc.locator('.card-duration')).toContainText('ms');
    await expect(page.locator('.skill-chip[data-skill="calculator"]')).toBeVisible();
    await expect(page.locator('.token-meter')).toContainText('tokens');
    // The conversation got its title from the question.
    await expect(page.locator('.conversation.selected .conversation-title')).toHaveText("What's 15% of 847?");
    await expectScreen(page, 'assistant-tool-cards', { hide: ['.card-duration', '.conversation-detail'] });

    // What the model was offered: discovery alone, then the calculator too.
    const requests = (await model.requests()).filter((r) => r.path.endsWith('/chat/completions'));
    const tools = requests.map((r) => (r.body.tools || []).map((t) => t.function.name));
    expect(tools).toEqual([['discover_skills'], ['discover_skills', 'calculator'], ['discover_skills', 'calculator']]);
    expect(requests.every((r) => r.body.stream === true)).toBe(true);

    await reloadApp(page);
    await expect(page.locator('.skill-chip[data-skill="calculator"]')).toBeVisible();
    await expect(lastReply(page).locator('.message-text')).toHaveText('15% of 847 is 127.05.');
    await expect(page.locator('.tool-card[data-skill="calculator"] .card-output')).toHaveText('127.05');

    // A loaded skill is sent from the first request of the next turn.
    await say(page, 'thanks');
    await expect(lastReply(page).locator('.message-text')).toHaveText('Ask me what 15% of 847 is.');
    const after = (await model.requests()).filter((r) => r.path.endsWith('/chat/completions'));
    expect(after.at(-1).body.tools.map((t) => t.function.name)).toEqual(['discover_skills', 'calculator']);

    // Removing the chip stops sending it.
    await page.getByRole('button', { name: 'Remove Calculator' }).click();
    await expect(page.locator('.skill-chip')).toHaveCount(0);
    await reloadApp(page);
    await expect(page.locator('.message.assistant')).toHaveCount(4);
    await expect(page.locator('.skill-chip')).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('Anthropic Messages: the same journey over its wire format, with the browser-access header and the key only in x-api-key', async ({ page }) => {
  const model = await startFakeModel('percent.json');
  const key = 'sk-ant-test-0123456789abcdef';
  try {
    const errors = await openApp(page);
    // Anthropic's base URL has no /v1: the protocol adds /v1/messages.
    await useProvider(page, model.url, { provider: 'custom-anthropic', apiKey: key });
    await say(page, "What's 15% of 847?");
    await expect(lastReply(page).locator('.message-text')).toHaveText('15% of 847 is 127.05.');
    await expect(page.locator('.tool-card[data-skill="calculator"] .card-output')).toHaveText('127.05');
    await expect(page.locator('.skill-chip[data-skill="calculator"]')).toBeVisible();

    const requests = (await model.requests()).filter((r) => r.path === '/v1/messages');
    expect(requests.map((r) => (r.body.tools || []).map((t) => t.name))).toEqual([
      ['discover_skills'],
      ['discover_skills', 'calculator'],
      ['discover_skills', 'calculator'],
    ]);
    for (const r of requests) {
      expect(r.body.stream).toBe(true);
      expect(r.headers['anthropic-dangerous-direct-browser-access']).toBe('true');
      expect(r.headers['anthropic-version']).toBeTruthy();
      expect(r.headers['x-api-key']).toBeTruthy();
      expect(r.headers.authorization).toBeUndefined();
    }
    // The tool result went back as Anthropic's tool_result block.
    const last = requests.at(-1).body.messages.at(-1);
    expect(last.role).toBe('user');
    expect(last.content.map((b) => b.type)).toEqual(['tool_result']);
    await expect(page.locator('body')).not.toContainText(key);
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('a network skill asks inline, and a deny is respected', async ({ page }) => {
  const model = await startFakeModel('approval.json');
  try {
    const errors = await openApp(page, 'skills');
    await page.getByRole('switch', { name: 'Enable Web fetch' }).check();
    await useProvider(page, model.base);

    await say(page, 'Please fetch https://example.com/ for me');
    const dialog = page.locator('.timeline').getByRole('dialog', { name: 'Web fetch' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('The assistant wants to run');
    const shown = await dialog.getByLabel('Full arguments').textContent();
    expect(JSON.parse(shown)).toEqual({ url: 'https://example.com/' });
    // No modal: the approval is answered in the conversation.
    await expect(page.locator('.modal-backdrop')).toHaveCount(0);
    await expect(page.locator('.tool-card[data-skill="web_fetch"]')).toHaveAttribute('data-state', 'asking');
    await saveScreenshot(page, 'assistant-inline-approval');

    await dialog.getByRole('button', { name: 'Deny' }).click();
    await expect(dialog).toBeHidden();
    const card = page.locator('.tool-card[data-skill="web_fetch"]');
    await expect(card).toHaveAttribute('data-state', 'denied');
    await expect(lastReply(page).locator('.message-text')).toContainText('The fetch came back with:');
    await expect(lastReply(page).locator('.message-text')).toContainText('denied');

    // The log says who decided, and that nothing ran.
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByLabel('Skill').selectOption('web_fetch');
    await expect(page.locator('tr.log-row')).toHaveCount(1);
    await expect(page.locator('tr.log-row')).toContainText('denied by user');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('the model cannot approve its own calls: skills it did not load are refused, and nothing it says grants anything', async ({ page }) => {
  const model = await startFakeModel('self-approve.json');
  try {
    const errors = await openApp(page, 'skills');
    await page.getByRole('switch', { name: 'Enable Web fetch' }).check();
    await useProvider(page, model.base);

    // It calls web_fetch without discovering it, with "approved": true,
    // and a made-up "approve" tool: neither runs, nothing is asked.
    await say(page, 'sneak a fetch past the approval');
    await expect(lastReply(page).locator('.message-text').last()).toContainText('Done.');
    await expect(page.locator('.tool-card[data-skill="web_fetch"]')).toHaveAttribute('data-state', 'refused');
    await expect(page.locator('.tool-card[data-skill="approve"]')).toHaveAttribute('data-state', 'refused');
    await expect(page.getByRole('dialog')).toHaveCount(0);
    // The refusal went back to the model, telling it how to do it properly.
    const second = (await model.requests()).filter((r) => r.path.endsWith('/chat/completions'))[1];
    const fed = second.body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(fed.every((c) => c.includes('is not a loaded skill in this conversation'))).toBe(true);

    // Once properly discovered, the call still asks the person.
    await say(page, 'Please fetch https://example.com/');
    const dialog = page.locator('.timeline').getByRole('dialog', { name: 'Web fetch' });
    await expect(dialog).toBeVisible();
    await dialog.getByRole('button', { name: 'Deny' }).click();
    await expect(page.locator('.tool-card[data-skill="web_fetch"]').last()).toHaveAttribute('data-state', 'denied');

    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByLabel('Skill').selectOption('web_fetch');
    await expect(page.locator('tr.log-row')).toHaveCount(1);
    await expect(page.locator('tr.log-row')).toContainText('denied by user');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('Stop ends a reply mid-stream, keeps what arrived, and Esc does the same', async ({ page }) => {
  const model = await startFakeModel('slow.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    await say(page, 'Tell me a story');
    const text = lastReply(page).locator('.message-text');
    await expect(text).toContainText('Once upon a time');
    await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible();
    await saveScreenshot(page, 'assistant-streaming');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(lastReply(page)).toHaveAttribute('data-status', 'cancelled');
    await expect(lastReply(page).locator('.stopped')).toHaveText('Stopped.');
    const kept = await text.textContent();
    expect(kept.length).toBeGreaterThan(10);
    expect(kept).not.toContain('truly mattered');
    // Nothing more arrives after Stop.
    await page.waitForTimeout(1_000);
    expect(await text.textContent()).toBe(kept);
    await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();

    // Esc from the composer stops too.
    await say(page, 'Another story please');
    await expect(lastReply(page).locator('.message-text')).toContainText('Once upon');
    await page.getByRole('textbox', { name: 'Message or command' }).press('Escape');
    await expect(lastReply(page)).toHaveAttribute('data-status', 'cancelled');

    await reloadApp(page);
    await expect(page.locator('.message.assistant[data-status="cancelled"]')).toHaveCount(2);
    await expect(page.locator('.message.assistant').first().locator('.message-text')).toHaveText(kept);
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('with the provider down, a clear error appears, nothing is lost, and Try again works once it is back', async ({ page }) => {
  let model = await startFakeModel('percent.json');
  const port = model.port;
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    await say(page, 'hello');
    await expect(lastReply(page).locator('.message-text')).toHaveText('Ask me what 15% of 847 is.');

    await model.stop();
    await say(page, "What's 15% of 847?");
    // Two quiet retries first (1 s, then 2 s), then the error in words.
    const alert = lastReply(page).locator('.provider-error');
    await expect(alert).toBeVisible({ timeout: 20_000 });
    await expect(alert).toHaveAttribute('data-kind', 'network');
    await expect(alert.locator('.error-message')).toHaveText(`Cannot reach the model server at ${model.base}.`);
    await expect(alert.locator('.error-advice')).toHaveText('Is the model server running? Start it and try again.');
    await expect(page.locator('.message.user .bubble')).toHaveText(['hello', "What's 15% of 847?"]);
    await saveScreenshot(page, 'assistant-provider-down');

    await reloadApp(page);
    await expect(page.locator('.message.user .bubble')).toHaveText(['hello', "What's 15% of 847?"]);
    await expect(lastReply(page).locator('.provider-error')).toBeVisible();

    model = await startFakeModel('percent.json', port);
    await lastReply(page).getByRole('button', { name: 'Try again' }).click();
    await expect(lastReply(page).locator('.message-text')).toHaveText('15% of 847 is 127.05.');
    await expect(page.locator('.message.user .bubble')).toHaveText(['hello', "What's 15% of 847?"]);
    await expect(page.locator('.provider-error')).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('provider errors are explained in plain words, with what to do', async ({ page }) => {
  const model = await startFakeModel('errors.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    const cases = [
      ['trigger 401', 'auth', 'The model server did not accept the API key.'],
      ['trigger 404', 'model-not-found', "The model server has no model called 'hearth-fake'."],
      ['trigger context', 'context-too-long', "The conversation no longer fits the model's context window."],
      ['trigger malformed', 'malformed-stream', 'The reply from the model server was garbled.'],
      ['trigger truncated', 'truncated-stream', 'The reply from the model server stopped before it was finished.'],
    ];
    for (const [line, kind, message] of cases) {
      await page.getByRole('button', { name: 'New chat' }).click();
      await say(page, line);
      const alert = lastReply(page).locator('.provider-error');
      await expect(alert).toHaveAttribute('data-kind', kind, { timeout: 20_000 });
      await expect(alert.locator('.error-message')).toHaveText(message);
      await expect(alert.locator('.error-advice')).not.toBeEmpty();
      await saveScreenshot(page, `assistant-error-${kind}`);
    }
    // A truncated reply keeps the text that arrived.
    await expect(lastReply(page).locator('.message-text')).toContainText('This reply');

    // 429 with retry-after: Hearth waits as told, then answers.
    await page.getByRole('button', { name: 'New chat' }).click();
    await say(page, 'flaky question');
    await expect(page.locator('.turn-status.retrying')).toContainText('Trying again in');
    await saveScreenshot(page, 'assistant-retrying');
    await expect(lastReply(page).locator('.message-text')).toHaveText('Fine, thank you.', { timeout: 15_000 });
    await expect(page.locator('.turn-status.retrying')).toHaveCount(0);

    // Every conversation is still there.
    await expect(page.locator('.conversation')).toHaveCount(cases.length + 1);
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('edit and resend the last message, and regenerate the reply', async ({ page }) => {
  const model = await startFakeModel('percent.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    await say(page, 'hello there');
    await expect(lastReply(page).locator('.message-text')).toHaveText('Ask me what 15% of 847 is.');

    await page.locator('.message.user').getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('textbox', { name: 'Edit message' });
    await expect(editor).toHaveValue('hello there');
    await editor.fill("What's 15% of 847?");
    await editor.press('Enter');
    await expect(page.locator('.message.user .bubble')).toHaveText(["What's 15% of 847?"]);
    await expect(lastReply(page).locator('.message-text')).toHaveText('15% of 847 is 127.05.');
    await expect(page.locator('.message.assistant').first().locator('.message-text')).not.toContainText('Ask me');

    const before = (await model.requests()).length;
    await lastReply(page).getByRole('button', { name: 'Regenerate' }).click();
    await expect(lastReply(page).locator('.message-text')).toHaveText('15% of 847 is 127.05.');
    await expect(page.locator('.message.user .bubble')).toHaveText(["What's 15% of 847?"]);
    await expect.poll(async () => (await model.requests()).length).toBeGreaterThan(before);
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('conversations: new, rename, search, delete with undo', async ({ page }) => {
  const model = await startFakeModel('percent.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    await say(page, "What's 15% of 847?");
    await expect(lastReply(page).locator('.message-text')).toHaveText('15% of 847 is 127.05.');

    await page.keyboard.press('Control+Shift+O');
    await expect(page.getByRole('heading', { name: 'Ask anything' })).toBeVisible();
    await say(page, 'hello');
    await expect(lastReply(page).locator('.message-text')).toHaveText('Ask me what 15% of 847 is.');
    const items = page.locator('.conversation');
    await expect(items).toHaveCount(2);
    await expect(items.first().locator('.conversation-title')).toHaveText('hello');

    // Rename with F2 from the keyboard.
    await items.first().locator('.conversation-open').focus();
    await page.keyboard.press('F2');
    const title = page.getByRole('textbox', { name: 'Conversation title' });
    await title.fill('Greetings');
    await title.press('Enter');
    await expect(items.first().locator('.conversation-title')).toHaveText('Greetings');
    await expect(page.locator('.chat-title')).toHaveText('Greetings');

    // Search finds words inside messages.
    const search = page.getByRole('searchbox', { name: 'Search conversations' });
    await search.fill('127.05');
    await expect(items).toHaveCount(1);
    await expect(items.first().locator('.conversation-title')).toHaveText("What's 15% of 847?");
    await saveScreenshot(page, 'assistant-conversations-search');
    await search.fill('');
    await expect(items).toHaveCount(2);

    // Delete, then undo.
    await page.getByRole('button', { name: 'Delete Greetings' }).click();
    await expect(items).toHaveCount(1);
    const toast = page.locator('.toast');
    await expect(toast).toContainText('Deleted “Greetings”.');
    await saveScreenshot(page, 'assistant-deleted-undo');
    await toast.getByRole('button', { name: 'Undo' }).click();
    await expect(items).toHaveCount(2);
    await expect(page.locator('.chat-title')).toHaveText('Greetings');
    await expect(page.locator('.message.user .bubble')).toHaveText(['hello']);

    // Deleted for good once the undo is gone.
    await page.getByRole('button', { name: 'Delete Greetings' }).click();
    await reloadApp(page);
    await expect(items).toHaveCount(1);
    await expect(page.locator('.chat-title')).toHaveText("What's 15% of 847?");
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('the API key stays in this browser: not in the console, the log, the page or errors', async ({ page }) => {
  const model = await startFakeModel('errors.json');
  const key = 'sk-hearth-test-SECRET-4242424242';
  const consoleText = [];
  page.on('console', (m) => consoleText.push(m.text()));
  try {
    await openApp(page);
    await useProvider(page, model.base, { apiKey: key });
    await say(page, 'trigger 401');
    await expect(lastReply(page).locator('.provider-error')).toBeVisible();
    await say(page, 'hello');
    await expect(lastReply(page).locator('.message-text')).toHaveText('Fine, thank you.');
    await runCommand(page, '/calc 2+2');
    await expect(page.locator('.result-card .card-output')).toHaveText('4');

    const requests = await model.requests();
    expect(requests.every((r) => 'authorization' in r.headers)).toBe(true);
    expect(await page.locator('body').innerText()).not.toContain(key);
    expect(consoleText.join('\n')).not.toContain(key);
    await page.getByRole('link', { name: 'Activity' }).click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /Export/ }).click(),
    ]);
    const fs = await import('node:fs');
    expect(fs.readFileSync(await download.path(), 'utf8')).not.toContain(key);
  } finally {
    await model.stop();
  }
});

test('without a model, free text finds a skill and its form runs it', async ({ page }) => {
  const errors = await openApp(page);
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill('percentage of a number');
  const found = page.getByRole('listbox', { name: 'Matching skills' });
  await expect(found.getByRole('option').first()).toContainText('Calculator');
  await composer.press('Enter');

  const form = page.getByRole('dialog', { name: 'Calculator' });
  await expect(form).toBeVisible();
  await form.getByRole('button', { name: 'Run' }).click();
  await expect(form.locator('.field-error')).toHaveText('Expression is required');
  await expect(form.locator('.field-hint')).toHaveText("The expression, e.g. '15% of 847' or '5 miles to km'");
  await form.getByLabel('Expression').fill('15% of 847');
  await saveScreenshot(page, 'no-model-form');
  await form.getByRole('button', { name: 'Run' }).click();
  await expect(form).toBeHidden();
  await expect(page.locator('.result-card .card-output')).toHaveText('127.05');

  // An enum becomes a choice; the run passes the permission layer.
  await composer.fill('write down a note');
  await expect(page.getByRole('listbox', { name: 'Matching skills' }).getByRole('option').first()).toContainText('Notes');
  await page.getByRole('listbox', { name: 'Matching skills' }).getByRole('option').first().click();
  const notes = page.getByRole('dialog', { name: 'Notes' });
  await expect(notes.getByLabel('What to do')).toHaveValue('create');
  await notes.getByLabel('Title').fill('From a form');
  await notes.getByLabel('Tags').fill('one\ntwo');
  await notes.getByRole('button', { name: 'Run' }).click();
  await expect(page.locator('.result-card').last().locator('.card-output')).toHaveText('Created note "From a form".');

  // Nothing matches: say so, with the categories there are.
  await composer.fill('zzzz qqqq');
  await expect(page.locator('.suggestions .no-match')).toContainText('No skill matched');
  expect(errors).toEqual([]);
});

test('on first start a local model server is offered, and can be dismissed for good', async ({ page }) => {
  // LM Studio's preset port, which the app probes. Another run on this
  // machine may hold it for a while; anything else fails the test.
  test.setTimeout(180_000);
  const model = await startFakeModelOn('percent.json', 1234);
  try {
    await openApp(page);
    const offer = page.getByRole('region', { name: 'Local model found' });
    await expect(offer).toContainText('LM Studio is running on this machine with model hearth-fake');
    await saveScreenshot(page, 'assistant-offer');
    await offer.getByRole('button', { name: 'Not now' }).click();
    await expect(offer).toBeHidden();
    await reloadApp(page);
    await page.waitForTimeout(2_000);
    await expect(offer).toBeHidden();

    // Used from Settings instead: the preset fills the URL.
    await page.getByRole('link', { name: 'Settings' }).click();
    const panel = page.locator('.provider-panel');
    await panel.getByLabel('Provider').selectOption('lmstudio');
    await expect(panel.getByLabel('Base URL')).toHaveValue('http://localhost:1234/v1');
    await expect(panel.getByLabel('API key')).toHaveCount(0);
    await panel.getByRole('button', { name: 'Test connection' }).click();
    await expect(panel.locator('.check')).toHaveText('Connected to LM Studio: 1 model available.');
    await saveScreenshot(page, 'provider-settings');
  } finally {
    await model.stop();
  }
});
