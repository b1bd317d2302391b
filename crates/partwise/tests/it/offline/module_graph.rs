//! No import loop in the core. At every level of `src/` (the crate's
//! top-level modules, then the modules inside each folder), one module
//! naming another is an edge, and the edges form no cycle: a concept that
//! needs another's types takes them, never the reverse as well, so each
//! folder can be read (and moved) after the ones it names.
//!
//! Read from the sources: every path that starts `crate::` or `super::`, in
//! a `use` or inline, `{a, b::c}` groups expanded, a name re-exported by a
//! `use` followed to the module it comes from. Test code (`#[cfg(test)]
//! mod ...`) is left out; comments and string literals are not code. A
//! cycle fails naming, for each of its edges, the file and the path.
//!
//! A module's own parent is not an edge (a folder's `mod.rs` and its files
//! name each other by nature), and a glob (`use super::*`, the way a file
//! split out of its folder's `mod.rs` takes the parent's names) is not
//! followed: what such a file names through the glob is not seen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path from the crate root (empty for `lib.rs`).
type ModPath = Vec<String>;

/// Edges that make a loop and are known, as (level, from, to): the test
/// leaves them out, and fails when one is gone so that it is taken out
/// here. `group/described.rs` returns its findings in `readiness`'s type
/// (`readiness::Finding`) while `readiness` runs `described`'s analysis;
/// `findings/drift.rs` computes a topic's drift from `topology`,
/// `inference` and `strategy::resize`, all of which (or what they name)
/// report in `findings`' types. Both go when those findings are of the one
/// type in `findings/` and the drift computation leaves `findings/`.
const KNOWN: &[(&str, &str, &str)] = &[];

