//! CPU tests of lowering across devices: ops split at device boundaries, each link's bytes, and the
//! link kernels' workgroup budgets alone and beside GEMM work.

use super::*;

#[test]
fn ops_on_several_devices_split_at_device_boundaries() {
    for c in Collective::ALL {
        for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
            let cfg = Config {
                ranks: 5,
                chunks: 3,
                ..config(c, via)
            };
            let (plan, placement, links, lowered) = placed(&cfg, 3, |d| d != 1);
            for (i, op) in plan.ops.iter().enumerate() {
                let on: Vec<(usize, Option<Half>)> = lowered
                    .iter()
                    .enumerate()
                    .filter_map(|(d, l)| l.ops[i].as_ref().map(|o| (d, o.half.map(|h| h.0))))
                    .collect();
                let src = match op.kind {
                    Kind::Gemm => op.dst,
                    Kind::Copy { src } | Kind::Reduce { src } => src,
                };
                let (from, to) = (placement.device(src.rank), placement.device(op.dst.rank));
                if from == to {
                    assert_eq!(on, [(to, None)], "{c} {via:?} op {i}: on its device, whole");
                    assert!(links.of_op[i].is_none());
                    continue;
                }
                assert_eq!(
                    on,
                    if from < to {
                        vec![(from, Some(Half::Send)), (to, Some(Half::Receive))]
                    } else {
                        vec![(to, Some(Half::Receive)), (from, Some(Half::Send))]
                    },
                    "{c} {via:?} op {i}"
                );
                let cr = links.of_op[i].unwrap();
                let spec = &links.links[cr.link];
                assert_eq!((spec.from, spec.to), (from, to));
                assert!(cr.slot < spec.slots && spec.slots <= MAX_SLOTS);
                assert!(cr.bytes <= spec.capacity && cr.bytes == op.elems * 4);
                // The send half bumps nothing and writes the outbox; the receive half reads the
                // inbox and bumps the destination's tracker.
                let (send_op, recv_op) =
                    (lowered[from].ops[i].unwrap(), lowered[to].ops[i].unwrap());
                check_dispatch(&lowered[from], &send_op.dispatch);
                check_dispatch(&lowered[to], &recv_op.dispatch);
                // A send half that sums a second source (a forward reduce's step after the first)
                // runs the pipeline with it; the receive half only adds what arrived.
                let send_acc = op.acc.is_some();
                assert!(
                    matches!(send_op.dispatch.kernel, Kernel::Step { acc, .. } if acc == send_acc)
                );
                assert!(matches!(
                    recv_op.dispatch.kernel,
                    Kernel::Step { acc: false, .. }
                ));
                let send = &lowered[from].bindings[send_op.dispatch.binding];
                let recv = &lowered[to].bindings[recv_op.dispatch.binding];
                let lb = |end| Resource::Buffer(Buffer::Link(LinkBox::of(cr, end)));
                assert!(matches!(send.params, Params::Step(p) if p.bump == 0 && p.n_wg == 3));
                assert_eq!(send.resources[0], lb(End::Outbox));
                assert!(matches!(recv.params, Params::Step(p) if p.bump == 1 && p.has_acc == 0));
                assert_eq!(recv.resources[2], lb(End::Inbox));
                assert_eq!(recv.resources[3], Resource::Buffer(Buffer::Tracker(op.dst)));
                // Staged ends copy through the mapped buffers; mapped ones copy nothing.
                assert_eq!(lowered[from].drain(&[i]).len(), usize::from(from == 1));
                assert_eq!(lowered[to].land(&[i]).len(), usize::from(to == 1));
            }
            // A slot is handed on only to a later step of the same link, in plan order.
            for (i, cr) in links.of_op.iter().enumerate() {
                if let Some(cr) = cr {
                    if let Some(a) = cr.after {
                        let prev = links.of_op[a].unwrap();
                        assert!(a < i && (prev.link, prev.slot) == (cr.link, cr.slot));
                    }
                }
            }
            // Every device's trackers are its ranks' own.
            for (d, l) in lowered.iter().enumerate() {
                assert!(l.locs.iter().all(|loc| placement.device(loc.rank) == d));
                assert!(l.fused.is_err());
            }
        }
    }
}

