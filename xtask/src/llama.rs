//! Hearth's own build of llama.cpp: the engine of the model in the tab,
//! and the native tools the tests and the bench compare it with.
//!
//! The source is llama.cpp as PyPI's `llama-cpp-python` sdist carries it
//! (`vendor/llama.cpp`), fetched with pip at a pinned version: a registry
//! package, never committed. Everything built from it is kept outside the
//! repository, under `~/.cache/hearth/llama/<version>/` (or
//! `$HEARTH_CACHE_DIR`), each part in a folder named by what it is built
//! from, so a second run skips what is in place and a change of flags,
//! source or engine rebuilds just that part:
//!
//! - `wasm-libs-<key>/`: llama.cpp's libraries (ggml, llama, llama-common)
//!   compiled by Debian's Emscripten. Configured with the processor named
//!   `wasm`, so ggml adds its WebAssembly SIMD kernels (`-msimd128` on its
//!   CPU code, and `arch/wasm/quants.c`): Emscripten's CMake file calls the
//!   processor `x86` otherwise, and ggml then builds only its scalar
//!   kernels. The build fails unless configure said "Wasm detected". With
//!   32-bit memory (llama.cpp defaults to 64-bit in wasm builds, which
//!   costs speed), threads (`-pthread`, no OpenMP) and C++ exceptions
//!   (`-fexceptions`: `-fwasm-exceptions` is broken in Emscripten 3.1.6).
//!   One line of llama.cpp's WebAssembly code is corrected first (see
//!   [`fix_wasm_rounding`]): its quantization of activations to 8 bits
//!   truncates where every other build rounds, which shifts the model's
//!   answers.
//!   They are configured with llamafile's hook on, and llamafile's own
//!   object taken out of the CPU library again: it has no WebAssembly code.
//! - `engine-<key>/`: Hearth's engine (`src/tabmodel/llama/hearth-llama.cpp`)
//!   and its batched matrix kernel (`gemm-wasm.cpp`, ggml's
//!   `llamafile_sgemm`; first checked in Node against ggml's own dot
//!   products by `gemm-wasm-check.cpp`)
//!   linked with those libraries into `hearth-llama.{js,wasm}` and its
//!   threads' `hearth-llama.worker.js`, checked for the SIMD dot product
//!   and 32-bit shared memory, then copied into `public/llama/`
//!   (gitignored) for the app's build.
//! - `native-<key>/`: `llama-quantize`, `llama-completion` and
//!   `llama-bench` built natively from the same source, for the test
//!   models, the token-for-token test and the bench's anchor.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::setup;
use crate::util::{Failure, capture, repo_root, run, run_tee, step};

/// The registry package whose source distribution holds llama.cpp.
pub const SDIST: &str = "llama-cpp-python==0.3.36";
/// Its version, which names the cache folder.
pub const VERSION: &str = "0.3.36";
/// The folder the sdist unpacks to.
const SDIST_DIR: &str = "llama_cpp_python-0.3.36";

/// Hearth's engine, relative to the repository.
pub const ENGINE_SOURCE: &str = "src/tabmodel/llama/hearth-llama.cpp";
/// Where the app serves the engine from (gitignored).
pub const PUBLIC_DIR: &str = "public/llama";
/// The engine's files: the script, the module, and the script each of its
/// threads starts with.
pub const ENGINE_FILES: [&str; 3] = [
    "hearth-llama.js",
    "hearth-llama.wasm",
    "hearth-llama.worker.js",
];

/// The Debian packages the build needs: Emscripten (3.1.6 in bookworm),
/// CMake, and wabt, whose `wasm-objdump` reads the built module.
const APT_PACKAGES: [(&str, &str); 5] = [
    ("emcc", "emscripten"),
    ("cmake", "cmake"),
    ("wasm-objdump", "wabt"),
    ("make", "make"),
    ("g++", "g++"),
];

