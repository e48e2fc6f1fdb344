// Helpers for the sandbox and file journeys: running skills from the
// command bar, a canary server that must never be reached, the app's own
// data to prove it intact, and a raw CDP driver for pages Playwright has
// given up on.
import { expect } from '@playwright/test';
import http from 'node:http';
import dgram from 'node:dgram';
import { once } from 'node:events';

/// Runs `/skill {json}` from the composer and returns the new card.
export async function runSkill(page, skill, args, { timeout = 60_000 } = {}) {
  const cards = page.locator('.result-card');
  const before = await cards.count();
  const composer = page.getByRole('textbox', { name: 'Message or command' });
  await composer.fill(`/${skill} ${JSON.stringify(args)}`);
  await composer.press('Enter');
  const card = cards.nth(before);
  await card.waitFor({ timeout });
  const status = await card.getAttribute('data-status');
  // Long outputs are shown collapsed; read them whole.
  const more = card.getByText(/^Show all \(/);
  if (await more.count()) await more.first().click();
  const output = await card.locator('.card-answer').innerText();
  return { card, status, output };
}

/// The code sandbox's frame (its document is a srcdoc, so it has no URL of
/// its own to find it by).
export async function sandboxFrame(page) {
  const handle = await page.locator('iframe.sandbox-frame').elementHandle();
  return handle.contentFrame();
}

/// Makes the app use `<input type=file>` instead of the File System Access
/// pickers, which Playwright cannot drive (and which Firefox and Safari
/// lack).
export async function withoutPickers(context) {
  await context.addInitScript(() => {
    delete window.showDirectoryPicker;
    delete window.showOpenFilePicker;
  });
}

/// Grants `dir` through the fallback input in Settings and returns to Chat.
export async function grantFolder(page, dir) {
  await page.getByRole('link', { name: 'Settings' }).click();
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Grant a folder…' }).click();
  await (await chooser).setFiles(dir);
  await expect(page.getByTestId('files-notice')).toContainText('Granted');
  await page.getByRole('link', { name: 'Chat' }).click();
}

/// An HTTP + WebSocket + UDP listener on 127.0.0.1 that records every hit.
/// Nothing from the sandbox may ever reach it.
export async function startCanary() {
  const hits = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, {
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'content-type': 'text/javascript',
    });
    res.end('self.leaked = true;');
  });
  // A bare TCP connection counts too, request or not.
  server.on('connection', (socket) => {
    hits.push(`TCP connection from port ${socket.remotePort}`);
  });
  server.on('upgrade', (req, socket) => {
    hits.push(`UPGRADE ${req.url}`);
    socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = server.address().port;
  const udp = dgram.createSocket('udp4');
  udp.on('message', (m) => hits.push(`UDP ${m.length} bytes`));
  udp.bind(port, '127.0.0.1');
  await once(udp, 'listening');
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits: () => [...hits],
    close: () => new Promise((resolve) => {
      udp.close();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/// Every record in the app's IndexedDB, by store (handles come back empty).
/// Read in a read-write transaction (that writes nothing), which IndexedDB
/// orders after every write the app has already started, so a record
/// still being saved is not missed.
export async function appData(page) {
  return page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('hearth');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const names = [...db.objectStoreNames];
      const tx = db.transaction(names, 'readwrite');
      const out = {};
      let left = names.length;
      for (const name of names) {
        const q = tx.objectStore(name).getAll();
        q.onsuccess = () => {
          out[name] = q.result;
          if (--left === 0) { db.close(); resolve(out); }
        };
      }
    };
  }));
}

/// Drives a page through a raw CDP session. Playwright marks a page crashed
/// when any of its out-of-process frames crashes (the sandbox's, after a
/// memory bomb) and then refuses to touch it, although the app itself is
/// alive; this session still reaches it.
export async function rawPage(browser, urlPrefix) {
  const cdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'page' && t.url.startsWith(urlPrefix));
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId: target.targetId, flatten: false });
  let next = 0;
  const waiting = new Map();
  cdp.on('Target.receivedMessageFromTarget', (e) => {
    if (e.sessionId !== sessionId) return;
    const m = JSON.parse(e.message);
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(m.error.message));
    else w.resolve(m.result);
  });
  const send = (method, params) => new Promise((resolve, reject) => {
    const id = ++next;
    waiting.set(id, { resolve, reject });
    cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
  });
  const evaluate = async (fn, arg) => {
    const r = await send('Runtime.evaluate', {
      expression: `(${fn})(${JSON.stringify(arg ?? null)})`,
      awaitPromise: true,
      returnByValue: true,
    });
    if (r.exceptionDetails) throw new Error(`${r.exceptionDetails.text} ${r.exceptionDetails.exception?.description ?? ''}`);
    return r.result.value;
  };
  /// The same as runSkill, through the raw session.
  const runSkill = (skill, args) => evaluate(async ({ line }) => {
    const before = document.querySelectorAll('.result-card').length;
    const box = document.querySelector('textarea.composer-input');
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(box, line);
    box.dispatchEvent(new Event('input', { bubbles: true }));
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    const t0 = performance.now();
    while (document.querySelectorAll('.result-card').length <= before) {
      if (performance.now() - t0 > 120_000) return { status: 'no card', output: '' };
      await new Promise((r) => setTimeout(r, 50));
    }
    const card = document.querySelectorAll('.result-card')[before];
    return { status: card.dataset.status, output: card.querySelector('.card-answer').innerText };
  }, { line: `/${skill} ${JSON.stringify(args)}` });
  return { evaluate, runSkill };
}
