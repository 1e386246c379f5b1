//! `okr gram`: the probability product kernel ([`okr_kernels::Ppk`]) of the
//! spectra of an MGF or MSP file, written as a Gram file (`.npy` or text)
//! that `okr fit --input-gram` and `--input-gram-test` read back.

use std::io::{self, Write};
use std::path::Path;

use anyhow::{Result, bail};
use faer::Mat;
use okr_eval::SpectrumLibrary;
use okr_kernels::Kernel;

use crate::cli::{SpectraGramArgs, SpectraKernelArgs};
use crate::config::set_threads;
use crate::output::write_result;

pub fn run(a: &SpectraGramArgs) -> Result<()> {
    set_threads(a.threads)?;
    let mut inputs = vec![("spectra file", a.input.as_path())];
    inputs.extend(a.columns.as_deref().map(|p| ("spectra file", p)));
    if let Some(out) = &a.output {
        okr_eval::check_not_input(out, &inputs)?;
    }
    let ppk = crate::recipe::spectra_kernel(&SpectraKernelArgs {
        peak_width: a.sigma,
        peak_weights: a.peak_weights,
        intensity_width: a.intensity_sigma,
        precursor_width: a.precursor_sigma,
    })
    .ppk()?;
    let rows = read_spectra(&a.input)?;
    let k = match &a.columns {
        None => ppk.gram(&rows.spectra),
        Some(path) => ppk.gram_block(&rows.spectra, &read_spectra(path)?.spectra),
    };
    let npy = a.output.as_deref().is_some_and(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")));
    write_result(a.output.as_deref(), |w| if npy { write_npy(w, &k) } else { write_text(w, &k) })?;
    eprintln!(
        "okr: gram {} x {} ({})",
        k.nrows(),
        k.ncols(),
        a.output.as_deref().map_or("stdout".into(), |p| p.display().to_string())
    );
    Ok(())
}

/// The spectra of an MGF or MSP file, by its extension.
pub(crate) fn read_spectra(path: &Path) -> Result<SpectrumLibrary> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let lib = match ext.as_deref() {
        Some("mgf") => okr_eval::read_mgf(path)?,
        Some("msp") => okr_eval::read_msp(path)?,
        _ => bail!("{}: expected a spectra file ending in .mgf or .msp", path.display()),
    };
    if lib.is_empty() {
        bail!("{}: no spectrum in the file", path.display());
    }
    Ok(lib)
}

/// One matrix row per line, values separated by spaces, shortest round-trip form.
fn write_text(w: &mut dyn Write, k: &Mat<f64>) -> io::Result<()> {
    for i in 0..k.nrows() {
        let row: Vec<String> = (0..k.ncols()).map(|j| format!("{:?}", k[(i, j)])).collect();
        writeln!(w, "{}", row.join(" "))?;
    }
    Ok(())
}

/// A NumPy `.npy` file, format 1.0: little-endian `float64`, C order.
fn write_npy(w: &mut dyn Write, k: &Mat<f64>) -> io::Result<()> {
    let dict = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", k.nrows(), k.ncols());
    // Magic (6) + version (2) + header length (2) + dict + padding + '\n', a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    let pad = unpadded.next_multiple_of(64) - unpadded;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let len = u16::try_from(header.len()).map_err(|_| io::Error::other("npy header too long"))?;
    w.write_all(b"\x93NUMPY\x01\x00")?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    for i in 0..k.nrows() {
        for j in 0..k.ncols() {
            w.write_all(&k[(i, j)].to_le_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.npy` and text files read back by okr's Gram readers, bit for bit.
    #[test]
    fn written_grams_read_back_exactly() {
        let k = Mat::from_fn(3, 2, |i, j| (i as f64 + 0.1) / (j as f64 + 3.0) - 0.2);
        let dir = std::env::temp_dir().join(format!("okr-gram-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, npy) in [("k.npy", true), ("k.txt", false)] {
            let path = dir.join(name);
            let mut buf = Vec::new();
            if npy { write_npy(&mut buf, &k) } else { write_text(&mut buf, &k) }.unwrap();
            if npy {
                assert_eq!((buf.len() - 3 * 2 * 8) % 64, 0, "header padded to 64 bytes");
            }
            std::fs::write(&path, &buf).unwrap();
            let back = okr_kernels::read_gram(&path).unwrap();
            assert_eq!((back.nrows(), back.ncols()), (3, 2));
            for i in 0..3 {
                for j in 0..2 {
                    assert_eq!(back[(i, j)].to_bits(), k[(i, j)].to_bits(), "{name} ({i}, {j})");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
