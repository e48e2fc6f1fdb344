// IndexedDB records as JSON text and back, for backups and data migrations.
// The encoding is described, and read from files, in
// crates/core/src/backup/records.rs; this file only maps it to browser
// values and back, one for one, and decides nothing.
//
// Records are mostly plain JSON already. What JSON cannot say is a tagged
// object, the only kind of object with a "$hearth" key:
//   bytes (typed arrays, ArrayBuffer) -> {"$hearth": "bytes", "type", "data": base64}
//   Blob                              -> {"$hearth": "blob", "mime", "data": base64}
// A record's own key "$hearth" is written "$hearth$" (and "$hearth$" as
// "$hearth$$", ...), so no other key is ever read as something else.
// Browser-only values that cannot leave this browser (file access handles,
// other class instances) are left out and counted.

const TAG = '$hearth';
// A record's own key that is written with one "$" more.
const TAG_LIKE = /^\$hearth\$*$/;
const WRITTEN_TAG_LIKE = /^\$hearth\$+$/;

// Byte containers a "bytes" tag may name (as crates/core/src/backup/records.rs).
const BYTE_TYPES = new Set([
  'ArrayBuffer', 'DataView', 'Uint8Array', 'Int8Array', 'Uint8ClampedArray', 'Int16Array',
  'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array',
  'BigUint64Array',
]);

function isPlain(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function toBase64(bytes) {
  let s = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + chunk));
  }
  return btoa(s);
}

function fromBase64(text) {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function bytesOf(v) {
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

// `blobs` maps each Blob met to its bytes (read beforehand, since reading a
// Blob is asynchronous); a Blob not in it is written without its data.
function encoder(blobs, counter) {
  return function replacer(key, value) {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value;
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
      const type = value instanceof ArrayBuffer ? 'ArrayBuffer' : value.constructor.name;
      return { [TAG]: 'bytes', type, data: toBase64(bytesOf(value)) };
    }
    if (typeof Blob !== 'undefined' && value instanceof Blob) {
      const bytes = blobs && blobs.get(value);
      return bytes
        ? { [TAG]: 'blob', mime: value.type, data: toBase64(bytes) }
        : { [TAG]: 'blob', mime: value.type, size: value.size };
    }
    if (!isPlain(value)) {
      counter.leftOut += 1;
      return undefined;
    }
    if (Object.keys(value).some((k) => TAG_LIKE.test(k))) {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [TAG_LIKE.test(k) ? `${k}$` : k, v]),
      );
    }
    return value;
  };
}

function collectBlobs(value, out, seen) {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (typeof Blob !== 'undefined' && value instanceof Blob) {
    out.push(value);
    return;
  }
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return;
  if (Array.isArray(value)) {
    for (const item of value) collectBlobs(item, out, seen);
    return;
  }
  if (!isPlain(value)) return;
  for (const key of Object.keys(value)) collectBlobs(value[key], out, seen);
}

// Records to a JSON array, synchronously (inside transactions). Blobs keep
// only their type and size. Returns {json, leftOut}.
export function encodeRecords(records) {
  const counter = { leftOut: 0 };
  const json = JSON.stringify(records, encoder(null, counter));
  return { json, leftOut: counter.leftOut };
}

// Like encodeRecords, with every Blob's bytes read first.
export async function encodeRecordsWithBlobs(records) {
  const found = [];
  collectBlobs(records, found, new Set());
  const blobs = new Map();
  for (const blob of found) blobs.set(blob, new Uint8Array(await blob.arrayBuffer()));
  const counter = { leftOut: 0 };
  const json = JSON.stringify(records, encoder(blobs, counter));
  return { json, leftOut: counter.leftOut };
}

function bytesValue(value) {
  if (!BYTE_TYPES.has(value.type) || typeof value.data !== 'string') {
    throw new Error(`bytes of an unknown kind (${String(value.type)})`);
  }
  const bytes = fromBase64(value.data);
  if (value.type === 'ArrayBuffer') return bytes.buffer;
  if (value.type === 'DataView') return new DataView(bytes.buffer);
  const Ctor = globalThis[value.type];
  return new Ctor(bytes.buffer, 0, bytes.byteLength / Ctor.BYTES_PER_ELEMENT);
}

function reviver(key, value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  if (Object.prototype.hasOwnProperty.call(value, TAG)) {
    switch (value[TAG]) {
      case 'bytes':
        return bytesValue(value);
      case 'blob':
        // Without its data (records encoded inside a transaction, where a
        // Blob cannot be read): an empty file of the same type. Backups
        // always carry the data; their reader refuses a file without it.
        return typeof value.data === 'string'
          ? new Blob([fromBase64(value.data)], { type: value.mime || '' })
          : new Blob([], { type: value.mime || '' });
      default:
        throw new Error(`a value tagged ${JSON.stringify(value[TAG])}, which Hearth does not know`);
    }
  }
  if (Object.keys(value).some((k) => WRITTEN_TAG_LIKE.test(k))) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [WRITTEN_TAG_LIKE.test(k) ? k.slice(0, -1) : k, v]),
    );
  }
  return value;
}

// A JSON array from encodeRecords back to records.
export function decodeRecords(json) {
  const records = JSON.parse(json, reviver);
  if (!Array.isArray(records)) throw new Error('expected a list of records');
  return records;
}

// The top-level values of `record` that cannot leave this browser (file
// access handles), as an object, or undefined when there are none.
export function browserOnly(record) {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
  let out;
  for (const key of Object.keys(record)) {
    const v = record[key];
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) continue;
    if (typeof Blob !== 'undefined' && v instanceof Blob) continue;
    if (isPlain(v)) continue;
    out = out || {};
    out[key] = v;
  }
  return out;
}

// Copies the properties of `extra` onto `record` where it lacks them.
export function attach(record, extra) {
  if (!extra || record === null || typeof record !== 'object') return record;
  for (const key of Object.keys(extra)) {
    if (!(key in record)) record[key] = extra[key];
  }
  return record;
}

// The record's key at `keyPath` (a single field name).
export function keyOf(record, keyPath) {
  return record === null || typeof record !== 'object' ? undefined : record[keyPath];
}
