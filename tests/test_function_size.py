"""Functions short enough to read on a screen: no plain (not numba-compiled) function of
the installed packages is over :data:`MAX_LINES` lines. Compiled kernels are exempt:
numba cannot call closures or methods cheaply, so a hot loop stays one function."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("damii_env", "agents", "training", "app")
MAX_LINES = 150


def _compiled(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated with numba's ``njit``/``jit`` (``@njit``, ``@njit(cache=True)``, ...)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit"):
            return True
    return False


def long_functions(root: Path = ROOT, limit: int = MAX_LINES) -> list[str]:
    """``path:line name (N lines)`` for every plain function longer than `limit` lines."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                        and not _compiled(node):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > limit:
                        found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} "
                                     f"({lines} lines)")
    return found


def test_no_plain_function_is_over_the_limit():
    assert long_functions() == []


def test_the_check_finds_a_long_function_and_skips_a_compiled_one(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    package = tmp_path / "damii_env"
    package.mkdir()
    (package / "mod.py").write_text(f"def long():\n{body}\n\n@njit(cache=True)\n"
                                    f"def kernel():\n{body}\n\ndef short():\n    pass\n")
    for other in PACKAGES[1:]:
        (tmp_path / other).mkdir()
    assert long_functions(tmp_path) == [f"damii_env/mod.py:1 long ({MAX_LINES + 1} lines)"]
