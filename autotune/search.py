"""Search strategies: which points of a space to measure next (random, grid, evolutionary).

Counterpart: AutoTVM's `RandomTuner` / `GridSearchTuner` / `XGBTuner` and MetaSchedule's
`EvolutionarySearch`. A strategy proposes batches of valid, not yet measured points (invalid
ones are rejected by `Space.check` before anything is built and never cost a trial) and is told
the measured costs (`inf` for a failed trial).

`EvolutionarySearch` trains a cost model (xgboost) online on the measurements, evolves a
population (the best measured points plus random ones) for a few generations by mutation and
crossover, ranks the offspring by predicted throughput, and fills each batch with the best
predicted points except for a fraction `epsilon` of random ones (epsilon-greedy exploration).
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence

import numpy as np
from dlc.autotune.cost_model import CostModel, make_cost_model
from dlc.autotune.space import Point, Space


class SearchStrategy(ABC):
    """The bookkeeping every strategy shares: measured points and the best so far."""

    name = "search"

    def __init__(self, space: Space, seed: int = 0) -> None:
        self.space = space
        self.rng = random.Random(seed)
        self.measured: dict[Point, float] = {}
        self.fenced: set[Point] = set()
        self.rejected = 0
        default = space.default_point()
        self._seeds: list[Point] = [default] if default is not None else []

    @property
    def best(self) -> tuple[Point, float] | None:
        finite = [(p, c) for p, c in self.measured.items() if math.isfinite(c)]
        return min(finite, key=lambda pc: pc[1]) if finite else None

    def update(self, points: Sequence[Point], costs: Sequence[float]) -> None:
        for point, cost in zip(points, costs, strict=True):
            previous = self.measured.get(point, math.inf)
            self.measured[point] = min(previous, cost)

    def fence(self, point: Point) -> None:
        """Never proposes `point` again in this run (it computed a wrong result)."""
        self.fenced.add(point)

    def propose(self, n: int) -> list[Point]:
        """Up to `n` new valid points: the space's default point first (the search starts
        from the default schedule), then the strategy's own."""
        taken: set[Point] = set()
        seeds = [p for p in self._seeds[:n] if self._is_new_valid(p, taken)]
        self._seeds = []
        taken.update(seeds)
        return seeds + self._propose(n - len(seeds), taken) if n > len(seeds) else seeds

    @abstractmethod
    def _propose(self, n: int, taken: set[Point]) -> list[Point]:
        raise NotImplementedError

    def _is_new_valid(self, point: Point, taken: set[Point]) -> bool:
        if point in self.measured or point in taken or point in self.fenced:
            return False
        if self.space.check(point) is not None:
            self.rejected += 1
            return False
        return True

    def _random_new(self, n: int, taken: set[Point], tries: int = 5000) -> list[Point]:
        found: list[Point] = []
        for _ in range(tries):
            if len(found) >= n:
                break
            point = self.space.random_point(self.rng)
            if self._is_new_valid(point, taken):
                taken.add(point)
                found.append(point)
        return found


class RandomSearch(SearchStrategy):
    """Uniformly random valid points, each measured once."""

    name = "random"

    def _propose(self, n: int, taken: set[Point]) -> list[Point]:
        return self._random_new(n, taken)


class GridSearch(SearchStrategy):
    """Every valid point in order (`Space.grid`), each measured once."""

    name = "grid"

    def __init__(self, space: Space, seed: int = 0) -> None:
        super().__init__(space, seed)
        self._points: Iterator[Point] = space.grid()

    def _propose(self, n: int, taken: set[Point]) -> list[Point]:
        found: list[Point] = []
        for point in self._points:
            if self._is_new_valid(point, taken):
                taken.add(point)
                found.append(point)
                if len(found) >= n:
                    break
        return found


