// Pictures, as a person uses them: a 6-megapixel photo pasted into the
// composer is shown as a thumbnail, sent to a model that sees pictures as an
// image part (drawn again at most 1568 px on its longest side, with the
// photo's EXIF, location included, left behind), shown in the conversation
// after a reload, opened large and downloaded; a model that cannot be known
// to see pictures says so before anything is sent, and keeps the message
// and its pictures; a file that is no picture is refused with its name; and
// a picture an MCP tool returns shows in its result card; a canvas
// JavaScript returns comes back as a PNG.
import { test, expect } from '@playwright/test';
import fs from 'node:fs';
import { openApp, runCommand, saveScreenshot } from '../support/app.mjs';
import { runSkill } from '../support/sandbox.mjs';
import { reloadApp, startFakeModel, useProvider } from '../support/model.mjs';
import { addServer, nav, requirePeers, startEverything, switchOn } from '../support/mcp.mjs';

/// A 3000×2000 JPEG made in the page, with an EXIF block that carries a
/// place, as a phone's photo does.
async function photoWithLocation(page) {
  return page.evaluateHandle(async () => {
    const canvas = new OffscreenCanvas(3000, 2000);
    const g = canvas.getContext('2d');
    g.fillStyle = '#1f7a5a';
    g.fillRect(0, 0, 3000, 2000);
    g.fillStyle = '#ffffff';
    g.font = 'bold 360px sans-serif';
    g.fillText('HOLIDAY', 400, 1150);
    const jpeg = new Uint8Array(await (await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.9 })).arrayBuffer());
    // APP1: "Exif", an empty big-endian TIFF directory, then the place.
    const body = [
      ...new TextEncoder().encode('Exif'), 0, 0,
      0x4d, 0x4d, 0, 42, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0,
      ...new TextEncoder().encode('GPS 38.7223 N 9.1393 W HEARTH-SECRET-PLACE'),
    ];
    const app1 = [0xff, 0xe1, (body.length + 2) >> 8, (body.length + 2) & 0xff, ...body];
    const out = new Uint8Array(jpeg.length + app1.length);
    out.set(jpeg.subarray(0, 2));
    out.set(app1, 2);
    out.set(jpeg.subarray(2), 2 + app1.length);
    return new File([out], 'holiday.jpg', { type: 'image/jpeg' });
  });
}

