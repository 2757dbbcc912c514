//! The system: a plan lowered and bound on one device or several (a part per device: its ranks'
//! buffers, its lowering, its executor) with the host links between them, and the helpers that run a
//! recording on it.

use std::collections::HashMap;
use web_time::Instant;

use crate::config::host::{Handoff, SendTrigger};
use crate::config::{Config, ModeKind};
use crate::error::{Error, Result};
use crate::executor::{Executor, Kernels, Launched};
use crate::gpu::Gpu;
use crate::hostlink::{CopyLane, HostLink, Path};
use crate::lower::{lower_on, End, HostLinks, LinkBox, Lowered, Recording, Share, Target};
use crate::placement::Placement;
use crate::plan::Plan;
use crate::ranks::{RankBuffers, Ranks};
use crate::schedule::Schedule;
use crate::shapes::Chunking;

/// One device's share of a system: its ranks' buffers, the plan lowered for it, its executor.
pub struct Part<'a> {
    pub device: usize,
    pub gpu: &'a Gpu,
    pub kernels: &'a Kernels,
    pub lowered: Lowered,
    pub ranks: Ranks,
    pub(crate) exec: Executor<'a>,
}

/// A plan lowered and bound to the ranks' buffers on one device or several: recordings made once,
/// run many times. Ranks sit on the devices in contiguous blocks ([`Placement`]); steps between
/// devices go through the host links.
pub struct System<'a> {
    pub config: Config,
    pub chunking: Chunking,
    pub plan: Plan,
    pub schedule: Schedule,
    pub placement: Placement,
    /// The links the placement needs, as data (slots and which step uses which).
    pub host_links: HostLinks,
    /// One per device, in device order.
    pub parts: Vec<Part<'a>>,
    pub(crate) gpus: &'a [Gpu],
    /// The links' buffers (one per entry of `host_links.links`).
    pub(crate) links: Vec<HostLink>,
    /// The host's copy lanes, one per link (`links[k]`'s copies run on `lanes[k]`).
    pub(crate) lanes: Vec<CopyLane>,
    /// What each device's lowering is for.
    targets: Vec<Target>,
}

impl<'a> System<'a> {
    /// Every rank on one device.
    pub fn new(gpu: &'a Gpu, kernels: &'a Kernels, config: Config) -> Result<Self> {
        Self::on_devices(
            std::slice::from_ref(gpu),
            std::slice::from_ref(kernels),
            config,
            Path::ZeroCopy,
        )
    }

    /// The ranks over `gpus` (each with its `kernels`), links between them taking path `want` where
    /// the devices allow it (zero-copy, else mapped, else staged).
    pub fn on_devices(
        gpus: &'a [Gpu],
        kernels: &'a [Kernels],
        config: Config,
        want: Path,
    ) -> Result<Self> {
        Self::for_modes(gpus, kernels, config, want, &ModeKind::ALL)
    }

    /// [`System::on_devices`], lowered for `modes` only: a mode not asked for costs no lowering
    /// (fused mode's packing and tables grow with ranks times chunks) and cannot run on it.
    pub fn for_modes(
        gpus: &'a [Gpu],
        kernels: &'a [Kernels],
        config: Config,
        want: Path,
        modes: &[ModeKind],
    ) -> Result<Self> {
        Self::adopting(gpus, kernels, config, want, modes, Vec::new())
    }

