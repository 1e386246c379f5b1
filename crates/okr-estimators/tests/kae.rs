//! Kernel autoencoders against oracles (spec 7): reverse-mode gradients vs
//! central finite differences, the KRR last layer and the Gram-only identities,
//! KAE == K2AE with a linear first kernel, the Gram-only test distortion vs
//! the explicit one, and the KPCA link (closed form and Adam).

use faer::{Mat, MatRef, Par};
use okr_estimators::kae::internals::{LayerSpec, finite_objective, krr_last_layer, profiled_objective};
use okr_estimators::kae::{K2ae, Kae, Kpca, LastLayer, LayerKernel, Optimizer};
use okr_estimators::{Error, ParamGuard};

fn rng(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    }
}

fn random(n: usize, d: usize, scale: f64, seed: u64) -> Mat<f64> {
    let mut r = rng(seed);
    Mat::from_fn(n, d, |_, _| scale * r())
}

/// A random symmetric positive definite `d x d` operator.
fn random_psd(d: usize, seed: u64) -> Mat<f64> {
    let b = random(d, d, 1.0, seed);
    let mut a = &b * b.transpose();
    for i in 0..d {
        a[(i, i)] += 0.5;
    }
    Mat::from_fn(d, d, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]))
}

fn frob(m: MatRef<'_, f64>) -> f64 {
    let mut s = 0.0;
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            s += m[(i, j)] * m[(i, j)];
        }
    }
    s.sqrt()
}

