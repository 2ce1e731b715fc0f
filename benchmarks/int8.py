"""fp32 against int8 latency in dlc, ONNX Runtime and OpenVINO on the same quantized ONNX models.

Run: `python3 benchmarks/int8.py [--models resnet18 resnet50 mobilenet_v2 bert_mini]
[--engines dlc ort openvino] [--calibration 16] [--threads 2] [--repeats 15] [--cache-dir DIR]
[--json results.json]`.

Each model is the zoo's (benchmarks/zoo.py: torchvision ResNet-18, ResNet-50 and MobileNetV2,
and a 4-layer BERT encoder from transformers, random weights, nothing downloaded), or one of two
tiny models for the smoke test (`tiny_convnet`, `tiny_encoder`, built with onnx.helper). Its
fp32 ONNX file is quantized once by ONNX Runtime's `quantize_static` (QDQ format, per-channel
int8 weights, uint8 activations, min-max calibration on `--calibration` seeded random inputs);
the same QDQ file is fed to all three engines (OpenVINO runs QDQ models directly, its
low-precision transformations turning the Q/DQ pairs into int8 kernels). The transformer models
are also quantized by `quantize_dynamic` (int8 weights, activations quantized at run time by
`DynamicQuantizeLinear`, `MatMulInteger`).

Every (model, variant, engine) is timed alone in its own process by benchmarks/zoo.py's worker,
once ("one run"; engines in the order given), as BASELINES.md asks: the median latency of back-to-
back calls on the same seeded input, and (a second table) the median CPU time of all threads per
call, the steadier figure when other processes load the machine. The table gives ONNX Runtime's
milliseconds and the other engines' ratios to it, then each engine's int8/fp32 ratio, and the
difference of dlc's and OpenVINO's int8 output from ONNX Runtime's int8 output in quantization
steps of the model's last DequantizeLinear (or relative to the output's range where the output is
not quantized).

Installing the engines and model libraries: the `zoo` extra (README.md, "Benchmarks").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import zoo  # noqa: E402

VARIANTS = ("fp32", "int8", "dynamic")
"""fp32: the exported model; int8: ORT's `quantize_static` QDQ model; dynamic: ORT's
`quantize_dynamic` model (transformers only)."""

TRANSFORMERS = ("bert_mini", "tiny_encoder")
"""The models that also get a `quantize_dynamic` variant."""


def _tiny_convnet() -> Any:
    from benchmarks.quantize import small_convnet

    return small_convnet(image=16)


def _tiny_encoder() -> Any:
    from benchmarks.model_zoo import transformer_block

    return transformer_block(seq=16, hidden=64, heads=4, mlp=128)


TINY: dict[str, Callable[[], Any]] = {"tiny_convnet": _tiny_convnet, "tiny_encoder": _tiny_encoder}
"""Small ONNX models (no torch) for the smoke test."""

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "bert_mini", *TINY)
"""Every model the benchmark knows; the default run takes the first four."""


def float_model(name: str, directory: Path) -> Path:
    """The fp32 ONNX file of `name` under `directory` (exported or built on the first call)."""
    if name in TINY:
        import onnx

        path = directory / f"{name}.onnx"
        if not path.exists():
            directory.mkdir(parents=True, exist_ok=True)
            onnx.save(TINY[name](), path)
        return path
    return zoo.export(zoo.ZOO[name], directory)


class _Reader:
    """ONNX Runtime's CalibrationDataReader over seeded random inputs (zoo.inputs_of)."""

    def __init__(self, path: Path, count: int) -> None:
        self.samples = iter([zoo.inputs_of(path, seed=100 + index) for index in range(count)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.samples, None)

    def rewind(self) -> None:  # newer ORT versions call it; one pass is all quantize_static needs
        pass


def quantized_models(name: str, path: Path, calibration: int) -> dict[str, Path]:
    """{variant: ONNX file}: the fp32 file and ORT's quantized ones beside it (made once)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    files = {"fp32": path}
    static = path.with_name(f"{path.stem}.qdq{calibration}.onnx")
    if not static.exists():
        partial = static.with_suffix(".partial.onnx")
        quantize_static(str(path), str(partial), _Reader(path, calibration),
                        quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        partial.replace(static)
    files["int8"] = static
    if name in TRANSFORMERS:
        dynamic = path.with_name(f"{path.stem}.dynamic.onnx")
        if not dynamic.exists():
            partial = dynamic.with_suffix(".partial.onnx")
            quantize_dynamic(str(path), str(partial), weight_type=QuantType.QInt8)
            partial.replace(dynamic)
        files["dynamic"] = dynamic
    return files


def output_step(path: Path) -> float | None:
    """The (per-tensor) scale of the DequantizeLinear that writes the model's first output."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    output = model.graph.output[0].name
    initializers = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == output:
            scale = initializers.get(node.input[1])
            if scale is not None:
                return float(numpy_helper.to_array(scale).reshape(-1)[0])
    return None


def difference(got: np.ndarray, expected: np.ndarray, step: float | None) -> dict[str, float]:
    """How far `got` is from `expected`: with a step, the share of elements within 1 step and
    the worst steps; without, the worst difference relative to max |expected|."""
    if got.shape != expected.shape:
        return {"relative": math.inf}
    delta = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    if step is not None:
        steps = delta / step
        return {"within_1_step": float(np.mean(steps <= 1 + 1e-3)),
                "worst_steps": float(steps.max(initial=0.0))}
    return {"relative": zoo.relative_error(got, expected)}


def bench_model(name: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One model's rows: per variant and engine the steady median seconds (or an error), and
    the int8 outputs' difference from ONNX Runtime's."""
    row: dict[str, Any] = {"model": name, "variants": {}}
    try:
        files = quantized_models(name, float_model(name, Path(args.cache_dir) / "onnx"),
                                 args.calibration)
    except Exception as e:  # noqa: BLE001 - an export or quantizer failure is the model's row
        row["error"] = f"{type(e).__name__}: {e}"[:400]
        return row
    for variant, path in files.items():
        entries: dict[str, Any] = {}
        outputs: dict[str, Path] = {}
        for engine in args.engines:
            output = work / f"{name}-{variant}-{engine}.npy"
            result = zoo._run_worker(engine, path, output, work / f"{name}-{variant}-cache",
                                     args)
            entries[engine] = result
            if "error" not in result:
                outputs[engine] = output
        if "ort" in outputs:
            expected = np.load(outputs["ort"])
            step = output_step(path)
            for engine, output in outputs.items():
                if engine != "ort":
                    entries[engine]["vs_ort"] = difference(np.load(output), expected, step)
        row["variants"][variant] = entries
    return row


def _ms(entry: dict[str, Any] | None, metric: str = "steady") -> str:
    if not entry or metric not in entry:
        return "FAILED" if entry else "-"
    return f"{entry[metric] * 1e3:.2f}"


def _ratio(entry: dict[str, Any] | None, base: dict[str, Any] | None, metric: str = "steady"
           ) -> str:
    if not entry or not base or metric not in entry or metric not in base:
        return "-"
    return f"{entry[metric] / base[metric]:.2f}x"


def _vs_ort(entry: dict[str, Any] | None) -> str:
    figures = (entry or {}).get("vs_ort")
    if not figures:
        return "-"
    if "worst_steps" in figures:
        return f"{figures['within_1_step']:.2%} <=1 step, worst {figures['worst_steps']:.1f}"
    return f"rel {figures['relative']:.1e}"


def summarise(rows: list[dict[str, Any]], engines: list[str], metric: str = "steady") -> str:
    """Two tables of `metric` (`steady`: the median wall time of back-to-back calls; `cpu`: the
    CPU time of all threads per call, the steadier measure on a loaded machine): per variant
    (ORT in ms, the others also as ratios to ORT on the same file) with the error against
    ORT, and each engine's int8/fp32 (and dynamic/fp32) ratio."""
    others = [engine for engine in engines if engine != "ort"]
    lines = [f"{metric} (ms):", "| model | variant | ort ms | " + " | ".join(
        f"{e} ms | {e}/ort | {e} vs ort output" for e in others) + " |"]
    lines.append("|" + " --- |" * (3 + 3 * len(others)))
    failures: list[str] = []
    for row in rows:
        if "error" in row:
            failures.append(f"{row['model']}: {row['error']}")
            continue
        for variant, entries in row["variants"].items():
            ort = entries.get("ort")
            cells = [row["model"], variant, _ms(ort, metric)]
            for engine in others:
                entry = entries.get(engine)
                cells += [_ms(entry, metric), _ratio(entry, ort, metric), _vs_ort(entry)]
            lines.append("| " + " | ".join(cells) + " |")
            for engine, entry in entries.items():
                if "error" in entry:
                    failures.append(f"{row['model']} {variant} ({engine}): {entry['error']}")
    lines += ["", "| model | " + " | ".join(f"{e} int8/fp32" for e in engines)
              + " | dlc dynamic/fp32 |", "|" + " --- |" * (2 + len(engines))]
    for row in rows:
        if "error" in row:
            continue
        variants = row["variants"]
        fp32 = variants.get("fp32", {})
        cells = [row["model"]] + [_ratio(variants.get("int8", {}).get(e), fp32.get(e), metric)
                                  for e in engines]
        cells.append(_ratio(variants.get("dynamic", {}).get("dlc"), fp32.get("dlc"), metric))
        lines.append("| " + " | ".join(cells) + " |")
    if failures:
        lines.append("failures:")
        lines += [f"  {failure}" for failure in failures]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS[:4]), choices=list(MODELS),
                        metavar="MODEL", help=f"models to run (default: {' '.join(MODELS[:4])};"
                        f" all: {' '.join(MODELS)})")
    parser.add_argument("--engines", nargs="+", default=list(zoo.ENGINES),
                        choices=list(zoo.ENGINES))
    parser.add_argument("--calibration", type=int, default=16,
                        help="random calibration samples for quantize_static")
    parser.add_argument("--threads", type=int, default=2, help="threads per engine")
    parser.add_argument("--repeats", type=int, default=15, help="timed samples per process")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds one engine's process may take")
    parser.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "dlc-zoo"),
                        help="where exported and quantized ONNX files are kept between runs")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.repeats < 1 or args.calibration < 1:
        parser.error("expected --threads, --repeats and --calibration of at least 1")
    if "ort" not in args.engines:
        parser.error("expected ort among --engines: it is the reference")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="dlc-int8-") as directory:
        for name in args.models:
            start = time.perf_counter()
            row = bench_model(name, args, Path(directory))
            rows.append(row)
            print(f"{name}: {json.dumps(row)} ({time.perf_counter() - start:.0f} s)", flush=True)
    print(summarise(rows, args.engines))
    print(summarise(rows, args.engines, "cpu"))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
