"""Writes conformance/data/composite_ops_golden.jsonl: boxed calls of the
composite operators that exported programs call before decomposition
(the default export IR), run by PyTorch 2.15 on the CPU, in the format of
ops_golden.jsonl (see conformance/data/README of the oracle).

Run with a Python that has torch==2.15.0:

    python conformance/scripts/composite_ops_golden.py > conformance/data/composite_ops_golden.jsonl
"""

import json
import sys

import torch

from op_records import enc_in, enc_out

torch.manual_seed(0)


def record(op, args, kwargs=None):
    kwargs = kwargs or {}
    name, _, overload = op.partition(".")
    packet = getattr(torch.ops.aten, name)
    overload_fn = getattr(packet, overload or "default")
    line = {
        "op": f"aten::{op}" if overload else f"aten::{name}",
        "args": [enc_in(a) for a in args],
        "kwargs": {k: enc_in(v) for k, v in kwargs.items()},
    }
    # Inputs are cloned so that in-place operators leave the encoded ones.
    call_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    try:
        line["result"] = enc_out(overload_fn(*call_args, **kwargs))
    except Exception as e:  # noqa: BLE001
        line["error"] = str(e).split("\n")[0]
    print(json.dumps(line))


def r(*shape, dtype=torch.float32):
    if dtype.is_floating_point:
        return torch.randn(*shape).to(dtype)
    if dtype == torch.bool:
        return torch.rand(*shape) > 0.5
    return torch.randint(-5, 6, shape, dtype=dtype)


def t_(x):
    """A non-contiguous view with x's values: transposed storage."""
    return x.t().contiguous().t() if x.dim() == 2 else x


# Convolution entry points.
record("conv1d", [r(2, 4, 9), r(6, 4, 3), r(6)], {"stride": [2], "padding": [1]})
record("conv1d", [r(4, 9), r(6, 4, 3)])
record("conv1d", [r(2, 4, 9), r(6, 2, 3)], {"groups": 2, "dilation": [2]})
record("conv1d", [r(2, 4), r(6, 4, 3)])
record("conv3d", [r(1, 2, 5, 5, 5), r(3, 2, 3, 3, 3), r(3)], {"padding": [1, 1, 1]})
record("conv2d.padding", [r(1, 3, 7, 7), r(4, 3, 3, 3)], {"padding": "same"})
record("conv2d.padding", [r(1, 3, 7, 7), r(4, 3, 2, 2)], {"padding": "same"})
record("conv1d.padding", [r(1, 3, 7), r(4, 3, 3)], {"padding": "valid"})
record("conv2d.padding", [r(1, 3, 7, 7), r(4, 3, 3, 3)], {"padding": "bogus"})
record("conv_transpose1d", [r(2, 4, 5), r(4, 3, 3), r(3)], {"stride": [2], "output_padding": [1]})
record("conv_transpose2d.input", [r(1, 4, 5, 5), r(4, 2, 3, 3)], {"stride": [2, 2], "padding": [1, 1]})
record("conv_transpose2d.input", [r(1, 4, 5, 5), r(4, 1, 3, 3)], {"groups": 2})
record("conv_transpose3d.input", [r(1, 2, 3, 3, 3), r(2, 2, 2, 2, 2)])

# Normalization.
x = r(3, 4, 5)
record("batch_norm", [x, r(4), r(4), r(4), r(4).abs() + 0.5, False, 0.1, 1e-5, False])
record("batch_norm", [x, None, None, r(4), r(4).abs() + 0.5, False, 0.1, 1e-5, False])
record("batch_norm", [x, r(4), r(4), None, None, False, 0.1, 1e-5, False])
record("batch_norm", [x, r(5), r(4), r(4), r(4).abs(), False, 0.1, 1e-5, False])
record("instance_norm", [r(2, 3, 6), r(3), r(3), None, None, True, 0.1, 1e-5, False])
record("group_norm", [r(2, 6, 4), 3, r(6), r(6)])
record("group_norm", [r(2, 6, 4, 4), 2])
record("group_norm", [r(2, 6, 4), 4])
record("rms_norm", [r(2, 3, 8), [8], r(8)], {"eps": 1e-6})
record("rms_norm", [r(2, 3, 8), [3, 8]])
record("rms_norm", [r(2, 3, 8, dtype=torch.bfloat16), [8], r(8, dtype=torch.bfloat16)])
record("native_batch_norm", [r(2, 3, 4), r(3), r(3), r(3), r(3).abs() + 0.1, False, 0.1, 1e-5])

