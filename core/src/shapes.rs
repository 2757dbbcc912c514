//! Shapes: the GEMM dimensions and the split of output rows into shards (one per rank) and chunks.

use serde::Serialize;

use crate::error::{Error, Result};

/// Most ranks the tool emulates.
pub const MAX_RANKS: usize = 64;
/// Largest single GEMM dimension accepted (u32 indexing in the kernels, with headroom).
pub const MAX_DIM: usize = 1 << 24;

/// Element type of the GEMM operands A and B, and of the outputs the steps move (`Config::out_dtype`:
/// the operands' type, or f32). The GEMM accumulates in f32 either way (f16 x f16 -> f32, what tensor
/// cores offer) and rounds once when it stores a 2-byte output. bf16 values are the top 16 bits of an
/// f32, two to a u32; every kernel widens them to f32 (wgpu 30 has neither a bf16 shader type nor bf16
/// cooperative matrices).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    #[default]
    F32,
    F16,
    Bf16,
}

/// A GEMM as `MxNxK` or `MxNxK:DTYPE` (f32 operands when no type is given): what the flags that
/// put a GEMM beside other work take.
pub fn gemm_of(s: &str) -> Result<(Shape, Dtype)> {
    let (shape, dtype) = s.split_once(':').unwrap_or((s, "f32"));
    Ok((Shape::parse(shape)?, Dtype::parse(dtype)?))
}

impl Dtype {
    pub const ALL: [Dtype; 3] = [Dtype::F32, Dtype::F16, Dtype::Bf16];

    /// Bytes per operand element.
    pub fn bytes(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.name() == s.trim().to_lowercase())
            .ok_or_else(|| Error::invalid("dtype", s, "f32, f16 or bf16"))
    }

    /// `v` as the GEMM sees it: rounded to the nearest f16 or bf16 (ties to even) for those operands,
    /// so the f64 reference is computed from exactly what the device multiplies.
    pub fn round(self, v: f32) -> f32 {
        match self {
            Dtype::F32 => v,
            Dtype::F16 => half::f16::from_f32(v).to_f32(),
            Dtype::Bf16 => half::bf16::from_f32(v).to_f32(),
        }
    }

    /// Unit roundoff of one rounding to this type (round to nearest): half an ulp, relative.
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Dtype::F32 => f64::powi(2.0, -24),
            Dtype::F16 => f64::powi(2.0, -11),
            Dtype::Bf16 => f64::powi(2.0, -8),
        }
    }

    /// The most one rounding to this type is off by below its smallest normal value, where the
    /// spacing no longer shrinks with the value (gradual underflow): half the spacing of its
    /// subnormals, an absolute error that [`Self::unit_roundoff`] of so small a value does not
    /// cover.
    pub fn underflow_error(self) -> f64 {
        match self {
            Dtype::F32 => f64::powi(2.0, -150),
            Dtype::F16 => f64::powi(2.0, -25),
            Dtype::Bf16 => f64::powi(2.0, -134),
        }
    }

    /// Little-endian device bytes of this type back to f32 values (exact: every f16 and bf16 is an
    /// f32); a trailing partial element is dropped.
    pub fn decode(self, bytes: &[u8]) -> Vec<f32> {
        match self {
            Dtype::F32 => bytemuck::pod_collect_to_vec(&bytes[..bytes.len() / 4 * 4]),
            Dtype::F16 => bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
            Dtype::Bf16 => bytes
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
                .collect(),
        }
    }

    /// Operand values as the device buffer's bytes, into `out`, exactly `v.len()` elements long
    /// (a caller pads the buffer to a multiple of 4: wgpu copies whole words).
    pub fn encode_into(self, v: &[f32], out: &mut [u8]) {
        match self {
            Dtype::F32 => out.copy_from_slice(bytemuck::cast_slice(v)),
            Dtype::F16 => {
                for (o, &x) in out.chunks_exact_mut(2).zip(v) {
                    o.copy_from_slice(&half::f16::from_f32(x).to_bits().to_le_bytes());
                }
            }
            Dtype::Bf16 => {
                for (o, &x) in out.chunks_exact_mut(2).zip(v) {
                    o.copy_from_slice(&half::bf16::from_f32(x).to_bits().to_le_bytes());
                }
            }
        }
    }
}