#[test]
fn each_link_carries_the_bytes_its_crossings_move() {
    // 2400 rows of 300 f32 outputs a rank (a shard of 1200 rows at two ranks, 600 at four).
    let full = 2400 * 300 * 4;
    let bytes = |ranks: usize, devices: usize, c: Collective, via: ReduceVia| {
        let cfg = Config {
            ranks,
            ..config(c, via)
        };
        let (_, _, links, _) = placed(&cfg, devices, |_| true);
        let pairs: Vec<(usize, usize)> = links.links.iter().map(|l| (l.from, l.to)).collect();
        (pairs, links.bytes())
    };
    for via in [ReduceVia::Update, ReduceVia::Land, ReduceVia::Forward] {
        // Two ranks on two devices: an all-reduce's reduce-scatter moves the peer's shard each way,
        // its all-gather the rank's own; a reduce-scatter only the first.
        let (pairs, b) = bytes(2, 2, Collective::AllReduce, via);
        assert_eq!(
            (pairs, b),
            (vec![(0, 1), (1, 0)], vec![full, full]),
            "{via:?}"
        );
        let (_, b) = bytes(2, 2, Collective::ReduceScatter, via);
        assert_eq!(b, vec![full / 2, full / 2], "{via:?}");
        // A ring of four ranks over two devices: one ring link crosses each way (rank 1 to 2, 3 to
        // 0), each carrying 2 (R - 1) / R of a rank's output in an all-reduce.
        let (pairs, b) = bytes(4, 2, Collective::AllReduce, via);
        assert_eq!(pairs.len(), 2);
        assert_eq!(b, vec![full * 3 / 2, full * 3 / 2], "{via:?}");
    }
    // Every rank on one device: no link.
    assert!(bytes(4, 1, Collective::AllReduce, ReduceVia::Update)
        .1
        .is_empty());
}

#[test]
fn an_unthrottled_link_sends_on_the_host_send_budget() {
    // Send halves write host memory on HOST_SEND_WORKGROUPS where the link is unthrottled; the
    // receive halves (reading their own memory) get as many as the chunk needs.
    let cfg = Config {
        link: Link::Unthrottled,
        // Chunks of 300 x 3000 outputs: more 16-byte units than the budget's workgroups cover.
        shape: Shape::new(2400, 3000, 19).unwrap(),
        ..config(Collective::AllReduce, ReduceVia::Update)
    };
    let (plan, _, links, lowered) = placed(&cfg, 2, |_| TARGET.host_mapped);
    let workgroups =
        |l: &Lowered, i: usize| match l.bindings[l.ops[i].unwrap().dispatch.binding].params {
            Params::Step(p) => p.n_wg,
            _ => panic!("a step"),
        };
    let mut crossing = 0;
    for (i, cr) in links.of_op.iter().enumerate() {
        let Some(cr) = cr else { continue };
        crossing += 1;
        let need = Link::Unthrottled.workgroups((plan.ops[i].elems as u32).div_ceil(4));
        assert!(
            need > HOST_SEND_WORKGROUPS,
            "the chunk needs more than the budget"
        );
        assert_eq!(workgroups(&lowered[cr.from], i), HOST_SEND_WORKGROUPS);
        assert_eq!(workgroups(&lowered[cr.to], i), need);
    }
    assert!(crossing > 0);
    // A budget the user gives holds for the crossing halves too.
    assert_eq!(Link::Unthrottled.or_workgroups(7), Link::Workgroups(7));
    assert_eq!(Link::Workgroups(3).or_workgroups(7), Link::Workgroups(3));
}

