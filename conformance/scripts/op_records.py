"""The op-record encoding (`ops_golden.jsonl`'s format, which `aten conform
ops` reads) shared by the scripts that write records: arguments as strided
views of their storages (`enc_in`), results as values in row-major order
(`enc_out`).
"""

import math

import torch


def num(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def storage_values(t):
    flat = t.reshape(-1).tolist() if t.numel() else []
    return [num(v) for v in flat]


def enc_in(v):
    if isinstance(v, torch.Tensor):
        # A strided view of a storage, as the runner rebuilds it.
        storage = torch.empty(0, dtype=v.dtype)
        if v.numel():
            size = v.untyped_storage().nbytes() // v.element_size()
            storage = torch.as_strided(v, (size,), (1,), 0)
        return {
            "tensor": {
                "dtype": str(v.dtype).replace("torch.", ""),
                "shape": list(v.shape),
                "strides": list(v.stride()),
                "offset": v.storage_offset(),
                "storage": storage_values(storage),
            }
        }
    if isinstance(v, (bool, int, float)):
        return enc_number(v)
    if isinstance(v, str):
        return {"str": v}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v).replace("torch.", "")}
    if isinstance(v, torch.device):
        return {"str": str(v)}
    if isinstance(v, torch.memory_format):
        return {"str": str(v).replace("torch.", "")}
    if isinstance(v, (list, tuple)):
        return {"list": [enc_in(x) for x in v]}
    if v is None:
        return None
    raise TypeError(type(v))


def enc_number(v):
    """A Python number as a record value (bool before int: a bool is an int)."""
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    return {"float": num(v)}


def enc_out(v):
    if isinstance(v, torch.Tensor):
        return {
            "tensor": {
                "dtype": str(v.dtype).replace("torch.", ""),
                "shape": list(v.shape),
                "strides": list(v.stride()),
                "values": storage_values(v.contiguous()),
            }
        }
    if isinstance(v, (list, tuple)):
        return {"list": [enc_out(x) for x in v]}
    if isinstance(v, (bool, int, float)):
        return enc_number(v)
    if v is None:
        return None
    raise TypeError(type(v))
