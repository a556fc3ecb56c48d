//! `schema/*`: the schema parser and printer on every operator schema
//! PyTorch 2.15 registers (`conformance/data/schemas.txt`, 4,415 lines).

// criterion_group! generates undocumented items.
#![allow(missing_docs)]

use aten::boxing::schema::FunctionSchema;
use criterion::{black_box, criterion_group, criterion_main, Criterion};

const SCHEMAS: &str = include_str!("../../conformance/data/schemas.txt");

fn bench(c: &mut Criterion) {
    let lines: Vec<&str> = SCHEMAS.lines().collect();
    c.bench_function("schema/parse_all_4415", |b| {
        b.iter(|| {
            for line in &lines {
                black_box(FunctionSchema::parse(black_box(line)).ok());
            }
        })
    });
    let parsed: Vec<FunctionSchema> = lines
        .iter()
        .filter_map(|l| FunctionSchema::parse(l).ok())
        .collect();
    c.bench_function("schema/print_all_4415", |b| {
        b.iter(|| {
            for schema in &parsed {
                black_box(schema.to_string());
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
