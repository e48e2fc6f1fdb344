// Pictures in the composer, as figures (never assertions), on a
// 12-megapixel photo (4000×3000 JPEG made in the page, with noise so it
// compresses like a photo):
//   - paste to thumbnail: from the paste event until the tray's thumbnail
//     has loaded (the `pictures` chunk on first use, decoding, drawing at
//     1568×1176, encoding, base64);
//   - Enter to request: from Enter until the request to the model starts
//     (hearth-fake-model on 127.0.0.1);
// against the anchor, the browser decoding the same file alone
// (`createImageBitmap`), measured in the same page. Medians of RUNS.
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions } from '../support/env.mjs';
import { startServe } from '../support/serve.mjs';
import { startFakeModel } from '../support/model.mjs';
import { figure, median, ratio } from './figures.mjs';
import { setProvider } from './provider.mjs';

const RUNS = Number(process.env.HEARTH_BENCH_RUNS || 5);

/// The photo, kept on `window.benchPhoto`.
async function makePhoto(page) {
  return page.evaluate(async () => {
    const canvas = new OffscreenCanvas(4000, 3000);
    const g = canvas.getContext('2d');
    const sky = g.createLinearGradient(0, 0, 0, 3000);
    sky.addColorStop(0, '#6aa9e9');
    sky.addColorStop(1, '#2f6b3a');
    g.fillStyle = sky;
    g.fillRect(0, 0, 4000, 3000);
    const noise = g.getImageData(0, 0, 4000, 3000);
    let seed = 7;
    for (let i = 0; i < noise.data.length; i += 4) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const n = (seed >>> 24) - 128;
      noise.data[i] += n >> 2;
      noise.data[i + 1] += n >> 2;
      noise.data[i + 2] += n >> 2;
    }
    g.putImageData(noise, 0, 0);
    const blob = await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.92 });
    window.benchPhoto = new File([blob], 'photo.jpg', { type: 'image/jpeg' });
    return blob.size;
  });
}

/// Times the browser decoding the photo alone.
async function decodeAlone(page) {
  return page.evaluate(async () => {
    const t = performance.now();
    const bitmap = await createImageBitmap(window.benchPhoto, { imageOrientation: 'from-image' });
    const ms = performance.now() - t;
    bitmap.close();
    return ms;
  });
}

/// Pastes the photo and times it until its thumbnail has loaded.
async function pasteToThumbnail(page) {
  return page.evaluate(() => new Promise((resolve, reject) => {
    const box = document.querySelector('textarea.composer-input');
    const t = performance.now();
    const timer = setTimeout(() => reject(new Error('no thumbnail within 60 s')), 60_000);
    const check = () => {
      const img = document.querySelector('.picture-list img');
      if (img && img.complete && img.naturalWidth > 0) {
        clearTimeout(timer);
        observer.disconnect();
        resolve(performance.now() - t);
      } else if (img) {
        img.addEventListener('load', check, { once: true });
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(document.body, { subtree: true, childList: true });
    const data = new DataTransfer();
    data.items.add(window.benchPhoto);
    box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }));
}

/// Sends the message with the picture and times it until the request to
/// the model starts; waits for the reply before the next run.
async function enterToRequest(page, n) {
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill(`What is in this photo? (${n})`);
  const ms = await page.evaluate(() => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no request within 60 s')), 60_000);
    const seen = new PerformanceObserver((list) => {
      const sent = list.getEntries().find((e) => e.name.endsWith('/chat/completions'));
      if (sent) {
        clearTimeout(timer);
        seen.disconnect();
        resolve(sent.startTime - t);
      }
    });
    seen.observe({ type: 'resource' });
    const box = document.querySelector('textarea.composer-input');
    const t = performance.now();
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
  }));
  await page.locator('.message.assistant').filter({ hasText: 'I can see the picture you sent.' }).waitFor();
  // Each run in a conversation of its own, so every request carries the
  // one picture just pasted.
  await page.getByRole('button', { name: 'New chat' }).click();
  return ms;
}

const serve = await startServe();
const model = await startFakeModel('pictures.json');
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 820 } });
  page.on('pageerror', (e) => console.error(`  page error: ${e.message}`));
  await page.goto(serve.launch);
  await page.waitForSelector('body[data-ready]');
  await setProvider(page, serve, model, 'gpt-4o-mini');

  const bytes = await makePhoto(page);
  console.log(`pictures: a 4000×3000 JPEG of ${(bytes / 1e6).toFixed(1)} MB, ${RUNS} runs`);
  const decode = [];
  const thumb = [];
  const request = [];
  for (let n = 0; n < RUNS; n++) {
    decode.push(await decodeAlone(page));
    thumb.push(await pasteToThumbnail(page));
    request.push(await enterToRequest(page, n));
  }
  const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(', ');
  console.log(`  decode alone (anchor): ${fmt(decode)} ms`);
  console.log(`  paste to thumbnail:    ${fmt(thumb)} ms (the first fetches the pictures chunk)`);
  console.log(`  Enter to request:      ${fmt(request)} ms`);
  const anchor = { figure: 'pictures: the browser decoding a 12 MP JPEG alone', value: median(decode) };
  figure({ ...anchor, unit: 'ms', detail: `median of ${RUNS}` });
  const pasted = { figure: 'pictures: paste to thumbnail, 12 MP JPEG', value: median(thumb) };
  figure({ ...pasted, unit: 'ms', detail: `median of ${RUNS}; first ${thumb[0].toFixed(0)} ms` });
  ratio('pictures: paste to thumbnail against decoding alone', pasted, anchor);
  figure({ figure: 'pictures: Enter to the request, one 12 MP picture', value: median(request), unit: 'ms', detail: `median of ${RUNS}` });
} finally {
  await browser.close();
  await model.stop();
  await serve.stop();
}
