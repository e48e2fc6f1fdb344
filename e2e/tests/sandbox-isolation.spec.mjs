// The isolation boundary itself, checked below the runners: the sandbox
// frame's origin and isolation, its CSP as served, what its own realm can
// reach, and what happens when the page is opened or framed by others.
import { test, expect } from '@playwright/test';
import { openApp } from '../support/app.mjs';
import { runSkill, startCanary } from '../support/sandbox.mjs';

async function sandboxFrame(page) {
  await runSkill(page, 'run_javascript', { code: '1' });
  const frame = page.frames().find((f) => f.url().endsWith('/sandbox/host.html'));
  expect(frame, 'the sandbox frame').toBeTruthy();
  return frame;
}

test('the sandbox frame is an opaque origin, cross-origin isolated, with no storage', async ({ page }) => {
  await openApp(page);
  const frame = await sandboxFrame(page);
  const iframe = page.locator('iframe.sandbox-frame');
  await expect(iframe).toHaveAttribute('sandbox', 'allow-scripts');
  await expect(iframe).toHaveAttribute('allow', 'cross-origin-isolated');
  const facts = await frame.evaluate(() => ({
    origin: self.origin,
    isolated: self.crossOriginIsolated,
    sharedMemory: typeof SharedArrayBuffer,
    storage: (() => { try { return String(localStorage.length); } catch (e) { return e.name; } })(),
    cookie: (() => { try { return document.cookie; } catch (e) { return e.name; } })(),
    parentDom: (() => { try { return parent.document.title; } catch (e) { return e.name; } })(),
    webrtc: typeof RTCPeerConnection,
    fetch: typeof fetch,
  }));
  expect(facts).toEqual({
    origin: 'null',
    isolated: true,
    sharedMemory: 'function',
    storage: 'SecurityError',
    cookie: 'SecurityError',
    parentDom: 'SecurityError',
    webrtc: 'undefined',
    fetch: 'undefined',
  });
});

test('the sandbox page is served with a policy that allows no network', async ({ request }) => {
  const res = await request.get('/sandbox/host.html');
  expect(res.status()).toBe(200);
  const csp = res.headers()['content-security-policy'];
  for (const directive of ['sandbox allow-scripts', "default-src 'none'", "connect-src 'none'", "img-src 'none'", "frame-ancestors 'self'", "worker-src blob:"]) {
    expect(csp).toContain(directive);
  }
  expect(csp).not.toContain('allow-same-origin');
  expect(res.headers()['cross-origin-embedder-policy']).toBe('require-corp');
});

test('even the sandbox page\'s own realm cannot reach the network', async ({ page }) => {
  const canary = await startCanary();
  await openApp(page);
  const frame = await sandboxFrame(page);
  const tried = await frame.evaluate(async (url) => {
    const out = {};
    const attempt = async (name, f) => { try { out[name] = `reached: ${await f()}`; } catch (e) { out[name] = `blocked: ${e.name}`; } };
    // Recover the network APIs the page removed from itself, from a new
    // worker realm, which has its own copies.
    await attempt('worker fetch', () => new Promise((ok, fail) => {
      const w = new Worker(URL.createObjectURL(new Blob([`fetch('${url}/worker').then(() => postMessage('ok'), (e) => postMessage(e.name))`], { type: 'text/javascript' })));
      w.onmessage = (m) => (m.data === 'ok' ? ok('ok') : fail(Object.assign(new Error(), { name: m.data })));
    }));
    await attempt('image', () => new Promise((ok, fail) => { const i = new Image(); i.onload = () => ok('loaded'); i.onerror = () => fail(Object.assign(new Error(), { name: 'ImageBlocked' })); i.src = `${url}/pixel.gif`; }));
    await attempt('script', () => new Promise((ok, fail) => { const s = document.createElement('script'); s.onload = () => ok('loaded'); s.onerror = () => fail(Object.assign(new Error(), { name: 'ScriptBlocked' })); s.src = `${url}/script.js`; document.head.append(s); }));
    await attempt('import', () => import(`${url}/module.mjs`));
    // sendBeacon answers "queued" before CSP refuses the request; the
    // canary below is what shows it never left.
    navigator.sendBeacon(`${url}/beacon`, 'x');
    await attempt('form', async () => { const f = document.createElement('form'); f.action = `${url}/form`; f.method = 'post'; document.body.append(f); f.submit(); await new Promise((r) => setTimeout(r, 300)); throw Object.assign(new Error(), { name: 'FormNotSent' }); });
    await attempt('popup', async () => { const w = window.open(`${url}/popup`); if (!w) throw Object.assign(new Error(), { name: 'PopupBlocked' }); return 'opened'; });
    return out;
  }, canary.url);
  for (const [what, outcome] of Object.entries(tried)) expect(outcome, what).toMatch(/^blocked/);
  expect(Object.keys(tried)).toEqual(['worker fetch', 'image', 'script', 'import', 'form', 'popup']);
  await page.waitForTimeout(1000);
  expect(canary.hits()).toEqual([]);
  await canary.close();
  // The app is unharmed.
  expect((await runSkill(page, 'run_javascript', { code: '6 * 7' })).output).toContain('42');
});

// Chromium opens a TCP connection for a nested frame's navigation before
// frame-src 'none' refuses it: no request is sent and nothing loads. The
// sandbox page never makes frames and untrusted code never runs in its
// realm (workers cannot make frames), so this matters only if that realm
// were compromised; the attack corpora show no connection at all.
test('a frame made inside the sandbox page loads nothing', async ({ page }) => {
  const canary = await startCanary();
  await openApp(page);
  const frame = await sandboxFrame(page);
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
});

test('opened directly, the sandbox page gets an opaque origin and runs nothing', async ({ page }) => {
  await page.goto('/sandbox/host.html');
  const facts = await page.evaluate(() => ({
    origin: self.origin,
    storage: (() => { try { localStorage.setItem('x', '1'); return 'wrote'; } catch (e) { return e.name; } })(),
    database: (() => { try { indexedDB.open('hearth'); return 'opened'; } catch (e) { return e.name; } })(),
  }));
  expect(facts).toEqual({ origin: 'null', storage: 'SecurityError', database: 'SecurityError' });
});

test('another site cannot frame the sandbox and hand it code', async ({ page, baseURL }) => {
  const heard = [];
  await page.exposeFunction('heard', (m) => heard.push(m));
  await page.route('http://evil.example/', (route) => route.fulfill({
    contentType: 'text/html',
    body: `<!doctype html><script>addEventListener('message', (e) => heard(JSON.stringify(e.data)));</script>
      <iframe id="f" sandbox="allow-scripts" src="${baseURL}/sandbox/host.html"></iframe>
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
