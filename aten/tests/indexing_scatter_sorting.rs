//! Advanced indexing (`index.Tensor`, `index_put`, `masked_scatter`,
//! `nonzero`), the scatter families, `sort`, `topk`, `randperm` and
//! `_embedding_bag`, on every device the build has: values on the CPU,
//! shapes, dtypes and argument errors everywhere.

use aten::core::testing::DeviceTest;
use aten::{ops, Result, Scalar, ScalarType, Tensor};

aten::instantiate_device_type_tests!(
    index_picks_broadcasts_and_transposes,
    index_masks_and_errors,
    index_put_writes_and_accumulates,
    index_put_masked_fill_path_and_errors,
    masked_scatter_fills_in_order,
    nonzero_lists_coordinates_column_major,
    scatter_src_and_value,
    scatter_add_and_reduce,
    scatter_errors,
    sort_orders_stably_with_nans,
    topk_picks_and_checks,
    randperm_permutes_and_checks,
    embedding_bag_modes,
    embedding_bag_errors,
    hostile_sizes_and_values_are_errors,
);

fn f32s(dev: DeviceTest, n: usize, shape: &[i64]) -> Tensor {
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    dev.tensor(&data, shape)
}

fn index_picks_broadcasts_and_transposes(dev: DeviceTest) {
    let x = f32s(dev, 12, &[3, 4]);
    let rows = dev.tensor(&[2i64, -3], &[2]);
    dev.assert_values(
        &ops::index_tensor(&x, vec![Some(rows)]).unwrap(),
        &[2, 4],
        &[8.0f32, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0],
    );
    // Broadcast indices ([2, 1] with [2]), int32 among them.
    let r = dev.tensor(&[0i32, 2], &[2, 1]);
    let c = dev.tensor(&[1i64, 3], &[2]);
    dev.assert_values(
        &ops::index_tensor(&x, vec![Some(r), Some(c.clone())]).unwrap(),
        &[2, 2],
        &[1.0f32, 3.0, 9.0, 11.0],
    );
    // `None` keeps a dimension; the index shape replaces the indexed one.
    let cols = dev.tensor(&[3i64, 0, 3], &[3]);
    dev.assert_values(
        &ops::index_tensor(&x, vec![None, Some(cols)]).unwrap(),
        &[3, 3],
        &[3.0f32, 0.0, 3.0, 7.0, 4.0, 7.0, 11.0, 8.0, 11.0],
    );
    // Non-adjacent indexed dimensions: the index shape comes first.
    let y = f32s(dev, 24, &[2, 3, 4]);
    let a = dev.tensor(&[0i64, 1], &[2]);
    let b = dev.tensor(&[2i64, 3], &[2]);
    dev.assert_values(
        &ops::index_tensor(&y, vec![Some(a), None, Some(b)]).unwrap(),
        &[2, 3],
        &[2.0f32, 6.0, 10.0, 15.0, 19.0, 23.0],
    );
    // 0-dim indices and a transposed, offset input.
    let t = ops::narrow(&x.t().unwrap(), 0, 1, 3).unwrap();
    let i0 = dev.tensor(&[1i64], &[]);
    dev.assert_values(
        &ops::index_tensor(&t, vec![Some(i0.clone()), Some(i0)]).unwrap(),
        &[],
        &[6.0f32],
    );
    // An empty index gives an empty result, whatever the indexed size.
    let none = dev.tensor::<i64>(&[], &[0]);
    let empty = ops::index_tensor(&f32s(dev, 0, &[0, 2]), vec![Some(none)]).unwrap();
    dev.assert_values(&empty, &[0, 2], &[] as &[f32]);
    // No index at all: a copy.
    dev.assert_values(
        &ops::index_tensor(&c, vec![None]).unwrap(),
        &[2],
        &[1i64, 3],
    );
}

