//! The state machine driven by a simulated GPU, each decision checked against what completed.
//!
//! Submissions complete and host copies land in orders a seeded generator picks.

use super::*;

/// A small deterministic generator (xorshift), so a failing order can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// One simulated run's setting.
#[derive(Clone, Copy, Debug)]
struct Setting {
    ranks: usize,
    devices: usize,
    per_rank: usize,
    collective: Collective,
    via: ReduceVia,
    gate: Gate,
    depth: usize,
    zero_copy: bool,
    /// Engine links (not zero-copy): each chunk copied by the devices, landing later as a host
    /// copy does, into an inbox written outside the receiver's queue.
    engine: bool,
    /// The flag handoff: zero-copy links with gates, landings queued ahead (`Submission::waits`).
    gated: bool,
    /// The device's trigger: sends beside the GEMM work making their chunks, waiting in the kernel
    /// (`Submission::watching`), some giving up, and landings ahead (`Submission::ahead`).
    watch: bool,
}

/// What the simulation knows: every op's parts queued and completed, the true counters.
struct Truth {
    /// Where (device, submission number on it, pass) each op's landing part was queued.
    queued_at: Vec<Option<(usize, usize, usize)>>,
    /// Ops whose landing part (a GEMM, a step within a device, a crossing step's receive half)
    /// completed; crossing steps whose send half completed; whose chunk the simulation landed.
    done: Vec<bool>,
    send_done: Vec<bool>,
    landed: Vec<bool>,
    counters: HashMap<Loc, u32>,
    /// Crossing steps whose send half is queued; whose chunk a waiting landing brought.
    send_queued: Vec<bool>,
    early: Vec<bool>,
}

/// A broken rule, as found at a decision.
type Broken = String;