/// llama.cpp's CMake options for the tab. Each is explained in the module
/// documentation; they are part of the cache key.
const WASM_CMAKE: [&str; 19] = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DEMSCRIPTEN_SYSTEM_PROCESSOR=wasm",
    "-DLLAMA_WASM_MEM64=OFF",
    "-DGGML_OPENMP=OFF",
    "-DGGML_NATIVE=OFF",
    // ggml then hands batched products to `llamafile_sgemm` first (and
    // falls back to its own loop when that returns false). llamafile's
    // tinyBLAS has no WebAssembly code, so its object is taken out of the
    // library again (see [`LLAMAFILE_OBJECT`]) and the engine links
    // Hearth's own kernel under that name ([`GEMM_SOURCE`]).
    "-DGGML_LLAMAFILE=ON",
    "-DGGML_WASM_SINGLE_FILE=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_COMMON=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=OFF",
    "-DLLAMA_BUILD_SERVER=OFF",
    "-DLLAMA_BUILD_HTML=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    // No global -msimd128: ggml adds it to its CPU backend itself, and the
    // rest (the tokenizer, templates, sampling) gains nothing from it.
    "-DCMAKE_C_FLAGS=-pthread -fexceptions",
    "-DCMAKE_CXX_FLAGS=-pthread -fexceptions",
    "-DGGML_CCACHE=OFF",
];

/// llamafile's tinyBLAS object inside `libggml-cpu.a`: on wasm it only
/// says "not handled", and the engine brings its own `llamafile_sgemm`.
const LLAMAFILE_OBJECT: &str = "sgemm.cpp.o";
/// Names the removal in the libraries' cache key.
const LIB_EDITS: &str = "llamafile sgemm object removed from libggml-cpu.a";

/// Hearth's batched matrix kernel for WebAssembly SIMD, relative to the
/// repository: ggml's `llamafile_sgemm` hook, linked into the engine.
pub const GEMM_SOURCE: &str = "src/tabmodel/llama/gemm-wasm.cpp";

/// The kernel's check against ggml's dot products, run at build time.
pub const GEMM_CHECK: &str = "src/tabmodel/llama/gemm-wasm-check.cpp";

/// How the kernel is compiled (part of the engine's cache key).
const GEMM_FLAGS: [&str; 5] = ["-O3", "-std=c++17", "-pthread", "-fexceptions", "-msimd128"];

/// The libraries the engine links, in link order, under the build folder.
const WASM_LIBS: [&str; 6] = [
    "src/libllama.a",
    "common/libllama-common.a",
    "common/libllama-common-base.a",
    "ggml/src/libggml.a",
    "ggml/src/libggml-cpu.a",
    "ggml/src/libggml-base.a",
];

/// What the engine exports to the worker.
const EXPORTS: [&str; 13] = [
    "_hl_load",
    "_hl_info",
    "_hl_set_threads",
    "_hl_start",
    "_hl_prompt",
    "_hl_next",
    "_hl_finish",
    "_hl_bench",
    "_hl_profile",
    "_hl_error",
    "_hl_unload",
    "_malloc",
    "_free",
];

