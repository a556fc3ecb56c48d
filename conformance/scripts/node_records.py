"""Op records (the `aten conform ops` format) from the nodes of an exported program.

    python node_records.py MODEL.pt2 INPUTS.safetensors OUT.jsonl [--limit N]

Runs the program's graph node by node in PyTorch (an FX interpreter over
`ep.module()`), and for each `call_function` node on aten operators writes a
record: the operator, its arguments as the node saw them (tensor values
included), and PyTorch's result. One record per distinct (operator, argument
shapes, dtypes), so a model with 50 identical blocks gives a few dozen
records. `aten conform ops OUT.jsonl` then says which single operator call
differs from PyTorch when a whole program does, with the program's own
values as inputs.
"""

import argparse
import json

import torch
from safetensors.torch import load_file

from op_records import enc_in, enc_out

def signature(args):
    def one(a):
        if isinstance(a, torch.Tensor):
            return (str(a.dtype), tuple(a.shape))
        if isinstance(a, (list, tuple)):
            return tuple(one(x) for x in a)
        return repr(a)

    return tuple(one(a) for a in args)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("inputs")
    parser.add_argument("out")
    parser.add_argument("--limit", type=int, default=1 << 22, help="skip calls whose tensors hold more elements")
    opts = parser.parse_args()
    ep = torch.export.load(opts.model)
    given = load_file(opts.inputs)
    args = [given[f"input_{i}"] for i in range(len(given))]
    seen = set()
    records = []

    class Recorder(torch.fx.Interpreter):
        def call_function(self, target, args, kwargs):
            result = super().call_function(target, args, kwargs)
            if isinstance(target, torch._ops.OpOverload) and target.namespace == "aten":
                key = (str(target), signature(args), signature(kwargs.values()))
                sizes = [a.numel() for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
                if key not in seen and sum(sizes) <= opts.limit:
                    seen.add(key)
                    name = target._schema.name
                    overload = target._overloadname
                    records.append(
                        {
                            "op": f"{name}.{overload}",
                            "args": [enc_in(a) for a in args],
                            "kwargs": {k: enc_in(v) for k, v in kwargs.items()},
                            "result": enc_out(result),
                        }
                    )
            return result

    module = ep.module()
    with torch.no_grad():
        Recorder(module).run(*args)
    with open(opts.out, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    print(f"{len(records)} records")


if __name__ == "__main__":
    main()
