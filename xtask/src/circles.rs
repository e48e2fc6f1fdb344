//! The check that no crate's modules import each other in a circle.
//!
//! Each crate's module tree is read from its root file (`mod x;` finds
//! `x.rs` or `x/mod.rs`, `#[path]` is honoured, inline `mod x { … }` blocks
//! are modules too). Every path that starts with `crate::`, `super::` or
//! `self::` — in `use` items, in code, and in the tokens of macro calls —
//! is resolved to the module it names (following `use` re-exports, so
//! `crate::Thing` re-exported from `lib.rs` counts as its real home).
//!
//! An edge between two modules is lifted to the level where their paths
//! part: `a::x::f` naming `b::y::T` is the edge `a → b` among the children
//! of the crate root, and `net::error` naming `net::guard` is `error →
//! guard` among the children of `net`. A module naming its own ancestor or
//! descendant is structure, not a dependency, and is left out. Within each
//! level the strongly connected components are the circles; each is
//! printed as paths `a → b → a` with one `file:line` per edge.
//!
//! Code under `#[cfg(test)]` (test modules, test-only items) is left out:
//! tests may reach anywhere.
//!
//! Crates listed in [`LAYERS`] also keep their top-level modules in
//! layers: each module names only modules of a lower layer. [`INNER_LAYERS`]
//! does the same for the children of a module deeper down (the app's
//! places under `views`), and [`APART`] names top-level modules that never
//! name certain others (the app's `shared` never names a place).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use crate::util::{Failure, repo_root};

/// Every crate of the workspace, by its root file(s): a library and a
/// binary of one package are separate crates.
pub const CRATES: [(&str, &str); 13] = [
    ("hearth-base", "crates/base/src/lib.rs"),
    ("hearth-markdown", "crates/markdown/src/lib.rs"),
    ("hearth-mcp", "crates/mcp/src/lib.rs"),
    ("hearth-agent-skills", "crates/agent-skills/src/lib.rs"),
    ("hearth-core", "crates/core/src/lib.rs"),
    ("hearth-sync", "crates/sync/src/lib.rs"),
    ("hearth-knowledge", "crates/knowledge/src/lib.rs"),
    ("hearth-proxy", "crates/proxy/src/main.rs"),
    ("hearth-testkit (lib)", "crates/testkit/src/lib.rs"),
    ("hearth-testkit (bin)", "crates/testkit/src/main.rs"),
    ("hearth (app lib)", "src/lib.rs"),
    ("hearth (app bin)", "src/main.rs"),
    ("xtask", "xtask/src/main.rs"),
];

/// Circles known and allowed for now, each with why it is still there.
/// A circle listed here is printed but does not fail the check; a listed
/// circle that no longer occurs fails it, so the list only shrinks.
pub const KNOWN: [(&str, &str, &str); 0] = [];

/// Layers among a crate's top-level modules, lowest first: a module may
/// name only modules of a lower layer, so the modules of one layer never
/// name each other and no layer names one above it. Top-level modules not
/// listed (wiring, commands) sit above every layer; no layer may name them.
pub const LAYERS: [(&str, &[&[&str]]); 2] = [
    (
        "hearth-core",
        &[
            &["util", "api", "stores"],
            &["skill"],
            &["agent_skills", "backup", "mcp"],
            &["discovery"],
            &["builtin", "assistant"],
            &["agents", "ui"],
        ],
    ),
    (
        "hearth-proxy",
        &[
            &["api"],
            &["client"],
            &["web", "relay", "stdio", "local", "agents"],
        ],
    ),
];

/// Layers among the children of one module below a crate's root, kept as
/// [`LAYERS`] keeps the root's: (crate, the module's path, layers lowest
/// first). The app's views: the result cards, which several places show,
/// sit below the places, and no place names another (what two places
/// share lives in `crate::shared` or in `cards`).
pub const INNER_LAYERS: [(&str, &str, &[&[&str]]); 1] = [(
    "hearth (app lib)",
    "views",
    &[
        &["cards"],
        &[
            "activity", "chat", "memory", "notes", "servers", "settings", "skills", "tasks",
        ],
    ],
)];

/// Top-level modules that never name some others: (crate, module, the
/// modules it never names). The app's `shared` components sit below every
/// place, so they never name the views, the place list or the shell.
pub const APART: [(&str, &str, &[&str]); 1] =
    [("hearth (app lib)", "shared", &["views", "places", "app"])];

