//! Decoding coordinates predicted by any model in an output basis
//! (issue 36): Bibtex-shaped label sets, a sketched basis of 800 atoms, the
//! distinct training label sets as candidates.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use faer::Mat;
use okr_benches::label_sets;
use okr_decode::{CandidateDecoder, CoordinateDecoder, Precision};
use okr_estimators::output_basis::{BasisKind, OutputBasis};
use okr_kernels::Gaussian;
use okr_surrogate::Coordinates;

fn decode_coordinates(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-decode/coordinates");
    g.sample_size(10);
    let y = label_sets(4880, 159, 2.4, 2058, 5);
    let basis = OutputBasis::params(Gaussian::from_sigma2(2.4).unwrap())
        .kind(BasisKind::Sketch("uniform:800".parse().unwrap()))
        .fit(&y)
        .unwrap();
    let r = basis.n_components();
    for n_test in [2515usize, 10060] {
        let z = Coordinates::new(Mat::from_fn(n_test, r, |i, j| (((i * 31 + j * 17) % 97) as f64 / 97.0 - 0.5) / 10.0))
            .unwrap();
        for precision in [Precision::F64, Precision::F32] {
            let dec = CoordinateDecoder::from(CandidateDecoder::new().precision(precision));
            g.bench_function(BenchmarkId::new(format!("sketch-{r}-{precision}"), n_test), |b| {
                b.iter(|| dec.decode_training(&basis, &z).unwrap())
            });
        }
    }
    g.finish();
}

criterion_group!(benches, decode_coordinates);
criterion_main!(benches);
