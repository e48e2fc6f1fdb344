// The isolation boundary itself, checked below the runners, under `hearth
// serve` and from a plain static server that sends no headers at all: the
// sandbox frame's origin and isolation, the policy it carries, what its own
// realm can reach, that documents put in its place keep that policy, that
// it refuses to run without it, and what happens when the page is opened or
// framed by others.
import { test, expect } from '@playwright/test';
import { runSkill, sandboxFrame, startCanary } from '../support/sandbox.mjs';
import { startStatic } from '../support/static.mjs';

/// Opens the app at `base` in a page of its own.
async function open(browser, base) {
  const page = await browser.newPage({ baseURL: base });
  await page.goto('/#/chat');
  await page.waitForSelector('body[data-ready]');
  return page;
}

async function startedSandbox(page) {
  expect((await runSkill(page, 'run_javascript', { code: '1' })).status).toBe('completed');
  return sandboxFrame(page);
}

/// A second frame in the app's page built exactly as the app builds its
/// sandbox (the same srcdoc, the same sandbox attribute), with `edit`
/// applied to the document first; attacks that replace the frame's document
/// use it, so the app's own sandbox stays untouched.
async function copyOfSandbox(page, edit = null) {
  await page.evaluate((edit) => {
    const real = document.querySelector('iframe.sandbox-frame');
    const copy = document.createElement('iframe');
    copy.id = 'sandbox-copy';
    copy.setAttribute('sandbox', 'allow-scripts');
    copy.setAttribute('aria-hidden', 'true');
    let doc = real.getAttribute('srcdoc');
    if (edit) doc = doc.replace(new RegExp(edit.pattern), edit.with);
    copy.srcdoc = doc;
    document.body.append(copy);
  }, edit);
  const handle = await page.locator('#sandbox-copy').elementHandle();
  await expect.poll(async () => (await handle.contentFrame())?.url()).toBe('about:srcdoc');
  return handle.contentFrame();
}

/// Connects to the sandbox copy as the app does and sends `init`; resolves
/// to the sandbox's answer.
function initCopy(page) {
  return page.evaluate(() => new Promise((resolve) => {
    const copy = document.getElementById('sandbox-copy');
    const connect = () => {
      const channel = new MessageChannel();
      channel.port1.onmessage = (e) => resolve(JSON.parse(e.data.json));
      copy.contentWindow.postMessage({ hearth: 'connect' }, '*', [channel.port2]);
      channel.port1.postMessage({ json: JSON.stringify({ v: 1, kind: 'init', javascript_runner: '', python_runner: '' }), buffers: [] });
    };
    // The copy said hello before this listener existed; connecting needs
    // no hello, only the port.
    setTimeout(connect, 300);
    setTimeout(() => resolve({ kind: 'no answer' }), 10_000);
  }));
}