/// A module's path from its crate root (`[]` is the root).
type ModPath = Vec<String>;

/// Where one edge was seen: the file, the line and the path as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub file: PathBuf,
    pub line: usize,
    pub written: String,
}

/// One circle: the modules in order (the first is not repeated at the
/// end) and, for each edge `modules[i] → modules[i + 1]`, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circle {
    pub modules: Vec<String>,
    pub sites: Vec<Site>,
}

impl std::fmt::Display for Circle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.path())?;
        for (i, site) in self.sites.iter().enumerate() {
            let from = &self.modules[i];
            let to = &self.modules[(i + 1) % self.modules.len()];
            writeln!(
                f,
                "      {from} → {to}: {}:{} ({})",
                site.file.display(),
                site.line,
                site.written
            )?;
        }
        Ok(())
    }
}

/// One path seen in a module, already made absolute from the crate root.
#[derive(Debug)]
struct Ref {
    path: ModPath,
    site: Site,
}

#[derive(Debug, Default)]
struct Module {
    /// Names imported by `use` (not globs), to follow re-exports.
    imports: HashMap<String, ModPath>,
    refs: Vec<Ref>,
}

/// A crate's modules and the paths each one names.
#[derive(Debug, Default)]
pub struct CrateGraph {
    modules: BTreeMap<ModPath, Module>,
    /// Problems reading the tree (a `mod x;` with no file, a parse error).
    pub problems: Vec<String>,
}

/// Reads a file's text; the real check reads the disk, the tests a map.
pub type Reader<'a> = &'a dyn Fn(&Path) -> Option<String>;

impl CrateGraph {
    /// Reads the crate whose root file is `root`.
    pub fn load(root: &Path, read: Reader) -> CrateGraph {
        let mut graph = CrateGraph::default();
        let dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
        graph.load_file(root, Vec::new(), dir, read);
        graph.resolve_relative_imports();
        graph
    }

    fn load_file(&mut self, file: &Path, path: ModPath, child_dir: PathBuf, read: Reader) {
        let Some(text) = read(file) else {
            self.problems.push(format!(
                "cannot read {} (module {})",
                file.display(),
                show(&path)
            ));
            return;
        };
        let parsed = match syn::parse_file(&text) {
            Ok(f) => f,
            Err(e) => {
                self.problems.push(format!(
                    "{}:{}: cannot parse: {e}",
                    file.display(),
                    e.span().start().line
                ));
                return;
            }
        };
        self.load_items(&parsed.items, file, path, child_dir, read);
    }

    /// One module's items; `child_dir` is where its `mod x;` files live.
    fn load_items(
        &mut self,
        items: &[syn::Item],
        file: &Path,
        path: ModPath,
        child_dir: PathBuf,
        read: Reader,
    ) {
        let mut collector = Collector {
            module: &path,
            file,
            module_data: Module::default(),
        };
        for item in items {
            collector.visit_item(item);
        }
        let data = collector.module_data;
        self.modules.insert(path.clone(), data);

        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            if test_only(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string();
            let mut child = path.clone();
            child.push(name.clone());
            let explicit = path_attr(&m.attrs);
            match &m.content {
                Some((_, inner)) => {
                    let dir = match &explicit {
                        Some(p) => child_dir.join(p),
                        None => child_dir.join(&name),
                    };
                    self.load_items(inner, file, child, dir, read);
                }
                None => {
                    let candidates = match &explicit {
                        Some(p) => vec![child_dir.join(p)],
                        None => vec![
                            child_dir.join(format!("{name}.rs")),
                            child_dir.join(&name).join("mod.rs"),
                        ],
                    };
                    let Some(found) = candidates.into_iter().find(|c| read(c).is_some()) else {
                        self.problems
                            .push(format!("{}: `mod {name};` has no file", file.display()));
                        continue;
                    };
                    // A `mod.rs` (or a file named by #[path]) keeps its
                    // children beside it; `x.rs` keeps them in `x/`.
                    let dir =
                        if found.file_name().is_some_and(|n| n == "mod.rs") || explicit.is_some() {
                            found.parent().unwrap_or(Path::new("")).to_path_buf()
                        } else {
                            child_dir.join(&name)
                        };
                    self.load_file(&found, child, dir, read);
                }
            }
        }
    }

