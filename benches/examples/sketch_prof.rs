//! Times SISOKR fit and decode, one line per sketch seed (wall seconds and
//! test F1), for profiling (`perf record`) and quick size sweeps. Data: a
//! Mulan data set from `OKR_DATA_DIR` (else its seeded stand-in), or a
//! stand-in preset. `gamma` is a number or `median:c` (`c` over the median
//! squared distance).
//! `cargo run --release -p okr-benches --example sketch_prof -- [IN:m_x] [OUT:m_y] [lambda] [seeds] [gamma] [data]`
use std::time::Instant;

use okr_decode::CandidateDecoder;
use okr_estimators::SketchedIokr;
use okr_estimators::sketch::SketchSpec;
use okr_eval::Features;
use okr_kernels::{CsrRows, Gaussian, LabelSets, Rows};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_string());
    let input: SketchSpec = arg(0, "uniform:1500").parse().unwrap();
    let output: SketchSpec = arg(1, "uniform:800").parse().unwrap();
    let lambda: f64 = arg(2, "1e-6").parse().unwrap();
    let seeds: u64 = arg(3, "5").parse().unwrap();
    let data = arg(5, "bibtex");
    let standin = || okr_eval::StandinPreset::from_name(&data).unwrap().spec().seed(0).generate().unwrap();
    let (train, test) = okr_eval::read_mulan(&data).unwrap_or_else(|_| standin());
    let (Features::Sparse(x), Features::Sparse(xt)) = (&train.x, &test.x) else { panic!("sparse features expected") };
    let (candidates, _) = train.y.unique();
    // Default: the width sketch-multilabel chose on bibtex (c = 0.25 over the median squared distance).
    let gamma = arg(4, "2.2935779816513763e-3");
    let gamma = match gamma.strip_prefix("median:") {
        Some(c) => c.parse::<f64>().unwrap() / okr_kernels::median_sq_distance(x, 2000),
        None => gamma.parse().unwrap(),
    };
    let kx = Gaussian::new(gamma).unwrap();
    let ky = Gaussian::from_sigma2(train.y.mean_cardinality()).unwrap();
    let decoder = CandidateDecoder::new();
    let (mut fits, mut decs, mut f1s) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 0..seeds {
        let t = Instant::now();
        let model = SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(lambda)
            .input_sketch(Some(input))
            .output_sketch(Some(output))
            .seed(seed)
            .fit::<CsrRows, LabelSets>(x, &train.y)
            .unwrap();
        let fit = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let decoded = decoder.decode(&model, xt, &candidates).unwrap();
        let dec = t.elapsed().as_secs_f64();
        let f1 = okr_eval::f1_samples(&test.y, &candidates.select(&decoded.best())).unwrap();
        println!("seed {seed}: fit {fit:.3} s, decode {dec:.3} s, total {:.3} s, F1 {:.2}", fit + dec, 100.0 * f1);
        fits.push(fit);
        decs.push(dec);
        f1s.push(f1);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "{input} / {output}, lambda {lambda:e}: mean fit {:.3} s, decode {:.3} s, total {:.3} s, F1 {:.2}",
        mean(&fits),
        mean(&decs),
        mean(&fits) + mean(&decs),
        100.0 * mean(&f1s)
    );
}
