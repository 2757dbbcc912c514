//! The polled link (src/hostlink/polled.rs): a sender writes slices into a ring of slots and bumps a
//! flag, a receiver polls it and checks every word. On lavapipe: a loopback on one device (both ends in
//! one dispatch) through its own memory and through imported host memory, with every flag load and
//! slices that are not a multiple of the workgroup; a host sender to a device's kernel, with the right
//! words and, planted, with another run's; flags in the device's BAR both ways at once; a receiver
//! whose sender never acts; refusals that name what is wrong. Slots reused within a run and the relayed ends are measured by `bench-polled` on GPUs
//! (BENCHMARKS.md): on lavapipe a shader's loops share a limit of 65,535 turns, shorter than the other
//! end may take to be scheduled.

use std::time::Duration;

use t3_wgpu::hostlink::polled::{End, FlagLoad, Memory, Outcome, Polled, Ring};
use t3_wgpu::Error;

mod common;

/// Runs `run` until a run in which no wait gave up on any link, at most 10 times, `check` seeing
/// every link of every run: on lavapipe the devices' threads are the host's and the other tests'
/// too, and a wait's loads run out (a shader's loops there share a limit of 65,535 turns) when its
/// other end is not scheduled in time.
fn whole(mut run: impl FnMut() -> Vec<Outcome>, check: impl Fn(&Outcome)) -> Vec<Outcome> {
    for _ in 0..10 {
        let o = run();
        o.iter().for_each(&check);
        if o.iter().all(|l| l.timeouts == 0) {
            return o;
        }
        eprintln!("again: a wait gave up ({o:?})");
    }
    panic!("10 runs in a row gave a wait up");
}

/// The test adapter's device as the device list of a link, or None (test skipped).
fn gpus() -> Option<&'static [t3_wgpu::gpu::Gpu]> {
    common::gpu().map(std::slice::from_ref)
}

/// `links` set up on the test adapter's device, or None (said) where the adapter lacks what they
/// need: a host-memory import, a BAR, the volatile decoration. Any other refusal fails the test.
fn set_up(
    links: &[(End, End)],
    ring: Ring,
    memory: Memory,
    load: FlagLoad,
) -> Option<Polled<'static>> {
    let gpus = gpus()?;
    match Polled::new(gpus, links, ring, memory, load) {
        Ok(p) => Some(p),
        Err(e @ (Error::Invalid { .. } | Error::MissingFeature { .. }))
            if memory != Memory::Device || load == FlagLoad::Volatile =>
        {
            eprintln!("SKIPPED {memory:?} {load:?}: {e}");
            None
        }
        Err(e) => panic!("{links:?} {memory:?} {load:?}: {e}"),
    }
}

fn ring() -> Ring {
    Ring {
        lanes: 2,
        slots: 2,
        slices: 5,
        words: 300,
        spins: 60_000,
    }
}

/// Every word of every slice arrives as sent, through device and host memory, with every flag load,
/// three lanes each with a slot per slice. (Slots reused need the two ends running side by side,
/// which lavapipe does not promise: it may run a dispatch's workgroups one after another. On GPUs
/// `bench-polled` reuses them.)
#[test]
fn a_loopback_delivers_every_slice_checked() {
    let ring = Ring {
        lanes: 3,
        slots: 5,
        ..ring()
    };
    let links = [(End::Device(0), End::Device(0))];
    for memory in [Memory::Device, Memory::Host] {
        for load in FlagLoad::ALL {
            let Some(polled) = set_up(&links, ring, memory, load) else {
                continue;
            };
            for tag in [1, 2] {
                let run = || polled.run(tag, Duration::from_secs(20)).unwrap();
                let what = |o: &Outcome| format!("{memory:?} {load:?} run {tag}: {o:?}");
                let o = whole(run, |o| assert_eq!(o.mismatches, 0, "{}", what(o))).remove(0);
                assert_eq!(o.slices, 3 * 5, "{}", what(&o));
                assert!(o.ok(&ring) && o.bytes == 3 * 5 * 300 * 4, "{}", what(&o));
            }
        }
    }
}

