//! The staging pool: the MAP_READ buffers a [`crate::gpu::Gpu`] keeps for its readbacks, capped per
//! size and in bytes. A leaf (no import of the crate), so that the GPU context can hold one and
//! src/readback.rs, which reads through it, can build on the context.

/// Free staging buffers the pool keeps of one size. The host trigger loop holds one counters'
/// readback per queued submission (up to `config::host::MAX_IN_FLIGHT` per device; src/readback.rs
/// checks the two agree) and they all come back when a run ends: keeping fewer would make the next
/// run allocate them again.
pub const STAGING_PER_SIZE: usize = 16;

/// Bytes of free staging buffers the pool keeps in all. Staging is host-visible memory the process
/// holds for nothing between reads; a read larger than this (a whole chunk under `Verify::Full`, a
/// `--dump`) is rare next to what it copies, so its buffer is made again rather than kept.
pub const STAGING_BUDGET: u64 = 64 << 20;

/// What the pool needs of a buffer (a trait so that its policy is tested without a device).
pub(crate) trait StagingSize {
    fn bytes(&self) -> u64;
}

impl StagingSize for wgpu::Buffer {
    fn bytes(&self) -> u64 {
        self.size()
    }
}

/// Free staging buffers, oldest returned first, capped per size ([`STAGING_PER_SIZE`]) and in
/// total bytes ([`STAGING_BUDGET`]): without a cap every power-of-two size ever read would stay
/// allocated for the life of the device.
pub(crate) struct StagingPool<B> {
    free: Vec<B>,
    per_size: usize,
    budget: u64,
}

impl<B> Default for StagingPool<B> {
    fn default() -> Self {
        StagingPool {
            free: Vec::new(),
            per_size: STAGING_PER_SIZE,
            budget: STAGING_BUDGET,
        }
    }
}

impl<B: StagingSize> StagingPool<B> {
    /// The size of the buffer a read of `bytes` gets: a power of two, so that reads of nearby sizes
    /// share buffers.
    pub(crate) fn class(bytes: u64) -> u64 {
        bytes.max(256).next_power_of_two()
    }

    /// A free buffer of the class of `bytes`, taken out of the pool (the most recently returned).
    /// Only of that class: a small read that took a large buffer would leave the next large read
    /// to make another.
    pub(crate) fn take(&mut self, bytes: u64) -> Option<B> {
        let class = Self::class(bytes);
        let i = self.free.iter().rposition(|b| b.bytes() == class)?;
        Some(self.free.remove(i))
    }

    /// Keeps `b` for a later read, then drops the oldest free buffers of its size beyond the
    /// per-size cap and the oldest of any size beyond the byte budget: what was used last is what
    /// is likely asked next. A buffer larger than the whole budget is dropped at once, leaving the
    /// others be.
    pub(crate) fn keep(&mut self, b: B) {
        let size = b.bytes();
        if size > self.budget {
            return;
        }
        self.free.push(b);
        let same = self.free.iter().filter(|f| f.bytes() == size).count();
        for _ in self.per_size..same {
            let oldest = self
                .free
                .iter()
                .position(|f| f.bytes() == size)
                .expect("counted above");
            self.free.remove(oldest);
        }
        while self.bytes() > self.budget {
            self.free.remove(0);
        }
    }

    /// Bytes of the free buffers.
    pub(crate) fn bytes(&self) -> u64 {
        self.free.iter().map(StagingSize::bytes).sum()
    }

    /// Sizes of the free buffers, oldest returned first.
    pub(crate) fn sizes(&self) -> Vec<u64> {
        self.free.iter().map(StagingSize::bytes).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl StagingSize for u64 {
        fn bytes(&self) -> u64 {
            *self
        }
    }

    /// What `reads` readbacks of each size leave in the pool, each buffer made as
    /// `Gpu::staging` makes it and handed back after its read.
    fn after_reads(sizes: impl IntoIterator<Item = u64>) -> StagingPool<u64> {
        let mut pool = StagingPool::default();
        for bytes in sizes {
            let b = pool.take(bytes).unwrap_or(StagingPool::<u64>::class(bytes));
            pool.keep(b);
        }
        pool
    }

    #[test]
    fn every_size_ever_read_is_not_kept_forever() {
        // Every power of two from 256 B to 1 GiB, each read once: the budget keeps the latest ones.
        let sizes: Vec<u64> = (8..=30).map(|s| 1u64 << s).collect();
        // Ascending, the budget-sized buffer pushes out every smaller one and the larger ones
        // are never kept.
        assert_eq!(after_reads(sizes.iter().copied()).sizes(), [STAGING_BUDGET]);
        // Descending, the newest that fit the budget together stay.
        let pool = after_reads(sizes.iter().rev().copied());
        let budget = STAGING_BUDGET.trailing_zeros();
        let kept: Vec<u64> = (8..budget).rev().map(|s| 1u64 << s).collect();
        assert_eq!(pool.sizes(), kept);
        assert!(pool.bytes() <= STAGING_BUDGET);
    }

    #[test]
    fn one_size_keeps_at_most_its_cap() {
        // Many readbacks of one size in flight at once (the host trigger loop's queue), all handed
        // back: the pool keeps the cap's worth.
        let mut pool = StagingPool::<u64>::default();
        let held: Vec<u64> = (0..3 * STAGING_PER_SIZE)
            .map(|_| pool.take(1000).unwrap_or(1024))
            .collect();
        for b in held {
            pool.keep(b);
        }
        assert_eq!(pool.sizes(), vec![1024; STAGING_PER_SIZE]);
        // Taking them again reuses what was kept.
        for _ in 0..STAGING_PER_SIZE {
            assert_eq!(pool.take(1000), Some(1024));
        }
        assert_eq!(pool.take(1000), None);
    }

    #[test]
    fn small_reads_are_reused_and_a_read_takes_its_own_class() {
        let mut pool = after_reads((0..10_000u64).map(|i| 4 * (1 + i % 300)));
        // Sizes 4 .. 1200 bytes, one at a time: one buffer of each class, 256 to 2048 bytes.
        let mut sizes = pool.sizes();
        sizes.sort();
        assert_eq!(sizes, [256, 512, 1024, 2048]);
        assert_eq!(pool.take(300), Some(512));
        assert_eq!(pool.take(300), None, "a 300-byte read took a larger class");
    }
}
