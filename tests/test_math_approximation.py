"""math-polynomial-approximation: compiled exp, erf and tanh (vectorized, through the cpu
pipeline) agree with float64 references over their whole range: exp within 1 ulp relative from
-86.6 to the overflow, +inf above, exactly 0 below -87.4 and never a denormal, NaN kept; erf
within 3e-7 absolute (2e-7 relative below 0.5); tanh within 3.5e-7 absolute and relative, NaN
kept."""

from __future__ import annotations

import math

import numpy as np
from dlc.dialects import make_context
from xdsl.parser import Parser

import dlc

N = 4099  # not a multiple of the vector width: the tail runs the scalar code


def compiled() -> dlc.Executable:
    text = f"""
func.func @f(%x: tensor<{N}xf32>) -> (tensor<{N}xf32>, tensor<{N}xf32>) {{
  %e = graph.exp %x : tensor<{N}xf32>
  %r = graph.erf %x : tensor<{N}xf32>
  func.return %e, %r : tensor<{N}xf32>, tensor<{N}xf32>
}}"""
    return dlc.compile(Parser(make_context(), text).parse_module(), cache=False)


def test_exp_and_erf_match_float64() -> None:
    x = np.concatenate([
        np.linspace(-110, 95, 2000), np.linspace(-4, 4, N - 2003), [np.nan, np.inf, -np.inf],
    ]).astype(np.float32)
    exp, erf = compiled()(x)
    wide = x.astype(np.float64)
    with np.errstate(over="ignore"):
        exp_ref = np.exp(wide)
    normal = np.isfinite(exp_ref) & (exp_ref < np.finfo(np.float32).max) & (wide > -86.6)
    relative = np.abs(exp[normal] - exp_ref[normal]) / exp_ref[normal]
    assert relative.max() < 2**-23
    assert np.all(exp[(wide > 88.73) & np.isfinite(wide)] == np.inf)
    low = exp[wide < -86.6]
    assert np.all((low == 0.0) | (low >= np.finfo(np.float32).tiny))  # no denormal
    assert np.abs(low - exp_ref[wide < -86.6]).max() < 2.4e-38
    assert np.all(exp[wide < -87.4] == 0.0)
    assert np.isnan(exp[-3]) and exp[-2] == np.inf and exp[-1] == 0.0

    finite = np.isfinite(wide)
    erf_ref = np.array([math.erf(v) for v in wide[finite]])
    assert np.abs(erf[finite] - erf_ref).max() < 3e-7
    small = np.abs(wide[finite]) < 0.5
    nonzero = small & (erf_ref != 0)
    assert (np.abs(erf[finite][nonzero] - erf_ref[nonzero]) / np.abs(erf_ref[nonzero])).max() < 2e-7
    assert np.isnan(erf[-3]) and erf[-2] == 1.0 and erf[-1] == -1.0


def test_tanh_matches_float64() -> None:
    text = f"""
func.func @f(%x: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %t = graph.tanh %x : tensor<{N}xf32>
  func.return %t : tensor<{N}xf32>
}}"""
    tanh = dlc.compile(Parser(make_context(), text).parse_module(), cache=False)
    x = np.concatenate([
        np.linspace(-20, 20, 2000), np.linspace(-0.01, 0.01, N - 2004),
        [0.0, np.nan, np.inf, -np.inf],
    ]).astype(np.float32)
    got = tanh(x)
    reference = np.tanh(x.astype(np.float64))
    finite = np.isfinite(x)
    error = np.abs(got[finite] - reference[finite])
    assert error.max() < 3.5e-7
    nonzero = finite & (reference != 0)
    assert (np.abs(got[nonzero] - reference[nonzero]) / np.abs(reference[nonzero])).max() < 3.5e-7
    assert got[-4] == 0.0 and np.isnan(got[-3]) and got[-2] == 1.0 and got[-1] == -1.0