    /// `use child::X` names a child module relative to the importing
    /// module; once the tree is known, such imports become absolute.
    fn resolve_relative_imports(&mut self) {
        let known: BTreeSet<ModPath> = self.modules.keys().cloned().collect();
        for (path, module) in self.modules.iter_mut() {
            for target in module.imports.values_mut() {
                if target.first().is_some_and(|s| s == RELATIVE) {
                    let mut abs = path.clone();
                    abs.extend(target[1..].iter().cloned());
                    let mut child = path.clone();
                    child.push(target[1].clone());
                    *target = if known.contains(&child) {
                        abs
                    } else {
                        Vec::new()
                    };
                }
            }
            module.imports.retain(|_, t| !t.is_empty());
        }
    }

    /// The module a path names: its longest prefix that is a module, after
    /// following `use` imports of the modules on the way.
    fn module_of(&self, path: &[String]) -> ModPath {
        let mut path = path.to_vec();
        for _ in 0..32 {
            let mut depth = 0;
            while depth < path.len() && self.modules.contains_key(&path[..=depth]) {
                depth += 1;
            }
            if depth == path.len() {
                return path;
            }
            let owner = &path[..depth];
            let name = &path[depth];
            let next = self
                .modules
                .get(owner)
                .and_then(|m| m.imports.get(name))
                .map(|target| {
                    let mut p = target.clone();
                    p.extend(path[depth + 1..].iter().cloned());
                    p
                });
            match next {
                Some(p) if p != path => path = p,
                _ => return owner.to_vec(),
            }
        }
        path
    }

    /// For each level (a module whose children depend on each other), the
    /// edges between its children with every site that makes them.
    fn levels(&self) -> BTreeMap<ModPath, BTreeMap<(String, String), Vec<Site>>> {
        let mut levels: BTreeMap<ModPath, BTreeMap<(String, String), Vec<Site>>> = BTreeMap::new();
        for (from, module) in &self.modules {
            for r in &module.refs {
                let to = self.module_of(&r.path);
                let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
                if common == from.len() || common == to.len() {
                    continue;
                }
                levels
                    .entry(from[..common].to_vec())
                    .or_default()
                    .entry((from[common].clone(), to[common].clone()))
                    .or_default()
                    .push(r.site.clone());
            }
        }
        levels
    }

    /// Every edge among the crate root's children that breaks `layers`
    /// (lowest first): `from → to: file:line (written)`.
    pub fn layer_breaches(&self, layers: &[&[&str]]) -> Vec<String> {
        self.layer_breaches_in(&[], layers)
    }

    /// Every edge among the children of the module at `level` (its path
    /// from the root) that breaks `layers`, as [`Self::layer_breaches`].
    pub fn layer_breaches_in(&self, level: &[&str], layers: &[&[&str]]) -> Vec<String> {
        let rank = |m: &str| layers.iter().position(|l| l.contains(&m));
        let mut out = Vec::new();
        let levels = self.levels();
        let level: ModPath = level.iter().map(|s| s.to_string()).collect();
        let Some(top) = levels.get(&level) else {
            return out;
        };
        for ((from, to), sites) in top {
            let Some(from_rank) = rank(from) else {
                continue;
            };
            if rank(to).is_some_and(|to_rank| to_rank < from_rank) {
                continue;
            }
            for site in sites {
                out.push(format!(
                    "{from} → {to}: {}:{} ({})",
                    site.file.display(),
                    site.line,
                    site.written
                ));
            }
        }
        out
    }

    /// Every edge from the top-level module `from` to one of `never`:
    /// `from → to: file:line (written)`.
    pub fn apart_breaches(&self, from: &str, never: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        let levels = self.levels();
        let Some(top) = levels.get(&Vec::new()) else {
            return out;
        };
        for ((a, to), sites) in top {
            if a != from || !never.contains(&to.as_str()) {
                continue;
            }
            for site in sites {
                out.push(format!(
                    "{a} → {to}: {}:{} ({})",
                    site.file.display(),
                    site.line,
                    site.written
                ));
            }
        }
        out
    }

