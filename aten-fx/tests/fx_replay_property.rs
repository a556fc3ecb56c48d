//! Property: a graph captured by `make_fx` from a random program replays
//! on new inputs to what the program computes eagerly on them, inputs
//! mutated alike; so does the graph captured under `functionalize`, which
//! holds no mutating operator but the write-back of mutated inputs. The
//! programs are drawn from registered operators by name (unary, binary,
//! in place, through views, reductions with broadcasting, matrix products).

mod support;

use std::sync::Arc;

use aten_boxing::IValue;
use aten_core::ops;
use aten_core::Tensor;
use aten_fx::make_fx;
use aten_ops::{functionalize, Remove};
use c10_core::Result;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn value(&mut self) -> f32 {
        (self.below(2001) as f32 - 1000.0) / 500.0
    }
}

const UNARY: &[&str] = &[
    "aten::relu",
    "aten::neg",
    "aten::sin",
    "aten::cos",
    "aten::abs",
    "aten::tanh",
    "aten::sigmoid",
];
const BINARY: &[&str] = &[
    "aten::add.Tensor",
    "aten::sub.Tensor",
    "aten::mul.Tensor",
    "aten::maximum",
];
const IN_PLACE: &[&str] = &[
    "aten::add_.Tensor",
    "aten::mul_.Tensor",
    "aten::sub_.Tensor",
];

