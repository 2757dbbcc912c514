//! Running the `t3` binary from tests: a fresh folder per test, and every run bounded in time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// An empty folder under the temporary directory, named by the test binary (`what`) and `name`.
pub fn tmp(what: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("t3-{what}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `cmd` to its end, or kills it past `secs` (None). Its output is read as it comes, so that a
/// full pipe cannot stall it.
pub fn within(cmd: &mut Command, secs: u64) -> Option<Output> {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run t3");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(o) => Some(o.unwrap()),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            None
        }
    }
}

/// `t3 args` in `dir` with `env` set (and no inherited `T3_TIMEOUT_S`), no standard input; a run
/// still going after `secs` is killed and fails the test: a hang must not hang the suite.
pub fn t3_within(args: &[&str], env: &[(&str, &str)], dir: &Path, secs: u64) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_t3"));
    cmd.args(args)
        .env_remove("T3_TIMEOUT_S")
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null());
    within(&mut cmd, secs).unwrap_or_else(|| panic!("t3 {args:?} still running after {secs} s"))
}