for (const host of ['serve', 'static']) {
  test.describe(host === 'serve' ? 'under hearth serve' : 'from a plain static server', () => {
    let server = null;
    test.beforeAll(async () => {
      if (host === 'static') server = await startStatic();
    });
    test.afterAll(async () => {
      await server?.stop();
    });
    const baseOf = (baseURL) => (server ? server.url : baseURL);

    test('the sandbox frame is built from the app\'s own copy: an opaque origin, no storage, no way out', async ({ browser, baseURL }) => {
      const page = await open(browser, baseOf(baseURL));
      const frame = await startedSandbox(page);
      const iframe = page.locator('iframe.sandbox-frame');
      await expect(iframe).toHaveAttribute('sandbox', 'allow-scripts');
      await expect(iframe).toHaveAttribute('allow', 'cross-origin-isolated');
      await expect(iframe).not.toHaveAttribute('src', /./);
      expect(await iframe.getAttribute('srcdoc')).toContain('<title>Hearth sandbox</title>');
      const facts = await frame.evaluate(() => ({
        origin: self.origin,
        url: location.href,
        storage: (() => { try { return String(localStorage.length); } catch (e) { return e.name; } })(),
        cookie: (() => { try { return document.cookie; } catch (e) { return e.name; } })(),
        parentDom: (() => { try { return parent.document.querySelector('iframe').srcdoc; } catch (e) { return e.name; } })(),
        frameElement,
        webrtc: typeof RTCPeerConnection,
        fetch: typeof fetch,
      }));
      expect(facts).toEqual({
        origin: 'null',
        url: 'about:srcdoc',
        storage: 'SecurityError',
        cookie: 'SecurityError',
        parentDom: 'SecurityError',
        frameElement: null,
        webrtc: 'undefined',
        fetch: 'undefined',
      });
      // Cross-origin isolation comes from hearth serve's headers; a static
      // host's first visit has none (the service worker adds them later).
      expect(await frame.evaluate(() => self.crossOriginIsolated)).toBe(host === 'serve');
      await page.close();
    });

    test('the frame carries a policy that allows no network', async ({ browser, baseURL }) => {
      const page = await open(browser, baseOf(baseURL));
      const frame = await startedSandbox(page);
      const policy = await frame.evaluate(() => [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')].map((m) => m.content));
      expect(policy).toHaveLength(1);
      const directives = policy[0].split(';').map((d) => d.trim());
      expect(directives).toEqual([
        "default-src 'none'",
        expect.stringMatching(/^script-src 'sha256-[A-Za-z0-9+/]+=*' blob: 'unsafe-eval' 'wasm-unsafe-eval'$/),
        'worker-src blob:',
        "connect-src 'none'",
        "img-src 'none'",
        "style-src 'none'",
        "font-src 'none'",
        "media-src 'none'",
        "object-src 'none'",
        "frame-src 'none'",
        "manifest-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
      ]);
      await page.close();
    });

    test('even the sandbox page\'s own realm cannot reach the network', async ({ browser, baseURL }) => {
      const canary = await startCanary();
      const page = await open(browser, baseOf(baseURL));
      const frame = await startedSandbox(page);
      const tried = await frame.evaluate(async (url) => {
        const out = {};
        const attempt = async (name, f) => { try { out[name] = `reached: ${await f()}`; } catch (e) { out[name] = `blocked: ${e.name}`; } };
        // Recover the network APIs the page removed from itself, from a new
        // worker realm, which has its own copies.
        await attempt('worker fetch', () => new Promise((ok, fail) => {
          const w = new Worker(URL.createObjectURL(new Blob([`fetch('${url}/worker').then(() => postMessage('ok'), (e) => postMessage(e.name))`], { type: 'text/javascript' })));
          w.onmessage = (m) => (m.data === 'ok' ? ok('ok') : fail(Object.assign(new Error(), { name: m.data })));
        }));
        await attempt('worker from a data: URL', () => new Promise((ok, fail) => {
          const w = new Worker(`data:text/javascript,fetch('${url}/data-worker').then(() => postMessage('ok'), (e) => postMessage(e.name))`);
          w.onmessage = (m) => (m.data === 'ok' ? ok('ok') : fail(Object.assign(new Error(), { name: m.data })));
          w.onerror = () => fail(Object.assign(new Error(), { name: 'WorkerRefused' }));
        }));
        await attempt('image', () => new Promise((ok, fail) => { const i = new Image(); i.onload = () => ok('loaded'); i.onerror = () => fail(Object.assign(new Error(), { name: 'ImageBlocked' })); i.src = `${url}/pixel.gif`; }));
        await attempt('script', () => new Promise((ok, fail) => { const s = document.createElement('script'); s.onload = () => ok('loaded'); s.onerror = () => fail(Object.assign(new Error(), { name: 'ScriptBlocked' })); s.src = `${url}/script.js`; document.head.append(s); }));
        await attempt('import', () => import(`${url}/module.mjs`));
        await attempt('import of a data: module', () => import('data:text/javascript,export default 1'));
        // sendBeacon answers "queued" before CSP refuses the request; the
        // canary below is what shows it never left.
        navigator.sendBeacon(`${url}/beacon`, 'x');
        await attempt('form', async () => { const f = document.createElement('form'); f.action = `${url}/form`; f.method = 'post'; document.body.append(f); f.submit(); await new Promise((r) => setTimeout(r, 300)); throw Object.assign(new Error(), { name: 'FormNotSent' }); });
        await attempt('popup', async () => { const w = window.open(`${url}/popup`); if (!w) throw Object.assign(new Error(), { name: 'PopupBlocked' }); return 'opened'; });
        return out;
      }, canary.url);
      for (const [what, outcome] of Object.entries(tried)) expect(outcome, what).toMatch(/^blocked/);
      expect(Object.keys(tried)).toEqual(['worker fetch', 'worker from a data: URL', 'image', 'script', 'import', 'import of a data: module', 'form', 'popup']);
      await page.waitForTimeout(1000);
      expect(canary.hits()).toEqual([]);
      await canary.close();
      // The app is unharmed.
      expect((await runSkill(page, 'run_javascript', { code: '6 * 7' })).output).toContain('42');
      await page.close();
    });

    // Chromium opens a TCP connection for a nested frame's navigation before
    // frame-src 'none' refuses it: no request is sent and nothing loads. The
    // sandbox page never makes frames and untrusted code never runs in its
    // realm (workers cannot make frames), so this matters only if that realm
    // were compromised; the attack corpora show no connection at all.
    test('a frame made inside the sandbox page loads nothing', async ({ browser, baseURL }) => {
      const canary = await startCanary();
      const page = await open(browser, baseOf(baseURL));
      const frame = await startedSandbox(page);
      const loaded = await frame.evaluate(async (url) => {
        const f = document.createElement('iframe');
        f.src = `${url}/frame`;
        document.body.append(f);
        await new Promise((r) => setTimeout(r, 500));
        try { return f.contentWindow.location.href; } catch (e) { return e.name; }
      }, canary.url);
      expect(loaded).not.toContain(canary.url);
      await page.waitForTimeout(500);
      expect(canary.hits().filter((h) => !h.startsWith('TCP'))).toEqual([]);
      await canary.close();
      expect((await runSkill(page, 'run_javascript', { code: '6 * 7' })).output).toContain('42');
      await page.close();
    });

    test('documents put in the frame\'s place keep its policy: document.write, data: and blob: navigations', async ({ browser, baseURL }) => {
      const canary = await startCanary();
      const page = await open(browser, baseOf(baseURL));
      await startedSandbox(page);
      const payload = (tag) => `<p id="written">${tag}</p><img src="${canary.url}/${tag}-img"><script>fetch("${canary.url}/${tag}-fetch")</script>`
        + `<link rel="stylesheet" href="${canary.url}/${tag}-css"><iframe src="${canary.url}/${tag}-frame"></iframe>`;

      // document.open and document.write of a new document without the meta tag.
      let frame = await copyOfSandbox(page);
      await frame.evaluate((html) => setTimeout(() => { document.open(); document.write(html); document.close(); }, 0), payload('written'));
      await expect.poll(() => frame.evaluate(() => document.getElementById('written')?.textContent ?? null)).toBe('written');
      expect(await frame.evaluate(() => document.querySelectorAll('meta').length)).toBe(0);
      await page.evaluate(() => document.getElementById('sandbox-copy').remove());

      // The frame navigated to a data: document, then to a blob: one.
      for (const scheme of ['data', 'blob']) {
        frame = await copyOfSandbox(page);
        await frame.evaluate(([scheme, html]) => setTimeout(() => {
          location.href = scheme === 'data'
            ? `data:text/html,${encodeURIComponent(html)}`
            : URL.createObjectURL(new Blob([html], { type: 'text/html' }));
        }, 0), [scheme, payload(scheme)]);
        const handle = await page.locator('#sandbox-copy').elementHandle();
        if (host === 'serve') {
          // The app's own policy (frame-src 'self') refuses the navigation.
          await expect.poll(async () => (await handle.contentFrame())?.url() ?? '').toBe('chrome-error://chromewebdata/');
        } else {
          // Nothing refuses the navigation; the new document inherits the policy.
          await expect.poll(async () => (await handle.contentFrame())?.url() ?? '').toMatch(new RegExp(`^${scheme}:`));
          frame = await handle.contentFrame();
          await expect.poll(() => frame.evaluate(() => document.getElementById('written')?.textContent ?? null)).toBe(scheme);
        }
        await page.evaluate(() => document.getElementById('sandbox-copy').remove());
      }
      await page.waitForTimeout(1000);
      expect(canary.hits().filter((h) => !h.startsWith('TCP'))).toEqual([]);
      await canary.close();
      expect((await runSkill(page, 'run_javascript', { code: '6 * 7' })).output).toContain('42');
      await page.close();
    });

    test('without its policy the sandbox refuses to run anything, and says why', async ({ browser, baseURL }) => {
      const page = await open(browser, baseOf(baseURL));
      await startedSandbox(page);
      const meta = '<meta http-equiv="Content-Security-Policy" content="[^"]*">';
      const cases = [
        ['as built', null, 'ready'],
        ['without the meta tag', { pattern: meta, with: '' }, 'refused'],
        ['with a policy that allows the network', { pattern: "connect-src 'none'", with: 'connect-src *' }, 'refused'],
        ['with a second, looser policy only', { pattern: meta, with: '<meta http-equiv="Content-Security-Policy" content="connect-src https:">' }, 'refused'],
      ];
      for (const [label, edit, kind] of cases) {
        await copyOfSandbox(page, edit);
        const answer = await initCopy(page);
        expect(answer.kind, label).toBe(kind);
        if (kind === 'refused') {
          expect(answer.message, label).toBe('the sandbox\'s no-network policy is not in force (the browser did not apply its Content-Security-Policy), so Hearth will not run code in it');
        }
        await page.evaluate(() => document.getElementById('sandbox-copy').remove());
      }
      await page.close();
    });

    test('framed by another site, the sandbox page does nothing', async ({ page, baseURL }) => {
      const base = baseOf(baseURL);
      const heard = [];
      await page.exposeFunction('heard', (m) => heard.push(m));
      await page.route('http://evil.example/', (route) => route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><script>addEventListener('message', (e) => heard(JSON.stringify(e.data)));</script>
          <iframe id="f" sandbox="allow-scripts" src="${base}/sandbox/host.html"></iframe>
          <script>
            const channel = new MessageChannel();
            channel.port1.onmessage = (e) => heard(JSON.stringify(e.data));
            setTimeout(() => {
              document.getElementById('f').contentWindow.postMessage({ hearth: 'connect' }, '*', [channel.port2]);
              channel.port1.postMessage({ json: JSON.stringify({ v: 1, kind: 'init', javascript_runner: 'postMessage(1)', python_runner: '' }), buffers: [] });
            }, 500);
          </script>`,
      }));
      await page.goto('http://evil.example/');
      await page.waitForTimeout(1500);
      expect(heard).toEqual([]);
    });

    if (host === 'serve') {
      test('opened directly, the sandbox page gets an opaque origin and runs nothing', async ({ page }) => {
        await page.goto('/sandbox/host.html');
        const facts = await page.evaluate(() => ({
          origin: self.origin,
          storage: (() => { try { localStorage.setItem('x', '1'); return 'wrote'; } catch (e) { return e.name; } })(),
          database: (() => { try { indexedDB.open('hearth'); return 'opened'; } catch (e) { return e.name; } })(),
        }));
        expect(facts).toEqual({ origin: 'null', storage: 'SecurityError', database: 'SecurityError' });
      });
    }
  });
}
