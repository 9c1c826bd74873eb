"""The review's ?? marks with their searches (commit b52afd2): for each move marked ??
by the first look or by the second, the first look's values and depths (P1 the position
before, Q1 after), the second look's (PV: value, depth, move, the engine's move valued by
its position; QV), the check's (Pc, Qc: a fresh player, 2 x --time, each position on a
cleared table) and, with --truth S, a deeper search's (Pt, Qt), one JSON line a move.

    python diag.py GAMES.pdn --time 0.2 --truth 2
"""

import argparse
import json
import os
import time

from damii_agents.review import (
    analyse_game,
    build_searcher,
    move_loss,
    replay_checked,
    review_moves,
    search_position,
    searchers,
    warm_up,
)
from damii_env.pdn import read_file


def _pair(player, games, ply, played):
    player.reset()
    before = search_position(player, games[ply], ply, played=played, line_plies=1)
    player.reset()
    after = search_position(player, games[ply + 1], ply + 1, line_plies=1)
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pdn")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--time", type=float, default=0.2)
    parser.add_argument("--factor", type=float, default=2)
    parser.add_argument("--truth", type=float, default=0.0)
    args = parser.parse_args()
    print("load", os.getloadavg(), flush=True)
    t0 = time.time()
    with searchers(2) as runner:
        for n, game in enumerate(read_file(args.pdn)[:args.games], 1):
            review = analyse_game(game, None, args.time, 2, runner=runner)
            first = review_moves(game, review.positions, review.thresholds)
            second = {}
            for v in review.verified:
                second.setdefault(v.ply, v)
            games = replay_checked(game)
            check = build_searcher(review.player, review.variant, args.factor * args.time, 1)
            warm_up(check, review.variant)
            for m, f in zip(review.moves, first, strict=True):
                if "??" not in (m.mark, f.mark):
                    continue
                ply, pos = m.ply, review.positions
                p_c, q_c = _pair(check, games, ply, m.move)
                row = dict(game=n, ply=ply, move=m.move, final=m.mark, final_loss=round(m.loss),
                           first=f.mark, first_loss=round(f.loss),
                           P1=(round(pos[ply].value), pos[ply].depth, pos[ply].best),
                           Q1=(round(pos[ply + 1].value), pos[ply + 1].depth),
                           PV=((round(second[ply].value), second[ply].depth, second[ply].best,
                                second[ply].best_after) if ply in second else None),
                           QV=((round(second[ply + 1].value), second[ply + 1].depth)
                               if ply + 1 in second else None),
                           Pc=(round(p_c.value), p_c.depth, p_c.best),
                           Qc=(round(q_c.value), q_c.depth),
                           check=round(move_loss(p_c, q_c, m.move)))
                if args.truth:
                    check.time_limit = args.truth
                    p_t, q_t = _pair(check, games, ply, m.move)
                    check.time_limit = args.factor * args.time
                    row.update(Pt=(round(p_t.value), p_t.depth, p_t.best),
                               Qt=(round(q_t.value), q_t.depth),
                               truth=round(move_loss(p_t, q_t, m.move)))
                print(json.dumps(row), flush=True)
            print(f"game {n} done {time.time() - t0:.0f}s", flush=True)
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
