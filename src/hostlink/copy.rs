//! The host's copy of one chunk between two mapped ranges, on a few threads over disjoint slices.

use crate::error::{Error, Result};

/// Most copy threads a transfer may use.
pub const MAX_COPY_THREADS: usize = 64;

/// Least bytes a copy thread gets: below this a thread costs more to start than its share takes to copy.
pub const MIN_BYTES_PER_THREAD: usize = 256 << 10;

pub(crate) fn check_threads(threads: usize) -> Result<()> {
    if threads == 0 || threads > MAX_COPY_THREADS {
        return Err(Error::invalid(
            "copy threads",
            threads,
            format!("1 to {MAX_COPY_THREADS}"),
        ));
    }
    Ok(())
}

/// Copies `src` into `dst` (same length) on up to `threads` threads, each over its own slice of at least
/// [`MIN_BYTES_PER_THREAD`] bytes; the calling thread takes the first slice.
pub fn copy_threaded(dst: wgpu::WriteOnly<'_, [u8]>, src: &[u8], threads: usize) {
    let n = threads.min(src.len().div_ceil(MIN_BYTES_PER_THREAD)).max(1);
    // Slices start on 64-byte lines so that no two threads write one cache line.
    let per = src.len().div_ceil(n).next_multiple_of(64);
    if n == 1 {
        let mut dst = dst;
        dst.copy_from_slice(src);
        return;
    }
    std::thread::scope(|scope| {
        let mut rest = dst;
        let mut parts = Vec::with_capacity(n);
        let mut off = 0;
        while off < src.len() {
            let len = per.min(src.len() - off);
            let (head, tail) = rest.split_at(len);
            parts.push((head, &src[off..off + len]));
            rest = tail;
            off += len;
        }
        let mut parts = parts.into_iter();
        let first = parts.next();
        for (d, s) in parts {
            let part = Part(d);
            scope.spawn(move || part.copy(s));
        }
        if let Some((d, s)) = first {
            Part(d).copy(s);
        }
    });
}

/// A disjoint part of a mapped range, moved to one copy thread.
struct Part<'a>(wgpu::WriteOnly<'a, [u8]>);

// SAFETY: a `WriteOnly<'a, [u8]>` is exclusive access to its bytes, like `&'a mut [u8]`, which is Send.
// wgpu-types 30 implements Send for `WriteOnly<T>` only where T is sized (its impl lacks `?Sized`), an
// omission rather than a property of slices. Parts come from `split_at`, so no two threads share a byte,
// and the scope ends every thread before the mapped view can be unmapped.
unsafe impl Send for Part<'_> {}

impl Part<'_> {
    /// Takes `self` whole, so that a closure calling it captures the Part (not just its field).
    fn copy(mut self, src: &[u8]) {
        self.0.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threaded_copy_is_exact_at_every_split() {
        let mut rng = crate::reference::Rng::new(3);
        for len in [
            0,
            1,
            63,
            64,
            65,
            4096,
            MIN_BYTES_PER_THREAD + 3,
            3 * MIN_BYTES_PER_THREAD + 61,
        ] {
            let src: Vec<u8> = (0..len).map(|_| (rng.next_u64() >> 56) as u8).collect();
            for threads in [1, 2, 3, 4, 7, 16] {
                let mut dst = vec![0xA5u8; len];
                copy_threaded(wgpu::WriteOnly::from(dst.as_mut_slice()), &src, threads);
                assert!(dst == src, "len {len} threads {threads}");
            }
        }
    }

    #[test]
    fn thread_counts_are_checked() {
        assert!(check_threads(0).is_err());
        assert!(check_threads(MAX_COPY_THREADS + 1)
            .unwrap_err()
            .to_string()
            .contains("copy threads: 65"));
        assert!(check_threads(1).is_ok() && check_threads(MAX_COPY_THREADS).is_ok());
    }
}
