//! The layer order of docs/architecture.md, held against the code.
//!
//! Every `crate::…` / `super::…` path in src/ (in `use` items, in code and
//! types, and inside macro invocations such as `bail!(crate::error::Fix…)`)
//! is an edge from the file it is written in to the file that defines the
//! module it names. Code under `#[cfg(test)]` is left out: a unit test may
//! borrow a fixture from anywhere.
//!
//! Three rules, each failing with the edges that break it:
//! 1. **Layers.** A module uses only modules of its own layer or of layers
//!    listed before it in [`LAYERS`] (the same order as the Layers table of
//!    docs/architecture.md: the first row is the ground).
//! 2. **No module cycles.** Within a layer, top-level modules do not import
//!    each other in a loop.
//! 3. **No file cycles.** Within a module, files do not import each other
//!    in a loop (a folder's `mod.rs` and the files under it are exempt from
//!    each other: a child uses its parent's shared types, the parent
//!    declares and re-exports the child).
//!
//! To move a module to another layer, or add one, edit [`LAYERS`] and the
//! table in docs/architecture.md together; every top-level module of
//! src/lib.rs must be in exactly one layer (rule 0).

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Layers from the ground up, in the order of the Layers table of
/// docs/architecture.md: a module may use its own layer and the layers
/// before it. `crate` is src/lib.rs itself (the dispatcher).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "ground",
        &["error", "units", "aligned", "output", "durable", "input"],
    ),
    ("host", &["host"]),
    ("model", &["model"]),
    ("db", &["db"]),
    ("change", &["change"]),
    ("vocabulary", &["finding", "export"]),
    ("guards", &["safety", "journal"]),
    ("frame", &["command"]),
    (
        "measurement",
        &[
            "stats", "bench", "oltp", "checksum", "sandbox", "trace", "slowlog", "replay",
        ],
    ),
    ("analysis", &["probe", "check", "trial", "sweep", "apply"]),
    ("commands", &["tune", "merge", "prove", "search", "report"]),
    ("wiring", &["cli", "crate"]),
];

/// Edges known to run against the order, each owed a fix elsewhere:
/// (from module or `*`, to module, a name the path must contain, why).
/// They are left out of every rule. The test fails once one is no longer
/// in the code, so this list only shrinks.
const OWED: &[(&str, &str, &str, &str)] = &[];

fn owed(e: &Edge) -> Option<usize> {
    OWED.iter().position(|(from, to, name, _)| {
        (*from == "*" || *from == e.from_mod) && *to == e.to_mod && e.named.contains(name)
    })
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// One module file of the crate: its module path (`["journal", "restore"]`)
/// and where it is.
#[derive(Debug, Clone)]
struct ModFile {
    path: Vec<String>,
    file: PathBuf,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .map(|l| l.tokens.to_string().contains("test"))
                .unwrap_or(false)
    })
}

fn parse(file: &Path) -> syn::File {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Every module file reachable from src/lib.rs through `mod x;` items not
/// under `#[cfg(test)]`.
fn module_files() -> Vec<ModFile> {
    let mut out = Vec::new();
    let mut todo = vec![ModFile {
        path: Vec::new(),
        file: src().join("lib.rs"),
    }];
    while let Some(m) = todo.pop() {
        let ast = parse(&m.file);
        // Children of lib.rs and x/mod.rs sit beside them; those of x.rs in x/.
        let dir = match m.file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs") | Some("mod.rs") => m.file.parent().unwrap().to_path_buf(),
            _ => m.file.with_extension(""),
        };
        collect_mods(&ast.items, &m.path, &dir, &mut todo);
        out.push(m);
    }
    out
}

fn collect_mods(items: &[syn::Item], path: &[String], dir: &Path, todo: &mut Vec<ModFile>) {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_cfg_test(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let mut p = path.to_vec();
        p.push(name.clone());
        match &m.content {
            // An inline module: its children live in dir/name/.
            Some((_, inner)) => collect_mods(inner, &p, &dir.join(&name), todo),
            None => {
                let flat = dir.join(format!("{name}.rs"));
                let file = if flat.exists() {
                    flat.clone()
                } else {
                    dir.join(&name).join("mod.rs")
                };
                assert!(
                    file.exists(),
                    "mod {name}: neither {} nor mod.rs",
                    flat.display()
                );
                todo.push(ModFile { path: p, file });
            }
        }
    }
}

