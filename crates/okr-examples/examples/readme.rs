//! `cargo run -p okr-examples --example readme` in a folder holding
//! `bibtex-train.arff` and `bibtex-test.arff` (Mulan's Bibtex).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    okr_examples::readme_example()
}
