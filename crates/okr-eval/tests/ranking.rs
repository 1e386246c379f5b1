//! Ranking metrics and readers on real files and synthetic checks.

use okr_eval::ranking_metrics::{kendall_tau, pairwise_ranking_loss_all};
use okr_eval::readers::ranking::{
    MOVIELENS_100K_ITEMS, SUSHI_ITEMS, read_label_ranking, read_movielens_100k, read_ratings, read_star_ratings,
    read_sushi,
};
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
    let ml = dir.join("movielens/ml100k_ratings.csv");
    if ml.exists() {
        let r = read_movielens_100k(&ml).unwrap();
        assert_eq!((r.users.len(), r.n_items, r.n_ratings()), (943, 1682, 100_000));
        let counts: Vec<usize> = r.users.iter().map(Vec::len).collect();
        assert_eq!((counts.iter().min(), counts.iter().max()), (Some(&20), Some(&737)));
    }
    let sushi = dir.join("sushi/sushi_ratings.csv");
    if sushi.exists() {
        let r = read_sushi(&sushi).unwrap();
        assert_eq!((r.users.len(), r.n_items, r.n_ratings()), (5000, 100, 50_000));
        assert!(r.users.iter().all(|u| u.len() == 10));
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

#[test]
fn star_ratings_small_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("stars.csv");
    // Header, users out of order, a user with no rating (1), no final newline.
    std::fs::write(&p, "user,item,rating\n2,3,4\n0,0,1\n0,5,5\n2,1,3").unwrap();
    let r = read_star_ratings(&p, 5).unwrap();
    assert_eq!(r.n_items, 6);
    assert_eq!(r.users, vec![vec![(0, 1.0), (5, 5.0)], vec![], vec![(3, 4.0), (1, 3.0)]]);
    // The named readers keep the whole catalogue even when its last items are unrated.
    let ml = read_movielens_100k(&p).unwrap();
    assert_eq!((ml.n_items, ml.users.clone()), (MOVIELENS_100K_ITEMS, r.users.clone()));
    assert_eq!(read_sushi(&p).unwrap().n_items, SUSHI_ITEMS);
    // Every way a rating can leave the 1..=5 star scale, with its line.
    for (bad, line) in [("0,1,0", 3), ("0,1,6", 3), ("0,1,2.5", 3), ("0,1,-1", 3)] {
        std::fs::write(&p, format!("user,item,rating\n0,0,3\n{bad}\n")).unwrap();
        for e in [read_star_ratings(&p, 5).unwrap_err(), read_sushi(&p).unwrap_err()] {
            let e = e.to_string();
            assert!(e.contains(&format!(":{line}: rating")) && e.contains("1..=5"), "{e}");
        }
        // The plain reader takes any finite rating.
        assert!(read_ratings(&p).is_ok());
    }
    // A 3-star scale rejects 4.
    std::fs::write(&p, "user,item,rating\n0,0,4\n").unwrap();
    assert!(read_star_ratings(&p, 3).is_err());
    // An item beyond the sushi catalogue (ids 0..100) is an error with its line.
    std::fs::write(&p, "user,item,rating\n0,99,3\n1,100,3\n").unwrap();
    let e = read_sushi(&p).unwrap_err().to_string();
    assert!(e.contains(":3: item id 100 is beyond the catalogue of 100 items"), "{e}");
    assert_eq!(read_movielens_100k(&p).unwrap().users[1], vec![(100, 3.0)]);
    // Repeated (user, item) pairs stay an error.
    std::fs::write(&p, "user,item,rating\n0,1,2\n0,1,3\n").unwrap();
    assert!(read_sushi(&p).unwrap_err().to_string().contains(":3: repeated rating of item 1 by user 0"));
}