fn index_masks_and_errors(dev: DeviceTest) {
    let x = f32s(dev, 12, &[3, 4]);
    if dev.has_data() {
        let mask = dev.tensor(&[true, false, true], &[3]);
        dev.assert_values(
            &ops::index_tensor(&x, vec![Some(mask)]).unwrap(),
            &[2, 4],
            &[0.0f32, 1.0, 2.0, 3.0, 8.0, 9.0, 10.0, 11.0],
        );
        let full: Vec<bool> = (0..12).map(|i| i % 5 == 0).collect();
        dev.assert_values(
            &ops::index_tensor(&x, vec![Some(dev.tensor(&full, &[3, 4]))]).unwrap(),
            &[3],
            &[0.0f32, 5.0, 10.0],
        );
    }
    let err = dev.assert_error(ops::index_tensor(&x, vec![None, None, None]));
    assert_eq!(err, "too many indices for tensor of dimension 2 (got 3)");
    let err = dev.assert_error(ops::index_tensor(
        &x,
        vec![Some(dev.tensor(&[0.0f32], &[1]))],
    ));
    assert_eq!(
        err,
        "tensors used as indices must be long, int, byte or bool tensors"
    );
    let err = dev.assert_error(ops::index_tensor(
        &x,
        vec![
            Some(dev.tensor(&[0i64; 2], &[2])),
            Some(dev.tensor(&[0i64; 3], &[3])),
        ],
    ));
    assert_eq!(
        err,
        "shape mismatch: indexing tensors could not be broadcast together with shapes [2], [3]"
    );
    let err = dev.assert_error(ops::index_tensor(
        &x,
        vec![Some(dev.tensor(&[true; 2], &[2]))],
    ));
    assert_eq!(
        err,
        "The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3, 4] at index 0"
    );
    let err = dev.assert_error(ops::index_tensor(
        &f32s(dev, 0, &[0, 2]),
        vec![Some(dev.tensor(&[0i64], &[1]))],
    ));
    assert_eq!(err, "index is out of bounds for dimension with size 0");
    let bad = ops::index_tensor(&x, vec![None, Some(dev.tensor(&[1i64, -5], &[2]))]);
    if let Some(err) = dev.assert_data_error(bad) {
        assert_eq!(err, "index -5 is out of bounds for dimension 0 with size 4");
    }
}

fn index_put_writes_and_accumulates(dev: DeviceTest) {
    let zeros = dev.tensor(&[0i32; 5], &[5]);
    let at = dev.tensor(&[0i64, 0, -1], &[3]);
    let values = dev.tensor(&[1i32, 2, 3], &[3]);
    let summed = ops::index_put_with(
        &zeros,
        vec![Some(at.clone())],
        &values,
        ops::IndexPutOptions { accumulate: true },
    )
    .unwrap();
    dev.assert_values(&summed, &[5], &[3i32, 0, 0, 0, 3]);
    // Not accumulating: the last write wins; `self` is left alone.
    let written = ops::index_put(&zeros, vec![Some(at)], &values).unwrap();
    dev.assert_values(&written, &[5], &[2i32, 0, 0, 0, 3]);
    dev.assert_values(&zeros, &[5], &[0i32; 5]);
    // A broadcast value into a transposed `self`, whose layout is kept.
    let x = f32s(dev, 6, &[2, 3]).t().unwrap();
    let rows = dev.tensor(&[2i64, 0], &[2]);
    let put = ops::index_put(&x, vec![Some(rows)], &dev.tensor(&[-1.0f32], &[1])).unwrap();
    assert_eq!(put.strides(), &[1, 3]);
    dev.assert_values(
        &ops::contiguous(&put).unwrap(),
        &[3, 2],
        &[-1.0f32, -1.0, 1.0, 4.0, -1.0, -1.0],
    );
    // In place, with bool accumulation (logical or).
    let flags = dev.tensor(&[false, true, false], &[3]);
    ops::index_put_with_(
        &flags,
        vec![Some(dev.tensor(&[0i64, 0], &[2]))],
        &dev.tensor(&[true, false], &[2]),
        ops::IndexPutInplaceOptions { accumulate: true },
    )
    .unwrap();
    dev.assert_values(&flags, &[3], &[true, true, false]);
}

