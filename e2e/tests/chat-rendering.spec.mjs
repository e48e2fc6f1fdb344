// Replies that read well: a streamed answer with code in four languages,
// inline and display math and a broken formula is highlighted and typeset
// once each part is complete, in both themes; the hostile parts of the
// same answer (raw HTML, a javascript: link, markup inside code) stay text.
import { test, expect } from '@playwright/test';
import { openApp, saveScreenshot } from '../support/app.mjs';
import { say, startFakeModel, useProvider } from '../support/model.mjs';

test('code is highlighted and math typeset in a streamed reply, in light and dark, and nothing in it runs', async ({ page }) => {
  const model = await startFakeModel('rich.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    // The highlighter and the converter are not part of the first load.
    expect(await page.evaluate(() => [typeof window.hljs, typeof window.temml])).toEqual(['undefined', 'undefined']);
    // While the reply streams, a block whose closing fence has not arrived
    // is never highlighted: record every moment a highlighted block's text
    // is not yet the whole block.
    await page.evaluate(() => {
      window.__early = [];
      new MutationObserver(() => {
        for (const code of document.querySelectorAll('.message.assistant code[data-highlighted]')) {
          const text = code.textContent;
          if (!text.endsWith('\n')) window.__early.push(text);
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });

    await say(page, 'Show me code and math');
    const reply = page.locator('.message.assistant').last();
    await expect(reply).toHaveAttribute('data-status', 'complete');
    const text = reply.locator('.message-text');

    for (const [lang, keyword] of [['rust', 'fn'], ['python', 'def'], ['ts', 'const'], ['sql', 'SELECT']]) {
      const code = text.locator(`code.language-${lang}`);
      await expect(code).toHaveAttribute('data-highlighted', 'yes');
      await expect(code.locator('.hljs-keyword').first()).toHaveText(keyword);
    }
    await expect(text.locator('code.language-python .hljs-comment')).toHaveText('# a circle');
    await expect(text.locator('code.language-rust')).toContainText('let small = 1 < 2;');

    const inline = text.locator('.math-inline[data-state="ready"] math');
    await expect(inline).toHaveCount(1);
    await expect(inline.locator('mi').first()).toHaveText('A');
    const display = text.locator('.math-display[data-state="ready"] math[display="block"]');
    await expect(display.locator('mfrac')).toHaveCount(1);
    await expect(display.locator('munderover, msubsup').first()).toBeVisible();
    const broken = text.locator('.math[data-state="failed"]');
    await expect(broken).toHaveText('$\\frac{1}$');
    await expect(broken).toHaveAttribute('title', /could not be rendered/);

    // The hostile parts are text: no image, no script, no javascript: link,
    // and the HTML block shows its markup highlighted, not rendered.
    await expect(text.locator('img, script, [onclick], [onerror]')).toHaveCount(0);
    await expect(text.locator('a[href^="javascript" i]')).toHaveCount(0);
    await expect(text).toContainText('<img src=x onerror="window.__xss=1">');
    const html = text.locator('code.language-html');
    await expect(html).toHaveAttribute('data-highlighted', 'yes');
    await expect(html).toHaveText('<div onclick="window.__xss=3">x</div><script>window.__xss=4</script>\n');
    await text.getByText('click me').click();
    expect(await page.evaluate(() => window.__xss)).toBeUndefined();
    expect(await page.evaluate(() => window.__early)).toEqual([]);

    await text.locator('code.language-rust').scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'chat-code-math-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await saveScreenshot(page, 'chat-code-math-dark');
    await display.scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'chat-math-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await saveScreenshot(page, 'chat-math-light');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('a selection in a streaming reply survives the text that follows it', async ({ page }) => {
  const model = await startFakeModel('stream.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base);
    await say(page, 'Tell me something long');
    const reply = page.locator('.message.assistant').last();
    const first = reply.locator('.message-text p').first();
    // The first paragraph is settled once the line after it is whole: by
    // the time the list shows, it is.
    await expect(reply.locator('.message-text li', { hasText: 'a list item' })).toBeVisible();
    await expect(reply).toHaveAttribute('data-status', 'streaming');
    const selected = await first.evaluate((p) => {
      // A person selecting text has clicked away from the composer.
      document.activeElement?.blur();
      p.__marked = true;
      getSelection().selectAllChildren(p);
      return getSelection().toString();
    });
    expect(selected).toContain('The first paragraph settles');
    // More text arrives while the selection stands.
    await expect(reply.locator('.message-text p', { hasText: 'A fifth paragraph' })).toBeVisible();
    const during = await first.evaluate((p) => ({ same: p.__marked === true && p.isConnected, text: getSelection().toString() }));
    expect(during).toEqual({ same: true, text: selected });
    // And when the reply ends.
    await expect(reply).toHaveAttribute('data-status', 'complete');
    const after = await first.evaluate((p) => ({ same: p.__marked === true && p.isConnected, text: getSelection().toString() }));
    expect(after).toEqual({ same: true, text: selected });
    // The reply reads as a whole rendering does: blocks in order, code closed.
    await expect(reply.locator('.message-text li')).toHaveCount(3);
    await expect(reply.locator('.message-text code.language-python')).toContainText('print(i)');
    await expect(reply.locator('.message-text p').last()).toHaveText('The eighth and last paragraph ends the reply.');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});
