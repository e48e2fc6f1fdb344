// A `hearth serve` a test starts, stops and restarts itself (on 127.0.0.1),
// for journeys where the server goes away (offline) or changes (updates).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hearthBin, hearthDist, keyOfLaunchLine, repoRoot } from './env.mjs';

/// Starts `hearth serve` on `port` (0: any free port) and waits until it
/// answers. Resolves to {url, port, key, launch, stop()}: `launch` is the
/// link it printed (the app's address with the key to its API).
export async function startServe({ port = 0, dist = hearthDist } = {}) {
  const child = spawn(hearthBin, ['serve', '--host', '127.0.0.1', '--port', String(port), '--dist', dist], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const [url, launch] = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hearth serve did not start:\n${output}`)), 30_000);
    const onData = (chunk) => {
      output += chunk;
      const m = output.match(/running at ((http:\/\/127\.0\.0\.1:\d+)\/\S*)\n/);
      if (m) {
        clearTimeout(timer);
        resolve([m[2], m[1]]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c) => (output += c));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`hearth serve exited (${code}):\n${output}`));
    });
  });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.removeAllListeners('exit');
      child.on('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url, launch, key: keyOfLaunchLine(launch), port: Number(new URL(url).port), stop };
}

/// A copy of the build with one visible change, re-listed for the service
/// worker by `cargo xtask precache`: "the next version" for update tests.
export function nextBuild(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-next-build-'));
  fs.cpSync(hearthDist, dir, { recursive: true });
  const manifest = path.join(dir, 'manifest.webmanifest');
  const m = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  m.description = `${m.description} (${label})`;
  fs.writeFileSync(manifest, JSON.stringify(m, null, 2));
  precache(dir);
  return dir;
}

/// Lists `dir` for the service worker, as the trunk hook does.
export function precache(dir) {
  const built = path.join(repoRoot, 'target', 'debug', 'xtask');
  if (fs.existsSync(built)) execFileSync(built, ['precache', dir], { cwd: repoRoot, stdio: 'pipe' });
  else execFileSync('cargo', ['xtask', 'precache', dir], { cwd: repoRoot, stdio: 'pipe' });
}

/// A copy of the build with a stand-in Python runtime under pyodide/
/// (`files`: name → bytes), listed for the worker like the real one.
export function buildWithRuntime(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-python-build-'));
  fs.cpSync(hearthDist, dir, { recursive: true });
  // Only the given files make up the runtime, whatever the build carries.
  fs.rmSync(path.join(dir, 'pyodide'), { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'pyodide'), { recursive: true });
  for (const [name, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, 'pyodide', name), bytes);
  precache(dir);
  return dir;
}

/// The build id a dist folder's index.html carries.
export function buildIdOf(dist) {
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const m = html.match(/name="hearth-build" content="([^"]+)"/);
  return m ? m[1] : null;
}
