//! The host's copy of one chunk between two mapped ranges: a pool of copy threads, started once, each
//! copying its own disjoint slice.
//!
//! The threads live as long as the pool, so a transfer pays a wake-up per thread rather than a thread
//! start (tens of microseconds each, enough to cost a third of a 16 MiB chunk's copy on 16 threads).

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use web_time::Instant;

use crate::error::{Error, Result};

/// Most copy threads a pool may have.
pub const MAX_COPY_THREADS: usize = 64;

/// Least bytes a copy thread gets: below this waking a thread costs more than its share takes to copy.
pub const MIN_BYTES_PER_THREAD: usize = 256 << 10;

/// One slice to copy: raw pointers, because the pool's threads outlive the borrow they come from.
struct Job {
    dst: *mut u8,
    src: *const u8,
    len: usize,
}

// SAFETY: a Job is only made by `CopyPool::copy`, from disjoint parts of a destination it holds
// exclusively and a source it borrows, and `copy` does not return until every job it sent has been
// copied (the `done` count), so the pointers stay valid and unaliased while a worker uses them.
unsafe impl Send for Job {}

/// Copy threads, started once; [`CopyPool::copy`] splits a copy over them and the calling thread.
pub struct CopyPool {
    threads: usize,
    workers: Vec<(mpsc::Sender<Job>, JoinHandle<()>)>,
    /// Jobs finished since the current copy began.
    done: Arc<(Mutex<usize>, Condvar)>,
}

