//! The file skills — `read_file`, `list_files`, `search_files` — and the
//! files handed to code runs. Paths are checked and resolved by
//! hearth-core before any handle is touched.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use futures::{FutureExt, StreamExt};
use hearth_core::builtin::code::encoding::{self, SNIFF_BYTES, Sniffed};
use hearth_core::builtin::code::files::{
    self, Entry, EntryKind, Hit, LIST_MAX_ENTRIES, ListArgs, ReadArgs, SEARCH_MAX_FILE_BYTES,
    SearchArgs,
};
use hearth_core::builtin::code::grant::{self, GrantInfo, RelPath, strip_data_mount};
use hearth_core::builtin::code::{MAX_RUN_FILE_BYTES, MAX_RUN_FILES};
use hearth_core::skill::source::SkillSource;
use hearth_core::util::display;
use hearth_core::{Registry, SkillDefinition, SkillError, SkillOutput, SourceKey, ToolCall};
use js_sys::ArrayBuffer;
use serde_json::json;

use super::FilesError;
use super::fs::{self as hfs, Node, Walked};
use super::grants::{self, Grant};
use crate::split::{enter, not_loaded, split_point};
use crate::storage::Db;

/// The most files one run may be handed, counting inside folders.
const MAX_RUN_FILE_COUNT: usize = 2000;
/// The most files one search reads.
const SEARCH_MAX_FILES: usize = 20_000;
/// How many file reads are in flight at once: the browser's file APIs
/// answer each call asynchronously, so one at a time leaves them idle.
const IN_FLIGHT: usize = 8;

fn skill_error(e: FilesError) -> SkillError {
    if e.needs_person() {
        SkillError::input_required(e.to_string())
    } else {
        SkillError::new(e.to_string())
    }
}

/// The source of the skills over granted files.
pub struct FileSkills {
    db: Rc<Db>,
}

impl FileSkills {
    pub fn new(db: Rc<Db>) -> FileSkills {
        FileSkills { db }
    }
}

impl SkillSource for FileSkills {
    fn key(&self) -> SourceKey {
        SourceKey::Files
    }

    fn definitions(&self, _registry: &Registry) -> Vec<SkillDefinition> {
        hearth_core::builtin::file_skills()
    }

    fn execute<'a>(
        &'a self,
        skill: &'a SkillDefinition,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<SkillOutput, SkillError>> {
        let (db, skill, call) = (self.db.clone(), skill.clone(), call.clone());
        let failed = || SkillError::new(not_loaded("reading files"));
        async move { enter(run_in_chunk(db, skill, call), failed).await }.boxed_local()
    }
}

// Reading granted files (paths, walking folders, sniffing text) is its own
// chunk, fetched with the first file skill call.
split_point!(
    files_run,
    preload warm_files,
    fn run_in_chunk(
        db: Rc<Db>,
        skill: SkillDefinition,
        call: ToolCall,
    ) -> LocalBoxFuture<'static, Result<SkillOutput, SkillError>> {
        Box::pin(async move { run(&db, &skill, &call).await })
    }
);

/// Runs a file skill's call.
pub async fn run(
    db: &Db,
    skill: &SkillDefinition,
    call: &ToolCall,
) -> Result<SkillOutput, SkillError> {
    match skill.id.as_str() {
        "read_file" => {
            let args: ReadArgs = files::parse_args(&call.arguments).map_err(SkillError::new)?;
            read_file(db, &args).await.map_err(skill_error)
        }
        "list_files" => {
            let args: ListArgs = files::parse_args(&call.arguments).map_err(SkillError::new)?;
            list_files(db, &args).await.map_err(skill_error)
        }
        "search_files" => {
            let args: SearchArgs = files::parse_args(&call.arguments).map_err(SkillError::new)?;
            search_files(db, &args).await.map_err(skill_error)
        }
        other => Err(SkillError::new(format!("'{other}' is not a file skill"))),
    }
}

/// A checked path, the grant it is in, and its handle.
struct Located {
    path: RelPath,
    node: Node,
}

