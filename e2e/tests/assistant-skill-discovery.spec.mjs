// Many Agent Skills packages installed: the model's opening request
// carries one line instead of the catalog and no activate_skill; it finds
// a package through discover_skills with words the package does not use,
// and activate_skill (loaded by that discovery) brings its instructions.
// Checked on what the fake model server received.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';

const chatRequests = async (model) =>
  (await model.requests()).filter((r) => r.path.endsWith('/chat/completions'));
const toolNames = (r) => (r.body.tools || []).map((t) => t.function.name);
const systemOf = (r) => r.body.messages.find((m) => m.role === 'system')?.content ?? '';
const toolMessages = (r) => r.body.messages.filter((m) => m.role === 'tool').map((m) => m.content);

const TOPICS = [
  ['gardening', 'Plan vegetable beds, sowing dates and crop rotation'],
  ['chess-coach', 'Explain chess openings and review played games'],
  ['bird-watch', 'Identify birds from song descriptions and field marks'],
  ['sourdough', 'Keep a starter alive and time bread proofing'],
  ['knitting', 'Read knitting charts and adjust patterns to gauge'],
  ['astronomy-night', 'Plan a night of stargazing from location and moon phase'],
  ['bike-repair', 'Diagnose bicycle gear and brake problems'],
  ['wine-pairing', 'Suggest wines that go with a dish'],
];

/// A folder holding `count` packages: variants of a few hobbies, plus the
/// one the model should find.
function packageFolder(count) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-packages-'));
  const folder = path.join(root, 'team-packages');
  const write = (name, description, body) => {
    fs.mkdirSync(path.join(folder, name), { recursive: true });
    fs.writeFileSync(
      path.join(folder, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`,
    );
  };
  for (let i = 0; i < count; i++) {
    const [topic, description] = TOPICS[i % TOPICS.length];
    write(`${topic}-${i}`, `${description} (set ${i}).`, `# ${topic}\n\nSteps for set ${i}.`);
  }
  write(
    'invoice-reader',
    'Pull totals, dates and vendors out of scanned invoices and receipts.',
    '# Invoice reader\n\nRead the total at the bottom first; VAT lines are listed above it.',
  );
  return { root, folder };
}

test('past the catalog threshold the model finds a package by paraphrase and activates it', async ({ page }) => {
  const model = await startFakeModel('skill-discovery.json');
  const { root, folder } = packageFolder(40);
  try {
    const errors = await openApp(page, 'skills');
    await page.getByLabel('Import a skill folder').setInputFiles(folder);
    await expect(page.locator('.package[data-package="invoice-reader"]')).toBeVisible({ timeout: 30_000 });
    await expect(page.locator('.package')).toHaveCount(41);
    await useProvider(page, model.base);

    await say(page, 'What did I pay on this receipt?');
    const discover = page.locator('.tool-card[data-skill="discover_skills"]');
    await expect(discover).toHaveAttribute('data-state', 'completed');
    await expect(discover.locator('.card-output')).toContainText('invoice-reader');
    const activate = page.locator('.tool-card[data-skill="activate_skill"]');
    await expect(activate).toHaveAttribute('data-state', 'completed');
    const reply = page.locator('.message.assistant').last().locator('.message-text');
    await expect(reply).toHaveText('I have the invoice-reader instructions now.');
    await expect(page.locator('.chat-head .active-skill')).toHaveAttribute('data-active-skill', 'invoice-reader');
    // The meter says what the added sections cost.
    await expect(page.locator('.token-meter')).toHaveAttribute('data-added', /^[1-9]\d*$/);
    await saveScreenshot(page, 'assistant-skill-discovery');

    const requests = await chatRequests(model);
    expect(requests).toHaveLength(3);
    // The opening request: one line about packages, no catalog, and
    // discover_skills is the only tool.
    const opening = systemOf(requests[0]);
    expect(opening).not.toContain('<available_skills>');
    expect(opening).not.toContain('invoice-reader');
    expect(opening).toContain('discover_skills finds them, then activate_skill loads the one that fits.');
    expect(toolNames(requests[0])).toEqual(['discover_skills']);
    // Discovery found the package by other words and said how to use it;
    // activate_skill came with it, without a list of every name.
    const found = JSON.parse(toolMessages(requests[1]).at(-1));
    expect(found.packages.map((p) => p.name)).toContain('invoice-reader');
    expect(found.packages.find((p) => p.name === 'invoice-reader').use)
      .toBe('activate_skill {"name": "invoice-reader"}');
    // The next request offers exactly what discovery loaded: the skills it
    // found (if any matched the words too) and activate_skill.
    const loaded = ['discover_skills', ...(found.skills || []).map((s) => s.id), 'activate_skill'];
    expect([...toolNames(requests[1])].sort()).toEqual([...new Set(loaded)].sort());
    const activateTool = requests[1].body.tools.find((t) => t.function.name === 'activate_skill');
    expect(activateTool.function.parameters.properties.name.enum).toBeUndefined();
    expect(JSON.stringify(activateTool).length).toBeLessThan(600);
    // The package's instructions went back to the model.
    expect(toolMessages(requests[2]).at(-1)).toContain('Read the total at the bottom first');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
});