/// Runs `set` to the end with completions in the order `seed` picks, checking every submission the
/// machine decides against the simulation's truth.
fn simulate(set: Setting, seed: u64) -> std::result::Result<(), Broken> {
    let ch = Chunking::new(8 * set.ranks * set.per_rank, set.ranks, set.per_rank).unwrap();
    let schedule = Schedule::new(set.collective, &ch);
    let plan = Plan::new(&schedule, &ch, 8, 128, set.via);
    let placement = Placement::new(set.ranks, set.devices).unwrap();
    let mut links = HostLinks::new(&plan, &placement);
    for l in &mut links.links {
        l.zero_copy = set.zero_copy;
        l.engine = set.engine && !set.zero_copy;
        l.gated = set.zero_copy && set.gated;
    }
    let n = plan.ops.len();
    let mut m = Machine::new(
        &plan,
        &placement,
        &links,
        schedule.gemm_stages(),
        (set.gate, set.depth, set.watch),
    );
    let mut t = Truth {
        queued_at: vec![None; n],
        done: vec![false; n],
        send_done: vec![false; n],
        landed: vec![false; n],
        counters: HashMap::new(),
        send_queued: vec![false; n],
        early: vec![false; n],
    };
    let mut queues: Vec<VecDeque<Submission>> = (0..set.devices).map(|_| VecDeque::new()).collect();
    let mut made = vec![0usize; set.devices];
    let mut copying: Vec<usize> = Vec::new();
    let mut sent_twice = vec![0u32; n];
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    loop {
        for d in 0..set.devices {
            while let Some(s) = m.next(d) {
                check(&plan, &placement, &links, &mut t, d, made[d], &s)?;
                for &i in &s.sends {
                    t.send_queued[i] = true;
                }
                for &i in s.passes.iter().flatten() {
                    if !s.sends.contains(&i) {
                        sent_twice[i] += 1;
                    }
                }
                made[d] += 1;
                queues[d].push_back(s);
                if queues[d].len() > set.depth {
                    return Err(format!(
                        "device {d} holds more than {} submissions",
                        set.depth
                    ));
                }
            }
        }
        let busy: Vec<usize> = (0..set.devices)
            .filter(|&d| !queues[d].is_empty())
            .collect();
        if busy.is_empty() && copying.is_empty() {
            break;
        }
        let k = rng.below(busy.len() + copying.len());
        if k >= busy.len() {
            let i = copying.swap_remove(k - busy.len());
            t.landed[i] = true;
            m.copied(i);
            continue;
        }
        let d = busy[k];
        let s = queues[d].pop_front().unwrap();
        // A waiting landing lands where its chunk was written before it gave up: its sender's
        // submission completed, or runs (at the front of its queue) and, as the coin says, flagged
        // the chunk in time.
        for &i in &s.waits {
            let from = links.of_op[i].unwrap().from;
            let running = queues[from].front().is_some_and(|q| q.sends.contains(&i));
            let landed = t.send_done[i] || (running && rng.below(2) == 0);
            t.early[i] = landed;
            m.waited(i, landed);
        }
        // A landing ahead lands its chunk, already in host memory, whatever the order.
        for &i in &s.ahead {
            t.early[i] = true;
        }
        // A send waiting for its GEMM's counter may run out of spins (as the coin says): it wrote
        // nothing, and goes again.
        let mut gave_up = Vec::new();
        for &i in &s.watching {
            if rng.below(3) == 0 {
                m.resend(d, i);
                t.send_queued[i] = false;
                gave_up.push(i);
            }
        }
        for &i in s.sends.iter().filter(|i| !gave_up.contains(i)) {
            t.send_done[i] = true;
            if links.links[links.of_op[i].unwrap().link].zero_copy {
                t.landed[i] = true;
            }
        }
        for &i in s.passes.iter().flatten() {
            if !s.sends.contains(&i) {
                t.done[i] = true;
                *t.counters.entry(plan.ops[i].dst).or_insert(0) += plan.ops[i].bumps;
            }
        }
        let read: Vec<(Loc, u32)> = s
            .reads
            .iter()
            .map(|&l| (l, t.counters.get(&l).copied().unwrap_or(0)))
            .collect();
        copying.extend(m.completed(d, read));
    }
    m.finish().map_err(|e| e.to_string())?;
    if let Some(i) = (0..n).find(|&i| sent_twice[i] != 1) {
        return Err(format!("op {i} ran {} times", sent_twice[i]));
    }
    for (loc, want) in final_marks(&plan) {
        if t.counters.get(&loc).copied().unwrap_or(0) != want {
            return Err(format!("{loc:?} ended below its threshold {want}"));
        }
    }
    Ok(())
}

