"""Functions and files short enough to read: no plain function of the installed packages is
over :data:`MAX_LINES` lines, no compiled (numba) function over :data:`MAX_COMPILED_LINES`
(a hot loop is split into helpers inlined into it), and no file of the rules core
(``damii_env``) over :data:`MAX_FILE_LINES`."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("damii_env", "agents", "training", "app")
MAX_LINES = 150
MAX_COMPILED_LINES = 120
MAX_FILE_LINES = 1000


def _compiled(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated with numba's ``njit``/``jit`` (``@njit``, ``@njit(cache=True)``, ...)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit"):
            return True
    return False


def long_functions(root: Path = ROOT, limit: int = MAX_LINES,
                   compiled_limit: int = MAX_COMPILED_LINES) -> list[str]:
    """``path:line name (N lines)`` for every plain function longer than `limit` lines and
    every compiled one longer than `compiled_limit`."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > (compiled_limit if _compiled(node) else limit):
                        found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} "
                                     f"({lines} lines)")
    return found


def test_no_plain_function_is_over_the_limit():
    assert long_functions() == []


def test_no_file_of_the_rules_core_is_over_the_limit():
    long_files = [f"{p.relative_to(ROOT)} ({n} lines)"
                  for p in sorted((ROOT / "damii_env").rglob("*.py"))
                  if (n := len(p.read_text().splitlines())) > MAX_FILE_LINES]
    assert long_files == []


def test_the_check_finds_a_long_function_and_a_long_compiled_one(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    package = tmp_path / "damii_env"
    package.mkdir()
    (package / "mod.py").write_text(f"def long():\n{body}\n\n@njit(cache=True)\n"
                                    f"def kernel():\n{body}\n\ndef short():\n    pass\n")
    for other in PACKAGES[1:]:
        (tmp_path / other).mkdir()
    assert long_functions(tmp_path) == [
        f"damii_env/mod.py:1 long ({MAX_LINES + 1} lines)",
        f"damii_env/mod.py:{MAX_LINES + 5} kernel ({MAX_LINES + 1} lines)"]
