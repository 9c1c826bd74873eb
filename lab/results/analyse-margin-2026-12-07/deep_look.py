"""The position after a move (and the position before it) searched on a cleared table for
longer and longer: does a deeper search find the forced result the review's second look
reported? (fresh_international_seed5.pdn, game 7, ply 80.)

    python deep_look.py fresh_international_seed5.pdn 7 80 1,3,8
"""

import os
import sys

from damii_agents.review import build_searcher, replay_checked, search_position, warm_up
from damii_env.pdn import read_file


def main() -> None:
    print("load", os.getloadavg(), flush=True)
    game = read_file(sys.argv[1])[int(sys.argv[2]) - 1]
    ply = int(sys.argv[3])
    games = replay_checked(game)
    for seconds in (float(x) for x in sys.argv[4].split(",")):
        player = build_searcher("pretrained:international", "international", seconds, 0)
        warm_up(player, "international")
        for p in (ply, ply + 1):
            player.reset()
            found = search_position(player, games[p], p, line_plies=1)
            print(f"{seconds:g} s, ply {p}: value {found.value:.0f} (for the side to move) "
                  f"depth {found.depth} best {found.best}", flush=True)
    print("load", os.getloadavg(), flush=True)


if __name__ == "__main__":
    main()
