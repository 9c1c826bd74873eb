"""The layering rule, read from the code: damii_env <- damii_agents <- damii_training <-
damii_app, no circle of imports, the web app apart from the trainers, no private module of
damii_env used outside it; docs/ARCHITECTURE.md shows the real graph (the wheel's import
names: tests/players/test_pretrained.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "docs" / "import_graph.py")
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)


def test_no_import_goes_up_a_layer_or_into_a_private_module():
    assert import_graph.violations() == []


def test_the_checker_sees_imports_inside_functions_and_relative_ones(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from damii_training.run import run_training\n"
                      "    import damii_agents.players.neural\n"
                      "    from damii_env import _kernels\n")
    found = import_graph.imports_of(source)
    assert {"damii_training.run", "damii_agents.players.neural", "damii_env._kernels"} <= found
    layer = import_graph.layer_of
    assert layer("damii_app.cli") > layer("damii_training.run") \
        > layer("damii_agents.players.neural") > layer("damii_env.engine")
    relative = ROOT / "damii_env" / "envs" / "damii_v0.py"
    assert "damii_env.aec" in import_graph.imports_of(relative)  # `from ..aec import`
    assert import_graph.module_name(ROOT / "agents" / "search" / "minimax.py") \
        == "damii_agents.search.minimax"


def test_the_checker_finds_a_circle_and_the_old_folder_names(tmp_path, monkeypatch):
    edges = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    monkeypatch.setattr(import_graph, "graph", lambda: edges)
    assert import_graph.cycles() == [["a.x", "a.y", "a.z"]]
    source = tmp_path / "old.py"
    source.write_text("from agents.registry import make_agent\n")
    assert "agents.registry" in import_graph.imports_of(source)
    assert "agents" in import_graph.FOLDER_NAMES


def test_architecture_doc_shows_the_generated_graph():
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert import_graph.markdown() in doc, "run: python docs/import_graph.py"


def _loaded_after(statement: str) -> set[str]:
    code = (f"import sys; {statement}; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_importing_a_layer_loads_nothing_above_it():
    core = _loaded_after("import damii_env, gymnasium; gymnasium.make('damii_env/Damii-v0')")
    assert not {"damii_agents", "damii_training", "damii_app", "torch"} & core  # no torch
    players = _loaded_after("import damii_agents, damii_agents.match")
    assert not {"damii_training", "damii_app", "torch"} & players
    web = _loaded_after("import damii_app.serve")
    assert "damii_training" not in web


def test_every_package_folder_is_in_the_wheel_list():
    """pyproject.toml lists the packages by hand (the folders are mapped to import names):
    a new folder with an __init__.py must be listed there, or the wheel leaves it out."""
    tomllib = pytest.importorskip("tomllib")

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    found = {import_graph.module_name(init.parent / "__init__.py")
             for folder in import_graph.FOLDERS.values()
             for init in (ROOT / folder).rglob("__init__.py")}
    # a folder of data only, installed as a package of its own (the shipped configs)
    data_only = {name for name, folder in setup["package-dir"].items()
                 if folder not in import_graph.FOLDERS.values()}
    assert data_only == {"damii_training.configs"}
    assert all(setup["package-data"].get(name) for name in data_only)
    assert found | data_only == listed
    assert {k: v for k, v in setup["package-dir"].items() if k not in data_only} == \
        {k: v for k, v in import_graph.FOLDERS.items() if k != v}