    /// [`System::for_modes`], each device's ranks taking the operands `operands` holds for it (one
    /// list per device, [`System::into_operands`] of a system of the same point) where they fit
    /// ([`Ranks::held`]'s `adopt`; [`System::adopted_operands`] says whether all did).
    pub fn adopting(
        gpus: &'a [Gpu],
        kernels: &'a [Kernels],
        config: Config,
        want: Path,
        modes: &[ModeKind],
        operands: Vec<Vec<RankBuffers>>,
    ) -> Result<Self> {
        if kernels.len() != gpus.len() {
            return Err(Error::invalid(
                "kernels",
                format!("{} kernel sets", kernels.len()),
                format!("one per device ({})", gpus.len()),
            ));
        }
        if let Some(k) = kernels.iter().find(|k| k.gemm.dtype != config.dtype) {
            return Err(Error::invalid(
                "kernels",
                format!("GEMM kernels for {} operands", k.gemm.dtype.name()),
                format!("those of the run's {} operands", config.dtype.name()),
            ));
        }
        let want = want.resolve(Some(&config));
        let out = config.out_dtype;
        if let Some(k) = kernels
            .iter()
            .find(|k| k.gemm.out != out || k.step.out != out)
        {
            return Err(Error::invalid(
                "kernels",
                format!(
                    "kernels storing {} and stepping {} outputs",
                    k.gemm.out.name(),
                    k.step.out.name()
                ),
                format!("those of the run's {} outputs", out.name()),
            ));
        }
        let chunking = Chunking::new(config.shape.m, config.ranks, config.chunks)?;
        let placement = Placement::new(config.ranks, gpus.len())?;
        let schedule = Schedule::ordered(config.collective, &chunking, config.order);
        let targets: Vec<Target> = gpus
            .iter()
            .zip(kernels)
            .enumerate()
            .map(|(d, (g, k))| {
                let t = k.target(g, d);
                Target {
                    // A zero-copy end needs no staging copy either; where the link falls back it takes
                    // the mapped path on such a device (HostLink::new).
                    host_mapped: t.host_mapped && want != Path::Staged,
                    ..t
                }
            })
            .collect();
        if let Some(t) = targets.iter().find(|t| t.tile_n != targets[0].tile_n) {
            return Err(Error::invalid(
                "devices",
                format!("device {} with {}-column GEMM tiles", t.device, t.tile_n),
                format!(
                    "one tile width on every device (device 0: {}): trackers count the same tiles",
                    targets[0].tile_n
                ),
            ));
        }
        let n = config.shape.n;
        let out = config.out_dtype;
        let plan = Plan::new(&schedule, &chunking, n, targets[0].tile_n, config.via).stored(
            n,
            crate::gemm::Padding::ldc(n, out),
            out.bytes() as u64,
        );
        let mut host_links = HostLinks::new(&plan, &placement);
        let mut links = Vec::new();
        for l in &host_links.links {
            // Each end takes the path its device's lowering assumed (`Target::host_mapped`: mapped
            // where the device has the feature and `want` is mapped), so a staged end's copies exist.
            // One unit past the largest chunk: where a send the device triggers marks that it gave up.
            let slot = l.capacity.next_multiple_of(16) + 16;
            let link = HostLink::new(gpus, l.from, l.to, slot, l.slots, want)?;
            // The flag handoff's gates only where it is asked for: each is memory of its own.
            links.push(match config.host.handoff {
                Some(Handoff::Flag) => link.with_gates(gpus),
                _ => link,
            });
        }
        for (spec, link) in host_links.links.iter_mut().zip(&links) {
            spec.zero_copy = link.zero_copy();
            spec.engine = link.engine();
            spec.gated = link.gated();
        }
        let shared = Shared {
            config: &config,
            chunking: &chunking,
            schedule: &schedule,
            plan: &plan,
            share: Share {
                placement: &placement,
                links: &host_links,
            },
            links: &links,
            fused: modes.contains(&ModeKind::Fused),
        };
        // Views of the GEMM outputs and their trackers where a send may wait for them beside the GEMM.
        let watched = config.host.trigger == Some(SendTrigger::Device) && gpus.len() > 1;
        let mut parts = Vec::new();
        let mut operands = operands.into_iter();
        for (d, ((gpu, kernels), &target)) in gpus.iter().zip(kernels).zip(&targets).enumerate() {
            let ranks = Ranks::held(
                gpu,
                config.shape,
                (config.dtype, config.out_dtype),
                config.collective,
                &chunking,
                &plan,
                (placement.ranks_on(d), watched),
                operands.next().unwrap_or_default(),
            )?;
            let (lowered, exec) = shared.lower(d, gpu, kernels, &ranks, target)?;
            parts.push(Part {
                device: d,
                gpu,
                kernels,
                lowered,
                ranks,
                exec,
            });
        }
        let lanes = lanes(&config, links.len())?;
        Ok(System {
            config,
            chunking,
            plan,
            schedule,
            placement,
            host_links,
            parts,
            gpus,
            links,
            lanes,
            targets,
        })
    }

