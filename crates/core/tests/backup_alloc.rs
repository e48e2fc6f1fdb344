//! Reading a backup never allocates by what a zip entry only declares: a
//! file that claims a store inflates to a gigabyte, but holds a few bytes,
//! costs a few bytes. Every allocation of the test binary is watched.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use hearth_core::backup::{self, Known, KnownStore, MANIFEST_PATH, sha256_hex, store_path};
use serde_json::json;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// The system allocator, keeping the largest single request it saw.
struct Watch;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Watch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static WATCH: Watch = Watch;

/// Rewrites the uncompressed size of every entry named `name` in a zip's
/// local and central headers.
fn declare_size(zip: &mut [u8], name: &str, size: u32) {
    let name = name.as_bytes();
    let mut i = 0;
    while i + 46 < zip.len() {
        let sig = &zip[i..i + 4];
        if sig == b"PK\x03\x04" {
            let n = u16::from_le_bytes([zip[i + 26], zip[i + 27]]) as usize;
            if zip.get(i + 30..i + 30 + n) == Some(name) {
                zip[i + 22..i + 26].copy_from_slice(&size.to_le_bytes());
            }
        } else if sig == b"PK\x01\x02" {
            let n = u16::from_le_bytes([zip[i + 28], zip[i + 29]]) as usize;
            if zip.get(i + 46..i + 46 + n) == Some(name) {
                zip[i + 24..i + 28].copy_from_slice(&size.to_le_bytes());
            }
        }
        i += 1;
    }
}

#[test]
fn a_declared_size_is_never_allocated_up_front() {
    const CLAIMED: u32 = 1 << 30;
    let body = br#"[{"id":"n1","title":"hi"}]"#;
    let manifest = json!({
        "format": "hearth-backup", "format_version": 1, "app_version": "0.1.0",
        "schema_version": 3, "created_at_ms": 0.0,
        "secrets": {"included": true, "left_out": 0},
        "stores": [{"name": "notes", "key_path": "id", "records": 1,
                    "bytes": CLAIMED, "sha256": sha256_hex(body)}],
    });
    let mut z = ZipWriter::new(Cursor::new(Vec::new()));
    let o = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    z.start_file(MANIFEST_PATH, o).unwrap();
    z.write_all(manifest.to_string().as_bytes()).unwrap();
    z.start_file(store_path("notes"), o).unwrap();
    z.write_all(body).unwrap();
    let mut bytes = z.finish().unwrap().into_inner();
    declare_size(&mut bytes, &store_path("notes"), CLAIMED);

    let stores = [KnownStore {
        name: "notes",
        key_path: "id",
    }];
    let known = Known {
        schema_version: 3,
        stores: &stores,
    };
    LARGEST.store(0, Ordering::Relaxed);
    let outcome = backup::read(&bytes, &known);
    let largest = LARGEST.load(Ordering::Relaxed);
    // The file is refused (its size does not match the manifest) …
    assert!(outcome.is_err(), "{outcome:?}");
    // … without ever asking for anything near the size it claimed.
    assert!(
        largest < 16 << 20,
        "one allocation took {largest} bytes for a {}-byte file",
        bytes.len()
    );
}