fn index_put_masked_fill_path_and_errors(dev: DeviceTest) {
    // One mask and a one-element value: masked_fill_, which converts.
    let x = dev.tensor(&[1i32, 2, 3, 4], &[4]);
    let mask = dev.tensor(&[true, false, true, false], &[4]);
    let filled = ops::index_put(
        &x,
        vec![Some(mask.clone())],
        &dev.tensor(&[7.9f64], &[1, 1]),
    )
    .unwrap();
    dev.assert_values(&filled, &[4], &[7i32, 2, 7, 4]);
    // The general path wants the same dtype and a broadcastable value.
    let err = dev.assert_error(ops::index_put_with(
        &x,
        vec![Some(mask)],
        &dev.tensor(&[7.0f64], &[1]),
        ops::IndexPutOptions { accumulate: true },
    ));
    assert_eq!(
        err,
        "Index put requires the source and destination dtypes match, got Int for the destination and Double for the source."
    );
    let idx = dev.tensor(&[0i64, 1, 2], &[3]);
    let err = dev.assert_error(ops::index_put(
        &x,
        vec![Some(idx.clone())],
        &dev.tensor(&[1i32, 2], &[2]),
    ));
    assert_eq!(
        err,
        "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [3]"
    );
    let err = dev.assert_error(ops::index_put(
        &x,
        vec![Some(idx.clone()), Some(idx)],
        &dev.tensor(&[1i32], &[1]),
    ));
    assert_eq!(err, "too many indices for tensor of dimension 1 (got 2)");
    let bad = ops::index_put(
        &x,
        vec![Some(dev.tensor(&[4i64], &[1]))],
        &dev.tensor(&[1i32], &[1]),
    );
    if let Some(err) = dev.assert_data_error(bad) {
        assert_eq!(err, "index 4 is out of bounds for dimension 0 with size 4");
    }
}

fn masked_scatter_fills_in_order(dev: DeviceTest) {
    let zeros = dev.tensor(&[0.0f32; 6], &[2, 3]);
    let mask = dev.tensor(&[true, false, true, false, true, false], &[2, 3]);
    let source = f32s(dev, 6, &[6]).flip(&[0]).unwrap();
    let out = ops::masked_scatter(&zeros, &mask, &source).unwrap();
    dev.assert_values(&out, &[2, 3], &[5.0f32, 0.0, 4.0, 0.0, 3.0, 0.0]);
    // `self` broadcasts to the mask's shape; the result is contiguous.
    let row = dev.tensor(&[1i64, 2, 3], &[3]);
    let out = ops::masked_scatter(&row, &mask, &dev.tensor(&[9i64, 8, 7], &[3])).unwrap();
    assert_eq!(out.strides(), &[3, 1]);
    dev.assert_values(&out, &[2, 3], &[9i64, 2, 8, 1, 7, 3]);
    let err = dev.assert_error(ops::masked_scatter(&zeros, &mask, &row));
    assert_eq!(
        err,
        "masked_scatter: expected self and source to have same dtypes but gotFloat and Long"
    );
    let bytes = dev.tensor(&[1u8; 6], &[2, 3]);
    let err = dev.assert_error(ops::masked_scatter(&zeros, &bytes, &source));
    assert_eq!(
        err,
        "masked_scatter_ only supports boolean masks, but got mask with dtype Byte"
    );
    let short = ops::masked_scatter(&zeros, &mask, &dev.tensor(&[1.0f32; 2], &[2]));
    if let Some(err) = dev.assert_data_error(short) {
        assert_eq!(err, "Number of elements of source < number of ones in mask");
    }
}

fn nonzero_lists_coordinates_column_major(dev: DeviceTest) {
    let x = dev.tensor(&[0.0f32, 1.5, f32::NAN, -0.0, 0.0, 2.0], &[2, 3]);
    if !dev.has_data() {
        // The result's shape depends on the data.
        assert!(ops::nonzero(&x).is_err());
        return;
    }
    let nz = ops::nonzero(&x).unwrap();
    assert_eq!(nz.strides(), &[1, 3]);
    dev.assert_values(
        &ops::contiguous(&nz).unwrap(),
        &[3, 2],
        &[0i64, 1, 0, 2, 1, 2],
    );
    let scalar = ops::nonzero(&dev.tensor(&[3i8], &[])).unwrap();
    dev.assert_values(&scalar, &[1, 0], &[] as &[i64]);
    let none = ops::nonzero(&dev.tensor(&[false; 3], &[3])).unwrap();
    assert_eq!(none.strides(), &[1, 0]);
    dev.assert_values(&none, &[0, 1], &[] as &[i64]);
    let out = dev.tensor(&[0i64; 1], &[1]);
    ops::nonzero_out(&x, &out).unwrap();
    dev.assert_values(
        &ops::contiguous(&out).unwrap(),
        &[3, 2],
        &[0i64, 1, 0, 2, 1, 2],
    );
    let err = dev.assert_error(ops::nonzero_out(&x, &dev.tensor(&[0.0f32], &[1])));
    assert_eq!(
        err,
        "nonzero: Expected out tensor to have scalar type Long but got scalar typeFloat"
    );
}