/// One GEMM's dimensions: C (m x n) = A (m x k) · B (k x n).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Shape {
    /// Validates every dimension: at least 1, at most [`MAX_DIM`].
    pub fn new(m: usize, n: usize, k: usize) -> Result<Self> {
        for (what, v) in [("M", m), ("N", n), ("K", k)] {
            if v == 0 || v > MAX_DIM {
                return Err(Error::Invalid {
                    what: "GEMM dimension",
                    value: format!("{what} = {v}"),
                    bound: format!("between 1 and {MAX_DIM}"),
                });
            }
        }
        Ok(Shape { m, n, k })
    }

    /// Parses "MxNxK".
    pub fn parse(s: &str) -> Result<Self> {
        let parts: Vec<_> = s.split(['x', 'X']).collect();
        let bad = || {
            Error::invalid(
                "shape",
                s,
                "MxNxK with positive integers, e.g. 4096x4096x1024",
            )
        };
        if parts.len() != 3 {
            return Err(bad());
        }
        let mut d = [0usize; 3];
        for (i, p) in parts.iter().enumerate() {
            d[i] = p.trim().parse().map_err(|_| bad())?;
        }
        Shape::new(d[0], d[1], d[2])
    }

    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}", self.m, self.n, self.k)
    }
}

/// Output tile rows of one GEMM workgroup: BM of every GEMM kernel (a test checks it against their
/// reflected BM, src/reflect.rs); the columns are per engine (`gemm::Engine::tile_n`).
pub const TILE: usize = 128;

/// Workgroups (tiles `tile_n` wide) of rows `rows` by `n` columns: what a chunk's tracker counts.
pub fn tiles(rows: usize, n: usize, tile_n: usize) -> usize {
    rows.div_ceil(TILE) * n.div_ceil(tile_n)
}

/// `groups` workgroups as a 2-D grid within `max` per dimension. Kernels recover the linear id as
/// `id.x + id.y * dispatch_x` and ignore ids past `groups`.
pub fn fold(groups: u32, max: u32) -> (u32, u32) {
    if groups <= max {
        (groups.max(1), 1)
    } else {
        let y = groups.div_ceil(max);
        (groups.div_ceil(y), y)
    }
}

/// Bytes a device buffer asked for `bytes` takes: at least 16 and whole 16-byte units, since kernels
/// read and write whole vec4s (shaders/put/store.wgsl).
pub fn buffer_bytes(bytes: u64) -> u64 {
    bytes.max(16).next_multiple_of(16)
}

/// Output rows split into `shards` near-equal shards, each into `per_shard` near-equal chunks.
/// Chunk `x = shard * per_shard + j`; chunk x covers rows `bounds[x]..bounds[x + 1]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Chunking {
    pub shards: usize,
    pub per_shard: usize,
    pub bounds: Vec<usize>,
}

fn split(lo: usize, hi: usize, parts: usize) -> impl Iterator<Item = usize> {
    let len = hi - lo;
    (0..parts).map(move |i| lo + len * i / parts)
}

impl Chunking {
    /// Splits `rows` rows; every chunk gets at least one row, or the count is refused.
    pub fn new(rows: usize, shards: usize, per_shard: usize) -> Result<Self> {
        if shards == 0 || shards > MAX_RANKS {
            return Err(Error::invalid(
                "rank count",
                shards,
                format!("between 1 and {MAX_RANKS}"),
            ));
        }
        if shards > rows {
            return Err(Error::invalid(
                "rank count",
                shards,
                format!("at most the output's {rows} rows, so that every rank owns a row"),
            ));
        }
        if per_shard == 0 {
            return Err(Error::invalid("chunks per rank", 0, "at least 1"));
        }
        let min_shard = rows / shards;
        if per_shard > min_shard {
            return Err(Error::invalid(
                "chunks per rank",
                per_shard,
                format!("at most {min_shard} ({rows} rows over {shards} ranks), so that no chunk is empty"),
            ));
        }
        let mut bounds = Vec::with_capacity(shards * per_shard + 1);
        for (s, lo) in split(0, rows, shards).enumerate() {
            let hi = if s + 1 == shards {
                rows
            } else {
                rows * (s + 1) / shards
            };
            bounds.extend(split(lo, hi, per_shard));
        }
        bounds.push(rows);
        Ok(Chunking {
            shards,
            per_shard,
            bounds,
        })
    }

