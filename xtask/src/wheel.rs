//! `cargo xtask wheel`: the binary wheel of the Python package, for users
//! without a Rust toolchain. One abi3 wheel (PyO3's limited API: CPython
//! 3.11 and newer, the first whose limited API has the buffer protocol that
//! okr reads NumPy arrays through) built by maturin and linked by zig (the `ziglang` PyPI
//! package pinned in crates/okr-py/requirements-test.txt) against glibc
//! 2.17, so that its tag is manylinux2014 / manylinux_2_17 and pip takes it
//! on Linux distributions from 2014 on. `cargo xtask test` installs this
//! wheel for pytest, then installs it again into a fresh virtual
//! environment with no Rust toolchain on PATH ([`check_installed`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::python_tests::{run, target_dir, virtual_env, workspace_root};

/// maturin's `--compatibility`: the glibc 2.17 baseline.
pub const COMPATIBILITY: &str = "manylinux2014";

/// The pinned build and test packages of `target/py-venv`.
fn requirements(root: &Path) -> PathBuf {
    root.join("crates/okr-py/requirements-test.txt")
}

/// Builds the wheel into `out` (emptied first) with the maturin and zig of
/// the virtual environment of `python`; returns the wheel's path.
pub fn build(python: &Path, out: &Path) -> Result<PathBuf> {
    let root = workspace_root();
    let _ = std::fs::remove_dir_all(out);
    let bin = python.parent().context("the virtual environment's python has no directory")?;
    // maturin runs zig as `python3 -m ziglang` from PATH: the environment's.
    let mut path = OsString::from(bin);
    if let Some(rest) = std::env::var_os("PATH") {
        path.push(":");
        path.push(rest);
    }
    run(
        Command::new(bin.join("maturin"))
            .args(["build", "--release", "--quiet", "--zig", "--compatibility", COMPATIBILITY, "-m"])
            .arg(root.join("crates/okr-py/Cargo.toml"))
            .arg("-i")
            .arg(python)
            .arg("-o")
            .arg(out)
            .env("PATH", path)
            .env("CARGO_TARGET_DIR", target_dir(&root)),
        &format!("maturin build --release --zig --compatibility {COMPATIBILITY} (crates/okr-py)"),
    )?;
    let wheels: Vec<PathBuf> = std::fs::read_dir(out)
        .with_context(|| format!("cannot list {}", out.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    match wheels.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("maturin wrote no wheel to {}", out.display()),
        more => bail!("maturin wrote {} wheels to {}, expected one", more.len(), out.display()),
    }
}

/// The wheel's compatibility tags, parsed by pip's own wheel-name parser.
pub fn tags(python: &Path, wheel: &Path) -> Result<String> {
    let name = wheel.file_name().context("wheel path has no file name")?.to_string_lossy().into_owned();
    let script = "import sys\nfrom pip._vendor.packaging.utils import parse_wheel_filename\n\
                  print(' '.join(sorted(str(t) for t in parse_wheel_filename(sys.argv[1])[3])))";
    let out = Command::new(python).args(["-c", script, &name]).output().context("cannot run pip's parser")?;
    if !out.status.success() {
        bail!("pip cannot parse the wheel name {name}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// PATH without any directory that holds cargo, rustc or maturin.
fn path_without_toolchain() -> OsString {
    let dirs = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&dirs)
        .filter(|d| !["cargo", "rustc", "maturin"].iter().any(|tool| d.join(tool).exists()))
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

/// `cmd` with `path` as PATH and without the variables that point at a
/// Rust toolchain or at the source tree.
fn without_toolchain<'a>(cmd: &'a mut Command, path: &OsString) -> &'a mut Command {
    for var in ["CARGO", "CARGO_HOME", "CARGO_TARGET_DIR", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTC", "PYTHONPATH"] {
        cmd.env_remove(var);
    }
    cmd.env("PATH", path)
}

/// Installs `wheel` into a fresh virtual environment (`target/wheel-venv`)
/// from PyPI binaries only, and runs crates/okr-py/tests/installed/check_wheel.py
/// there with no Rust toolchain on PATH: the README's Python example, a
/// pickle round trip and one okr.dask fit.
pub fn check_installed(wheel: &Path) -> Result<()> {
    let root = workspace_root();
    let venv = target_dir(&root).join("wheel-venv");
    let host = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run(Command::new(&host).args(["-m", "venv", "--clear"]).arg(&venv), &format!("{host} -m venv {}", venv.display()))?;
    let python = venv.join("bin/python");
    let path = path_without_toolchain();
    run(
        without_toolchain(
            Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", "--only-binary", ":all:", "-c"])
                .arg(requirements(&root))
                .arg(wheel)
                .args(["dask", "distributed"]),
            &path,
        ),
        "pip install the wheel into a fresh environment (binaries only)",
    )?;
    run(
        without_toolchain(
            Command::new(&python)
                .arg(root.join("crates/okr-py/tests/installed/check_wheel.py"))
                .arg(root.join("README.md"))
                .current_dir(&root),
            &path,
        ),
        "the installed wheel without a Rust toolchain (check_wheel.py)",
    )
}

/// `cargo xtask wheel [--out DIR]`: builds the wheel and reports its path,
/// size, build time and tags.
pub fn run_cli(out: Option<PathBuf>) -> Result<()> {
    let root = workspace_root();
    let target = target_dir(&root);
    let python = virtual_env(&target.join("py-venv"), &requirements(&root))?;
    let out = out.unwrap_or_else(|| target.join("wheels"));
    let start = Instant::now();
    let wheel = build(&python, &out)?;
    let seconds = start.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&wheel).with_context(|| format!("cannot stat {}", wheel.display()))?.len();
    println!("{}", wheel.display());
    println!("size: {:.1} MB ({bytes} bytes)", bytes as f64 / 1e6);
    println!("build: {seconds:.0} s");
    println!("tags (pip): {}", tags(&python, &wheel)?);
    Ok(())
}
