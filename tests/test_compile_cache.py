"""Where the compiled code is cached, and the cache the packages ship
(``damii_env/compile_cache.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import damii_agents  # noqa: F401  (registers its package)
import damii_training  # noqa: F401
from damii_env import compile_cache


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("DAMII_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    environment.update(env)
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                          text=True, timeout=600)


def test_each_package_ships_the_cache_of_its_current_sources():
    """A change to a compiled source file changes its package's stamp (and its callers'):
    the shipped cache must then be made again, or every new user compiles for minutes."""
    for name, folder in compile_cache.registered_packages().items():
        shipped = folder / compile_cache.SHIPPED_FOLDER
        expected = f"{name}-{compile_cache.package_stamp(name)}"
        found = sorted(p.name for p in shipped.iterdir()) if shipped.is_dir() else []
        assert found == [expected], (
            f"{name} ships {found}, its sources need {expected}: run `damii compile --ship`")
        assert (shipped / expected / compile_cache.MACHINE_FILE).is_file()


def test_a_callee_changed_gives_its_callers_a_new_stamp(tmp_path):
    """The stamp of a package covers its files and those of the packages registered before
    it (whose functions and constants its own compile in): a change in a lower one changes
    both stamps, a change in the upper one only its own."""
    code = """
import json, sys
from pathlib import Path
from damii_env import compile_cache as cc
low, high = Path(sys.argv[1]), Path(sys.argv[2])
cc.register_package("low_pkg", low)
cc.register_package("high_pkg", high)
print(json.dumps([cc.package_stamp("low_pkg"), cc.package_stamp("high_pkg")]))
"""
    low, high = tmp_path / "low", tmp_path / "high"
    for folder in (low, high):
        folder.mkdir()
        (folder / "k.py").write_text("@njit(cache=True)\ndef f():\n    return 1\n")

    def stamps() -> list[str]:
        out = subprocess.run([sys.executable, "-c", code, str(low), str(high)],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    before = stamps()
    (low / "k.py").write_text("@njit(cache=True)\ndef f():\n    return 2\n")
    after = stamps()
    assert after[0] != before[0] and after[1] != before[1]
    (high / "constants.py").write_text("X = 1\n")
    again = stamps()
    assert again[0] == after[0] and again[1] != after[1]
    (low / compile_cache.SHIPPED_FOLDER).mkdir()
    (low / compile_cache.SHIPPED_FOLDER / "x.py").write_text("")  # the shipped cache: no
    assert stamps() == again


def test_a_home_that_cannot_be_written_falls_back_without_an_error(tmp_path):
    """Where the cache folder cannot be made (a read-only or missing home), the command
    still works: the cache goes to the temporary directory (the probe's H21)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = _python("from damii_env import compile_cache as cc; print(cc.cache_root())",
                     XDG_CACHE_HOME=str(blocker / "cache"), HOME=str(blocker))
    assert result.returncode == 0, result.stderr
    assert "no locator available" not in result.stderr
    root = Path(result.stdout.strip())
    assert not str(root).startswith(str(blocker)) and root.is_dir()


def test_the_shipped_cache_is_used_where_the_machine_matches(tmp_path):
    """With an empty cache folder, the first environment step and the first searched move
    load the shipped code: nothing of the engine or the search is compiled."""
    if compile_cache.shipped_machine("damii_env") != compile_cache.machine():
        pytest.skip("the shipped cache was compiled for another processor")
    code = """
import numpy as np
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
import damii_env
from damii_env import Game, make_player
env = damii_env.env(variant="damii")
env.reset(seed=1)
obs = env.last()[0]
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
game = Game("international")
game.push(make_player("pretrained:international,depth=2", "international").choose(game))
print("compiled:", compiled)
"""
    result = _python(code, DAMII_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "compiled: []"
    assert "compiling" not in result.stderr