fn diff(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> f64 {
    frob(Mat::from_fn(a.nrows(), a.ncols(), |i, j| a[(i, j)] - b[(i, j)]).as_ref())
}

/// Relative error ||g - g_fd|| / ||g|| over all coefficient matrices, with
/// central differences of step `h`.
type Oracle<'a> = &'a dyn Fn(&[Mat<f64>]) -> (f64, Vec<Mat<f64>>);

fn fd_rel_error(f: Oracle<'_>, theta: &[Mat<f64>], h: f64) -> f64 {
    let (_, grads) = f(theta);
    let (mut num, mut den) = (0.0, 0.0);
    for (t, g) in grads.iter().enumerate() {
        for j in 0..theta[t].ncols() {
            for i in 0..theta[t].nrows() {
                let mut plus = theta.to_vec();
                plus[t][(i, j)] += h;
                let mut minus = theta.to_vec();
                minus[t][(i, j)] -= h;
                let fd = (f(&plus).0 - f(&minus).0) / (2.0 * h);
                num += (fd - g[(i, j)]).powi(2);
                den += g[(i, j)].powi(2);
            }
        }
    }
    (num / den).sqrt()
}

fn kernels() -> [LayerKernel; 3] {
    [
        LayerKernel::Linear,
        LayerKernel::Gaussian { gamma: 0.8 },
        LayerKernel::Polynomial { degree: 3, gamma: 0.7, coef0: 0.4 },
    ]
}

#[test]
fn finite_gradient_matches_central_differences_for_every_kernel_and_depth() {
    faer::set_global_parallelism(Par::Seq);
    let n = 8;
    let x = random(n, 3, 2.0, 1);
    for (ki, kern) in kernels().into_iter().enumerate() {
        for hidden in [vec![2], vec![3, 2]] {
            let big_l = hidden.len() + 1;
            let mut dims = hidden.clone();
            dims.push(3);
            // Random PSD operators on every layer, distinct lambdas.
            let spec: Vec<LayerSpec> =
                (0..big_l).map(|l| (kern, Some(random_psd(dims[l], 10 + l as u64)), 0.05 * (l + 1) as f64)).collect();
            let theta: Vec<Mat<f64>> =
                dims.iter().enumerate().map(|(l, &d)| random(n, d, 0.4, 100 + ki as u64 * 7 + l as u64)).collect();
            let f = |t: &[Mat<f64>]| finite_objective(x.as_ref(), &spec, t).unwrap();
            let err = fd_rel_error(&f, &theta, 1e-6);
            eprintln!("finite {} L={big_l}: gradient relative error {err:.2e}", kern.name());
            assert!(err <= 1e-6, "{kern:?} L={big_l}: relative error {err:e}");
        }
    }
}

#[test]
fn profiled_k2ae_gradient_matches_central_differences() {
    faer::set_global_parallelism(Par::Seq);
    let n = 10;
    let x = random(n, 4, 2.0, 3);
    let k_in = &x * x.transpose();
    for kern in kernels() {
        for hidden in [vec![3], vec![3, 2]] {
            let big_l = hidden.len() + 1;
            let spec: Vec<LayerSpec> = (0..big_l)
                .map(|l| {
                    let op = if l + 1 < big_l { Some(random_psd(hidden[l], 20 + l as u64)) } else { None };
                    (if l == 0 { LayerKernel::Linear } else { kern }, op, 0.02 * (l + 1) as f64)
                })
                .collect();
            let theta: Vec<Mat<f64>> =
                hidden.iter().enumerate().map(|(l, &d)| random(n, d, 0.1, 200 + l as u64)).collect();
            let f = |t: &[Mat<f64>]| profiled_objective(k_in.as_ref(), k_in.as_ref(), &spec, t).unwrap();
            let err = fd_rel_error(&f, &theta, 1e-6);
            eprintln!("profiled {} L={big_l}: gradient relative error {err:.2e}", kern.name());
            assert!(err <= 1e-6, "{kern:?} L={big_l}: relative error {err:e}");
        }
    }
}

#[test]
fn krr_last_layer_is_stationary_and_gram_identities_hold() {
    faer::set_global_parallelism(Par::Seq);
    let (n, p) = (12, 2);
    let x = random(n, 3, 2.0, 5);
    let lam_l = 0.03;
    let phi1 = random(n, p, 0.2, 6);
    // General PSD A_L: K_L Phi_L A_L + n lambda_L Phi_L = X.
    let a_l = random_psd(3, 7);
    let spec: Vec<LayerSpec> =
        vec![(LayerKernel::Linear, None, 0.01), (LayerKernel::Gaussian { gamma: 0.5 }, Some(a_l.clone()), lam_l)];
    let phi_l = krr_last_layer(x.as_ref(), &spec, std::slice::from_ref(&phi1)).unwrap();
    let x1 = &(&x * x.transpose()) * &phi1;
    let k_l = LayerKernel::Gaussian { gamma: 0.5 }.gram(x1.as_ref()).unwrap();
    let lhs = &(&(&k_l * &phi_l) * &a_l) + &(n as f64 * lam_l * &phi_l);
    assert!(diff(lhs.as_ref(), x.as_ref()) < 1e-10 * frob(x.as_ref()));

    // A_L = I: distortion = n lambda_L^2 tr(N_L); full objective = profiled one.
    let spec_i: Vec<LayerSpec> =
        vec![(LayerKernel::Linear, None, 0.01), (LayerKernel::Gaussian { gamma: 0.5 }, None, lam_l)];
    let phi_l = krr_last_layer(x.as_ref(), &spec_i, std::slice::from_ref(&phi1)).unwrap();
    let r = &x - &k_l * &phi_l;
    let distortion = frob(r.as_ref()).powi(2) / n as f64;
    let n_l = &phi_l * phi_l.transpose();
    let tr_n: f64 = (0..n).map(|i| n_l[(i, i)]).sum();
    assert!((distortion - n as f64 * lam_l * lam_l * tr_n).abs() < 1e-10 * distortion);
    let (full, full_grad) = finite_objective(x.as_ref(), &spec_i, &[phi1.clone(), phi_l]).unwrap();
    let k_in = &x * x.transpose();
    let (prof, prof_grad) =
        profiled_objective(k_in.as_ref(), k_in.as_ref(), &spec_i, std::slice::from_ref(&phi1)).unwrap();
    assert!((full - prof).abs() < 1e-10 * full, "{full} vs {prof}");
    // Envelope theorem: the inner gradient at the KRR optimum equals the profiled one.
    assert!(diff(full_grad[0].as_ref(), prof_grad[0].as_ref()) < 1e-9 * frob(prof_grad[0].as_ref()));
}

fn linear_first_params(max_iter: usize) -> okr_estimators::KaeParams {
    Kae::params()
        .hidden_dims(vec![2])
        .kernels(vec![LayerKernel::Linear, LayerKernel::GaussianMedian])
        .lambdas(vec![1e-3, 1e-2])
        .last_layer(LastLayer::Krr)
        .max_iter(max_iter)
        .seed(3)
}

#[test]
fn kae_and_k2ae_give_the_same_codes_with_a_linear_first_kernel() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(18, 4, 2.0, 11);
    let x_new = random(5, 4, 2.0, 12);
    let params = linear_first_params(60);
    let kae = params.fit(x.as_ref()).unwrap();
    let k_in = &x * x.transpose();
    let k2ae = params.fit_k2ae_gram(k_in.as_ref()).unwrap();
    assert_eq!(kae.train_info().n_iter, k2ae.train_info().n_iter);
    let scale = frob(k2ae.train_code());
    assert!(diff(kae.train_codes()[0].as_ref(), k2ae.train_code()) < 1e-8 * scale);
    let cross = &x_new * x.transpose();
    let code_kae = kae.encode(x_new.as_ref()).unwrap();
    let code_k2ae = k2ae.encode(cross.as_ref(), None).unwrap();
    assert!(diff(code_kae.as_ref(), code_k2ae.as_ref()) < 1e-8 * frob(code_k2ae.as_ref()));
    let (a, b) = (kae.train_info().final_objective, k2ae.train_info().final_objective);
    assert!((a - b).abs() < 1e-8 * a, "{a} vs {b}");
    // Training really moved the codes.
    let hist = &k2ae.train_info().objective_history;
    assert!(hist[hist.len() - 1] < hist[0]);
}