/// How the engine is compiled and linked (part of its cache key).
fn engine_flags() -> Vec<String> {
    let mut flags: Vec<String> = [
        "-O3",
        "-pthread",
        "-fexceptions",
        // A classic script defining createHearthLlama(); the worker passes
        // the pool size (Module.hearthPool) when it calls it. The pool is
        // fixed: every thread llama.cpp starts comes from it, since a
        // thread cannot be created while the worker's own thread waits in
        // the engine.
        "-sMODULARIZE=1",
        "-sEXPORT_NAME=createHearthLlama",
        "-sENVIRONMENT=worker",
        "-sPTHREAD_POOL_SIZE=Module.hearthPool",
        "-sPTHREAD_POOL_SIZE_STRICT=2",
        "-sALLOW_MEMORY_GROWTH=1",
        "-sINITIAL_MEMORY=64MB",
        "-sMAXIMUM_MEMORY=4GB",
        "-sEXIT_RUNTIME=0",
        // The model file is a Blob, read in place through WORKERFS.
        "-sFORCE_FILESYSTEM=1",
        "-lworkerfs.js",
        "-sEXPORTED_RUNTIME_METHODS=cwrap,UTF8ToString,FS",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    flags.push(format!("-sEXPORTED_FUNCTIONS={}", EXPORTS.join(",")));
    flags
}

/// The cache folder for this version of llama.cpp.
pub fn cache_dir() -> PathBuf {
    crate::util::cache_base().join("llama").join(VERSION)
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Emscripten, CMake, wabt and a native compiler, through apt when missing.
pub fn toolchain() -> Result<(), Failure> {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .filter(|(program, _)| !has(program))
        .map(|(_, package)| *package)
        .collect();
    if missing.is_empty() {
        println!("  emscripten, cmake, wabt, make and g++ already installed");
        return Ok(());
    }
    setup::apt_install(&missing)
}

/// The environment Debian's Emscripten needs: its JavaScript tools load
/// acorn from Debian's Node modules.
fn emscripten_env(cmd: &mut Command) -> &mut Command {
    cmd.env("NODE_PATH", "/usr/share/nodejs")
}

/// The project's tool PATH without its npm binaries: Debian's Emscripten
/// runs `wasm-opt` by name, and npm's binaryen (the app's wasm-opt) is
/// binaryen compiled to JavaScript: on the engine it ran for over ten
/// minutes without finishing, where Debian's native binaryen (108, the
/// version this Emscripten is made for) runs several times faster.
fn emscripten_path() -> String {
    let npm = repo_root().join("node_modules/.bin");
    crate::util::tool_path()
        .split(':')
        .filter(|part| Path::new(part) != npm)
        .collect::<Vec<_>>()
        .join(":")
}

/// A low-priority command running one of Emscripten's tools with
/// [`emscripten_path`] and [`emscripten_env`]. The PATH is given through
/// `env`, since the runners set their own for the command itself.
fn emscripten(program: &str) -> Command {
    let mut cmd = nice("env");
    cmd.arg(format!("PATH={}", emscripten_path())).arg(program);
    emscripten_env(&mut cmd);
    cmd
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    hex(&h.finalize())[..16].to_string()
}

fn mkdir(dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::new(format!("cannot create {}: {e}", dir.display())))
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::new(format!("cannot write {}: {e}", path.display())))
}

/// The file of llama.cpp with its WebAssembly SIMD kernels.
const WASM_QUANTS: &str = "ggml/src/ggml-cpu/arch/wasm/quants.c";
/// How its two activation quantizers (to Q8_0 and Q8_1) turn a scaled
/// value into an integer: truncation toward zero.
const TRUNCATES: &str = "wasm_i32x4_trunc_sat_f32x4(v)";
/// The same, rounded to the nearest integer first, as llama.cpp's
/// reference quantizer (`roundf`) and its x86 and Arm kernels do.
const ROUNDS: &str = "wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(v))";
/// Names the correction in the libraries' cache key.
const SOURCE_FIXES: &str = "q8_0/q8_1 activations rounded to nearest";

/// Corrects llama.cpp's WebAssembly quantizers of activations: they
/// truncate each scaled value toward zero, so every 8-bit activation is
/// biased toward zero and the models' logits drift (measured on the test
/// model: the first token after "The capital of France is" had logits 1.7
/// higher than native llama.cpp's, and the greedy answer changed; ggml's
/// own test-quantize-fns fails q8_0 on the unfixed build). Rounding first
/// makes them match the reference. Q4_0, Q4_1, Q5_x and Q8_0 models
/// quantize their activations this way; the K-quants use Q8_K, which
/// already rounds. Refuses a source where the two lines are not found as
/// expected, so a new llama.cpp is looked at again rather than built
/// wrong.
pub fn fix_wasm_rounding(text: &str) -> Result<String, Failure> {
    let truncating = text.matches(TRUNCATES).count();
    let rounding = text.matches(ROUNDS).count();
    match (truncating, rounding) {
        (2, 0) => Ok(text.replace(TRUNCATES, ROUNDS)),
        (0, 2) => Ok(text.to_string()),
        _ => Err(Failure::new(format!(
            "{WASM_QUANTS}: expected the Q8_0 and Q8_1 quantizers to truncate (`{TRUNCATES}` twice); found {truncating} truncating and {rounding} rounding. \
             Check whether this llama.cpp still needs the correction."
        ))),
    }
}

