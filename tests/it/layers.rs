//! Which module uses which, read from the source files of `src/`, and the
//! two rules that graph keeps: no cycle of use between modules that are not
//! parent and child, of any length, and every use between the crate's
//! top-level modules goes from a layer to the same one or one below it, in
//! the order docs/ARCHITECTURE.md ("Layers") lists them.
//!
//! A use is a `crate::`, `super::` or `self::` path, in a `use` item (trees
//! with braces included) or written in the code; comments and string
//! literals are skipped. A path names the deepest module it reaches. Uses
//! between a module and its ancestor or descendant are allowed (a parent
//! lists its children, a child takes its parent's helpers); any other use
//! counts, from the uses' two modules up to the children of their nearest
//! common ancestor, so that `tools::corpus` using `backend` is `tools` using
//! `backend`, and `tools::corpus` using `super::papers` is a use between the
//! siblings `tools::corpus` and `tools::papers`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

fn name(module: &[String]) -> String {
    if module.is_empty() { "crate".into() } else { module.join("::") }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of Rust source with their line numbers, comments and
/// literals left out (only paths and braces matter here).
fn tokens(source: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let (mut at, mut line) = (0, 1);
    let count_lines = |from: usize, to: usize, line: &mut usize| {
        *line += chars[from..to.min(chars.len())].iter().filter(|c| **c == '\n').count();
    };
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            let (start, mut depth) = (at, 0);
            while at < chars.len() {
                if chars[at] == '/' && chars.get(at + 1) == Some(&'*') {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars.get(at + 1) == Some(&'/') {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
            count_lines(start, at, &mut line);
        } else if c == '"' {
            let start = at;
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            count_lines(start, at, &mut line);
        } else if c == '\'' {
            // A character literal ('x', '\n', '{') or a lifetime ('a).
            if next == Some('\\') {
                at += 2;
                while at < chars.len() && chars[at] != '\'' {
                    at += 1;
                }
                at += 1;
            } else if chars.get(at + 2) == Some(&'\'') {
                at += 3;
            } else {
                at += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = at;
            while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
                at += 1;
            }
            let word: String = chars[start..at].iter().collect();
            let hashes = chars[at..].iter().take_while(|c| **c == '#').count();
            let raw_string =
                matches!(word.as_str(), "r" | "br" | "cr") && chars.get(at + hashes) == Some(&'"');
            if raw_string {
                let start = at;
                at += hashes + 1;
                while at < chars.len() {
                    let closes = chars[at] == '"'
                        && chars[at + 1..].iter().take_while(|c| **c == '#').count() >= hashes;
                    at += 1;
                    if closes {
                        at += hashes;
                        break;
                    }
                }
                count_lines(start, at, &mut line);
            } else if matches!(word.as_str(), "b" | "c") && chars.get(at) == Some(&'"') {
                // A byte or C string: the string branch takes it next round.
            } else {
                out.push((Token::Ident(word), line));
            }
        } else if c.is_ascii_digit() {
            while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
                at += 1;
            }
        } else if c == ':' && next == Some(':') {
            out.push((Token::PathSep, line));
            at += 2;
        } else {
            if c == '\n' {
                line += 1;
            } else if !c.is_whitespace() {
                out.push((Token::Punct(c), line));
            }
            at += 1;
        }
    }
    out
}

/// One use found in a file: from which module, the path as written, where.
#[derive(Clone, Debug)]
struct Use {
    from: Module,
    path: Module,
    file: String,
    line: usize,
    written: String,
}

/// Reads a path tree starting at `tokens[at]` (just after an anchor's `::`)
/// and returns every full path it names, with where reading stopped.
fn path_tree(tokens: &[(Token, usize)], mut at: usize, prefix: &[String]) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(at).map(|t| &t.0) {
            Some(Token::Ident(word)) => {
                path.push(word.clone());
                at += 1;
                if tokens.get(at).map(|t| &t.0) == Some(&Token::PathSep) {
                    at += 1;
                    continue;
                }
                return (vec![path], at);
            }
            Some(Token::Punct('{')) => {
                at += 1;
                let mut all = Vec::new();
                loop {
                    match tokens.get(at).map(|t| &t.0) {
                        Some(Token::Punct('}')) | None => return (all, at + 1),
                        Some(Token::Punct(',')) => at += 1,
                        _ => {
                            let (paths, next) = path_tree(tokens, at, &path);
                            all.extend(paths);
                            // `self`, `*` or `as name` end a branch without a path.
                            at = if next == at { at + 1 } else { next };
                        }
                    }
                }
            }
            _ => return (vec![path], at),
        }
    }
}

