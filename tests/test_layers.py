"""The layering rule, read from the code: damii_env <- agents <- training, and no
private module of damii_env used outside it; docs/ARCHITECTURE.md shows the real graph."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "docs" / "import_graph.py")
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)


def test_no_import_goes_up_a_layer_or_into_a_private_module():
    assert import_graph.violations() == []


def test_the_checker_sees_imports_inside_functions_and_relative_ones(tmp_path):
    source = tmp_path / "mod.py"
    source.write_text("def f():\n    from training.run import run_training\n"
                      "    import agents.neural\n    from damii_env import _kernels\n")
    found = import_graph.imports_of(source)
    assert {"training.run", "agents.neural", "damii_env._kernels"} <= found
    assert import_graph.layer_of("training.run") > import_graph.layer_of("agents.neural") \
        > import_graph.layer_of("damii_env.engine")
    relative = ROOT / "agents" / "neural.py"
    assert "agents.network" in import_graph.imports_of(relative)  # `from .network import`


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
    assert not {"agents", "training", "torch"} & core  # the core works without torch
    players = _loaded_after("import agents")
    assert "training" not in players and "torch" not in players
