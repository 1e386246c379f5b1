//! `okr info MODEL`: what a model file holds, as text or JSON.

use anyhow::Result;
use serde_json::Value;

use crate::cli::InfoArgs;
use crate::output::write_result;

/// Labels listed by name in the text form before "... and N more".
const NAMES_SHOWN: usize = 12;

pub fn run(a: &InfoArgs) -> Result<()> {
    let saved = crate::model::load(&a.model)?;
    let report = saved.describe();
    if a.json {
        return write_result(None, |w| writeln!(w, "{report}"));
    }
    let mut text = String::new();
    let line = |text: &mut String, key: &str, v: &Value| {
        let shown = match v {
            Value::String(s) => s.clone(),
            Value::Null => "-".into(),
            other => other.to_string(),
        };
        text.push_str(&format!("{key:<18}{shown}\n"));
    };
    for key in [
        "estimator",
        "output_kind",
        "okr_version",
        "format_version",
        "n_features",
        "n_labels",
        "index_base",
        "standardized",
        "seed",
        "fit_seconds",
    ] {
        line(&mut text, key, &report[key]);
    }
    if let Some(params) = report["parameters"].as_object() {
        for (k, v) in params {
            line(&mut text, k, v);
        }
    }
    let names: Vec<&str> =
        report["label_names"].as_array().map_or(Vec::new(), |a| a.iter().filter_map(Value::as_str).collect());
    if !names.is_empty() {
        let mut shown = names.iter().take(NAMES_SHOWN).copied().collect::<Vec<_>>().join(", ");
        if names.len() > NAMES_SHOWN {
            shown.push_str(&format!(", ... and {} more", names.len() - NAMES_SHOWN));
        }
        text.push_str(&format!("{:<18}{shown}\n", "label_names"));
    }
    if !report["recipe"].is_null() {
        text.push_str(&format!("{:<18}{}\n", "recipe", report["recipe"]));
    }
    write_result(None, |w| w.write_all(text.as_bytes()))
}