    /// Every circle, level by level: for each edge inside a strongly
    /// connected component, the shortest way back closes one circle
    /// (rotations of one circle are reported once).
    pub fn circles(&self) -> Vec<Circle> {
        let mut out = Vec::new();
        for (parent, edges) in self.levels() {
            let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for (a, b) in edges.keys() {
                next.entry(a).or_default().insert(b);
                next.entry(b).or_default();
            }
            let mut seen: BTreeSet<Vec<&str>> = BTreeSet::new();
            for component in components(&next) {
                if component.len() < 2 {
                    continue;
                }
                let mut found = Vec::new();
                for (a, b) in edges.keys() {
                    let (a, b) = (a.as_str(), b.as_str());
                    if !component.contains(a) || !component.contains(b) {
                        continue;
                    }
                    let Some(back) = shortest(&next, &component, b, a) else {
                        continue;
                    };
                    // a → b → … → a, rotated to start at its least name.
                    let mut cycle = vec![a];
                    cycle.extend(back[..back.len() - 1].iter().copied());
                    let start = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
                    cycle.rotate_left(start);
                    if seen.insert(cycle.clone()) {
                        found.push(cycle);
                    }
                }
                found.sort_by(|x, y| x.len().cmp(&y.len()).then(x.cmp(y)));
                for cycle in found {
                    let sites = (0..cycle.len())
                        .map(|i| {
                            let key = (
                                cycle[i].to_string(),
                                cycle[(i + 1) % cycle.len()].to_string(),
                            );
                            edges[&key][0].clone()
                        })
                        .collect();
                    let modules = cycle
                        .iter()
                        .map(|name| {
                            let mut p = parent.clone();
                            p.push((*name).to_string());
                            show(&p)
                        })
                        .collect();
                    out.push(Circle { modules, sites });
                }
            }
        }
        out
    }
}

/// Tarjan's strongly connected components.
fn components<'a>(next: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<BTreeSet<&'a str>> {
    struct State<'a> {
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<BTreeSet<&'a str>>,
    }
    fn visit<'a>(v: &'a str, next: &BTreeMap<&'a str, BTreeSet<&'a str>>, s: &mut State<'a>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in &next[v] {
            if !s.index.contains_key(w) {
                visit(w, next, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.insert(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State {
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for &v in next.keys() {
        if !s.index.contains_key(v) {
            visit(v, next, &mut s);
        }
    }
    s.out
}

/// The shortest path `from → … → to` inside `within`, both ends included.
fn shortest<'a>(
    next: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    within: &BTreeSet<&'a str>,
    from: &'a str,
    to: &'a str,
) -> Option<Vec<&'a str>> {
    let mut prev: HashMap<&str, &str> = HashMap::new();
    let mut queue = VecDeque::from([from]);
    let mut reached = BTreeSet::from([from]);
    while let Some(v) = queue.pop_front() {
        if v == to {
            let mut path = vec![to];
            let mut at = to;
            while let Some(&p) = prev.get(at) {
                path.push(p);
                at = p;
            }
            path.reverse();
            return Some(path);
        }
        for &w in &next[v] {
            if within.contains(w) && reached.insert(w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    None
}

fn show(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}

/// Marks an import that starts at one of the importing module's children.
const RELATIVE: &str = "<relative>";

/// `#[cfg(test)]` and the like (`all(test, …)`): a cfg that names `test`
/// and does not negate it.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if !a.path().is_ident("cfg") {
            return false;
        }
        let syn::Meta::List(list) = &a.meta else {
            return false;
        };
        let mut idents = Vec::new();
        flatten_idents(list.tokens.clone(), &mut idents);
        idents.iter().any(|i| i == "test") && !idents.iter().any(|i| i == "not")
    })
}

fn flatten_idents(tokens: TokenStream, out: &mut Vec<String>) {
    for t in tokens {
        match t {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => flatten_idents(g.stream(), out),
            _ => {}
        }
    }
}

/// `#[path = "x.rs"]` on a `mod` item.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        if !a.path().is_ident("path") {
            return None;
        }
        let syn::Meta::NameValue(nv) = &a.meta else {
            return None;
        };
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// Collects the paths one module names.
struct Collector<'a> {
    module: &'a [String],
    file: &'a Path,
    module_data: Module,
}

