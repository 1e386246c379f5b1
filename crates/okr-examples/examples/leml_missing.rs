//! `cargo run --release -p okr-examples --example leml_missing -- TRAIN.arff TEST.arff N_LABELS [FRACTION]`:
//! LEML trained on a seeded fraction (default 0.2) of the training labels.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return Err("usage: leml_missing TRAIN.arff TEST.arff N_LABELS [FRACTION]".into());
    }
    let fraction = args.get(3).map_or(Ok(0.2), |s| s.parse())?;
    okr_examples::leml_missing_labels(&args[0], &args[1], args[2].parse()?, fraction)?;
    Ok(())
}