/// The llama.cpp source tree: the sdist downloaded with pip and unpacked
/// once into the cache, with [`fix_wasm_rounding`] applied.
pub fn source() -> Result<PathBuf, Failure> {
    let dir = cache_dir().join("source");
    let tree = dir.join(SDIST_DIR).join("vendor/llama.cpp");
    let done = dir.join(".unpacked");
    if done.exists() && tree.join("CMakeLists.txt").exists() {
        println!("  llama.cpp source already in {}", tree.display());
        return Ok(tree);
    }
    let download = dir.join("download");
    mkdir(&download)?;
    // --no-binary for this package only: PyPI has wheels for some
    // platforms, and the source is what is wanted. Not `:all:`, which
    // would try to build the sdist's build tools from source too.
    run(Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--no-binary",
            "llama-cpp-python",
            "--dest",
        ])
        .arg(&download)
        .arg(SDIST))?;
    let sdist = download.join(format!("{SDIST_DIR}.tar.gz"));
    if !sdist.exists() {
        return Err(Failure::new(format!(
            "pip left no {} in {}",
            sdist.display(),
            download.display()
        )));
    }
    run(Command::new("tar")
        .arg("xzf")
        .arg(&sdist)
        .arg("-C")
        .arg(&dir))?;
    let quants = tree.join(WASM_QUANTS);
    let text = std::fs::read_to_string(&quants).map_err(|e| {
        Failure::new(format!(
            "{}: {e}: not the llama.cpp this build expects",
            quants.display()
        ))
    })?;
    write(&quants, &fix_wasm_rounding(&text)?)?;
    write(&done, SDIST)?;
    let _ = std::fs::remove_dir_all(&download);
    Ok(tree)
}

/// How many jobs a build runs: the machine's cores.
fn jobs() -> String {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .to_string()
}

/// Builds a command that runs at a lower priority, so a long compile
/// leaves the machine usable.
fn nice(program: &str) -> Command {
    if has("nice") {
        let mut c = Command::new("nice");
        c.args(["-n", "10", program]);
        c
    } else {
        Command::new(program)
    }
}

/// llama.cpp's libraries compiled for the tab; returns the build folder.
pub fn wasm_libs(src: &Path) -> Result<PathBuf, Failure> {
    let emcc = capture(emscripten_env(Command::new("emcc").arg("--version")))?;
    let emcc = emcc.lines().next().unwrap_or_default().to_string();
    let flags = WASM_CMAKE.join("\n");
    let build = cache_dir().join(format!(
        "wasm-libs-{}",
        key(&[
            SDIST.as_bytes(),
            SOURCE_FIXES.as_bytes(),
            LIB_EDITS.as_bytes(),
            flags.as_bytes(),
            emcc.as_bytes()
        ])
    ));
    let stamp = build.join(".built");
    if stamp.exists() && WASM_LIBS.iter().all(|l| build.join(l).exists()) {
        println!(
            "  llama.cpp's wasm libraries already in {}",
            build.display()
        );
        return Ok(build);
    }
    mkdir(&build)?;
    let mut configure = emscripten("emcmake");
    configure
        .args(["cmake", "-S"])
        .arg(src)
        .arg("-B")
        .arg(&build)
        .args(WASM_CMAKE);
    let (ok, log) = run_tee(&mut configure)?;
    write(&build.join("configure.log"), &log)?;
    if !ok {
        return Err(Failure::new(
            "configuring llama.cpp for wasm failed (see above)",
        ));
    }
    check_configure_log(&log)?;
    run(emscripten("cmake").arg("--build").arg(&build).args([
        "--target",
        "llama",
        "llama-common",
        "-j",
        &jobs(),
    ]))?;
    remove_llamafile(&build.join("ggml/src/libggml-cpu.a"))?;
    write(&stamp, &emcc)?;
    Ok(build)
}

/// Takes llamafile's sgemm object out of ggml's CPU library, so the
/// engine's own `llamafile_sgemm` is the only one. Fails if the library
/// has no such member: the hook would then not be where this build
/// expects it.
fn remove_llamafile(lib: &Path) -> Result<(), Failure> {
    let members = capture(emscripten("emar").arg("t").arg(lib))?;
    check_llamafile_member(&members)
        .map_err(|e| Failure::new(format!("{}: {}", lib.display(), e.0)))?;
    run(emscripten("emar").arg("d").arg(lib).arg(LLAMAFILE_OBJECT))
}

