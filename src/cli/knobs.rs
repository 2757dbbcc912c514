//! `--fused` and `--host-loop`: fused mode's variant and tuning, and the host trigger loop's
//! choices, each a comma list of KEY=VALUE parsed once here into the library's typed values.

use t3_wgpu::config::fused::{
    FusedOptions, Help, Pieces, SpareDispatch, Trigger, MAX_KNOB, MIN_WINDOW,
};
use t3_wgpu::config::host::{
    Handoff, HostGrain, HostOptions, HostWait, SendTrigger, MAX_IN_FLIGHT,
};
use t3_wgpu::gemm::FusedPut;
use t3_wgpu::{Error, Result};

/// Fused mode's keys, each with the name its errors give it.
const FUSED_KEYS: [(&str, &str); 13] = [
    ("trigger", "--fused trigger"),
    ("spare-dispatch", "--fused spare-dispatch"),
    ("spares-at", "--fused spares-at"),
    ("spares", "--fused spares"),
    ("grid", "--fused grid"),
    ("pieces", "--fused pieces"),
    ("put", "--fused put"),
    ("pause", "--fused pause"),
    ("polls", "--fused polls"),
    ("help", "--fused help"),
    ("land", "--fused land"),
    ("window", "--fused window"),
    ("alias", "--fused alias"),
];

/// The host loop's keys, each with the name its errors give it.
const HOST_KEYS: [(&str, &str); 6] = [
    ("in-flight", "--host-loop in-flight"),
    ("grain", "--host-loop grain"),
    ("wait", "--host-loop wait"),
    ("copy-threads", "--host-loop copy-threads"),
    ("handoff", "--host-loop handoff"),
    ("trigger", "--host-loop trigger"),
];

/// Most chunks per rank `--host-loop grain=N` takes (a chunk has at least one row).
const MAX_GRAIN: u32 = 1 << 20;

/// A parsed KEY=VALUE list: each value under the name its errors give it.
struct Pairs(Vec<(&'static str, &'static str, String)>);

impl Pairs {
    fn parse(
        flag: &'static str,
        spec: &str,
        keys: &[(&'static str, &'static str)],
    ) -> Result<Self> {
        let known = || keys.iter().map(|k| k.0).collect::<Vec<_>>().join(", ");
        let mut out: Vec<(&'static str, &'static str, String)> = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((k, v)) = item.split_once('=') else {
                return Err(Error::invalid(
                    flag,
                    format!("'{item}'"),
                    format!("KEY=VALUE, KEY one of {}", known()),
                ));
            };
            let Some(&(key, what)) = keys.iter().find(|(key, _)| *key == k.trim()) else {
                return Err(Error::invalid(
                    flag,
                    format!("key '{}'", k.trim()),
                    format!("one of {}", known()),
                ));
            };
            if out.iter().any(|p| p.0 == key) {
                return Err(Error::invalid(
                    flag,
                    format!("'{key}' twice"),
                    "each key once",
                ));
            }
            out.push((key, what, v.trim().to_string()));
        }
        Ok(Pairs(out))
    }

    /// The value of `key` (with its name), None where it is not given.
    fn get(&self, key: &str) -> Option<(&'static str, &str)> {
        self.0
            .iter()
            .find(|p| p.0 == key)
            .map(|p| (p.1, p.2.as_str()))
    }

    /// One of `words` for `key`, None where not given.
    fn one_of(&self, key: &str, words: &[&'static str]) -> Result<Option<&'static str>> {
        let Some((what, v)) = self.get(key) else {
            return Ok(None);
        };
        match words.iter().find(|w| **w == v) {
            Some(w) => Ok(Some(*w)),
            None => Err(Error::invalid(
                what,
                format!("'{v}'"),
                format!("one of {}", words.join(", ")),
            )),
        }
    }

    /// `Err(word)` for one of `words`, `Ok(n)` for a whole number in `lo..=hi`, None where not given.
    fn word_or_count(
        &self,
        key: &str,
        words: &[&'static str],
        (lo, hi): (u32, u32),
    ) -> Result<Option<std::result::Result<u32, &'static str>>> {
        let Some((what, v)) = self.get(key) else {
            return Ok(None);
        };
        if let Some(w) = words.iter().find(|w| **w == v) {
            return Ok(Some(Err(*w)));
        }
        match v.parse::<u32>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(Some(Ok(n))),
            _ => Err(Error::invalid(
                what,
                format!("'{v}'"),
                format!("{} or a whole number from {lo} to {hi}", words.join(", ")),
            )),
        }
    }

    /// A count for `key` where `word` (its default) is None too.
    fn count(&self, key: &str, word: &'static str, range: (u32, u32)) -> Result<Option<u32>> {
        Ok(self
            .word_or_count(key, &[word], range)?
            .and_then(|c| c.ok()))
    }
}