/// Checks submission `s`, the `k`-th on device `d`, against what completed and what was queued,
/// pass by pass, and records where it queues each op's landing part.
fn check(
    plan: &Plan,
    placement: &Placement,
    links: &HostLinks,
    t: &mut Truth,
    d: usize,
    k: usize,
    s: &Submission,
) -> std::result::Result<(), Broken> {
    // A dependency is safe once it completed, or if it lands on this device in an earlier
    // submission or an earlier pass of this one (the queue orders those).
    let safe = |t: &Truth, dep: usize, pass: usize| {
        t.done[dep] || t.queued_at[dep].is_some_and(|(e, j, p)| e == d && (j < k || p < pass))
    };
    // Beside no GEMM work: at most one landing per link (a chunk landed ahead needs none), and every send between devices in the
    // first pass, beside that landing (reading and writing host memory at once).
    if !s
        .passes
        .iter()
        .flatten()
        .any(|&i| plan.ops[i].kind == Kind::Gemm)
    {
        let mut per_link = HashSet::new();
        if let Some(&i) = s
            .receives
            .iter()
            .filter(|i| !s.early.contains(i))
            .find(|&&i| !per_link.insert(links.of_op[i].map(|c| c.link)))
        {
            return Err(format!(
                "submission {k} on device {d} lands two chunks of op {i}'s link beside no GEMM work"
            ));
        }
        if let Some((p, &i)) = s
            .passes
            .iter()
            .enumerate()
            .skip(1)
            .find_map(|(p, ops)| ops.iter().find(|&&i| s.sends.contains(&i)).map(|i| (p, i)))
        {
            return Err(format!(
                "submission {k} on device {d} sends op {i} in pass {p}, after a barrier, beside no GEMM work"
            ));
        }
    }
    for (p, ops) in s.passes.iter().enumerate() {
        for &i in ops {
            if !s.sends.contains(&i) {
                t.queued_at[i] = Some((d, k, p));
            }
            let op = &plan.ops[i];
            let crossing = links.of_op[i];
            if s.sends.contains(&i) {
                let c = crossing.ok_or(format!("op {i} sent but does not cross"))?;
                // A watching send waits in the kernel for the GEMM of its own pass.
                let watched = links.watched(i, true).filter(|_| s.watching.contains(&i));
                if let Some(dep) = op
                    .deps
                    .iter()
                    .find(|&&dep| feeds(plan, i, dep) && !safe(t, dep, p) && Some(dep) != watched)
                {
                    return Err(format!(
                        "send of op {i} before what feeds it (op {dep}) completed"
                    ));
                }
                // The consumed rule: a zero-copy or engine slot is written again only once the
                // receive half that read it completed; a host copy's slot once that receive half
                // is queued.
                if let Some(a) = c.after {
                    let l = &links.links[c.link];
                    let free = if l.zero_copy || l.engine {
                        t.done[a] || t.early[a]
                    } else {
                        t.queued_at[a].is_some()
                    };
                    if !free {
                        return Err(format!(
                            "send of op {i} into slot {} of link {} before op {a} read it",
                            c.slot, c.link
                        ));
                    }
                }
                continue;
            }
            if op.kind == Kind::Gemm {
                continue;
            }
            let receiving = crossing.is_some();
            if receiving && !(s.receives.contains(&i) && (t.landed[i] || t.early[i])) {
                // Landing: a chunk is read by its receiver only once its sender's submission
                // completed (zero-copy) or its host copy was done, or a waiting landing brought it.
                return Err(format!("receive of op {i} before its chunk landed"));
            }
            if receiving && s.early.contains(&i) != t.early[i] {
                return Err(format!(
                    "receive of op {i} lands its chunk again, or not although none brought it"
                ));
            }
            let unsafe_dep = op
                .deps
                .iter()
                .find(|&&dep| !((receiving && feeds(plan, i, dep)) || safe(t, dep, p)));
            if let Some(dep) = unsafe_dep {
                return Err(format!("op {i} queued before its dependency op {dep}"));
            }
        }
    }
    // A send that waits for its GEMM's counter: in the first pass with that GEMM work, into a
    // zero-copy slot no earlier chunk used.
    for &i in &s.watching {
        let c = links.of_op[i].ok_or(format!("op {i} watches but does not cross"))?;
        let g = links
            .watched(i, true)
            .ok_or(format!("op {i} watches no GEMM"))?;
        let first = s.passes.first().map_or(&[][..], |p| &p[..]);
        if !(first.contains(&g) && first.contains(&i) && s.sends.contains(&i))
            || c.after.is_some()
            || !links.links[c.link].zero_copy
        {
            return Err(format!(
                "op {i} watches its GEMM op {g} outside that GEMM's pass, or into a used slot"
            ));
        }
    }
    // A landing ahead: only of a chunk in host memory, on a zero-copy link to this device, beside
    // GEMM work, once.
    let has_gemm = s
        .passes
        .iter()
        .flatten()
        .any(|&i| plan.ops[i].kind == Kind::Gemm);
    for &i in &s.ahead {
        let c = links.of_op[i].ok_or(format!("op {i} lands ahead but does not cross"))?;
        if !(has_gemm && c.to == d && links.links[c.link].zero_copy && t.landed[i] && !t.early[i]) {
            return Err(format!(
                "op {i} lands ahead on device {d} before its chunk is in host memory, beside no GEMM work, or twice"
            ));
        }
    }
    // The flag handoff: a landing waits beside GEMM work only for a chunk of a gated link to this
    // device whose send half is already queued (no wait on work queued behind itself), not yet
    // landed, once.
    for &i in &s.waits {
        let c = links.of_op[i].ok_or(format!("op {i} waits but does not cross"))?;
        if !(has_gemm && c.to == d && links.links[c.link].gated) {
            return Err(format!(
                "op {i} waits on device {d} beside no GEMM work or no gate"
            ));
        }
        if !t.send_queued[i] || t.landed[i] || t.early[i] {
            return Err(format!(
                "op {i} waits before its send is queued, or after its chunk landed"
            ));
        }
    }
    if let Some(l) = s.reads.iter().find(|l| placement.device(l.rank) != d) {
        return Err(format!("device {d} reads {l:?}, another device's tracker"));
    }
    Ok(())
}

