"""The public API is listed in one place, docs/API.md, and a name leaves it only through a
deprecation (issue 60, N3/R11).

- every name docs/API.md lists imports from its module;
- every module's ``__all__`` is listed there (a new public name is listed);
- every name of 0.1.0 (below, from the release's code) is still listed or deprecated;
- a deprecated name still works and warns, naming its replacement and the version it goes;
- the version is one figure: pyproject.toml, ``damii_env.__version__`` and the CHANGELOG's
  newest entry agree.
"""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "docs" / "API.md"

NAMES_OF_0_1_0 = {
    # damii_env.__all__, damii_agents.__all__, the registry's functions and the names
    # damii_agents.base defined at 0.1.0 (commit 37a3aee, the README of which named
    # make_agent); base.Agent has its own test below
    "damii_env": ["DamiiError", "DraughtsEnv", "DraughtsVectorEnv", "Engine", "Game",
                  "GameOverError", "IllegalActionError", "IllegalMoveError", "InvalidFenError",
                  "InvalidOptionError", "EndReason", "Move", "OpponentError", "Outcome",
                  "OutcomeCode", "PRESETS", "Player", "PlayerSpecError", "Rules", "State",
                  "UnknownVariantError", "VARIANTS", "env", "envs", "make_player",
                  "make_rules", "raw_env", "perft"],
    "damii_env.pdn": ["PdnError", "PdnGame", "dumps", "loads", "read_file", "record",
                      "write_file", "parse_rule_options", "rule_options_text"],
    "damii_agents": ["Agent", "AgentSpecError", "BaseAgent", "GreedyAgent", "RandomAgent",
                     "make_agent", "parse_spec"],
    "damii_agents.registry": ["AgentSpecError", "make_agent", "parse_spec", "player_kinds",
                              "pretrained_names", "pretrained_path"],
    "damii_agents.base": ["Abandon", "BaseAgent", "OfferDraw", "Resign"],
    "damii_agents.match": ["CLOCK_PRESETS", "SAFETY_TURN_LIMIT", "Clock", "GameEnd",
                           "GameResult", "GameTask", "MatchConfig", "MatchResult",
                           "MoveCallback", "PairingStats", "anchor_index", "ballots",
                           "default_out_dir", "game_options", "play_game", "player_names",
                           "reports", "run_match", "schedule"],
}

NEEDS_TORCH = ("damii_training",)


def listed() -> dict[str, list[str]]:
    """docs/API.md's modules (``## `module` ``) and the names in their bullet lines."""
    names: dict[str, list[str]] = {}
    module = None
    for line in API.read_text().splitlines():
        if heading := re.fullmatch(r"## `([\w.]+)`", line):
            module = heading.group(1)
            names[module] = []
        elif line.startswith("## "):
            module = None
        elif module is not None and re.match(r"\s*- |\s+`", line):
            bullet = line.split(":")[0]  # the names, before what they are
            names[module] += re.findall(r"`(\w+)`", bullet)
    return names


def deprecated() -> dict[str, list[str]]:
    """docs/API.md's "Deprecated" table: module -> old names."""
    text = API.read_text().split("## Deprecated", 1)[1]
    names: dict[str, list[str]] = {}
    for row in text.splitlines():
        if row.startswith("| `"):
            for dotted in re.findall(r"`([\w.]+)`", row.split("|")[1]):
                module, _, name = dotted.rpartition(".")
                names.setdefault(module, []).append(name)
    return names


def test_the_page_lists_modules_and_names():
    modules = listed()
    assert len(modules) >= 15 and all(modules.values()), modules
    assert "make_player" in modules["damii_env"] and "PlayerSpec" in modules["damii_agents"]
    assert deprecated()["damii_agents"] == ["make_agent", "AgentSpecError", "parse_spec",
                                            "Agent"]


@pytest.mark.parametrize("module", sorted(listed()))
def test_every_listed_name_imports(module):
    if module.startswith(NEEDS_TORCH):
        pytest.importorskip("torch")
    mod = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # a listed name is no old one
        missing = [name for name in listed()[module] if not hasattr(mod, name)]
    assert not missing, f"docs/API.md lists {module}.{missing}, which it does not have: " \
                        f"deprecate it (docs/API.md, 'Deprecated') before it goes"


@pytest.mark.parametrize("module", sorted(listed()))
def test_every_name_in_all_is_listed(module):
    if module.startswith(NEEDS_TORCH):
        pytest.importorskip("torch")
    exported = getattr(importlib.import_module(module), "__all__", [])
    unlisted = sorted(set(exported) - set(listed()[module]))
    assert not unlisted, f"{module}.__all__ has {unlisted}, which docs/API.md does not list"