/// The archive's member list (`ar t`) must hold llamafile's object once.
pub fn check_llamafile_member(members: &str) -> Result<(), Failure> {
    match members
        .lines()
        .filter(|m| m.trim() == LLAMAFILE_OBJECT)
        .count()
    {
        1 => Ok(()),
        0 => Err(Failure::new(format!(
            "no {LLAMAFILE_OBJECT} in ggml's CPU library: was llama.cpp configured with GGML_LLAMAFILE=ON?"
        ))),
        n => Err(Failure::new(format!(
            "{n} members named {LLAMAFILE_OBJECT} in ggml's CPU library: cannot tell which to remove"
        ))),
    }
}

/// The configure log must show ggml's WebAssembly kernels chosen: without
/// "Wasm detected" every quantized product runs the scalar kernel.
pub fn check_configure_log(log: &str) -> Result<(), Failure> {
    if log.contains("Wasm detected") {
        Ok(())
    } else {
        Err(Failure::new(
            "llama.cpp's configure did not say \"Wasm detected\": ggml would build only its \
             scalar kernels (is -DEMSCRIPTEN_SYSTEM_PROCESSOR=wasm still passed?)",
        ))
    }
}

/// Hearth's engine linked for the tab; returns the folder with its files.
pub fn engine() -> Result<PathBuf, Failure> {
    let root = repo_root();
    let src = step("llama.cpp source (PyPI sdist)", source)?;
    step("emscripten, cmake and wabt", toolchain)?;
    let libs = step(
        "llama.cpp's libraries for wasm (slow the first time)",
        || wasm_libs(&src),
    )?;
    let shim = std::fs::read(root.join(ENGINE_SOURCE))
        .map_err(|e| Failure::new(format!("cannot read {ENGINE_SOURCE}: {e}")))?;
    let gemm = std::fs::read(root.join(GEMM_SOURCE))
        .map_err(|e| Failure::new(format!("cannot read {GEMM_SOURCE}: {e}")))?;
    let gemm_check = std::fs::read(root.join(GEMM_CHECK))
        .map_err(|e| Failure::new(format!("cannot read {GEMM_CHECK}: {e}")))?;
    let flags = engine_flags();
    let libs_stamp = std::fs::read(libs.join(".built")).unwrap_or_default();
    let out = cache_dir().join(format!(
        "engine-{}",
        key(&[
            &shim,
            &gemm,
            &gemm_check,
            GEMM_FLAGS.join("\n").as_bytes(),
            flags.join("\n").as_bytes(),
            libs.to_string_lossy().as_bytes(),
            &libs_stamp
        ])
    ));
    step("Hearth's engine (src/tabmodel/llama/)", || {
        if ENGINE_FILES.iter().all(|f| out.join(f).exists()) && out.join(".checked").exists() {
            println!("  already built in {}", out.display());
            return Ok(());
        }
        mkdir(&out)?;
        let object = out.join("hearth-llama.o");
        run(emscripten("em++")
            .args(["-O3", "-std=c++17", "-pthread", "-fexceptions"])
            .arg(format!("-I{}", src.join("include").display()))
            .arg(format!("-I{}", src.join("ggml/include").display()))
            .arg(format!("-I{}", src.join("common").display()))
            .arg(format!("-I{}", src.join("vendor").display()))
            .arg("-c")
            .arg(root.join(ENGINE_SOURCE))
            .arg("-o")
            .arg(&object))?;
        // The kernel sees ggml's CPU internals (its compute parameters:
        // which thread this is, of how many) and is built with SIMD.
        let gemm_object = out.join("gemm-wasm.o");
        run(emscripten("em++")
            .args(GEMM_FLAGS)
            .arg(format!("-I{}", src.join("ggml/include").display()))
            .arg(format!("-I{}", src.join("ggml/src").display()))
            .arg(format!("-I{}", src.join("ggml/src/ggml-cpu").display()))
            .arg("-c")
            .arg(root.join(GEMM_SOURCE))
            .arg("-o")
            .arg(&gemm_object))?;
        check_gemm(&src, &libs, &out, &gemm_object)?;
        let mut link = emscripten("em++");
        link.arg(&object).arg(&gemm_object);
        for lib in WASM_LIBS {
            link.arg(libs.join(lib));
        }
        link.args(&flags).arg("-o").arg(out.join("hearth-llama.js"));
        run(&mut link)?;
        let report = check_module(&out.join("hearth-llama.wasm"))?;
        println!("  {report}");
        write(&out.join(".checked"), &report.to_string())
    })?;
    Ok(out)
}

