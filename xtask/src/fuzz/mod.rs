//! `cargo xtask fuzz TARGET --seconds N`: mutation fuzzing of okr's readers on
//! the stable toolchain.
//!
//! A target is one function `fn(&[u8])` ([`okr_eval::fuzz::TARGETS`]; a new
//! target, such as the model loader, is one more entry in [`targets`]). The
//! loop starts from seeds (the first KB of the shared data files and small
//! hand-made files, [`seeds`]), mutates a corpus entry ([`mutate`]: bit flips,
//! byte inserts and deletes, duplicated ranges, splices, interesting numbers
//! and tokens), and runs each input on a worker thread under
//! `catch_unwind`, waiting at most [`HANG_LIMIT`] for it. A panic or a hang
//! is a finding: the input is written to
//! `crates/okr-eval/tests/fuzz-regressions/<target>/` (the model loader's to
//! `crates/okr-estimators/tests/fuzz-regressions/model/`), which the tests of
//! that crate replay on every `cargo test`. Without coverage
//! feedback on stable, the corpus grows by a random sample of the mutated
//! inputs, so mutations stack over time.

pub mod mutate;
pub mod seeds;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// An input running longer than this is a hang.
pub const HANG_LIMIT: Duration = Duration::from_secs(10);
/// Inputs are cut to this length (readers are line-based; longer inputs only slow the loop).
const MAX_INPUT_LEN: usize = 16 << 10;
/// The corpus stops growing at this many entries.
const MAX_CORPUS: usize = 4096;

/// A fuzz target: runs one input and panics only on a bug.
pub type Target = fn(&[u8]);

/// Every target by name: the readers of okr-eval, the model loader of
/// okr-estimators (`model`: a model file, then its body under a fresh
/// checksum so that mutations reach the decoder and the validation; whatever
/// loads is used to predict), and okr-decode's per-query candidate file
/// reader (`per-query`).
pub fn targets() -> Vec<(&'static str, Target)> {
    let mut t = okr_eval::fuzz::TARGETS.to_vec();
    t.push(("model", okr_estimators::persist::fuzz_model_file));
    t.push(("per-query", okr_decode::per_query::fuzz_candidate_file));
    t
}

/// What fuzzing one target found.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Inputs run.
    pub executions: u64,
    /// Distinct panics (by message and location).
    pub crashes: Vec<String>,
    /// Whether an input ran past [`HANG_LIMIT`] (fuzzing of the target stops there).
    pub hang: bool,
    /// Files written to the regression folder.
    pub saved: Vec<PathBuf>,
    /// Final corpus size.
    pub corpus: usize,
}

/// Where found inputs go: `crates/<crate>/tests/fuzz-regressions/<target>/`
/// of the crate that owns the target and replays them in its tests.
fn regression_dir(target: &str) -> PathBuf {
    let owner = match target {
        "model" => "okr-estimators",
        "per-query" => "okr-decode",
        _ => "okr-eval",
    };
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates").join(owner).join("tests/fuzz-regressions").join(target)
}

/// The message and location of the last panic, recorded by the hook.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn install_quiet_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        *LAST_PANIC.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(format!("{at}: {msg}"));
    }));
}

/// 64-bit FNV-1a, to name saved inputs.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn save(target: &str, kind: &str, input: &[u8]) -> Result<PathBuf> {
    let dir = regression_dir(target);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{kind}-{:016x}", fnv1a(input)));
    std::fs::write(&path, input)?;
    Ok(path)
}