@pytest.mark.parametrize("module", sorted(NAMES_OF_0_1_0))
def test_no_name_of_0_1_0_is_gone_without_a_deprecation(module):
    kept = set(listed().get(module, [])) | set(deprecated().get(module, []))
    gone = [name for name in NAMES_OF_0_1_0[module] if name not in kept]
    assert not gone, f"{module}.{gone} of 0.1.0 are neither listed nor deprecated"


@pytest.mark.parametrize("dotted", [f"{m}.{n}" for m, names in deprecated().items()
                                    for n in names])
def test_a_deprecated_name_works_and_names_its_replacement(dotted):
    module, _, name = dotted.rpartition(".")
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(dotted)} is deprecated since "
                                                 rf"damii-env 0\.2\.0 and goes in 0\.3\.0: "
                                                 rf"use \S+"):
        value = getattr(mod, name)
    with pytest.warns(DeprecationWarning):  # `from damii_agents import make_agent` too
        exec(f"from {module} import {name} as imported", namespace := {})
    assert namespace["imported"] is value


def test_the_deprecated_names_behave_as_in_0_1_0():
    from damii_agents.players.alphabeta import AlphaBetaAgent
    from damii_env import Player, PlayerSpecError

    with pytest.warns(DeprecationWarning):
        from damii_agents import Agent, AgentSpecError, make_agent, parse_spec
    assert isinstance(make_agent("alphabeta:depth=2", variant="damii"), AlphaBetaAgent)
    assert parse_spec("alphabeta:depth=3,time=0.5") == \
        ("alphabeta", {"depth": "3", "time": "0.5"})
    assert AgentSpecError is PlayerSpecError and Agent is Player
    with pytest.raises(AgentSpecError, match="unknown agent 'chess'"):
        make_agent("chess")


def test_an_unknown_name_is_still_an_attribute_error():
    import damii_agents
    import damii_agents.registry

    for mod in (damii_agents, damii_agents.registry):
        with pytest.raises(AttributeError, match="has no attribute 'nosuch'"):
            mod.nosuch  # noqa: B018
    with pytest.raises(AttributeError):  # the registry only imported Agent, from base
        damii_agents.registry.Agent  # noqa: B018


def test_the_0_1_0_names_import_from_both_modules_with_a_warning_naming_the_replacement():
    """`from damii_agents import X` and `from damii_agents.registry import X`, as 0.1.0's
    code and docs wrote them (issue 60, N3): each warns once, naming what to use."""
    for module, names in (("damii_agents", ("make_agent", "Agent", "AgentSpecError",
                                            "parse_spec")),
                          ("damii_agents.registry", ("make_agent", "AgentSpecError",
                                                     "parse_spec"))):
        for name in names:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                exec(f"from {module} import {name}", {})
            # a package's from-import asks for the name twice (Python's import machinery,
            # then the import): the same warning at the same line, which the default
            # filters show once
            found = [w for w in caught if issubclass(w.category, DeprecationWarning)]
            assert found and {(w.filename, w.lineno) for w in found} == {("<string>", 1)}
            [text] = {str(w.message) for w in found}  # at the importer's line
            assert text.startswith(f"{module}.{name} is deprecated"), text
            replacement = {"make_agent": "damii_env.make_player(spec, variant)",
                           "Agent": "damii_env.Player", "AgentSpecError":
                           "damii_env.PlayerSpecError", "parse_spec": "PlayerSpec.parse(spec)"}
            assert f"use {replacement[name]}" in text, text


def test_the_base_modules_agent_of_0_1_0_still_imports_with_a_warning():
    from damii_env import Player

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from damii_agents.base import Agent
    assert Agent is Player
    assert any(re.match(r"damii_agents\.base\.Agent is deprecated since damii-env 0\.2\.0 "
                        r"and goes in 0\.3\.0: use damii_env\.Player", str(w.message))
               and issubclass(w.category, DeprecationWarning) for w in caught)


def test_the_version_is_one_figure():
    import damii_env

    # the [project] table's version line (tomllib is Python 3.11+; the project runs on 3.10)
    version = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(),
                        flags=re.M)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    newest = re.search(r"^## \[?(\d+\.\d+\.\d+)\]?", changelog, flags=re.M)
    assert newest is not None, "CHANGELOG.md has no '## 0.x.y' entry"
    assert version is not None
    assert version.group(1) == damii_env.__version__ == newest.group(1) == "0.2.0"
    assert re.search(r"^## \[?0\.1\.0\]?", changelog, flags=re.M), \
        "0.1.0's entry is missing"
