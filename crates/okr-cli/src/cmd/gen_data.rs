//! `okr gen`.

use anyhow::{Context, Result, bail};
use okr_eval::{StandinPreset, write_arff, write_csv, write_svmlight};

use crate::cli::{GenArgs, GenFormat};

pub fn run(a: &GenArgs) -> Result<()> {
    let Some(preset) = StandinPreset::from_name(&a.preset) else {
        let names: Vec<&str> = StandinPreset::ALL.iter().map(|p| p.name()).collect();
        bail!("unknown preset {:?}; available: {}", a.preset, names.join(", "));
    };
    if !(a.scale.is_finite() && a.scale > 0.0) {
        bail!("invalid --scale {}: expected a finite number > 0", a.scale);
    }
    let mut spec = preset.spec().seed(a.seed);
    if a.scale != 1.0 {
        let (tr, te) = (spec.n_train, spec.n_test);
        let scaled = |n: usize| ((n as f64 * a.scale).round() as usize).max(1);
        spec = spec.sizes(scaled(tr), scaled(te));
    }
    spec.check().with_context(|| format!("invalid --scale {} for preset {}", a.scale, a.preset))?;
    let (train, test) = spec.generate()?;
    std::fs::create_dir_all(&a.output).with_context(|| format!("cannot create {}", a.output.display()))?;
    let ext = match a.format {
        GenFormat::Arff => "arff",
        GenFormat::Svmlight => "svm",
        GenFormat::Csv => "csv",
    };
    let name = spec.dataset_name();
    for (split, data) in [("train", &train), ("test", &test)] {
        let path = a.output.join(format!("{name}-{split}.{ext}"));
        match a.format {
            GenFormat::Arff => write_arff(&path, data, &name)?,
            GenFormat::Svmlight => write_svmlight(&path, data, false)?,
            GenFormat::Csv => write_csv(&path, data)?,
        }
        eprintln!(
            "okr: wrote {} ({} samples, {} features, {} labels; a seeded stand-in, not the real data)",
            path.display(),
            data.n_samples(),
            data.n_features(),
            data.n_labels()
        );
    }
    Ok(())
}
