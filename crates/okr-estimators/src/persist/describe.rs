//! [`SavedModel::describe`]: what a model file holds, as one JSON object
//! (`okr info --json`; any program that lists models).

use serde_json::{Value, json};

use super::{FORMAT_VERSION, GramModel, Model, OutputModel, SavedModel};
use crate::SurrogateModel;

impl SavedModel {
    /// The model as one JSON object: `estimator`, `output_kind`,
    /// `okr_version`, `format_version`, `n_features`, `n_labels`,
    /// `label_names`, `index_base`, `standardized`, `seed`, `fit_seconds`
    /// and `parameters`: the estimator's resolved hyper-parameters (its
    /// parameter struct as serialized, which names every field) with, where
    /// they apply, `rank_requested` / `rank_used`, `n_atoms`, the weights of
    /// combined input kernels (`input_kernel_weights`), the output dimension
    /// and number of distinct training outputs of vector, graph and ranking
    /// models, and the training-set size of models fitted on a Gram
    /// (`gram_n_train`).
    ///
    /// # Example
    /// ```
    /// use faer::Mat;
    /// use okr_estimators::persist::{Model, ModelInfo, SavedModel};
    /// use okr_estimators::{Fit, Iokr};
    /// use okr_kernels::{DenseRows, Features, KernelSpec, LabelSets, Linear};
    /// let x = Features::from(DenseRows::new(Mat::from_fn(4, 2, |i, j| (i + j) as f64))?);
    /// let y = LabelSets::new(2, vec![vec![0], vec![1], vec![0, 1], vec![]])?;
    /// let model = Iokr::params(KernelSpec::from(Linear), KernelSpec::from(Linear)).lambda(0.5).fit(&x, &y)?;
    /// let saved = SavedModel::new(Model::Iokr(model), ModelInfo::new(2, 2))?;
    /// let d = saved.describe();
    /// assert_eq!(d["estimator"], "iokr");
    /// assert_eq!(d["parameters"]["lambda"], 0.5);
    /// Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn describe(&self) -> Value {
        let info = &self.info;
        json!({
            "estimator": self.model.name(),
            "output_kind": format!("{:?}", self.model.output_kind()),
            "okr_version": info.okr_version,
            "format_version": FORMAT_VERSION,
            "n_features": info.n_features,
            "n_labels": info.n_labels,
            "label_names": info.label_names,
            "index_base": info.index_base.map(|b| format!("{b:?}")),
            "standardized": info.standardizer.is_some(),
            "seed": info.seed,
            "fit_seconds": info.fit_seconds,
            "parameters": parameters(&self.model),
            // The recipe the model was fitted from (format 8), as JSON; null without one.
            "recipe": self.recipe().and_then(|r| serde_json::from_str::<Value>(r).ok()),
        })
    }
}