impl Collector<'_> {
    /// `crate::a`, `super::super::a`, `self::a` made absolute; `None` for
    /// any other start (an extern crate, a local name) or a `super` past
    /// the root.
    fn absolute(&self, segments: &[String]) -> Option<ModPath> {
        let first = segments.first()?;
        let mut base: ModPath;
        let mut rest = segments;
        match first.as_str() {
            "crate" => {
                base = Vec::new();
                rest = &rest[1..];
            }
            "self" => {
                base = self.module.to_vec();
                rest = &rest[1..];
            }
            "super" => {
                base = self.module.to_vec();
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            _ => return None,
        }
        if rest.first().is_some_and(|s| s == "self") {
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn add(&mut self, segments: &[String], line: usize) {
        if let Some(path) = self.absolute(segments) {
            self.module_data.refs.push(Ref {
                path,
                site: Site {
                    file: self.file.to_path_buf(),
                    line,
                    written: segments.join("::"),
                },
            });
        }
    }

    /// A `use` tree: every path it names is a reference, and every name it
    /// brings in is remembered, to follow re-exports.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix, line);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let (full, alias) = if name == "self" {
                    (prefix.clone(), prefix.last().cloned())
                } else {
                    let mut full = prefix.clone();
                    full.push(name.clone());
                    (full, Some(name))
                };
                self.import(&full, alias, line);
            }
            syn::UseTree::Rename(r) => {
                let name = r.ident.to_string();
                let mut full = prefix.clone();
                if name != "self" {
                    full.push(name);
                }
                self.import(&full, Some(r.rename.to_string()), line);
            }
            syn::UseTree::Glob(_) => self.add(&prefix.clone(), line),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix, line);
                }
            }
        }
    }

    fn import(&mut self, full: &[String], alias: Option<String>, line: usize) {
        self.add(full, line);
        let Some(alias) = alias else { return };
        let target = match self.absolute(full) {
            Some(p) => p,
            None => {
                let mut p = vec![RELATIVE.to_string()];
                p.extend(full.iter().cloned());
                p
            }
        };
        self.module_data.imports.insert(alias, target);
    }

    /// `crate::a::b`, `super::a` and `self::a` inside a macro call's
    /// tokens (`$crate` is the macro's own crate and is skipped).
    fn tokens(&mut self, tokens: TokenStream) {
        let list: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < list.len() {
            match &list[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id)
                    if ["crate", "super", "self"].contains(&id.to_string().as_str())
                        && !(i > 0 && is_punct(&list[i - 1], '$')) =>
                {
                    let line = id.span().start().line;
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while j + 2 < list.len()
                        && is_punct(&list[j], ':')
                        && is_punct(&list[j + 1], ':')
                    {
                        let TokenTree::Ident(next) = &list[j + 2] else {
                            break;
                        };
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        self.add(&segments, line);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

fn is_punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if test_only(item_attrs(item)) {
            return;
        }
        syn::visit::visit_item(self, item);
    }

    /// Inline modules are modules of their own, read by the tree walk.
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_impl_item(self, item),
        };
        if !test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_some() {
            return;
        }
        let line = item.use_token.span.start().line;
        self.use_tree(&item.tree, &mut Vec::new(), line);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            let line = path.segments[0].ident.span().start().line;
            self.add(&segments, line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.tokens(mac.tokens.clone());
    }
}

/// A crate's circles split by the known list: those that fail the check,
/// those allowed, and the known entries for this crate that were not
/// found (stale).
pub fn judge<'a>(
    crate_name: &str,
    circles: &'a [Circle],
    known: &[(&str, &str, &str)],
) -> (Vec<&'a Circle>, Vec<&'a Circle>, Vec<String>) {
    let listed: Vec<&str> = known
        .iter()
        .filter(|(c, _, _)| *c == crate_name)
        .map(|(_, path, _)| *path)
        .collect();
    let (allowed, unexpected): (Vec<&Circle>, Vec<&Circle>) = circles
        .iter()
        .partition(|c| listed.contains(&c.path().as_str()));
    let stale = listed
        .into_iter()
        .filter(|path| !circles.iter().any(|c| c.path() == *path))
        .map(str::to_string)
        .collect();
    (unexpected, allowed, stale)
}

impl Circle {
    /// `a → b → a`.
    pub fn path(&self) -> String {
        let mut names: Vec<&str> = self.modules.iter().map(String::as_str).collect();
        names.push(&self.modules[0]);
        names.join(" → ")
    }
}

