"""`dlc quantize`: post-training static int8 quantization of an ONNX model into QDQ ONNX.

    dlc quantize model.onnx --calibration data.npz|DIR -o model.int8.onnx
                 [--method minmax|percentile|entropy] [--percentile P] [--per-tensor]
                 [--keep-float NODE ...] [--runner dlc|onnxruntime] [--no-report]
                 [--no-bias-correction]

The calibration data is an .npz holding each model input (one sample, or N stacked on a leading
axis), or a directory of such files. The per-layer error report (float vs quantized output of
each quantized layer on the calibration data, worst first) is printed on stdout. The output is a
standard QDQ model: `dlc compile` / `dlc.compile` run it with integer kernels, ONNX Runtime runs
it too. The `dlc` tool calls `add_quantize_subcommand(subparsers)`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dlc.runtime.files import write_atomically
from dlc.tools.diagnostics import ToolError


def add_quantize_subcommand(subparsers: Any) -> argparse.ArgumentParser:
    """Adds `quantize` to a `dlc` argument parser's subparsers."""
    parser = subparsers.add_parser(
        "quantize", help="post-training int8 quantization into a QDQ ONNX model",
        description="Calibrate activation ranges on sample inputs and write a QDQ int8 model.")
    parser.add_argument("model", type=Path, help="the float ONNX model")
    parser.add_argument("--calibration", required=True, type=Path,
                        help="an .npz of model inputs (one sample or N stacked) or a "
                             "directory of .npz files")
    parser.add_argument("-o", "--output", type=Path,
                        help="the quantized model (default: <model>.int8.onnx)")
    parser.add_argument("--method", choices=["minmax", "percentile", "entropy"],
                        default="minmax", help="calibration method (default minmax)")
    parser.add_argument("--percentile", type=float, default=99.999,
                        help="the percentile kept by --method percentile (99.999)")
    parser.add_argument("--per-tensor", action="store_true",
                        help="one weight scale per tensor instead of per output channel")
    parser.add_argument("--keep-float", nargs="+", default=[], metavar="NODE",
                        help="names of nodes to leave in float")
    parser.add_argument("--runner", choices=["dlc", "onnxruntime"], default="dlc",
                        help="what runs the float and quantized models (default dlc)")
    parser.add_argument("--no-report", action="store_true",
                        help="skip the per-layer error report")
    parser.add_argument("--no-bias-correction", action="store_true",
                        help="keep the biases as they are (by default each absorbs the mean "
                             "error of its layer's int8 weights on the calibration data)")
    return parser


def quantize_command(args: argparse.Namespace) -> None:
    """Runs `dlc quantize`."""
    from dlc.quantization import QuantizationError, quantize

    if not args.model.is_file():
        raise ToolError(f"{args.model}: no such file")
    output = args.output or args.model.with_suffix(".int8.onnx")
    try:
        result = quantize(args.model, args.calibration, method=args.method,
                          percentile=args.percentile, per_channel=not args.per_tensor,
                          keep_float=args.keep_float, runner=args.runner,
                          report=not args.no_report,
                          bias_correction=not args.no_bias_correction)
    except QuantizationError as e:
        raise ToolError(str(e)) from None
    write_atomically(output, result.model.SerializeToString())
    if not args.no_report:
        print(result.report())
    print(f"wrote {output}")
