//! The code's shape, checked on its text: sizes, import circles, environment reads, run history.
//!
//! No function over 150 lines, no file over 700, no module importing one that imports it back, no
//! environment read below the binary's edge, no benchmark-history references in comments. Test
//! code is exempt from the sizes (a file counts up to its `#[cfg(test)] mod` block; files named
//! `tests.rs` or under a `tests` folder are left out). No GPU and no build of the library's
//! internals: it reads the source tree.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 150;
const MAX_FILE_LINES: usize = 700;

/// Files that may read the environment: the binary's edge.
const ENV_EDGE: [&str; 3] = ["src/main.rs", "src/cli/", "src/settings.rs"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under the source folders (src/, and core/src/ where the workspace has it), as
/// paths relative to the package root.
fn sources() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["src", "core/src"] {
        walk(&root().join(dir), "rs", &mut out);
    }
    out.sort();
    out
}

/// Every file under `dir` whose name ends in `.ext`, relative to the package root.
fn walk(dir: &Path, ext: &str, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(
                p.strip_prefix(root())
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Test code: a `tests.rs`, or anything under a `tests` folder of a source tree.
fn is_test_file(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    parts.last() == Some(&"tests.rs") || parts[..parts.len() - 1].contains(&"tests")
}

/// Source with comments and the insides of string and char literals blanked (lines kept), and the
/// comments' text by line (1-based).
struct Stripped {
    code: String,
    comments: Vec<(usize, String)>,
}

fn strip(src: &str) -> Stripped {
    let c: Vec<char> = src.chars().collect();
    let mut code = String::with_capacity(src.len());
    let mut comments: Vec<(usize, String)> = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    // Blanks c[i..j] into `code`, keeping newlines.
    let blank = |code: &mut String, line: &mut usize, s: &[char]| {
        for &ch in s {
            if ch == '\n' {
                code.push('\n');
                *line += 1;
            } else {
                code.push(' ');
            }
        }
    };
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if c[i] == '/' && at(i + 1) == '/' {
            let end = (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len());
            comments.push((line, c[i..end].iter().collect()));
            blank(&mut code, &mut line, &c[i..end]);
            i = end;
        } else if c[i] == '/' && at(i + 1) == '*' {
            let (mut depth, mut k) = (1, i + 2);
            while k < c.len() && depth > 0 {
                if c[k] == '/' && at(k + 1) == '*' {
                    depth += 1;
                    k += 2;
                } else if c[k] == '*' && at(k + 1) == '/' {
                    depth -= 1;
                    k += 2;
                } else {
                    k += 1;
                }
            }
            let text: String = c[i..k].iter().collect();
            for (n, l) in text.lines().enumerate() {
                comments.push((line + n, l.to_string()));
            }
            blank(&mut code, &mut line, &c[i..k]);
            i = k;
        } else if c[i] == 'r'
            && (i == 0 || !ident(c[i - 1]) || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))))
            && (at(i + 1) == '"' || at(i + 1) == '#')
        {
            // A raw string: r"..", r#".."#.
            let mut k = i + 1;
            let mut hashes = 0;
            while at(k) == '#' {
                hashes += 1;
                k += 1;
            }
            if at(k) != '"' {
                code.push(c[i]);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain((0..hashes).map(|_| '#'))
                .collect();
            let close: Vec<char> = close.chars().collect();
            let mut e = k + 1;
            while e < c.len() && c[e..].iter().take(close.len()).ne(close.iter()) {
                e += 1;
            }
            code.extend(c[i..=k].iter());
            blank(&mut code, &mut line, &c[k + 1..e.min(c.len())]);
            code.extend(c[e.min(c.len())..(e + close.len()).min(c.len())].iter());
            i = e + close.len();
        } else if c[i] == '"' {
            let mut e = i + 1;
            while e < c.len() && c[e] != '"' {
                e += if c[e] == '\\' { 2 } else { 1 };
            }
            code.push('"');
            blank(&mut code, &mut line, &c[i + 1..e.min(c.len())]);
            code.push('"');
            i = e + 1;
        } else if c[i] == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal (a lifetime or label has no closing quote after one char).
            let mut e = i + 1;
            while e < c.len() && c[e] != '\'' {
                e += if c[e] == '\\' { 2 } else { 1 };
            }
            code.push_str("' '");
            i = e + 1;
        } else {
            if c[i] == '\n' {
                line += 1;
            }
            code.push(c[i]);
            i += 1;
        }
    }
    Stripped { code, comments }
}