/// A JPEG's width and height, from its frame header.
function jpegSize(bytes) {
  for (let i = 2; i < bytes.length - 9;) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1];
    const length = bytes.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xc3) {
      return { height: bytes.readUInt16BE(i + 5), width: bytes.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  return null;
}

/// The pictures of the last user message of the last chat request.
async function sentPictures(model) {
  const chats = (await model.requests()).filter((r) => r.path.endsWith('/chat/completions'));
  const user = chats.at(-1).body.messages.filter((m) => m.role === 'user').at(-1);
  return { content: user.content, count: chats.length };
}

test('a pasted photo goes to a model that sees, without its location, and stays with the chat', async ({ page }) => {
  const model = await startFakeModel('pictures.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base, { model: 'gpt-4o-mini' });

    const photo = await photoWithLocation(page);
    const composer = page.getByRole('textbox', { name: 'Message or command' });
    await composer.evaluate((el, file) => {
      const data = new DataTransfer();
      data.items.add(file);
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, photo);
    const tray = page.getByRole('list', { name: 'Pictures for the next message' });
    await expect(tray.getByRole('img', { name: 'holiday.jpg' })).toBeVisible();
    await expect(tray.getByRole('button', { name: 'Remove holiday.jpg' })).toBeVisible();
    await composer.fill('What is in this photo?');
    await saveScreenshot(page, 'pictures-composer');

    await composer.press('Enter');
    await expect(page.locator('.message.assistant').last()).toContainText('I can see the picture you sent.');
    await expect(page.getByTestId('picture-tray')).toHaveCount(0);

    // The request carries the text and one image part, a data: URL.
    const { content } = await sentPictures(model);
    expect(content[0]).toEqual({ type: 'text', text: 'What is in this photo?' });
    expect(content).toHaveLength(2);
    const url = content[1].image_url.url;
    expect(url.startsWith('data:image/jpeg;base64,')).toBe(true);
    const sent = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
    expect([sent[0], sent[1]]).toEqual([0xff, 0xd8]);
    // Drawn again at 1568 px on its longest side, its EXIF left behind.
    expect(jpegSize(sent)).toEqual({ width: 1568, height: 1045 });
    expect(sent.includes('HEARTH-SECRET-PLACE')).toBe(false);
    expect(sent.includes('Exif')).toBe(false);

    // In the conversation, after a reload too; opened large, downloaded.
    await reloadApp(page);
    const shown = page.locator('.message.user').last().getByRole('button', { name: 'Open holiday.jpg large' });
    await expect(shown).toBeVisible();
    await saveScreenshot(page, 'pictures-sent');
    await shown.click();
    const viewer = page.getByRole('dialog', { name: 'holiday.jpg' });
    await expect(viewer.getByRole('img', { name: 'holiday.jpg' })).toBeVisible();
    await expect(viewer).toContainText('1568 × 1045');
    const download = page.waitForEvent('download');
    await viewer.getByRole('button', { name: 'Download' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('holiday.jpg');
    expect(fs.readFileSync(await file.path()).equals(sent)).toBe(true);
    await page.keyboard.press('Escape');
    await expect(viewer).toBeHidden();
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('a model not known to see says so before sending, and nothing is lost', async ({ page }) => {
  const model = await startFakeModel('pictures.json');
  try {
    const errors = await openApp(page);
    await useProvider(page, model.base, { model: 'plain-text-model' });

    // A file that is no picture is refused by name; a PNG is taken.
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Add pictures' }).click();
    await (await chooser).setFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a picture') },
      {
        name: 'chart.png',
        mimeType: 'image/png',
        buffer: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'),
      },
    ]);
    const tray = page.getByTestId('picture-tray');
    await expect(tray.getByRole('alert')).toContainText('notes.txt is not a picture Hearth can attach');
    await expect(tray.getByRole('img', { name: 'chart.png' })).toBeVisible();
    // The person describes it in their own words.
    await tray.getByRole('button', { name: 'Open chart.png large' }).click();
    const describe = page.getByRole('dialog', { name: 'chart.png' })
      .getByLabel('Description, for people who cannot see it');
    await describe.fill('Sales by month');
    await describe.press('Enter');
    await expect(tray.getByRole('img', { name: 'Sales by month' })).toBeVisible();
    // Said before sending.
    await expect(tray.getByRole('status')).toContainText('cannot tell whether plain-text-model sees pictures');
    await saveScreenshot(page, 'pictures-cannot-see');

    const before = (await model.requests()).length;
    const composer = page.getByRole('textbox', { name: 'Message or command' });
    await composer.fill('Read this chart');
    await composer.press('Enter');
    await expect(page.locator('.composer .inline-error, .composer [role="alert"]').filter({ hasText: 'Sees pictures' })).toBeVisible();
    expect((await model.requests()).length).toBe(before);
    await expect(composer).toHaveValue('Read this chart');
    await expect(tray.getByRole('img', { name: 'Sales by month' })).toBeVisible();

    // Taken off, the words go as they are.
    await tray.getByRole('button', { name: 'Remove Sales by month' }).click();
    await composer.press('Enter');
    await expect(page.locator('.message.assistant').last()).toContainText('I can see the picture you sent.');
    const { content } = await sentPictures(model);
    expect(content).toBe('Read this chart');
    expect(errors).toEqual([]);
  } finally {
    await model.stop();
  }
});

test('a picture an MCP tool returns shows in its card and opens large', async ({ page }) => {
  requirePeers();
  const everything = await startEverything();
  try {
    const errors = await openApp(page, 'servers');
    const card = await addServer(page, everything.url, 'everything');
    await expect(card).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await switchOn(page, 'everything__get-tiny-image');
    await nav(page, 'Chat').click();
    await runCommand(page, '/everything__get-tiny-image {}');
    await page.getByRole('dialog').getByRole('button', { name: 'Allow once' }).click();
    const result = page.locator('.result-card[data-skill="everything__get-tiny-image"]');
    await expect(result).toHaveAttribute('data-status', 'completed');
    const picture = result.getByRole('img', { name: 'Picture from everything__get-tiny-image' });
    await expect(picture).toBeVisible();
    expect(await picture.evaluate((img) => img.naturalWidth)).toBeGreaterThan(0);
    await saveScreenshot(page, 'pictures-mcp-result');
    await result.getByRole('button', { name: 'Open Picture from everything__get-tiny-image large' }).click();
    await expect(page.getByRole('dialog', { name: 'Picture from everything__get-tiny-image' })).toBeVisible();
    expect(errors).toEqual([]);
  } finally {
    everything.stop();
  }
});

test('a canvas JavaScript returns comes back as a picture', async ({ page }) => {
  const errors = await openApp(page);
  const r = await runSkill(page, 'run_javascript', {
    code: "const c = new OffscreenCanvas(240, 120);\nconst g = c.getContext('2d');\ng.fillStyle = '#c33';\ng.fillRect(0, 0, 240, 120);\nc",
  });
  expect(r.status, r.output).toBe('completed');
  await expect(r.card).toContainText('a 240×120 canvas, saved as /mnt/out/canvas.png');
  const preview = r.card.locator('.code-file[data-file="canvas.png"] img.code-preview');
  await expect(preview).toBeVisible();
  expect(await preview.evaluate((img) => [img.naturalWidth, img.naturalHeight])).toEqual([240, 120]);
  expect(errors).toEqual([]);
});