#[test]
fn k2ae_test_distortion_equals_the_explicit_reconstruction_error() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(10, 3, 2.0, 21);
    let x_new = random(4, 3, 2.0, 22);
    let k_in = &x * x.transpose();
    for first in [LayerKernel::Linear, LayerKernel::Gaussian { gamma: 0.3 }] {
        let model = linear_first_params(30)
            .kernels(vec![first, LayerKernel::GaussianMedian])
            .fit_k2ae_gram(k_in.as_ref())
            .unwrap();
        let cross = &x_new * x.transpose();
        let diag: Vec<f64> = (0..4).map(|i| (0..3).map(|c| x_new[(i, c)].powi(2)).sum()).collect();
        let gram_only = model.test_distortion(cross.as_ref(), Some(&diag), cross.as_ref(), &diag).unwrap();
        let beta = model.reconstruction_weights(cross.as_ref(), Some(&diag)).unwrap();
        let rec = &beta * &x;
        for (i, g) in gram_only.iter().enumerate() {
            let explicit: f64 = (0..3).map(|c| (x_new[(i, c)] - rec[(i, c)]).powi(2)).sum();
            assert!((g - explicit).abs() < 1e-10 * explicit.max(1e-300), "{first:?} point {i}: {g} vs {explicit}");
        }
    }
}

