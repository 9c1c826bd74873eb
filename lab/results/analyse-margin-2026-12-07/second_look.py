"""One move's first and second looks as the review makes them (``analyse_game``, 0.2 s a
position, one worker: the player's table carries every search of the game before the
second look): the first searches of its two positions, then the second look's. With
``--cleared``, the player's table is cleared before each second-look job (an experiment:
the review keeps it warm).

    python second_look.py fresh_international_seed5.pdn 7 80 2   # game 7, ply 80, twice
    python second_look.py fresh_international_seed5.pdn 7 80 2 --cleared
"""

import os
import sys

import damii_agents.review as review
from damii_agents.review import analyse_game, review_moves
from damii_env.pdn import read_file


def cleared_first(job):
    """run_search_job, the worker's table cleared first where the job is a second look."""
    if job.judged and getattr(review._WORKER, "player", None) is not None:
        review._WORKER.player.reset()
    return review.run_search_job(job)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    cleared = "--cleared" in sys.argv
    game = read_file(args[0])[int(args[1]) - 1]
    ply = int(args[2])
    print("load", os.getloadavg(), "cleared" if cleared else "warm", flush=True)
    for attempt in range(int(args[3]) if len(args) > 3 else 1):
        runner = (lambda jobs: map(cleared_first, jobs)) if cleared else None
        r = analyse_game(game, seconds=0.2, workers=1, runner=runner)
        first = review_moves(game, r.positions, r.thresholds)[ply]
        m = r.moves[ply]
        print("attempt", attempt, "first", round(first.loss), "final", round(m.loss), m.mark,
              "move", m.move, "best", m.best, flush=True)
        for p in r.positions[ply:ply + 2]:
            print("  first look", p.ply, p.turn, round(p.value), p.depth, p.best)
        for p in r.verified:
            if p.ply in (ply, ply + 1):
                print("  second look", p.ply, p.turn, round(p.value), p.depth, p.best,
                      None if p.best_after is None else round(p.best_after))


if __name__ == "__main__":
    main()