/// Paths one file names, as written (`crate::a::b`, `super::c`, an alias
/// `model::block::X` from `use crate::model;`), each with the module the
/// path was written in (for `super`/`self`).
struct Collect {
    /// The module the visitor is in (inline modules extend it).
    at: Vec<String>,
    /// (module written in, path segments as written).
    paths: Vec<(Vec<String>, Vec<String>)>,
    /// Names brought in by `use crate::…` / `use super::…`, per module.
    aliases: BTreeMap<(Vec<String>, String), Vec<String>>,
}

impl Collect {
    fn use_tree(&mut self, prefix: &mut Vec<String>, t: &syn::UseTree) {
        match t {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident.to_string(), None),
            syn::UseTree::Rename(r) => {
                self.use_leaf(prefix, &r.ident.to_string(), Some(r.rename.to_string()))
            }
            syn::UseTree::Glob(_) => self.paths.push((self.at.clone(), prefix.clone())),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], name: &str, rename: Option<String>) {
        let mut full = prefix.to_vec();
        if name != "self" {
            full.push(name.to_string());
        }
        if !is_local(&full) {
            return;
        }
        let alias = rename.unwrap_or_else(|| full.last().cloned().unwrap_or_default());
        self.aliases.insert((self.at.clone(), alias), full.clone());
        self.paths.push((self.at.clone(), full));
    }

    fn push(&mut self, segs: Vec<String>) {
        if segs.len() > 1 {
            self.paths.push((self.at.clone(), segs));
        }
    }
}

fn is_local(segs: &[String]) -> bool {
    matches!(
        segs.first().map(String::as_str),
        Some("crate" | "super" | "self")
    )
}

/// `a :: b :: c` runs of identifiers in a macro's tokens.
fn token_paths(ts: TokenStream, out: &mut Vec<Vec<String>>) {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            TokenTree::Group(g) => token_paths(g.stream(), out),
            TokenTree::Ident(id) => {
                let mut segs = vec![id.to_string()];
                let mut j = i + 1;
                while j + 2 < toks.len() {
                    let (TokenTree::Punct(a), TokenTree::Punct(b)) = (&toks[j], &toks[j + 1])
                    else {
                        break;
                    };
                    if a.as_char() != ':' || b.as_char() != ':' {
                        break;
                    }
                    let Some(TokenTree::Ident(next)) = toks.get(j + 2) else {
                        break;
                    };
                    segs.push(next.to_string());
                    j += 3;
                }
                if segs.len() > 1 {
                    out.push(segs);
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The attributes of an item (those of a verbatim item: none).
fn item_attrs(i: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match i {
        Const(x) => &x.attrs,
        Enum(x) => &x.attrs,
        ExternCrate(x) => &x.attrs,
        Fn(x) => &x.attrs,
        ForeignMod(x) => &x.attrs,
        Impl(x) => &x.attrs,
        Macro(x) => &x.attrs,
        Mod(x) => &x.attrs,
        Static(x) => &x.attrs,
        Struct(x) => &x.attrs,
        Trait(x) => &x.attrs,
        TraitAlias(x) => &x.attrs,
        Type(x) => &x.attrs,
        Union(x) => &x.attrs,
        Use(x) => &x.attrs,
        _ => &[],
    }
}

impl<'a> Visit<'a> for Collect {
    /// Items under `#[cfg(test)]` are not part of the layering.
    fn visit_item(&mut self, i: &'a syn::Item) {
        if !is_cfg_test(item_attrs(i)) {
            syn::visit::visit_item(self, i);
        }
    }
    fn visit_impl_item(&mut self, i: &'a syn::ImplItem) {
        let attrs = match i {
            syn::ImplItem::Const(x) => &x.attrs,
            syn::ImplItem::Fn(x) => &x.attrs,
            syn::ImplItem::Type(x) => &x.attrs,
            syn::ImplItem::Macro(x) => &x.attrs,
            _ => return syn::visit::visit_impl_item(self, i),
        };
        if !is_cfg_test(attrs) {
            syn::visit::visit_impl_item(self, i);
        }
    }
    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        // `mod x;` is followed by module_files; inline bodies are walked here.
        if let Some((_, items)) = &m.content {
            self.at.push(m.ident.to_string());
            for i in items {
                self.visit_item(i);
            }
            self.at.pop();
        }
    }
    fn visit_path(&mut self, p: &'a syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.push(segs);
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        let mut found = Vec::new();
        token_paths(m.tokens.clone(), &mut found);
        for segs in found {
            self.push(segs);
        }
        syn::visit::visit_macro(self, m);
    }
}

/// An edge: from file, to file, and the path that makes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: PathBuf,
    to: PathBuf,
    from_mod: String,
    to_mod: String,
    named: String,
}

/// [`all_edges`] but the [`OWED`] ones, one per pair of files (naming the
/// first path that ties them).
fn edges() -> Vec<Edge> {
    let mut seen = BTreeSet::new();
    all_edges()
        .into_iter()
        .filter(|e| owed(e).is_none())
        .filter(|e| seen.insert((e.from.clone(), e.to.clone())))
        .collect()
}

/// Every edge of src/: each path resolved to the deepest module file that
/// is a prefix of it (`crate::journal::restore::x` → journal/restore.rs,
/// `crate::change::CreatedDir` → change/mod.rs).
fn all_edges() -> Vec<Edge> {
    let files = module_files();
    let by_path: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|m| (m.path.clone(), m.file.clone()))
        .collect();
    let top = |p: &[String]| p.first().cloned().unwrap_or_else(|| "crate".into());
    let mut out = BTreeSet::new();
    for m in &files {
        let ast = parse(&m.file);
        let mut c = Collect {
            at: m.path.clone(),
            paths: Vec::new(),
            aliases: BTreeMap::new(),
        };
        c.visit_file(&ast);
        for (at, segs) in &c.paths {
            // A path through a local alias continues the aliased one.
            let segs = match c.aliases.get(&(at.clone(), segs[0].clone())) {
                Some(full) if !is_local(segs) => {
                    let mut s = full.clone();
                    s.extend(segs[1..].iter().cloned());
                    s
                }
                _ if is_local(segs) => segs.clone(),
                _ => continue,
            };
            let Some(abs) = absolute(at, &segs) else {
                continue;
            };
            // The deepest module that is a prefix of the path.
            let Some(file) = (0..=abs.len()).rev().find_map(|n| by_path.get(&abs[..n])) else {
                continue;
            };
            if *file == m.file {
                continue;
            }
            // `crate::Ctx` names an item of lib.rs, not a module.
            let to_mod = match abs.first() {
                Some(t) if by_path.contains_key(std::slice::from_ref(t)) => t.clone(),
                _ => "crate".into(),
            };
            out.insert(Edge {
                from: m.file.strip_prefix(src()).unwrap().to_path_buf(),
                to: file.strip_prefix(src()).unwrap().to_path_buf(),
                from_mod: top(&m.path),
                to_mod,
                named: abs.join("::"),
            });
        }
    }
    out.into_iter().collect()
}

