//! `okr info MODEL`: what a model file holds, as text or JSON.

use anyhow::Result;
use okr_estimators::persist::{FORMAT_VERSION, Model, SavedModel};
use serde_json::{Value, json};

use crate::cli::InfoArgs;
use crate::output::write_result;

/// Labels listed by name in the text form before "... and N more".
const NAMES_SHOWN: usize = 12;

pub fn run(a: &InfoArgs) -> Result<()> {
    let saved = crate::model::load(&a.model)?;
    let report = describe(&saved);
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
    write_result(None, |w| w.write_all(text.as_bytes()))
}

/// The model file as one JSON object.
pub fn describe(saved: &SavedModel) -> Value {
    let info = &saved.info;
    json!({
        "estimator": saved.model.name(),
        "output_kind": format!("{:?}", saved.model.output_kind()),
        "okr_version": info.okr_version,
        "format_version": FORMAT_VERSION,
        "n_features": info.n_features,
        "n_labels": info.n_labels,
        "label_names": info.label_names,
        "index_base": info.index_base.map(|b| format!("{b:?}")),
        "standardized": info.standardizer.is_some(),
        "seed": info.seed,
        "fit_seconds": info.fit_seconds,
        "parameters": parameters(&saved.model),
    })
}

/// The estimator's resolved hyper-parameters and sizes (its parameter
/// struct as serialized, which names every field), with the rank in use.
fn parameters(model: &Model) -> Value {
    use okr_estimators::SurrogateModel;
    let mut p = match model {
        Model::Iokr(m) => to_value(m.params_used()),
        Model::ReducedRank(m) => to_value(m.params_used()),
        Model::Kde(m) => to_value(m.params_used()),
        Model::Sketched(m) => to_value(m.params_used()),
        Model::Nystroem(m) => to_value(m.params_used()),
        Model::NystroemReducedRank(m) => to_value(m.params_used()),
        Model::TraceNorm(m) => to_value(m.params_used()),
        Model::Leml(m) => to_value(m.fitted_params()),
        Model::Vectors(v) => output_parameters(v),
        Model::Graphs(v) => output_parameters(v),
        Model::Rankings(v) => output_parameters(v),
        Model::Gram(g) => gram_parameters(g),
        _ => json!({}),
    };
    // Combined input kernels: their weights on a line of their own.
    if let (Some(obj), Some(okr_kernels::KernelSpec::WeightedSum(k))) =
        (p.as_object_mut(), model.surrogate().map(|s| s.input_kernel()))
    {
        obj.insert("input_kernel_weights".into(), json!(k.weights()));
    }
    if let (Some(obj), Some((requested, used))) = (p.as_object_mut(), crate::model::ranks(model)) {
        obj.insert("rank_requested".into(), requested.into());
        obj.insert("rank_used".into(), used.into());
    }
    if let (Some(obj), Some(s)) = (p.as_object_mut(), model.surrogate()) {
        obj.insert("n_atoms".into(), s.n_atoms().into());
    }
    p
}

/// The parameters of a vector, graph or ranking model (the output kernel's among
/// them), with its output dimension (vector length, ranked items; null for
/// graphs), distinct training outputs and atoms.
fn output_parameters<Y, KY>(v: &okr_estimators::persist::OutputModel<Y, KY>) -> Value
where
    Y: okr_kernels::Rows + 'static,
    KY: okr_kernels::Kernel<Y> + serde::Serialize + 'static,
{
    use okr_estimators::SurrogateModel;
    use okr_estimators::persist::OutputModel as V;
    let mut p = match v {
        V::Iokr(m) => to_value(m.params_used()),
        V::ReducedRank(m) => to_value(m.params_used()),
        V::Kde(m) => to_value(m.params_used()),
        V::Sketched(m) => to_value(m.params_used()),
        V::Nystroem(m) => to_value(m.params_used()),
        V::NystroemReducedRank(m) => to_value(m.params_used()),
        V::TraceNorm(m) => to_value(m.params_used()),
        _ => json!({}),
    };
    if let Some(obj) = p.as_object_mut() {
        obj.insert("output_dim".into(), v.candidates().feature_dim().into());
        obj.insert("n_training_outputs".into(), v.candidates().n_rows().into());
        obj.insert("n_atoms".into(), v.surrogate().n_atoms().into());
    }
    p
}

/// The parameters of a model fitted on a precomputed Gram, with the
/// number of training samples its test x train Grams must have as columns.
fn gram_parameters(g: &okr_estimators::persist::GramModel) -> Value {
    use okr_estimators::SurrogateModel;
    use okr_estimators::persist::GramModel as G;
    let mut p = match g {
        G::Iokr(m) => to_value(m.params_used()),
        G::ReducedRank(m) => to_value(m.params_used()),
        G::Sketched(m) => to_value(m.params_used()),
        G::Nystroem(m) => to_value(m.params_used()),
        _ => json!({}),
    };
    if let Some(obj) = p.as_object_mut() {
        obj.insert("input_kernel".into(), "precomputed Gram".into());
        obj.insert("gram_n_train".into(), g.n_train().into());
        obj.insert("n_atoms".into(), g.surrogate().n_atoms().into());
    }
    p
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}
