"""Every example in a docstring of the four packages runs and shows what it says."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"damii_env": "damii_env", "agents": "damii_agents", "training": "damii_training",
            "app": "damii_app"}
"""Folder -> import name (pyproject.toml's package-dir)."""
MODULES = sorted(
    ".".join((PACKAGES[folder], *p.relative_to(ROOT / folder).with_suffix("").parts)
             ).removesuffix(".__init__")
    for folder in PACKAGES
    for p in (ROOT / folder).rglob("*.py")
    if ">>>" in p.read_text(encoding="utf-8")
)


def test_the_packages_have_examples():
    assert {"damii_env.engine", "damii_env.game", "damii_env.compiled", "damii_env.player",
            "damii_agents.seats"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