# Activations.
v = torch.tensor([-4.0, -3.0, -1.5, 0.0, 0.5, 3.0, 4.0, float("nan")])
for op in ["hardswish", "hardsigmoid", "relu6", "selu"]:
    record(op, [v])
    record(op, [r(3, 4, dtype=torch.bfloat16)])
record("hardswish", [torch.arange(4)])
record("hardtanh_", [v, -2.0, 2.0])
record("hardswish_", [v])
record("relu6_", [v])
record("celu", [v, 2.0])
record("celu", [v, 0.0])
record("prelu", [r(2, 3, 4), r(3)])
record("prelu", [r(2, 3, 4), r(1)])
record("prelu", [r(2, 3, 4), r(4)])

# Attention.
q, k, val = r(2, 3, 5, 8), r(2, 3, 6, 8), r(2, 3, 6, 8)
record("scaled_dot_product_attention", [q, k, val])
record("scaled_dot_product_attention", [q, k, val, r(5, 6) > 0])
record("scaled_dot_product_attention", [q, k, val, r(2, 1, 5, 6)], {"scale": 0.3})
record("scaled_dot_product_attention", [q, r(2, 3, 5, 8), r(2, 3, 5, 8)], {"is_causal": True})
record("scaled_dot_product_attention", [r(2, 4, 5, 8), r(2, 2, 5, 8), r(2, 2, 5, 8)], {"enable_gqa": True, "is_causal": True})
record("scaled_dot_product_attention", [r(5, 8), r(6, 8), r(6, 8)])
record("scaled_dot_product_attention", [q.bfloat16(), k.bfloat16(), val.bfloat16(), r(5, 6) > 0])
record("scaled_dot_product_attention", [q, k.double(), val])
masked = torch.ones(5, 6, dtype=torch.bool)
masked[1] = False
record("scaled_dot_product_attention", [q, k, val, masked])
record("_scaled_dot_product_attention_math", [q, k, val])
record("_safe_softmax", [torch.tensor([[0.0, 1.0, float("-inf")], [float("-inf")] * 3]), -1])

# Conversions.
f = r(3, 4)
record("to.dtype", [f, torch.float64])
record("to.dtype", [f, torch.float32])
record("to.dtype", [f, torch.int32])
record("to.dtype", [r(2, 3, dtype=torch.int64), torch.bool])
record("to.dtype_layout", [f], {"dtype": torch.bfloat16})
record("to.other", [f, r(2, dtype=torch.float64)])
record("type_as", [r(3, dtype=torch.int64), f])
record("item", [torch.tensor(3.5)])
record("item", [torch.tensor([7])])
record("item", [torch.tensor([1, 2])])

