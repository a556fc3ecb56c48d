//! Functionalization: ports of PyTorch's `test/test_functionalization.py`
//! (the functionalized graph printed by `make_fx`, operator for operator,
//! and the results and input mutations equal to the eager run), and the
//! view inverses checked against eager mutation through every view kind.

mod support;

use aten_boxing::IValue;
use aten_core::ops;
use aten_core::Tensor;
use aten_fx::make_fx;
use aten_ops::functionalize::{
    enable_functionalization, from_functional_tensor, is_functional_tensor, sync,
    to_functional_tensor,
};
use aten_ops::{functionalize, Remove};
use c10_core::Device;
use c10_core::Result;
use c10_core::Scalar;

fn iv(t: &Tensor) -> IValue {
    IValue::Tensor(t.base().clone())
}

fn tensor_of(v: &IValue) -> Tensor {
    match v {
        IValue::Tensor(t) => Tensor::from_base(t.clone()),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

/// `torch.<factory>(sizes)` as Python calls it (device and pin_memory
/// passed explicitly).
fn factory(name: &str, sizes: &[i64]) -> Result<Tensor> {
    let out = support::ops_root().overload(name)?.call(
        &[IValue::IntList(std::sync::Arc::new(sizes.to_vec()))],
        &[
            ("device", IValue::device(Device::CPU)),
            ("pin_memory", IValue::bool(false)),
        ],
    )?;
    Ok(tensor_of(&out[0]))
}

fn arange(n: usize, sizes: &[i64]) -> Tensor {
    let data: Vec<f32> = (0..n).map(|i| i as f32 + 1.0).collect();
    Tensor::from_slice(&data, sizes).unwrap()
}

type Program = fn(&[IValue]) -> Result<Vec<IValue>>;

/// `assert_functionalization`: the functionalized run gives the eager
/// run's outputs and leaves the inputs as the eager run does.
fn assert_functionalization(f: Program, input: &Tensor) {
    for remove in [Remove::Mutations, Remove::MutationsAndViews] {
        let eager_in = ops::clone(input).unwrap();
        let eager = f(&[iv(&eager_in)]).unwrap();
        let func_in = ops::clone(input).unwrap();
        let functional = functionalize(f, &[iv(&func_in)], remove).unwrap();
        assert_eq!(
            values(&eager_in),
            values(&func_in),
            "input after {remove:?}"
        );
        for (e, r) in eager.iter().zip(&functional) {
            let r = tensor_of(r);
            assert!(!is_functional_tensor(r.base()));
            assert_eq!(values(&tensor_of(e)), values(&r), "output after {remove:?}");
        }
    }
}

/// `get_logs`: the code of `make_fx(functionalize(f))`.
fn get_logs(f: Program, input: &Tensor, remove: Remove) -> String {
    support::ops_root();
    let x = ops::clone(input).unwrap();
    make_fx(|xs| functionalize(f, xs, remove), &["arg0"], &[iv(&x)])
        .unwrap()
        .code()
}

fn simple(xs: &[IValue]) -> Result<Vec<IValue>> {
    let x = tensor_of(&xs[0]);
    let tmp = factory("aten::ones", &[4, 2])?;
    let y = ops::view(&x, &[4, 2])?;
    ops::add_tensor_(&y, &tmp)?;
    let _z = ops::mul_tensor(&x, &x)?;
    Ok(vec![iv(&y)])
}

#[test]
fn test_simple() {
    let x = factory("aten::ones", &[4, 2]).unwrap();
    assert_functionalization(simple, &x);
    assert_eq!(
        get_logs(simple, &x, Remove::MutationsAndViews),
        "


def forward(self, arg0_1):
    ones = torch.ops.aten.ones.default([4, 2], device = device(type='cpu'), pin_memory = False)
    view_copy = torch.ops.aten.view_copy.default(arg0_1, [4, 2])
    add = torch.ops.aten.add.Tensor(view_copy, ones);  view_copy = ones = None
    view_copy_1 = torch.ops.aten.view_copy.default(add, [4, 2]);  add = None
    view_copy_2 = torch.ops.aten.view_copy.default(view_copy_1, [4, 2])
    mul = torch.ops.aten.mul.Tensor(view_copy_1, view_copy_1)
    copy_ = torch.ops.aten.copy_.default(arg0_1, view_copy_1);  arg0_1 = view_copy_1 = None
    return view_copy_2
"
    );
}

#[test]
fn test_reapply_views_simple() {
    let x = factory("aten::ones", &[4, 2]).unwrap();
    assert_eq!(
        get_logs(simple, &x, Remove::Mutations),
        "


def forward(self, arg0_1):
    ones = torch.ops.aten.ones.default([4, 2], device = device(type='cpu'), pin_memory = False)
    view = torch.ops.aten.view.default(arg0_1, [4, 2])
    add = torch.ops.aten.add.Tensor(view, ones);  view = ones = None
    view_1 = torch.ops.aten.view.default(add, [4, 2]);  add = None
    view_2 = torch.ops.aten.view.default(view_1, [4, 2])
    mul = torch.ops.aten.mul.Tensor(view_1, view_1)
    copy_ = torch.ops.aten.copy_.default(arg0_1, view_1);  arg0_1 = view_1 = None
    return view_2
"
    );
}

fn simple_out(xs: &[IValue]) -> Result<Vec<IValue>> {
    let x = tensor_of(&xs[0]);
    let tmp = factory("aten::ones", &[4, 2])?;
    let y = ops::view(&x, &[4, 2])?;
    // The out= tensor is resized: it starts with no dimensions.
    let z = factory("aten::empty.memory_format", &[])?;
    ops::add_out(&y, &tmp, Scalar::Int(1), &z)?;
    let w = ops::mul_tensor(&z, &z)?;
    Ok(vec![iv(&w)])
}

#[test]
fn test_simple_out() {
    let x = factory("aten::ones", &[4, 2]).unwrap();
    assert_functionalization(simple_out, &x);
    assert_eq!(
        get_logs(simple_out, &x, Remove::MutationsAndViews),
        "


def forward(self, arg0_1):
    ones = torch.ops.aten.ones.default([4, 2], device = device(type='cpu'), pin_memory = False)
    view_copy = torch.ops.aten.view_copy.default(arg0_1, [4, 2]);  arg0_1 = None
    empty = torch.ops.aten.empty.memory_format([], device = device(type='cpu'), pin_memory = False)
    add = torch.ops.aten.add.Tensor(view_copy, ones);  view_copy = ones = None
    mul = torch.ops.aten.mul.Tensor(add, add);  add = None
    return mul
"
    );
}

fn inplace_on_non_view(xs: &[IValue]) -> Result<Vec<IValue>> {
    let x = tensor_of(&xs[0]);
    let tmp = factory("aten::ones", &[4, 2])?;
    let y = ops::view(&x, &[4, 2])?;
    ops::add_tensor_(&x, &tmp)?;
    Ok(vec![iv(&y)])
}

#[test]
fn test_inplace_on_non_view() {
    let x = factory("aten::ones", &[4, 2]).unwrap();
    assert_functionalization(inplace_on_non_view, &x);
    assert_eq!(
        get_logs(inplace_on_non_view, &x, Remove::MutationsAndViews),
        "


def forward(self, arg0_1):
    ones = torch.ops.aten.ones.default([4, 2], device = device(type='cpu'), pin_memory = False)
    view_copy = torch.ops.aten.view_copy.default(arg0_1, [4, 2])
    add = torch.ops.aten.add.Tensor(arg0_1, ones);  ones = None
    copy_ = torch.ops.aten.copy_.default(arg0_1, add);  arg0_1 = None
    view_copy_1 = torch.ops.aten.view_copy.default(add, [4, 2]);  add = None
    return view_copy_1
"
    );
}

fn as_strided(xs: &[IValue]) -> Result<Vec<IValue>> {
    let x = tensor_of(&xs[0]);
    let y = ops::as_strided_with(
        &x,
        &[2],
        &[2],
        ops::AsStridedOptions {
            storage_offset: Some(1),
        },
    )?;
    ops::add_tensor_(
        &y,
        &Tensor::from(c10_core::TensorBase::wrapped_number(1i64)?),
    )?;
    Ok(vec![iv(&x)])
}

#[test]
fn test_as_strided() {
    let x = factory("aten::ones", &[9]).unwrap();
    assert_functionalization(as_strided, &x);
    assert_eq!(
        get_logs(as_strided, &x, Remove::MutationsAndViews),
        "


def forward(self, arg0_1):
    as_strided_copy = torch.ops.aten.as_strided_copy.default(arg0_1, [2], [2], 1)
    add = torch.ops.aten.add.Tensor(as_strided_copy, 1);  as_strided_copy = None
    as_strided_scatter = torch.ops.aten.as_strided_scatter.default(arg0_1, add, [2], [2], 1);  add = None
    as_strided_copy_1 = torch.ops.aten.as_strided_copy.default(as_strided_scatter, [2], [2], 1)
    copy_ = torch.ops.aten.copy_.default(arg0_1, as_strided_scatter);  arg0_1 = None
    return as_strided_scatter
"
    );
}

fn only_one_view(xs: &[IValue]) -> Result<Vec<IValue>> {
    Ok(vec![iv(&ops::view(&tensor_of(&xs[0]), &[4, 2])?)])
}

fn expand(xs: &[IValue]) -> Result<Vec<IValue>> {
    Ok(vec![iv(&ops::expand(&tensor_of(&xs[0]), &[2, 2])?)])
}

#[test]
fn test_only_one_view_and_test_expand_symint() {
    let x = factory("aten::ones", &[4, 2]).unwrap();
    assert_functionalization(only_one_view, &x);
    assert_eq!(
        get_logs(only_one_view, &x, Remove::MutationsAndViews),
        "\n\n\ndef forward(self, arg0_1):\n    view_copy = torch.ops.aten.view_copy.default(arg0_1, [4, 2]);  arg0_1 = None\n    return view_copy\n"
    );
    let x = factory("aten::ones", &[2, 2]).unwrap();
    assert_functionalization(expand, &x);
    assert_eq!(
        get_logs(expand, &x, Remove::MutationsAndViews),
        "\n\n\ndef forward(self, arg0_1):\n    expand_copy = torch.ops.aten.expand_copy.default(arg0_1, [2, 2]);  arg0_1 = None\n    return expand_copy\n"
    );
}

fn index_mutation_on_non_input(_xs: &[IValue]) -> Result<Vec<IValue>> {
    let tmp = factory("aten::zeros", &[10])?;
    ops::fill_scalar_(&ops::select_int(&tmp, 0, 5)?, Scalar::Int(1))?;
    Ok(vec![iv(&tmp)])
}

#[test]
fn test_index_mutation_on_non_input() {
    let x = factory("aten::ones", &[2]).unwrap();
    assert_functionalization(index_mutation_on_non_input, &x);
    assert_eq!(
        get_logs(index_mutation_on_non_input, &x, Remove::MutationsAndViews),
        "


def forward(self, arg0_1):
    zeros = torch.ops.aten.zeros.default([10], device = device(type='cpu'), pin_memory = False)
    select_copy = torch.ops.aten.select_copy.int(zeros, 0, 5)
    fill = torch.ops.aten.fill.Scalar(select_copy, 1);  select_copy = None
    select_scatter = torch.ops.aten.select_scatter.default(zeros, fill, 0, 5);  zeros = fill = None
    select_copy_1 = torch.ops.aten.select_copy.int(select_scatter, 0, 5)
    return select_scatter
"
    );
}

fn multiple_views_of_same_base(xs: &[IValue]) -> Result<Vec<IValue>> {
    let x = tensor_of(&xs[0]);
    let y = ops::view(&x, &[-1])?;
    let z = ops::view(&x, &[-1])?;
    ops::add_tensor_(&x, &factory("aten::ones", &[4])?)?;
    // y and z see the write made through x.
    let y2 = ops::add_tensor(&y, &factory("aten::ones", &[4])?)?;
    let z2 = ops::add_tensor(&z, &y2)?;
    Ok(vec![iv(&y2), iv(&z2)])
}

fn nested_functions_propagate_updates(xs: &[IValue]) -> Result<Vec<IValue>> {
    let x = tensor_of(&xs[0]);
    let g = |x: &Tensor| -> Result<()> {
        let row = ops::select_int(x, 0, 0)?;
        ops::add_tensor_(&row, &factory("aten::ones", &[2])?)?;
        Ok(())
    };
    g(&x)?;
    Ok(vec![iv(&ops::add_tensor(&x, &x)?)])
}

#[test]
fn test_multiple_views_of_same_base_and_nested_updates() {
    assert_functionalization(multiple_views_of_same_base, &arange(4, &[4]));
    assert_functionalization(nested_functions_propagate_updates, &arange(4, &[2, 2]));
}

/// A write through a chain of two views of every kind, then a read of the
/// base and of another view: functionalized, the results and the input are
/// the eager ones.
#[test]
fn writes_through_every_view_kind_reach_the_base_and_other_views() {
    type View = fn(&Tensor) -> Result<Tensor>;
    let views: Vec<(&str, View)> = vec![
        ("t", |x| ops::t(x)),
        ("transpose", |x| ops::transpose_int(x, 0, 1)),
        ("permute", |x| ops::permute(x, &[1, 0])),
        ("unsqueeze", |x| ops::unsqueeze(x, 1)),
        ("select", |x| ops::select_int(x, 1, 2)),
        ("slice", |x| {
            ops::slice_tensor_op()?.call((x, 1, Some(1), Some(3), 1))
        }),
        ("view", |x| ops::view(x, &[-1])),
        ("alias", |x| ops::alias(x)),
        ("as_strided", |x| {
            ops::as_strided_with(
                x,
                &[2, 2],
                &[1, 4],
                ops::AsStridedOptions {
                    storage_offset: Some(1),
                },
            )
        }),
        ("split", |x| Ok(ops::split_tensor(x, 2)?.remove(1))),
        ("squeeze", |x| ops::squeeze(&ops::unsqueeze(x, 0)?)),
    ];
    for (name, view) in &views {
        for second in [false, true] {
            let program = |xs: &[IValue]| -> Result<Vec<IValue>> {
                let x = tensor_of(&xs[0]);
                let other = ops::t(&x)?;
                let mut v = view(&x)?;
                if second {
                    v = ops::alias(&v)?;
                }
                ops::mul_tensor_(&v, &Tensor::from_slice(&[3.0f32], &[1])?)?;
                let sum = ops::add_tensor(&x, &x)?;
                Ok(vec![iv(&sum), iv(&other), iv(&v)])
            };
            let input = arange(12, &[3, 4]);
            let eager_in = ops::clone(&input).unwrap();
            let eager = program(&[iv(&eager_in)]).unwrap();
            for remove in [Remove::Mutations, Remove::MutationsAndViews] {
                let func_in = ops::clone(&input).unwrap();
                let functional = functionalize(program, &[iv(&func_in)], remove)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(values(&eager_in), values(&func_in), "{name} input");
                for (e, r) in eager.iter().zip(&functional) {
                    assert_eq!(
                        values(&ops::contiguous(&tensor_of(e)).unwrap()),
                        values(&ops::contiguous(&tensor_of(r)).unwrap()),
                        "{name} (chain of two: {second}, {remove:?})"
                    );
                }
            }
        }
    }
}

#[test]
fn a_functionalized_graph_has_no_mutations_and_replays() {
    support::ops_root();
    let program = |xs: &[IValue]| -> Result<Vec<IValue>> {
        let x = tensor_of(&xs[0]);
        let row = ops::select_int(&x, 0, 1)?;
        ops::mul_tensor_(&row, &Tensor::from_slice(&[2.0f32], &[1])?)?;
        let y = ops::relu(&x)?;
        ops::add_tensor_(&x, &y)?;
        Ok(vec![iv(&ops::sum(&x)?)])
    };
    let input = arange(6, &[2, 3]);
    let g = make_fx(
        |xs| functionalize(program, xs, Remove::MutationsAndViews),
        &["x"],
        &[iv(&ops::clone(&input).unwrap())],
    )
    .unwrap();
    let mutating: Vec<String> = g
        .called_operators()
        .into_iter()
        .filter(|op| {
            op.trim_start_matches("aten.")
                .split('.')
                .next()
                .unwrap()
                .ends_with('_')
        })
        .collect();
    // Only the write-back of the mutated input remains.
    assert_eq!(mutating, vec!["aten.copy_.default"]);
    let a = ops::clone(&input).unwrap();
    let b = ops::clone(&input).unwrap();
    let replayed = g.run(&[iv(&a)]).unwrap();
    let eager = program(&[iv(&b)]).unwrap();
    assert_eq!(
        values(&tensor_of(&replayed[0])),
        values(&tensor_of(&eager[0]))
    );
    assert_eq!(values(&a), values(&b));
}

#[test]
fn errors_are_pytorchs() {
    support::ops_root();
    // A broadcast into `self` fails as it does eagerly, though `add` would
    // accept it.
    let small = factory("aten::ones", &[2]).unwrap();
    let big = factory("aten::ones", &[3, 2]).unwrap();
    let eager = ops::add_tensor_(&small, &big).unwrap_err();
    let functional = functionalize(
        |xs| {
            ops::add_tensor_(&tensor_of(&xs[0]), &tensor_of(&xs[1]))?;
            Ok(vec![])
        },
        &[iv(&small), iv(&big)],
        Remove::Mutations,
    )
    .unwrap_err();
    assert_eq!(eager.message(), functional.message());
    // A plain tensor written with a functional one.
    let plain = factory("aten::ones", &[2]).unwrap();
    let err = functionalize(
        |xs| {
            ops::add_tensor_(&plain, &tensor_of(&xs[0]))?;
            Ok(vec![])
        },
        &[iv(&small)],
        Remove::Mutations,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "mutating a non-functional tensor with a functional tensor is not allowed. Please ensure that all of your inputs are wrapped inside of a functionalize() call."
    );
    // A wrapper's value is reachable only through the conversions.
    let w = to_functional_tensor(small.base()).unwrap();
    assert!(is_functional_tensor(&w));
    assert!(to_functional_tensor(&w).is_err());
    assert!(from_functional_tensor(small.base()).is_err());
    {
        let _on = enable_functionalization(false);
        ops::add_tensor_(&Tensor::from_base(w.clone()), &small).unwrap();
    }
    sync(&w).unwrap();
    assert_eq!(
        values(&Tensor::from_base(from_functional_tensor(&w).unwrap())),
        vec![2.0, 2.0]
    );
    // The input itself was not written.
    assert_eq!(values(&small), vec![1.0, 1.0]);
}

#[test]
fn written_values_take_the_written_tensors_dtype_and_out_casts_are_checked() {
    support::ops_root();
    let program = |xs: &[IValue]| -> Result<Vec<IValue>> {
        let (x, y) = (tensor_of(&xs[0]), tensor_of(&xs[1]));
        ops::add_tensor_(&x, &y)?;
        Ok(vec![iv(&ops::mul_tensor(&x, &x)?)])
    };
    let x = Tensor::from_slice(&[1.5f32, -2.0], &[2]).unwrap();
    let y = Tensor::from_slice(&[0.25f64, 4.0], &[2]).unwrap();
    let (ex, fx) = (ops::clone(&x).unwrap(), ops::clone(&x).unwrap());
    let eager = program(&[iv(&ex), iv(&y)]).unwrap();
    let functional = functionalize(program, &[iv(&fx), iv(&y)], Remove::Mutations).unwrap();
    assert_eq!(values(&ex), values(&fx));
    assert_eq!(
        values(&tensor_of(&eager[0])),
        values(&tensor_of(&functional[0]))
    );
    assert_eq!(
        tensor_of(&functional[0]).dtype(),
        Some(c10_core::ScalarType::Float)
    );
    // An out= tensor that cannot hold the result fails as it does eagerly.
    let long = Tensor::from_slice(&[0i64, 0], &[2]).unwrap();
    let eager = ops::add_out(&x, &x, Scalar::Int(1), &long).unwrap_err();
    let functional = functionalize(
        |xs| {
            ops::add_out(
                &tensor_of(&xs[0]),
                &tensor_of(&xs[0]),
                Scalar::Int(1),
                &tensor_of(&xs[1]),
            )?;
            Ok(vec![])
        },
        &[iv(&x), iv(&long)],
        Remove::Mutations,
    )
    .unwrap_err();
    assert_eq!(eager.message(), functional.message());
    // Nested functionalize is refused clearly.
    let w = to_functional_tensor(x.base()).unwrap();
    let err = functionalize(|_| Ok(vec![]), &[IValue::Tensor(w)], Remove::Mutations).unwrap_err();
    assert!(
        err.message().contains("already a functional tensor"),
        "{}",
        err.message()
    );
}

#[test]
fn a_write_through_a_view_without_inverse_fails_before_anything_is_recorded() {
    use aten_dispatch::CppFunction;
    use aten_ops::Library;
    support::ops_root();
    let mut lib = Library::new("functest", "FRAGMENT", "").unwrap();
    lib.define("myview(Tensor(a) self) -> Tensor(a)", "", &[])
        .unwrap();
    lib.impl_(
        "myview",
        CppFunction::from_unboxed(|x: &Tensor| ops::alias(x)),
        "CompositeExplicitAutograd",
    )
    .unwrap();
    let myview = support::ops_root().overload("functest::myview").unwrap();
    let x = arange(4, &[4]);
    let out = functionalize(
        |xs| {
            let v = tensor_of(&myview.call(&xs[..1], &[])?[0]);
            let err = ops::mul_tensor_(&v, &Tensor::from_slice(&[2.0f32], &[1])?).unwrap_err();
            assert_eq!(
                err.message(),
                "functionalization: writing through the view operator functest.myview.default is not supported"
            );
            // The base is still usable, and was not written.
            ops::add_tensor_(&tensor_of(&xs[0]), &Tensor::from_slice(&[1.0f32], &[1])?)?;
            Ok(vec![xs[0].clone()])
        },
        &[iv(&x)],
        Remove::Mutations,
    )
    .unwrap();
    assert_eq!(values(&tensor_of(&out[0])), vec![2.0, 3.0, 4.0, 5.0]);
    assert_eq!(values(&x), vec![2.0, 3.0, 4.0, 5.0]);
}

#[test]
fn composites_below_autograd_decompose_into_tracked_views() {
    use c10_core::local_dispatch_key_set::AutoDispatchBelowADInplaceOrView;
    support::ops_root();
    let program = |xs: &[IValue]| -> Result<Vec<IValue>> {
        let x = tensor_of(&xs[0]);
        let _below = AutoDispatchBelowADInplaceOrView::new();
        let flat = ops::reshape(&x, &[-1])?;
        ops::mul_tensor_(
            &ops::narrow(&flat, 0, 1, 2)?,
            &Tensor::from_slice(&[10.0f32], &[1])?,
        )?;
        Ok(vec![xs[0].clone()])
    };
    let x = arange(6, &[2, 3]);
    let (ex, fx) = (ops::clone(&x).unwrap(), ops::clone(&x).unwrap());
    program(&[iv(&ex)]).unwrap();
    let out = functionalize(program, &[iv(&fx)], Remove::MutationsAndViews).unwrap();
    assert_eq!(values(&ex), vec![1.0, 20.0, 30.0, 4.0, 5.0, 6.0]);
    assert_eq!(values(&fx), values(&ex));
    assert_eq!(values(&tensor_of(&out[0])), values(&ex));
}

#[test]
fn writes_from_several_threads_through_aliases_of_one_base_are_all_kept() {
    support::ops_root();
    let x = Tensor::from_slice(&[0.0f32; 64], &[8, 8]).unwrap();
    let base = Tensor::from_base(to_functional_tensor(x.base()).unwrap());
    let rows: Vec<Tensor> = {
        let _on = enable_functionalization(false);
        (0..8)
            .map(|r| ops::select_int(&base, 0, r).unwrap())
            .collect()
    };
    std::thread::scope(|s| {
        for (r, row) in rows.iter().enumerate() {
            s.spawn(move || {
                let _on = enable_functionalization(false);
                for _ in 0..5 {
                    ops::add_tensor_(row, &Tensor::from_slice(&[r as f32 + 1.0], &[1]).unwrap())
                        .unwrap();
                }
            });
        }
    });
    sync(base.base()).unwrap();
    let got = values(&Tensor::from_base(
        from_functional_tensor(base.base()).unwrap(),
    ));
    let want: Vec<f32> = (0..64).map(|i| 5.0 * ((i / 8) as f32 + 1.0)).collect();
    assert_eq!(got, want);
}

#[test]
fn as_strided_writes_into_an_input_with_a_storage_offset() {
    support::ops_root();
    let program = |xs: &[IValue]| -> Result<Vec<IValue>> {
        let x = tensor_of(&xs[0]);
        let v = ops::as_strided_with(
            &x,
            &[2],
            &[1],
            ops::AsStridedOptions {
                storage_offset: Some(3),
            },
        )?;
        ops::mul_tensor_(&v, &Tensor::from_slice(&[-1.0f32], &[1])?)?;
        Ok(vec![iv(&ops::add_tensor(&x, &x)?)])
    };
    let whole = arange(12, &[12]);
    for remove in [Remove::Mutations, Remove::MutationsAndViews] {
        let eager_whole = ops::clone(&whole).unwrap();
        let eager_in = ops::slice_tensor_op()
            .unwrap()
            .call((&eager_whole, 0, Some(2), None::<i64>, 1))
            .unwrap();
        let eager = program(&[iv(&eager_in)]).unwrap();
        let func_whole = ops::clone(&whole).unwrap();
        let func_in = ops::slice_tensor_op()
            .unwrap()
            .call((&func_whole, 0, Some(2), None::<i64>, 1))
            .unwrap();
        let functional = functionalize(program, &[iv(&func_in)], remove).unwrap();
        assert_eq!(values(&eager_whole), values(&func_whole), "{remove:?}");
        assert_eq!(
            values(&tensor_of(&eager[0])),
            values(&tensor_of(&functional[0])),
            "{remove:?}"
        );
    }
}