fn scatter_src_and_value(dev: DeviceTest) {
    let zeros = dev.tensor(&[0i64; 6], &[2, 3]);
    let index = dev.tensor(&[2i64, 0, 1, 2], &[2, 2]);
    let src = dev.tensor(&[1i64, 2, 3, 4, 5, 6], &[2, 3]);
    dev.assert_values(
        &ops::scatter_src(&zeros, -1, &index, &src).unwrap(),
        &[2, 3],
        &[2i64, 0, 1, 0, 4, 5],
    );
    let index0 = dev.tensor(&[1i64, 0, 1], &[1, 3]);
    dev.assert_values(
        &ops::scatter_src(&zeros, 0, &index0, &src).unwrap(),
        &[2, 3],
        &[0i64, 2, 0, 1, 0, 3],
    );
    // A scalar value, converted; a transposed `self` gives a contiguous
    // result.
    let x = dev.tensor(&[0.5f32; 6], &[3, 2]).t().unwrap();
    let out = ops::scatter_value(&x, 1, &index, Scalar::Int(7)).unwrap();
    assert_eq!(out.strides(), &[3, 1]);
    dev.assert_values(&out, &[2, 3], &[7.0f32, 0.5, 7.0, 0.5, 7.0, 7.0]);
    // In place.
    let y = ops::clone(&zeros).unwrap();
    ops::scatter_value_(&y, 1, &index, Scalar::Int(-1)).unwrap();
    dev.assert_values(&y, &[2, 3], &[-1i64, 0, -1, 0, -1, -1]);
    // An empty index copies `self`.
    let empty = dev.tensor::<i64>(&[], &[0, 3]);
    dev.assert_values(
        &ops::scatter_src(&src, 0, &empty, &zeros).unwrap(),
        &[2, 3],
        &[1i64, 2, 3, 4, 5, 6],
    );
    let big = ops::scatter_value(
        &dev.tensor(&[0i8], &[1]),
        0,
        &dev.tensor(&[0i64], &[1]),
        Scalar::Int(300),
    );
    if let Some(err) = dev.assert_data_error(big) {
        assert_eq!(
            err,
            "value cannot be converted to type int8_t without overflow"
        );
    }
}

fn scatter_add_and_reduce(dev: DeviceTest) {
    let base = dev.tensor(&[1.0f32, 2.0, 3.0], &[3]);
    let index = dev.tensor(&[0i64, 0, 2, 0], &[4]);
    let src = dev.tensor(&[1.0f32, 2.0, 4.0, 8.0], &[4]);
    dev.assert_values(
        &ops::scatter_add(&base, 0, &index, &src).unwrap(),
        &[3],
        &[12.0f32, 2.0, 7.0],
    );
    let reduce = |name: &str, include_self: bool| {
        ops::scatter_reduce_two_with(
            &base,
            0,
            &index,
            &src,
            name,
            ops::ScatterReduceTwoOptions { include_self },
        )
        .unwrap()
    };
    dev.assert_values(&reduce("sum", false), &[3], &[11.0f32, 2.0, 4.0]);
    dev.assert_values(&reduce("prod", true), &[3], &[16.0f32, 2.0, 12.0]);
    dev.assert_values(&reduce("prod", false), &[3], &[16.0f32, 2.0, 4.0]);
    dev.assert_values(&reduce("mean", true), &[3], &[3.0f32, 2.0, 3.5]);
    dev.assert_values(&reduce("mean", false), &[3], &[11.0f32 / 3.0, 2.0, 4.0]);
    dev.assert_values(&reduce("amax", true), &[3], &[8.0f32, 2.0, 4.0]);
    dev.assert_values(&reduce("amin", false), &[3], &[1.0f32, 2.0, 4.0]);
    dev.assert_values(&reduce("max", true), &[3], &[8.0f32, 2.0, 4.0]);
    dev.assert_values(&reduce("min", true), &[3], &[1.0f32, 2.0, 3.0]);
    // Integer means floor; NaN wins amax.
    let ints = dev.tensor(&[-3i32, 5], &[2]);
    let mean = ops::scatter_reduce_two(
        &ints,
        0,
        &dev.tensor(&[0i64, 1], &[2]),
        &dev.tensor(&[0i32, 0], &[2]),
        "mean",
    )
    .unwrap();
    dev.assert_values(&mean, &[2], &[-2i32, 2]);
    let nan = ops::scatter_reduce_two(
        &base,
        0,
        &dev.tensor(&[1i64], &[1]),
        &dev.tensor(&[f32::NAN], &[1]),
        "amax",
    )
    .unwrap();
    if dev.has_data() {
        assert!(nan.to_vec::<f32>().unwrap()[1].is_nan());
    }
    // In place and out=.
    let acc = dev.tensor(&[0i64; 2], &[2]);
    ops::scatter_add_(
        &acc,
        0,
        &dev.tensor(&[1i64, 1], &[2]),
        &dev.tensor(&[2i64, 3], &[2]),
    )
    .unwrap();
    dev.assert_values(&acc, &[2], &[0i64, 5]);
    let out = dev.tensor::<f32>(&[], &[0]);
    ops::scatter_add_out(&base, 0, &index, &src, &out).unwrap();
    dev.assert_values(&out, &[3], &[12.0f32, 2.0, 7.0]);
}

