//! The split step of every trunk build, run by the post_build hook
//! (`cargo xtask precache`) before the precache list is written.
//!
//! The app marks its split points with `wasm_split` (`src/places.rs`,
//! behind the `split` feature that index.html turns on). trunk has no
//! step of its own for this, and its wasm-bindgen output cannot start
//! such a module, so the hook replaces that output:
//!
//! 1. `wasm_split_cli_support` splits the linker's module (kept with its
//!    relocations by `build.rs`) into the main module, one module per
//!    split point and chunks of code shared between split points, plus a
//!    JS loader (`__wasm_split.js`) that fetches and instantiates them;
//! 2. wasm-bindgen turns the main module into trunk's hashed
//!    `hearth-app-<hash>.js` / `_bg.wasm` pair, keeping the exports the
//!    chunks link against;
//! 3. in release builds, wasm-opt -Oz optimises the main module and each
//!    chunk (index.html turns trunk's own wasm-opt off, which would have
//!    optimised the module before the split);
//! 4. the chunks and the loader get content-hashed names, like trunk's
//!    files, and the integrity hashes in index.html are updated;
//! 5. index.html starts the first load's work as early as it can (see
//!    [`start_early`]).
//!
//! The service worker's list is written afterwards from the folder as it
//! then is, so it lists every chunk.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256, Sha384};

use crate::util::{Failure, repo_root, run};

/// The app's wasm binary, as trunk builds it.
const BIN: &str = "hearth-app";
/// The import module the split points' loaders name until the split
/// replaces it; only a module built with split points holds it.
const PLACEHOLDER: &[u8] = b"__wasm_split_placeholder__";
/// The loader's name before it is hashed.
const LOADER: &str = "__wasm_split.js";

/// What the split wrote into the build, by file name.
#[derive(Debug)]
pub struct Split {
    /// The main module, which the first load fetches.
    pub main_wasm: String,
    /// The chunks, fetched on demand.
    pub chunks: Vec<String>,
}

