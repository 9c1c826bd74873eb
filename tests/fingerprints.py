"""Fingerprints of games and searches from fixed seeds, in all four variants: the proof that
a change left behaviour unchanged. ``tests/test_fingerprints.py`` (``slow``, run by CI)
compares them with the record ``tests/data/fingerprints.json``; a change that is meant to
alter behaviour records them again and says so in its commit.

Every player here is limited by depth or nodes, never by time, so the same code gives the
same fingerprints on any machine and under any load. What is recorded:

- searches: from positions reached by seeded random play, the move, value, depth and
  nodes of the alpha-beta (handwritten and learned evaluation) and of ``pretrained:V``;
- games: whole games between fixed pairs of players (random, greedy, alpha-beta, the
  shipped network's policy and its own search), their moves and result, each hashed;
- a match through ``damii eval`` (ballots, seats, workers, PDN): the PDN's hash;
- the learned evaluation's training: a small seeded self-play and fit (with and without
  king regions), the hash of the positions and of the fitted tables' bytes.

    python -m tests.fingerprints --out now.json --compare tests/data/fingerprints.json
    python -m tests.fingerprints --out tests/data/fingerprints.json   # record anew
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from damii_env import Game
from damii_env.player import make_player

VARIANTS = ("damii", "international", "triestine", "damath")
POSITIONS = 6
"""Search positions a variant, reached by seeded random play."""
MAX_PLIES = 160
"""Moves of a fingerprinted game at the most (then its moves so far are hashed)."""


def _digest(items: Any) -> str:
    return hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()[:16]


def positions(variant: str, count: int, seed: int) -> list[str]:
    """FENs of `count` positions from seeded random play (6 to 40 moves in)."""
    rng = np.random.default_rng(seed)
    fens = []
    while len(fens) < count:
        game = Game(variant)
        for _ in range(int(rng.integers(6, 40))):
            moves = game.legal_moves()
            if not moves or game.is_over():
                break
            game.push(moves[int(rng.integers(len(moves)))])
        if not game.is_over():
            fens.append(game.fen())
    return fens


def search_prints(variant: str) -> dict[str, Any]:
    """Move, value, depth and nodes of depth- or node-limited searches."""
    specs = ("alphabeta:depth=5", "alphabeta:depth=5,eval=learned",
             f"pretrained:{variant},depth=4", f"pretrained:{variant},nodes=20000")
    out: dict[str, Any] = {}
    for spec in specs:
        rows = []
        for i, fen in enumerate(positions(variant, POSITIONS, seed=11)):
            player = make_player(spec, variant, seed=i)
            game = Game.from_fen(fen, variant)
            move = player.choose(game)
            rows.append([str(move), round(float(getattr(player, "last_value", 0.0)), 6),
                         int(getattr(player, "last_depth", 0)),
                         int(getattr(player, "nodes", 0))])
        out[spec] = rows
    return out


def play(variant: str, white: str, black: str, seed: int) -> dict[str, Any]:
    """One game between two specs from the start; its moves' hash and its result."""
    players = [make_player(white, variant, seed=seed), make_player(black, variant, seed=seed + 1)]
    for p in players:
        if hasattr(p, "reset"):
            p.reset(seed)
    game = Game(variant)
    moves = []
    while not game.is_over() and len(moves) < MAX_PLIES:
        move = players[game.turn].choose(game)
        game.push(move)
        moves.append(str(move))
    return {"moves": len(moves), "hash": _digest(moves),
            "result": game.result() if game.is_over() else "*"}


def game_prints(variant: str) -> dict[str, Any]:
    pairs = (("random", "greedy"), ("greedy", "alphabeta:depth=2"),
             ("alphabeta:depth=3", "alphabeta:depth=2,eval=learned"),
             (f"pretrained:{variant},net=policy", f"pretrained:{variant},net=search,depth=1"),
             (f"pretrained:{variant},depth=3", "alphabeta:depth=3"))
    return {f"{w} vs {b}": play(variant, w, b, seed=5) for w, b in pairs}


def eval_print(variant: str) -> dict[str, Any]:
    """A 4-game match through ``damii eval`` (2 workers): the hash of its PDN's moves."""
    with tempfile.TemporaryDirectory() as folder:
        cmd = [sys.executable, "-m", "damii_app.cli", "eval", "--variant", variant,
               "alphabeta:depth=2", f"pretrained:{variant},depth=2", "greedy",
               "--games", "2", "--clock", "none", "--seed", "3", "--workers", "2",
               "--out", folder, "--no-progress"]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        pdn = next(Path(folder).glob("*.pdn")).read_text()
        # the move text only: headers carry dates and the players' timings
        moves = [line for line in pdn.splitlines() if line and not line.startswith("[")]
        results = [line for line in pdn.splitlines() if line.startswith("[Result")]
        return {"pdn_moves": _digest(moves), "results": results}


def fit_print(variant: str) -> dict[str, Any]:
    """40 self-play games at depth 1 and a 2-epoch fit of their positions, with and without
    king regions (``damii_training.patterns``): the hashes of the positions and of the
    fitted tables' bytes, and the learning curve."""
    from damii_training import patterns as P
    from damii_training.config import config_from_dict

    prints: dict[str, Any] = {}
    data = None
    for kings in (False, True):
        config = config_from_dict({"algorithm": "patterns", "variant": variant, "seed": 4,
                                   "patterns": {"games": 40, "depth": 1, "eval_games": 0,
                                                "epochs": 2, "pattern_lr": 1.0,
                                                "king_regions": kings}})
        if data is None:
            data, _ = P.generate(config, seed=4, progress=False)
            prints["positions"] = hashlib.sha256(b"".join(
                np.ascontiguousarray(getattr(data, name)).tobytes()
                for name in ("pattern", "occupied", "dense", "label", "game")
            )).hexdigest()[:16]
        weights, curve = P.fit(data, config, progress=False)
        tables = [np.ascontiguousarray(a).tobytes() for a in
                  (weights.pattern, weights.square, weights.dense, weights.square_end,
                   weights.dense_end, weights.kings) if a is not None]
        prints[f"kings={kings}"] = {"tables": hashlib.sha256(b"".join(tables)).hexdigest()[:16],
                                    "held_out": [round(x, 12) for x in curve["held_out"]]}
    return prints


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--compare", help="an earlier run's JSON: list every difference")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS))
    args = parser.parse_args(argv)
    prints: dict[str, Any] = {}
    for variant in args.variants:
        prints[variant] = {"searches": search_prints(variant), "games": game_prints(variant),
                           "eval": eval_print(variant), "fit": fit_print(variant)}
        print(f"{variant}: done", flush=True)
    Path(args.out).write_text(json.dumps(prints, indent=1, sort_keys=True) + "\n")
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        differences = [(v, part, key) for v in prints for part in prints[v]
                       for key in set(prints[v][part]) | set(before.get(v, {}).get(part, {}))
                       if prints[v][part].get(key) != before.get(v, {}).get(part, {}).get(key)]
        for v, part, key in differences:
            print(f"DIFFERS {v} {part} {key}")
        print(f"{len(differences)} differences")
        return 1 if differences else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