/// The check `cargo xtask test` and `cargo xtask circles` run: every crate
/// of the workspace, every circle printed.
pub fn check() -> Result<(), Failure> {
    let root = repo_root();
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let shown = |c: &Circle| c.to_string().replace(&format!("{}/", root.display()), "");
    let mut failures = Vec::new();
    for (name, file) in CRATES {
        let graph = CrateGraph::load(&root.join(file), &read);
        let circles = graph.circles();
        let (unexpected, allowed, stale) = judge(name, &circles, &KNOWN);
        for problem in &graph.problems {
            println!("  {name}: {problem}");
        }
        if unexpected.is_empty() && graph.problems.is_empty() && stale.is_empty() {
            println!(
                "  {name}: no circles among {} modules{}",
                graph.modules.len(),
                if allowed.is_empty() {
                    String::new()
                } else {
                    format!(" but {} known", allowed.len())
                }
            );
        }
        for circle in &allowed {
            let why = KNOWN
                .iter()
                .find(|(c, p, _)| *c == name && *p == circle.path())
                .map_or("", |k| k.2);
            print!("  {name}: known circle ({why}):\n    {}", shown(circle));
        }
        if !unexpected.is_empty() {
            println!("  {name}: {} circle(s)", unexpected.len());
            for circle in &unexpected {
                print!("    {}", shown(circle));
            }
            failures.push(format!("{name}: {} import circle(s)", unexpected.len()));
        }
        if let Some((_, layers)) = LAYERS.iter().find(|(c, _)| *c == name) {
            let breaches = graph.layer_breaches(layers);
            if breaches.is_empty() {
                println!("  {name}: the layers hold ({layers:?}, lowest first)");
            } else {
                println!(
                    "  {name}: {} import(s) against the layers {layers:?}",
                    breaches.len()
                );
                for b in &breaches {
                    println!("    {}", b.replace(&format!("{}/", root.display()), ""));
                }
                failures.push(format!(
                    "{name}: {} import(s) against its layers",
                    breaches.len()
                ));
            }
        }
        let inner = INNER_LAYERS
            .iter()
            .filter(|(c, _, _)| *c == name)
            .map(|(_, level, layers)| {
                let path: Vec<&str> = level.split("::").collect();
                (
                    format!("{level}'s layers {layers:?}"),
                    graph.layer_breaches_in(&path, layers),
                )
            });
        let apart = APART
            .iter()
            .filter(|(c, _, _)| *c == name)
            .map(|(_, from, never)| {
                (
                    format!("{from} never naming {never:?}"),
                    graph.apart_breaches(from, never),
                )
            });
        for (rule, breaches) in inner.chain(apart) {
            if breaches.is_empty() {
                println!("  {name}: {rule} hold");
            } else {
                println!("  {name}: {} import(s) against {rule}", breaches.len());
                for b in &breaches {
                    println!("    {}", b.replace(&format!("{}/", root.display()), ""));
                }
                failures.push(format!(
                    "{name}: {} import(s) against {rule}",
                    breaches.len()
                ));
            }
        }
        for path in &stale {
            failures.push(format!(
                "{name}: the known circle {path} no longer occurs; remove it from circles::KNOWN"
            ));
        }
        if !graph.problems.is_empty() {
            failures.push(format!(
                "{name}: {} module(s) could not be read",
                graph.problems.len()
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Failure::new(failures.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> CrateGraph {
        let map: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), (*t).to_string()))
            .collect();
        CrateGraph::load(Path::new("src/lib.rs"), &|p: &Path| map.get(p).cloned())
    }

    fn names(g: &CrateGraph) -> Vec<String> {
        assert!(g.problems.is_empty(), "{:?}", g.problems);
        g.circles()
            .iter()
            .map(|c| c.to_string().lines().next().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn every_crate_root_under_crates_is_checked() {
        let root = repo_root();
        let listed: Vec<&str> = CRATES.iter().map(|(_, file)| *file).collect();
        for entry in std::fs::read_dir(root.join("crates")).unwrap() {
            let dir = entry.unwrap().file_name().into_string().unwrap();
            for file in ["lib.rs", "main.rs"] {
                let rel = format!("crates/{dir}/src/{file}");
                if root.join(&rel).exists() {
                    assert!(listed.contains(&rel.as_str()), "{rel} is not in CRATES");
                }
            }
        }
    }

    #[test]
    fn a_circle_of_three_is_found_with_a_site_per_edge() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::b::B;\n"),
            ("src/b.rs", "pub struct B;\n\nuse crate::c;\n"),
            ("src/c.rs", "fn f() {\n    crate::a::g();\n}\n"),
        ]);
        let circles = g.circles();
        assert_eq!(names(&g), ["a → b → c → a"]);
        let sites: Vec<(String, usize)> = circles[0]
            .sites
            .iter()
            .map(|s| (s.file.display().to_string(), s.line))
            .collect();
        assert_eq!(
            sites,
            [
                ("src/a.rs".to_string(), 1),
                ("src/b.rs".to_string(), 3),
                ("src/c.rs".to_string(), 2)
            ]
        );
        assert_eq!(circles[0].sites[2].written, "crate::a::g");
    }

    #[test]
    fn layers_refuse_imports_upward_and_between_features() {
        let g = graph(&[
            (
                "src/lib.rs",
                "mod api;\nmod client;\nmod web;\nmod relay;\nmod serve;\n",
            ),
            ("src/api.rs", "pub struct E;\n"),
            ("src/client.rs", "use crate::api::E;\n"),
            (
                "src/web.rs",
                "use crate::client::C;\nuse crate::relay::R;\n",
            ),
            (
                "src/relay.rs",
                "use crate::api::E;\nfn f() { crate::serve::go(); }\n",
            ),
            ("src/serve.rs", "use crate::web::W;\nuse crate::relay::R;\n"),
        ]);
        let layers: &[&[&str]] = &[&["api"], &["client"], &["web", "relay"]];
        assert_eq!(
            g.layer_breaches(layers),
            [
                "relay → serve: src/relay.rs:2 (crate::serve::go)",
                "web → relay: src/web.rs:2 (crate::relay::R)",
            ]
        );
        let fixed = graph(&[
            ("src/lib.rs", "mod api;\nmod client;\nmod web;\n"),
            ("src/api.rs", "pub struct E;\n"),
            ("src/client.rs", "use crate::api::E;\n"),
            ("src/web.rs", "use crate::client::C;\nuse crate::api::E;\n"),
        ]);
        assert!(fixed.layer_breaches(layers).is_empty());
    }

    #[test]
    fn inner_layers_and_apart_refuse_a_place_naming_another() {
        let g = graph(&[
            ("src/lib.rs", "mod views;\nmod shared;\n"),
            ("src/views/mod.rs", "mod cards;\nmod chat;\nmod notes;\n"),
            ("src/views/cards.rs", "use crate::shared::Modal;\n"),
            (
                "src/views/chat.rs",
                "use crate::views::cards::Card;\nuse crate::views::notes::N;\n",
            ),
            ("src/views/notes.rs", "use crate::shared::Modal;\n"),
            ("src/shared.rs", "fn f() { crate::views::chat::focus(); }\n"),
        ]);
        let layers: &[&[&str]] = &[&["cards"], &["chat", "notes"]];
        assert_eq!(
            g.layer_breaches_in(&["views"], layers),
            ["chat → notes: src/views/chat.rs:2 (crate::views::notes::N)"]
        );
        assert_eq!(
            g.apart_breaches("shared", &["views"]),
            ["shared → views: src/shared.rs:1 (crate::views::chat::focus)"]
        );
        assert!(g.apart_breaches("views", &["places"]).is_empty());
    }

    #[test]
    fn a_dag_has_no_circles() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::b::B;\nuse crate::c::C;\n"),
            ("src/b.rs", "use crate::c::C;\npub struct B;\n"),
            ("src/c.rs", "pub struct C;\n"),
        ]);
        assert!(names(&g).is_empty());
    }

    #[test]
    fn super_paths_are_resolved_and_circles_named_at_their_level() {
        let g = graph(&[
            ("src/lib.rs", "mod net;\n"),
            ("src/net/mod.rs", "mod error;\nmod guard;\n"),
            ("src/net/error.rs", "use super::guard::Guard;\n"),
            (
                "src/net/guard.rs",
                "fn f(_: super::super::net::error::Error) {}\n",
            ),
        ]);
        assert_eq!(names(&g), ["net::error → net::guard → net::error"]);
    }

    #[test]
    fn a_test_module_and_test_only_items_are_ignored() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n\
                 #[cfg(test)]\nuse crate::b::C;\n\
                 struct S;\nimpl S {\n    #[cfg(test)]\n    fn t() { crate::b::f(); }\n}\n",
            ),
            ("src/b.rs", "use crate::a::A;\n"),
        ]);
        assert!(names(&g).is_empty());
        // The same use outside the test module makes the circle.
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a.rs", "mod inner {\n    use crate::b::B;\n}\n"),
            ("src/b.rs", "use crate::a::A;\n"),
        ]);
        assert_eq!(names(&g), ["a → b → a"]);
    }

    #[test]
    fn a_parent_using_its_children_is_structure_not_a_circle() {
        let g = graph(&[
            ("src/lib.rs", "mod net;\n"),
            (
                "src/net/mod.rs",
                "mod error;\npub use error::Error;\nfn f() { error::g(); }\n",
            ),
            (
                "src/net/error.rs",
                "use super::f;\nuse crate::net::Thing;\n",
            ),
        ]);
        assert!(names(&g).is_empty());
    }

    #[test]
    fn re_exports_are_followed_to_the_real_home() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\npub use b::B;\n"),
            ("src/a.rs", "use crate::B;\npub struct A;\n"),
            ("src/b.rs", "pub struct B;\nfn f(_: crate::a::A) {}\n"),
        ]);
        assert_eq!(names(&g), ["a → b → a"]);
    }

    #[test]
    fn paths_inside_macro_calls_count_but_dollar_crate_does_not() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "fn v() { view! { <p>{crate::b::label()}</p> } }\n",
            ),
            ("src/b.rs", "macro_rules! m { () => { $crate::a::x() } }\n"),
        ]);
        assert!(names(&g).is_empty());
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "fn v() { view! { <p>{crate::b::label()}</p> } }\n",
            ),
            ("src/b.rs", "fn f() { format!(\"{}\", crate::a::X); }\n"),
        ]);
        assert_eq!(names(&g), ["a → b → a"]);
    }

    #[test]
    fn deep_edges_are_lifted_to_where_the_paths_part() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            ("src/a/mod.rs", "mod x;\nmod w;\n"),
            ("src/a/x.rs", "use crate::b::y::Y;\n"),
            ("src/a/w.rs", "pub struct W;\n"),
            ("src/b.rs", "pub mod y;\nmod z;\n"),
            ("src/b/y.rs", "pub struct Y;\n"),
            ("src/b/z.rs", "use crate::a::w::W;\n"),
        ]);
        assert_eq!(names(&g), ["a → b → a"]);
    }

    #[test]
    fn a_missing_module_file_is_reported() {
        let g = graph(&[("src/lib.rs", "mod gone;\n")]);
        assert_eq!(g.problems.len(), 1, "{:?}", g.problems);
        assert!(g.problems[0].contains("mod gone;"));
    }

    #[test]
    fn two_circles_sharing_a_module_are_both_printed() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::b::B;\nuse crate::c::C;\n"),
            ("src/b.rs", "use crate::a::A;\n"),
            ("src/c.rs", "use crate::a::A;\n"),
        ]);
        assert_eq!(names(&g), ["a → b → a", "a → c → a"]);
    }

    #[test]
    fn known_circles_are_allowed_and_stale_ones_reported() {
        let g = graph(&[
            ("src/lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::b::B;\nuse crate::c::C;\n"),
            ("src/b.rs", "use crate::a::A;\n"),
            ("src/c.rs", "use crate::a::A;\n"),
        ]);
        let circles = g.circles();
        let known = [
            ("k", "a → b → a", "why"),
            ("k", "a → d → a", "gone"),
            ("other", "a → c → a", "another crate's"),
        ];
        let (unexpected, allowed, stale) = judge("k", &circles, &known);
        let paths = |v: &[&Circle]| v.iter().map(|c| c.path()).collect::<Vec<_>>();
        assert_eq!(paths(&unexpected), ["a → c → a"]);
        assert_eq!(paths(&allowed), ["a → b → a"]);
        assert_eq!(stale, ["a → d → a"]);
    }
}