/// A receiver whose sender never publishes gives up after its spins: a timeout, no slice, no hang.
#[test]
fn a_receiver_without_its_sender_times_out() {
    // The host is the sender, and it never acts (`run_without_host`): its flags never move.
    let ring = Ring {
        spins: 1 << 12,
        ..ring()
    };
    let links = [(End::Host, End::Device(0))];
    let Some(polled) = set_up(&links, ring, Memory::Host, FlagLoad::Atomic) else {
        return;
    };
    let o = &polled.run_without_host(7, Duration::from_secs(20)).unwrap()[0];
    assert_eq!(o.slices, 0, "{o:?}");
    assert_eq!(o.timeouts, ring.lanes, "{o:?}");
    assert!(!o.ok(&ring));
}

/// A receiver counts every word that is not what its sender wrote: planted, a host sender writing
/// another run's words, every word read is counted wrong; the same link with the right words, none.
#[test]
fn every_wrong_word_is_counted() {
    // A slot per slice: the host sender never waits, the kernel finds every slice published.
    let ring = Ring {
        lanes: 1,
        slots: 3,
        slices: 3,
        ..ring()
    };
    let links = [(End::Host, End::Device(0))];
    let Some(polled) = set_up(&links, ring, Memory::Host, FlagLoad::Atomic) else {
        return;
    };
    let bound = Duration::from_secs(20);
    let polled = &polled;
    let tagged = |tag, host_tag| move || polled.run_with_host_tag(tag, host_tag, bound).unwrap();
    let right = whole(tagged(5, 5), |o| assert_eq!(o.mismatches, 0, "{o:?}")).remove(0);
    assert_eq!(right.slices, 3, "{right:?}");
    // Every slice the kernel read is wrong in every word, whether or not all arrived.
    // A run cut short (lavapipe's loop limit may end a check early) counts at most its slices' words.
    let wrong = whole(tagged(6, 9), |o| {
        assert!(o.mismatches <= o.slices * 300, "{o:?}")
    })
    .remove(0);
    assert_eq!(wrong.mismatches, 3 * 300, "{wrong:?}");
    assert!(!wrong.ok(&ring));
}

/// Flags in the device's BAR, the slots in host memory: a kernel sending to host threads and host
/// threads sending to the same kernel, both links at once (one dispatch, both halves), every word
/// checked at both receivers.
#[test]
fn flags_in_the_bar_carry_both_directions() {
    let ring = Ring {
        lanes: 2,
        slots: 4,
        slices: 4,
        ..ring()
    };
    let links = [(End::Device(0), End::Host), (End::Host, End::Device(0))];
    let Some(polled) = set_up(&links, ring, Memory::Bar, FlagLoad::Atomic) else {
        return;
    };
    let run = || polled.run(1, Duration::from_secs(20)).unwrap();
    let o = whole(run, |l| assert_eq!(l.mismatches, 0, "{l:?}"));
    assert!(o.iter().all(|l| l.ok(&ring)), "{o:?}");
}

#[test]
fn bad_links_are_refused_naming_why() {
    let Some(gpus) = gpus() else { return };
    let d = End::Device;
    type Case<'a> = (&'a [(End, End)], Ring, Memory, &'a str);
    let cases: [Case; 7] = [
        (
            &[(End::Host, End::Host)],
            ring(),
            Memory::Host,
            "a device at one end",
        ),
        (
            &[(d(0), End::Host)],
            ring(),
            Memory::Device,
            "host memory where the ends differ",
        ),
        (&[(d(1), d(1))], ring(), Memory::Device, "one of 1 devices"),
        (
            &[(d(0), d(0)), (d(0), d(0))],
            ring(),
            Memory::Device,
            "at most one out and one in",
        ),
        (
            &[(d(0), d(0))],
            Ring { lanes: 0, ..ring() },
            Memory::Device,
            "at least 1",
        ),
        (&[(d(0), d(0))], ring(), Memory::Peer, "two devices"),
        (&[(End::Host, d(0))], ring(), Memory::Peer, "two devices"),
    ];
    for (links, ring, memory, says) in cases {
        match Polled::new(gpus, links, ring, memory, FlagLoad::Atomic) {
            Err(e @ Error::Invalid { .. }) => assert!(e.to_string().contains(says), "{e}"),
            Err(e) => panic!("{links:?}: {e}"),
            Ok(_) => panic!("{links:?} {memory:?} accepted"),
        }
    }
}