    /// Total number of chunks.
    pub fn count(&self) -> usize {
        self.bounds.len() - 1
    }

    pub fn rows(&self, x: usize) -> std::ops::Range<usize> {
        self.bounds[x]..self.bounds[x + 1]
    }

    /// The shard (owner rank) of chunk x.
    pub fn shard_of(&self, x: usize) -> usize {
        x / self.per_shard
    }

    /// The chunks of shard s.
    pub fn chunks_of(&self, s: usize) -> std::ops::Range<usize> {
        s * self.per_shard..(s + 1) * self.per_shard
    }

    /// Rows of shard s.
    pub fn shard_rows(&self, s: usize) -> std::ops::Range<usize> {
        self.bounds[s * self.per_shard]..self.bounds[(s + 1) * self.per_shard]
    }

    pub fn total_rows(&self) -> usize {
        *self.bounds.last().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even_and_packs_little_endian() {
        let d = Dtype::parse("BF16").unwrap();
        assert_eq!((d, d.bytes(), d.name()), (Dtype::Bf16, 2, "bf16"));
        // 1 + 2^-8 lies halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to the even one.
        assert_eq!(d.round(1.0 + 1.0 / 256.0), 1.0);
        assert_eq!(d.round(1.0 + 3.0 / 256.0), 1.0 + 4.0 / 256.0);
        // f32's range, unlike f16's.
        assert!((d.round(1.0e30) / 1.0e30 - 1.0).abs() < 1.0 / 128.0);
        assert!(Dtype::F16.round(1.0e30).is_infinite());
        // Element 2i in the low half of each u32 (shaders/operands/bf16.wgsl), padded to 4 bytes.
        let mut bytes = [0; 8];
        d.encode_into(&[1.0, -2.0, 0.5], &mut bytes[..6]);
        assert_eq!(bytes, [0x80, 0x3f, 0x00, 0xc0, 0x00, 0x3f, 0, 0]);
        assert!(Dtype::parse("bf8")
            .unwrap_err()
            .to_string()
            .contains("bf16"));
    }

    #[test]
    fn chunks_cover_rows_without_gaps() {
        for rows in [1, 7, 64, 129, 1000] {
            for shards in 1..=rows.min(9) {
                for per in 1..=(rows / shards).min(5) {
                    let c = Chunking::new(rows, shards, per).unwrap();
                    assert_eq!(c.count(), shards * per);
                    assert_eq!(c.bounds[0], 0);
                    assert_eq!(c.total_rows(), rows);
                    for x in 0..c.count() {
                        assert!(
                            !c.rows(x).is_empty(),
                            "rows={rows} shards={shards} per={per} x={x}"
                        );
                    }
                    for s in 0..shards {
                        let r = c.shard_rows(s);
                        assert!(r.len() >= rows / shards && r.len() <= rows.div_ceil(shards));
                    }
                }
            }
        }
    }

    #[test]
    fn refuses_bad_counts() {
        assert!(Chunking::new(10, 0, 1).is_err());
        assert!(Chunking::new(10, 11, 1).is_err());
        assert!(Chunking::new(10, 65, 1).is_err());
        assert!(Chunking::new(10, 2, 6).is_err());
        assert!(Chunking::new(10, 2, 0).is_err());
        let e = Chunking::new(10, 2, 6).unwrap_err().to_string();
        assert!(e.contains('6') && e.contains("at most 5"), "{e}");
    }

    #[test]
    fn parses_shapes() {
        assert_eq!(
            Shape::parse("17x33x65").unwrap(),
            Shape {
                m: 17,
                n: 33,
                k: 65
            }
        );
        assert!(Shape::parse("0x3x4").is_err());
        assert!(Shape::parse("3x4").is_err());
        assert!(Shape::parse("ax3x4").is_err());
    }
}
