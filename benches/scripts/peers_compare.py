"""`aten bench` beside the peer runtimes, in one sitting, model by model.

Usage, from the project root, after `bash ../shared/perf/peers/setup.sh`
and `cargo build --release -p aten-cli`:

    .venv-peers/bin/python benches/scripts/peers_compare.py [--models a,b]
        [--threads 1,2] [--rounds 10] [--rep-ms 30] [--out target/perf-peers]
        [--runtimes eager,inductor,ort,openvino] [--aten target/release/aten]

For each model of ../shared/models and ../shared/models3 (the harness's
order), it runs the peer harness (`../shared/perf/peers/bench_peers.py`) on
that model alone, peak memory included, and right after it `aten bench` on
the same files with the same thread counts, rounds and batch length, at every
size. The two sets of rows go to OUT/compare-rows.jsonl, and OUT/compare.md
gets one table: per model, size and thread count, aten's median latency, the
fastest of ONNX Runtime, OpenVINO and inductor and the ratio; aten's peak
memory against ONNX Runtime's; aten's first run (load included) against ONNX
Runtime's session creation plus first run; and PyTorch eager from the same
run as the reference that makes separate sittings comparable.
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HARNESS = os.path.join("..", "shared", "perf", "peers", "bench_peers.py")
DIRS = [os.path.join("..", "shared", "models"), os.path.join("..", "shared", "models3")]
PEERS = ("ort", "openvino", "inductor")


def models(dirs, only):
    """(name, dir) in the harness's order: mlp, cnn and attention first."""
    found = {}
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "*.pt2"))):
            found.setdefault(os.path.basename(p)[:-4], d)
    first = [m for m in ("mlp", "cnn", "attention") if m in found]
    order = first + [m for m in found if m not in first]
    return [(m, found[m]) for m in order if not only or m in only]


def peer_rows(name, opts):
    tag = "compare"
    cmd = [sys.executable, HARNESS, "--models", name, "--threads", opts.threads,
           "--runtimes", opts.runtimes, "--rounds", str(opts.rounds), "--rep-ms", str(opts.rep_ms),
           "--rss-models", name, "--out", opts.out, "--tag", tag, "--resume"]
    subprocess.run(cmd, check=False, stdout=sys.stderr)
    path = os.path.join(opts.out, f"RESULTS-{tag}.rows.json")
    try:
        with open(path) as f:
            return [r for r in json.load(f) if r["model"] == name]
    except (OSError, ValueError):
        return []


def aten_rows(name, d, opts):
    cmd = [opts.aten, "bench", os.path.join(d, f"{name}.pt2"),
           "--inputs", os.path.join(d, f"{name}.inputs.safetensors"), "--sizes", "all",
           "--threads", opts.threads, "--rounds", str(opts.rounds), "--rep-ms", str(opts.rep_ms),
           "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0 and not out.stdout:
        return [{"model": name, "dir": d, "size": "base", "runtime": "aten", "threads": None,
                 "ok": False, "error": out.stderr.strip()}]
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def fmt(x, unit=""):
    if x is None:
        return "-"
    if unit == "s":
        return f"{x * 1e3:.1f} ms"
    if unit == "mb":
        return f"{x:.0f}"
    return f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def table(rows):
    cells = {}
    for r in rows:
        cells.setdefault((r["model"], r["size"], r.get("threads")), {})[r["runtime"]] = r
    lines = ["| model | size | t | aten us | fastest peer us | aten / peer | eager us | "
             "aten RSS MiB | ort RSS MiB | aten first run | ort first run |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (model, size, t), by in cells.items():
        a = by.get("aten") or {}
        peers = [(by[p]["median_us"], p) for p in PEERS
                 if p in by and by[p].get("ok") and by[p].get("median_us")]
        best = min(peers) if peers else (None, "-")
        ratio = (a["median_us"] / best[0]) if a.get("median_us") and best[0] else None
        eager = (by.get("eager") or {}).get("median_us")
        ort = by.get("ort") or {}
        mark = "" if a.get("ok") else " ✗"
        lines.append(
            f"| {model} | {size} | {t} | {fmt(a.get('median_us'))}{mark} | {fmt(best[0])} ({best[1]}) | "
            f"{'-' if ratio is None else f'{ratio:.2f}'} | {fmt(eager)} | "
            f"{fmt(a.get('peak_rss_mb'), 'mb')} | {fmt(ort.get('peak_rss_mb'), 'mb')} | "
            f"{fmt(a.get('first_run_s'), 's')} | {fmt(ort.get('first_run_s'), 's')} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runtimes", default="eager,inductor,ort,openvino")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--rep-ms", type=float, default=30.0)
    ap.add_argument("--out", default=os.path.join("target", "perf-peers"))
    ap.add_argument("--aten", default=os.path.join("target", "release", "aten"))
    ap.add_argument("--aten-only", action="store_true",
                    help="time aten alone and reuse the peers' rows of an earlier run")
    opts = ap.parse_args()
    os.makedirs(opts.out, exist_ok=True)
    rows_path = os.path.join(opts.out, "compare-rows.jsonl")
    old = []
    if opts.aten_only and os.path.exists(rows_path):
        with open(rows_path) as f:
            old = [json.loads(line) for line in f if line.strip()]
    only = set(filter(None, opts.models.split(",")))
    rows = [r for r in old if r["runtime"] != "aten" and (not only or r["model"] in only)]
    for name, d in models(DIRS, only):
        print(f"== {name}", file=sys.stderr, flush=True)
        if not opts.aten_only:
            rows += peer_rows(name, opts)
        rows += aten_rows(name, d, opts)
        with open(rows_path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        with open(os.path.join(opts.out, "compare.md"), "w") as f:
            f.write(table(rows))
    print(table(rows))


if __name__ == "__main__":
    main()