/// Fused mode's knobs and put, as `--fused` gives them (docs/modes.md#fused-mode): each key not
/// given keeps its default. An invalid value, or a combination the knobs alone rule out (the others
/// depend on the adapter and are refused by lowering), is a usage error naming the key.
pub fn parse_fused(spec: &str) -> Result<(FusedOptions, FusedPut)> {
    let p = Pairs::parse("--fused", spec, &FUSED_KEYS)?;
    let alias = p.one_of("alias", &["on", "off"])? != Some("off");
    let put = match p.one_of("put", &["auto", "store", "coherent", "atomic", "cas"])? {
        Some("store") => FusedPut::Store,
        Some("coherent") => FusedPut::Coherent,
        Some("atomic") => FusedPut::Atomic,
        Some("cas") => FusedPut::Cas,
        _ => FusedPut::Auto,
    };
    let m = MAX_KNOB;
    let options = FusedOptions {
        pieces: match p.word_or_count("pieces", &["link", "auto"], (1, m))? {
            None | Some(Err("auto")) => Pieces::Auto,
            Some(Err(_)) => Pieces::Link,
            Some(Ok(n)) => Pieces::Count(n),
        },
        spares: p.count("spares", "auto", (0, m))?,
        polls: p.count("polls", "default", (0, m))?,
        window: p.count("window", "default", (MIN_WINDOW, u32::MAX))?,
        // `off` is a grid of none (0), which the paying defaults do not override.
        grid: p
            .word_or_count("grid", &["off"], (0, m))?
            .map(|g| g.unwrap_or(0)),
        pause: p.count("pause", "auto", (0, m))?,
        spare_dispatch: match p.one_of("spare-dispatch", &["auto", "gemm", "own"])? {
            Some("gemm") => Some(SpareDispatch::Gemm),
            Some("own") => Some(SpareDispatch::Own),
            _ => None,
        },
        help: match p.one_of("help", &["always", "idle", "never"])? {
            Some("idle") => Help::Idle,
            Some("never") => Help::Never,
            _ => Help::Always,
        },
        trigger: match p.one_of("trigger", &["auto", "epilogue", "spares"])? {
            Some("epilogue") => Some(Trigger::Epilogue),
            Some("spares") => Some(Trigger::Spares),
            _ => None,
        },
        spares_first: match p.one_of("spares-at", &["auto", "after", "before"])? {
            Some("after") => Some(false),
            Some("before") => Some(true),
            _ => None,
        },
        land: match p.one_of("land", &["auto", "on", "off"])? {
            Some("on") => Some(true),
            Some("off") => Some(false),
            _ => None,
        },
        alias,
        // Asked for by the outputs that carry a timeline, not by a knob.
        timeline: false,
    };
    // The combinations that the knobs alone rule out (the others depend on the adapter).
    let own = options.spare_dispatch == Some(SpareDispatch::Own);
    let gemm = options.spare_dispatch == Some(SpareDispatch::Gemm);
    let refuse = |key: &str, bound: &str| {
        let (what, v) = p.get(key).expect("a key that was given");
        Err(Error::invalid(what, format!("'{v}'"), bound))
    };
    if options.help == Help::Never && (!own || alias) {
        return refuse(
            "help",
            "always, idle, or never with spare-dispatch=own and alias=off (the spares must run after the GEMM)",
        );
    }
    if options.trigger == Some(Trigger::Spares) && gemm {
        return refuse(
            "trigger",
            "epilogue, or spares with spare-dispatch=own (the watched GEMM has no spares in its dispatch)",
        );
    }
    if options.spares_first == Some(true) && (gemm || !alias) {
        return refuse(
            "spares-at",
            "after, or before with spare-dispatch=own and the aliased views (not alias=off)",
        );
    }
    if options.land == Some(true) && options.trigger == Some(Trigger::Epilogue) {
        return refuse(
            "land",
            "off, or on where the spares trigger (trigger=spares: only they land)",
        );
    }
    Ok((options, put))
}