class EvolutionarySearch(SearchStrategy):
    """Evolutionary search guided by a cost model trained online (see the module docstring).

    Args:
        population: points evolved per generation.
        generations: rounds of mutation/crossover per batch.
        epsilon: fraction of each batch drawn at random (exploration).
        warmup: measurements (successful or not) before the model is used; until then, random.
    """

    name = "evolutionary"

    def __init__(
        self,
        space: Space,
        cost_model: CostModel | None = None,
        seed: int = 0,
        population: int = 128,
        generations: int = 4,
        epsilon: float = 0.1,
        warmup: int = 8,
        mutation_prob: float = 0.85,
    ) -> None:
        super().__init__(space, seed)
        self.model = cost_model if cost_model is not None else make_cost_model(seed=seed)
        self.population = population
        self.generations = generations
        self.epsilon = epsilon
        self.warmup = warmup
        self.mutation_prob = mutation_prob
        self._features: dict[Point, list[float]] = {}

    def _feature(self, point: Point) -> list[float]:
        found = self._features.get(point)
        if found is None:
            found = self.space.features(point)
            self._features[point] = found
        return found

    def update(self, points: Sequence[Point], costs: Sequence[float]) -> None:
        super().update(points, costs)
        if len(self.measured) >= 2:
            known = list(self.measured)
            self.model.fit([self._feature(p) for p in known], [self.measured[p] for p in known])

    def _scores(self, points: Sequence[Point]) -> np.ndarray:
        return self.model.predict([self._feature(p) for p in points])

    def _propose(self, n: int, taken: set[Point]) -> list[Point]:
        if len(self.measured) < self.warmup or not self.model.trained:
            return self._random_new(n, taken)
        explore = sum(1 for _ in range(n) if self.rng.random() < self.epsilon)
        chosen = self._evolve(n - explore, taken)
        chosen += self._random_new(n - len(chosen), taken)
        return chosen

    def _initial_population(self) -> list[Point]:
        ranked = sorted(
            (p for p, c in self.measured.items() if math.isfinite(c)), key=self.measured.__getitem__
        )
        seeds = ranked[: self.population // 2]
        seeds += self._random_new(self.population - len(seeds), set(seeds))
        return seeds

    def _evolve(self, n: int, taken: set[Point]) -> list[Point]:
        """The `n` best predicted new points after `generations` of evolution."""
        if n <= 0:
            return []
        population = self._initial_population()
        if not population:
            return []
        scored: dict[Point, float] = {}
        scores = self._scores(population)
        for point, score in zip(population, scores, strict=True):
            scored[point] = float(score)
        for _ in range(self.generations):
            weights = np.asarray([max(scored[p], 0.0) + 1e-3 for p in population])
            weights = weights / weights.sum()
            children: list[Point] = []
            for _ in range(self.population * 2):
                if len(children) >= self.population:
                    break
                a = population[int(np.searchsorted(np.cumsum(weights), self.rng.random()))
                               % len(population)]
                if self.rng.random() < self.mutation_prob:
                    child = self.space.mutate(a, self.rng)
                else:
                    b = population[self.rng.randrange(len(population))]
                    child = self.space.crossover(a, b, self.rng)
                if child in scored or self.space.check(child) is not None:
                    continue
                children.append(child)
            if children:
                for point, score in zip(children, self._scores(children), strict=True):
                    scored[point] = float(score)
            population = sorted(scored, key=scored.__getitem__, reverse=True)[: self.population]
        ranked = sorted(scored, key=scored.__getitem__, reverse=True)
        found: list[Point] = []
        for point in ranked:
            if len(found) >= n:
                break
            if self._is_new_valid(point, taken):
                taken.add(point)
                found.append(point)
        return found


def make_strategy(name: str, space: Space, seed: int = 0, **options: object) -> SearchStrategy:
    """A strategy by name: `random`, `grid` or `evolutionary` (options go to its constructor)."""
    if name == "random":
        return RandomSearch(space, seed)
    if name == "grid":
        return GridSearch(space, seed)
    if name == "evolutionary":
        return EvolutionarySearch(space, seed=seed, **options)  # type: ignore[arg-type]
    raise ValueError(f"expected a search 'random', 'grid' or 'evolutionary', found '{name}'")