/// Splits the app in trunk's staging folder `staging`; `release` runs
/// wasm-opt. `None` when the module has no split points (built without
/// the `split` feature), which leaves trunk's output as it is.
pub fn split(staging: &Path, release: bool) -> Result<Option<Split>, Failure> {
    let profile = if release { "release" } else { "debug" };
    let target = target_dir();
    let raw = target
        .join("wasm32-unknown-unknown")
        .join(profile)
        .join(format!("{BIN}.wasm"));
    let input = std::fs::read(&raw).map_err(|e| {
        Failure::new(format!(
            "cannot read the linked module {}: {e}",
            raw.display()
        ))
    })?;
    if !contains(&input, PLACEHOLDER) {
        println!("split: {BIN}.wasm has no split points; leaving trunk's output");
        return Ok(None);
    }
    let stem = trunk_stem(staging)?;
    let work = target.join("wasm-split").join(profile);
    let _ = std::fs::remove_dir_all(&work);
    let chunks_dir = work.join("chunks");
    let bindgen_dir = work.join("bindgen");
    for d in [&chunks_dir, &bindgen_dir] {
        std::fs::create_dir_all(d).map_err(|e| Failure::new(format!("{}: {e}", d.display())))?;
    }

    // 1. Split.
    let main_split = work.join("main.wasm");
    let main_module = format!("./{stem}.js");
    let link_name = format!("./{LOADER}");
    let result = wasm_split_cli_support::transform({
        let mut o = wasm_split_cli_support::Options::new(&input);
        o.output_dir = chunks_dir.as_path();
        o.main_out_path = main_split.as_path();
        o.main_module = main_module.as_str();
        o.link_name = link_name.as_str();
        o
    })
    .map_err(|e| Failure::new(format!("wasm-split failed: {e:#}")))?;

    // 2. wasm-bindgen, as trunk runs it, keeping what the chunks import.
    run(Command::new("wasm-bindgen")
        .arg("--target=web")
        .arg(format!("--out-dir={}", bindgen_dir.display()))
        .arg(format!("--out-name={stem}"))
        .args(["--no-typescript", "--keep-lld-exports", "--no-demangle"])
        .arg(&main_split))?;
    let main_wasm = bindgen_dir.join(format!("{stem}_bg.wasm"));

    // 3. wasm-opt.
    let mut chunk_paths = result.split_modules.clone();
    chunk_paths.sort();
    if release {
        for file in std::iter::once(&main_wasm).chain(chunk_paths.iter()) {
            run(Command::new("wasm-opt")
                .args([
                    "-Oz",
                    "--enable-bulk-memory",
                    "--enable-nontrapping-float-to-int",
                ])
                .arg(file)
                .arg("-o")
                .arg(file))?;
        }
    }

    // 4. Hashed names: chunks first, then the loader that names them,
    // then the main JS that imports the loader.
    let mut loader_js = read_text(&chunks_dir.join(LOADER))?;
    let mut chunks = Vec::new();
    for path in &chunk_paths {
        let bytes = read(path)?;
        let name = file_name(path);
        let hashed = hashed_name(&name, &bytes);
        let quoted = format!("\"./{name}\"");
        if !loader_js.contains(&quoted) {
            return Err(Failure::new(format!(
                "the split loader does not name {name}; cannot hash it"
            )));
        }
        loader_js = loader_js.replace(&quoted, &format!("\"./{hashed}\""));
        write(&staging.join(&hashed), &bytes)?;
        chunks.push(hashed);
    }
    let loader = hashed_name(LOADER, loader_js.as_bytes());
    write(&staging.join(&loader), loader_js.as_bytes())?;

    let main_js = format!("{stem}.js");
    let js = read_text(&bindgen_dir.join(&main_js))?;
    let js = rename_import(&js, &link_name, &format!("./{loader}"))?;
    write(&staging.join(&main_js), js.as_bytes())?;
    let main_wasm_name = format!("{stem}_bg.wasm");
    let wasm = read(&main_wasm)?;
    write(&staging.join(&main_wasm_name), &wasm)?;
    copy_tree(&bindgen_dir.join("snippets"), &staging.join("snippets"))?;

    let index = staging.join("index.html");
    let mut html = read_text(&index)?;
    html = set_integrity(&html, &format!("/{main_js}"), js.as_bytes())?;
    html = set_integrity(&html, &format!("/{main_wasm_name}"), &wasm)?;
    html = start_early(&html, &main_js, &main_wasm_name, &loader)?;
    write(&index, html.as_bytes())?;

    let summary = Split {
        main_wasm: main_wasm_name,
        chunks,
    };
    let size = |name: &str| std::fs::metadata(staging.join(name)).map_or(0, |m| m.len());
    println!(
        "split: main module {} {:.1} KB, loader {loader}, {} chunks {:.1} KB",
        summary.main_wasm,
        size(&summary.main_wasm) as f64 / 1024.0,
        summary.chunks.len(),
        summary.chunks.iter().map(|c| size(c)).sum::<u64>() as f64 / 1024.0
    );
    Ok(Some(summary))
}

/// The target directory cargo builds into.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                repo_root().join(d)
            }
        }
        None => repo_root().join("target"),
    }
}

/// `hearth-app-<hash>`, the name trunk gave the app's JS and wasm.
fn trunk_stem(staging: &Path) -> Result<String, Failure> {
    let entries = std::fs::read_dir(staging)
        .map_err(|e| Failure::new(format!("{}: {e}", staging.display())))?;
    let mut stems: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter_map(|n| {
            n.strip_suffix("_bg.wasm")
                .filter(|s| s.starts_with(&format!("{BIN}-")))
                .map(str::to_string)
        })
        .collect();
    stems.sort();
    match stems.as_slice() {
        [one] if staging.join(format!("{one}.js")).exists() => Ok(one.clone()),
        _ => Err(Failure::new(format!(
            "expected one {BIN}-<hash>_bg.wasm with its .js in {}, found {stems:?}",
            staging.display()
        ))),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `name` with the first 16 hex digits of its content's SHA-256 before
/// the extension, as trunk names its files (`split_skills-0123…cdef.wasm`).
pub fn hashed_name(name: &str, bytes: &[u8]) -> String {
    let hash = &hex(&Sha256::digest(bytes))[..16];
    match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}-{hash}.{ext}"),
        None => format!("{name}-{hash}"),
    }
}