    /// Lowers `config` anew for `modes` on this system's buffers and links. Only knobs that shape the
    /// recordings and the host loop may differ from the system's (GEMM grid, step lead, link budget,
    /// arbitration, the host loop's, fused mode's); one that needs other buffers or another
    /// schedule (shape, ranks, chunks, collective, the GEMM's order, reduce, element types) is
    /// refused, the system unchanged. The tuner
    /// measures many configurations of one point so, without allocating and uploading the operands
    /// for each. An error past that check (an executor that could not be made) leaves the system
    /// part-lowered: drop it.
    pub fn relower(&mut self, config: Config, modes: &[ModeKind]) -> Result<()> {
        let layout = |c: &Config| {
            (
                c.shape,
                c.ranks,
                c.chunks,
                c.collective,
                c.order,
                c.via,
                c.dtype,
                c.out_dtype,
            )
        };
        if layout(&config) != layout(&self.config) {
            return Err(Error::invalid(
                "configuration to lower again",
                format!("{:?}", layout(&config)),
                format!(
                    "the system's shape, ranks, chunks, collective, order, reduce and element types ({:?})",
                    layout(&self.config)
                ),
            ));
        }
        let shared = Shared {
            config: &config,
            chunking: &self.chunking,
            schedule: &self.schedule,
            plan: &self.plan,
            share: Share {
                placement: &self.placement,
                links: &self.host_links,
            },
            links: &self.links,
            fused: modes.contains(&ModeKind::Fused),
        };
        for part in &mut self.parts {
            let target = self.targets[part.device];
            (part.lowered, part.exec) =
                shared.lower(part.device, part.gpu, part.kernels, &part.ranks, target)?;
        }
        // The copy lanes' threads outlive a relowering unless their count changes.
        let n = self.links.len();
        if copy_threads(&config, n) != copy_threads(&self.config, n) {
            self.lanes = lanes(&config, n)?;
        }
        self.config = config;
        Ok(())
    }

    /// Host links between the devices (none on one device).
    pub fn links_used(&self) -> usize {
        self.links.len()
    }

    /// Each link's path (zero-copy where both its devices import host memory, else a host copy's).
    pub fn link_paths(&self) -> Vec<(Path, Path)> {
        self.links.iter().map(|l| (l.send, l.recv)).collect()
    }