/// The code up to an inline `#[cfg(test)] mod name {` block (test code is exempt).
fn before_tests(code: &str) -> &str {
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(test)]") {
        let at = from + k;
        let rest = code[at + "#[cfg(test)]".len()..].trim_start();
        let rest = rest.strip_prefix("pub ").unwrap_or(rest);
        if let Some(r) = rest.strip_prefix("mod ") {
            let name_end = r.find(|ch: char| !(ch.is_alphanumeric() || ch == '_'));
            if name_end.is_some_and(|e| r[e..].trim_start().starts_with('{')) {
                return &code[..at];
            }
        }
        from = at + 1;
    }
    code
}

/// Every function with a body: its name, first line (1-based) and length in lines.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let is_ident = |ch: u8| ch.is_ascii_alphanumeric() || ch == b'_';
    let line_of = |k: usize| code[..k].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = code[i..].find("fn ") {
        let at = i + k;
        i = at + 3;
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let name: String = code[at + 3..]
            .trim_start()
            .chars()
            .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` outside the signature's brackets; a `;` first: none.
        let mut depth = 0i32;
        let mut open = None;
        for (j, &ch) in b.iter().enumerate().skip(at) {
            match ch {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut depth = 0i32;
        let mut close = b.len() - 1;
        for (j, &ch) in b.iter().enumerate().skip(open) {
            match ch {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = line_of(at);
        out.push((name, first, line_of(close) - first + 1));
    }
    out
}

/// Fails naming every finding.
fn report(what: &str, found: Vec<String>) {
    assert!(found.is_empty(), "{what}:\n  {}", found.join("\n  "));
}

#[test]
fn no_function_over_150_lines() {
    let mut found = Vec::new();
    for rel in sources().iter().filter(|r| !is_test_file(r)) {
        let s = strip(&read(rel));
        for (name, line, len) in functions(before_tests(&s.code)) {
            if len > MAX_FN_LINES {
                found.push(format!("{rel}:{line} fn {name}: {len} lines"));
            }
        }
    }
    report(&format!("functions over {MAX_FN_LINES} lines"), found);
}

#[test]
fn no_file_over_700_lines() {
    let mut found = Vec::new();
    for rel in sources().iter().filter(|r| !is_test_file(r)) {
        let s = strip(&read(rel));
        let lines = before_tests(&s.code).trim_end().lines().count();
        if lines > MAX_FILE_LINES {
            found.push(format!("{rel}: {lines} lines"));
        }
    }
    report(&format!("files over {MAX_FILE_LINES} lines"), found);
}

/// A crate's modules: module path (segments from its root) -> file, found from the root's `mod`
/// declarations.
fn modules(root_file: &str) -> BTreeMap<Vec<String>, String> {
    let mut out = BTreeMap::new();
    if !root().join(root_file).exists() {
        return out;
    }
    let mut todo = vec![(Vec::new(), root_file.to_string())];
    while let Some((path, file)) = todo.pop() {
        let s = strip(&read(&file));
        let dir = {
            let p = Path::new(&file);
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            let parent = p.parent().unwrap().to_string_lossy().replace('\\', "/");
            if path.is_empty() || stem == "mod" {
                parent
            } else {
                format!("{parent}/{stem}")
            }
        };
        for name in mod_decls(&s.code) {
            let child = [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")]
                .into_iter()
                .find(|f| root().join(f).exists());
            if let Some(child) = child {
                let mut p = path.clone();
                p.push(name);
                todo.push((p, child));
            }
        }
        out.insert(path, file);
    }
    out
}

/// Names of `mod name;` declarations (modules in their own files).
fn mod_decls(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in code.lines() {
        let mut t = l.trim();
        if let Some(r) = t.strip_prefix("pub") {
            t = r.trim_start();
            if t.starts_with('(') {
                t = t[t.find(')').map_or(0, |k| k + 1)..].trim_start();
            }
        }
        if let Some(r) = t.strip_prefix("mod ") {
            if let Some(name) = r.trim().strip_suffix(';') {
                out.push(name.trim().to_string());
            }
        }
    }
    out
}

/// The paths a file names: each `use` tree expanded, and every other `crate::`/`super::`/`std::`
/// path written inline, as segment lists.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let b: Vec<char> = code.chars().collect();
    let mut i = 0;
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < b.len() {
        if !is_ident(b[i]) || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let word: String = b[i..].iter().take_while(|&&ch| is_ident(ch)).collect();
        if word == "use" {
            let end = (i..b.len()).find(|&k| b[k] == ';').unwrap_or(b.len());
            let tree: String = b[i + 3..end].iter().collect();
            // `a as b` kept as `a@b`; every other space dropped.
            let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
            let tree = tree.replace(" as ", "@").replace(' ', "");
            expand(&tree, &mut Vec::new(), &mut out);
            i = end;
            continue;
        }
        if ["crate", "super", "std", "self"].contains(&word.as_str()) {
            let mut k = i;
            let mut segs = Vec::new();
            loop {
                let w: String = b[k..].iter().take_while(|&&ch| is_ident(ch)).collect();
                if w.is_empty() {
                    break;
                }
                k += w.chars().count();
                segs.push(w);
                while k < b.len() && b[k].is_whitespace() {
                    k += 1;
                }
                if b.get(k) == Some(&':') && b.get(k + 1) == Some(&':') {
                    k += 2;
                    while k < b.len() && b[k].is_whitespace() {
                        k += 1;
                    }
                } else {
                    break;
                }
            }
            if segs.len() > 1 {
                out.push(segs);
            }
            i = k.max(i + 1);
            continue;
        }
        i += word.chars().count();
    }
    out
}

/// Expands a use tree (whitespace removed) under `prefix`.
fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim_start_matches("::");
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        for part in split_top(inner) {
            expand(part, prefix, out);
        }
        return;
    }
    match tree.find("::") {
        Some(k) if !tree[..k].contains('{') => {
            prefix.push(tree[..k].to_string());
            expand(&tree[k + 2..], prefix, out);
            prefix.pop();
        }
        _ => {
            let name = tree.split('@').next().unwrap_or(tree);
            let mut p = prefix.clone();
            if !name.is_empty() && name != "*" && name != "self" {
                p.push(name.to_string());
            }
            out.push(p);
        }
    }
}

/// `a,b::{c,d},e` split at its top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (k, ch) in s.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    if from < s.len() {
        out.push(&s[from..]);
    }
    out
}

/// The import graph of one crate at file grain: an edge a -> b where a's code names b through a
/// `crate::` or `super::` path. A module naming its own descendants is left out: they are its
/// parts, declared and re-exported by it, and a child reaching back to its parent is the tree's
/// own shape, not a circle between modules.
fn graph(root_file: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mods = modules(root_file);
    let file_of: HashMap<&Vec<String>, &String> = mods.iter().collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, file) in &mods {
        if is_test_file(file) {
            continue;
        }
        let s = strip(&read(file));
        let edges = g.entry(file.clone()).or_default();
        for p in paths(before_tests(&s.code)) {
            if p.is_empty() {
                continue;
            }
            let mut base: Vec<String> = match p[0].as_str() {
                "crate" => Vec::new(),
                "super" => path.clone(),
                _ => continue,
            };
            let mut rest = &p[1..];
            if p[0] == "super" {
                base.pop();
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            // The deepest module the path reaches.
            for seg in rest {
                base.push(seg.clone());
                if !file_of.contains_key(&base) {
                    base.pop();
                    break;
                }
            }
            if base.starts_with(path) || is_test_file(file_of[&base]) {
                continue;
            }
            edges.insert(file_of[&base].clone());
        }
    }
    g
}

/// Every strongly connected set of more than one module, each as one circle through it.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for m in g.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in g.keys() {
        if done.contains(n) || !reach(n).contains(n) {
            continue;
        }
        // The shortest way back to n (breadth first), and n's whole set marked done.
        let mut prev: HashMap<String, String> = HashMap::new();
        let mut frontier = vec![n.clone()];
        let mut back = None;
        'bfs: while !frontier.is_empty() {
            let mut next = Vec::new();
            for a in &frontier {
                for b in g.get(a).into_iter().flatten() {
                    if b == n {
                        back = Some(a.clone());
                        break 'bfs;
                    }
                    if !prev.contains_key(b) {
                        prev.insert(b.clone(), a.clone());
                        next.push(b.clone());
                    }
                }
            }
            frontier = next;
        }
        let mut cycle = vec![back.expect("n reaches itself")];
        while let Some(p) = prev.get(cycle.last().unwrap()) {
            cycle.push(p.clone());
        }
        if cycle.last() != Some(n) {
            cycle.push(n.clone());
        }
        cycle.reverse();
        cycle.push(n.clone());
        let reach_n = reach(n);
        for m in reach_n.iter().filter(|m| reach(m).contains(n)) {
            done.insert(m.clone());
        }
        out.push(cycle);
    }
    out
}

#[test]
fn no_import_circles() {
    let mut found = Vec::new();
    for root_file in ["src/lib.rs", "src/main.rs", "core/src/lib.rs"] {
        for c in circles(&graph(root_file)) {
            found.push(format!("circle: {}", c.join(" -> ")));
        }
    }
    report("modules that import themselves back", found);
}

#[test]
fn the_environment_is_read_only_at_the_binarys_edge() {
    let mut found = Vec::new();
    for rel in sources().iter().filter(|r| !is_test_file(r)) {
        if ENV_EDGE.iter().any(|e| rel.starts_with(e)) {
            continue;
        }
        let s = strip(&read(rel));
        let code = before_tests(&s.code);
        for p in paths(code) {
            if p.len() >= 2 && p[0] == "std" && p[1] == "env" {
                let k = code.find("std::env").or_else(|| code.find("env::"));
                let at = k.map_or(0, |k| code[..k].matches('\n').count() + 1);
                found.push(format!("{rel}:{at} reads std::env"));
                break;
            }
        }
    }
    report("environment reads below the binary's edge", found);
}

/// Whether `text` names a benchmark run: "run" then a number, as whole words.
fn names_a_run(text: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(k) = text[from..].find("run ") {
        let at = from + k;
        from = at + 1;
        let word_start = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        let digits = text[at + 4..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let end = at + 4 + digits;
        let word_end = end == b.len() || !(b[end].is_ascii_alphanumeric() || b[end] == b'_');
        if word_start && digits > 0 && word_end {
            return true;
        }
    }
    false
}

#[test]
fn no_benchmark_history_in_comments() {
    let mut found = Vec::new();
    let mut files: Vec<String> = sources();
    walk(&root().join("shaders"), "wgsl", &mut files);
    for rel in &files {
        let text = read(rel);
        // WGSL comments are Rust's: `//` and nested `/* */`.
        for (line, comment) in strip(&text).comments {
            if names_a_run(&comment) {
                found.push(format!("{rel}:{line}: {}", comment.trim()));
            }
        }
    }
    report(
        "comments naming benchmark runs (say why, not which run showed it)",
        found,
    );
}