/// Spec 2.2: the closed-form optimum of the 2-layer linear KAE without penalty.
#[test]
fn linear_kae_closed_form_code_is_the_whitened_kpca_map() {
    faer::set_global_parallelism(Par::Seq);
    let (n, d, p) = (20, 6, 2);
    let x = random(n, d, 2.0, 31);
    let svd = okr_linalg::thin_svd(x.as_ref()).unwrap();
    let (u, s, v) = (svd.u(), svd.s(), svd.v());
    let a_star = Mat::from_fn(n, p, |i, k| u[(i, k)] * s[k].powf(-1.5));
    let b_star = u * v.transpose();
    let spec: Vec<LayerSpec> = vec![(LayerKernel::Linear, None, 0.0), (LayerKernel::Linear, None, 0.0)];
    let (obj, _) = finite_objective(x.as_ref(), &spec, &[a_star.clone(), b_star]).unwrap();
    let bound: f64 = s[p..].iter().map(|v| v * v).sum();
    assert!((n as f64 * obj - bound).abs() < 1e-10 * bound, "{} vs {bound}", n as f64 * obj);
    let code = &(&x * x.transpose()) * &a_star;
    let want = Mat::from_fn(n, p, |i, k| u[(i, k)] * s[k].sqrt());
    assert!(diff(code.as_ref(), want.as_ref()) < 1e-10);
    // KPCA codes are sigma_k u_k: the KAE code is KPCA with column k divided by sqrt(sigma_k).
    let kpca = Kpca::fit((&x * x.transpose()).as_ref(), p).unwrap();
    let kc = kpca.train_codes();
    for k in 0..p {
        let sign = if (0..n).map(|i| kc[(i, k)] * want[(i, k)]).sum::<f64>() >= 0.0 { 1.0 } else { -1.0 };
        for i in 0..n {
            assert!((sign * kc[(i, k)] / s[k].sqrt() - want[(i, k)]).abs() < 1e-9);
        }
    }
}

/// Spec 2.3.3: Adam on the unpenalized linear KAE reaches the Eckart-Young error.
#[test]
fn adam_reaches_the_closed_form_error_within_one_percent() {
    faer::set_global_parallelism(Par::Seq);
    let (n, d, p) = (20, 6, 2);
    let x = random(n, d, 2.0, 31);
    let s = okr_linalg::thin_svd(x.as_ref()).unwrap().s().to_vec();
    let bound: f64 = s[p..].iter().map(|v| v * v).sum::<f64>() / n as f64;
    let model = Kae::params()
        .hidden_dims(vec![p])
        .kernels(vec![LayerKernel::Linear])
        .lambdas(vec![0.0])
        .last_layer(LastLayer::Gradient)
        .optimizer(Optimizer::adam(1e-2))
        .max_iter(4000)
        .tol(1e-10)
        .patience(200)
        .fit(x.as_ref())
        .unwrap();
    let err = model.reconstruction_error(x.as_ref()).unwrap();
    eprintln!("Adam: {err} vs closed form {bound} ({} steps)", model.train_info().n_iter);
    assert!(err >= bound * (1.0 - 1e-9), "below the Eckart-Young bound: {err} < {bound}");
    assert!(err <= 1.01 * bound, "Adam: {err} vs closed form {bound} ({} steps)", model.train_info().n_iter);
}

/// Spec 4.3: the non-convex toy with the true RKHS norm of the decoder.
#[test]
fn non_convexity_toy_has_a_non_global_critical_point_at_zero() {
    let x = Mat::from_fn(1, 1, |_, _| 1.0);
    let (lam, mu) = (0.1, 0.2);
    let spec: Vec<LayerSpec> = vec![(LayerKernel::Linear, None, lam), (LayerKernel::Linear, None, mu)];
    let at = |phi: f64, psi: f64| {
        finite_objective(x.as_ref(), &spec, &[Mat::from_fn(1, 1, |_, _| phi), Mat::from_fn(1, 1, |_, _| psi)]).unwrap()
    };
    let (v0, g0) = at(0.0, 0.0);
    assert_eq!(v0, 1.0);
    assert!(g0.iter().all(|g| g[(0, 0)] == 0.0));
    assert!((at(1.0, 1.0).0 - (lam + mu)).abs() < 1e-15);
    let (phi, psi) = (0.7, 1.3);
    let p_true = (1.0 - phi * phi * psi) * (1.0f64 - phi * phi * psi) + lam * phi * phi + mu * phi * phi * psi * psi;
    assert!((at(phi, psi).0 - p_true).abs() < 1e-14);
}