/// Runs the kernel's check ([`GEMM_CHECK`]) in Node: the kernel against
/// ggml's own WebAssembly dot products, from the libraries just built.
/// The engine is not linked unless they agree.
fn check_gemm(src: &Path, libs: &Path, out: &Path, gemm_object: &Path) -> Result<(), Failure> {
    let root = repo_root();
    let object = out.join("gemm-wasm-check.o");
    run(emscripten("em++")
        .args(GEMM_FLAGS)
        .arg(format!("-I{}", src.join("ggml/include").display()))
        .arg(format!("-I{}", src.join("ggml/src").display()))
        .arg(format!("-I{}", src.join("ggml/src/ggml-cpu").display()))
        .arg("-c")
        .arg(root.join(GEMM_CHECK))
        .arg("-o")
        .arg(&object))?;
    let script = out.join("gemm-wasm-check.js");
    run(emscripten("em++")
        .args(["-O3", "-pthread", "-fexceptions"])
        .arg(&object)
        .arg(gemm_object)
        .arg(libs.join("ggml/src/libggml-cpu.a"))
        .arg(libs.join("ggml/src/libggml-base.a"))
        .args(["-sENVIRONMENT=node", "-sALLOW_MEMORY_GROWTH=1", "-o"])
        .arg(&script))?;
    run(Command::new("node")
        .arg("--no-experimental-fetch")
        .arg(&script))
}

/// What the SIMD check found in a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleCheck {
    pub dot_products: usize,
    pub memory: String,
}

impl std::fmt::Display for ModuleCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} i32x4.dot_i16x8_s instructions; memory: {}",
            self.dot_products, self.memory
        )
    }
}

/// Reads `wasm-objdump`'s output for a module: how many SIMD dot products
/// its code has, and its memory import, which must be shared (threads)
/// and 32-bit (no `i64` index).
pub fn judge_module(disassembly: &str, imports: &str) -> Result<ModuleCheck, Failure> {
    let dot_products = disassembly
        .lines()
        .filter(|l| l.contains("i32x4.dot_i16x8_s"))
        .count();
    let memory = imports
        .lines()
        .find(|l| l.contains("memory["))
        .map(|l| l.trim().to_string())
        .unwrap_or_default();
    let check = ModuleCheck {
        dot_products,
        memory: memory.clone(),
    };
    if dot_products == 0 {
        return Err(Failure::new(format!(
            "the engine has no i32x4.dot_i16x8_s: llama.cpp's WebAssembly SIMD kernels are \
             missing, so every quantized product would run the scalar kernel ({check})"
        )));
    }
    if memory.is_empty() {
        return Err(Failure::new("the engine imports no memory"));
    }
    if !memory.contains("shared") {
        return Err(Failure::new(format!(
            "the engine's memory is not shared, so it has no threads: {memory}"
        )));
    }
    if memory.contains("i64") || memory.contains("memory64") {
        return Err(Failure::new(format!(
            "the engine uses 64-bit memory, which is slower: {memory}"
        )));
    }
    Ok(check)
}

/// The SIMD check on a built module (with wabt's `wasm-objdump`).
pub fn check_module(wasm: &Path) -> Result<ModuleCheck, Failure> {
    let disassembly = capture(Command::new("wasm-objdump").arg("-d").arg(wasm))?;
    let imports = capture(
        Command::new("wasm-objdump")
            .args(["-x", "-j", "Import"])
            .arg(wasm),
    )?;
    judge_module(&disassembly, &imports)
}