/// One step: makes a new `[3, 4]` value from the pool (or writes one).
#[derive(Clone, Debug)]
enum Step {
    Unary(&'static str, usize),
    Binary(&'static str, usize, usize),
    InPlace(&'static str, usize, usize),
    /// Writes `op(row, other_row)` into row `row` of a value, through a
    /// `select` view.
    RowInPlace(&'static str, usize, i64, usize),
    /// `w + sum(v, [1], keepdim=True)`.
    ReduceBroadcast(usize, usize),
    /// `mm(mm(v, t(w)), v) * 0.1`.
    Products(usize, usize),
    /// `t(t(v))`: a view of a view.
    DoubleTranspose(usize),
}

fn call(name: &str, args: &[IValue]) -> Result<IValue> {
    let mut out = support::ops_root().overload(name)?.call(args, &[])?;
    out.pop()
        .ok_or_else(|| c10_core::Error::internal("no result"))
}

fn iv(t: &Tensor) -> IValue {
    IValue::Tensor(t.base().clone())
}

fn tensor_of(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => Tensor::from_base(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn run_program(steps: &[Step], inputs: &[IValue]) -> Result<Vec<IValue>> {
    let mut pool: Vec<IValue> = inputs.to_vec();
    for step in steps {
        let v = match *step {
            Step::Unary(op, a) => call(op, &[pool[a].clone()])?,
            Step::Binary(op, a, b) => call(op, &[pool[a].clone(), pool[b].clone()])?,
            Step::InPlace(op, a, b) => call(op, &[pool[a].clone(), pool[b].clone()])?,
            Step::RowInPlace(op, a, row, b) => {
                let target = call(
                    "aten::select.int",
                    &[pool[a].clone(), IValue::Int(0), IValue::Int(row)],
                )?;
                let source = call(
                    "aten::select.int",
                    &[pool[b].clone(), IValue::Int(0), IValue::Int(2 - row)],
                )?;
                call(op, &[target, source])?;
                pool[a].clone()
            }
            Step::ReduceBroadcast(a, b) => {
                let s = call(
                    "aten::sum.dim_IntList",
                    &[
                        pool[a].clone(),
                        IValue::IntList(Arc::new(vec![1])),
                        IValue::bool(true),
                    ],
                )?;
                call("aten::add.Tensor", &[pool[b].clone(), s])?
            }
            Step::Products(a, b) => {
                let wt = call("aten::t", &[pool[b].clone()])?;
                let p = call("aten::mm", &[pool[a].clone(), wt])?;
                let q = call("aten::mm", &[p, pool[a].clone()])?;
                iv(&ops::mul_tensor(
                    &tensor_of(&q),
                    &Tensor::from_slice(&[0.1f32], &[1])?,
                )?)
            }
            Step::DoubleTranspose(a) => {
                let once = call("aten::t", &[pool[a].clone()])?;
                call("aten::t", &[once])?
            }
        };
        pool.push(v);
    }
    let n = pool.len();
    let total = ops::sum(&tensor_of(&pool[n - 1]))?;
    Ok(vec![pool[n - 1].clone(), pool[n - 2].clone(), iv(&total)])
}

fn draw(rng: &mut Rng) -> Vec<Step> {
    let len = 3 + rng.below(8);
    let mut steps = Vec::with_capacity(len);
    for i in 0..len {
        let pool = 2 + i;
        let (a, b) = (rng.below(pool), rng.below(pool));
        steps.push(match rng.below(7) {
            0 => Step::Unary(UNARY[rng.below(UNARY.len())], a),
            1 => Step::Binary(BINARY[rng.below(BINARY.len())], a, b),
            2 => Step::InPlace(IN_PLACE[rng.below(IN_PLACE.len())], a, b),
            3 => Step::RowInPlace(
                IN_PLACE[rng.below(IN_PLACE.len())],
                a,
                rng.below(3) as i64,
                b,
            ),
            4 => Step::ReduceBroadcast(a, b),
            5 => Step::Products(a, b),
            _ => Step::DoubleTranspose(a),
        });
    }
    steps
}

fn inputs(rng: &mut Rng) -> Vec<Tensor> {
    (0..2)
        .map(|_| {
            let data: Vec<f32> = (0..12).map(|_| rng.value()).collect();
            Tensor::from_slice(&data, &[3, 4]).unwrap()
        })
        .collect()
}

fn cloned(ts: &[Tensor]) -> Vec<IValue> {
    ts.iter().map(|t| iv(&ops::clone(t).unwrap())).collect()
}

fn assert_close(what: &str, a: &[IValue], b: &[IValue]) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (tensor_of(x), tensor_of(y));
        assert_eq!(x.sizes(), y.sizes(), "{what}");
        let (x, y) = (
            ops::contiguous(&x).unwrap().to_vec::<f32>().unwrap(),
            ops::contiguous(&y).unwrap().to_vec::<f32>().unwrap(),
        );
        for (p, q) in x.iter().zip(&y) {
            assert!(
                (p - q).abs() <= 1e-4 * (1.0 + q.abs()) || (p.is_nan() && q.is_nan()),
                "{what}: {x:?} vs {y:?}"
            );
        }
    }
}

#[test]
fn captured_graphs_of_random_programs_replay_like_eager() {
    support::ops_root();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut written_back, mut scattered) = (0, 0);
    for case in 0..150 {
        let steps = draw(&mut rng);
        let what = format!("case {case}: {steps:?}");
        let traced_on = inputs(&mut rng);
        let fresh = inputs(&mut rng);
        let program = |xs: &[IValue]| run_program(&steps, xs);

        let graph = make_fx(program, &["x", "y"], &cloned(&traced_on)).unwrap();
        let functional = make_fx(
            |xs| functionalize(program, xs, Remove::MutationsAndViews),
            &["x", "y"],
            &cloned(&traced_on),
        )
        .unwrap();
        let mutating = functional
            .called_operators()
            .into_iter()
            .filter(|op| op.split('.').nth(1).is_some_and(|name| name.ends_with('_')))
            .filter(|op| op != "aten.copy_.default")
            .collect::<Vec<_>>();
        assert!(mutating.is_empty(), "{what}: {mutating:?}");
        let called = functional.called_operators();
        written_back += usize::from(called.iter().any(|op| op == "aten.copy_.default"));
        scattered += usize::from(called.iter().any(|op| op == "aten.select_scatter.default"));

        let eager_inputs = cloned(&fresh);
        let eager = program(&eager_inputs).unwrap();
        for (name, g) in [("graph", &graph), ("functionalized graph", &functional)] {
            let replay_inputs = cloned(&fresh);
            let replayed = g.run(&replay_inputs).unwrap();
            assert_close(&format!("{what} ({name} outputs)"), &replayed, &eager);
            assert_close(
                &format!("{what} ({name} inputs)"),
                &replay_inputs,
                &eager_inputs,
            );
        }
    }
    // The draw exercised input write-back and writes through views.
    assert!(
        written_back > 20 && scattered > 20,
        "{written_back} {scattered}"
    );
}
