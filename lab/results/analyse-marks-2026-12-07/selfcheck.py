"""The check against itself: each move of the review's JSON (benchmarks/analyse_review.py
--json) whose loss is at least 150 searched by the check (a fresh player, 0.4 s a
position, each position on a cleared table, the position before valued by its own
search) with seeds 1 to 5; one JSON line a move (its losses by the five checks).

    python selfcheck.py international_seed0 international_seed1 ...
"""

import json
import os
import sys

from damii_agents.review import build_searcher, move_loss, replay_checked, search_position, warm_up
from damii_env.pdn import read_file


def main() -> None:
    print("load", os.getloadavg(), flush=True)
    for name in sys.argv[1:]:
        games = read_file(f"{name}.pdn")
        for r in json.load(open(f"{name}.json")):
            if r["loss"] < 150:
                continue
            positions, ply = replay_checked(games[r["game"] - 1]), r["ply"]
            losses = []
            for seed in range(1, 6):
                player = build_searcher("pretrained:international", "international", 0.4, seed)
                warm_up(player, "international")
                before = search_position(player, positions[ply], ply, played=r["move"],
                                         line_plies=1)
                player.reset()
                after = search_position(player, positions[ply + 1], ply + 1, line_plies=1)
                losses.append(round(move_loss(before, after, r["move"])))
            print(json.dumps(dict(set=name, game=r["game"], ply=ply, mark=r["mark"],
                                  loss=round(r["loss"]), truth=round(r["truth"]),
                                  checks=losses)), flush=True)
    print("load", os.getloadavg(), flush=True)


if __name__ == "__main__":
    main()
