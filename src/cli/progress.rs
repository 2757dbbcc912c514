//! What a run is doing while it works, on standard error where that is a terminal: the phase, the
//! timed run under way and the time since it began (a large plan on a CPU adapter takes minutes).

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::Duration;

use t3_wgpu::experiment::Rep;

/// A spinner with the phase's words; nothing where standard error is not a terminal.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    /// Timed runs seen so far, per thing timed.
    runs: RefCell<HashMap<String, usize>>,
}

impl Progress {
    pub fn start(phase: &str) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .expect("template"),
            );
            b.enable_steady_tick(Duration::from_millis(250));
            b.set_message(phase.to_string());
            b
        });
        Progress {
            bar,
            runs: RefCell::new(HashMap::new()),
        }
    }

    pub fn phase(&self, phase: &str) {
        if let Some(b) = &self.bar {
            b.set_message(phase.to_string());
        }
    }

    /// Sees each timed run (`experiment::measure_with`'s seam) and says which it was.
    pub fn timed(&self, what: &str, _: &mut Rep) -> t3_wgpu::Result<()> {
        if let Some(b) = &self.bar {
            let mut runs = self.runs.borrow_mut();
            let n = runs.entry(what.to_string()).or_default();
            *n += 1;
            b.set_message(format!("timing {what}: run {n} (warm-up first)"));
        }
        Ok(())
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