async fn locate(grants: &[Grant], raw: &str) -> Result<Located, FilesError> {
    let path = RelPath::parse(strip_data_mount(raw))?;
    let infos: Vec<GrantInfo> = grants.iter().map(Grant::info).collect();
    let resolved = grant::resolve(&infos, &path)?;
    let grant = grants
        .iter()
        .find(|g| g.record.id == resolved.grant.id)
        .ok_or_else(|| FilesError::NotFound(path.to_string()))?;
    let root = grants::root(grant).await?;
    let node = hfs::resolve(root, &resolved.inner, &path).await?;
    Ok(Located { path, node })
}

async fn read_file(db: &Db, args: &ReadArgs) -> Result<SkillOutput, FilesError> {
    let grants = grants::list(db).await?;
    let located = locate(&grants, &args.path).await?;
    let Node::File(handle) = &located.node else {
        return Err(FilesError::IsDirectory(located.path.to_string()));
    };
    let path = &located.path;
    let file = hfs::file(handle, path).await?;
    let size = file.size() as u64;
    let head_len = size.min(SNIFF_BYTES as u64);
    let head = hfs::read(&file, 0, head_len, path).await?;
    let encoding = match encoding::sniff(&head, head_len == size) {
        Sniffed::Text(e) => e,
        Sniffed::Binary(kind) => {
            return Err(FilesError::Binary(files::binary_refusal(path, kind, size)));
        }
    };
    if args.offset > size {
        return Err(FilesError::Invalid(format!(
            "offset {} is past the end of '{path}', which has {size} bytes",
            args.offset
        )));
    }
    let end = args.offset.saturating_add(args.length()).min(size);
    let bytes = if args.offset == 0 && end == head_len {
        head
    } else {
        hfs::read(&file, args.offset, end, path).await?
    };
    let decoded = encoding::decode_range(&bytes, args.offset, size, encoding);
    let text = files::read_text(path, size, encoding, &decoded);
    let value = json!({
        "path": path.to_string(),
        "encoding": encoding.label(),
        "size": size,
        "start": decoded.start,
        "end": decoded.end,
        "text": decoded.text,
    });
    Ok(SkillOutput::text_and_json(text, value))
}

/// Lists `node` (at `path`) with sizes; returns the entries and whether
/// the listing stopped early.
async fn listing(
    node: &Node,
    path: &RelPath,
    max: usize,
) -> Result<(Vec<Entry>, bool), FilesError> {
    let (walked, truncated) = hfs::walk(node, path, max).await?;
    let sized: Vec<Result<(RelPath, Entry), FilesError>> = futures::stream::iter(walked)
        .map(|w| async move {
            let (kind, size) = match &w.node {
                Node::File(h) => (EntryKind::File, hfs::file(h, &w.path).await?.size() as u64),
                Node::Dir(_) => (EntryKind::Directory, 0),
            };
            Ok((
                w.path.clone(),
                Entry {
                    path: w.path.to_string(),
                    kind,
                    size,
                },
            ))
        })
        .buffered(IN_FLIGHT)
        .collect()
        .await;
    let mut entries = sized.into_iter().collect::<Result<Vec<_>, _>>()?;
    // Tree order: by names, segment by segment.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    // A folder's size is what its listed files hold.
    let sizes: Vec<(RelPath, u64)> = entries
        .iter()
        .filter(|(_, e)| e.kind == EntryKind::File)
        .map(|(p, e)| (p.clone(), e.size))
        .collect();
    let entries = entries
        .into_iter()
        .map(|(p, mut e)| {
            if e.kind == EntryKind::Directory {
                e.size = sizes
                    .iter()
                    .filter(|(f, _)| f.starts_with(&p))
                    .map(|(_, s)| s)
                    .sum();
            }
            e
        })
        .collect();
    Ok((entries, truncated))
}

