//! The docs stay true: every `t3` command in README.md and docs/*.md runs as written (or, marked
//! `# gpu`, parses), and docs/cli.md is the `--help` of every command (T3_BLESS=1 rewrites it).

mod common;

// The binary's own clap definitions, compiled into this test so that a command marked `# gpu` is
// parsed exactly as `t3` parses it, and docs/cli.md is rendered from the same source (args.rs and
// values.rs name each other as `super::`, this crate's root here as src/cli/mod.rs there).
#[allow(dead_code, unused_imports)]
#[path = "../src/cli/args.rs"]
mod args;
#[allow(dead_code, unused_imports)]
#[path = "../src/cli/knobs.rs"]
mod knobs;
#[allow(dead_code, unused_imports)]
#[path = "../src/cli/values.rs"]
mod values;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::{CommandFactory, Parser};

use args::Cli;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One command found in a document's ```sh block.
#[derive(Debug)]
struct DocCommand {
    /// Where it is: file and line.
    at: String,
    /// `NAME=value` settings before `t3`.
    env: Vec<(String, String)>,
    /// The arguments after `t3`.
    args: Vec<String>,
    /// Marked `# gpu`: needs a GPU (or more time than CI has), so only parsed.
    gpu: bool,
}

/// Splits a command line into words as a POSIX shell would for the plain cases the docs use
/// (single and double quotes, backslash escapes); anything else a shell would interpret is refused.
fn words(line: &str, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                any = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                any = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        '$' | '`' => panic!("{at}: expansion in a documented command: {line}"),
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                any = true;
                cur.extend(chars.next());
            }
            '|' | '>' | '<' | ';' | '&' | '$' | '`' | '(' | ')' | '*' | '?' => {
                panic!("{at}: shell syntax `{c}` in a documented command (keep them plain `t3 ...` lines): {line}")
            }
            c if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                any = true;
                cur.push(c);
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Every `t3` command in the ```sh blocks of one markdown file, in order. A line's trailing
/// `# comment` is dropped; a comment starting with `gpu` marks the command as parse-only.
/// A line ending in `\` continues on the next.
fn commands(path: &Path) -> Vec<DocCommand> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path
        .strip_prefix(ROOT)
        .unwrap_or(path)
        .display()
        .to_string();
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut in_other = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(lang) = t.strip_prefix("```") {
            if in_sh || in_other {
                in_sh = false;
                in_other = false;
            } else if matches!(lang.trim(), "sh" | "bash" | "shell" | "console") {
                in_sh = true;
            } else {
                in_other = true;
            }
            continue;
        }
        if !in_sh {
            continue;
        }
        let (start, joined) = match pending.take() {
            Some((start, before)) => (start, format!("{before} {t}")),
            None => (i + 1, t.to_string()),
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((start, head.to_string()));
            continue;
        }
        // The trailing comment: a `#` that starts a word.
        let (cmd, comment) = match joined.find(" #").or(joined.starts_with('#').then_some(0)) {
            Some(k) => (
                &joined[..k],
                joined[k..].trim_start().trim_start_matches('#').trim(),
            ),
            None => (joined.as_str(), ""),
        };
        let at = format!("{name}:{start}");
        let mut w = words(cmd, &at).into_iter().peekable();
        let mut env = Vec::new();
        while let Some((k, v)) = w.peek().and_then(|s| s.split_once('=')) {
            if k.is_empty()
                || !k
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                break;
            }
            env.push((k.to_string(), v.to_string()));
            w.next();
        }
        if w.next().as_deref() != Some("t3") {
            continue;
        }
        out.push(DocCommand {
            at,
            env,
            args: w.collect(),
            gpu: comment.starts_with("gpu"),
        });
    }
    out
}

/// The benchmarks' log keeps each command as it was run that day (flags since renamed or retired
/// among them): a record, not instructions.
const ARCHIVES: [&str; 1] = ["benchmarks-log.md"];