/// Builds the engine if needed and copies it into `public/llama/`,
/// skipping files already there with the same contents.
pub fn install_engine() -> Result<(), Failure> {
    let built = engine()?;
    let dir = repo_root().join(PUBLIC_DIR);
    mkdir(&dir)?;
    let mut copied = 0;
    for name in ENGINE_FILES {
        let from = built.join(name);
        let to = dir.join(name);
        let same = match (std::fs::read(&from), std::fs::read(&to)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            continue;
        }
        std::fs::copy(&from, &to).map_err(|e| {
            Failure::new(format!(
                "cannot copy {} to {}: {e}",
                from.display(),
                to.display()
            ))
        })?;
        copied += 1;
    }
    println!(
        "  {copied} of {} engine files copied into {PUBLIC_DIR}/",
        ENGINE_FILES.len()
    );
    Ok(())
}

/// The SIMD check of the test command, on the module the app ships.
pub fn check_shipped() -> Result<(), Failure> {
    let wasm = repo_root().join(PUBLIC_DIR).join("hearth-llama.wasm");
    if !wasm.exists() {
        return Err(Failure::new(format!(
            "{} is missing: the build did not install the engine",
            wasm.display()
        )));
    }
    let report = check_module(&wasm)?;
    println!("  {report}");
    Ok(())
}

/// The native tools built from the same source.
pub struct NativeTools {
    pub quantize: PathBuf,
    pub completion: PathBuf,
    pub bench: PathBuf,
}

const NATIVE_CMAKE: [&str; 11] = [
    "-DCMAKE_BUILD_TYPE=Release",
    // The machine's own kernels: the bench compares against native
    // llama.cpp at its best here.
    "-DGGML_NATIVE=ON",
    "-DGGML_OPENMP=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DGGML_CCACHE=OFF",
];

/// Where the native tools are (built or not): the folder is named by the
/// source and the options, so the tests can find them without building.
pub fn native_paths() -> (PathBuf, NativeTools) {
    let build = cache_dir().join(format!(
        "native-{}",
        key(&[SDIST.as_bytes(), NATIVE_CMAKE.join("\n").as_bytes()])
    ));
    let tools = NativeTools {
        quantize: build.join("bin/llama-quantize"),
        completion: build.join("bin/llama-completion"),
        bench: build.join("bin/llama-bench"),
    };
    (build, tools)
}

/// `llama-quantize`, `llama-completion` and `llama-bench`, built natively.
pub fn native_tools() -> Result<NativeTools, Failure> {
    let src = step("llama.cpp source (PyPI sdist)", source)?;
    step("emscripten, cmake and wabt", toolchain)?;
    let (build, tools) = native_paths();
    step("native llama.cpp tools (slow the first time)", || {
        let stamp = build.join(".built");
        if stamp.exists()
            && [&tools.quantize, &tools.completion, &tools.bench]
                .iter()
                .all(|p| p.exists())
        {
            println!("  already built in {}", build.display());
            return Ok(());
        }
        mkdir(&build)?;
        run(nice("cmake")
            .arg("-S")
            .arg(&src)
            .arg("-B")
            .arg(&build)
            .args(NATIVE_CMAKE))?;
        run(nice("cmake").arg("--build").arg(&build).args([
            "--target",
            "llama-quantize",
            "llama-completion",
            "llama-bench",
            "-j",
            &jobs(),
        ]))?;
        write(&stamp, SDIST)
    })?;
    Ok(tools)
}

/// The quantizations the test model is converted to: Q4_0 (what the tests
/// run), Q8_0, and a K-quant for the bench.
pub const TEST_QUANTS: [&str; 3] = ["Q4_0", "Q8_0", "Q4_K_M"];

/// The test model converted to `quant`, in `.test-fixtures/models/`.
pub fn test_model_path(quant: &str) -> PathBuf {
    setup::test_model_path().with_file_name(format!("SmolLM2-135M-Instruct.{quant}.gguf"))
}

