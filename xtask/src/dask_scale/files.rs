//! `cargo xtask reproduce dask-scale-files` (and `dask-scale-files-quick`, 1/4 size):
//! Nystroem KRR on the Bookmarks-shaped stand-in of rr-scale (60000 / 27856
//! rows, 2150 sparse features, 208 labels; 15000 anchors), fitted and
//! decoded through `okr.dask` on a 2-worker `LocalCluster` (partitions read
//! on the workers from `.npy` files under the target directory) and in one Python process: fit and
//! decode seconds, peak memory (driver, each worker), bytes shipped (plan,
//! statistics, merged statistics, model), test F1 (must be equal). Each run
//! is its own process (`files.py`). Timings on a shared machine are upper
//! bounds.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use okr_eval::{MetricRecord, write_records};
use okr_kernels::{CsrRows, LabelSets, median_sq_distance};
use serde_json::{Value, json};

use crate::common::data::SparseSplit;
use crate::common::process::MachineState;
use crate::python_tests::{bench, python_with_okr, target_dir, workspace_root};

const BENCH_PY: &str = include_str!("files.py");

/// Writes a 1-D `.npy` array (`<f8` or `<i8`).
fn write_npy(path: &Path, descr: &str, len: usize, bytes: &[u8]) -> Result<()> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({len},), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("{}", path.display()))?);
    f.write_all(b"\x93NUMPY\x01\x00")?;
    f.write_all(&(header.len() as u16).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    f.write_all(bytes)?;
    Ok(())
}

fn write_csr(dir: &Path, name: &str, indptr: &[usize], indices: &[usize], values: &[f64], cols: usize) -> Result<()> {
    let i64s = |v: &[usize]| v.iter().flat_map(|&x| (x as i64).to_le_bytes()).collect::<Vec<u8>>();
    let f64s: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
    write_npy(&dir.join(format!("{name}_data.npy")), "<f8", values.len(), &f64s)?;
    write_npy(&dir.join(format!("{name}_indices.npy")), "<i8", indices.len(), &i64s(indices))?;
    write_npy(&dir.join(format!("{name}_indptr.npy")), "<i8", indptr.len(), &i64s(indptr))?;
    write_npy(&dir.join(format!("{name}_shape.npy")), "<i8", 2, &i64s(&[indptr.len() - 1, cols]))
}

fn write_x(dir: &Path, name: &str, x: &CsrRows) -> Result<()> {
    write_csr(dir, name, x.indptr(), x.indices(), x.values(), x.n_features())
}

fn write_y(dir: &Path, name: &str, y: &LabelSets) -> Result<()> {
    let mut indptr = vec![0];
    let mut indices = Vec::new();
    for s in y.iter() {
        indices.extend_from_slice(s);
        indptr.push(indices.len());
    }
    write_csr(dir, name, &indptr, &indices, &vec![1.0; indices.len()], y.n_labels())
}