/// The checks themselves catch what they are for.
#[test]
fn the_checks_find_what_they_look_for() {
    let long = format!("fn big() {{\n{}}}\n", "    let x = 1;\n".repeat(160));
    let f = functions(&strip(&long).code);
    assert_eq!((f[0].0.as_str(), f[0].2), ("big", 162));
    // Braces in strings, chars and comments do not count; test blocks are cut.
    let tricky = "fn a() {\n let s = \"}}\"; let c = '}'; // }\n let r = r#\"}\"#;\n}\n\
                  #[cfg(test)]\nmod tests {\n fn t() {}\n}\n";
    let s = strip(tricky);
    let f = functions(before_tests(&s.code));
    assert_eq!(f, vec![("a".to_string(), 1, 4)]);
    assert!(
        names_a_run("// as run 40 showed") && !names_a_run("// rerun 4") && !names_a_run("run 4x")
    );
    let mut g = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        g.entry(a.to_string())
            .or_insert_with(BTreeSet::new)
            .insert(b.to_string());
    }
    assert_eq!(circles(&g), vec![vec!["a", "b", "c", "a"]]);
    let p = paths(
        "use crate::{a::b, c::{d, e as f}};\nuse super::super::x::*;\nlet v = crate::g::h();",
    );
    let p: Vec<String> = p.iter().map(|s| s.join("::")).collect();
    assert_eq!(
        p,
        [
            "crate::a::b",
            "crate::c::d",
            "crate::c::e",
            "super::super::x",
            "crate::g::h"
        ]
    );
}
