"""Agent searches off the event loop: jobs that rebuild a game from its moves and ask a
player (built from its spec and kept between moves) for a move or a hook's answer.

A job carries only plain data (the spec, the variant and options, the start FEN and the
moves), so it runs the same in a thread or in a worker process. The server uses a pool
of worker processes by default: the compiled alpha-beta search holds Python's global
interpreter lock while it runs, so a search in a thread of the server process would
stall every other page for its duration.
"""

from __future__ import annotations

import os
import sys
import time
from collections import OrderedDict
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from threading import Lock
from typing import Any

from damii_env import Game
from damii_env.player import Player, make_player

HOOKS = ("wants_resign", "offers_draw", "accepts_draw")


@dataclass(frozen=True)
class AgentJob:
    """One question to an agent about one position."""

    spec: str
    """The player spec (checkpoint paths already checked and made absolute)."""
    variant: str
    options: tuple[tuple[str, Any], ...]
    """Rule options of the game, as sorted (key, value) pairs."""
    start_fen: str | None
    moves: tuple[str, ...]
    slot: str
    """Which game and seat the agent plays: the same slot gets the same agent object."""
    seed: int | None = None
    hook: str | None = None
    """None: play a move (and say whether to resign or offer a draw first); else the name
    of one of :data:`HOOKS` to answer."""


@dataclass
class AgentReply:
    """What an agent answered: its move (PDN), the seconds it thought, its hooks."""

    move: str | None = None
    seconds: float = 0.0
    resign: bool = False
    offers_draw: bool = False
    answer: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


_AGENTS: OrderedDict[tuple, Player] = OrderedDict()
_AGENTS_LOCK = Lock()
MAX_AGENTS = 8
"""Agents kept per process (least recently used ones are dropped)."""


def _agent(job: AgentJob) -> Player:
    key = (job.slot, job.spec, job.variant, job.options)
    with _AGENTS_LOCK:
        agent = _AGENTS.pop(key, None)
        if agent is None:
            agent = make_player(job.spec, job.variant, seed=job.seed, **dict(job.options))
            reset = getattr(agent, "reset", None)
            if callable(reset):
                reset(job.seed)
        _AGENTS[key] = agent
        while len(_AGENTS) > MAX_AGENTS:
            _AGENTS.popitem(last=False)
    return agent


def rebuild(variant: str, options: dict[str, Any], start_fen: str | None,
            moves: tuple[str, ...] | list[str]) -> Game:
    """The game that `moves` reach from `start_fen` (None: the start position)."""
    game = Game.from_fen(start_fen, variant, **options) if start_fen else Game(variant, **options)
    for text in moves:
        game.push(text)
    return game


def _ask(agent: Player, hook: str, game: Game) -> bool:
    fn = getattr(agent, hook, None)
    return bool(fn(game)) if callable(fn) else False


def run_job(job: AgentJob) -> AgentReply:
    """Answer one job (in a worker process or a thread); errors come back as text."""
    try:
        game = rebuild(job.variant, dict(job.options), job.start_fen, job.moves)
        agent = _agent(job)
        if job.hook is not None:
            if job.hook not in HOOKS:
                return AgentReply(error=f"unknown hook {job.hook!r}")
            return AgentReply(answer=_ask(agent, job.hook, game))
        if _ask(agent, "wants_resign", game):
            return AgentReply(resign=True)
        offers = _ask(agent, "offers_draw", game)
        start = time.perf_counter()
        move = agent.choose(game)
        seconds = time.perf_counter() - start
        return AgentReply(move=str(game.parse_move(move)), seconds=seconds, offers_draw=offers)
    except Exception as exc:  # noqa: BLE001 - reported to the page, the server goes on
        return AgentReply(error=f"{type(exc).__name__}: {exc}")


def _init_worker() -> None:
    """A worker process: one thread for numba and torch (the pool is the parallelism)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    import numba

    numba.set_num_threads(1)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def make_pool(workers: int) -> Executor:
    """`workers` worker processes, or (0) a few threads of this process (tests, debugging)."""
    if workers <= 0:
        return ThreadPoolExecutor(max_workers=4, thread_name_prefix="damii-search")
    return ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"),
                               initializer=_init_worker)