/// `segs` as a path from the crate root, written in module `at`.
fn absolute(at: &[String], segs: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = at.to_vec();
    let mut rest = segs;
    match segs.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &segs[1..];
        }
        Some("self") => rest = &segs[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

#[test]
fn owed_edges_are_still_owed() {
    let all = all_edges();
    let paid: Vec<&str> = OWED
        .iter()
        .enumerate()
        .filter(|(i, _)| !all.iter().any(|e| owed(e) == Some(*i)))
        .map(|(_, o)| o.3)
        .collect();
    assert!(
        paid.is_empty(),
        "no longer in the code, so remove from OWED in tests/layers.rs: {paid:?}"
    );
}

/// Where `module` sits in [`LAYERS`].
fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

/// Every loop of `edges` (a→b), as one shortest loop per strongly
/// connected set: `[a, b, c]` for a→b→c→a. Brute force is enough for a
/// few hundred edges.
fn cycles(edges: &[(String, String)]) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    let next = |n: &String| -> Vec<&String> {
        edges
            .iter()
            .filter(|(a, _)| a == n)
            .map(|(_, b)| b)
            .collect()
    };
    // The shortest path from `from` back to itself, if any (BFS).
    let shortest_loop = |from: &String| -> Option<Vec<String>> {
        let mut prev: BTreeMap<&String, &String> = BTreeMap::new();
        let mut todo = std::collections::VecDeque::from([from]);
        while let Some(n) = todo.pop_front() {
            for m in next(n) {
                if m == from {
                    let mut path = vec![n.clone()];
                    let mut at = n;
                    while at != from {
                        at = prev[at];
                        path.push(at.clone());
                    }
                    path.reverse();
                    return Some(path);
                }
                if !prev.contains_key(m) {
                    prev.insert(m, n);
                    todo.push_back(m);
                }
            }
        }
        None
    };
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for n in nodes {
        if seen.contains(n) {
            continue;
        }
        if let Some(c) = shortest_loop(n) {
            seen.extend(c.iter().cloned());
            out.push(c);
        }
    }
    out
}

