//! `cargo xtask test`: the whole test suite. Runs `cargo test --workspace`,
//! then builds the Python package's binary wheel once (`cargo xtask wheel`'s
//! build: abi3, manylinux2014, in a virtual environment made from PyPI,
//! `target/py-venv`, packages pinned in crates/okr-py/requirements-test.txt,
//! installed again only when that file changes), installs it and runs pytest
//! on crates/okr-py/tests, then installs the same wheel into a fresh
//! environment with no Rust toolchain on PATH and runs the README's Python
//! example, a pickle round trip and one Dask fit there (`wheel::check_installed`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::wheel;

/// Runs `cmd`, failing with its description when it exits non-zero.
pub fn run(cmd: &mut Command, what: &str) -> Result<()> {
    eprintln!("xtask test: {what}");
    let status = cmd.status().with_context(|| format!("cannot start: {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// The Python of `cargo xtask test` with this checkout's okr installed, and
/// an experiment's benchmark script written to `target/<name>/bench.py`.
pub fn bench_script(name: &str, text: &str) -> Result<(PathBuf, PathBuf)> {
    let python = python_with_okr()?;
    let dir = target_dir(&workspace_root()).join(name);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let script = dir.join("bench.py");
    std::fs::write(&script, text).with_context(|| format!("cannot write {}", script.display()))?;
    Ok((python, script))
}

/// Runs `python script mode data` in the workspace root and parses the last
/// line of its standard output as JSON (the benchmark scripts' result line).
pub fn bench(python: &Path, script: &Path, mode: &str, data: &Path) -> Result<serde_json::Value> {
    let out = Command::new(python)
        .arg(script)
        .arg(mode)
        .arg(data)
        .current_dir(workspace_root())
        .output()
        .with_context(|| format!("cannot run {}", python.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!("{mode}: {}", err.lines().rev().take(5).collect::<Vec<_>>().join(" | "));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().context("no output")?;
    serde_json::from_str(line).with_context(|| format!("{mode}: cannot parse {line:?}"))
}

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// Creates the virtual environment and installs the pinned packages unless
/// it already holds exactly these pins; returns its Python.
pub fn virtual_env(venv: &Path, requirements: &Path) -> Result<PathBuf> {
    let python = venv.join("bin/python");
    let stamp = venv.join("okr-requirements.txt");
    let wanted =
        std::fs::read_to_string(requirements).with_context(|| format!("cannot read {}", requirements.display()))?;
    if python.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(python);
    }
    let host = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    run(Command::new(&host).args(["-m", "venv", "--clear"]).arg(venv), &format!("{host} -m venv {}", venv.display()))?;
    run(
        Command::new(&python).args(["-m", "pip", "install", "--quiet", "-r"]).arg(requirements),
        &format!("pip install -r {}", requirements.display()),
    )?;
    std::fs::write(&stamp, wanted).with_context(|| format!("cannot write {}", stamp.display()))?;
    Ok(python)
}

/// `cargo xtask test [--python-only]`.
pub fn run_all(python_only: bool) -> Result<()> {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if !python_only {
        run(Command::new(&cargo).args(["test", "--workspace"]).current_dir(&root), "cargo test --workspace")?;
    }
    let (python, wheel) = python_and_wheel()?;
    // From the workspace root, so that okr finds ../shared/data as the Rust
    // tests do (or OKR_DATA_DIR when set).
    run(
        Command::new(&python)
            .args(["-m", "pytest", "-p", "no:cacheprovider", "-q"])
            .arg(root.join("crates/okr-py/tests"))
            .current_dir(&root),
        "pytest crates/okr-py/tests",
    )?;
    wheel::check_installed(&wheel)
}

/// The interpreter of `target/py-venv` with the okr package built from
/// this checkout (the release wheel of `cargo xtask wheel`) and installed.
pub fn python_with_okr() -> Result<PathBuf> {
    Ok(python_and_wheel()?.0)
}

/// [`python_with_okr`] and the wheel it installed (`target/py-wheels`).
fn python_and_wheel() -> Result<(PathBuf, PathBuf)> {
    let root = workspace_root();
    let target = target_dir(&root);
    let python = virtual_env(&target.join("py-venv"), &root.join("crates/okr-py/requirements-test.txt"))?;
    let wheel = wheel::build(&python, &target.join("py-wheels"))?;
    run(
        Command::new(&python).args(["-m", "pip", "install", "--quiet", "--force-reinstall", "--no-deps"]).arg(&wheel),
        "pip install the okr wheel",
    )?;
    Ok((python, wheel))
}
