//! Gram matrices of MS/MS spectra under the probability product kernel
//! (sorted sweep per pair), on the seeded spectra stand-in with about 60
//! peaks a spectrum (512-bit fingerprints, so 30 to 100 peaks).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use okr_eval::SpectraStandinSpec;
use okr_kernels::{Kernel, Ppk, Rows, Spectra};

fn spectra(n: usize) -> Spectra {
    // At least one spectrum per molecule: n molecules give at least n spectra.
    let d = SpectraStandinSpec::new(n, 10).n_bits(512).seed(0).generate().expect("a valid stand-in spec");
    let first: Vec<usize> = (0..n).collect();
    d.spectra.select(&first)
}

fn ppk(c: &mut Criterion) {
    let mut g = c.benchmark_group("okr-kernels/ppk");
    g.sample_size(10);
    let k = Ppk::new(0.01).expect("a valid peak width");
    for n in [250usize, 500, 1000] {
        let x = spectra(n);
        g.bench_with_input(BenchmarkId::new("gram", n), &x, |b, x| b.iter(|| k.gram(x)));
    }
    g.finish();
}

criterion_group!(benches, ppk);
criterion_main!(benches);
