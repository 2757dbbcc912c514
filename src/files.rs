//! The files the tool reads and writes: reads bounded in size that never block, and output paths
//! checked before any GPU work so that a bad path costs nothing and loses no results.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Most bytes a link table may hold (a table of a few dozen rows is a few kB).
pub const MAX_TABLE_BYTES: u64 = 1 << 20;

/// Most bytes a sweep CSV may hold for `t3 plot` (a million rows).
pub const MAX_CSV_BYTES: u64 = 256 << 20;

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Reads `path` as UTF-8 text of at most `limit` bytes. Only regular files are opened: a FIFO
/// would block the open until a writer came, and a device such as /dev/zero never ends.
pub fn read_text(path: &str, what: &'static str, limit: u64) -> Result<String> {
    let p = Path::new(path);
    let meta = std::fs::metadata(p).map_err(|e| io(p, e))?;
    if !meta.is_file() {
        return Err(Error::invalid(
            what,
            path,
            "a regular file (not a directory, FIFO or device)",
        ));
    }
    if meta.len() > limit {
        return Err(too_long(what, path, limit));
    }
    let f = std::fs::File::open(p).map_err(|e| io(p, e))?;
    let mut bytes = Vec::new();
    // The size can change between the check and the read: the read itself stops past the limit.
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io(p, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_long(what, path, limit));
    }
    String::from_utf8(bytes).map_err(|_| Error::invalid(what, path, "UTF-8 text"))
}

fn too_long(what: &'static str, path: &str, limit: u64) -> Error {
    Error::invalid(what, path, format!("a file of at most {limit} bytes"))
}

/// `path` with `.` and `..` taken out and made absolute against the working directory, so that two
/// spellings of one file compare equal whether or not it exists yet.
fn normal(path: &Path) -> PathBuf {
    // `absolute` joins the working directory (kept as given if it cannot be read); `.` first, so
    // that an empty path names the working directory itself.
    let abs = std::path::absolute(Path::new(".").join(path)).unwrap_or_else(|_| path.into());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Most symbolic links followed from one path (Linux's own bound).
const MAX_LINKS: usize = 40;

/// The path whose directory entry a write to `path` replaces: `path` with every symbolic link in its
/// last component followed (a link to a table is written through, the link kept), so that the
/// temporary file and the rename happen beside the file the user means.
fn resolve(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow"
    )))
}

