//! The file guards' tests: refusals, limits, links and atomic writes, on a scratch directory.

use super::*;
use std::collections::BTreeSet;

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

fn check(items: &[(&'static str, &str, char)]) -> Result<()> {
    let mut f = Files::default();
    for &(what, path, role) in items {
        f = match role {
            'i' => f.input(what, path),
            'o' => f.output(what, path),
            _ => f.dump(what, path),
        };
    }
    f.check()
}

fn refused(items: &[(&'static str, &str, char)], needle: &str) {
    let e = check(items).unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
    assert!(e.to_string().contains(needle), "{items:?}: {e}");
}

#[test]
fn output_paths_are_checked_without_creating_anything() {
    let d = dir("out");
    let p = |name: &str| d.join(name).to_str().unwrap().to_string();
    assert!(check(&[("--json", &p("x.json"), 'o')]).is_ok());
    refused(&[("--json", &p("nodir/x.json"), 'o')], "existing directory");
    refused(&[("--json", "", 'o')], "a file path");
    refused(&[("--json", d.to_str().unwrap(), 'o')], "directory");
    refused(
        &[("--json", &(p("x.json") + "/"), 'o')],
        "names a directory",
    );
    assert!(check(&[("--dump", &p("a/b/c"), 'd')]).is_ok());
    std::fs::write(d.join("file"), "").unwrap();
    refused(&[("--dump", &p("file/sub"), 'd')], "not a directory");
    refused(&[("--dump", " ", 'd')], "directory path");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "nothing created");
    let (a, b) = (p("r.csv"), format!("{}/./r.csv", d.display()));
    refused(
        &[("--json", &a, 'o'), ("--csv", &b, 'o')],
        "--json writes there too",
    );
    refused(
        &[("--json", "-", 'o'), ("--csv", "-", 'o')],
        "--json already writes to standard output",
    );
    assert!(check(&[("--json", "-", 'o'), ("--csv", &a, 'o')]).is_ok());
}

#[test]
fn outputs_are_compared_as_files() {
    let d = dir("same");
    let p = |name: &str| d.join(name).to_str().unwrap().to_string();
    std::fs::write(d.join("t.json"), "keep").unwrap();
    std::os::unix::fs::symlink("t.json", d.join("l.json")).unwrap();
    std::fs::hard_link(d.join("t.json"), d.join("h.json")).unwrap();
    for other in ["l.json", "h.json"] {
        refused(
            &[("--json", &p("t.json"), 'o'), ("--csv", &p(other), 'o')],
            "--json writes there too",
        );
        // An input is never an output, however it is named.
        refused(
            &[("--csv", &p(other), 'i'), ("--svg", &p("t.json"), 'o')],
            "--csv reads that file",
        );
    }
    // Inputs may share a file; an output through a dangling link to a creatable file is fine.
    assert!(check(&[("a", &p("t.json"), 'i'), ("b", &p("h.json"), 'i')]).is_ok());
    std::os::unix::fs::symlink("new.json", d.join("dangling")).unwrap();
    assert!(check(&[("--json", &p("dangling"), 'o')]).is_ok());
    std::os::unix::fs::symlink("nodir/new.json", d.join("nowhere")).unwrap();
    refused(&[("--json", &p("nowhere"), 'o')], "existing directory");
    std::os::unix::fs::symlink("loop", d.join("loop")).unwrap();
    refused(&[("--json", &p("loop"), 'o')], "symbolic links");
    // A dump owns meta.json and the rank files in its directory, existing or not, and their
    // other names.
    refused(
        &[
            ("--dump", &p("dd"), 'd'),
            ("--json", &p("dd/meta.json"), 'o'),
        ],
        "--dump writes that file in its directory",
    );
    std::fs::create_dir(d.join("dd")).unwrap();
    std::fs::write(d.join("dd/rank1_out.npy"), "").unwrap();
    std::fs::hard_link(d.join("dd/rank1_out.npy"), d.join("hl.npy")).unwrap();
    refused(
        &[
            ("--dump", &p("dd"), 'd'),
            ("--svg", &p("dd/../dd/rank1_out.npy"), 'o'),
        ],
        "--dump writes that file in its directory",
    );
    refused(
        &[("--svg", &p("hl.npy"), 'o'), ("--dump", &p("dd"), 'd')],
        "a link to one",
    );
    assert!(check(&[("--dump", &p("dd"), 'd'), ("--svg", &p("dd/g.svg"), 'o')]).is_ok());
    refused(
        &[("--json", &p("j"), 'o'), ("--dump", &p("j/sub"), 'd')],
        "needs that path for a directory",
    );
    // Files that are not regular are never opened for writing.
    refused(&[("--json", "/dev/full", 'o')], "a device");
    refused(&[("--json", "/proc/new.json", 'o')], "can be written");
    let names: BTreeSet<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
}

#[test]
fn a_reader_sees_the_old_file_or_the_new_one_never_a_part() {
    let d = dir("race");
    let t = d.join("t");
    let (a, b) = ("a".repeat(1 << 16), "b".repeat(1 << 16));
    write(t.to_str().unwrap(), &a).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (t, stop) = (t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut partial = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let s = std::fs::read(&t).unwrap();
                partial += usize::from(s.len() != 1 << 16);
            }
            partial
        })
    };
    for i in 0..200 {
        write(t.to_str().unwrap(), if i % 2 == 0 { &b } else { &a }).unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(reader.join().unwrap(), 0, "reads of part of a file");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
}

#[test]
fn writes_replace_whole_files_through_links() {
    let d = dir("write");
    let t = d.join("t.json");
    std::fs::write(&t, "old").unwrap();
    std::fs::set_permissions(&t, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink("t.json", d.join("l.json")).unwrap();
    write(d.join("l.json").to_str().unwrap(), "new").unwrap();
    assert_eq!(std::fs::read_to_string(&t).unwrap(), "new");
    assert!(std::fs::symlink_metadata(d.join("l.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&t).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // A failed fill leaves the old file and no temporary one.
    let e = write_with(&t, |w| {
        w.write_all(b"part")?;
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert!(e.to_string().contains("could not write"), "{e}");
    assert_eq!(std::fs::read_to_string(&t).unwrap(), "new");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
}
