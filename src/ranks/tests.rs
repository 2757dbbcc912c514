//! The ranks' operands: packed on every core as on one, filled by pieces as by one generator, and
//! the reference's rows summed by blocks as each row alone.

use super::*;

/// Packed on the host's cores, an operand is byte for byte what one core packs: every element
/// type (a half row ending mid-word), more rows than cores and fewer, a buffer with rows past
/// the operand's (A's tile of pad rows).
#[test]
fn operands_packed_on_every_core_are_packed_as_on_one() {
    let mut rng = Rng::new(3);
    for dtype in [Dtype::F32, Dtype::F16, Dtype::Bf16] {
        for (rows, cols) in [(1, 1), (3, 5), (37, 33), (1000, 3)] {
            let v: Vec<f32> = (0..rows * cols).map(|_| rng.next_f32()).collect();
            let l = Padding::new(rows, cols, cols);
            for layout in [l.a_layout(cols), l.b_layout(cols)] {
                let want = crate::gemm::pack(dtype, &v, layout);
                assert_eq!(
                    pack_on_cores(dtype, &v, layout),
                    want,
                    "{dtype:?} {rows}x{cols} {layout:?}"
                );
                assert!(want.len().is_multiple_of(4) && want.iter().any(|&b| b != 0));
            }
        }
    }
}

/// Filled by pieces on several cores, the operands are one generator's values in order (each
/// rank's A, then each B): the same inputs for a seed however many cores fill them.
#[test]
fn random_inputs_are_one_generators_values_in_order() {
    // Each rank's A is larger than a piece, so pieces start inside an operand.
    let shape = Shape::new(2 * FILL_PIECE / 100 + 3, 7, 100).unwrap();
    for collective in [Collective::AllReduce, Collective::AllGather] {
        let chunking = Chunking::new(shape.m, 2, 1).unwrap();
        let got = Inputs::random(shape, Dtype::F16, collective, &chunking, 9);
        let mut rng = Rng::new(9);
        let mut want = |len: usize| -> Vec<f32> {
            (0..len).map(|_| Dtype::F16.round(rng.next_f32())).collect()
        };
        for p in 0..2 {
            let a = want(a_rows(collective, &chunking, p).len() * shape.k);
            assert!(got.a[p] == a, "{collective:?}: rank {p}'s A");
        }
        let b = want(shape.k * shape.n);
        if collective.row_split() {
            assert!(
                got.b.iter().all(|g| *g == b),
                "{collective:?}: one B for all"
            );
        } else {
            let b1 = want(shape.k * shape.n);
            assert!(
                got.b[0] == b && got.b[1] == b1,
                "{collective:?}: each rank's B"
            );
        }
    }
}

/// Every row's reference, summed by blocks of columns on the host's cores, is bit for bit the
/// row summed alone in the same order (rank by rank, along k): blocks of one column, of a few with
/// a ragged last one, of the default width and of the whole row; every collective's rows (a row
/// split across shards too), rows past the output empty, and every row empty where the inputs
/// are of another shape.
#[test]
fn reference_rows_summed_by_blocks_are_each_row_summed_alone() {
    let shape = Shape::new(13, 701, 9).unwrap();
    for collective in [Collective::AllReduce, Collective::AllGather] {
        let chunking = Chunking::new(shape.m, 3, 2).unwrap();
        let inputs = Inputs::random(shape, Dtype::F32, collective, &chunking, 5);
        let rows: Vec<usize> = vec![0, 12, 5, 99, 7, 5];
        let alone: Vec<(Vec<f64>, Vec<f64>)> = rows
            .iter()
            .map(|&row| summed_alone(&inputs, shape, collective, &chunking, row))
            .collect();
        for width in [1, 7, 256, shape.n, 10_000] {
            let got = inputs.row_sums_by(shape, collective, &chunking, &rows, width);
            for ((&row, r), (want, scale)) in rows.iter().zip(&got).zip(&alone) {
                let at = format!("{collective:?}, width {width}: row {row}");
                assert!(&r.want == want && &r.scale == scale, "{at}");
            }
        }
        let cached = inputs.reference_rows(shape, collective, &chunking, &rows);
        for ((&row, r), (want, scale)) in rows.iter().zip(&cached).zip(&alone) {
            assert!(
                &r.want == want && &r.scale == scale,
                "{collective:?}: row {row}"
            );
            assert_eq!(
                &inputs.expected_row(shape, collective, &chunking, row),
                want
            );
            assert_eq!(
                &inputs.magnitude_row(shape, collective, &chunking, row),
                scale
            );
            assert_eq!(want.is_empty(), row >= shape.m, "{collective:?}: row {row}");
            assert!(row >= shape.m || want.iter().any(|&x| x != 0.0));
        }
        // Inputs of another shape: every row empty, not a slice out of bounds.
        let wider = Shape::new(13, 702, 9).unwrap();
        let other = inputs.reference_rows(wider, collective, &chunking, &[0, 1]);
        assert!(other
            .iter()
            .all(|r| r.want.is_empty() && r.scale.is_empty()));
    }
}

/// `row`'s sums and magnitudes added one product at a time, rank by rank along k (empty past the
/// output).
fn summed_alone(
    inputs: &Inputs,
    shape: Shape,
    collective: Collective,
    chunking: &Chunking,
    row: usize,
) -> (Vec<f64>, Vec<f64>) {
    if row >= shape.m {
        return (Vec::new(), Vec::new());
    }
    let shards = chunking.shards;
    let terms: Vec<(usize, usize)> = if collective.row_split() {
        let s = (0..shards)
            .find(|&s| chunking.shard_rows(s).contains(&row))
            .unwrap();
        vec![(s, row - chunking.shard_rows(s).start)]
    } else {
        (0..shards).map(|p| (p, row)).collect()
    };
    let (mut want, mut scale) = (vec![0f64; shape.n], vec![0f64; shape.n]);
    for (p, local) in terms {
        for kk in 0..shape.k {
            let av = inputs.a[p][local * shape.k + kk] as f64;
            for j in 0..shape.n {
                let prod = av * inputs.b[p][kk * shape.n + j] as f64;
                want[j] += prod;
                scale[j] += prod.abs();
            }
        }
    }
    (want, scale)
}
