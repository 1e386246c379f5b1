//! The okr command-line tool (being built).
fn main() {}
