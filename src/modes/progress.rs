//! Fused mode's timeline at chunk grain, read from its progress log: WGSL has no clock, so the pass's
//! own work is the clock (tiles stored plus transfer pieces moved), mapped linearly onto its measured span.

use crate::lower::ProgressLog;
use crate::timeline::{Event, EventKind, Lane};

/// What the log tells: the events at chunk grain and how much of the pass's span they cover.
#[derive(Clone, Debug)]
pub struct ChunkGrain {
    pub events: Vec<Event>,
    /// The events' span (first start to last end) over the pass's: 1 where the log saw the pass's
    /// work through to its last unit; the timeline is kept only within 5% of it ([`MAX_GAP`]).
    pub coverage: f64,
}

/// How far the chunk-grain span may fall short of the pass-grain one.
pub const MAX_GAP: f64 = 0.05;

/// The events the log's `words` hold for `ranks` ranks, on [start, end] (µs): the clock at 0 is the
/// pass's start, its last value the pass's end. Each rank's GEMM lane shows its chunks in the order
/// they completed, each from the previous one's completion (the first from the start: every rank's
/// tiles share the one dispatch); each transfer runs from its first piece's claim to its last
/// piece's end on its destination's steps lane. None where the log saw no work.
pub fn chunk_grain(
    log: &ProgressLog,
    ranks: usize,
    words: &[u32],
    (start, end): (f64, f64),
) -> Option<ChunkGrain> {
    let n = log.tiles.len();
    let nch = log.chunks_per_rank;
    let total = *words.first().filter(|&&t| t > 0)?;
    if words.len() < 1 + 5 * n || nch == 0 {
        return None;
    }
    let (done, first, last) = (
        &words[1..1 + n],
        &words[1 + n..1 + 3 * n],
        &words[1 + 3 * n..1 + 5 * n],
    );
    // A chunk's transfers are armed only once its counter holds all its tiles, so the first claim
    // of either is a sight of its completion too. The watcher whose sight crossed the tile count
    // writes the completion's mark, and another watcher may arm the transfer and a spare claim it
    // before that write lands (a race of the log, not of the transfers: on a CPU adapter under
    // load, a mark late by many units): the completion is the earlier of the two sights.
    let done: Vec<u32> = (0..n)
        .map(|c| {
            [done[c], first[2 * c], first[2 * c + 1]]
                .into_iter()
                .filter(|&v| v > 0)
                .min()
                .unwrap_or(0)
        })
        .collect();
    let at = |v: u32| start + (end - start) * f64::from(v.min(total)) / f64::from(total);
    let mut events = Vec::new();
    for p in 0..ranks.min(n / nch) {
        let mut chunks: Vec<(u32, usize)> = (0..nch)
            .map(|x| (done[p * nch + x], x))
            .filter(|&(v, x)| v > 0 && log.tiles[p * nch + x] > 0)
            .collect();
        chunks.sort_unstable();
        let mut prev = 0;
        for (v, x) in chunks {
            events.push(Event {
                lane: Lane::Gemm { rank: p },
                kind: EventKind::Gemm,
                name: format!("r{p} gemm c{x}"),
                rank: p,
                chunk: Some(x),
                stage: None,
                start_us: at(prev),
                end_us: at(v),
            });
            prev = v;
        }
    }
    for (a, action) in log.actions.iter().enumerate() {
        let (Some((to, reduce)), s, e) = (action, first[a], last[a]) else {
            continue;
        };
        let (p, x, q) = (a / 2 / nch, a / 2 % nch, to / nch);
        if s == 0 || e == 0 || q >= ranks || p >= ranks {
            continue;
        }
        let (kind, word) = if *reduce {
            (EventKind::Reduce, "reduce")
        } else {
            (EventKind::Copy, "copy")
        };
        events.push(Event {
            lane: Lane::Step { rank: q },
            kind,
            name: format!("r{p}->r{q} {word} c{x}"),
            rank: q,
            chunk: Some(x),
            stage: None,
            start_us: at(s),
            end_us: at(e),
        });
    }
    let lo = events
        .iter()
        .map(|e| e.start_us)
        .fold(f64::INFINITY, f64::min);
    let hi = events
        .iter()
        .map(|e| e.end_us)
        .fold(f64::NEG_INFINITY, f64::max);
    let coverage = if end > start && hi > lo {
        (hi - lo) / (end - start)
    } else {
        0.0
    };
    Some(ChunkGrain { events, coverage })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_maps_onto_the_span_and_each_rank_chunks_in_completion_order() {
        // Two ranks of two chunks; chunk 0 of rank 1 leaves for rank 0 as a reduce.
        let log = ProgressLog {
            word: 0,
            chunks_per_rank: 2,
            tiles: vec![3, 3, 3, 3],
            actions: vec![None, None, None, None, Some((0, true)), None, None, None],
        };
        // Clock 10 in all; completions r0: c1 at 4, c0 at 8; r1: c0 at 3, c1 at 9; the transfer
        // from 5 to 10.
        let mut words = vec![10, 8, 4, 3, 9];
        words.extend([0, 0, 0, 0, 5, 0, 0, 0]);
        words.extend([0, 0, 0, 0, 10, 0, 0, 0]);
        let g = chunk_grain(&log, 2, &words, (100.0, 200.0)).unwrap();
        let names: Vec<(&str, f64, f64)> = g
            .events
            .iter()
            .map(|e| (e.name.as_str(), e.start_us, e.end_us))
            .collect();
        assert_eq!(
            names,
            [
                ("r0 gemm c1", 100.0, 140.0),
                ("r0 gemm c0", 140.0, 180.0),
                ("r1 gemm c0", 100.0, 130.0),
                ("r1 gemm c1", 130.0, 190.0),
                ("r1->r0 reduce c0", 150.0, 200.0),
            ]
        );
        assert_eq!(g.coverage, 1.0);
        // The watcher that saw r1's chunk 0 complete marked it at 7, after the reduce it armed was
        // first claimed at 5: the chunk completed by 5.
        words[3] = 7;
        let g = chunk_grain(&log, 2, &words, (100.0, 200.0)).unwrap();
        let r1c0 = g.events.iter().find(|e| e.name == "r1 gemm c0").unwrap();
        assert_eq!((r1c0.start_us, r1c0.end_us), (100.0, 150.0));
        let moved = g.events.iter().find(|e| e.kind != EventKind::Gemm).unwrap();
        assert!(r1c0.end_us <= moved.start_us);
        // A log that saw nothing, or is too short, gives nothing.
        assert!(chunk_grain(&log, 2, &[0; 21], (0.0, 1.0)).is_none());
        assert!(chunk_grain(&log, 2, &[5, 1], (0.0, 1.0)).is_none());
    }
}