#[test]
fn stale_refresh_scheme_decreases_the_profiled_objective_and_plain_gd_runs() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(15, 3, 2.0, 41);
    let k_in = &x * x.transpose();
    let model = linear_first_params(40).refresh_every(5).fit_k2ae_gram(k_in.as_ref()).unwrap();
    let hist = &model.train_info().objective_history;
    assert!(model.train_info().final_objective < hist[0]);
    let gd = linear_first_params(40).optimizer(Optimizer::gradient_descent(1e-3)).fit(x.as_ref()).unwrap();
    assert!(gd.train_info().final_objective < gd.train_info().objective_history[0]);
}

#[test]
fn same_seed_same_model_and_serde_round_trip() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(12, 3, 2.0, 51);
    let k_in = &x * x.transpose();
    let a = linear_first_params(20).fit_k2ae_gram(k_in.as_ref()).unwrap();
    let b = linear_first_params(20).fit_k2ae_gram(k_in.as_ref()).unwrap();
    assert_eq!(diff(a.train_code(), b.train_code()), 0.0);
    let bytes = postcard::to_allocvec(&a).unwrap();
    let back: K2ae = postcard::from_bytes(&bytes).unwrap();
    let (ca, cb) = (a.encode(k_in.as_ref(), None).unwrap(), back.encode(k_in.as_ref(), None).unwrap());
    assert_eq!(diff(ca.as_ref(), cb.as_ref()), 0.0);
    let kae = linear_first_params(20).fit(x.as_ref()).unwrap();
    let back: Kae = serde_json::from_str(&serde_json::to_string(&kae).unwrap()).unwrap();
    assert!(diff(kae.encode(x.as_ref()).unwrap().as_ref(), back.encode(x.as_ref()).unwrap().as_ref()) < 1e-12);
}

#[test]
fn bad_input_and_parameters_are_errors() {
    let mut x = random(6, 2, 1.0, 61);
    x[(2, 1)] = f64::NAN;
    assert!(Kae::params().fit(x.as_ref()).is_err());
    assert!(matches!(Kae::params().fit(Mat::<f64>::zeros(0, 2).as_ref()), Err(Error::Empty { .. })));
    let k = Mat::<f64>::identity(4, 4);
    let model = linear_first_params(3).fit_k2ae_gram(k.as_ref()).unwrap();
    assert!(matches!(model.encode(Mat::<f64>::zeros(2, 3).as_ref(), None), Err(Error::ShapeMismatch { .. })));
    assert!(Kae::params().lambdas(vec![0.0]).check_ref().is_err(), "KRR last layer needs lambda_L > 0");
    assert!(Kae::params().refresh_every(0).check_ref().is_err());
    assert!(Kae::params().kernels(vec![LayerKernel::Gaussian { gamma: -1.0 }]).check_ref().is_err());
    assert!(Kae::params().optimizer(Optimizer::adam(f64::NAN)).check_ref().is_err());
    assert!(linear_first_params(3).last_layer(LastLayer::Gradient).fit_k2ae_gram(k.as_ref()).is_err());
    // A Gaussian first layer needs the new points' norms.
    let g = linear_first_params(3).kernels(vec![LayerKernel::Gaussian { gamma: 1.0 }, LayerKernel::Linear]);
    let model = g.fit_k2ae_gram(k.as_ref()).unwrap();
    assert!(model.encode(k.as_ref(), None).is_err());
}

#[test]
fn autotraits() {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Kae>();
    is_send_sync::<K2ae>();
    is_send_sync::<okr_estimators::KaeValidParams>();
}