/// The host trigger loop's choices, as `--host-loop` gives them: each key not given keeps its
/// default.
pub fn parse_host(spec: &str) -> Result<HostOptions> {
    let p = Pairs::parse("--host-loop", spec, &HOST_KEYS)?;
    let count = |key: &str, max: usize| -> Result<Option<usize>> {
        Ok(p.count(key, "auto", (1, max as u32))?.map(|n| n as usize))
    };
    Ok(HostOptions {
        in_flight: count("in-flight", MAX_IN_FLIGHT)?,
        grain: match p.word_or_count("grain", &["auto", "chunk", "stage"], (1, MAX_GRAIN))? {
            Some(Err("chunk")) => Some(HostGrain::Chunk),
            Some(Err("stage")) => Some(HostGrain::Stage),
            Some(Ok(n)) => Some(HostGrain::chunks(n as usize)),
            _ => None,
        },
        wait: match p.one_of("wait", &["auto", "spin", "block"])? {
            Some("spin") => Some(HostWait::Spin),
            Some("block") => Some(HostWait::Block),
            _ => None,
        },
        copy_threads: count("copy-threads", t3_wgpu::hostlink::MAX_COPY_THREADS)?,
        handoff: match p.one_of("handoff", &["auto", "fence", "flag"])? {
            Some("fence") => Some(Handoff::Fence),
            Some("flag") => Some(Handoff::Flag),
            _ => None,
        },
        trigger: match p.one_of("trigger", &["auto", "host", "device"])? {
            Some("host") => Some(SendTrigger::Host),
            Some("device") => Some(SendTrigger::Device),
            _ => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_parse_and_bad_ones_are_named() {
        let (o, put) = parse_fused("pieces=4, spares=32,put=cas,alias=off").unwrap();
        assert_eq!(
            (o.pieces, o.spares, o.alias, put),
            (Pieces::Count(4), Some(32), false, FusedPut::Cas)
        );
        assert_eq!(parse_fused("").unwrap().0, FusedOptions::default());
        for (bad, needles) in [
            ("pieces=0", &["--fused pieces", "'0'"][..]),
            ("peices=4", &["--fused", "peices", "pieces"]),
            ("spares", &["--fused", "KEY=VALUE"]),
            ("grid=1,grid=2", &["grid", "twice"]),
            ("help=never", &["--fused help", "alias=off"]),
            (
                "trigger=spares,spare-dispatch=gemm",
                &["--fused trigger", "spare-dispatch=own"],
            ),
            ("land=on,trigger=epilogue", &["--fused land"]),
            ("put=x", &["--fused put", "'x'"]),
        ] {
            let e = parse_fused(bad).unwrap_err().to_string();
            assert!(needles.iter().all(|n| e.contains(n)), "{bad}: {e}");
        }
        let h = parse_host(
            "grain=chunk,in-flight=3,wait=block,copy-threads=2,handoff=flag,trigger=device",
        )
        .unwrap();
        assert_eq!(
            (h.grain, h.in_flight, h.wait, h.copy_threads, h.handoff),
            (
                Some(HostGrain::Chunk),
                Some(3),
                Some(HostWait::Block),
                Some(2),
                Some(Handoff::Flag)
            )
        );
        assert_eq!(h.trigger, Some(SendTrigger::Device));
        assert_eq!(
            parse_host("trigger=host").unwrap().trigger,
            Some(SendTrigger::Host)
        );
        assert_eq!(parse_host("trigger=auto").unwrap().trigger, None);
        let e = parse_host("trigger=gpu").unwrap_err().to_string();
        assert!(
            e.contains("--host-loop trigger") && e.contains("device"),
            "{e}"
        );
        assert_eq!(parse_host("handoff=auto").unwrap().handoff, None);
        let e = parse_host("handoff=polled").unwrap_err().to_string();
        assert!(
            e.contains("--host-loop handoff") && e.contains("fence") && e.contains("flag"),
            "{e}"
        );
        let e = parse_host("in-flight=0").unwrap_err().to_string();
        assert!(
            e.contains("--host-loop in-flight") && e.contains("1 to 16"),
            "{e}"
        );
        assert!(parse_host("grain=tile").is_err());
        // auto leaves the grain to the model or the table: not given.
        assert_eq!(parse_host("grain=auto").unwrap().grain, None);
        assert_eq!(
            parse_host("grain=2").unwrap().grain,
            Some(HostGrain::Chunks(2))
        );
        let e = parse_host("grain=0").unwrap_err().to_string();
        assert!(e.contains("--host-loop grain") && e.contains("'0'"), "{e}");
    }
}