async fn list_files(db: &Db, args: &ListArgs) -> Result<SkillOutput, FilesError> {
    let grants = grants::list(db).await?;
    let mut text = String::new();
    let mut all = Vec::new();
    let mut truncated = false;
    match &args.path {
        Some(raw) => {
            let located = locate(&grants, raw).await?;
            let (entries, cut) = listing(&located.node, &located.path, LIST_MAX_ENTRIES).await?;
            text.push_str(&files::listing_text(
                &located.path.to_string(),
                &entries,
                cut,
            ));
            truncated = cut;
            all = entries;
        }
        None => {
            if grants.is_empty() {
                return Err(FilesError::Resolve(grant::ResolveError::NoGrants));
            }
            let mut budget = LIST_MAX_ENTRIES;
            for g in &grants {
                let path = RelPath::parse(&g.record.name)?;
                let root = match grants::root(g).await {
                    Ok(root) => root,
                    Err(e) => {
                        text.push_str(&format!("{}: {e}\n", g.record.name));
                        continue;
                    }
                };
                let (mut entries, cut) = match &root {
                    Node::Dir(_) => listing(&root, &path, budget).await?,
                    Node::File(_) => listing(&root, &path, 1).await?,
                };
                if let Node::Dir(_) = root {
                    // The grant's own folder first.
                    let size = entries
                        .iter()
                        .filter(|e| e.kind == EntryKind::File)
                        .map(|e| e.size)
                        .sum();
                    entries.insert(
                        0,
                        Entry {
                            path: path.to_string(),
                            kind: EntryKind::Directory,
                            size,
                        },
                    );
                }
                budget = budget.saturating_sub(entries.len());
                truncated |= cut;
                text.push_str(&files::listing_text(&g.record.name, &entries, cut));
                text.push('\n');
                all.extend(entries);
                if budget == 0 {
                    truncated = true;
                    break;
                }
            }
        }
    }
    let value = json!({"entries": all, "truncated": truncated});
    Ok(SkillOutput::text_and_json(
        text.trim_end().to_string(),
        value,
    ))
}

async fn search_files(db: &Db, args: &SearchArgs) -> Result<SkillOutput, FilesError> {
    let grants = grants::list(db).await?;
    let max = args.max_results();
    let mut roots: Vec<(RelPath, Node)> = Vec::new();
    match &args.path {
        Some(raw) => {
            let located = locate(&grants, raw).await?;
            roots.push((located.path, located.node));
        }
        None => {
            if grants.is_empty() {
                return Err(FilesError::Resolve(grant::ResolveError::NoGrants));
            }
            for g in &grants {
                roots.push((RelPath::parse(&g.record.name)?, grants::root(g).await?));
            }
        }
    }
    let mut hits: Vec<Hit> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    let mut scanned = 0usize;
    let mut capped = false;
    for (path, node) in &roots {
        let (walked, cut) = hfs::walk(node, path, SEARCH_MAX_FILES).await?;
        if cut {
            skipped.push(format!(
                "{path}: more than {SEARCH_MAX_FILES} entries; the rest"
            ));
        }
        let files: Vec<Walked> = walked
            .into_iter()
            .filter(|w| matches!(w.node, Node::File(_)))
            .collect();
        let query = args.query.as_str();
        let case_sensitive = args.case_sensitive;
        let mut found = futures::stream::iter(files)
            .map(|w| async move { search_one(&w, query, case_sensitive, max + 1).await })
            .buffered(IN_FLIGHT);
        while let Some(one) = found.next().await {
            match one? {
                Searched::Text(path, lines) => {
                    scanned += 1;
                    for (line, text) in lines {
                        if hits.len() >= max {
                            capped = true;
                            break;
                        }
                        hits.push(Hit {
                            path: path.to_string(),
                            line,
                            text,
                        });
                    }
                }
                Searched::TooBig(note) => skipped.push(note),
                Searched::Binary => {}
            }
            if capped {
                break;
            }
        }
        if capped {
            break;
        }
    }
    let text = files::search_report(&args.query, &hits, scanned, &skipped, capped);
    let value = json!({"hits": hits, "scanned": scanned});
    Ok(SkillOutput::text_and_json(text, value))
}