/// Fuzzes one target for `budget`.
pub fn fuzz_target(name: &str, target: Target, budget: Duration, seed: u64) -> Result<Report> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut corpus = seeds::for_target(name);
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let (to_worker, inputs) = mpsc::channel::<Vec<u8>>();
    let (to_main, outcomes) = mpsc::channel::<Option<String>>();
    std::thread::Builder::new().name(format!("fuzz-{name}")).spawn(move || {
        for input in inputs {
            let outcome = std::panic::catch_unwind(|| target(&input));
            let panic = outcome.err().map(|_| {
                LAST_PANIC.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take().unwrap_or_default()
            });
            if to_main.send(panic).is_err() {
                break;
            }
        }
    })?;
    let mut report = Report::default();
    let start = Instant::now();
    let mut k = 0usize;
    while start.elapsed() < budget {
        // Seeds run once as they are, then mutated picks.
        let input = if k < corpus.len() && report.executions < corpus.len() as u64 {
            corpus[k].clone()
        } else {
            let base = &corpus[rng.random_range(0..corpus.len())];
            mutate::mutate(&mut rng, base, &corpus, MAX_INPUT_LEN)
        };
        k += 1;
        to_worker.send(input.clone())?;
        report.executions += 1;
        match outcomes.recv_timeout(HANG_LIMIT) {
            Ok(None) => {
                if corpus.len() < MAX_CORPUS && rng.random_range(0..64u32) == 0 {
                    corpus.push(input);
                }
            }
            Ok(Some(panic)) => {
                if !report.crashes.contains(&panic) {
                    eprintln!("fuzz {name}: panic {panic}");
                    report.saved.push(save(name, "crash", &input)?);
                    report.crashes.push(panic);
                }
            }
            Err(_) => {
                eprintln!("fuzz {name}: an input ran past {} s", HANG_LIMIT.as_secs());
                report.saved.push(save(name, "hang", &input)?);
                report.hang = true;
                // The worker is stuck in the target: leave it, stop this target.
                break;
            }
        }
    }
    report.corpus = corpus.len();
    Ok(report)
}

/// `cargo xtask fuzz TARGET|all --seconds N [--seed S]`.
pub fn run(target: &str, seconds: f64, seed: u64) -> Result<()> {
    if !(seconds.is_finite() && seconds > 0.0) {
        bail!("invalid --seconds {seconds}: expected a positive number");
    }
    let all = targets();
    let chosen: Vec<(&str, Target)> = if target == "all" {
        all
    } else {
        let Some(&t) = all.iter().find(|(n, _)| *n == target) else {
            let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
            bail!("unknown fuzz target {target:?}; available: all, {}", names.join(", "));
        };
        vec![t]
    };
    install_quiet_panic_hook();
    let mut failed = Vec::new();
    for (name, t) in chosen {
        let r = fuzz_target(name, t, Duration::from_secs_f64(seconds), seed)?;
        println!(
            "fuzz {name}: {} executions in {seconds} s, {} crashes, {} hangs, corpus {}",
            r.executions,
            r.crashes.len(),
            u8::from(r.hang),
            r.corpus
        );
        for p in &r.saved {
            println!("  saved {}", p.display());
        }
        if !r.crashes.is_empty() || r.hang {
            failed.push(name);
        }
    }
    let _ = std::panic::take_hook();
    if !failed.is_empty() {
        bail!("fuzzing found crashes or hangs in: {}", failed.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panics_on_bang(data: &[u8]) {
        assert!(!data.contains(&b'!'), "a bang");
    }

    #[test]
    fn a_panicking_target_is_reported_and_a_clean_one_is_not() {
        install_quiet_panic_hook();
        // Not a real target name, so nothing is saved into the repository.
        let clean = fuzz_target("test-clean", |_| {}, Duration::from_millis(200), 1).unwrap();
        assert!(clean.executions > 10 && clean.crashes.is_empty() && !clean.hang);
        let r = fuzz_target("test-bang", panics_on_bang, Duration::from_millis(300), 1);
        let _ = std::panic::take_hook();
        let r = r.unwrap();
        assert_eq!(r.crashes.len(), 1, "{:?}", r.crashes);
        assert!(r.crashes[0].contains("a bang"), "{:?}", r.crashes);
        for p in &r.saved {
            assert!(std::fs::read(p).unwrap().contains(&b'!'));
            std::fs::remove_file(p).unwrap();
        }
        let _ = std::fs::remove_dir(regression_dir("test-bang"));
    }
}
