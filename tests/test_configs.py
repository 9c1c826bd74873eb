"""Every shipped config loads under the strict rules and names a quick or a full run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("yaml")

from damii_env import VARIANTS  # noqa: E402
from training.config import load_config  # noqa: E402

CONFIGS = sorted((Path(__file__).resolve().parent.parent / "configs").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_loads(path):
    config = load_config(path)
    assert config.variant in VARIANTS
    assert path.stem.startswith(config.variant)


def test_every_variant_has_a_quick_and_a_full_config():
    stems = {p.stem for p in CONFIGS}
    for variant in VARIANTS:
        for kind in ("quick", "ppo", "alphazero"):
            assert f"{variant}_{kind}" in stems