/// `js` with its static import of `from` (quoted either way) importing
/// `to` instead. Other mentions (the key wasm-bindgen gives the import
/// object, which must stay the module name the wasm asks for) are kept.
pub fn rename_import(js: &str, from: &str, to: &str) -> Result<String, Failure> {
    let mut out = js.to_string();
    let mut found = false;
    for q in ['"', '\''] {
        let pattern = format!("from {q}{from}{q}");
        if out.contains(&pattern) {
            out = out.replace(&pattern, &format!("from {q}{to}{q}"));
            found = true;
        }
    }
    if found {
        Ok(out)
    } else {
        Err(Failure::new(format!(
            "wasm-bindgen's JS does not import {from}; the split loader would never load"
        )))
    }
}

/// `html` (trunk's index.html) changed so the first load's two serial
/// waits overlap the rest:
/// - the loader, which the main JS imports, is preloaded with it, instead
///   of fetched only once the main JS has been read;
/// - the main module's download and compilation start from a classic
///   script at the top of the page, instead of once the whole JS module
///   graph has loaded, and trunk's start-up script hands wasm-bindgen the
///   compiled module (or, where streaming compilation failed, the URL, so
///   wasm-bindgen reports why); trunk's preload of it goes, as that would
///   be a second download. Its fetch asks for high priority: the page's
///   stylesheets and module preloads take the connections first, and the
///   module is what the first render waits on longest.
///
/// Fails when trunk's output is not shaped as expected, so a trunk update
/// that changes it is noticed rather than silently slower.
pub fn start_early(
    html: &str,
    main_js: &str,
    main_wasm: &str,
    loader: &str,
) -> Result<String, Failure> {
    let init = format!("await init({{ module_or_path: '/{main_wasm}' }})");
    if html.matches(&init).count() != 1 {
        return Err(Failure::new(format!(
            "index.html does not start the app with `{init}`; cannot start its module early"
        )));
    }
    let js_preload = format!("<link rel=\"modulepreload\" href=\"/{main_js}\"");
    if !html.contains(&js_preload) {
        return Err(Failure::new(format!(
            "index.html does not preload /{main_js}; cannot preload the loader with it"
        )));
    }
    let head = "<head>";
    let Some(at) = html.find(head).map(|i| i + head.len()) else {
        return Err(Failure::new("index.html has no <head>"));
    };
    let early = format!(
        "\n    <script>self.hearthModule = WebAssembly.compileStreaming(fetch('/{main_wasm}', {{ priority: 'high' }})).catch(() => null);</script>"
    );
    let mut out = format!("{}{early}{}", &html[..at], &html[at..]);
    // trunk's preload of the module would now be a second download.
    let preload = format!("href=\"/{main_wasm}\"");
    if let Some(i) = out.find(&preload) {
        let start = out[..i].rfind('<').unwrap_or(i);
        let end = i + out[i..].find('>').map_or(out.len() - i, |e| e + 1);
        if out[start..end].contains("rel=\"preload\"") {
            out.replace_range(start..end, "");
        }
    }
    out = out.replace(
        &init,
        &format!("await init({{ module_or_path: (await self.hearthModule) || '/{main_wasm}' }})"),
    );
    out = out.replacen(
        &js_preload,
        &format!(
            "<link rel=\"modulepreload\" href=\"/{loader}\" crossorigin=\"anonymous\">{js_preload}"
        ),
        1,
    );
    Ok(out)
}

