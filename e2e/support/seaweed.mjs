// A real SeaweedFS S3 store on 127.0.0.1 for the sync journeys: started
// by the test, with one access key, a bucket and the CORS rule made by
// `hearth sync bucket` (the command people run), and stopped after.
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { hearthBin } from './env.mjs';

const run = promisify(execFile);

export const ACCESS = 'hearth-e2e-access';
export const SECRET = 'hearth-e2e-secret-key-0123456789';

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/// Starts `weed server -s3`; resolves to { endpoint, stop, objects, bucket }
/// once `hearth sync bucket --create` has made `bucket` and set its CORS
/// rule for `origin`.
export async function startSeaweed({ bucket = 'hearth', origin }) {
  const weed = process.env.HEARTH_WEED;
  if (!weed || !fs.existsSync(weed)) {
    throw new Error(`SeaweedFS is missing (HEARTH_WEED=${weed}): run \`cargo xtask seaweedfs\``);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-weed-'));
  fs.mkdirSync(path.join(dir, 'data'));
  const config = path.join(dir, 's3.json');
  fs.writeFileSync(config, JSON.stringify({
    identities: [{
      name: 'owner',
      credentials: [{ accessKey: ACCESS, secretKey: SECRET }],
      actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
    }],
  }));
  const names = ['master', 'master.grpc', 'volume', 'volume.grpc', 'filer', 'filer.grpc', 's3', 's3.grpc'];
  const ports = [];
  for (const _ of names) ports.push(await freePort());
  const args = [
    'server', `-dir=${path.join(dir, 'data')}`, '-ip=127.0.0.1', '-ip.bind=127.0.0.1',
    '-master.telemetry=false', '-filer', '-s3', '-s3.port.iceberg=0', '-s3.port.lance=0',
    `-s3.config=${config}`,
    `-filer.localSocket=${path.join(dir, 'filer.sock')}`,
    `-s3.localSocket=${path.join(dir, 's3.sock')}`,
  ];
  names.forEach((name, i) => {
    const [server, grpc] = name.split('.');
    args.push(grpc ? `-${server}.port.grpc=${ports[i]}` : `-${name}.port=${ports[i]}`);
  });
  const log = fs.openSync(path.join(dir, 'weed.log'), 'w');
  const child = spawn(weed, args, { stdio: ['ignore', 'ignore', log] });
  const endpoint = `http://127.0.0.1:${ports[6]}`;
  const env = { ...process.env, AWS_ACCESS_KEY_ID: ACCESS, AWS_SECRET_ACCESS_KEY: SECRET };
  // The gateway answers before the volume server has joined: retry the
  // bucket's setup, then a first object, until both take.
  const deadline = Date.now() + 90_000;
  let last = '';
  for (;;) {
    try {
      await run(hearthBin, ['sync', 'bucket', '--endpoint', endpoint, '--bucket', bucket, '--origin', origin, '--create'], { env });
      const probe = await fetch(`${endpoint}/${bucket}/`, { method: 'HEAD' }).catch(() => null);
      if (probe) break;
    } catch (e) {
      last = String(e.stderr || e.message);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`SeaweedFS did not start within 90 s: ${last}\n${fs.readFileSync(path.join(dir, 'weed.log'), 'utf8').slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => { child.once('exit', r); setTimeout(r, 5000); });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const filer = `http://127.0.0.1:${ports[4]}`;
  return { endpoint, bucket, dir, filer, stop, child };
}

/// Every file SeaweedFS keeps under its data folder, read raw: what
/// someone who copied the server's disk would have.
export function rawFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(fs.readFileSync(p));
    }
  };
  walk(path.join(dir, 'data'));
  return out;
}

/// Every object in the bucket with its size and modification time, read
/// through the filer's listing: what "nothing was written" is checked
/// against. The volume files are not: SeaweedFS flushes its own metadata
/// log into them on its own schedule, long after the writes it records.
export async function bucketObjects(store) {
  const out = [];
  const walk = async (dir) => {
    let last = '';
    for (;;) {
      const url = `${store.filer}/buckets/${store.bucket}${dir}?limit=1000&lastFileName=${encodeURIComponent(last)}`;
      const res = await fetch(url, { headers: { Accept: 'application/json' } });
      if (!res.ok) throw new Error(`listing ${dir} failed: ${res.status}`);
      const page = await res.json();
      for (const e of page.Entries || []) {
        // The top bit of Mode marks a directory.
        if (e.Mode >= 2 ** 31) await walk(`${e.FullPath.slice(`/buckets/${store.bucket}`.length)}/`);
        else out.push(`${e.FullPath} ${e.FileSize} ${e.Mtime}`);
      }
      if (!page.ShouldDisplayLoadMore) break;
      last = page.LastFileName;
    }
  };
  await walk('/');
  return out.sort();
}
