"""The learned cost model: predicts a point's relative throughput from loop-nest features.

Counterpart: TVM's `XGBModel` (AutoTVM, MetaSchedule): gradient-boosted trees trained online on
the trials measured so far, on features of the scheduled loop nest (here: `Space.features`:
tile factors, trip counts, parallel extent, vector width, unrolling, per-level buffer
footprints and arithmetic intensity). The regression target is throughput relative to the best
measured point (`best_cost / cost`; failed trials count as 0), so a higher prediction is better.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class CostModel(Protocol):
    """Learns from measured points; scores unmeasured ones (higher: predicted faster)."""

    def fit(self, features: Sequence[Sequence[float]], costs: Sequence[float]) -> None:
        ...

    def predict(self, features: Sequence[Sequence[float]]) -> np.ndarray:
        ...

    @property
    def trained(self) -> bool:
        ...


def _targets(costs: Sequence[float]) -> np.ndarray:
    values = np.asarray(costs, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.zeros_like(values)
    best = float(finite.min())
    return np.where(np.isfinite(values) & (values > 0), best / np.maximum(values, 1e-30), 0.0)


class XGBoostCostModel:
    """Gradient-boosted trees (xgboost) on relative throughput, retrained on every `fit`."""

    def __init__(self, rounds: int = 60, max_depth: int = 6, seed: int = 0) -> None:
        import xgboost

        self._xgb = xgboost
        self.rounds = rounds
        self.params = {
            "max_depth": max_depth,
            "eta": 0.2,
            "subsample": 0.9,
            "min_child_weight": 1,
            "objective": "reg:squarederror",
            "seed": seed,
            "nthread": 1,
            "verbosity": 0,
        }
        self._booster: object | None = None

    @property
    def trained(self) -> bool:
        return self._booster is not None

    def fit(self, features: Sequence[Sequence[float]], costs: Sequence[float]) -> None:
        if len(features) < 2:
            return
        matrix = self._xgb.DMatrix(np.asarray(features, np.float32), label=_targets(costs))
        self._booster = self._xgb.train(self.params, matrix, num_boost_round=self.rounds)

    def predict(self, features: Sequence[Sequence[float]]) -> np.ndarray:
        if self._booster is None or not len(features):
            return np.zeros(len(features))
        matrix = self._xgb.DMatrix(np.asarray(features, np.float32))
        return np.asarray(self._booster.predict(matrix))  # type: ignore[attr-defined]


class RidgeCostModel:
    """A linear model (ridge regression on the features and their squares): the fallback when
    xgboost is not installed."""

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = alpha
        self._weights: np.ndarray | None = None

    @property
    def trained(self) -> bool:
        return self._weights is not None

    @staticmethod
    def _design(features: Sequence[Sequence[float]]) -> np.ndarray:
        x = np.asarray(features, np.float64)
        return np.hstack([x, x * x, np.ones((x.shape[0], 1))])

    def fit(self, features: Sequence[Sequence[float]], costs: Sequence[float]) -> None:
        if len(features) < 2:
            return
        x = self._design(features)
        y = _targets(costs)
        gram = x.T @ x + self.alpha * np.eye(x.shape[1])
        self._weights = np.linalg.solve(gram, x.T @ y)

    def predict(self, features: Sequence[Sequence[float]]) -> np.ndarray:
        if self._weights is None or not len(features):
            return np.zeros(len(features))
        return self._design(features) @ self._weights


def xgboost_available() -> bool:
    try:
        import xgboost  # noqa: F401
    except ImportError:
        return False
    return True


def make_cost_model(kind: str = "xgb", seed: int = 0) -> CostModel:
    """`xgb` (xgboost, the default; falls back to `ridge` if xgboost is not installed) or
    `ridge`."""
    if kind == "xgb" and xgboost_available():
        return XGBoostCostModel(seed=seed)
    if kind in ("xgb", "ridge"):
        return RidgeCostModel()
    raise ValueError(f"expected a cost model 'xgb' or 'ridge', found '{kind}'")
