// The assistant with skills from outside the app, against the scripted
// fake model server: it discovers an MCP server's echo tool and calls it
// (asked inline, run on server-everything), and it works with an imported
// Agent Skills package (catalog in the system prompt, activate_skill,
// read_skill_file). Each test checks what the model server received.
import { test, expect } from '@playwright/test';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { repoRoot } from '../support/env.mjs';
import { requirePeers, startEverything } from '../support/mcp.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';

const lastReply = (page) => page.locator('.message.assistant').last();
const chatRequests = async (model) =>
  (await model.requests()).filter((r) => r.path.endsWith('/chat/completions'));
const toolNames = (r) => (r.body.tools || []).map((t) => t.function.name);
const systemOf = (r) => r.body.messages.find((m) => m.role === 'system')?.content ?? '';
const toolMessages = (r) => r.body.messages.filter((m) => m.role === 'tool').map((m) => m.content);

test('the model discovers an MCP server\'s echo tool, asks, calls it and reads the answer', async ({ page }) => {
  requirePeers();
  const everything = await startEverything();
  const model = await startFakeModel('mcp-echo.json');
  try {
    const errors = await openApp(page, 'servers');
    await page.getByLabel('Server URL').fill(everything.url);
    await page.getByLabel('Server name').fill('everything');
    await page.getByRole('button', { name: 'Add server' }).click();
    const card = page.locator('.server-card[data-server="everything"]');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Skills' }).click();
    await page.locator('.skill[data-skill="everything__echo"]').getByRole('switch').check();
    await useProvider(page, model.base);

    // A server resource attached to the message goes with it to the model.
    await page.getByRole('button', { name: 'Attach a resource' }).click();
    const picker = page.getByRole('dialog', { name: 'Attach a resource' });
    await picker.getByLabel('Filter resources').fill('architecture');
    await picker.locator('.picker-item').first().click();
    await expect(picker).toBeHidden();
    const uri = await page.locator('.attachment').first().getAttribute('data-uri');
    await say(page, 'Please echo something through the server');
    await expect(page.locator('.attachment')).toHaveCount(0);
    await expect(page.locator('.message.user .bubble')).toHaveText('Please echo something through the server');
    await expect(page.locator('.message.user .attached-count')).toHaveText('1 resource attached');
    const dialog = page.locator('.timeline').getByRole('dialog', { name: 'Echo Tool' });
    await expect(dialog).toBeVisible();
    const shown = await dialog.getByLabel('Full arguments').textContent();
    expect(JSON.parse(shown)).toEqual({ message: 'hello from the model' });
    await dialog.getByRole('button', { name: 'Allow once' }).click();

    const echo = page.locator('.tool-card[data-skill="everything__echo"]');
    await expect(echo).toHaveAttribute('data-state', 'completed');
    await expect(echo.locator('.card-output')).toHaveText('Echo: hello from the model');
    await expect(lastReply(page).locator('.message-text')).toHaveText('The server answered: Echo: hello from the model');
    await expect(page.locator('.skill-chip[data-skill="everything__echo"]')).toBeVisible();
    await saveScreenshot(page, 'assistant-mcp-tool');

    // What the model server got: discovery alone, then the echo tool too,
    // and the server's answer as the tool result.
    const requests = await chatRequests(model);
    expect(requests.map(toolNames)).toEqual([
      ['discover_skills'],
      ['discover_skills', 'everything__echo'],
      ['discover_skills', 'everything__echo'],
    ]);
    expect(toolMessages(requests[2]).at(-1)).toContain('Echo: hello from the model');
    const asked = requests[0].body.messages.filter((m) => m.role === 'user').at(-1).content;
    expect(asked).toContain('Please echo something through the server');
    expect(asked).toContain(uri);
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
    await everything.stop();
  }
});

test('with an Agent Skills package imported, the model sees the catalog, activates the skill and reads its file', async ({ page }) => {
  const model = await startFakeModel('agent-skill.json');
  try {
    const errors = await openApp(page, 'skills');
    await page.getByLabel('Import a skill archive')
      .setInputFiles(path.join(repoRoot, 'e2e', 'fixtures', 'agent-skills', 'csv-helper.zip'));
    await expect(page.locator('.package[data-package="csv-helper"]')).toBeVisible();
    await useProvider(page, model.base);

    await say(page, 'Help me tidy a csv export');
    const activate = page.locator('.tool-card[data-skill="activate_skill"]');
    await expect(activate).toHaveAttribute('data-state', 'completed');
    const read = page.locator('.tool-card[data-skill="read_skill_file"]');
    await expect(read).toHaveAttribute('data-state', 'completed');
    await expect(read.locator('.card-output')).toContainText('Semicolons are common in European exports.');
    await expect(lastReply(page).locator('.message-text')).toContainText('From the guide:');
    await expect(page.locator('.chat-head .active-skill')).toHaveAttribute('data-active-skill', 'csv-helper');
    await saveScreenshot(page, 'assistant-agent-skill');

    const requests = await chatRequests(model);
    expect(requests).toHaveLength(3);
    // The first request: the catalog in the system prompt, activate_skill offered.
    const first = systemOf(requests[0]);
    expect(first).toContain('<available_skills>');
    expect(first).toContain('csv-helper');
    expect(first).toContain('Clean and summarise CSV files.');
    expect(toolNames(requests[0])).toContain('activate_skill');
    expect(toolNames(requests[0])).not.toContain('read_skill_file');
    // After activation: the skill's instructions came back, read_skill_file is offered.
    expect(toolMessages(requests[1]).at(-1)).toContain('Read `guide.md` first');
    expect(toolNames(requests[1])).toContain('read_skill_file');
    // The file's text went back to the model.
    expect(toolMessages(requests[2]).at(-1)).toContain('Semicolons are common in European exports.');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});