struct Crate {
    /// `src/`.
    root: PathBuf,
    /// Every module's file.
    files: BTreeMap<ModPath, PathBuf>,
    /// Every module's code: comments, strings and test modules blanked.
    code: BTreeMap<ModPath, String>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = BTreeMap::new();
        walk(src, src, &mut files);
        let mut code: BTreeMap<ModPath, String> = files
            .iter()
            .map(|(m, p)| (m.clone(), blank(&std::fs::read_to_string(p).unwrap())))
            .collect();
        // Out-of-line test modules, and inline ones, are not the crate's code.
        let mut test_only = BTreeSet::new();
        for (m, text) in code.iter_mut() {
            let (kept, tests) = strip_tests(text);
            *text = kept;
            for t in tests {
                let mut p = m.clone();
                p.push(t);
                test_only.insert(p);
            }
        }
        code.retain(|m, _| !test_only.iter().any(|t| m.starts_with(t)));
        files.retain(|m, _| code.contains_key(m));
        Crate {
            root: src.to_path_buf(),
            files,
            code,
        }
    }

    fn is_module(&self, m: &[String]) -> bool {
        self.files.contains_key(m)
    }

    /// The module a path names, `base` being where it starts: the longest
    /// run of module segments, a name that the module re-exports by a `use`
    /// followed to where it comes from.
    fn resolve(&self, base: &[String], path: &[String], depth: usize) -> ModPath {
        let mut cur: ModPath = base.to_vec();
        for seg in path {
            let mut next = cur.clone();
            next.push(seg.clone());
            if self.is_module(&next) {
                cur = next;
                continue;
            }
            if depth < 8 {
                if let Some(target) = self.reexport(&cur, seg, depth + 1) {
                    return target;
                }
            }
            break;
        }
        cur
    }

    /// Where the name `name`, brought into module `m` by one of its `use`
    /// items, comes from.
    fn reexport(&self, m: &[String], name: &str, depth: usize) -> Option<ModPath> {
        let text = self.code.get(m)?;
        for (i, _) in text.match_indices("use ") {
            if i > 0 && is_ident(text.as_bytes()[i - 1]) {
                continue;
            }
            let mut at = i + 4;
            let (base, _) = match self.start(m, text, &mut at) {
                Some(b) => b,
                None => (m.to_vec(), 0),
            };
            let mut paths = Vec::new();
            tree(text.as_bytes(), &mut at, Vec::new(), &mut paths);
            for p in paths {
                if p.last().map(String::as_str) == Some(name) {
                    let leaf = &p[..p.len() - 1];
                    // A module's own child named bare (`use units::Unit`).
                    if base == m && leaf.first().is_some_and(|c| !self.child(m, c)) {
                        continue;
                    }
                    let mut r = self.resolve(&base, leaf, depth);
                    let mut whole = r.clone();
                    whole.push(name.to_string());
                    if self.is_module(&whole) {
                        r = whole;
                    }
                    return Some(r);
                }
            }
        }
        None
    }

    fn child(&self, m: &[String], c: &str) -> bool {
        let mut p = m.to_vec();
        p.push(c.to_string());
        self.is_module(&p)
    }

    /// At `text[*at..]`, a path's start: `crate::` or a run of `super::`
    /// (after optional whitespace); the module it starts from.
    fn start(&self, m: &[String], text: &str, at: &mut usize) -> Option<(ModPath, usize)> {
        let b = text.as_bytes();
        while *at < b.len() && b[*at].is_ascii_whitespace() {
            *at += 1;
        }
        let rest = &text[*at..];
        if let Some(r) = rest.strip_prefix("crate::") {
            *at = text.len() - r.len();
            return Some((Vec::new(), 0));
        }
        let mut ups = 0;
        let mut r = rest;
        while let Some(x) = r.strip_prefix("super::") {
            ups += 1;
            r = x;
        }
        if ups == 0 || ups > m.len() {
            return None;
        }
        *at = text.len() - r.len();
        Some((m[..m.len() - ups].to_vec(), ups))
    }

    /// Every module each module names, with the path that names it.
    fn references(&self) -> Vec<(ModPath, ModPath, String)> {
        let mut out = Vec::new();
        for (m, text) in &self.code {
            let b = text.as_bytes();
            let mut i = 0;
            while i < b.len() {
                let starts = (b[i..].starts_with(b"crate::") || b[i..].starts_with(b"super::"))
                    && (i == 0 || !(is_ident(b[i - 1]) || b[i - 1] == b':' || b[i - 1] == b'$'));
                if !starts {
                    i += 1;
                    continue;
                }
                let mut at = i;
                let Some((base, _)) = self.start(m, text, &mut at) else {
                    i += 1;
                    continue;
                };
                let mut paths = Vec::new();
                tree(b, &mut at, Vec::new(), &mut paths);
                let shown = text[i..at].split_whitespace().collect::<Vec<_>>().join(" ");
                for p in paths {
                    out.push((m.clone(), self.resolve(&base, &p, 0), shown.clone()));
                }
                i = at.max(i + 1);
            }
        }
        out
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<ModPath, PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let mut m: ModPath = p
                .strip_prefix(root)
                .unwrap()
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
                m.pop();
            }
            out.insert(m, p);
        }
    }
}