#[test]
fn beside_gemm_work_the_links_kernels_go_first_on_their_shared_budget() {
    // Two ranks on two devices over zero-copy links, four chunks each: in a pass that also holds
    // GEMM work, a device's landings and send halves go first, the pass's sends sharing
    // HOST_SEND_BESIDE_GEMM_WORKGROUPS and its landings HOST_LAND_BESIDE_GEMM_WORKGROUPS; alone, a
    // send keeps HOST_SEND_WORKGROUPS, a landing HOST_LAND_WORKGROUPS.
    let c = Config {
        link: Link::Unthrottled,
        chunks: 4,
        shape: Shape::new(2400, 3000, 19).unwrap(),
        ..config(Collective::AllReduce, ReduceVia::Update)
    };
    let c = Config { ranks: 2, ..c };
    let ch = Chunking::new(c.shape.m, c.ranks, c.chunks).unwrap();
    let s = Schedule::new(c.collective, &ch);
    let plan = Plan::new(&s, &ch, c.shape.n, TARGET.tile_n, c.via);
    let placement = Placement::new(2, 2).unwrap();
    let mut links = HostLinks::new(&plan, &placement);
    for l in &mut links.links {
        l.zero_copy = true;
    }
    let share = Share {
        placement: &placement,
        links: &links,
    };
    let n_wg = |l: &Lowered, d: Dispatch| match l.bindings[d.binding].params {
        Params::Step(p) => p.n_wg,
        _ => panic!("a step"),
    };
    let (mut sends, mut lands) = (0, 0);
    for d in 0..2 {
        let t = Target {
            device: d,
            ..TARGET
        };
        let l = lower_on(&c, &ch, &s, &plan, t, share, true);
        let gemm = (0..plan.ops.len())
            .find(|&i| l.ops[i].is_some_and(|o| o.gemm))
            .unwrap();
        let of_kind = |to: bool| -> Vec<usize> {
            (0..plan.ops.len())
                .filter(|&i| {
                    links.of_op[i].is_some_and(|c| if to { c.to == d } else { c.from == d })
                })
                .collect()
        };
        let (mine, landing) = (of_kind(false), of_kind(true));
        for (kind, ops, alone, budget) in [
            (
                "send",
                &mine,
                HOST_SEND_WORKGROUPS,
                HOST_SEND_BESIDE_GEMM_WORKGROUPS,
            ),
            (
                "landing",
                &landing,
                HOST_LAND_WORKGROUPS,
                HOST_LAND_BESIDE_GEMM_WORKGROUPS,
            ),
        ] {
            let first = |o: &OpDispatch| {
                if kind == "send" {
                    o.dispatch
                } else {
                    o.land.unwrap()
                }
            };
            for &i in ops.iter() {
                let o = l.ops[i].unwrap();
                assert_eq!(n_wg(&l, first(&o)), alone, "{kind} alone");
                assert_eq!(l.pass(&[i], StoreMode::Store).dispatches[0], first(&o));
            }
            // One, two and three of them beside the GEMM: first in the pass, sharing the budget.
            for n in 1..=ops.len().min(3) {
                let mut p = vec![gemm];
                p.extend(&ops[..n]);
                let pass = l.pass(&p, StoreMode::Store);
                let share = budget / n.next_power_of_two() as u32;
                for d in &pass.dispatches[..n] {
                    assert_eq!(n_wg(&l, *d), share, "{kind}: {n} in the pass");
                }
                if kind == "send" {
                    sends += 1;
                } else {
                    lands += 1;
                }
            }
        }
    }
    assert!(sends > 0 && lands > 0);
    // A budget the user gives the link holds beside GEMM work too; `--arbitrate` sets the share.
    for (link, arbitrate, beside) in [
        (Link::Workgroups(64), None, None),
        (Link::Workgroups(64), Some(8), Some((8, 8))),
        (Link::Unthrottled, Some(64), Some((64, 64))),
    ] {
        let c = Config {
            link,
            arbitrate,
            ..c.clone()
        };
        assert_eq!(beside_gemm_workgroups(&c), beside);
        let l = lower_on(&c, &ch, &s, &plan, TARGET, share, true);
        for (i, cr) in links.of_op.iter().enumerate() {
            let Some(o) = l.ops[i].filter(|_| cr.is_some_and(|cr| cr.from == 0)) else {
                continue;
            };
            let alone = n_wg(&l, o.dispatch);
            let shared = o.beside[0].map(|d| n_wg(&l, d));
            match beside {
                None => assert_eq!(o.beside, [None; BESIDE_SHARES], "{link:?}"),
                Some((w, _)) => assert!(shared.unwrap_or(alone) <= w, "{link:?} {arbitrate:?}"),
            }
        }
    }
}
