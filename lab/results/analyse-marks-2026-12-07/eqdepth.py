"""The moves of selfcheck.json judged at one depth: the position before searched S
seconds (a fresh player, cleared table) to depth d, the position after the move played
then searched to depth d - 1 on the same table, the loss the difference of the two moves'
values at the root's depth d (equal depths, where the check compares a value at d with
one at the depth the position after reaches in its own time). S = 0.4 and 2.

    python eqdepth.py        # beside selfcheck.json and the games' PDNs
"""

import json
import os

from damii_agents.review import build_searcher, replay_checked, search_position, warm_up
from damii_env.pdn import read_file


def equal_depth(player, positions, ply, move, seconds):
    player.reset()
    player.depth, player.time_limit = None, seconds
    before = search_position(player, positions[ply], ply, played=move, line_plies=1)
    if before.best == move:
        return 0, before.depth, before.depth
    player.depth, player.time_limit = max(1, before.depth - 1), None
    after = search_position(player, positions[ply + 1], ply + 1, line_plies=1)
    return round(before.value + after.value), before.depth, after.depth


def main() -> None:
    print("load", os.getloadavg())
    for r in json.load(open("selfcheck.json")):
        positions = replay_checked(read_file(f"{r['set']}.pdn")[r["game"] - 1])
        ply = r["ply"]
        move = str(positions[ply + 1].move_stack[-1])
        player = build_searcher("pretrained:international", "international", 0.4, 1)
        warm_up(player, "international")
        print(r["set"][-5:], r["game"], ply, r["mark"], "review", r["loss"], "checks",
              r["checks"], "truth", r["truth"], "eq0.4",
              equal_depth(player, positions, ply, move, 0.4), "eq2",
              equal_depth(player, positions, ply, move, 2.0), flush=True)
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