impl CopyPool {
    /// A pool that copies on `threads` threads: the caller's and `threads - 1` started here.
    pub fn new(threads: usize) -> Result<Self> {
        if threads == 0 || threads > MAX_COPY_THREADS {
            return Err(Error::invalid(
                "copy threads",
                threads,
                format!("1 to {MAX_COPY_THREADS}"),
            ));
        }
        let done: Arc<(Mutex<usize>, Condvar)> = Arc::default();
        let mut workers = Vec::with_capacity(threads - 1);
        for i in 1..threads {
            let (tx, rx) = mpsc::channel::<Job>();
            let done = done.clone();
            let handle = std::thread::Builder::new()
                .name(format!("t3 copy {i}"))
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        // SAFETY: see `Job`: valid, disjoint, and kept alive until `done` counts this job.
                        unsafe { std::ptr::copy_nonoverlapping(job.src, job.dst, job.len) };
                        let (count, cv) = &*done;
                        *count.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                        cv.notify_one();
                    }
                })
                .map_err(|e| Error::invalid("copy threads", threads, format!("startable ({e})")))?;
            workers.push((tx, handle));
        }
        Ok(CopyPool {
            threads,
            workers,
            done,
        })
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Copies `src` into `dst` (same length) on up to [`CopyPool::threads`] threads, each over its own
    /// slice of at least [`MIN_BYTES_PER_THREAD`] bytes, starting on a 64-byte line; the calling thread
    /// copies the first slice. Returns when every slice is copied.
    pub fn copy(&mut self, mut dst: wgpu::WriteOnly<'_, [u8]>, src: &[u8]) {
        assert_eq!(dst.len(), src.len(), "copy between ranges of one length");
        let n = self
            .threads
            .min(src.len().div_ceil(MIN_BYTES_PER_THREAD))
            .max(1);
        if n == 1 {
            dst.copy_from_slice(src);
            return;
        }
        let per = src.len().div_ceil(n).next_multiple_of(64);
        let base = dst.as_raw_element_ptr().as_ptr();
        *self.done.0.lock().unwrap_or_else(|e| e.into_inner()) = 0;
        let mut sent = 0;
        let mut off = per;
        while off < src.len() {
            let len = per.min(src.len() - off);
            let job = Job {
                // SAFETY: off + len <= dst.len(): in bounds of the destination.
                dst: unsafe { base.add(off) },
                src: src[off..].as_ptr(),
                len,
            };
            match self.workers[sent].0.send(job) {
                Ok(()) => sent += 1,
                // A worker that is gone (it cannot be: its loop only ends when the pool drops) leaves its
                // slice to the caller.
                // SAFETY: the job's pointers are valid and disjoint, as for a worker.
                Err(mpsc::SendError(job)) => unsafe {
                    std::ptr::copy_nonoverlapping(job.src, job.dst, job.len)
                },
            }
            off += len;
        }
        // SAFETY: the first slice [0, per) is disjoint from every job's.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), base, per.min(src.len())) };
        self.wait(sent, src.len());
    }

    /// Waits until `sent` jobs are done. The work is a memcpy on live threads, so the wait ends; its bound
    /// (a minute plus 100 MB/s) only turns an impossible stall into an abort, since returning while a
    /// worker may still write into the caller's mapping would be unsound.
    fn wait(&self, sent: usize, bytes: usize) {
        let bound = Duration::from_secs(60) + Duration::from_secs_f64(bytes as f64 / 1e8);
        let t0 = Instant::now();
        let (count, cv) = &*self.done;
        let mut c = count.lock().unwrap_or_else(|e| e.into_inner());
        while *c < sent {
            if t0.elapsed() > bound {
                eprintln!("t3: a host link copy of {bytes} bytes stalled for {bound:?}; aborting");
                std::process::abort();
            }
            c = cv
                .wait_timeout(c, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// A copy off the calling thread: a worker with its own [`CopyPool`] takes one mapped transfer at a
/// time, so a trigger loop keeps submitting and polling while chunks cross, and each link's copies
/// run beside the other links' (one lane per link). On wasm, which has no threads, the copy runs
/// in [`CopyLane::start`]. Each job holds its own clones of the two buffers, and wgpu never unmaps a
/// buffer while a view of it is alive (it panics instead), so even a caller that unwinds without
/// [`CopyLane::drain`] cannot have a lane write into unmapped memory.
pub struct CopyLane {
    #[cfg(not(target_arch = "wasm32"))]
    jobs: Option<mpsc::Sender<LaneJob>>,
    #[cfg(not(target_arch = "wasm32"))]
    worker: Option<JoinHandle<()>>,
    #[cfg(target_arch = "wasm32")]
    pool: CopyPool,
    done: mpsc::Receiver<LaneDone>,
    /// Where a ticket returns that the worker did not take (wasm, or a worker that is gone).
    done_tx: mpsc::Sender<LaneDone>,
    /// The bytes of each copy handed over and not yet returned, by ticket (tickets in flight differ).
    pending: std::collections::HashMap<usize, u64>,
}

/// A copy a lane finished: its ticket, and the mapped ranges' error if they were refused.
pub type LaneDone = (usize, std::result::Result<(), String>);

/// One transfer for a lane: the mapped buffers (kept mapped by the caller until its ticket returns).
struct LaneJob {
    ticket: usize,
    read: wgpu::Buffer,
    write: wgpu::Buffer,
    bytes: u64,
}

/// Copies `bytes` from `read`'s mapped range into `write`'s on `pool`: what [`super::HostLink::finish`]
/// does on the caller's threads and a lane on its own. A panic inside (wgpu refusing the ranges in a
/// way it panics on) comes back as the error, so that a lane's ticket always returns.
pub(super) fn copy_buffers(
    pool: &mut CopyPool,
    read: &wgpu::Buffer,
    write: &wgpu::Buffer,
    bytes: u64,
) -> std::result::Result<(), String> {
    let copied = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let src = read.get_mapped_range(..bytes)?;
        let mut dst = write.get_mapped_range_mut(..bytes)?;
        pool.copy(dst.slice(..), &src);
        Ok::<(), wgpu::MapRangeError>(())
    }));
    match copied {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(p) => Err(p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the copy panicked".into())),
    }
}

fn copy_mapped(pool: &mut CopyPool, job: &LaneJob) -> LaneDone {
    (
        job.ticket,
        copy_buffers(pool, &job.read, &job.write, job.bytes),
    )
}

impl CopyLane {
    /// A lane whose copies run on `threads` threads (its worker's and `threads - 1` more).
    pub fn new(threads: usize) -> Result<Self> {
        let (done_tx, done) = mpsc::channel();
        #[cfg(not(target_arch = "wasm32"))]
        {
            let mut pool = CopyPool::new(threads)?;
            let (jobs, rx) = mpsc::channel::<LaneJob>();
            let tx = done_tx.clone();
            let worker = std::thread::Builder::new()
                .name("t3 copy lane".into())
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        if tx.send(copy_mapped(&mut pool, &job)).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|e| Error::invalid("copy threads", threads, format!("startable ({e})")))?;
            Ok(CopyLane {
                jobs: Some(jobs),
                worker: Some(worker),
                done,
                done_tx,
                pending: Default::default(),
            })
        }
        #[cfg(target_arch = "wasm32")]
        {
            // No threads on wasm: the pool is the calling thread alone, whatever was asked.
            let _ = threads;
            Ok(CopyLane {
                pool: CopyPool::new(1)?,
                done,
                done_tx,
                pending: Default::default(),
            })
        }
    }

    /// Hands over the copy of `bytes` from `read`'s mapped range into `write`'s. Both must stay mapped,
    /// and neither be touched, until [`CopyLane::done`] returns `ticket`.
    pub fn start(&mut self, ticket: usize, read: &wgpu::Buffer, write: &wgpu::Buffer, bytes: u64) {
        let job = LaneJob {
            ticket,
            read: read.clone(),
            write: write.clone(),
            bytes,
        };
        self.pending.insert(ticket, bytes);
        #[cfg(not(target_arch = "wasm32"))]
        {
            if self.jobs.as_ref().is_none_or(|tx| tx.send(job).is_err()) {
                // The worker stops only when the lane drops: should it be gone, the ticket still
                // returns, as an error.
                let _ = self
                    .done_tx
                    .send((ticket, Err("the copy lane's worker is gone".into())));
            }
        }
        #[cfg(target_arch = "wasm32")]
        {
            let r = copy_mapped(&mut self.pool, &job);
            let _ = self.done_tx.send(r);
        }
    }

    /// Copies handed over and not yet returned.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The copies finished since the last call, without blocking.
    pub fn done(&mut self) -> Vec<LaneDone> {
        let out: Vec<LaneDone> = self.done.try_iter().collect();
        for (ticket, _) in &out {
            self.pending.remove(ticket);
        }
        out
    }

    /// Waits until every copy handed over is done and returns them. A memcpy on a live thread ends;
    /// the bound (a minute plus 100 MB/s of what is pending, as [`CopyPool`]'s own wait) only turns
    /// an impossible stall into an abort, since returning while the worker may still write into a
    /// mapping the caller will unmap would be unsound.
    pub fn drain(&mut self) -> Vec<LaneDone> {
        let mut out = self.done();
        let bytes: u64 = self.pending.values().sum();
        let bound = Duration::from_secs(60) + Duration::from_secs_f64(bytes as f64 / 1e8);
        let t0 = Instant::now();
        while !self.pending.is_empty() {
            match self.done.recv_timeout(Duration::from_millis(100)) {
                Ok(d) => {
                    self.pending.remove(&d.0);
                    out.push(d);
                }
                // Cannot happen while the lane holds a sender; kept so a change there cannot hang.
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) if t0.elapsed() > bound => {
                    eprintln!("t3: a host link copy lane stalled for {bound:?}; aborting");
                    std::process::abort();
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
        out
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Drop for CopyLane {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl Drop for CopyPool {
    fn drop(&mut self) {
        for (tx, handle) in self.workers.drain(..) {
            drop(tx);
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_copy_is_exact_at_every_split() {
        let mut rng = crate::reference::Rng::new(3);
        let mut pools: Vec<CopyPool> = [1, 2, 3, 4, 7, 16]
            .iter()
            .map(|&t| CopyPool::new(t).unwrap())
            .collect();
        for len in [
            0,
            1,
            63,
            64,
            65,
            4096,
            MIN_BYTES_PER_THREAD + 3,
            3 * MIN_BYTES_PER_THREAD + 61,
            16 * MIN_BYTES_PER_THREAD + 5,
        ] {
            let src: Vec<u8> = (0..len).map(|_| (rng.next_u64() >> 56) as u8).collect();
            for pool in &mut pools {
                // Twice per pool: the done count must start again at zero.
                for _ in 0..2 {
                    let mut dst = vec![0xA5u8; len];
                    pool.copy(wgpu::WriteOnly::from(dst.as_mut_slice()), &src);
                    assert!(dst == src, "len {len} threads {}", pool.threads());
                }
            }
        }
    }

    #[test]
    fn thread_counts_are_checked() {
        assert!(CopyPool::new(0).is_err());
        assert!(CopyPool::new(MAX_COPY_THREADS + 1)
            .err()
            .unwrap()
            .to_string()
            .contains("copy threads: 65"));
        assert_eq!(CopyPool::new(3).unwrap().threads(), 3);
    }
}
