"""Every shipped config loads under the strict rules and names a quick or a full run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("yaml")

from damii_env import VARIANTS  # noqa: E402
from damii_training.config import load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = (sorted((ROOT / "configs").glob("*.yaml"))  # lab/configs: the experiments' configs
           + sorted((ROOT / "lab" / "configs").glob("*.yaml")))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_loads(path):
    """Every shipped config loads, and its file name says its variant and its kind
    (``<variant>_patterns``, ``<variant>_tdleaf...``, ``<variant>_alphazero``, else PPO)."""
    variant, _, rest = path.stem.partition("_")
    config = load_config(path, chain_overrides(path))
    kind = rest.split("_")[0]  # damii_tdleaf, damath_tdleaf_teacher: tdleaf
    assert config.algorithm == {"alphazero": "alphazero", "tdleaf": "tdleaf",
                                "patterns": "patterns"}.get(kind, "ppo")
    assert config.variant == variant and variant in VARIANTS


def test_every_variant_has_a_quick_and_a_full_config():
    stems = {p.stem for p in CONFIGS}
    for variant in VARIANTS:
        for kind in ("quick", "ppo", "alphazero", "patterns"):
            assert f"{variant}_{kind}" in stems


def chain_overrides(path: Path) -> list[str]:
    """A stage-2 config starts from the last checkpoint of another shipped config's run
    (``init_weights: runs/<its name>/checkpoints/last.pt``), which exists only once that
    run was made: check that it names one, then load the config without it. A config
    that starts from a shipped network (``agents/weights/<variant>.pt``) loads as it is."""
    import yaml

    seed = yaml.safe_load(path.read_text()).get("init_weights")
    if not seed:
        return []
    if Path(seed).parts[:2] == ("agents", "weights"):  # a shipped network: it is here
        assert (ROOT / seed).is_file(), f"{path.name}: init_weights {seed} is not shipped"
        return []
    names = {yaml.safe_load(p.read_text())["name"] for p in CONFIGS}
    parts = Path(seed).parts
    assert parts[0] == "runs" and parts[2:] == ("checkpoints", "last.pt"), seed
    assert parts[1] in names, f"{path.name}: init_weights {seed} is no shipped config's run"
    return ["init_weights="]
