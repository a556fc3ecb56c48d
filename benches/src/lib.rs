//! Criterion benchmarks of the whole stack; the benchmarks live in
//! `benches/benches/*.rs` and run with `cargo bench -p benches`.
//!
//! Each benchmark mirrors a libtorch benchmark (named in its module docs),
//! so that the two can be compared as a ratio measured on the same machine.