/// Gaussian KAE 2-1-2 that never stops early (tol 0, patience above max_iter).
fn history_params(max_iter: usize, last: LastLayer) -> okr_estimators::KaeParams {
    Kae::params()
        .hidden_dims(vec![1])
        .kernels(vec![LayerKernel::GaussianMedian])
        .lambdas(vec![1e-4])
        .last_layer(last)
        .max_iter(max_iter)
        .tol(0.0)
        .patience(10 * max_iter)
        .seed(7)
}

#[test]
fn history_snapshot_at_the_last_step_is_the_fitted_model() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(24, 2, 3.0, 71);
    for last in [LastLayer::Krr, LastLayer::Gradient] {
        let (model, snaps) = history_params(40, last).fit_with_history(x.as_ref(), &[40, 0, 5, 5, 90]).unwrap();
        // Sorted, without repeats, and nothing past the 40 updates taken.
        assert_eq!(snaps.iter().map(|s| s.step).collect::<Vec<_>>(), vec![0, 5, 40]);
        let last_snap = &snaps[2].model;
        let enc = model.encode(x.as_ref()).unwrap();
        assert!(diff(last_snap.encode(x.as_ref()).unwrap().as_ref(), enc.as_ref()) <= 1e-12 * frob(enc.as_ref()));
        let rec = model.reconstruct(x.as_ref()).unwrap();
        assert!(diff(last_snap.reconstruct(x.as_ref()).unwrap().as_ref(), rec.as_ref()) <= 1e-12 * frob(rec.as_ref()));
        assert_eq!(last_snap.train_info().objective_history, model.train_info().objective_history);
        // Keeping snapshots does not change the training: same model as `fit`.
        let plain = history_params(40, last).fit(x.as_ref()).unwrap();
        assert_eq!(diff(plain.encode(x.as_ref()).unwrap().as_ref(), enc.as_ref()), 0.0);
        // Snapshot 0 is the initialization: its objective is the first one recorded.
        let h0 = model.train_info().objective_history[0];
        assert!((snaps[0].model.train_info().final_objective - h0).abs() <= 1e-12 * h0);
    }
}

#[test]
fn history_snapshot_at_step_s_equals_a_fit_stopped_after_s_steps() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(20, 3, 2.0, 72);
    for last in [LastLayer::Krr, LastLayer::Gradient] {
        let (model, snaps) = history_params(30, last).fit_with_history(x.as_ref(), &[1, 7, 20]).unwrap();
        for snap in &snaps {
            let short = history_params(snap.step, last).fit(x.as_ref()).unwrap();
            let (a, b) = (short.encode(x.as_ref()).unwrap(), snap.model.encode(x.as_ref()).unwrap());
            assert!(diff(a.as_ref(), b.as_ref()) <= 1e-12 * frob(a.as_ref()), "step {}", snap.step);
            let (ja, jb) = (short.train_info().final_objective, snap.model.train_info().final_objective);
            assert!((ja - jb).abs() <= 1e-12 * ja, "step {}: {ja} vs {jb}", snap.step);
            assert_eq!(snap.model.train_info().objective_history, model.train_info().objective_history[..snap.step]);
        }
        // The objective recorded before update s is the snapshot's objective at s.
        for snap in &snaps {
            let h = model.train_info().objective_history[snap.step];
            assert!((snap.model.train_info().final_objective - h).abs() <= 1e-12 * h);
        }
    }
}

#[test]
fn history_of_an_early_stopped_fit_ends_at_the_returned_model() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(16, 2, 2.0, 73);
    // tol = 1 stops as soon as `patience` steps have been taken.
    let params = history_params(100, LastLayer::Krr).tol(1.0).patience(6);
    let (model, snaps) = params.fit_with_history(x.as_ref(), &[6, 7]).unwrap();
    assert_eq!(model.train_info().stop, okr_estimators::kae::StopReason::Converged);
    // Six updates applied; the seventh evaluation met the stopping rule.
    assert_eq!(model.train_info().n_iter, 6);
    assert_eq!(model.train_info().objective_history.len(), 7);
    assert_eq!(snaps.len(), 1);
    assert_eq!(snaps[0].step, 6);
    let (a, b) = (model.encode(x.as_ref()).unwrap(), snaps[0].model.encode(x.as_ref()).unwrap());
    assert!(diff(a.as_ref(), b.as_ref()) <= 1e-12 * frob(a.as_ref()));
}