/// Converts the test model (Q4_1, which the package ships) to each of
/// [`TEST_QUANTS`] with llama.cpp's own quantize tool, skipping files
/// already converted by this version.
pub fn test_models() -> Result<Vec<PathBuf>, Failure> {
    let original = setup::test_model()?;
    let tools = native_tools()?;
    let mut out = Vec::new();
    for quant in TEST_QUANTS {
        let path = test_model_path(quant);
        let stamp = path.with_extension("gguf.by");
        let by = format!("{SDIST} {}", setup::TEST_MODEL_SHA256);
        if path.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == by) {
            println!("  {} already converted", path.display());
            out.push(path);
            continue;
        }
        let partial = path.with_extension("gguf.part");
        // The file is Q4_1 already: converting it again needs the flag.
        run(Command::new(&tools.quantize)
            .arg("--allow-requantize")
            .arg(&original)
            .arg(&partial)
            .arg(quant))?;
        std::fs::rename(&partial, &path)
            .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
        write(&stamp, &by)?;
        out.push(path);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configure_must_choose_the_wasm_kernels() {
        assert!(check_configure_log("-- CMAKE_SYSTEM_PROCESSOR: wasm\n-- Wasm detected\n").is_ok());
        let e = check_configure_log("-- CMAKE_SYSTEM_PROCESSOR: x86\n").unwrap_err();
        assert!(e.0.contains("Wasm detected"), "{e}");
    }

    #[test]
    fn the_module_check_wants_simd_dot_products_and_32_bit_shared_memory() {
        let code =
            "  0012a0: fd ba 01 | i32x4.dot_i16x8_s\n  0012a3: fd ba 01 | i32x4.dot_i16x8_s\n";
        let shared = " - memory[0] pages: initial=1024 max=65536 shared <- a.a\n";
        let ok = judge_module(code, shared).unwrap();
        assert_eq!(ok.dot_products, 2);
        assert!(ok.to_string().starts_with("2 i32x4.dot_i16x8_s"));

        let scalar = judge_module("  0012a0: 6a | i32.add\n", shared).unwrap_err();
        assert!(scalar.0.contains("no i32x4.dot_i16x8_s"), "{scalar}");
        let unshared =
            judge_module(code, " - memory[0] pages: initial=1024 max=65536 <- a.a\n").unwrap_err();
        assert!(unshared.0.contains("not shared"), "{unshared}");
        let wide = judge_module(
            code,
            " - memory[0] pages: initial=1024 max=65536 shared i64 <- a.a\n",
        )
        .unwrap_err();
        assert!(wide.0.contains("64-bit"), "{wide}");
        assert!(judge_module(code, "").is_err());
    }

    #[test]
    fn the_wasm_quantizers_are_made_to_round_once() {
        let upstream = "a\n    const v128_t vi = wasm_i32x4_trunc_sat_f32x4(v);\nb\n    const v128_t vi = wasm_i32x4_trunc_sat_f32x4(v);\nc\n    wasm_i32x4_trunc_sat_f32x4(q0);\n";
        let fixed = fix_wasm_rounding(upstream).unwrap();
        assert_eq!(fixed.matches(ROUNDS).count(), 2);
        assert_eq!(fixed.matches(TRUNCATES).count(), 0);
        // Q8_K's own rounding is left alone.
        assert!(fixed.contains("wasm_i32x4_trunc_sat_f32x4(q0);"));
        // Applying it again changes nothing.
        assert_eq!(fix_wasm_rounding(&fixed).unwrap(), fixed);
        // A source that changed shape is refused.
        let once = "wasm_i32x4_trunc_sat_f32x4(v);";
        assert!(
            fix_wasm_rounding(once)
                .unwrap_err()
                .0
                .contains("found 1 truncating")
        );
        assert!(fix_wasm_rounding("").is_err());
    }

    #[test]
    fn llamafiles_object_must_be_in_the_cpu_library_once() {
        let listing = "ggml-cpu.c.o\nggml-cpu.cpp.o\nsgemm.cpp.o\nquants.c.o\n";
        assert!(check_llamafile_member(listing).is_ok());
        let missing = check_llamafile_member("ggml-cpu.c.o\nquants.c.o\n").unwrap_err();
        assert!(missing.0.contains("GGML_LLAMAFILE=ON"), "{missing}");
        let twice = check_llamafile_member("sgemm.cpp.o\nsgemm.cpp.o\n").unwrap_err();
        assert!(twice.0.contains("2 members"), "{twice}");
    }

    #[test]
    fn the_cache_key_changes_with_any_part() {
        let a = key(&[b"one", b"two"]);
        assert_eq!(a, key(&[b"one", b"two"]));
        assert_ne!(a, key(&[b"onet", b"wo"]));
        assert_ne!(a, key(&[b"one", b"two", b""]));
        assert_eq!(a.len(), 16);
    }
}
