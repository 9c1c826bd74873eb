"""``python benchmarks/reference.py hub``: the player of the engine issue's fixed reference
commit as a Hub engine, which ``damii eval`` plays through a ``hub:`` player (slow: it
unpacks that commit under ``runs/`` and compiles its search)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from damii_agents.players.hub import HubPlayer
from damii_env import Game

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from reference import REFERENCE_COMMIT, STRENGTH_REFERENCE_COMMIT  # noqa: E402

pytestmark = pytest.mark.slow


def _have_commit(commit: str) -> bool:
    return subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", commit],
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("commit, variant", [
    (REFERENCE_COMMIT, "damii"), (REFERENCE_COMMIT, "damath"),
    # the strength issue's reference: the players before the core was rewritten
    (STRENGTH_REFERENCE_COMMIT, "triestine")])
def test_the_reference_plays_legal_moves_from_the_start_and_mid_game(commit, variant):
    if not _have_commit(commit):
        pytest.skip(f"commit {commit} is not in this clone")
    script = ROOT / "benchmarks" / "reference.py"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} hub --commit {commit}"
    player = HubPlayer(command, variant, level={"time": 0.05}, timeout=300)
    try:
        assert player.engine_name == f"reference-{commit}"
        game = Game(variant)
        player.reset()
        for _ in range(8):  # its moves and another's, so that pos carries moves and scores
            move = player.choose(game)
            assert move in game.legal_moves()
            game.push(move)
            if game.is_over():
                break
            game.push(game.legal_moves()[-1])
            if game.is_over():
                break
    finally:
        player.close()