/// The uses in one file whose own module is `module`, and the inline
/// modules it declares (`mod tests { … }`).
fn uses_in(file: &str, module: &[String], source: &str) -> (Vec<Use>, Vec<Module>) {
    let tokens = tokens(source);
    let mut uses = Vec::new();
    let mut inline = Vec::new();
    // The inline modules open at this point, with the brace depth each opened at.
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut at = 0;
    while at < tokens.len() {
        let here: Module = module.iter().cloned().chain(open.iter().map(|(name, _)| name.clone())).collect();
        match &tokens[at].0 {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if open.last().is_some_and(|(_, opened)| *opened == depth) {
                    open.pop();
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some((Token::Ident(child), _)), Some((Token::Punct('{'), _))) =
                    (tokens.get(at + 1), tokens.get(at + 2))
                {
                    open.push((child.clone(), depth));
                    inline.push(here.iter().cloned().chain([child.clone()]).collect());
                    depth += 1;
                    at += 3;
                    continue;
                }
            }
            Token::Ident(word)
                if matches!(word.as_str(), "crate" | "super" | "self")
                    && tokens.get(at + 1).map(|t| &t.0) == Some(&Token::PathSep)
                    && (at == 0 || tokens[at - 1].0 != Token::PathSep) =>
            {
                let line = tokens[at].1;
                let mut anchor: Module = match word.as_str() {
                    "crate" => Vec::new(),
                    _ => here.clone(),
                };
                let mut next = at;
                let mut written = word.clone();
                if word == "super" {
                    anchor.pop();
                }
                next += 2;
                while let (Some((Token::Ident(more), _)), Some((Token::PathSep, _))) =
                    (tokens.get(next), tokens.get(next + 1))
                {
                    if more != "super" {
                        break;
                    }
                    anchor.pop();
                    written.push_str("::super");
                    next += 2;
                }
                let (paths, end) = path_tree(&tokens, next, &anchor);
                for path in paths {
                    let rest = &path[anchor.len().min(path.len())..];
                    let rest: Vec<&str> =
                        rest.iter().map(String::as_str).filter(|segment| *segment != "self").collect();
                    let shown = if rest.is_empty() {
                        written.clone()
                    } else {
                        format!("{written}::{}", rest.join("::"))
                    };
                    uses.push(Use { from: here.clone(), path, file: file.to_string(), line, written: shown });
                }
                at = end.max(at + 1);
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    (uses, inline)
}

/// The module a path names: its longest prefix that is a module.
fn resolve(path: &[String], modules: &BTreeSet<Module>) -> Module {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| modules.contains(prefix))
        .unwrap_or_default()
}

fn is_ancestor(a: &[String], b: &[String]) -> bool {
    a.len() <= b.len() && b[..a.len()] == *a
}

/// One use between two modules that are not parent and child, counted
/// between the children of their nearest common ancestor.
#[derive(Clone, Debug)]
struct Edge {
    from: Module,
    to: Module,
    evidence: Use,
}

/// Every file's uses (`files`: path shown in messages, its module, its text).
fn edges(files: &[(String, Module, String)]) -> Vec<Edge> {
    let mut modules: BTreeSet<Module> = BTreeSet::new();
    let mut uses = Vec::new();
    for (file, module, text) in files {
        let (found, inline) = uses_in(file, module, text);
        modules.insert(module.clone());
        modules.extend(inline);
        uses.extend(found);
    }
    let mut out = Vec::new();
    for found in uses {
        let target = resolve(&found.path, &modules);
        if is_ancestor(&found.from, &target) || is_ancestor(&target, &found.from) {
            continue;
        }
        let common = found.from.iter().zip(&target).take_while(|(a, b)| a == b).count();
        out.push(Edge {
            from: found.from[..=common].to_vec(),
            to: target[..=common].to_vec(),
            evidence: found.clone(),
        });
    }
    out
}

fn describe(edge: &Edge) -> String {
    format!(
        "{} uses {} ({}:{}: `{}`)",
        name(&edge.from),
        name(&edge.to),
        edge.evidence.file,
        edge.evidence.line,
        edge.evidence.written
    )
}

/// Each cycle among the edges, as a sentence naming its modules in order
/// and the use behind each step.
fn cycles(edges: &[Edge]) -> Vec<String> {
    let mut graph: BTreeMap<&Module, BTreeMap<&Module, &Edge>> = BTreeMap::new();
    for edge in edges {
        graph.entry(&edge.from).or_default().entry(&edge.to).or_insert(edge);
    }
    // For each module, the shortest way back to it, if any; a cycle is
    // reported once, from its least module.
    let mut found = BTreeSet::new();
    let mut out = Vec::new();
    for start in graph.keys() {
        let mut previous: BTreeMap<&Module, &Module> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([*start]);
        let mut closing = None;
        while let Some(module) = queue.pop_front() {
            for next in graph.get(module).into_iter().flat_map(|n| n.keys()) {
                if next == start {
                    closing = Some(module);
                    break;
                }
                if !previous.contains_key(next) {
                    previous.insert(next, module);
                    queue.push_back(next);
                }
            }
            if closing.is_some() {
                break;
            }
        }
        let Some(mut last) = closing else { continue };
        let mut ring = vec![last];
        while last != *start {
            last = previous[last];
            ring.push(last);
        }
        ring.reverse();
        let least = ring.iter().min().unwrap();
        let at = ring.iter().position(|m| m == least).unwrap();
        ring.rotate_left(at);
        if !found.insert(ring.clone()) {
            continue;
        }
        let steps: Vec<String> =
            (0..ring.len()).map(|i| describe(graph[ring[i]][ring[(i + 1) % ring.len()]])).collect();
        let names: Vec<String> = ring.iter().chain([&ring[0]]).map(|m| name(m)).collect();
        out.push(format!("cycle of use {}: {}", names.join(" -> "), steps.join("; ")));
    }
    out
}

/// The files of `src/` that belong to the library, with their modules.
fn library_files() -> Vec<(String, Module, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut pending = vec![root.join("src")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path.strip_prefix(root.join("src")).unwrap().with_extension("");
            let mut module: Module =
                relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            match module.as_slice() {
                // The binary is its own crate, above the library.
                [only] if only == "main" => continue,
                [only] if only == "lib" => module.clear(),
                [.., last] if last == "mod" => {
                    module.pop();
                }
                _ => {}
            }
            let shown =
                format!("src/{}", path.strip_prefix(root.join("src")).unwrap().display()).replace('\\', "/");
            out.push((shown, module, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn no_module_of_src_is_in_a_cycle_of_use() {
    let files = library_files();
    assert!(files.len() > 20, "src/ was not read: {} files", files.len());
    let edges = edges(&files);
    // The reader must see the uses that are there, or the test proves nothing.
    assert!(
        edges.iter().any(|e| name(&e.from) == "tools" && name(&e.to) == "backend"),
        "the graph misses the tools' use of the backend: {edges:?}"
    );
    assert!(
        edges.iter().any(|e| name(&e.from) == "tools::corpus" && name(&e.to) == "tools::papers"),
        "the graph misses a use between sibling modules through super::"
    );
    let cycles = cycles(&edges);
    assert!(cycles.is_empty(), "modules of src/ use each other in a circle:\n{}", cycles.join("\n"));
}

/// The layers docs/ARCHITECTURE.md lists, top first: each numbered item of
/// its "Layers" section names its modules in backticks before the colon.
fn documented_layers() -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md");
    let text = std::fs::read_to_string(path).unwrap();
    let section =
        text.split("\n## Layers\n").nth(1).expect("docs/ARCHITECTURE.md has a \"## Layers\" section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|line| {
            let (number, rest) = line.split_once(". ")?;
            number.parse::<u32>().ok()?;
            let names = rest.split(':').next()?;
            Some(names.split('`').skip(1).step_by(2).map(str::to_string).collect())
        })
        .collect()
}

#[test]
fn top_level_modules_use_only_their_own_layer_or_those_below() {
    let files = library_files();
    let layers = documented_layers();
    let layer_of: BTreeMap<String, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(index, names)| names.iter().map(move |name| (name.clone(), index + 1)))
        .collect();
    let top: BTreeSet<String> =
        files.iter().filter(|(_, m, _)| m.len() == 1).map(|(_, m, _)| m[0].clone()).collect();
    let unplaced: Vec<&String> = top.iter().filter(|m| !layer_of.contains_key(*m)).collect();
    assert!(unplaced.is_empty(), "docs/ARCHITECTURE.md's layers do not place {unplaced:?}");
    let unknown: Vec<&String> = layer_of.keys().filter(|m| !top.contains(*m)).collect();
    assert!(unknown.is_empty(), "docs/ARCHITECTURE.md's layers name modules src/ lacks: {unknown:?}");
    let mut seen = BTreeSet::new();
    let upward: Vec<String> = edges(&files)
        .iter()
        .filter(|e| e.from.len() == 1 && layer_of[&e.from[0]] > layer_of[&e.to[0]])
        .filter(|e| seen.insert((e.from.clone(), e.to.clone())))
        .map(|e| {
            format!("{} (layer {} uses layer {})", describe(e), layer_of[&e.from[0]], layer_of[&e.to[0]])
        })
        .collect();
    assert!(upward.is_empty(), "uses against docs/ARCHITECTURE.md's layers:\n{}", upward.join("\n"));
}

/// The reader and the rule, on made-up sources: each kind of use is seen,
/// and each kind of circle is named.
#[test]
fn the_cycle_rule_finds_circles_of_every_kind() {
    let file = |path: &str, module: &[&str], text: &str| {
        (path.to_string(), module.iter().map(|s| s.to_string()).collect::<Module>(), text.to_string())
    };
    // Two modules through a use tree; comments and strings do not count.
    let pair = [
        file("src/a.rs", &["a"], "use crate::{b::{self, Thing}, c};\n// crate::z::f\nfn f() {}"),
        file("src/b.rs", &["b"], "fn g() { let s = \"crate::a::x\"; crate::a::f(); }"),
        file("src/c.rs", &["c"], "fn h() { let c = '{'; }"),
    ];
    let found = cycles(&edges(&pair));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("cycle of use a -> b -> a:"), "{found:?}");
    assert!(found[0].contains("src/b.rs:1: `crate::a::f`"), "{found:?}");
    // Three modules, one of them reached from a child module.
    let three = [
        file("src/a.rs", &["a"], "use crate::b::x;"),
        file("src/b.rs", &["b"], "mod inner;"),
        file("src/b/inner.rs", &["b", "inner"], "use crate::c;"),
        file("src/c.rs", &["c"], "fn f() { crate::a::g() }"),
    ];
    let found = cycles(&edges(&three));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("cycle of use a -> b -> c -> a:"), "{found:?}");
    // Siblings through super::, and an inline module's super:: is its file.
    let siblings = [
        file("src/t.rs", &["t"], "mod x; mod y; fn f() { x::g(); y::g(); }"),
        file("src/t/x.rs", &["t", "x"], "use super::{y::h, Tool};"),
        file("src/t/y.rs", &["t", "y"], "fn g() {}\n#[cfg(test)]\nmod tests {\n    use super::super::x;\n}"),
    ];
    let found = cycles(&edges(&siblings));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("cycle of use t::x -> t::y -> t::x:"), "{found:?}");
    // Parent and child may use each other; so may a module and its tests.
    let family = [
        file("src/t.rs", &["t"], "mod x; fn f() { x::g() } use crate::t::x::g;"),
        file("src/t/x.rs", &["t", "x"], "use super::Tool;\nmod tests { use super::*; use crate::t::x; }"),
    ];
    assert_eq!(cycles(&edges(&family)), Vec::<String>::new());
}
