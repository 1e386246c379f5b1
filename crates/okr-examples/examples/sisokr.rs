//! `cargo run --release -p okr-examples --example sisokr -- TRAIN.arff TEST.arff N_LABELS [M_IN M_OUT]`:
//! SISOKR on a Mulan ARFF pair (e.g. Bibtex: 159 labels).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return Err("usage: sisokr TRAIN.arff TEST.arff N_LABELS [M_IN M_OUT]".into());
    }
    let m_in = args.get(3).map_or(Ok(1500), |s| s.parse())?;
    let m_out = args.get(4).map_or(Ok(800), |s| s.parse())?;
    okr_examples::sisokr_example(&args[0], &args[1], args[2].parse()?, m_in, m_out)?;
    Ok(())
}
