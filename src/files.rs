//! The files the tool reads and writes: reads bounded in size that never block, and output paths
//! checked before any GPU work so that a bad path costs nothing and loses no results.

use std::io::Read;
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
    let base = std::env::current_dir().unwrap_or_default();
    let mut out = PathBuf::new();
    for c in base.join(path).components() {
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

/// Checks that a file can be created at `path` (`what` names the flag): not empty, not a
/// directory, in a directory that exists. Creates nothing.
pub fn check_output_file(what: &'static str, path: &str) -> Result<()> {
    if path.trim().is_empty() {
        return Err(Error::invalid(what, "\"\"", "a file path"));
    }
    let p = Path::new(path);
    if p.is_dir() {
        return Err(Error::invalid(
            what,
            path,
            "a file path (this is a directory)",
        ));
    }
    let parent = normal(p)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if !parent.is_dir() {
        return Err(Error::invalid(
            what,
            path,
            format!(
                "a path in an existing directory ({} is not one)",
                parent.display()
            ),
        ));
    }
    if p.exists() && std::fs::metadata(p).is_ok_and(|m| m.permissions().readonly()) {
        return Err(Error::invalid(
            what,
            path,
            "a writable file (it is read-only)",
        ));
    }
    Ok(())
}

/// Checks that a directory can be made or used at `path`: not empty, not an existing file, and its
/// nearest existing ancestor a directory. Creates nothing.
pub fn check_output_dir(what: &'static str, path: &str) -> Result<()> {
    if path.trim().is_empty() {
        return Err(Error::invalid(what, "\"\"", "a directory path"));
    }
    let p = normal(Path::new(path));
    let mut at = p.as_path();
    while !at.exists() {
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
    Ok(())
}

/// Checks a run's outputs together: each path on its own (`-` is standard output), at most one
/// output on standard output, and no two outputs naming one file (one would overwrite the other).
/// `outputs` holds (flag, path, is a directory).
pub fn check_outputs(outputs: &[(&'static str, &str, bool)]) -> Result<()> {
    let mut seen: Vec<(&'static str, PathBuf)> = Vec::new();
    let mut stdout: Option<&'static str> = None;
    for &(what, path, dir) in outputs {
        if path == "-" && !dir {
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
        if dir {
            check_output_dir(what, path)?;
        } else {
            check_output_file(what, path)?;
        }
        let n = normal(Path::new(path));
        if let Some((other, _)) = seen.iter().find(|(_, s)| *s == n) {
            return Err(Error::invalid(
                what,
                path,
                format!("a path of its own ({other} writes there too)"),
            ));
        }
        seen.push((what, n));
    }
    Ok(())
}

/// Writes `text` to `path`, naming the path in the error.
pub fn write(path: &str, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| io(Path::new(path), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("t3-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_only_bounded_regular_files() {
        let d = dir("read");
        let f = d.join("t.json");
        std::fs::write(&f, "0123456789").unwrap();
        let s = f.to_str().unwrap();
        assert_eq!(read_text(s, "table", 10).unwrap(), "0123456789");
        let e = read_text(s, "table", 9).unwrap_err().to_string();
        assert!(e.contains("at most 9 bytes"), "{e}");
        let e = read_text("/dev/zero", "table", 9).unwrap_err().to_string();
        assert!(e.contains("regular file"), "{e}");
        let e = read_text(d.to_str().unwrap(), "table", 9).unwrap_err();
        assert!(matches!(e, Error::Invalid { .. }), "{e}");
        assert!(matches!(
            read_text(d.join("none").to_str().unwrap(), "table", 9),
            Err(Error::Io { .. })
        ));
    }

    #[test]
    fn output_paths_are_checked_without_creating_anything() {
        let d = dir("out");
        let p = |name: &str| d.join(name).to_str().unwrap().to_string();
        assert!(check_output_file("--json", &p("x.json")).is_ok());
        assert!(check_output_file("--json", &p("nodir/x.json")).is_err());
        assert!(check_output_file("--json", "").is_err());
        assert!(check_output_file("--json", d.to_str().unwrap()).is_err());
        assert!(check_output_dir("--dump", &p("a/b/c")).is_ok());
        std::fs::write(d.join("file"), "").unwrap();
        assert!(check_output_dir("--dump", &p("file/sub")).is_err());
        assert!(check_output_dir("--dump", " ").is_err());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "nothing created");
        let (a, b) = (p("r.csv"), format!("{}/./r.csv", d.display()));
        let e = check_outputs(&[("--json", &a, false), ("--csv", &b, false)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--json writes there too"), "{e}");
        let e = check_outputs(&[("--json", "-", false), ("--csv", "-", false)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--json already writes to standard output"),
            "{e}"
        );
        assert!(check_outputs(&[("--json", "-", false), ("--csv", &a, false)]).is_ok());
    }
}