#[test]
fn decode_of_encode_is_reconstruct_and_checks_the_code_width() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(18, 3, 2.0, 74);
    let x_new = random(5, 3, 2.0, 75);
    // Deep network, code layer 2 of 4: the decoder is two layers.
    let model = Kae::params().hidden_dims(vec![3, 1, 3]).lambdas(vec![1e-3]).max_iter(20).fit(x.as_ref()).unwrap();
    assert_eq!(model.code_layer(), 2);
    let rec = model.reconstruct(x_new.as_ref()).unwrap();
    let dec = model.decode(model.encode(x_new.as_ref()).unwrap().as_ref()).unwrap();
    assert!(diff(dec.as_ref(), rec.as_ref()) <= 1e-12 * frob(rec.as_ref()));
    assert!(matches!(model.decode(Mat::<f64>::zeros(2, 2).as_ref()), Err(Error::ShapeMismatch { .. })));
    assert!(matches!(model.decode(Mat::<f64>::zeros(0, 1).as_ref()), Err(Error::Empty { .. })));
}

/// Warm start (issue 37): `k` Adam steps continued for `k` more equal `2k`
/// steps in one fit, bit for bit, for the KAE (KRR and gradient last layer)
/// and the K2AE; the history and step count continue the first fit's. A
/// model without optimizer state (a loaded one) continues from its
/// coefficients and still lowers the objective.
#[test]
fn warm_start_continues_kae_and_k2ae_exactly() {
    faer::set_global_parallelism(Par::Seq);
    let x = random(16, 3, 2.0, 71);
    let k_in = &x * x.transpose();
    // patience above 2k: no early stop.
    let p = |k| linear_first_params(k).patience(1000);
    let k = 12;
    for last in [LastLayer::Krr, LastLayer::Gradient] {
        let once = p(2 * k).last_layer(last).fit(x.as_ref()).unwrap();
        let half = p(k).last_layer(last).fit(x.as_ref()).unwrap();
        let twice = p(k).last_layer(last).fit_from(&half, x.as_ref()).unwrap();
        assert_eq!(twice.coefficients(), once.coefficients(), "{last:?}");
        assert_eq!(twice.train_info(), once.train_info(), "{last:?}");
        assert_eq!(twice.train_info().n_iter, 2 * k);
    }
    let once = p(2 * k).fit_k2ae_gram(k_in.as_ref()).unwrap();
    let half = p(k).fit_k2ae_gram(k_in.as_ref()).unwrap();
    let twice = p(k).check().unwrap().fit_k2ae_gram_from(&half, k_in.as_ref()).unwrap();
    assert_eq!(twice.coefficients(), once.coefficients());
    assert_eq!(twice.train_info(), once.train_info());
    // Through serde (no optimizer state): fresh Adam moments from the coefficients.
    let half = p(k).fit(x.as_ref()).unwrap();
    let loaded: Kae = serde_json::from_str(&serde_json::to_string(&half).unwrap()).unwrap();
    let cont = p(k).fit_from(&loaded, x.as_ref()).unwrap();
    assert_eq!(cont.train_info().n_iter, 2 * k);
    assert!(cont.train_info().final_objective < half.train_info().final_objective);
    // Another shape is refused, naming it.
    let err = p(k).fit_from(&half, random(10, 3, 2.0, 72).as_ref()).unwrap_err().to_string();
    assert!(err.contains("training samples of a continued fit"), "{err}");
    let err = p(k).hidden_dims(vec![3]).fit_from(&half, x.as_ref()).unwrap_err().to_string();
    assert!(err.contains("inner width of a continued fit"), "{err}");
}
