#!/usr/bin/env python
"""Won king endings played out: how often a player converts them against a defender.

Random positions of a given kind (White: kings only, to move; Black: fewer kings and
perhaps men), none with a capture to make, are played to their end between the two
players at equal time; the table counts White's wins, draws (by which rule) and losses.
The same seed gives the same positions, so two players can be compared on them:

    python benchmarks/endings.py --variant triestine --strong pretrained:triestine \\
        --weak 'hub:"python benchmarks/reference.py hub",time=0.1' --kinds "4,2,0;3,2,1;3,2,0"

A kind "K,k,m" is K White kings against k Black kings and m Black men (no man on the row
where it would be crowned). Results are for steering: 20 positions a kind tell a large
difference from none (lab/results/ has the figures measured with it).
"""

from __future__ import annotations

import argparse
import collections
import random
import time

from damii_agents.match.game_loop import play_game
from damii_env import Game
from damii_env.player import make_player


def ending_position(rng: random.Random, variant: str, kings: int, weak_kings: int,
                    weak_men: int) -> str:
    """A random legal position of the kind, White to move, no capture to make, not over."""
    engine = Game(variant).engine
    squares = engine.n_squares
    row = engine.rules.board_size // 2  # squares a row
    while True:
        placed = rng.sample(range(1, squares + 1), kings + weak_kings + weak_men)
        men = placed[kings + weak_kings:]
        if any(m > squares - row for m in men):  # Black's men are crowned on the last row
            continue
        white = ",".join(f"K{s}" for s in placed[:kings])
        black = ",".join([f"K{s}" for s in placed[kings:kings + weak_kings]]
                         + [str(s) for s in men])
        fen = f"W:W{white}:B{black}"
        game = Game.from_fen(fen, variant)
        if not game.is_over() and not any(m.is_capture for m in game.legal_moves()):
            return fen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="triestine")
    parser.add_argument("--strong", required=True, help="White's player (the side ahead)")
    parser.add_argument("--weak", required=True, help="Black's player (the defender)")
    parser.add_argument("--kinds", default="4,2,0;3,2,1;3,2,0",
                        help="endings, ';'-separated: White kings, Black kings, Black men")
    parser.add_argument("--positions", type=int, default=20, help="positions a kind")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    strong = make_player(args.strong, args.variant, seed=args.seed)
    weak = make_player(args.weak, args.variant, seed=args.seed)
    print(f"{args.variant}: {args.strong} (White, ahead) against {args.weak}, "
          f"{args.positions} positions a kind, seed {args.seed}")
    for kind in args.kinds.split(";"):
        kings, weak_kings, weak_men = (int(x) for x in kind.split(","))
        rng = random.Random(args.seed * 1000 + kings * 100 + weak_kings * 10 + weak_men)
        ends: collections.Counter[tuple[str, str]] = collections.Counter()
        start = time.time()
        for i in range(args.positions):
            fen = ending_position(rng, args.variant, kings, weak_kings, weak_men)
            for player in (strong, weak):
                reset = getattr(player, "reset", None)
                if callable(reset):
                    reset(seed=args.seed + i)
            end = play_game(Game.from_fen(fen, args.variant), [strong, weak])
            ends[(end.result, end.termination)] += 1
        wins = sum(n for (result, _), n in ends.items() if result == "1-0")
        losses = sum(n for (result, _), n in ends.items() if result == "0-1")
        draws = ", ".join(f"{why} {n}" for (result, why), n in sorted(ends.items())
                          if result == "1/2-1/2")
        print(f"{kings} kings against {weak_kings} kings and {weak_men} men: "
              f"won {wins}, lost {losses}, drawn {args.positions - wins - losses} "
              f"({draws or 'none'}); {time.time() - start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