/// The text with comments and the contents of string and character
/// literals turned to spaces (newlines kept), so that only code is read.
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank_to = |out: &mut String, from: &[char]| {
        for &ch in from {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
    };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            let end = c[i..]
                .iter()
                .position(|&x| x == '\n')
                .map_or(c.len(), |p| i + p);
            blank_to(&mut out, &c[i..end]);
            i = end;
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank_to(&mut out, &c[i..j.min(c.len())]);
            i = j;
        } else if c[i] == 'r'
            && (i == 0 || !ident(c[i - 1]) || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))))
            && matches!(c.get(i + 1), Some('"' | '#'))
        {
            // A raw string: r"..." or r#"..."#.
            let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let body = i + 2 + hashes;
            let mut j = body;
            while j < c.len() {
                if c[j] == '"'
                    && c[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&x| x == '#')
                        .count()
                        == hashes
                {
                    break;
                }
                j += 1;
            }
            out.extend(&c[i..body]);
            blank_to(&mut out, &c[body..j.min(c.len())]);
            i = j;
            if i < c.len() {
                out.push('"');
                i += 1;
            }
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            out.push('"');
            blank_to(&mut out, &c[i + 1..j.min(c.len())]);
            i = j.min(c.len());
            if i < c.len() {
                out.push('"');
                i += 1;
            }
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{..}'); else a lifetime.
            let end = if c.get(i + 1) == Some(&'\\') {
                c[i + 2..]
                    .iter()
                    .position(|&x| x == '\'')
                    .map(|p| i + 2 + p)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    out.push('\'');
                    blank_to(&mut out, &c[i + 1..e]);
                    out.push('\'');
                    i = e + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The code without its test modules (`#[cfg(test)] mod x { ... }`), and
/// the names of the out-of-line ones (`#[cfg(test)] mod x;`).
fn strip_tests(code: &str) -> (String, Vec<String>) {
    let mut kept = code.to_string();
    let mut out_of_line = Vec::new();
    let mut from = 0;
    while let Some(p) = kept[from..].find("#[cfg(test)]") {
        let at = from + p;
        let after = &kept[at + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let Some(rest) = trimmed.strip_prefix("mod ") else {
            from = at + 1;
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|&c| c.is_alphanumeric() || c == '_')
            .collect();
        let after_name = rest.trim_start()[name.len()..].trim_start();
        let head = kept.len() - after_name.len();
        if after_name.starts_with(';') {
            out_of_line.push(name);
            kept.replace_range(at..head + 1, "");
        } else if after_name.starts_with('{') {
            let b = kept.as_bytes();
            let (mut depth, mut j) = (0usize, head);
            while j < b.len() {
                match b[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            kept.replace_range(at..(j + 1).min(kept.len()), "");
        } else {
            from = at + 1;
            continue;
        }
        from = at;
    }
    (kept, out_of_line)
}

/// The paths of a `use` tree (or an inline path) at `b[*at..]`, each
/// after `prefix`: `a::{b, c::d}` gives `a::b` and `a::c::d`; `self` in a
/// group names the group's own path.
fn tree(b: &[u8], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let ws = |at: &mut usize| {
        while *at < b.len() && b[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    ws(at);
    if *at < b.len() && b[*at] == b'{' {
        *at += 1;
        loop {
            ws(at);
            if *at >= b.len() {
                return;
            }
            if b[*at] == b'}' {
                *at += 1;
                return;
            }
            tree(b, at, prefix.clone(), out);
            ws(at);
            // Skip to the next item (past `as x` renames).
            while *at < b.len() && b[*at] != b',' && b[*at] != b'}' {
                *at += 1;
            }
            if *at < b.len() && b[*at] == b',' {
                *at += 1;
            }
        }
    }
    let start = *at;
    while *at < b.len() && is_ident(b[*at]) {
        *at += 1;
    }
    let seg = String::from_utf8_lossy(&b[start..*at]).into_owned();
    if seg.is_empty() {
        out.push(prefix);
        return;
    }
    let mut path = prefix;
    if seg != "self" {
        path.push(seg);
    }
    if b[*at..].starts_with(b"::") {
        *at += 2;
        tree(b, at, path, out);
    } else {
        out.push(path);
    }
}

/// The edges at each level: (level, from, to) with, for each, the first
/// file and path that makes it.
fn edges(krate: &Crate) -> BTreeMap<(ModPath, String, String), String> {
    let mut out = BTreeMap::new();
    for (from, to, shown) in krate.references() {
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if from.len() <= common || to.len() <= common {
            // A module naming its own parts or one of its parents.
            continue;
        }
        let level = from[..common].to_vec();
        let file = krate.files[&from]
            .strip_prefix(&krate.root)
            .unwrap_or(&krate.files[&from])
            .to_string_lossy()
            .into_owned();
        out.entry((level, from[common].clone(), to[common].clone()))
            .or_insert_with(|| format!("{file}: {shown}"));
    }
    out
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(nodes: &BTreeSet<String>, next: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        next: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        out: Vec<Vec<String>>,
    }
    fn visit(t: &mut T, v: &str) {
        let n = t.index.len();
        t.index.insert(v.to_string(), n);
        t.low.insert(v.to_string(), n);
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        for w in t.next.get(v).into_iter().flatten() {
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[v].min(t.low[w]);
                t.low.insert(v.to_string(), l);
            } else if t.on.contains(w) {
                let l = t.low[v].min(t.index[w]);
                t.low.insert(v.to_string(), l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == v;
                scc.push(w);
                if done {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Every cycle at every level, in words: the modules, then each edge
/// between them with the file and path that makes it.
fn loops(krate: &Crate, known: &[(&str, &str, &str)]) -> Vec<(ModPath, Vec<String>, String)> {
    let mut edges = edges(krate);
    edges.retain(|(l, from, to), _| {
        !known.contains(&(l.join("/").as_str(), from.as_str(), to.as_str()))
    });
    let mut levels: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (level, from, to) in edges.keys() {
        levels
            .entry(level.clone())
            .or_default()
            .entry(from.clone())
            .or_default()
            .insert(to.clone());
    }
    let mut out = Vec::new();
    for (level, next) in &levels {
        let nodes: BTreeSet<String> = next.keys().cloned().collect();
        for scc in cycles(&nodes, next) {
            let mut words = String::new();
            for ((l, from, to), why) in &edges {
                if l == level && scc.contains(from) && scc.contains(to) {
                    words.push_str(&format!("\n    {from} -> {to}: {why}"));
                }
            }
            out.push((level.clone(), scc, words));
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_loop_in_the_core() {
    let krate = Crate::read(&src());
    let failures: Vec<String> = loops(&krate, KNOWN)
        .into_iter()
        .map(|(level, scc, words)| {
            let place = if level.is_empty() {
                "src/".to_string()
            } else {
                format!("src/{}/", level.join("/"))
            };
            format!("a loop among {} in {place}:{words}", scc.join(", "))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let edges = edges(&krate);
    for &(level, from, to) in KNOWN {
        let still = edges
            .keys()
            .any(|(l, f, t)| l.join("/") == level && f == from && t == to);
        assert!(
            still,
            "{from} no longer names {to}: take the edge out of KNOWN"
        );
    }
}

/// The reader sees each form a reference takes, and the checker finds a
/// loop made of them, naming its edges, at the top and inside a folder.
#[test]
fn the_checker_sees_each_form_of_a_loop() {
    let dir = std::env::temp_dir().join(format!("partwise-module-graph-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let put = |p: &str, text: &str| {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    };
    put("lib.rs", "mod a; mod b; mod c; mod d; pub use b::Thing;\n");
    // a -> b and a -> d by a group, b -> c inline, c -> b by lib.rs's
    // re-export, d -> a from a folder's file; inside d, e -> f and f -> e
    // by d's re-export of e's `E`. Comments, strings and tests name a too.
    put("a.rs", "use crate::{b::{self, x}, d};\n");
    put(
        "b.rs",
        "fn f() { crate::c::g(); }\n// crate::a::h in a comment\nconst S: &str = \"crate::a\";\n",
    );
    put(
        "c.rs",
        "use crate::Thing;\n#[cfg(test)]\nmod tests { use crate::a::x; }\n",
    );
    put(
        "d/mod.rs",
        "mod e; mod f; mod g;\npub use e::E;\n#[cfg(test)]\nmod t;\n",
    );
    put("d/e.rs", "use super::f::F;\n");
    put("d/f.rs", "use super::super::d::E;\nuse super::g;\n");
    put("d/g.rs", "use crate::a;\n");
    put("d/t.rs", "use crate::c;\n");
    let krate = Crate::read(&dir);
    let found = loops(&krate, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let mut names: Vec<String> = found
        .iter()
        .map(|(l, s, _)| format!("{}: {}", l.join("/"), s.join(" ")))
        .collect();
    names.sort();
    assert_eq!(names, [": a d", ": b c", "d: e f"], "{found:?}");
    let words: String = found.iter().map(|(_, _, w)| w.as_str()).collect();
    for edge in [
        "a -> d",
        "d -> a",
        "d/g.rs: crate::a",
        "b -> c",
        "c -> b",
        "e -> f",
        "f -> e",
    ] {
        assert!(words.contains(edge), "{edge}: {words}");
    }
}
