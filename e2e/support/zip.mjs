// Zip files in plain Node (zlib only): read what the app wrote, and write
// files the way someone else's program would, for attack journeys.
import crypto from 'node:crypto';
import zlib from 'node:zlib';

/// Every entry of a zip: name → Buffer (stored or deflated entries).
export function readZip(buffer) {
  const out = {};
  // The end of central directory record: the last "PK\x05\x06".
  let end = buffer.length - 22;
  while (end >= 0 && buffer.readUInt32LE(end) !== 0x06054b50) end -= 1;
  if (end < 0) throw new Error('not a zip file');
  const count = buffer.readUInt16LE(end + 10);
  let at = buffer.readUInt32LE(end + 16);
  for (let i = 0; i < count; i += 1) {
    if (buffer.readUInt32LE(at) !== 0x02014b50) throw new Error('bad central directory');
    const method = buffer.readUInt16LE(at + 10);
    const size = buffer.readUInt32LE(at + 20);
    const nameLength = buffer.readUInt16LE(at + 28);
    const extra = buffer.readUInt16LE(at + 30);
    const comment = buffer.readUInt16LE(at + 32);
    const local = buffer.readUInt32LE(at + 42);
    const name = buffer.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    const localName = buffer.readUInt16LE(local + 26);
    const localExtra = buffer.readUInt16LE(local + 28);
    const data = buffer.subarray(local + 30 + localName + localExtra, local + 30 + localName + localExtra + size);
    out[name] = method === 0 ? Buffer.from(data) : zlib.inflateRawSync(data);
    at += 46 + nameLength + extra + comment;
  }
  return out;
}

/// A zip of `entries` (name → Buffer or string), stored without compression.
export function writeZip(entries) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, body] of Object.entries(entries)) {
    const data = Buffer.isBuffer(body) ? body : Buffer.from(body);
    const fileName = Buffer.from(name, 'utf8');
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/// A Hearth backup file as another program could write it: `stores` maps a
/// store name to [keyPath, records]. The manifest's sizes and checksums are
/// right, so only Hearth's own judgement stands between it and the profile.
export function craftBackup(stores, { secretsIncluded = false, schemaVersion = 3 } = {}) {
  const entries = {};
  const manifestStores = [];
  for (const [name, [keyPath, records]] of Object.entries(stores)) {
    const body = Buffer.from(JSON.stringify(records));
    entries[`stores/${name}.json`] = body;
    manifestStores.push({
      name,
      key_path: keyPath,
      records: records.length,
      bytes: body.length,
      sha256: crypto.createHash('sha256').update(body).digest('hex'),
    });
  }
  const manifest = {
    format: 'hearth-backup',
    format_version: 1,
    app_version: '0.1.0',
    schema_version: schemaVersion,
    created_at_ms: Date.UTC(2026, 0, 1),
    secrets: { included: secretsIncluded, left_out: secretsIncluded ? 0 : 1 },
    stores: manifestStores,
  };
  return writeZip({ 'manifest.json': JSON.stringify(manifest), ...entries });
}