fn scatter_errors(dev: DeviceTest) {
    let x = dev.tensor(&[0.0f32; 6], &[2, 3]);
    let src = dev.tensor(&[1.0f32; 6], &[2, 3]);
    let index = dev.tensor(&[0i64; 2], &[1, 2]);
    let err = dev.assert_error(ops::scatter_src(
        &x,
        1,
        &dev.tensor(&[0.0f32], &[1, 1]),
        &src,
    ));
    assert_eq!(err, "scatter(): Expected dtype int32/int64 for index");
    let err = dev.assert_error(ops::scatter_src(
        &x,
        1,
        &index,
        &dev.tensor(&[1i64; 6], &[2, 3]),
    ));
    assert_eq!(
        err,
        "scatter(): Expected self.dtype to be equal to src.dtype"
    );
    let err = dev.assert_error(ops::scatter_src(&x, 1, &dev.tensor(&[0i64; 2], &[2]), &src));
    assert_eq!(
        err,
        "Index tensor must have the same number of dimensions as self tensor"
    );
    let err = dev.assert_error(ops::scatter_src(
        &x,
        1,
        &dev.tensor(&[0i64; 3], &[3, 1]),
        &src,
    ));
    assert_eq!(
        err,
        "Expected index [3, 1] to be smaller than self [2, 3] apart from dimension 1 and to be smaller size than src [2, 3]"
    );
    let err = dev.assert_error(ops::scatter_value(
        &x,
        0,
        &dev.tensor(&[0i64; 4], &[1, 4]),
        Scalar::Int(1),
    ));
    assert_eq!(
        err,
        "Expected index [1, 4] to be smaller than self [2, 3] apart from dimension 0"
    );
    let err = dev.assert_error(ops::scatter_src(&x, 2, &index, &src));
    assert_eq!(
        err,
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
    let err = dev.assert_error(ops::scatter_reduce_two(&x, 1, &index, &src, "median"));
    assert_eq!(
        err,
        "reduce argument must be either sum, prod, mean, amax or amin, got median"
    );
    let bad = ops::scatter_src(&x, 1, &dev.tensor(&[3i64], &[1, 1]), &src);
    if let Some(err) = dev.assert_data_error(bad) {
        assert_eq!(err, "index 3 is out of bounds for dimension 1 with size 3");
    }
    let negative = ops::scatter_add(&x, 0, &dev.tensor(&[-1i64], &[1, 1]), &src);
    if let Some(err) = dev.assert_data_error(negative) {
        assert_eq!(err, "index -1 is out of bounds for dimension 0 with size 2");
    }
}

fn sort_orders_stably_with_nans(dev: DeviceTest) {
    let x = dev.tensor(&[3.0f32, f32::NAN, 1.0, 3.0, -0.0, 0.0], &[6]);
    let (values, indices) = ops::sort(&x).unwrap();
    dev.assert_values(&indices, &[6], &[4i64, 5, 2, 0, 3, 1]);
    if dev.has_data() {
        let v = values.to_vec::<f32>().unwrap();
        assert_eq!(&v[..5], &[-0.0, 0.0, 1.0, 3.0, 3.0]);
        assert!(v[5].is_nan());
    }
    let (_, indices) = ops::sort_with(
        &x,
        ops::SortOptions {
            dim: 0,
            descending: true,
        },
    )
    .unwrap();
    dev.assert_values(&indices, &[6], &[1i64, 0, 3, 2, 4, 5]);
    // Along a dimension of a transposed tensor: its layout is kept.
    let m = dev.tensor(&[5i16, 1, 4, 2, 6, 3], &[2, 3]).t().unwrap();
    let (values, indices) = ops::sort_stable_with(
        &m,
        Some(true),
        ops::SortStableOptions {
            dim: -2,
            descending: false,
        },
    )
    .unwrap();
    assert_eq!(values.strides(), &[1, 3]);
    assert_eq!(indices.strides(), &[1, 3]);
    dev.assert_values(
        &ops::contiguous(&values).unwrap(),
        &[3, 2],
        &[1i16, 2, 4, 3, 5, 6],
    );
    dev.assert_values(
        &ops::contiguous(&indices).unwrap(),
        &[3, 2],
        &[1i64, 0, 2, 2, 0, 1],
    );
    // Booleans, a 0-dim tensor, and a bad dimension.
    let (values, _) = ops::sort(&dev.tensor(&[true, false, true], &[3])).unwrap();
    dev.assert_values(&values, &[3], &[false, true, true]);
    let (values, indices) = ops::sort(&dev.tensor(&[2.5f64], &[])).unwrap();
    dev.assert_values(&values, &[], &[2.5f64]);
    dev.assert_values(&indices, &[], &[0i64]);
    let err = dev.assert_error(ops::sort_with(
        &x,
        ops::SortOptions {
            dim: 1,
            descending: false,
        },
    ));
    assert_eq!(
        err,
        "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    );
    // out=.
    let (v, i) = (dev.tensor::<f32>(&[], &[0]), dev.tensor::<i64>(&[], &[0]));
    ops::sort_values(&x, -1, true, &v, &i).unwrap();
    dev.assert_values(&i, &[6], &[1i64, 0, 3, 2, 4, 5]);
}

fn topk_picks_and_checks(dev: DeviceTest) {
    let x = dev.tensor(&[1.0f32, 5.0, f32::NAN, 3.0, 4.0, 0.0], &[2, 3]);
    let (values, indices) = ops::topk(&x, 2).unwrap();
    dev.assert_values(&indices, &[2, 2], &[2i64, 1, 1, 0]);
    if dev.has_data() {
        let v = values.to_vec::<f32>().unwrap();
        assert!(v[0].is_nan());
        assert_eq!(&v[1..], &[5.0, 4.0, 3.0]);
    }
    let (values, indices) = ops::topk_with(
        &x,
        1,
        ops::TopkOptions {
            dim: 0,
            largest: false,
            sorted: true,
        },
    )
    .unwrap();
    dev.assert_values(&indices, &[1, 3], &[0i64, 1, 1]);
    assert_eq!(values.sizes(), &[1, 3]);
    let (values, indices) = ops::topk(&dev.tensor(&[-7i8], &[]), 0).unwrap();
    dev.assert_values(&values, &[], &[-7i8]);
    dev.assert_values(&indices, &[], &[0i64]);
    let err = dev.assert_error(ops::topk(&x, 4));
    assert_eq!(err, "selected index k out of range");
    let err = dev.assert_error(ops::topk(&x, -1));
    assert_eq!(err, "selected index k out of range");
    let flags = ops::topk(&dev.tensor(&[true, false], &[2]), 1);
    if let Some(err) = dev.assert_data_error(flags) {
        assert_eq!(err, "\"topk_cpu\" not implemented for 'Bool'");
    }
}

fn randperm_permutes_and_checks(dev: DeviceTest) {
    let on = |dtype: Option<ScalarType>| ops::RandpermOptions {
        dtype,
        device: Some(dev.device),
        ..Default::default()
    };
    let one = ops::randperm_with(1, on(None)).unwrap();
    dev.assert_values(&one, &[1], &[0i64]);
    let none = ops::randperm_with(0, on(Some(ScalarType::Short))).unwrap();
    dev.assert_values(&none, &[0], &[] as &[i16]);
    let perm = ops::randperm_with(50, on(Some(ScalarType::Float))).unwrap();
    assert_eq!(perm.sizes(), &[50]);
    if dev.has_data() {
        let mut v = perm.to_vec::<f32>().unwrap();
        v.sort_by(|a, b| a.total_cmp(b));
        assert_eq!(v, (0..50).map(|i| i as f32).collect::<Vec<_>>());
    }
    let err = dev.assert_error(ops::randperm_with(-1, on(None)));
    assert_eq!(
        err,
        "Trying to create tensor with negative dimension -1: [-1]"
    );
    let err = dev.assert_error(ops::randperm_with(300, on(Some(ScalarType::Char))));
    assert_eq!(
        err,
        "value cannot be converted to type int8_t without overflow"
    );
    let err = dev.assert_error(ops::randperm_with(3000, on(Some(ScalarType::Half))));
    assert_eq!(err, "n cannot be greater than 2049 for Half type.");
    let flags = ops::randperm_with(3, on(Some(ScalarType::Bool)));
    if let Some(err) = dev.assert_data_error(flags) {
        assert_eq!(err, "\"randperm\" not implemented for 'Bool'");
    }
}

fn bag(
    dev: DeviceTest,
    weight: &Tensor,
    indices: &[i64],
    offsets: &[i64],
    options: ops::EmbeddingBagOptions<'_>,
) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    ops::_embedding_bag_with(
        weight,
        &dev.tensor(indices, &[indices.len() as i64]),
        &dev.tensor(offsets, &[offsets.len() as i64]),
        options,
    )
}

fn embedding_bag_modes(dev: DeviceTest) {
    // Rows r have values [r, 10 r].
    let data: Vec<f64> = (0..5).flat_map(|r| [r as f64, 10.0 * r as f64]).collect();
    let weight = dev.tensor(&data, &[5, 2]);
    let options = |mode: i64| ops::EmbeddingBagOptions {
        mode,
        ..Default::default()
    };
    let (out, offset2bag, bag_size, max_indices) =
        bag(dev, &weight, &[1, 2, 4, 3], &[0, 1, 1], options(0)).unwrap();
    dev.assert_values(&out, &[3, 2], &[1.0f64, 10.0, 0.0, 0.0, 9.0, 90.0]);
    dev.assert_values(&offset2bag, &[4], &[0i64, 2, 2, 2]);
    dev.assert_values(&bag_size, &[3], &[0i64; 3]);
    dev.assert_values(&max_indices, &[3], &[0i64; 3]);
    let (out, _, bag_size, max_indices) =
        bag(dev, &weight, &[1, 2, 4, 3], &[0, 1, 1], options(1)).unwrap();
    dev.assert_values(&out, &[3, 2], &[1.0f64, 10.0, 0.0, 0.0, 3.0, 30.0]);
    dev.assert_values(&bag_size, &[3], &[1i64, 0, 3]);
    dev.assert_values(&max_indices, &[3], &[1i64, 0, 3]);
    let (out, _, bag_size, max_indices) =
        bag(dev, &weight, &[1, 2, 4, 3], &[0, 1, 1], options(2)).unwrap();
    dev.assert_values(&out, &[3, 2], &[1.0f64, 10.0, 0.0, 0.0, 4.0, 40.0]);
    dev.assert_values(&bag_size, &[3], &[1i64, 0, 3]);
    dev.assert_values(&max_indices, &[3, 2], &[1i64, 1, 0, 0, 4, 4]);
    // The last offset closes the last bag; padding indices leave bags.
    let (out, _, bag_size, _) = bag(
        dev,
        &weight,
        &[1, 2, 4, 3],
        &[0, 2, 4],
        ops::EmbeddingBagOptions {
            mode: 1,
            include_last_offset: true,
            padding_idx: 2,
            ..Default::default()
        },
    )
    .unwrap();
    dev.assert_values(&out, &[2, 2], &[1.0f64, 10.0, 3.5, 35.0]);
    dev.assert_values(&bag_size, &[2], &[1i64, 2]);
    // Per-sample weights (sum only), float32 on the fast path, int32
    // indices and offsets: index outputs are int32, `offset2bag` empty.
    let w32 = ops::_to_copy_with(
        &weight,
        ops::ToCopyOptions {
            dtype: Some(ScalarType::Float),
            ..Default::default()
        },
    )
    .unwrap();
    let scale = dev.tensor(&[2.0f32, 0.5], &[2]);
    let (out, offset2bag, bag_size, _) = ops::_embedding_bag_with(
        &w32,
        &dev.tensor(&[1i32, 4], &[2]),
        &dev.tensor(&[0i32], &[1]),
        ops::EmbeddingBagOptions {
            per_sample_weights: Some(&scale),
            ..Default::default()
        },
    )
    .unwrap();
    dev.assert_values(&out, &[1, 2], &[4.0f32, 40.0]);
    dev.assert_values(&offset2bag, &[0], &[] as &[i32]);
    dev.assert_values(&bag_size, &[1], &[0i32]);
}

fn embedding_bag_errors(dev: DeviceTest) {
    let weight = dev.tensor(&[1.0f32; 6], &[3, 2]);
    let err = dev.assert_error(bag(
        dev,
        &dev.tensor(&[1i64; 6], &[3, 2]),
        &[0],
        &[0],
        Default::default(),
    ));
    assert_eq!(
        err,
        "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, BFloat16, Float, Double; but got torch.LongTensor instead (while checking arguments for embedding_bag)"
    );
    let err = dev.assert_error(ops::_embedding_bag(
        &weight,
        &dev.tensor(&[0i64], &[1, 1, 1]),
        &dev.tensor(&[0i64], &[1]),
    ));
    assert_eq!(
        err,
        "input has to be a 1D or 2D Tensor, but got Tensor of dimension 3"
    );
    let scale = dev.tensor(&[1.0f32], &[1]);
    let err = dev.assert_error(bag(
        dev,
        &weight,
        &[0],
        &[0],
        ops::EmbeddingBagOptions {
            mode: 1,
            per_sample_weights: Some(&scale),
            ..Default::default()
        },
    ));
    assert_eq!(
        err,
        "embedding_bag: per_sample_weights only supported with mode='sum'"
    );
    let err = dev.assert_error(bag(
        dev,
        &weight,
        &[0],
        &[],
        ops::EmbeddingBagOptions {
            include_last_offset: true,
            ..Default::default()
        },
    ));
    assert_eq!(
        err,
        "include_last_offset: number of offset should be at least 1"
    );
    if let Some(err) = dev.assert_data_error(bag(dev, &weight, &[0, 1], &[1], Default::default())) {
        assert_eq!(
            err,
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 1"
        );
    }
    // A bad index, in the fast path's words and in the general path's.
    if let Some(err) = dev.assert_data_error(bag(dev, &weight, &[0, 3], &[0], Default::default())) {
        assert_eq!(err, "Index 1 is out of bounds: 3, range 0 to 3");
    }
    let max = ops::EmbeddingBagOptions {
        mode: 2,
        ..Default::default()
    };
    if let Some(err) = dev.assert_data_error(bag(dev, &weight, &[0, -1], &[0], max)) {
        assert_eq!(
            err,
            "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be -1"
        );
    }
}

fn hostile_sizes_and_values_are_errors(dev: DeviceTest) {
    // A huge broadcast tensor: results that big fail to allocate, cleanly
    // (on Meta, which allocates nothing, they are fine).
    let one = dev.tensor(&[1.0f32], &[1]);
    let huge = ops::expand(&one, &[1 << 40]).unwrap();
    let picked = ops::index_tensor(&huge, vec![Some(dev.tensor(&[5i64], &[1]))]).unwrap();
    dev.assert_values(&picked, &[1], &[1.0f32]);
    let on = ops::RandpermOptions {
        device: Some(dev.device),
        ..Default::default()
    };
    let all = ops::index_tensor(&huge, vec![None]);
    let sorted = ops::sort(&huge);
    let perm = ops::randperm_with(1 << 50, on);
    if dev.has_data() {
        assert!(all.is_err() && sorted.is_err() && perm.is_err());
    }
    // Extreme index values are range errors, not overflows.
    let x = dev.tensor(&[0i64; 4], &[4]);
    for v in [i64::MIN, i64::MAX] {
        let at = dev.tensor(&[v], &[1]);
        if let Some(err) = dev.assert_data_error(ops::index_tensor(&x, vec![Some(at.clone())])) {
            assert_eq!(
                err,
                format!("index {v} is out of bounds for dimension 0 with size 4")
            );
        }
        let scattered = ops::scatter_value(&x, 0, &at, Scalar::Int(1));
        if let Some(err) = dev.assert_data_error(scattered) {
            assert_eq!(
                err,
                format!("index {v} is out of bounds for dimension 0 with size 4")
            );
        }
    }
    let err = dev.assert_error(ops::topk(&x, i64::MAX));
    assert_eq!(err, "selected index k out of range");
    // Offsets far outside the indices.
    let weight = dev.tensor(&[1.0f64; 4], &[2, 2]);
    let odd = bag(dev, &weight, &[0, 1], &[0, i64::MIN, 2], Default::default());
    if let Some(err) = dev.assert_data_error(odd) {
        assert_eq!(err, "index out of range in self");
    }
}