/// The directory a path's file lives in ("." for a bare name).
fn dir_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A file as the operating system knows it: device and inode where the file exists (two names of
/// one file, a hard link, compare equal), else None.
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// What a kind of file that is not a regular one is called in a message.
fn kind(t: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Names of temporary files: unique in this process, and in others by the process id.
fn temp_name() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(".t3-{}-{n}.tmp", std::process::id())
}

/// A new temporary file in `dir` (never an existing one), and its path.
fn temp_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    loop {
        let p = dir.join(temp_name());
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether a file can be created in `dir`: one is created and removed (permissions alone do not
/// tell: /sys and /proc refuse new files to root too).
// wasm32's File has no Drop (no files there): the drop only matters natively.
#[cfg_attr(target_arch = "wasm32", allow(clippy::drop_non_drop))]
fn probe(dir: &Path) -> std::io::Result<()> {
    let (p, f) = temp_in(dir)?;
    drop(f);
    std::fs::remove_file(p)
}

/// Whether `name` is one of the files a dump writes or replaces in its directory: meta.json and
/// every rank's `rank{p}_{a,b,out}.npy` (those of an earlier dump with more ranks are removed).
pub fn is_dump_file(name: &str) -> bool {
    if name == "meta.json" {
        return true;
    }
    let Some(rest) = name.strip_prefix("rank") else {
        return false;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    digits > 0 && ["_a.npy", "_b.npy", "_out.npy"].contains(&&rest[digits..])
}

/// What a command does with a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Reads it.
    Input,
    /// Writes (replaces) it; `-` is standard output.
    Output,
    /// Writes a dump into it: a directory, with the names [`is_dump_file`] accepts.
    Dump,
}

/// One file of a command, as checked: where it is (canonical directory and name) and what it is.
struct Known {
    what: &'static str,
    path: String,
    role: Role,
    /// The canonical path of its directory entry (of the directory, for a dump).
    at: PathBuf,
    /// Device and inode where it exists.
    id: Option<(u64, u64)>,
    /// For a dump: the identities of the dump's files that already exist in it.
    owned: Vec<(u64, u64)>,
}

/// The files one command reads and writes, checked together before any GPU work: every output can
/// be written (a probe file is created and removed in its directory), no output is a directory,
/// FIFO or device, and no output is an input or another output (compared as files: canonical paths
/// and device/inode, so a symbolic or hard link to another of them is caught; a dump's own names
/// included).
#[derive(Default)]
pub struct Files {
    items: Vec<(&'static str, String, Role)>,
}

impl Files {
    /// A file the command reads (`what` names its flag or variable).
    pub fn input(mut self, what: &'static str, path: &str) -> Self {
        self.items.push((what, path.to_string(), Role::Input));
        self
    }

    /// A file the command writes; `-` is standard output.
    pub fn output(mut self, what: &'static str, path: &str) -> Self {
        self.items.push((what, path.to_string(), Role::Output));
        self
    }

    /// A directory the command dumps into.
    pub fn dump(mut self, what: &'static str, path: &str) -> Self {
        self.items.push((what, path.to_string(), Role::Dump));
        self
    }

    /// Checks every file on its own, then each pair. Creates nothing that stays.
    pub fn check(&self) -> Result<()> {
        // A file named inside a dump that does not exist yet: refused as the dump's, not as a path
        // in a missing directory.
        for (dw, dp, dr) in &self.items {
            for (w, p, r) in &self.items {
                let dump_name = Path::new(p)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_dump_file);
                if *dr == Role::Dump
                    && *r != Role::Dump
                    && p != "-"
                    && dump_name
                    && normal(Path::new(p)).parent() == Some(normal(Path::new(dp)).as_path())
                {
                    return Err(Error::invalid(
                        w,
                        p,
                        format!("a path of its own ({dw} writes that file in its directory)"),
                    ));
                }
            }
        }
        let mut known: Vec<Known> = Vec::new();
        let mut stdout: Option<&'static str> = None;
        for (what, path, role) in &self.items {
            let (what, path, role) = (*what, path.as_str(), *role);
            if path == "-" && role == Role::Output {
                if let Some(first) = stdout {
                    return Err(Error::invalid(
                        what,
                        "-",
                        format!("a file: {first} already writes to standard output"),
                    ));
                }
                stdout = Some(what);
                continue;
            }
            let k = match role {
                Role::Input => input_file(what, path),
                Role::Output => output_file(what, path)?,
                Role::Dump => dump_dir(what, path)?,
            };
            for other in &known {
                clash(other, &k)?;
            }
            known.push(k);
        }
        Ok(())
    }
}

/// Refuses `b` where it and `a` (checked before it) are one file, or one is inside the other's dump.
fn clash(a: &Known, b: &Known) -> Result<()> {
    if a.role == Role::Input && b.role == Role::Input {
        return Ok(());
    }
    let verb = |k: &Known| match k.role {
        Role::Input => "reads that file",
        Role::Output => "writes there too",
        Role::Dump => "dumps there",
    };
    let refuse = |by: &Known, why: &str| {
        Err(Error::invalid(
            b.what,
            &b.path,
            format!("a path of its own ({} {why})", by.what),
        ))
    };
    let same = a.at == b.at || (a.id.is_some() && a.id == b.id);
    if same {
        return refuse(a, verb(a));
    }
    // A dump against a file: the file must not be one of the dump's, nor where its directory goes.
    for (dump, file) in [(a, b), (b, a)] {
        if dump.role != Role::Dump || file.role == Role::Dump {
            continue;
        }
        let in_dump = file.at.parent() == Some(dump.at.as_path())
            && file
                .at
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_dump_file);
        let linked = file.id.is_some_and(|id| dump.owned.contains(&id));
        if in_dump || linked {
            return if std::ptr::eq(dump, a) {
                refuse(a, "writes that file in its directory")
            } else {
                Err(Error::invalid(
                    b.what,
                    &b.path,
                    format!(
                        "a directory none of whose dump files is another's ({} {} {}{})",
                        a.what,
                        if a.role == Role::Input {
                            "reads"
                        } else {
                            "writes"
                        },
                        a.path,
                        if linked { ", a link to one" } else { "" }
                    ),
                ))
            };
        }
        if dump.at.starts_with(&file.at) {
            return refuse(a, "needs that path for a directory");
        }
    }
    Ok(())
}

/// An input: where it is, if it exists (a missing one fails when it is read, naming it).
fn input_file(what: &'static str, path: &str) -> Known {
    let p = Path::new(path);
    let meta = std::fs::metadata(p).ok();
    Known {
        what,
        path: path.to_string(),
        role: Role::Input,
        at: std::fs::canonicalize(p).unwrap_or_else(|_| normal(p)),
        id: meta.as_ref().and_then(identity),
        owned: Vec::new(),
    }
}

/// Checks that `path` can take a new file (`what` names the flag): not empty, not a directory,
/// FIFO or device (nor a link to one), not read-only, in a directory where a file can be created.
fn output_file(what: &'static str, path: &str) -> Result<Known> {
    if path.trim().is_empty() {
        return Err(Error::invalid(what, "\"\"", "a file path"));
    }
    let p = Path::new(path);
    if path.ends_with('/') || path.ends_with("/.") || p.file_name().is_none() {
        return Err(Error::invalid(
            what,
            path,
            "a file path (this names a directory)",
        ));
    }
    let target =
        resolve(p).map_err(|e| Error::invalid(what, path, format!("a file path ({e})")))?;
    let meta = std::fs::symlink_metadata(&target).ok();
    if let Some(m) = &meta {
        if m.is_dir() {
            return Err(Error::invalid(
                what,
                path,
                "a file path (this is a directory)",
            ));
        }
        if !m.is_file() {
            return Err(Error::invalid(
                what,
                path,
                format!(
                    "a regular file or a new path (this is {})",
                    kind(m.file_type())
                ),
            ));
        }
        if m.permissions().readonly() {
            return Err(Error::invalid(
                what,
                path,
                "a writable file (it is read-only)",
            ));
        }
    }
    let dir = dir_of(&target);
    let canon = match std::fs::canonicalize(&dir) {
        Ok(d) if d.is_dir() => d,
        _ => {
            return Err(Error::invalid(
                what,
                path,
                format!(
                    "a path in an existing directory ({} is not one)",
                    normal(&dir).display()
                ),
            ))
        }
    };
    probe(&canon).map_err(|e| {
        Error::invalid(
            what,
            path,
            format!(
                "a path where a file can be written (creating one in {} failed: {e})",
                canon.display()
            ),
        )
    })?;
    let name = target.file_name().unwrap_or_default();
    Ok(Known {
        what,
        path: path.to_string(),
        role: Role::Output,
        at: canon.join(name),
        id: meta.as_ref().and_then(identity),
        owned: Vec::new(),
    })
}

/// Checks that a dump can be made or used at `path`: not empty, not an existing file, its nearest
/// existing ancestor a directory where files can be created, and none of the dump's names in it a
/// directory. Creates nothing that stays.
fn dump_dir(what: &'static str, path: &str) -> Result<Known> {
    if path.trim().is_empty() {
        return Err(Error::invalid(what, "\"\"", "a directory path"));
    }
    let p = normal(Path::new(path));
    let mut at = p.as_path();
    while std::fs::metadata(at).is_err() {
        match at.parent() {
            Some(up) => at = up,
            None => break,
        }
    }
    if !at.is_dir() {
        return Err(Error::invalid(
            what,
            path,
            format!(
                "a directory path ({} exists and is not a directory)",
                at.display()
            ),
        ));
    }
    let canon = std::fs::canonicalize(at)
        .map_err(|e| Error::invalid(what, path, format!("a directory path ({e})")))?;
    probe(&canon).map_err(|e| {
        Error::invalid(
            what,
            path,
            format!(
                "a path where files can be written (creating one in {} failed: {e})",
                canon.display()
            ),
        )
    })?;
    let full = canon.join(p.strip_prefix(at).unwrap_or(Path::new("")));
    let mut owned = Vec::new();
    if at == p {
        for entry in std::fs::read_dir(&canon).map_err(|e| io(&canon, e))? {
            let Ok(entry) = entry else { continue };
            if !entry.file_name().to_str().is_some_and(is_dump_file) {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if m.is_dir() {
                return Err(Error::invalid(
                    what,
                    path,
                    format!(
                        "a directory whose dump files can be replaced ({} is a directory)",
                        entry.path().display()
                    ),
                ));
            }
            owned.extend(identity(&m));
        }
    }
    Ok(Known {
        what,
        path: path.to_string(),
        role: Role::Dump,
        at: full,
        id: None,
        owned,
    })
}

/// Writes `text` to `path` atomically (see [`write_with`]).
pub fn write(path: &str, text: &str) -> Result<()> {
    write_with(Path::new(path), |w| w.write_all(text.as_bytes()))
}

/// Writes a file atomically: `fill` writes a temporary file in the target's directory, which is
/// synced and renamed over the target, so that a reader sees the old file or the new one, never a
/// part, and a failed or killed write leaves the old one. A symbolic link is written through (the
/// link stays); an existing file's permissions are kept.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    let fail = |source| Error::Write {
        path: path.display().to_string(),
        source,
    };
    let target = resolve(path).map_err(fail)?;
    let (tmp, file) = temp_in(&dir_of(&target)).map_err(fail)?;
    let written = (|| {
        let mut w = std::io::BufWriter::new(&file);
        fill(&mut w)?;
        w.flush()?;
        drop(w);
        if let Ok(m) = std::fs::metadata(&target) {
            file.set_permissions(m.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(fail)
}

#[cfg(test)]
mod tests;