/// One loop, an edge a line: `    a.rs -> b.rs (crate::b::X)`.
fn show_loop(
    members: &[String],
    edges: &[Edge],
    key: impl Fn(&Edge) -> (String, String),
) -> String {
    let mut lines = Vec::new();
    for (i, a) in members.iter().enumerate() {
        let b = &members[(i + 1) % members.len()];
        if let Some(e) = edges.iter().find(|e| key(e) == (a.clone(), b.clone())) {
            lines.push(format!(
                "    {} -> {} ({})",
                e.from.display(),
                e.to.display(),
                e.named
            ));
        }
    }
    lines.join("\n")
}

#[test]
fn every_module_has_one_layer() {
    let files = module_files();
    let mut modules: BTreeSet<String> = files
        .iter()
        .filter_map(|m| m.path.first().cloned())
        .collect();
    modules.insert("crate".into());
    let missing: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules in no layer: {missing:?}; add each to LAYERS in tests/layers.rs and to the Layers table of docs/architecture.md"
    );
    let listed: Vec<&str> = LAYERS
        .iter()
        .flat_map(|(_, ms)| ms.iter().copied())
        .collect();
    let stale: Vec<&&str> = listed.iter().filter(|m| !modules.contains(**m)).collect();
    assert!(
        stale.is_empty(),
        "LAYERS lists modules src/lib.rs does not declare: {stale:?}"
    );
    let twice: Vec<&&str> = listed
        .iter()
        .filter(|m| listed.iter().filter(|n| n == m).count() > 1)
        .collect();
    assert!(twice.is_empty(), "modules in two layers: {twice:?}");
}

#[test]
fn no_edge_runs_up_the_layers() {
    let bad: Vec<String> = edges()
        .into_iter()
        .filter(|e| match (layer_of(&e.from_mod), layer_of(&e.to_mod)) {
            (Some(a), Some(b)) => b > a,
            _ => false,
        })
        .map(|e| {
            format!(
                "  {} ({}) -> {} ({}): {}",
                e.from.display(),
                LAYERS[layer_of(&e.from_mod).unwrap()].0,
                e.to.display(),
                LAYERS[layer_of(&e.to_mod).unwrap()].0,
                e.named
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "{} import(s) run up the layers (docs/architecture.md, Layers: a module uses only its own layer and the ones above it in the table):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn no_module_cycles() {
    let edges = edges();
    let key = |e: &Edge| (e.from_mod.clone(), e.to_mod.clone());
    let pairs: Vec<(String, String)> = edges
        .iter()
        .filter(|e| e.from_mod != e.to_mod)
        .map(key)
        .collect();
    let found = cycles(&pairs);
    let text: Vec<String> = found
        .iter()
        .map(|c| format!("  {}:\n{}", c.join(" -> "), show_loop(c, &edges, key)))
        .collect();
    assert!(
        found.is_empty(),
        "modules that import each other (break the loop: move what the lower one needs down):\n{}",
        text.join("\n")
    );
}

/// Is `a` the `mod.rs` (or `x.rs` of `x/`) that declares `b`, or one above it?
fn ancestor(a: &Path, b: &Path) -> bool {
    let dir = match a.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs") | Some("lib.rs") => a.parent().unwrap().to_path_buf(),
        _ => a.with_extension(""),
    };
    b.starts_with(&dir) && a != b
}

#[test]
fn no_file_cycles() {
    let edges = edges();
    let key = |e: &Edge| (e.from.display().to_string(), e.to.display().to_string());
    let pairs: Vec<(String, String)> = edges
        .iter()
        .filter(|e| e.from_mod == e.to_mod)
        .filter(|e| !ancestor(&e.from, &e.to) && !ancestor(&e.to, &e.from))
        .map(key)
        .collect();
    let found = cycles(&pairs);
    let text: Vec<String> = found
        .iter()
        .map(|c| format!("  {}:\n{}", c.join(" -> "), show_loop(c, &edges, key)))
        .collect();
    assert!(
        found.is_empty(),
        "files of one module that import each other (break the loop: move what the lower one needs down):\n{}",
        text.join("\n")
    );
}
