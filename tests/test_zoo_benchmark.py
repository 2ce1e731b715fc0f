"""`benchmarks/zoo.py`: its model list and options (no torch needed), its summary table, and,
when torch and the engines are installed, one small model end to end in worker processes."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import zoo

REPO = Path(__file__).resolve().parent.parent

ISSUE_ARCHITECTURES = {
    "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "shufflenet_v2", "squeezenet",
    "densenet121", "regnet_y_400mf", "convnext_tiny", "resnet18", "resnet50", "vit_tiny",
    "deeplabv3", "dcgan", "unet", "quartznet", "bert_mini", "gpt_block", "yolo",
}


def test_zoo_lists_the_architectures_without_importing_torch() -> None:
    done = subprocess.run(
        [sys.executable, "-c",
         "import sys; from benchmarks import zoo; assert len(zoo.ZOO) >= 16; "
         "assert 'torch' not in sys.modules, 'the list imported torch'"],
        cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert ISSUE_ARCHITECTURES <= set(zoo.ZOO)
    assert all(name == model.name for name, model in zoo.ZOO.items())


def test_list_option_prints_every_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert zoo.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(zoo.ZOO)


def test_options_default_to_two_threads_all_engines_and_alternating_rounds() -> None:
    args = zoo.parse_args([])
    assert args.threads == 2 and args.rounds == 2
    assert args.engines == ["dlc", "ort", "openvino"]
    assert args.models == list(zoo.ZOO)
    args = zoo.parse_args(["--models", "resnet18", "dcgan", "--engines", "dlc", "ort"])
    assert args.models == ["resnet18", "dcgan"] and args.engines == ["dlc", "ort"]


@pytest.mark.parametrize("argv", [
    ["--models", "no_such_model"], ["--threads", "0"], ["--engines", "dlc"],
    ["--worker", "dlc"],
])
def test_bad_options_are_rejected(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        zoo.parse_args(argv)
    assert raised.value.code == 2


def test_relative_error_flags_shape_and_non_finite_differences() -> None:
    expected = np.array([1.0, -4.0, 2.0], np.float32)
    assert zoo.relative_error(expected + np.float32(0.004), expected) == pytest.approx(1e-3,
                                                                                       rel=1e-3)
    assert zoo.relative_error(expected[:2], expected) == math.inf
    assert zoo.relative_error(np.array([1.0, np.nan, 2.0], np.float32), expected) == math.inf
    masked = np.array([-np.inf, 1.0], np.float32)  # a causal mask's -inf agrees with itself
    assert zoo.relative_error(masked, masked) == 0.0


def test_summary_gives_ratios_geometric_means_and_failures() -> None:
    rows = [
        {"model": "a", "engines": {
            "ort": {"compile": 0.1, "steady": 0.010, "periodic": 0.020, "cpu": 0.02},
            "dlc": {"compile": 3.0, "steady": 0.005, "periodic": 0.010, "cpu": 0.01,
                    "error_vs_ort": 1e-6}}},
        {"model": "b", "engines": {
            "ort": {"compile": 0.1, "steady": 0.010, "periodic": 0.010, "cpu": 0.02},
            "dlc": {"compile": 2.0, "steady": 0.020, "periodic": 0.040, "cpu": 0.02,
                    "error_vs_ort": 0.5}}},
        {"model": "c", "engines": {"ort": {"steady": 0.01, "periodic": 0.01},
                                   "dlc": {"error": "CompileError: no converter for Mod"}}},
        {"model": "d", "error": "export: RuntimeError: boom"},
    ]
    text = zoo.summarise(rows, ["dlc", "ort"])
    assert "| a | 10.00 | 20.00 | 0.50 / 0.50 / 0.50 | 3.0 | 1.0e-06 |" in text
    assert "| b | 10.00 | 10.00 | 2.00 / 4.00 / 1.00 | 2.0 | 5.0e-01 |" in text
    assert ("geometric mean dlc/ort over 2 models: steady 1.00x, periodic 1.41x, cpu 0.71x"
            in text)
    assert "b (dlc): mismatch, max rel err 5.00e-01" in text
    assert "c (dlc): CompileError: no converter for Mod" in text
    assert "d: export: RuntimeError: boom" in text


def _installed(*names: str) -> bool:
    return all(importlib.util.find_spec(name) is not None for name in names)


@pytest.mark.slow
@pytest.mark.skipif(not _installed("torch", "torchvision", "onnxruntime"),
                    reason="the zoo extra (torch, torchvision) is not installed")
def test_dcgan_runs_end_to_end_and_matches_onnxruntime(tmp_path: Path) -> None:
    """Exports the DCGAN generator, measures dlc and ONNX Runtime in their own processes, and
    checks that dlc's output matches (the figures themselves are not checked: timing)."""
    rows_file = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/zoo.py", "--models", "dcgan", "--engines", "dlc", "ort",
         "--rounds", "1", "--repeats", "2", "--cache-dir", str(tmp_path / "cache"),
         "--json", str(rows_file)],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    import json

    (row,) = json.loads(rows_file.read_text())
    dlc_row = row["engines"]["dlc"]
    assert "error" not in dlc_row, dlc_row
    assert dlc_row["error_vs_ort"] <= zoo.RELATIVE_TOLERANCE
    assert dlc_row["compile"] > 0 and dlc_row["steady"] > 0 and dlc_row["periodic"] > 0
    assert (tmp_path / "cache" / "onnx" / "dcgan.onnx").exists()
    assert "geometric mean dlc/ort over 1 models" in done.stdout