enum Searched {
    Text(RelPath, Vec<(usize, String)>),
    TooBig(String),
    Binary,
}

async fn search_one(
    w: &Walked,
    query: &str,
    case_sensitive: bool,
    max: usize,
) -> Result<Searched, FilesError> {
    let Node::File(handle) = &w.node else {
        return Ok(Searched::Binary);
    };
    let file = hfs::file(handle, &w.path).await?;
    let size = file.size() as u64;
    if size > SEARCH_MAX_FILE_BYTES {
        return Ok(Searched::TooBig(format!(
            "{}: {}, over the {} search limit",
            w.path,
            display::bytes(size as f64),
            display::bytes(SEARCH_MAX_FILE_BYTES as f64)
        )));
    }
    let bytes = hfs::read(&file, 0, size, &w.path).await?;
    let encoding = match encoding::sniff(&bytes, true) {
        Sniffed::Text(e) => e,
        Sniffed::Binary(_) => return Ok(Searched::Binary),
    };
    let decoded = encoding::decode_range(&bytes, 0, size, encoding);
    Ok(Searched::Text(
        w.path.clone(),
        files::search_text(&decoded.text, query, case_sensitive, max),
    ))
}

/// A file handed to a run: where code sees it and its bytes.
pub struct RunFile {
    /// e.g. `/mnt/data/fixtures/data.csv`.
    pub path: String,
    pub bytes: ArrayBuffer,
}

/// The files named by a run's `files` argument, read for the sandbox:
/// each granted file, or every file below a granted folder, under
/// `/mnt/data/<path>`.
pub async fn files_for_run(db: &Db, paths: &[String]) -> Result<Vec<RunFile>, FilesError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    if paths.len() as u64 > MAX_RUN_FILES {
        return Err(FilesError::TooLarge(format!(
            "at most {MAX_RUN_FILES} paths can be handed to one run"
        )));
    }
    let grants = grants::list(db).await?;
    let mut chosen: Vec<Walked> = Vec::new();
    for raw in paths {
        let located = locate(&grants, raw).await?;
        let (walked, cut) = hfs::walk(&located.node, &located.path, MAX_RUN_FILE_COUNT).await?;
        if cut {
            return Err(FilesError::TooLarge(format!(
                "'{}' holds more than {MAX_RUN_FILE_COUNT} entries; hand the code a smaller folder",
                located.path
            )));
        }
        for w in walked {
            if matches!(w.node, Node::File(_)) && !chosen.iter().any(|c| c.path == w.path) {
                chosen.push(w);
            }
        }
        if chosen.len() > MAX_RUN_FILE_COUNT {
            return Err(FilesError::TooLarge(format!(
                "at most {MAX_RUN_FILE_COUNT} files can be handed to one run"
            )));
        }
    }
    let opened: Vec<Result<(RelPath, web_sys::File), FilesError>> = futures::stream::iter(chosen)
        .map(|w| async move {
            let Node::File(handle) = &w.node else {
                return Err(FilesError::IsDirectory(w.path.to_string()));
            };
            Ok((w.path.clone(), hfs::file(handle, &w.path).await?))
        })
        .buffered(IN_FLIGHT)
        .collect()
        .await;
    let opened = opened.into_iter().collect::<Result<Vec<_>, _>>()?;
    let total: u64 = opened.iter().map(|(_, f)| f.size() as u64).sum();
    if total > MAX_RUN_FILE_BYTES {
        return Err(FilesError::TooLarge(format!(
            "the files handed to one run may total at most {}; these hold {}",
            display::bytes(MAX_RUN_FILE_BYTES as f64),
            display::bytes(total as f64)
        )));
    }
    let read: Vec<Result<RunFile, FilesError>> = futures::stream::iter(opened)
        .map(|(path, file)| async move {
            Ok(RunFile {
                path: path.mount_path(),
                bytes: hfs::read_buffer(&file, &path).await?,
            })
        })
        .buffered(IN_FLIGHT)
        .collect()
        .await;
    let out = read.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(out)
}
