"""The second look's forced win that no other search sees (fresh_international_seed5.pdn,
game 7, ply 80: 46-41): the position after the move searched 0.4 s on a cleared table,
then again after the position before it (and the engine's move's position) was searched
on the same table, as the review's second look does (:func:`run_search_job`).

    python warm_mate.py fresh_international_seed5.pdn 7 80
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
    player = build_searcher("pretrained:international", "international", 0.4, 0)
    warm_up(player, "international")
    from damii_agents.review import SearchJob, run_search_job
    from damii_env.pdn import dumps

    job = SearchJob(dumps([game]), (ply, ply + 1), "international", "pretrained:international",
                    0.4, 0, judged=(ply,))
    for trial in range(3):  # the review's second look itself (a fresh table each time)
        found = run_search_job(job)
        print(f"second look {trial}: " + "; ".join(
            f"ply {p.ply} value {p.value:.0f} depth {p.depth} best {p.best}" for p in found),
            flush=True)
        import damii_agents.review as review
        review._WORKER.player.reset()
    for trial in range(3):
        player.reset()
        cold = search_position(player, games[ply + 1], ply + 1, line_plies=1)
        player.reset()
        before = search_position(player, games[ply], ply, line_plies=1)
        child = games[ply].copy()
        child.push(before.best)
        search_position(player, child, ply + 1, line_plies=1)  # the engine's move's position
        warm = search_position(player, games[ply + 1], ply + 1, line_plies=1)
        print(f"trial {trial}: after the move, cold table {cold.value:.0f} (depth {cold.depth});"
              f" warm from the position before {warm.value:.0f} (depth {warm.depth})",
              flush=True)
    print("load", os.getloadavg(), flush=True)


if __name__ == "__main__":
    main()