/// Settings that cover one device and several, both link kinds, every gate and grain, queues of one
/// to three, and links with more users than slots (so slots are reused).
fn settings() -> Vec<Setting> {
    let mut all = Vec::new();
    let shapes = [
        (2, 2, 6, Collective::AllReduce, ReduceVia::Update),
        (4, 2, 2, Collective::AllReduce, ReduceVia::Update),
        (4, 4, 1, Collective::ReduceScatter, ReduceVia::Land),
        (3, 3, 2, Collective::AllReduce, ReduceVia::Forward),
        (4, 1, 2, Collective::AllReduce, ReduceVia::Update),
        (4, 2, 3, Collective::DirectReduceScatter, ReduceVia::Update),
        (2, 2, 2, Collective::DirectAllReduce, ReduceVia::Update),
        (3, 3, 1, Collective::DirectAllReduce, ReduceVia::Update),
    ];
    for (ranks, devices, per_rank, collective, via) in shapes {
        for gate in [
            Gate::Tracked(HostGrain::Stage),
            Gate::Tracked(HostGrain::Chunk),
            Gate::Tracked(HostGrain::Chunks(2)),
            Gate::AfterGemms,
        ] {
            for depth in 1..=3 {
                for (zero_copy, engine, gated, watch) in [
                    (false, false, false, false),
                    (false, true, false, false),
                    (true, false, false, false),
                    (true, false, true, false),
                    (true, false, false, true),
                    (true, false, true, true),
                ] {
                    all.push(Setting {
                        ranks,
                        devices,
                        per_rank,
                        collective,
                        via,
                        gate,
                        depth,
                        zero_copy,
                        engine,
                        gated,
                        watch,
                    });
                }
            }
        }
    }
    all
}

/// The first broken rule over every setting and `seeds` completion orders of each.
fn first_broken(seeds: u64) -> Option<String> {
    for set in settings() {
        for seed in 0..seeds {
            if let Err(e) = simulate(set, seed) {
                return Some(format!("{set:?}, seed {seed}: {e}"));
            }
        }
    }
    None
}

#[test]
fn every_order_of_completions_keeps_the_rules_and_ends() {
    if let Some(broken) = first_broken(24) {
        panic!("{broken}");
    }
}

#[test]
fn a_reused_zero_copy_or_engine_slot_waits_for_its_reader_to_complete() {
    // Two devices, twelve chunks a direction over eight slots: four sends reuse a slot. The
    // receiver's submissions are held back while the sender runs ahead.
    let set = Setting {
        ranks: 2,
        devices: 2,
        per_rank: 6,
        collective: Collective::AllReduce,
        via: ReduceVia::Update,
        gate: Gate::Tracked(HostGrain::Chunk),
        depth: 3,
        zero_copy: true,
        engine: false,
        gated: false,
        watch: false,
    };
    for seed in 0..64 {
        simulate(set, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
    // An engine slot too: its receiver's copy writes the inbox outside the queue that reads it.
    let engine = Setting {
        zero_copy: false,
        engine: true,
        ..set
    };
    for seed in 0..64 {
        simulate(engine, seed).unwrap_or_else(|e| panic!("engine, seed {seed}: {e}"));
    }
}
