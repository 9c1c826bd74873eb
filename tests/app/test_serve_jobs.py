"""The search workers' jobs: a seat's game is kept between jobs and played on by the new
moves; whatever the moves say, the position searched is the one a full replay reaches."""

from __future__ import annotations

import random

from damii_agents.match.game_loop import Referee, Reply
from damii_agents.registry import PlayerSpec
from damii_app.serve import jobs
from damii_app.serve.jobs import AgentJob, AgentReply, rebuild, run_job
from damii_env import Game

DEPTH_1, DEPTH_3 = PlayerSpec.parse("alphabeta:depth=1"), PlayerSpec.parse("alphabeta:depth=3")


def random_moves(variant: str, plies: int, seed: int) -> tuple[str, ...]:
    rng = random.Random(seed)
    game = Game(variant)
    for _ in range(plies):
        if game.is_over():
            break
        game.push(rng.choice(game.legal_moves()))
    return tuple(str(m) for m in game.move_stack)


def test_kept_game_equals_a_replay_through_moves_takebacks_and_other_slots() -> None:
    jobs._GAMES.clear()
    moves = random_moves("damii", 40, seed=3)
    # played on move by move, then a take-back (a shorter, diverging list), then forward again
    sequence = [moves[:n] for n in (0, 1, 2, 6, 7, 20)] + [moves[:18], moves[:30], moves[:40]]
    for seen in sequence:
        job = AgentJob(DEPTH_1, "damii", (), None, seen, "g1:1")
        game = jobs._game(job)
        assert game.fen() == rebuild("damii", {}, None, seen).fen()
        assert [str(m) for m in game.move_stack] == list(seen)
    # another slot, and the same slot for another variant, never see this game
    other = random_moves("international", 5, seed=4)
    assert jobs._game(AgentJob(DEPTH_1, "international", (), None, other,
                               "g1:1")).fen() == rebuild("international", {}, None, other).fen()
    assert jobs._game(AgentJob(DEPTH_1, "damii", (), None, moves[:3],
                               "g2:0")).fen() == rebuild("damii", {}, None, moves[:3]).fen()


def test_the_agent_cannot_change_the_kept_game() -> None:
    jobs._GAMES.clear()
    moves = random_moves("damii", 10, seed=5)
    job = AgentJob(DEPTH_1, "damii", (), None, moves, "g3:0")
    given = jobs._game(job)
    given.push(given.legal_moves()[0])
    assert jobs._game(job).fen() == rebuild("damii", {}, None, moves).fen()


def test_a_job_answers_the_same_move_with_and_without_the_kept_game() -> None:
    moves = random_moves("damii", 24, seed=6)
    answers = []
    for keep in (False, True):
        jobs._GAMES.clear()
        jobs._AGENTS.clear()
        if keep:  # the game is kept from the job two plies before
            run_job(AgentJob(DEPTH_3, "damii", (), None, moves[:-2], "g4:0"))
            jobs._AGENTS.clear()  # a fresh agent both times: only the game differs
        answers.append(run_job(AgentJob(DEPTH_3, "damii", (), None, moves, "g4:0")))
    assert answers[0].error is None
    assert answers[0].move == answers[1].move


def test_an_agents_reply_is_applied_by_the_referee_as_any_players() -> None:
    """The pool's AgentReply is a Reply: Referee.apply plays it, the one path for the web
    app's games, its arena and play_game."""
    move = str(Game("damii").legal_moves()[0])
    assert isinstance(AgentReply(move=move), Reply)
    referee = Referee.start("damii")
    assert referee.apply(AgentReply(move=move, offers_draw=True)) is None
    assert referee.draw_offer == 0  # no answer now: the offer stands after the move
    declined = Referee.start("damii")
    assert declined.apply(Reply(move=move, offers_draw=True), lambda: False) is None
    assert declined.draw_offer is None and len(declined.game.move_stack) == 1
    agreed = Referee.start("damii")
    assert agreed.apply(Reply(move=move, offers_draw=True), lambda: True).termination \
        == "agreed draw"
    assert not agreed.game.move_stack  # the move of an accepted offer is not played
    assert Referee.start("damii").apply(AgentReply(move="1-2")).termination == \
        "illegal move 1-2"
    assert Referee.start("damii").apply(AgentReply(resign=True)).result == "0-1"


def test_a_light_reply_does_not_wait_for_the_searches_that_hold_every_worker() -> None:
    """Issue 63's pressure: a depth-2 reply (3 ms) waited 0.3-0.5 s (p95) for one of the
    two workers to end a 0.5 s search (traced at 19:00 UTC, the 110 sessions' and the
    tournaments' searches on both). The server's pool has a light lane: a worker process
    that runs only light tasks, at the server's priority; the others run at a lower one
    (:data:`~damii_app.serve.jobs.WORKER_NICE`)."""
    import os
    import time

    pool = jobs.make_pool(1, deadline=60.0)
    try:
        assert pool.lane_started(120)
        busy = pool.submit(time.sleep, 4.0, share="a")  # holds the one worker
        time.sleep(0.5)
        start = time.perf_counter()
        assert pool.submit(abs, -3, share="b", light=True).result(60) == 3
        waited = time.perf_counter() - start
        assert not busy.done() and waited < 2.0, f"the light task waited {waited:.1f} s"
        # the lane takes no other task: a second plain one waits for the worker
        second = pool.submit(abs, -4, share="c")
        assert not second.done() and second.result(60) == 4 and busy.done()
        (worker,), lane = pool.pids(), pool.lane_pid()  # both started (their nice set)
        assert lane is not None and lane != worker
        own = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, worker) == min(19, own + jobs.WORKER_NICE)
        assert os.getpriority(os.PRIO_PROCESS, lane) == own
    finally:
        pool.shutdown()


def test_the_light_lanes_queue_gives_it_light_tasks_only() -> None:
    from concurrent.futures import Future

    queue = jobs.FairQueue(1)
    plain = jobs._Task(Future(), abs, 1, share="a")
    light = jobs._Task(Future(), abs, 2, share="b", light=True)
    queue.put(plain)
    queue.put(light)
    assert queue.get(light_only=True) is light
    assert queue.get() is plain