/// Runs the experiment at `1/div` size and writes `{name}.{json,md}`.
pub fn run(name: &str, div: usize, out_dir: &Path, seed: u64) -> Result<()> {
    let (n_train, n_test, m) = (60000 / div, 27856 / div, 15000 / div);
    let data = SparseSplit::bookmarks(seed, div)?;
    let (x_train, x_test, dataset) = (&data.x, &data.x_test, &data.name);
    std::fs::create_dir_all(out_dir)?;
    // The generated data stay under the target directory, out of the repository.
    let dir = target_dir(&workspace_root()).join(format!("{name}-data"));
    std::fs::create_dir_all(&dir)?;
    write_x(&dir, "xtrain", x_train)?;
    write_x(&dir, "xtest", x_test)?;
    write_y(&dir, "ytrain", &data.y)?;
    write_y(&dir, "ytest", &data.y_test)?;
    // rr-scale's kernels: Gaussian input width c / median with c = 1, output
    // sigma^2 = mean cardinality; lambda from its grid.
    let gamma = 1.0 / median_sq_distance(x_train, 2000);
    let output_gamma = 1.0 / (2.0 * data.y.mean_cardinality().max(f64::MIN_POSITIVE));
    // One partition per worker: one statistic each, one merge (see docs/scale-out.md).
    let partitions = 2;
    let config = json!({
        "n_train": n_train, "m": m, "lam": 1e-4, "gamma": gamma, "output_gamma": output_gamma,
        "partitions": partitions,
    });
    std::fs::write(dir.join("config.json"), config.to_string())?;
    let script = dir.join("bench.py");
    std::fs::write(&script, BENCH_PY)?;
    let python = python_with_okr()?;
    let machine = MachineState::now();
    eprintln!("xtask: dask-scale single run");
    let single = bench(&python, &script, "single", &dir)?;
    eprintln!("xtask: dask-scale dask run");
    let dist = bench(&python, &script, "dask", &dir)?;
    let machine_after = MachineState::now();
    let f = |v: &Value, k: &str| v[k].as_f64().with_context(|| format!("missing {k} in {v}"));
    let mut records = Vec::new();
    for (method, v) in [("single-process", &single), ("dask-2-workers", &dist)] {
        for key in ["fit_s", "decode_s", "f1", "peak_mb"] {
            records.push(
                MetricRecord::new(name, dataset, method, key, f(v, key)?)
                    .with_stand_in(true)
                    .with_setting("n", n_train)
                    .with_setting("m", m)
                    .with_setting("partitions", partitions),
            );
        }
    }
    write_records(out_dir.join(format!("{name}.json")), &records)?;
    let mut md = String::new();
    writeln!(md, "# {name}: NystroemKRR through okr.dask (2-worker LocalCluster) vs one process\n")?;
    writeln!(md, "{dataset}: {n_train} training / {n_test} test rows, m = {m} anchors, {partitions} partitions.")?;
    writeln!(md, "{}.\n", machine.describe(&machine_after))?;
    writeln!(md, "| run | fit s | decode s | F1 | peak MB (driver) | peak MB (workers) |")?;
    writeln!(md, "|---|---|---|---|---|---|")?;
    for (label, v) in [("one process (2 threads)", &single), ("LocalCluster 2 x 1 thread", &dist)] {
        writeln!(
            md,
            "| {label} | {:.1} | {:.1} | {:.4} | {:.0} | {} |",
            f(v, "fit_s")?,
            f(v, "decode_s")?,
            f(v, "f1")?,
            f(v, "peak_mb")?,
            v.get("worker_peak_mb").map_or("-".to_string(), |w| w.to_string()),
        )?;
    }
    let mb = |k: &str| dist[k].as_f64().map_or("-".into(), |b| format!("{:.1} MB", b / 1e6));
    writeln!(
        md,
        "\nShipped: plan {}, partition statistics {} (sum), merged statistics {}, model {} (scattered to each worker).",
        mb("plan_bytes"),
        mb("statistics_bytes"),
        mb("merged_bytes"),
        mb("model_bytes")
    )?;
    let secs = |k: &str| dist[k].as_f64().map_or("-".into(), |s| format!("{s:.1} s"));
    writeln!(
        md,
        "Distributed fit by step (driver wall time): plan {} (partitions read and kept on the workers, \
         shapes, the anchors' rows gathered), statistics and merges {}, finalize on the driver {}.",
        secs("plan_s"),
        secs("statistics_s"),
        secs("finalize_s")
    )?;
    writeln!(
        md,
        "Both runs are timed from the `.npy` files (the single process reads its data inside the timed fit and \
         decode, as the workers do)."
    )?;
    let (f1s, f1d) = (f(&single, "f1")?, f(&dist, "f1")?);
    writeln!(md, "F1 equal: {} ({f1s} vs {f1d}).", f1s == f1d)?;
    std::fs::write(out_dir.join(format!("{name}.md")), &md)?;
    print!("{md}");
    Ok(())
}