# Splits, joins, views.
s = r(7, 4)
record("chunk", [s, 3])
record("chunk", [s, 3, 1])
record("chunk", [torch.zeros(0, 2), 3])
record("chunk", [s, 0])
record("tensor_split.sections", [s, 3])
record("tensor_split.indices", [s, [1, 5]])
record("tensor_split.indices", [s, [2], 1])
record("tensor_split.tensor_indices_or_sections", [s, torch.tensor(2)])
record("tensor_split.tensor_indices_or_sections", [s, torch.tensor([1, 3])])
record("split.sizes", [s, [3, 4]])
record("unbind.int", [s])
record("unbind.int", [s, 1])
record("unflatten.int", [r(2, 12), 1, [3, -1]])
record("unflatten.int", [r(2, 12), 1, [5, -1]])
record("meshgrid.indexing", [[torch.arange(3), torch.arange(2)]], {"indexing": "xy"})
record("meshgrid.indexing", [[torch.arange(3), torch.arange(2)]], {"indexing": "ij"})
record("broadcast_to", [r(3, 1), [2, 3, 4]])
record("broadcast_tensors", [[r(3, 1), r(1, 4), r(4)]])
record("hstack", [[r(2, 3), r(2, 1)]])
record("vstack", [[r(3), r(3)]])
record("concat", [[r(2, 3), r(1, 3)]])
record("concatenate", [[r(2, 3), r(2, 1)], 1])
record("expand_as", [r(3, 1), r(2, 3, 4)])
record("view_as", [r(3, 4), r(2, 6)])
record("reshape_as", [t_(r(3, 4)), r(12)])
record("movedim.int", [r(2, 3, 4), 0, 2])
record("movedim.intlist", [r(2, 3, 4, 5), [0, 1], [2, 0]])
record("moveaxis.int", [r(2, 3, 4), -1, 0])
record("swapaxes", [r(2, 3, 4), 0, 2])
record("swapdims", [r(2, 3, 4), 1, 2])
record("numpy_T", [r(2, 3, 4)])
record("mT", [r(2, 3, 4)])
record("mT", [r(3)])
record("ravel", [t_(r(3, 4))])
record("fliplr", [r(2, 3)])
record("flipud", [r(2, 3)])

# Padding.
p = r(1, 2, 5)
record("pad", [p, [1, 2]])
record("pad", [p, [1, 2]], {"value": 3.5})
record("pad", [p, [2, 1], "reflect"])
record("pad", [p, [2, 1], "replicate"])
record("pad", [p, [2, 1], "circular"])
record("pad", [r(1, 2, 4, 4), [1, 1, 2, 0], "reflect"])
record("pad", [r(1, 2, 4, 4), [1, 1, 2, 0], "replicate"])
record("pad", [r(1, 2, 4, 4), [1, 1, 2, 0], "circular"])
record("pad", [r(1, 2, 3, 3, 3), [1, 1, 1, 1, 1, 1], "replicate"])
record("pad", [p, [1, 2], "reflect", 1.0])
record("pad", [p, [1, 2], "bogus"])
record("replication_pad1d", [p, [3, 1]])

# Encodings and selections.
record("one_hot", [torch.tensor([0, 2, 1])])
record("one_hot", [torch.tensor([[0, 2], [1, 1]]), 4])
record("one_hot", [torch.tensor([0, 5]), 3])
record("one_hot", [torch.tensor([0.0])])
record("repeat_interleave.self_int", [r(2, 3), 2])
record("repeat_interleave.self_int", [r(2, 3), 3, 1])
record("repeat_interleave.self_Tensor", [r(3), torch.tensor([1, 0, 2])])
record("repeat_interleave.self_Tensor", [r(2, 3), torch.tensor([2, 1]), 0])
record("repeat_interleave.Tensor", [torch.tensor([2, 0, 3])])
record("where.ScalarOther", [r(3, 4) > 0, r(3, 4), 0.0])
record("where.ScalarSelf", [r(3, 4) > 0, 1, r(3, 4, dtype=torch.int32)])
record("where.Scalar", [r(3, 4) > 0, 1, 2.5])
record("where.Scalar", [r(3, 4) > 0, 1, 2])
record("clip", [v, -1.0, 1.0])
record("clip.Tensor", [r(3, 4), r(4), None])