/// The estimator's resolved hyper-parameters and sizes, with the rank in use.
fn parameters(model: &Model) -> Value {
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
        Model::GramVectors(v) => gram_output_parameters(v),
        Model::GramGraphs(v) => gram_output_parameters(v),
        Model::GramRankings(v) => gram_output_parameters(v),
        _ => json!({}),
    };
    // Combined input kernels: their weights on a line of their own.
    if let (Some(obj), Some(okr_kernels::KernelSpec::WeightedSum(k))) =
        (p.as_object_mut(), model.surrogate().map(|s| s.input_kernel()))
    {
        obj.insert("input_kernel_weights".into(), json!(k.weights()));
    }
    if let (Some(obj), Some((requested, used))) = (p.as_object_mut(), model.ranks()) {
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
fn output_parameters<Y, KY, X, KX>(v: &OutputModel<Y, KY, X, KX>) -> Value
where
    Y: okr_kernels::Rows + 'static,
    KY: okr_kernels::Kernel<Y> + serde::Serialize + 'static,
    X: okr_kernels::Rows + 'static,
    KX: okr_kernels::Kernel<X> + serde::Serialize + 'static,
{
    use OutputModel as V;
    let mut p = match v {
        V::Iokr(m) => to_value(m.params_used()),
        V::ReducedRank(m) => to_value(m.params_used()),
        V::Kde(m) => to_value(m.params_used()),
        V::Sketched(m) => to_value(m.params_used()),
        V::Nystroem(m) => to_value(m.params_used()),
        V::NystroemReducedRank(m) => to_value(m.params_used()),
        V::TraceNorm(m) => to_value(m.params_used()),
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
fn gram_parameters(g: &GramModel) -> Value {
    use GramModel as G;
    let mut p = match g {
        G::Iokr(m) => to_value(m.params_used()),
        G::ReducedRank(m) => to_value(m.params_used()),
        G::Sketched(m) => to_value(m.params_used()),
        G::Nystroem(m) => to_value(m.params_used()),
        G::Kde(m) => to_value(m.params_used()),
        G::NystroemReducedRank(m) => to_value(m.params_used()),
        G::TraceNorm(m) => to_value(m.params_used()),
    };
    if let Some(obj) = p.as_object_mut() {
        obj.insert("input_kernel".into(), "precomputed Gram".into());
        obj.insert("gram_n_train".into(), g.n_train().into());
        obj.insert("n_atoms".into(), g.surrogate().n_atoms().into());
    }
    p
}

/// The parameters of a vector, graph or ranking model fitted on a
/// precomputed Gram, as [`output_parameters`] with the Gram's `gram_n_train`.
fn gram_output_parameters<Y, KY>(v: &super::GramOutputModel<Y, KY>) -> Value
where
    Y: okr_kernels::Rows + 'static,
    KY: okr_kernels::Kernel<Y> + serde::Serialize + 'static,
{
    let mut p = output_parameters(v);
    if let Some(obj) = p.as_object_mut() {
        obj.insert("input_kernel".into(), "precomputed Gram".into());
        obj.insert("gram_n_train".into(), v.n_train().into());
    }
    p
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use faer::Mat;
    use okr_kernels::{DenseRows, Features, KernelSpec, LabelSets, Linear};

    use super::*;
    use crate::persist::{ModelInfo, VectorModel};
    use crate::{Fit, Iokr, ReducedRankIokr};

    fn data() -> (Features, LabelSets) {
        let x = Features::from(DenseRows::new(Mat::from_fn(6, 3, |i, j| ((i * 5 + j * 3) % 7) as f64)).unwrap());
        let y = LabelSets::new(3, vec![vec![0], vec![1], vec![0, 2], vec![2], vec![1], vec![0]]).unwrap();
        (x, y)
    }

    #[test]
    fn metadata_ranks_and_atoms() {
        let (x, y) = data();
        let lin = || KernelSpec::from(Linear);
        let m = ReducedRankIokr::params(lin(), lin()).rank(2).lambda1(0.1).lambda2(0.1).fit(&x, &y).unwrap();
        let mut info = ModelInfo::new(3, 3);
        info.label_names = vec!["a".into(), "b".into(), "c".into()];
        info.seed = 7;
        let saved = SavedModel::new(Model::ReducedRank(m), info).unwrap();
        let d = saved.describe();
        assert_eq!(d["estimator"], "reduced-rank");
        assert_eq!(d["output_kind"], "LabelSets");
        assert_eq!(d["format_version"], FORMAT_VERSION);
        assert_eq!((d["n_features"].as_u64(), d["n_labels"].as_u64(), d["seed"].as_u64()), (Some(3), Some(3), Some(7)));
        assert_eq!(d["label_names"], json!(["a", "b", "c"]));
        assert_eq!((d["index_base"].is_null(), d["standardized"].as_bool()), (true, Some(false)));
        let p = &d["parameters"];
        let (requested, used) = saved.model.ranks().unwrap();
        assert_eq!(
            (p["rank_requested"].as_u64(), p["rank_used"].as_u64()),
            (Some(requested as u64), Some(used as u64))
        );
        assert_eq!(p["n_atoms"].as_u64(), Some(saved.model.surrogate().unwrap().n_atoms() as u64));
        assert_eq!(p["lambda1"], 0.1);
    }

    #[test]
    fn vector_models_give_their_output_sizes() {
        let (x, _) = data();
        // Six distinct output vectors of dimension 2.
        let y = DenseRows::new(Mat::from_fn(6, 2, |i, j| (i * (j + 1)) as f64)).unwrap();
        let lin = || KernelSpec::from(Linear);
        let m = Iokr::params(lin(), lin()).lambda(0.5).fit(&x, &y).unwrap();
        let saved = SavedModel::new(Model::Vectors(VectorModel::Iokr(m)), ModelInfo::new(3, 2)).unwrap();
        let p = &saved.describe()["parameters"];
        assert_eq!(p["output_dim"].as_u64(), Some(2));
        assert_eq!(p["n_training_outputs"].as_u64(), Some(6));
        assert_eq!(p["lambda"], 0.5);
        assert!(p.get("rank_used").is_none());
    }
}
