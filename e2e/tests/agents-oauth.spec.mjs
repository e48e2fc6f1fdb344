// An agent whose client supports MCP's authorization spec signs in to
// Hearth through OAuth 2.1 with PKCE, with `hearth serve` as the
// authorization server: the official Python SDK's OAuthClientProvider
// (a client Hearth did not write) discovers, registers, and sends its
// browser to /authorize, whose page says to approve in the Hearth tab;
// the tab shows a dialog naming the client, the person clicks Allow, and
// the client lists the tools. Deny gives the client an error, and the
// agent's page never approves anything itself.
import { test, expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { endpoint, jsonLines } from '../support/agents.mjs';
import { peersDir, requirePeers } from '../support/mcp.mjs';

test.beforeAll(() => requirePeers());

/// The Python SDK's OAuth client (mcp-peers/oauth_client.py) signing in
/// as `name`, then running `steps`; each line it prints, in order.
function oauthAgent(name, steps) {
  const child = spawn(
    path.join(peersDir, '.venv', 'bin', 'python'),
    [path.join(peersDir, 'oauth_client.py'), endpoint(), JSON.stringify(steps), name],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const { next } = jsonLines(child);
  return {
    /// The next line whose step is `step`; pages and the authorization
    /// URL on the way are kept in `seen`.
    async until(step, seen = []) {
      for (;;) {
        const line = await next();
        if (line.step === step) return line;
        if (line.step !== 'page' && line.step !== 'authorize') throw new Error(`waiting for ${step}, got ${JSON.stringify(line)}`);
        seen.push(line);
      }
    },
    stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
    },
  };
}

test('an OAuth client asks in the Hearth tab, the person allows it, and it lists the tools; Deny is an error', async ({ page }) => {
  const errors = await openApp(page);
  const agent = oauthAgent('Zed', [{ do: 'list_tools' }]);
  try {
    const seen = [];
    const authorize = await agent.until('authorize', seen);
    expect(authorize.url).toContain('code_challenge_method=S256');
    // The tab was open before the client registered, so it holds no
    // channel yet; the person comes back to it from the agent's page
    // (the tab is shown again), it asks once more, and the consent comes.
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    const dialog = page.getByRole('dialog', { name: 'Zed wants to connect to Hearth' });
    await expect(dialog).toBeVisible({ timeout: 15_000 });
    await expect(dialog).toContainText('127.0.0.1:');
    for (const skill of ['notes', 'tasks', 'memory']) {
      await expect(dialog.getByRole('checkbox', { name: skill })).toBeChecked();
    }
    await saveScreenshot(page, 'agents-oauth-consent');
    await dialog.getByRole('button', { name: 'Allow' }).click();
    await expect(dialog).toBeHidden();

    await agent.until('connected', seen);
    const tools = await agent.until('list_tools', seen);
    expect(tools.tools).toEqual(['memory', 'notes', 'tasks']);
    expect(seen.map((l) => l.title).filter(Boolean)).toContain('Approve in your Hearth tab');

    // The agent is in Settings → Agents like one connected there.
    await page.goto('/#/settings');
    await expect(page.locator('.agent-card[data-agent="Zed"]')).toBeVisible();
  } finally {
    agent.stop();
  }

  const denied = oauthAgent('Cursor', [{ do: 'list_tools' }]);
  try {
    const dialog = page.getByRole('dialog', { name: 'Cursor wants to connect to Hearth' });
    await expect(dialog).toBeVisible({ timeout: 30_000 });
    await dialog.getByRole('button', { name: 'Deny' }).click();
    const failed = await denied.until('failed');
    expect(failed.error).toContain('access_denied');
    await page.goto('/#/settings');
    await expect(page.locator('.agent-card[data-agent="Cursor"]')).toHaveCount(0);
  } finally {
    denied.stop();
  }
  expect(errors).toEqual([]);
});