# Dropout outside training, reductions, pooling.
for op in ["dropout_", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"]:
    record(op, [r(2, 3, 4), 0.5, False])
record("feature_dropout", [r(2, 3, 4), 1.0, True])
record("dropout_", [r(2, 3), 1.5, False])
record("var", [r(3, 4)])
record("std", [r(3, 4), False])
record("std.dim", [r(3, 4), [1], True, True])
record("std.correction", [r(3, 4)], {"dim": [0], "correction": 2})
record("max_pool1d", [r(2, 3, 9), [3]])
record("max_pool1d", [r(2, 3, 9), [3], [2], [1], [1], True])
record("max_pool1d_with_indices", [r(2, 3, 9), [2]])
record("max_pool3d", [r(1, 2, 4, 4, 4), [2, 2, 2]])
record("adaptive_avg_pool3d", [r(1, 2, 4, 4, 4), [1, 1, 1]])
record("adaptive_avg_pool3d", [r(1, 2, 4, 4, 4), [2, 1, 2]])

# Products.
record("einsum", ["ij,jk->ik", [r(2, 3), r(3, 4)]])
record("einsum", ["bhqd,bhkd->bhqk", [r(2, 2, 3, 4), r(2, 2, 5, 4)]])
record("einsum", ["ii->i", [r(3, 3)]])
record("einsum", ["ij->", [r(3, 4)]])
record("einsum", ["i,j", [r(3), r(4)]])
record("einsum", ["...ij,...jk", [r(5, 2, 3), r(3, 4)]])
record("einsum", ["bn,anm,bm->ba", [r(2, 3), r(4, 3, 5), r(2, 5)]])
record("einsum", ["ij,jk", [r(2, 3), r(4, 4)]])
record("tensordot", [r(2, 3, 4), r(4, 3, 5), [1, 2], [1, 0]])
record("inner", [r(2, 3), r(4, 3)])
record("outer", [r(3), r(4)])
record("ger", [r(3), r(2)])

# Factories, fills, subtraction.
record("new_zeros", [r(2, dtype=torch.float64), [2, 3]])
record("new_ones", [r(2), [3]], {"dtype": torch.int64})
record("new_full", [r(2, dtype=torch.int32), [2, 2], 7])
record("lift_fresh_copy", [r(3)])
record("rsub.Scalar", [r(3), 1.0])
record("rsub.Scalar", [torch.arange(3), 5, 2])
record("rsub.Tensor", [r(3), r(2, 3)], {"alpha": 2})
record("masked_fill.Tensor", [r(3, 4), r(3, 4) > 0, torch.tensor(2.5)])
record("masked_fill.Tensor", [r(3, 4), r(4) > 0, torch.tensor([1.0, 2.0])])

# Norms and one-sided clamps.
n = r(3, 4)
for o in [2, 1, 0, 3.5, float("inf"), float("-inf"), -1]:
    record("linalg_vector_norm", [n, o])
record("linalg_vector_norm", [n, 2, [1], True])
record("linalg_vector_norm", [t_(n), 2, [0]])
record("linalg_vector_norm", [n], {"dtype": torch.float64})
record("linalg_vector_norm", [n], {"dtype": torch.float16})
record("linalg_vector_norm", [r(3, 4, dtype=torch.bfloat16), 2, [-1], True])
record("linalg_vector_norm", [torch.arange(3)])
record("linalg_vector_norm", [torch.zeros(0, 3), float("inf")])
record("linalg_vector_norm", [torch.zeros(0, 3), -1, [0]])
record("linalg_vector_norm", [torch.zeros(0, 3), float("inf"), [1]])
record("linalg_vector_norm", [torch.zeros(0, 3)])
record("leaky_relu_", [v, 0.2])
record("clamp_min", [v, 0.5])
record("clamp_min", [v, float("nan")])
record("clamp_max", [torch.arange(5), 2])
record("clamp_min", [torch.arange(5), 2.5])
record("clamp_min_", [torch.arange(5), 2.5])
record("clamp_max_", [v, 1.0])
record("clamp_min", [torch.tensor([True, False]), 0])
record("clamp_min", [torch.tensor([True, False]), True])
record("clamp_min.Tensor", [v, torch.tensor(0.5)])
record("clamp_max.Tensor", [r(3, 4), r(4)])
record("clamp_max.Tensor", [torch.arange(3), torch.tensor([float("nan"), 0.0, 5.0])])
record("clamp_min_.Tensor", [r(3, 4), r(4)])

# Batched products, norms, weight normalization, bicubic upsampling.
record("where.ScalarOther", [r(3, 4) > 0, torch.zeros([]), -3.4028234663852886e38])
record("where.ScalarSelf", [r(3, 4) > 0, 2, torch.zeros([], dtype=torch.int32)])
record("baddbmm", [r(2, 3, 4), r(2, 3, 5), r(2, 5, 4)])
record("baddbmm", [r(4), r(2, 3, 5), r(2, 5, 4)], {"beta": 0.5, "alpha": 2})
record("baddbmm", [torch.full((4,), float("nan")), r(2, 3, 5), r(2, 5, 4)], {"beta": 0})
record("baddbmm", [r(4), r(2, 3, 0), r(2, 0, 4)], {"beta": 2})
record("baddbmm", [r(5, 3, 4), r(2, 3, 5), r(2, 5, 4)])
record("baddbmm", [r(2, 3, 4, dtype=torch.float64), r(2, 3, 5), r(2, 5, 4)])
record("baddbmm", [r(4), r(2, 3, 5), r(2, 5, 4, dtype=torch.float64)])
record("baddbmm", [r(4), r(2, 3, 5), r(2, 6, 4)])
record("baddbmm_", [r(2, 3, 4), r(2, 3, 5), r(2, 5, 4)], {"alpha": -1})
record("baddbmm_", [r(4), r(2, 3, 5), r(2, 5, 4)])
record("baddbmm", [torch.arange(4), torch.arange(30).view(2, 3, 5), torch.arange(40).view(2, 5, 4)])
record("detach", [r(3)])
record("detach_", [r(3)])
record("norm.ScalarOpt_dim", [r(3, 4), 2, [1]])
record("norm.ScalarOpt_dim", [r(3, 4), None, [0], True])
record("norm.ScalarOpt_dim", [r(3, 4), 1, []])
record("norm.ScalarOpt_dim", [torch.arange(3), 2, [0]])
record("norm.ScalarOpt_dim_dtype", [r(3, 4), 3, [1], False], {"dtype": torch.float64})
record("norm.ScalarOpt_dim_dtype", [r(3, 4), 3, [1], False], {"dtype": torch.int64})
record("norm.ScalarOpt_dim_dtype", [r(3, 4, dtype=torch.float64), 3, [1], False], {"dtype": torch.float32})
record("norm.Scalar", [r(3, 4)])
record("norm.Scalar", [r(3, 4), float("inf")])
record("norm.ScalarOpt_dtype", [r(3, 4), None], {"dtype": torch.float64})
record("norm_except_dim", [r(3, 4, 5), 2, 0])
record("norm_except_dim", [r(3, 4, 5), 2, 1])
record("norm_except_dim", [r(3, 4, 5), 2, 2])
record("norm_except_dim", [r(3, 4, 5), 2, -1])
record("_weight_norm", [r(6, 4, 3), r(6, 1, 1)])
record("_weight_norm", [r(6, 4, 3), r(1, 1, 3), 2])
record("_weight_norm", [r(6, 4, 3), r(1, 4, 1), 1])
record("_weight_norm", [r(6, 4, 3, dtype=torch.bfloat16), r(6, 1, 1, dtype=torch.bfloat16)])
record("_weight_norm_interface", [r(6, 4, 3), r(6, 1, 1)])
record("_weight_norm_interface", [r(6, 4, 3, dtype=torch.bfloat16), r(1, 1, 3, dtype=torch.bfloat16), 2])
u = r(1, 2, 4, 5)
record("upsample_bicubic2d", [u, [8, 10], False])
record("upsample_bicubic2d", [u, [7, 3], True])
record("upsample_bicubic2d", [u, [4, 5], False])
record("upsample_bicubic2d", [u, [9, 11], False, 2.3, 2.2])
record("upsample_bicubic2d", [u.double(), [6, 7], False])
record("upsample_bicubic2d", [u.bfloat16(), [6, 7], False])
record("upsample_bicubic2d", [u.to(memory_format=torch.channels_last), [6, 7], False])
record("upsample_bicubic2d", [u, [0, 7], False])
record("upsample_bicubic2d.vec", [u, None, False, [1.5, 2.0]])
record("upsample_bicubic2d.vec", [u, [3, 3], True, None])
record("upsample_bilinear2d", [r(1, 2, 7, 7), [23, 10], False, 23 / 7 + 0.13, 1.7])
record("upsample_bilinear2d", [r(1, 2, 7, 7, dtype=torch.float64), [23, 10], False])
record("upsample_bicubic2d", [r(1, 2, 7, 7, dtype=torch.float64), [23, 10], False, 23 / 7 + 0.13, 1.7])
