"""Mixed precision in dlc: fp32 against bf16 (and f16) compiled models, latency and accuracy.

Run: `python3 benchmarks/low_precision.py [--models resnet18 transformer] [--precisions bf16 f16]
[--samples 16] [--repeats 15] [--threads 0]`.

For each model (built by `benchmarks/model_zoo.py`, seeded) it compiles the fp32 model and the
same model with `dlc.compile(..., precision=P)` (`graph-to-low-precision{type=P}`), times them
interleaved in the same run (`benchmarks.common.time_calls`, median), and compares their
outputs on `--samples` random inputs: max |low - fp32|, that over max |fp32| (relative), and
the top-1 agreement of the last axis (classifiers: the predicted class) and how often fp32's top-1
is among the low-precision run's top 5.

Measured 2026-12-02 on the shared 2-vCPU AVX-512 host under heavy load from other processes
(load average 13-20), `--models resnet18 transformer --precisions bf16 f16 --samples 16
--repeats 15 --threads 1` (medians, interleaved; ratios are what to read):
  resnet18 (224x224, random weights): fp32 339.3 ms, bf16 336.8 ms (0.99x), f16 326.7 ms (0.96x);
    bf16: max abs error 6.8e-02, max rel error 4.7e-03, top-1 agreement 100% (16/16);
    f16: 7.2e-03, 4.9e-04, top-1 93.8% (15/16; the other's fp32 margin was below the error),
    fp32's top-1 in the top 5: 100% for both.
  transformer (seq 128, hidden 256): fp32 21.6 ms, bf16 28.0 ms (1.30x), f16 28.4 ms (1.31x);
    bf16: max abs 2.0e-02, max rel 4.4e-03, top-1 (per token) 99.5%; f16: 2.4e-03, 5.1e-04, 99.9%.
An earlier run of the same command (before output layers stayed f32) gave resnet18 0.93x (bf16)
and 0.94x (f16), transformer 1.02x and 1.13x: the host's noise is about that large. Without
`vdpbf16ps` a bf16 GEMM converts each loaded bf16 to f32 (a shift) before the FMA: a 128x256x1024
GEMM + GELU kernel takes 2x its fp32 time, while convs gain from half the bytes of weights.
With the `avx512bf16-gemm` rule (`vdpbf16ps` kernels for the linear layers, [1, seq, hidden] x
[hidden, out]; the attention's batched matmuls keep the generic schedule), `--models transformer
--precisions bf16 --repeats 10 --threads 1`, run alternately with the tree before the rule
(load average 3-4): fp32 2.7 ms, bf16 3.6 ms (1.34x) against 2.3 ms, 3.5 ms (1.51x) before;
accuracy unchanged (max rel 4.4e-03, top-1 99.5%). On this host `vdpbf16ps` retires 0.45 per
cycle, below f32 FMA's rate (`benchmarks/bf16_gemm.py`), so bf16 GEMMs do not beat fp32 here.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import time_calls  # noqa: E402
from benchmarks.model_zoo import MODELS, random_inputs  # noqa: E402


def bench(name: str, args: argparse.Namespace, cache: Path) -> None:
    import dlc

    model = MODELS[name]()
    compiled = {"fp32": dlc.compile(model, threads=args.threads, cache_dir=cache)}
    for precision in args.precisions:
        compiled[precision] = dlc.compile(model, threads=args.threads, cache_dir=cache,
                                          precision=precision)
    inputs = random_inputs(model)
    arrays = list(inputs.values())
    runs = {label: (lambda m=m: m(*arrays)) for label, m in compiled.items()}
    timings = time_calls(runs, repeats=args.repeats, min_seconds=0.05)
    base_ms = timings["fp32"].median * 1e3
    line = f"{name}: latency fp32 {base_ms:.3f} ms"
    for precision in args.precisions:
        low_ms = timings[precision].median * 1e3
        line += f", {precision} {low_ms:.3f} ms ({low_ms / base_ms:.2f}x fp32)"
    print(line)
    rng = np.random.default_rng(1)
    for precision in args.precisions:
        worst_abs = worst_rel = 0.0
        agree = agree5 = 0.0
        for _ in range(args.samples):
            sample = [rng.standard_normal(a.shape).astype(a.dtype) for a in arrays]
            reference = np.asarray(compiled["fp32"](*sample), dtype=np.float64)
            got = np.asarray(compiled[precision](*sample), dtype=np.float64)
            error = float(np.abs(got - reference).max())
            worst_abs = max(worst_abs, error)
            worst_rel = max(worst_rel, error / max(float(np.abs(reference).max()), 1e-30))
            flat_ref = reference.reshape(-1, reference.shape[-1])
            flat_got = got.reshape(-1, got.shape[-1])
            top1 = flat_ref.argmax(-1)
            agree += float(np.mean(top1 == flat_got.argmax(-1)))
            top5 = np.argsort(-flat_got, axis=-1)[:, :5]
            agree5 += float(np.mean((top5 == top1[:, None]).any(-1)))
        print(f"  {precision} vs fp32 on {args.samples} random inputs: max abs error "
              f"{worst_abs:.3e}, max rel error {worst_rel:.3e}, top-1 agreement "
              f"{100 * agree / args.samples:.1f}%, fp32's top-1 in the top-5 "
              f"{100 * agree5 / args.samples:.1f}%")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["resnet18", "transformer"],
                        choices=list(MODELS))
    parser.add_argument("--precisions", nargs="+", default=["bf16"], choices=["bf16", "f16"])
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=0, help="0: all cores")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        for name in args.models:
            bench(name, args, Path(directory) / "cache")


if __name__ == "__main__":
    main()
