"""`benchmarks/int8.py`: its options and summary (no engines needed), and one end-to-end run on
the tiny models (quantize_static and quantize_dynamic by ONNX Runtime, each engine in its own
worker process) so that the benchmark cannot rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import int8

REPO = Path(__file__).resolve().parent.parent


def test_defaults_are_the_issue_models_and_all_engines() -> None:
    args = int8.parse_args([])
    assert args.models == ["resnet18", "resnet50", "mobilenet_v2", "bert_mini"]
    assert args.engines == ["dlc", "ort", "openvino"]


@pytest.mark.parametrize("argv", [["--models", "nope"], ["--engines", "dlc"],
                                  ["--calibration", "0"]])
def test_bad_options_are_rejected(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        int8.parse_args(argv)
    assert raised.value.code == 2


def test_summary_gives_ratios_and_int8_differences() -> None:
    rows = [{"model": "m", "variants": {
        "fp32": {"dlc": {"steady": 0.004}, "ort": {"steady": 0.002}},
        "int8": {"dlc": {"steady": 0.002, "vs_ort": {"within_1_step": 0.9995,
                                                     "worst_steps": 2.0}},
                 "ort": {"steady": 0.001}},
    }}, {"model": "broken", "error": "ValueError: x"}]
    text = int8.summarise(rows, ["dlc", "ort"])
    assert "| m | int8 | 1.00 | 2.00 | 2.00x | 99.95% <=1 step, worst 2.0 |" in text
    assert "| m | 0.50x | 0.50x | - |" in text
    assert "broken: ValueError: x" in text


def test_difference_counts_steps() -> None:
    import numpy as np

    got, expected = np.array([0.0, 0.5, 1.5]), np.array([0.0, 0.0, 0.0])
    assert int8.difference(got, expected, 0.5) == {"within_1_step": 2 / 3, "worst_steps": 3.0}
    assert int8.difference(got, expected + 1, None)["relative"] == 1.0


@pytest.mark.slow
def test_tiny_models_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    engines = ["dlc", "ort"]
    try:
        import openvino  # noqa: F401
        engines.append("openvino")
    except ImportError:
        pass
    done = subprocess.run(
        [sys.executable, "benchmarks/int8.py", "--models", "tiny_convnet", "tiny_encoder",
         "--engines", *engines, "--repeats", "2", "--calibration", "4",
         "--cache-dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout
    assert "failures:" not in table, table
    for row in ("| tiny_convnet | fp32 |", "| tiny_convnet | int8 |", "| tiny_encoder | int8 |",
                "| tiny_encoder | dynamic |"):
        assert row in table, table
    # dlc folds ORT's QDQ fusions the way ORT does: its int8 outputs are ORT's.
    int8_rows = [line for line in table.splitlines() if "| int8 |" in line]
    assert all("100.00% <=1 step" in line.split("|")[6] for line in int8_rows), table