    /// The one device's part, for modes that run on one device only.
    pub fn only(&mut self) -> Result<&mut Part<'a>> {
        match self.parts.as_mut_slice() {
            [part] => Ok(part),
            parts => Err(Error::invalid(
                "recording",
                format!("one submission over {} devices", parts.len()),
                "one device: steps between devices need the trigger loop (sequential, host)",
            )),
        }
    }

    /// The part that holds rank `p`.
    pub fn part_of(&self, p: usize) -> &Part<'a> {
        &self.parts[self.placement.device(p)]
    }

    /// Makes the pipelines of fused mode's recording (and of its own sequential run where `own`)
    /// on every device where it lowered: its kernels make them on first use, and a driver compiles
    /// them there (seconds on a cold shader cache). Its own sequential run's only where it will
    /// run: its watched GEMM and finisher are pipelines of their own.
    pub fn make_fused_pipelines(&self, own: bool) -> Result<()> {
        for part in &self.parts {
            if let Ok(f) = &part.lowered.fused {
                part.exec.make_pipelines(&f.recording)?;
                if own {
                    part.exec.make_pipelines(&f.sequential)?;
                }
            }
        }
        Ok(())
    }

    /// Device memory held on every device: the ranks' buffers, plus the executors' pooled ones
    /// (fused mode's packed copies once it ran).
    pub fn device_bytes(&self) -> u64 {
        self.parts
            .iter()
            .map(|p| p.ranks.allocated + p.exec.allocated())
            .sum()
    }

    /// The bound on waiting for the whole plan (the slowest device's, plus the links' bytes).
    pub fn timeout(&self) -> std::time::Duration {
        self.parts
            .iter()
            .map(|p| {
                p.gpu
                    .timeout_for(self.config.total_flops(), self.plan.step_bytes() as f64)
            })
            .max()
            .unwrap_or_default()
    }

    /// The grain string for timelines of pass-structured modes.
    pub fn grain(&self) -> String {
        let t = &self.parts[0].exec.timer;
        if t.gpu_clock() && t.covered() {
            "pass (GPU timestamps at compute-pass boundaries)".into()
        } else if t.gpu_clock() {
            "submission (host clock: more passes than the timestamp query set holds)".into()
        } else {
            "submission (host clock; adapter has no timestamp queries)".into()
        }
    }

    /// Every device's ranks' operands, the rest of the system dropped (its other buffers freed on
    /// return): for [`System::adopting`], a system of the same point in another layout.
    pub fn into_operands(self) -> Vec<Vec<RankBuffers>> {
        self.parts.into_iter().map(|p| p.ranks.ranks).collect()
    }

    /// Whether every device's ranks adopted their operands ([`System::adopting`]): they hold the
    /// inputs of the system they came from, and need no [`System::upload`] of the same.
    pub fn adopted_operands(&self) -> bool {
        self.parts.iter().all(|p| p.ranks.adopted)
    }

    /// Writes every rank's operands from `inputs` on its device.
    pub fn upload(&self, inputs: &crate::ranks::Inputs) {
        for p in &self.parts {
            p.ranks.upload(p.gpu, inputs);
        }
    }

    /// Fills every output and receive buffer on every device with NaN.
    pub fn poison(&self) {
        for p in &self.parts {
            p.ranks.poison(p.gpu);
        }
    }

    /// Every tracker's counter on every device, read back now.
    pub fn read_counters(&self) -> Result<HashMap<crate::plan::Loc, u32>> {
        let mut all = HashMap::new();
        for p in &self.parts {
            all.extend(p.ranks.read_counters(p.gpu)?);
        }
        Ok(all)
    }

    /// Rows `rows` (relative to the chunk) of rank p's output chunk x, from its device.
    pub fn read_rows(&self, p: usize, x: usize, rows: std::ops::Range<usize>) -> Result<Vec<f32>> {
        if p >= self.config.ranks {
            return Err(Error::invalid(
                "rank",
                p,
                format!("below the rank count ({})", self.config.ranks),
            ));
        }
        let part = self.part_of(p);
        part.ranks.read_rows(part.gpu, p, x, rows)
    }

    /// Whether the plan writes rank p's output chunk x.
    pub fn writes(&self, p: usize, x: usize) -> bool {
        p < self.config.ranks
            && self.part_of(p).ranks.locs.contains_key(&crate::plan::Loc {
                rank: p,
                chunk: x,
                buf: crate::plan::Buf::Out,
            })
    }

    /// One line per device and one per link, for reports.
    pub fn describe_devices(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .parts
            .iter()
            .map(|p| {
                let r = p.ranks.held.clone();
                format!(
                    "device {}: {} (ranks {}..{})",
                    p.device,
                    p.gpu.describe(),
                    r.start,
                    r.end - 1
                )
            })
            .collect();
        // What writes each outbox and lands a zero-copy chunk, as core's lowering gives them.
        let send = self
            .config
            .link
            .or_workgroups(crate::lower::HOST_SEND_WORKGROUPS);
        let land = self
            .config
            .link
            .or_workgroups(crate::lower::HOST_LAND_WORKGROUPS);
        // Beside GEMM work (host mode), a pass's sends share a budget, and a zero-copy link's
        // landing kernels theirs (other links land by copies).
        let beside_gemm = crate::lower::beside_gemm_workgroups(&self.config);
        v.extend(self.links.iter().map(|l| {
            let beside = match beside_gemm {
                Some((send, land)) => format!(
                    " (in host mode beside GEMM work: first in the pass, its sends sharing {send} workgroups{})",
                    if l.zero_copy() { format!(", its landings {land}") } else { String::new() }
                ),
                None => String::new(),
            };
            let landing = if l.zero_copy() {
                format!(", landing kernels on {}", land.describe())
            } else {
                String::new()
            };
            format!(
                "link {}->{}: {}, {} slots of {} bytes, send kernels on {}{landing}{beside}",
                l.from,
                l.to,
                l.describe(),
                l.slots(),
                l.capacity,
                send.describe()
            )
        }));
        v
    }

    /// Rows of several (rank p, chunk x, rows relative to the chunk) outputs, in the order asked:
    /// each device's in one readback ([`Ranks::read_rows_of`]), not one round trip per span.
    pub fn read_rows_of(
        &self,
        want: &[(usize, usize, std::ops::Range<usize>)],
    ) -> Result<Vec<Vec<f32>>> {
        let ranks = self.config.ranks;
        if let Some((p, _, _)) = want.iter().find(|w| w.0 >= ranks) {
            return Err(Error::invalid(
                "rank",
                p,
                format!("below the rank count ({ranks})"),
            ));
        }
        let mut out = vec![Vec::new(); want.len()];
        for (d, part) in self.parts.iter().enumerate() {
            let mine: Vec<usize> = (0..want.len())
                .filter(|&i| self.placement.device(want[i].0) == d)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let asked: Vec<_> = mine.iter().map(|&i| want[i].clone()).collect();
            for (i, rows) in mine
                .into_iter()
                .zip(part.ranks.read_rows_of(part.gpu, &asked)?)
            {
                out[i] = rows;
            }
        }
        Ok(out)
    }
}