/// README.md, then docs/*.md by name (the archives left out).
fn documents() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| ARCHIVES.iter().any(|a| n == *a))
        })
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t3-docs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every documented command parses as `t3` parses it; every one not marked `# gpu` runs and exits
/// 0, in its document's order, each document in a folder of its own (so one command may read what
/// an earlier one wrote: `t3 calibrate` before `--link-gbps`, a sweep's CSV before `t3 plot`).
#[test]
fn documented_commands_run() {
    let mut failures = Vec::new();
    let mut total = 0;
    let gpu = common::gpu().is_some();
    for doc in documents() {
        let cmds = commands(&doc);
        total += cmds.len();
        let dir = tmp(doc.file_stem().unwrap().to_str().unwrap());
        for c in cmds {
            let argv = std::iter::once("t3".to_string()).chain(c.args.iter().cloned());
            if let Err(e) = Cli::try_parse_from(argv) {
                failures.push(format!(
                    "{}: t3 {}: does not parse:\n{e}",
                    c.at,
                    c.args.join(" ")
                ));
                continue;
            }
            if c.gpu || !gpu {
                continue;
            }
            let started = Instant::now();
            let o = Command::new(env!("CARGO_BIN_EXE_t3"))
                .args(&c.args)
                .envs(c.env.iter().map(|(k, v)| (k, v)))
                .current_dir(&dir)
                .output()
                .expect("run t3");
            eprintln!(
                "{}: t3 {}: exit {:?} in {:.1} s",
                c.at,
                c.args.join(" "),
                o.status.code(),
                started.elapsed().as_secs_f64()
            );
            if !o.status.success() {
                failures.push(format!(
                    "{}: t3 {}: exit {:?}\n{}",
                    c.at,
                    c.args.join(" "),
                    o.status.code(),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
        }
    }
    assert!(total >= 10, "only {total} documented commands found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The extractor itself: markers, continuations, settings, and what is not a command.
#[test]
fn extractor_reads_what_the_docs_write() {
    let d = tmp("extract");
    let md = d.join("x.md");
    std::fs::write(
        &md,
        "t3 run outside a block\n```sh\nt3 info            # adapters\nt3 run --preset gpt3-op-tp8 \\\n   --chunks 2 # gpu: a large preset\n\
         T3_TIMEOUT_S=30 t3 run --shape 64x64x64 --title 'a b'\ncargo test --release\n```\n```text\nt3 not a command\n```\n",
    )
    .unwrap();
    let c = commands(&md);
    assert_eq!(c.len(), 3, "{c:?}");
    assert_eq!(c[0].args, ["info"]);
    assert!(!c[0].gpu);
    assert_eq!(
        c[1].args,
        ["run", "--preset", "gpt3-op-tp8", "--chunks", "2"]
    );
    assert!(c[1].gpu);
    assert!(c[1].at.ends_with(":4"), "{}", c[1].at);
    assert_eq!(c[2].env, [("T3_TIMEOUT_S".to_string(), "30".to_string())]);
    assert_eq!(c[2].args, ["run", "--shape", "64x64x64", "--title", "a b"]);
}

/// docs/cli.md: the long `--help` of `t3` and of every command, as clap renders it.
fn cli_reference() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         Every command's `--help`, generated from the clap definitions in src/cli/args.rs by\n\
         tests/docs.rs, which fails when this page and the definitions drift apart. Do not edit it by\n\
         hand: `T3_BLESS=1 cargo test --release --test docs` rewrites it. Environment variables:\n\
         [environment.md](environment.md). Exit codes: 0 success, 1 a runtime failure, 2 a usage error.\n",
    );
    let mut section = |title: &str, c: &mut clap::Command| {
        let help = c.render_long_help().to_string();
        // Trailing spaces dropped, and the blank lines clap leaves after a flag without help text
        // folded into one.
        let mut text = String::new();
        for line in help.lines().map(str::trim_end) {
            if !(line.is_empty() && (text.is_empty() || text.ends_with("\n\n"))) {
                text.push_str(line);
                text.push('\n');
            }
        }
        out.push_str(&format!(
            "\n## {title}\n\n```text\n{}\n```\n",
            text.trim_end()
        ));
    };
    section("t3", &mut cmd.clone());
    for sub in cmd.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let title = format!("t3 {}", sub.get_name());
        section(&title, sub);
    }
    out
}

#[test]
fn cli_reference_is_current() {
    let want = cli_reference();
    let path = Path::new(ROOT).join("docs/cli.md");
    if std::env::var("T3_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(have.lines().count().min(want.lines().count()));
        panic!(
            "docs/cli.md differs from the clap definitions from line {} on; \
             rewrite it with `T3_BLESS=1 cargo test --release --test docs`",
            line + 1
        );
    }
}
