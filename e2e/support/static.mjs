// A plain static file server for the build, the kind a person copies
// `dist/` to: Python's `http.server` on a free 127.0.0.1 port, sending no
// special headers (no CSP, no COOP/COEP) and offering no proxy. Journeys and
// benchmarks use it to show what Hearth does without `hearth serve`.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { hearthDist } from './env.mjs';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/// Serves `dist` with `python3 -m http.server` and waits until it answers.
/// Resolves to {url, port, stop()}; stop() waits until the process is gone.
export async function startStatic({ dist = hearthDist, port } = {}) {
  const chosen = port ?? (await freePort());
  const child = spawn('python3', ['-m', 'http.server', String(chosen), '--bind', '127.0.0.1', '--directory', dist], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const url = `http://127.0.0.1:${chosen}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the static server exited (${child.exitCode}):\n${stderr}`);
    try {
      if ((await fetch(`${url}/index.html`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 200) throw new Error(`the static server did not answer on ${url}:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { url, port: chosen, stop };
}
