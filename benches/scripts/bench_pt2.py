"""PyTorch's eager time on exported programs, the anchor of the project's `.pt2` runner.

Usage: python benches/scripts/bench_pt2.py MODELS_DIR [NAME ...]
For each NAME.pt2 (all in the folder by default) loads the program, reads its
inputs from NAME.inputs.safetensors, and times `ep.module()(*inputs)` under
inference_mode at 1 and 2 threads. Prints `RESULT pt2.NAME.tN median fastest
slowest us/call iters reps` rows like shared/perf's harness.
"""
import glob
import os
import statistics
import sys
import time

import torch
from safetensors.torch import load_file

d = sys.argv[1]
names = sys.argv[2:] or sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(d, "*.pt2")))
for name in names:
    ep = torch.export.load(os.path.join(d, name + ".pt2"))
    m = ep.module()
    ins = load_file(os.path.join(d, name + ".inputs.safetensors"))
    args = [ins[k] for k in sorted(ins, key=lambda k: int(k.split("_")[1]))]
    for threads in (1, 2):
        torch.set_num_threads(threads)
        with torch.inference_mode():
            t0 = time.perf_counter()
            n = 0
            while time.perf_counter() - t0 < 0.3 or n < 3:
                m(*args)
                n += 1
            per = (time.perf_counter() - t0) / n
            iters = max(1, int(0.3 / per))
            reps = []
            for _ in range(7):
                t = time.perf_counter()
                for _ in range(iters):
                    m(*args)
                reps.append((time.perf_counter() - t) / iters * 1e6)
        reps.sort()
        print(f"RESULT\tpt2.{name}.t{threads}\t{statistics.median(reps):.6g}\t{reps[0]:.6g}\t{reps[-1]:.6g}\tus/call\t{iters}\t7", flush=True)