/// What every device's lowering of one configuration shares: the plan, its placement and links.
struct Shared<'s> {
    config: &'s Config,
    chunking: &'s Chunking,
    schedule: &'s Schedule,
    plan: &'s Plan,
    share: Share<'s>,
    links: &'s [HostLink],
    fused: bool,
}

impl Shared<'_> {
    /// Device `d`'s lowering for `target`, and its executor over `ranks` and the links' buffers there.
    fn lower<'a>(
        &self,
        d: usize,
        gpu: &'a Gpu,
        kernels: &'a Kernels,
        ranks: &Ranks,
        target: Target,
    ) -> Result<(Lowered, Executor<'a>)> {
        let lowered = lower_on(
            self.config,
            self.chunking,
            self.schedule,
            self.plan,
            target,
            self.share,
            self.fused,
        );
        let imported = link_buffers(self.share.links, self.links, d)?;
        let exec = Executor::new(gpu, kernels, ranks, &lowered, imported, passes(self.plan))?;
        Ok((lowered, exec))
    }
}

/// Timestamped passes an executor may need for `plan`.
fn passes(plan: &Plan) -> u32 {
    (plan.ops.len() + plan.levels + 8) as u32
}

/// Threads per copy lane for `links` links under `config`'s host loop.
fn copy_threads(config: &Config, links: usize) -> usize {
    if links == 0 {
        1
    } else {
        config.host.copy_threads(links)
    }
}

