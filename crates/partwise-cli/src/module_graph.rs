//! No command module uses another command's module: what several commands
//! share lives in `cmd/mod.rs`, `cmd/parse.rs`, `cmd/conn.rs`, `cmd/flags.rs` (and the
//! subcommands of `kafka` in `cmd/kafka/mod.rs`), or outside `cmd/`
//! (`ops/`, `render/`, `load.rs`, `input/`, `output.rs`). Read from the sources,
//! so a new `use` of a sibling fails here naming the file and the path.

use std::path::{Path, PathBuf};

/// Modules under `cmd/` that are shared, not commands.
const SHARED: [&str; 5] = ["mod", "parse", "conn", "flags", "duration"];

/// Command directories whose files are commands of their own (`kafka
/// audit`, `kafka group`, ...), not parts of one command (as `report/`'s are).
const GROUPS: [&str; 1] = ["kafka"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The first segment of every path that follows `prefix` in `text`, a
/// `{a, b::c}` group giving each of its items.
fn heads<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    let ident = |s: &'a str| -> &'a str {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    };
    let mut out = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        // `super::super::x` is matched from its last `super::`.
        let rest = &text[i + prefix.len()..];
        if prefix == "super::" && rest.starts_with("super::") {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|s| ident(s.trim())));
        } else {
            out.push(ident(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The commands one file may not name: (what the file is, the module it
/// names, how) for each reference to another command.
fn violations(root: &Path, path: &Path, text: &str) -> Vec<String> {
    let rel: Vec<String> = path
        .strip_prefix(root)
        .unwrap()
        .with_extension("")
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let commands: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .with_extension("")
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| !SHARED.contains(&n.as_str()))
        .collect();
    let own = &rel[0];
    let mut out = Vec::new();
    let mut refuse = |named: &str, how: &str| {
        out.push(format!("cmd/{}.rs names {named} ({how})", rel.join("/")));
    };
    // Paths from the crate root, and `super::` from a file directly in cmd/
    // (or a command's mod.rs), name cmd's modules.
    let top_supers = rel.len() == 1 || rel[1] == "mod";
    let mut top: Vec<&str> = heads(text, "crate::cmd::");
    if top_supers {
        top.extend(heads(text, "super::"));
    } else {
        top.extend(heads(text, "super::super::"));
    }
    for m in top {
        if m != own && commands.iter().any(|c| c == m) {
            refuse(m, "another command");
        }
    }
    // Inside a command group, `super::x` names a sibling subcommand.
    if rel.len() == 2 && rel[1] != "mod" && GROUPS.contains(&own.as_str()) {
        let dir = root.join(own);
        for m in heads(text, "super::") {
            let sibling = dir.join(format!("{m}.rs"));
            if m != rel[1] && m != "mod" && sibling.exists() {
                refuse(&format!("{own}::{m}"), "a sibling subcommand");
            }
        }
    }
    out
}

#[test]
fn no_command_module_imports_another() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
    let mut all = Vec::new();
    files(&root, &mut all);
    all.sort();
    let mut failures = Vec::new();
    for path in &all {
        let stem = path.file_stem().unwrap().to_string_lossy();
        if path.parent() == Some(root.as_path()) && SHARED.contains(&stem.as_ref()) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        failures.extend(violations(&root, path, &text));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The checker sees the references it is for, in each form a module can
/// take, and passes a module's own parts and the shared modules.
#[test]
fn the_checker_sees_each_form_of_a_sibling_reference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
    let at = |p: &str| root.join(p);
    for (file, text, bad) in [
        ("report.rs", "use super::check::load_topology;", true),
        ("report.rs", "use super::{key_source, skew};", true),
        ("report/json.rs", "use crate::cmd::skew::report_json;", true),
        (
            "report/json.rs",
            "x = super::super::redis::check_json;",
            true,
        ),
        (
            "kafka/readiness.rs",
            "use super::group::write_members;",
            true,
        ),
        ("kafka/group.rs", "return super::readiness::run(c);", true),
        ("report/html.rs", "use super::model::Model;", false),
        ("report.rs", "use super::{conn::ConnArgs, parse};", false),
        ("kafka/audit.rs", "use super::{kerr, ConnArgs};", false),
        (
            "kafka/audit.rs",
            "use crate::cmd::parse::{self, Partitioners};",
            false,
        ),
    ] {
        let found = violations(&root, &at(file), text);
        assert_eq!(!found.is_empty(), bad, "{file}: {text}: {found:?}");
    }
}

/// `ops/` is below the commands: the calls they make, which never name a
/// command, its flags or its printer.
#[test]
fn ops_never_names_a_command() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ops");
    let mut all = Vec::new();
    files(&root, &mut all);
    assert!(!all.is_empty());
    let named: Vec<String> = all
        .iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("crate::cmd"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(named.is_empty(), "ops names cmd in {named:?}");
}
