"""`benchmarks/cpu_peak.py`: the int8 peak taken from measured `vpdpbusd` rates (no timing here:
the rates are given, as a Sapphire Rapids and a Zen 4 core measure them)."""

from __future__ import annotations

import pytest

from benchmarks.cpu_peak import OPS_PER_VPDPBUSD, vnni_ops_per_cycle


@pytest.mark.parametrize(("zmm", "ymm", "ops"), [
    (1.93, 1.97, 2 * OPS_PER_VPDPBUSD),  # Intel server cores: two 512-bit ports
    (1.00, 2.02, OPS_PER_VPDPBUSD),  # Zen 4: one zmm or two ymm a cycle, the same ops
    (0.98, 0.99, OPS_PER_VPDPBUSD),  # a core with one 512-bit port
    (0.52, 1.96, OPS_PER_VPDPBUSD),  # 512-bit ops split in two, ymm at full rate
    (0.49, 0.51, OPS_PER_VPDPBUSD // 2),  # half-rate zmm, and ymm no better
])
def test_the_peak_is_the_wider_rate_in_whole_half_instructions(zmm: float, ymm: float,
                                                               ops: int) -> None:
    assert vnni_ops_per_cycle(zmm, ymm) == ops
