//! The in-tab models' storage in a real browser: GGUF files in the origin
//! private file system, listed only with a complete record beside them; a
//! file cut short (no record, or a record whose size does not match) is
//! never listed and is cleaned up; a file that is no model is refused
//! before anything is stored; deleting removes both files.
#![cfg(target_arch = "wasm32")]

use hearth::tabmodel::store::{self, StoreError, Writer};
use hearth_core::assistant::gguf::GgufInfo;
use hearth_core::assistant::providers::in_tab::StoredModel;
use js_sys::{Array, Uint8Array};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A GGUF header with no tensors, padded to `size` bytes.
fn gguf(name: &str, size: usize) -> Vec<u8> {
    let mut b = b"GGUF".to_vec();
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    let s = |b: &mut Vec<u8>, text: &str| {
        b.extend((text.len() as u64).to_le_bytes());
        b.extend(text.as_bytes());
    };
    s(&mut b, "general.architecture");
    b.extend(8u32.to_le_bytes());
    s(&mut b, "llama");
    s(&mut b, "general.name");
    b.extend(8u32.to_le_bytes());
    s(&mut b, name);
    b.resize(size.max(b.len()), 0);
    b
}

fn file(name: &str, bytes: &[u8]) -> web_sys::File {
    let parts = Array::of1(&Uint8Array::from(bytes));
    web_sys::File::new_with_u8_array_sequence(&parts, name).unwrap()
}

fn record(id: &str, size: u64, info: GgufInfo) -> StoredModel {
    StoredModel {
        id: id.into(),
        file_name: format!("{id}.gguf"),
        size,
        added_at_ms: js_sys::Date::now(),
        source_url: None,
        info,
    }
}

async fn names() -> Vec<String> {
    let root: web_sys::FileSystemDirectoryHandle = JsFuture::from(
        web_sys::window()
            .unwrap()
            .navigator()
            .storage()
            .get_directory(),
    )
    .await
    .unwrap()
    .into();
    let Ok(dir) = JsFuture::from(root.get_directory_handle(store::MODELS_DIR)).await else {
        return Vec::new();
    };
    let dir: web_sys::FileSystemDirectoryHandle = dir.into();
    let iter = dir.keys();
    let mut out = Vec::new();
    loop {
        let step = JsFuture::from(iter.next().unwrap()).await.unwrap();
        if js_sys::Reflect::get(&step, &"done".into())
            .unwrap()
            .as_bool()
            .unwrap()
        {
            break;
        }
        out.push(
            js_sys::Reflect::get(&step, &"value".into())
                .unwrap()
                .as_string()
                .unwrap(),
        );
    }
    out.sort();
    out
}

async fn clear() {
    for m in store::list(true, &[]).await.unwrap() {
        store::delete(&m.id).await.unwrap();
    }
    assert_eq!(names().await, Vec::<String>::new());
}

#[wasm_bindgen_test]
async fn only_whole_files_with_their_record_are_listed() {
    clear().await;
    let bytes = gguf("Whole", 300_000);
    let f = file("whole.gguf", &bytes);
    let info = store::read_header(&f).await.unwrap();
    assert_eq!(info.name.as_deref(), Some("Whole"));

    // A whole file, copied and committed with its record.
    let w = Writer::create("whole").await.unwrap();
    let seen = std::cell::Cell::new(0.0);
    store::copy_file(&w, &f, |done, total| {
        assert!(done <= total);
        seen.set(done);
    })
    .await
    .unwrap();
    assert_eq!(seen.get(), bytes.len() as f64);
    w.finish(&record("whole", bytes.len() as u64, info.clone()))
        .await
        .unwrap();

    // A download cut short: bytes written, never committed.
    let cut = Writer::create("cut").await.unwrap();
    cut.write_bytes(&Uint8Array::from(&bytes[..1000]))
        .await
        .unwrap();
    // A record whose file is shorter than it says (a copy that failed
    // after an older record was left behind).
    let short = Writer::create("short").await.unwrap();
    short
        .write_bytes(&Uint8Array::from(&bytes[..5000]))
        .await
        .unwrap();
    short
        .finish(&record("short", bytes.len() as u64, info.clone()))
        .await
        .unwrap();

    let listed: Vec<String> = store::list(false, &["cut".into()])
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(listed, ["whole"]);
    // The one being written is left alone by the clean-up; the broken one goes.
    store::list(true, &["cut".into()]).await.unwrap();
    let left = names().await;
    assert!(left.contains(&"cut.gguf".to_string()), "{left:?}");
    assert!(!left.iter().any(|n| n.starts_with("short")), "{left:?}");
    // Once the cut download is discarded, nothing of it remains.
    cut.discard().await;
    store::list(true, &[]).await.unwrap();
    assert_eq!(names().await, ["whole.gguf", "whole.json"]);

    store::delete("whole").await.unwrap();
    assert_eq!(names().await, Vec::<String>::new());
    assert!(store::list(true, &[]).await.unwrap().is_empty());
}

#[wasm_bindgen_test]
async fn a_file_that_is_no_model_is_refused_before_anything_is_stored() {
    clear().await;
    let f = file("notes.gguf", b"these are my notes, not a model");
    match store::read_header(&f).await {
        Err(StoreError::NotAModel(m)) => assert_eq!(
            m,
            "This file is not a model Hearth can run: this is not a GGUF model file (it does not start with \"GGUF\")."
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(names().await, Vec::<String>::new());
}
