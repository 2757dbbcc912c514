//! The `t3` command line: info, run, sweep, presets, plot, calibrate; with no arguments, the demo.

use std::process::ExitCode;

use clap::Parser;

/// `println!` that returns [`StdoutClosed`] rather than panicking on a closed pipe.
macro_rules! outln {
    ($($t:tt)*) => { $crate::cli::output::out(&format!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` that never panics: a closed standard error loses the note, not the run.
macro_rules! note {
    ($($t:tt)*) => {{ let _ = std::io::Write::write_fmt(&mut std::io::stderr(), format_args!("{}\n", format_args!($($t)*))); }};
}

mod cli;

use cli::args::Cli;
use cli::dispatch;
use cli::output::{chain, StdoutClosed};

fn main() -> ExitCode {
    // Anchors the clock every timing sample is stamped with (seconds since process start).
    t3_wgpu::stats::since_start();
    let cli = Cli::parse();
    // Every environment variable, checked once here, before any command starts.
    let env = t3_wgpu::settings::check_environment(&cli::run::flag_options(&cli.gpu))
        .inspect(|env| env.warnings.iter().for_each(|w| note!("{w}")));
    match env
        .map_err(anyhow::Error::from)
        .and_then(|_| dispatch(&cli))
    {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of a pipe stopped reading: nothing is wrong, and nothing is left to say.
        Err(e) if e.downcast_ref::<StdoutClosed>().is_some() => ExitCode::SUCCESS,
        // A parameter out of range is a usage error (exit 2, as clap's own); anything else is a
        // runtime failure (exit 1).
        Err(e)
            if matches!(
                e.downcast_ref::<t3_wgpu::Error>(),
                Some(t3_wgpu::Error::Invalid { .. })
            ) =>
        {
            note!(
                "error: {}\n\nFor more information, try '--help'.",
                chain(&e)
            );
            ExitCode::from(2)
        }
        Err(e) => {
            note!("error: {}", chain(&e));
            ExitCode::from(1)
        }
    }
}
