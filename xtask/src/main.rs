//! cargo xtask: paper reproduction and benchmarks (being built).
fn main() {}
