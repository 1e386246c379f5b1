//! Ranking metrics and readers on real files and synthetic checks.

use okr_eval::ranking_metrics::{kendall_tau, pairwise_ranking_loss_all};
use okr_eval::readers::ranking::{read_label_ranking, read_ratings};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn pairwise_loss_oracle_reversed_and_random() {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut total = 0.0;
    let reps = 400;
    for _ in 0..reps {
        let y: Vec<f64> = (0..20).map(|_| (rng.random::<f64>() * 10.0).round()).collect();
        let rev: Vec<f64> = y.iter().map(|v| -v + 1e-9 * rng.random::<f64>()).collect();
        let mut perm: Vec<usize> = (0..20).collect();
        perm.shuffle(&mut rng);
        let random: Vec<f64> = perm.iter().map(|&p| p as f64).collect();
        // Oracle = true ratings with ties broken arbitrarily: tied pairs weigh 0.
        let oracle: Vec<f64> = y.iter().map(|v| v + 1e-9 * rng.random::<f64>()).collect();
        assert_eq!(pairwise_ranking_loss_all(&y, &oracle), Some(0.0));
        assert_eq!(pairwise_ranking_loss_all(&y, &rev), Some(1.0));
        total += pairwise_ranking_loss_all(&y, &random).unwrap();
    }
    let mean = total / reps as f64;
    assert!((mean - 0.5).abs() < 0.02, "random mean {mean}");
}

#[test]
fn kendall_tau_is_symmetric_and_antisymmetric_under_reversal() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for k in 2..8 {
        let mut a: Vec<usize> = (1..=k).collect();
        let mut b = a.clone();
        a.shuffle(&mut rng);
        b.shuffle(&mut rng);
        let rev: Vec<usize> = b.iter().map(|r| k + 1 - r).collect();
        assert_eq!(kendall_tau(&a, &b), kendall_tau(&b, &a));
        assert!((kendall_tau(&a, &b) + kendall_tau(&a, &rev)).abs() < 1e-15);
    }
}

#[test]
fn readers_on_the_shared_data_when_present() {
    let dir = okr_eval::data_dir();
    let jester = dir.join("jester/jester3_ratings.csv");
    if jester.exists() {
        let r = read_ratings(&jester).unwrap();
        assert_eq!((r.users.len(), r.n_items, r.n_ratings()), (24938, 100, 615091));
        assert!(r.users.iter().all(|u| (14..=35).contains(&u.len())));
    }
    let iris = dir.join("label_ranking/iris.csv");
    if iris.exists() {
        let d = read_label_ranking(&iris).unwrap();
        assert_eq!((d.x.nrows(), d.x.ncols(), d.ranks[0].len()), (150, 4, 3));
    }
}

#[test]
fn malformed_files_are_parse_errors_with_lines() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    std::fs::write(&p, "2,1,3\n0.5,1,2,3\n0.1,1,1,2\n").unwrap();
    let e = read_label_ranking(&p).unwrap_err().to_string();
    assert!(e.contains(":3") || e.contains("line 3"), "{e}");
    std::fs::write(&p, "user,item,rating\n0,1,2\n0,x,1\n").unwrap();
    assert!(read_ratings(&p).is_err());
    std::fs::write(&p, "user,item,rating\n0,1,2\n0,1,3\n").unwrap();
    assert!(read_ratings(&p).is_err());
}

#[test]
fn ratings_with_a_huge_user_or_item_id_are_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.csv");
    for line in ["99999999999,0,1", "18446744073709551615,0,1", "0,18446744073709551615,1"] {
        std::fs::write(&p, format!("user,item,rating\n{line}\n")).unwrap();
        let e = read_ratings(&p).unwrap_err().to_string();
        assert!(e.contains(":2: expected user and item ids < 16777216"), "{e}");
    }
}

#[test]
fn label_ranking_header_widths_that_overflow_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("lr.csv");
    std::fs::write(&p, "1,18446744073709551615,2\n0.5,1,2\n").unwrap();
    let e = read_label_ranking(&p).unwrap_err().to_string();
    assert!(e.contains(":2: expected 18446744073709551615 features and 2 ranks per row, got 3 fields"), "{e}");
}
