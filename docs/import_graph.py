"""The project's import graph, read from the code (every import statement, including
those inside functions), and the layering rule it must obey.

``python docs/import_graph.py`` prints the graph and table that ``docs/ARCHITECTURE.md``
shows; ``tests/test_layers.py`` checks that the two agree and that the rule holds.

The rule: four floors, ``damii_env`` <- ``damii_agents`` <- ``damii_training`` <-
``damii_app`` (the folders ``damii_env/``, ``agents/``, ``training/`` and ``app/``). A
package imports only packages below it; the web app (``damii_app.serve``) never imports
the trainers; no module imports the folder names ``agents`` or ``training`` (they are not
import names); the modules import each other without a circle; and nothing outside
``damii_env`` imports one of its private modules (a name starting with ``_``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("damii_env", "damii_agents", "damii_training", "damii_app")
"""Packages (import names) from the bottom layer up."""
FOLDERS = {"damii_env": "damii_env", "damii_agents": "agents", "damii_training": "training",
           "damii_app": "app"}
"""The folder of each package (pyproject.toml's ``package-dir``)."""
IMPORT_NAME = {folder: name for name, folder in FOLDERS.items()}
FOLDER_NAMES = ("agents", "training", "app")
"""Folder names that are not import names: importing them is an error."""


def module_name(path: Path) -> str:
    """``agents/search/minimax.py`` -> ``damii_agents.search.minimax``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts[0] = IMPORT_NAME.get(parts[0], parts[0])
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    inside = path.resolve().is_relative_to(ROOT)
    package = module_name(path.resolve()).split(".") if inside else []
    if inside and path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            # `from pkg import module` imports a module too
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


def project_files(folders: tuple[str, ...] = tuple(FOLDERS.values())) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def project_modules() -> set[str]:
    return {module_name(p) for p in project_files()}


def graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    modules = project_modules()
    edges: dict[str, set[str]] = {}
    for path in project_files():
        name = module_name(path)
        edges[name] = {m for m in imports_of(path) if m in modules and m != name}
    return edges


def layer_of(module: str) -> int:
    top = module.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else len(LAYERS)


def cycles() -> list[list[str]]:
    """Every circle of imports between the project's modules (strongly connected
    components of more than one module, Tarjan's algorithm). A module's import of its own
    package (``from damii_env import Game`` inside ``damii_env``) is the package's
    public face, not a circle, and is left out."""
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def violations(folders: tuple[str, ...] = (*FOLDERS.values(), "tests", "benchmarks", "docs",
                                           "examples")) -> list[str]:
    """Every import that breaks the layering rule, as ``file: what``."""
    bad = []
    modules = project_modules()
    for path in project_files(folders):
        where = module_name(path)
        mine = layer_of(where)
        top = where.split(".")[0]
        for name in sorted(imports_of(path)):
            head = name.split(".")[0]
            if head in LAYERS and top in LAYERS and layer_of(name) > mine:
                bad.append(f"{path.relative_to(ROOT)}: imports {name} from a layer above")
            parts = name.split(".")
            private = any(p.startswith("_") and ".".join(parts[: i + 1]) in modules
                          for i, p in enumerate(parts))
            if head == "damii_env" and private and top != "damii_env":
                bad.append(f"{path.relative_to(ROOT)}: imports the private {name}")
            if head in FOLDER_NAMES:
                bad.append(f"{path.relative_to(ROOT)}: imports {name}, a folder name; "
                           f"the package is {FOLDERS and {v: k for k, v in FOLDERS.items()}[head]}")
            if where.startswith("damii_app.serve") and head == "damii_training":
                bad.append(f"{path.relative_to(ROOT)}: the web app imports the trainers ({name})")
    bad += [f"a circle of imports: {' -> '.join(c)}" for c in cycles()]
    return bad


def cross_layer_imports() -> dict[str, dict[str, list[str]]]:
    """Module -> {lower layer -> the modules of that layer it imports}."""
    table: dict[str, dict[str, list[str]]] = {}
    for module, targets in sorted(graph().items()):
        for target in sorted(targets):
            if layer_of(target) < layer_of(module):
                table.setdefault(module, {}).setdefault(target.split(".")[0], []).append(target)
    return table


def markdown() -> str:
    """The layers as a Mermaid graph, and a table of each module's imports from the
    layers below it (generated; ``docs/ARCHITECTURE.md`` holds a copy)."""
    lines = ["```mermaid", "flowchart BT"]
    for upper in range(len(LAYERS) - 1, 0, -1):
        for lower in range(upper - 1, -1, -1):
            lines.append(f"  {LAYERS[upper]} --> {LAYERS[lower]}")
    lines += ["```", "", "| module | imports from the layers below |", "| --- | --- |"]
    for module, below in cross_layer_imports().items():
        names = ", ".join(f"`{m}`" for layer in LAYERS for m in below.get(layer, []))
        lines.append(f"| `{module}` | {names} |")
    return "\n".join(lines)


if __name__ == "__main__":
    problems = violations()
    print(markdown())
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
