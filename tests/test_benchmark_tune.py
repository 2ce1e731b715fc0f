"""`benchmarks/tune.py`'s MetaSchedule peer: the row it reads from the TVM interpreter's output,
and a failure reported as an error (not fatal). The interpreter is a stand-in script here: TVM is
not a dependency (the real run is in benchmarks/metaschedule.py's docstring)."""

from __future__ import annotations

import argparse
import json
import stat
from pathlib import Path

import numpy as np
import pytest

from benchmarks.metaschedule import CONV, reference
from benchmarks.tune import metaschedule


def _interpreter(tmp_path: Path, body: str) -> str:
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def _args(python: str) -> argparse.Namespace:
    return argparse.Namespace(tvm_python=python, size=64, threads=2, trials=[16],
                              metaschedule_timeout=30.0)


def test_metaschedule_row_is_read_from_its_line(tmp_path: Path) -> None:
    row = {"task": "gemm", "at": {"16": {"trials": 16, "gflops": 40.0, "wall_s": 9.0}},
           "tune_wall_s": 9.5, "setup_s": 30.0, "timed_gflops": 38.0, "max_rel_error": 1e-7,
           "tvm": "0.27"}
    python = _interpreter(tmp_path, f"echo 'tuning...'\necho 'METASCHEDULE {json.dumps(row)}'\n")
    assert metaschedule("gemm", _args(python)) == row


def test_metaschedule_failure_is_an_error_row(tmp_path: Path) -> None:
    python = _interpreter(tmp_path, "echo 'Segmentation fault' >&2\nexit 139\n")
    row = metaschedule("conv", _args(python))
    assert row == {"error": f"{python}: Segmentation fault (exit code 139)"}


def test_conv_reference_matches_a_direct_loop() -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((1, 3, 5, 6)).astype(np.float32)
    weight = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    padded = np.pad(data.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros((1, 4, 5, 6))
    for o in range(4):
        for y in range(5):
            for x in range(6):
                expected[0, o, y, x] = max(0.0, float(
                    (padded[0, :, y:y + 3, x:x + 3] * weight[o]).sum() + bias[o]))
    np.testing.assert_allclose(reference("conv", [data, weight, bias]), expected, rtol=1e-9)
    assert CONV[1] == CONV[4] == 64 and CONV[5] == 3  # ResNet-18's layer1 conv, as dlc tunes it


def test_row_prints_ratios_to_metaschedule(capsys: pytest.CaptureFixture[str]) -> None:
    """dlc's best against MetaSchedule's at each trial count (and wall time where dlc reached
    the count); a count past the end of dlc's space says so instead of a time."""
    from benchmarks.tune import _print_row

    ms = {"at": {"64": {"trials": 64, "gflops": 40.0, "wall_s": 250.0},
                 "256": {"trials": 256, "gflops": 70.0, "wall_s": 600.0}},
          "tvm": "0.27", "timed_gflops": 50.0, "tune_wall_s": 600.0, "setup_s": 30.0}
    row = {"task": "gemm64", "flops": 1e9, "key": "k", "untuned_gflops": 1.0,
           "default_gflops": 100.0, "best_gflops@64": 150.0, "wall_s@64": 50.0,
           "best_gflops@256": 150.0, "wall_s@256": float("nan"), "trials_done": 64,
           "confirmed_gflops": 140.0, "confirmed_default_gflops": 100.0, "failed_trials": 0,
           "best_knobs": {}, "metaschedule": ms}
    _print_row(row, [64, 256])
    out = capsys.readouterr().out
    assert "256 trials: the space ran out after 64 trials" in out
    assert "64 trials     40.0 GFLOP/s in    250.0 s  dlc x3.75 in x0.20 the wall time" in out
    assert "256 trials     70.0 GFLOP/s in    600.0 s  dlc x2.14\n" in out