/// `html` with the `integrity` of the tag whose `href` is `href` set to
/// the SHA-384 of `bytes` (trunk's choice), when the tag has one.
pub fn set_integrity(html: &str, href: &str, bytes: &[u8]) -> Result<String, Failure> {
    let needle = format!("href=\"{href}\"");
    let Some(at) = html.find(&needle) else {
        return Err(Failure::new(format!("index.html does not link {href}")));
    };
    let start = html[..at].rfind('<').unwrap_or(0);
    let end = at + html[at..].find('>').unwrap_or(html.len() - at);
    let tag = &html[start..end];
    const ATTR: &str = "integrity=\"";
    let Some(i) = tag.find(ATTR) else {
        return Ok(html.to_string());
    };
    let value_start = start + i + ATTR.len();
    let value_end = value_start + html[value_start..].find('"').unwrap_or(0);
    let value = format!("sha384-{}", base64(&Sha384::digest(bytes)));
    Ok(format!(
        "{}{value}{}",
        &html[..value_start],
        &html[value_end..]
    ))
}

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= n {
                out.push(ABC[((v >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure::new(format!("{}: {e}", path.display())))
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure::new(format!("{}: {e}", path.display())))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| Failure::new(format!("{}: {e}", path.display())))
}

/// Copies every file under `from` to the same place under `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), Failure> {
    if !from.exists() {
        return Ok(());
    }
    let entries =
        std::fs::read_dir(from).map_err(|e| Failure::new(format!("{}: {e}", from.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| Failure::new(e.to_string()))?;
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if path.is_dir() {
            std::fs::create_dir_all(&dest)
                .map_err(|e| Failure::new(format!("{}: {e}", dest.display())))?;
            copy_tree(&path, &dest)?;
        } else {
            std::fs::copy(&path, &dest)
                .map_err(|e| Failure::new(format!("{}: {e}", dest.display())))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_hashed_like_trunks() {
        let name = hashed_name("split_skills.wasm", b"\0asm");
        let (stem, rest) = name.split_once('-').unwrap();
        assert_eq!(stem, "split_skills");
        assert_eq!(rest.len(), "0123456789abcdef.wasm".len());
        assert!(rest.ends_with(".wasm"));
        assert_ne!(name, hashed_name("split_skills.wasm", b"\0asm2"));
    }

    #[test]
    fn only_the_import_of_the_loader_is_renamed() {
        let js = "import * as import9 from \"./__wasm_split.js\"\nimports['./__wasm_split.js'] = import9;\n";
        let out = rename_import(js, "./__wasm_split.js", "./__wasm_split-00.js").unwrap();
        assert_eq!(
            out,
            "import * as import9 from \"./__wasm_split-00.js\"\nimports['./__wasm_split.js'] = import9;\n"
        );
        assert!(rename_import("no imports", "./__wasm_split.js", "x").is_err());
    }

    #[test]
    fn integrity_is_the_sha384_of_the_new_bytes() {
        let html = r#"<link rel="modulepreload" href="/a.js" crossorigin="anonymous" integrity="sha384-old"><link rel="preload" href="/b.wasm" integrity="sha384-old2" as="fetch">"#;
        let out = set_integrity(html, "/b.wasm", b"abc").unwrap();
        // `printf abc | openssl dgst -sha384 -binary | base64`
        assert!(out.contains(r#"href="/b.wasm" integrity="sha384-ywB1P0WjXou1oD1pmsZQBycsMqsO3tFjGotgWkP/W+2AhgcroefMI1i67KE0yCWn" as="fetch""#), "{out}");
        assert!(out.contains(r#"href="/a.js" crossorigin="anonymous" integrity="sha384-old""#));
        assert!(set_integrity(html, "/c.js", b"").is_err());
    }

    #[test]
    fn the_module_and_the_loader_start_with_the_page() {
        let html = "<html><head>\n<script type=\"module\">\nimport init from '/app-1.js';\nconst wasm = await init({ module_or_path: '/app-1_bg.wasm' });\n</script>\n<link rel=\"modulepreload\" href=\"/app-1.js\" crossorigin=\"anonymous\"><link rel=\"preload\" href=\"/app-1_bg.wasm\" crossorigin=\"anonymous\" as=\"fetch\" type=\"application/wasm\"></head></html>";
        let out = start_early(html, "app-1.js", "app-1_bg.wasm", "__wasm_split-2.js").unwrap();
        let early = out
            .find("compileStreaming(fetch('/app-1_bg.wasm', { priority: 'high' }))")
            .unwrap();
        assert!(early < out.find("type=\"module\"").unwrap(), "{out}");
        assert!(out.contains(
            "await init({ module_or_path: (await self.hearthModule) || '/app-1_bg.wasm' })"
        ));
        assert!(out.contains(
            "<link rel=\"modulepreload\" href=\"/__wasm_split-2.js\" crossorigin=\"anonymous\"><link rel=\"modulepreload\" href=\"/app-1.js\""
        ));
        assert_eq!(out.matches("/app-1_bg.wasm").count(), 2, "{out}");
        assert!(!out.contains("rel=\"preload\""), "{out}");
        // Output trunk no longer writes this way is refused, not passed on.
        assert!(start_early("<head></head>", "app-1.js", "app-1_bg.wasm", "l.js").is_err());
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }
}
