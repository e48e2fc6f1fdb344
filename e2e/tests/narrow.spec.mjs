// A 360 px phone: every place is reachable from the navigation without
// scrolling it sideways, and every panel and dialog, filled with content,
// fits the width (only code blocks and other boxes made to scroll may be
// wider than the window, inside their own scrolling box).
import { test, expect } from '@playwright/test';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';

const WIDTH = 360;
const PANELS = ['chat', 'notes', 'tasks', 'memory', 'skills', 'servers', 'activity', 'settings'];

/// What sticks out past the right edge of the window, in `scope`.
async function overflowing(page, scope = 'main') {
  return page.evaluate((scope) => {
    const out = [];
    const root = document.scrollingElement;
    if (root.scrollWidth > window.innerWidth + 1) out.push(`the page is ${root.scrollWidth}px wide`);
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
}

test(`every place, panel and dialog fits a ${WIDTH} px window`, async ({ page }) => {
  test.setTimeout(120_000);
  await page.setViewportSize({ width: WIDTH, height: 740 });
  await openApp(page);

  // Every place is in view in the navigation.
  for (const link of await page.locator('nav.sidebar a').all()) {
    await expect(link).toBeInViewport({ ratio: 1 });
  }

  // Content on every panel: cards, a note, a task, a memory, log rows.
  await run(page, '/calc 15% of 847');
  await run(page, '/note Groceries for the long weekend at the lake house #home #weekend\nmilk and eggs');
  await run(page, '/task Renew the passport before the trip to Lisbon tomorrow !high');
  await run(page, '/remember I prefer metric units and the 24-hour clock in everything');

  for (const place of PANELS) {
    await page.getByRole('link', { name: place[0].toUpperCase() + place.slice(1), exact: true }).click();
    await expect(page.locator('main .page, main .chat-layout').first()).toBeVisible();
    if (place === 'notes') await page.getByRole('option').first().click();
    await page.waitForTimeout(150);
    await saveScreenshot(page, `narrow-${WIDTH}-${place}`);
    expect(await overflowing(page), `${place} at ${WIDTH} px`).toEqual([]);
  }

  // Dialogs: the skill form, a confirmation, and the skill editor.
  await page.getByRole('link', { name: 'Chat', exact: true }).click();
  await runCommand(page, 'jot down an idea');
  await expect(page.getByRole('dialog', { name: 'Notes' })).toBeVisible();
  expect(await overflowing(page, '.modal-backdrop'), 'the skill form').toEqual([]);
  await page.keyboard.press('Escape');
  await page.getByRole('link', { name: 'Activity', exact: true }).click();
  await page.getByRole('button', { name: 'Clear…' }).click();
  await expect(page.getByRole('alertdialog')).toBeVisible();
  expect(await overflowing(page, '.modal-backdrop'), 'a confirmation').toEqual([]);
  await page.keyboard.press('Escape');
  await page.getByRole('link', { name: 'Skills', exact: true }).click();
  await page.getByRole('button', { name: 'New skill' }).click();
  await expect(page.getByRole('dialog')).toBeVisible();
  expect(await overflowing(page, '.modal-backdrop'), 'the skill editor').toEqual([]);
});