/// The host's copy lanes for `links` links under `config`'s host loop.
fn lanes(config: &Config, links: usize) -> Result<Vec<CopyLane>> {
    let threads = copy_threads(config, links);
    (0..links).map(|_| CopyLane::new(threads)).collect()
}

/// The host links' buffers that live on device `d`, keyed as recordings name them.
fn link_buffers(
    spec: &HostLinks,
    links: &[HostLink],
    d: usize,
) -> Result<HashMap<LinkBox, wgpu::Buffer>> {
    let mut m = HashMap::new();
    for (k, (s, l)) in spec.links.iter().zip(links).enumerate() {
        for slot in 0..s.slots {
            let [outbox, out_map, inbox, in_map] = l.buffers(slot)?;
            let gates = l.gates(slot);
            let mut ends: Vec<(End, &wgpu::Buffer)> = if s.from == d {
                vec![(End::Outbox, outbox), (End::OutboxMap, out_map)]
            } else if s.to == d {
                vec![(End::Inbox, inbox), (End::InboxMap, in_map)]
            } else {
                Vec::new()
            };
            match gates {
                Some(g) if s.from == d => ends.push((End::SendFlag, &g.send.buffer)),
                Some(g) if s.to == d => ends.push((End::LandGate, &g.land.buffer)),
                _ => {}
            }
            for (end, b) in ends {
                m.insert(LinkBox { link: k, slot, end }, b.clone());
            }
        }
    }
    Ok(m)
}

/// Runs the recording `pick` chooses on a one-device system as one submission with a timestamp per
/// pass; returns the passes' intervals in µs (a host-clock estimate where there are no timestamps).
pub fn run_recording(
    sys: &mut System,
    pick: impl Fn(&Lowered) -> &Recording,
) -> Result<Vec<(f64, f64)>> {
    let deadline = Instant::now() + sys.timeout();
    let part = sys.only()?;
    let l = launch(part, &pick)?;
    spans(part, &pick, l, deadline)
}

/// Launches the recording `pick` chooses on `part` as a new timed series.
fn launch(part: &mut Part, pick: &impl Fn(&Lowered) -> &Recording) -> Result<Launched> {
    let rec = pick(&part.lowered);
    part.exec.timer.reset();
    part.exec
        .launch(&part.ranks, &part.lowered, rec.label, &rec.commands)
}

/// Waits (until `deadline`) for what [`launch`] started and returns its passes' GPU intervals, or the
/// host time it took spread evenly over the passes where there are no (or not enough) timestamps:
/// the grain says so.
fn spans(
    part: &Part,
    pick: &impl Fn(&Lowered) -> &Recording,
    l: Launched,
    deadline: Instant,
) -> Result<Vec<(f64, f64)>> {
    let rec = pick(&part.lowered);
    let left = deadline.saturating_duration_since(Instant::now());
    part.gpu.wait(Some(l.index), rec.label, left)?;
    let passes = rec.passes().count();
    let mut t = part.exec.timer.spans_us(part.gpu)?;
    if t.len() < passes || !part.exec.timer.covered() {
        t = crate::timestamps::host_spans(l.started.elapsed().as_secs_f64() * 1e6, passes);
    }
    Ok(t)
}

/// Runs the recording `pick` chooses on every device at once (launched one after the other, then
/// awaited); returns the longest device's first-pass-start to last-pass-end, µs on its own clock.
pub fn run_everywhere(sys: &mut System, pick: impl Fn(&Lowered) -> &Recording) -> Result<f64> {
    let deadline = Instant::now() + sys.timeout();
    let launched: Vec<Launched> = sys
        .parts
        .iter_mut()
        .map(|part| launch(part, &pick))
        .collect::<Result<_>>()?;
    let mut longest = 0f64;
    for (part, l) in sys.parts.iter().zip(launched) {
        let t = spans(part, &pick, l, deadline)?;
        longest = longest.max(super::span(&t));
    }
    Ok(longest)
}
