//! The library's one error type: every variant names the bad value and the bound it broke.

use std::time::Duration;

/// Everything the library can fail with. Messages name the value and the limit, so a user can act.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No adapter matched the request (backend, name, or none at all).
    #[error("no GPU adapter found ({wanted}); adapters seen: {seen}")]
    NoAdapter { wanted: String, seen: String },

    /// A parameter outside its valid range.
    #[error("invalid {what}: {value} (must be {bound})")]
    Invalid {
        what: &'static str,
        value: String,
        bound: String,
    },

    /// A buffer or binding larger than the adapter allows.
    #[error("{what} needs {bytes} bytes, over the adapter's {limit_name} of {limit} bytes; try a smaller shape (--shape, or --scale with a preset)")]
    TooLarge {
        what: String,
        bytes: u64,
        limit_name: &'static str,
        limit: u64,
    },

    /// A feature the requested work needs and the adapter lacks.
    #[error("adapter {adapter} lacks feature {feature}, needed for {needed_for}")]
    MissingFeature {
        adapter: String,
        feature: &'static str,
        needed_for: String,
    },

    /// A wgpu validation, out-of-memory or internal error caught by an error scope.
    #[error("GPU error during {during}: {message}")]
    Gpu { during: String, message: String },

    /// The device was lost (driver reset, removal).
    #[error("device lost on adapter {adapter}: {reason}")]
    DeviceLost { adapter: String, reason: String },

    /// A wait ran past its bound.
    #[error("timed out after {} waiting for {pending} (raise the bound with T3_TIMEOUT_S or --timeout)", span(*.after))]
    Timeout { pending: String, after: Duration },

    /// A buffer could not be mapped for reading.
    #[error("could not read back {what}: {message}")]
    Readback { what: String, message: String },

    /// A file could not be read.
    #[error("could not read {}: {source}", named(.path))]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// A file could not be written (the file it would have replaced is left as it was).
    #[error("could not write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A wait's length as a person reads it: seconds, or the unit that shows a tiny bound's digits.
fn span(d: Duration) -> String {
    let s = d.as_secs_f64();
    match s {
        s if s >= 1.0 => format!("{s:.1} s"),
        s if s >= 1e-3 => format!("{:.1} ms", s * 1e3),
        s if s >= 1e-6 => format!("{:.1} µs", s * 1e6),
        _ => format!("{} ns", d.as_nanos()),
    }
}

/// A file's path as an error names it: an empty one said as such (a flag given "").
fn named(path: &str) -> String {
    match path {
        "" => "\"\" (an empty path)".to_string(),
        p => p.to_string(),
    }
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    /// Refuses `bytes` in one buffer or storage binding over the device's `max_buffer` or
    /// `max_binding`, naming the limit.
    pub fn check_size(what: &str, bytes: u64, max_buffer: u64, max_binding: u64) -> Result<()> {
        let (limit_name, limit) = if bytes > max_buffer {
            ("max_buffer_size", max_buffer)
        } else if bytes > max_binding {
            ("max_storage_buffer_binding_size", max_binding)
        } else {
            return Ok(());
        };
        Err(Error::TooLarge {
            what: what.to_string(),
            bytes,
            limit_name,
            limit,
        })
    }

    pub fn invalid(what: &'static str, value: impl ToString, bound: impl ToString) -> Self {
        Error::Invalid {
            what,
            value: value.to_string(),
            bound: bound.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timeout says its bound in digits that show it, however small.
    #[test]
    fn a_timeout_says_its_bound_in_a_unit_that_shows_it() {
        let said = |d: Duration| {
            Error::Timeout {
                pending: "x".into(),
                after: d,
            }
            .to_string()
        };
        for (d, want) in [
            (Duration::from_secs(120), "after 120.0 s "),
            (Duration::from_millis(250), "after 250.0 ms "),
            (Duration::from_millis(5), "after 5.0 ms "),
            (Duration::from_micros(3), "after 3.0 µs "),
            (Duration::from_nanos(1), "after 1 ns "),
        ] {
            assert!(said(d).contains(want), "{d:?}: {}", said(d));
        }
    }
}
