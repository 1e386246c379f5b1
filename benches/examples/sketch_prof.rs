//! Times SISOKR fit and decode, one line per sketch seed (wall seconds and
//! test F1), for profiling (`perf record`) and quick size sweeps. Data: a
//! Mulan data set from `OKR_DATA_DIR` (else its seeded stand-in), or a
//! stand-in preset. `gamma` is a number or `median:c` (`c` over the median
//! squared distance).
//! `cargo run --release -p okr-benches --example sketch_prof -- [IN:m_x] [OUT:m_y] [lambda] [seeds] [gamma] [data] [pinv_rtol]`
use std::time::Instant;

use okr_decode::CandidateDecoder;
use okr_estimators::Fit;
use okr_estimators::SketchedIokr;
use okr_estimators::sketch::SketchSpec;
use okr_eval::Features;
use okr_kernels::{Gaussian, Kernel, LabelSets, Rows};

/// What the command line asked for.
struct Config {
    input: SketchSpec,
    output: SketchSpec,
    lambda: f64,
    seeds: u64,
    gamma: String,
    pinv_rtol: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.to_string());
    let cfg = Config {
        input: arg(0, "uniform:1500").parse().unwrap(),
        output: arg(1, "uniform:800").parse().unwrap(),
        lambda: arg(2, "1e-6").parse().unwrap(),
        seeds: arg(3, "5").parse().unwrap(),
        // Default: the width sketch-multilabel chose on bibtex (c = 0.25 over the median squared distance).
        gamma: arg(4, "2.2935779816513763e-3"),
        pinv_rtol: arg(6, "1e-12").parse().unwrap(),
    };
    let data = arg(5, "bibtex");
    let standin = || okr_eval::StandinPreset::from_name(&data).unwrap().spec().seed(0).generate().unwrap();
    let (train, test) = okr_eval::read_mulan(&data).unwrap_or_else(|_| standin());
    match (&train.x, &test.x) {
        (Features::Sparse(x), Features::Sparse(xt)) => run(&cfg, x, &train.y, xt, &test.y),
        (Features::Dense(x), Features::Dense(xt)) => run(&cfg, x, &train.y, xt, &test.y),
        _ => panic!("train and test store features differently"),
    }
}

fn run<X: Rows>(cfg: &Config, x: &X, y: &LabelSets, xt: &X, yt: &LabelSets)
where
    Gaussian: Kernel<X>,
    okr_kernels::Linear: Kernel<X>,
{
    let (candidates, _) = y.unique();
    let gamma = match cfg.gamma.strip_prefix("median:") {
        Some(c) => c.parse::<f64>().unwrap() / okr_kernels::median_sq_distance(x, 2000),
        None => cfg.gamma.parse().unwrap(),
    };
    let kx = Gaussian::new(gamma).unwrap();
    let ky = Gaussian::from_sigma2(y.mean_cardinality()).unwrap();
    let decoder = CandidateDecoder::new();
    let (mut fits, mut decs, mut f1s) = (Vec::new(), Vec::new(), Vec::new());
    for seed in 0..cfg.seeds {
        let t = Instant::now();
        let params = SketchedIokr::params(kx.clone(), ky.clone())
            .lambda(cfg.lambda)
            .pinv_rtol(cfg.pinv_rtol)
            .input_sketch(Some(cfg.input))
            .output_sketch(Some(cfg.output))
            .seed(seed);
        let model = Fit::<X, &LabelSets>::fit(&params, x, y).unwrap();
        let fit = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let decoded = decoder.decode(&model, xt, &candidates).unwrap();
        let dec = t.elapsed().as_secs_f64();
        let f1 = okr_eval::f1_samples(yt, &candidates.select(&decoded.best())).unwrap();
        println!(
            "seed {seed}: fit {fit:.3} s, decode {dec:.3} s, total {:.3} s, F1 {:.2}, input rank {:?} (m = {})",
            fit + dec,
            100.0 * f1,
            model.input_rank(),
            model.input_support().len()
        );
        fits.push(fit);
        decs.push(dec);
        f1s.push(f1);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "{} / {}, lambda {:e}: mean fit {:.3} s, decode {:.3} s, total {:.3} s, F1 {:.2}",
        cfg.input,
        cfg.output,
        cfg.lambda,
        mean(&fits),
        mean(&decs),
        mean(&fits) + mean(&decs),
        100.0 * mean(&f1s)
    );
}
