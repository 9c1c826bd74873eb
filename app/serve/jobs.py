"""Agent searches off the event loop: jobs that rebuild a game from its moves and ask a
player (built from its spec and kept between moves) for a move or a hook's answer.

A job carries only plain data (the spec, the variant and options, the start FEN and the
moves), so it runs the same in a thread or in a worker process. The server uses a
:class:`SearchPool` of worker processes by default: the compiled alpha-beta search holds
Python's global interpreter lock while it runs, so a search in a thread of the server
process would stall every other page for its duration. Each job has a deadline: a worker
that overruns it, or whose game has gone (:meth:`SearchPool.cancel`), is killed and
replaced, and :meth:`SearchPool.shutdown` ends every worker.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from threading import Lock
from typing import Any

from damii_agents.match.game_loop import Reply, ask
from damii_agents.match.worker import single_threaded
from damii_env import Game
from damii_env.player import Player, make_player

HOOKS = ("wants_resign", "offers_draw", "accepts_draw")
START_SECONDS = 120.0
"""Seconds a fresh worker process may take to start (imports, first compiles)."""
JOB_DEADLINE = 60.0
"""Seconds a job may take before its worker is killed and replaced (the server's caps on
search time keep a fair job well inside it, even on a loaded machine)."""


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


@dataclass(frozen=True)
class AgentReply(Reply):
    """What an agent answered: a :class:`~damii_agents.match.game_loop.Reply` (its move as
    PDN, the seconds it thought, whether it resigns or offers a draw) for the referee, or
    its answer to a hook, or what went wrong."""

    move: str | None = None
    seconds: float = 0.0
    answer: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


_AGENTS: OrderedDict[tuple, Player] = OrderedDict()
_AGENTS_LOCK = Lock()
MAX_AGENTS = 24
"""Agents kept per process (least recently used ones are dropped): enough for 20 games
at once without rebuilding an agent each move (a table of at most 2**20 entries, the
server's limit, is 40 MB)."""


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


_GAMES: OrderedDict[str, tuple[tuple, tuple[str, ...], Game]] = OrderedDict()
_GAMES_LOCK = Lock()


def _game(job: AgentJob) -> Game:
    """The job's position: the slot's game of the last job played on by the new moves
    (replaying a whole game each move was nine tenths of a depth-2 job at ply 30), or
    rebuilt where the moves do not extend it (a take-back, another game). The agent gets
    a copy, so nothing it does can change the kept game."""
    key = (job.variant, job.options, job.start_fen)
    with _GAMES_LOCK:
        kept = _GAMES.pop(job.slot, None)
    if kept is not None and kept[0] == key and job.moves[:len(kept[1])] == kept[1]:
        game = kept[2]
        for text in job.moves[len(kept[1]):]:
            game.push(text)
    else:
        game = rebuild(job.variant, dict(job.options), job.start_fen, job.moves)
    with _GAMES_LOCK:
        _GAMES[job.slot] = (key, job.moves, game)
        while len(_GAMES) > MAX_AGENTS:
            _GAMES.popitem(last=False)
    return game.copy()


def run_job(job: AgentJob) -> AgentReply:
    """Answer one job (in a worker process or a thread); errors come back as text."""
    try:
        game = _game(job)
        agent = _agent(job)
        if job.hook is not None:
            if job.hook not in HOOKS:
                return AgentReply(error=f"unknown hook {job.hook!r}")
            return AgentReply(answer=ask(agent, job.hook, game))
        if ask(agent, "wants_resign", game):
            return AgentReply(resign=True)
        offers = ask(agent, "offers_draw", game)
        start = time.perf_counter()
        move = agent.choose(game)
        seconds = time.perf_counter() - start
        return AgentReply(move=str(game.parse_move(move)), seconds=seconds, offers_draw=offers)
    except Exception as exc:  # noqa: BLE001 - reported to the page, the server goes on
        return AgentReply(error=f"{type(exc).__name__}: {exc}")


class TaskFailed(Exception):
    """A pool task that did not finish: its deadline passed, it was cancelled, its worker
    died, or the server is stopping."""


def warm_worker() -> None:
    """Compile the search and load torch (when installed) in a fresh worker, before its
    first job's deadline starts: on a loaded machine a cold start took longer than the
    deadline, and each replaced worker started cold again."""
    run_job(AgentJob("alphabeta:depth=1", "damii", (), None, (), "warm-up"))
    try:
        import torch  # noqa: F401 - the neural players need it; loading takes seconds
    except ImportError:
        pass
    else:  # the network players' modules and first forward pass (1.2 s, measured)
        run_job(AgentJob("pretrained:damii,net=search,depth=1", "damii", (), None, (),
                         "warm-up"))
    _AGENTS.clear()
    _GAMES.clear()


def _worker_main(conn: Any) -> None:
    """A worker process: one thread for numba and torch, warmed up, then tasks until the
    pipe ends."""
    single_threaded()
    warm_worker()
    single_threaded()  # torch is loaded now: one thread for it too
    conn.send("ready")  # a job's deadline starts once the worker has started
    while True:
        try:
            fn, arg = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            result = fn(arg)
        except Exception as exc:  # noqa: BLE001 - sent back to the server
            result = TaskFailed(f"{type(exc).__name__}: {exc}")
        try:
            conn.send(result)
        except (OSError, ValueError):
            return


class SearchPool:
    """Worker processes for agents' searches and other heavy work, each task with a
    deadline. ``submit(fn, arg, key=...)`` returns a future; a task over its deadline,
    or one whose key :meth:`cancel` names, kills its worker (a fresh one takes its place)
    and its future raises :class:`TaskFailed` (an :class:`AgentReply` with an error for
    :func:`run_job`)."""

    def __init__(self, workers: int, deadline: float = JOB_DEADLINE) -> None:
        self.deadline = deadline
        self._ctx = get_context("spawn")
        self._tasks: queue.Queue = queue.Queue()
        self._closed = threading.Event()
        self._lock = Lock()
        self._running: dict[int, str] = {}
        self._kill: set[int] = set()
        self._procs: dict[int, Any] = {}
        self._threads = [threading.Thread(target=self._serve, args=(i,), daemon=True,
                                          name=f"damii-pool-{i}") for i in range(workers)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[[Any], Any], arg: Any, key: str = "") -> Future:
        """Run ``fn(arg)`` in a worker; `key` names the task for :meth:`cancel`."""
        future: Future = Future()
        if self._closed.is_set():
            future.set_result(_failed(fn, "the server is stopping"))
        else:
            self._tasks.put((future, fn, arg, key))
        return future

    def cancel(self, prefix: str) -> None:
        """Stop every task whose key starts with `prefix` (its game is gone)."""
        with self._lock:
            for i, key in self._running.items():
                if key.startswith(prefix):
                    self._kill.add(i)

    def _spawn(self, i: int) -> tuple[Any, Any]:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_worker_main, args=(child,), daemon=True,
                                 name=f"damii-search-{i}")
        proc.start()
        child.close()
        with self._lock:
            self._procs[i] = proc
        until = time.monotonic() + START_SECONDS
        while not self._closed.is_set() and proc.is_alive() and time.monotonic() < until:
            try:
                if parent.poll(0.05):
                    parent.recv()  # "ready"
                    break
            except (EOFError, OSError):
                break
        return proc, parent

    def _serve(self, i: int) -> None:
        proc, conn = None, None
        while not self._closed.is_set():
            item = self._tasks.get()
            if item is None:
                break
            future, fn, arg, key = item
            if not future.set_running_or_notify_cancel():
                continue
            if proc is None or not proc.is_alive():
                proc, conn = self._spawn(i)
            with self._lock:
                self._running[i], self._kill = key, self._kill - {i}
            outcome, ok = self._run(i, proc, conn, fn, arg)
            with self._lock:
                self._running.pop(i, None)
            if not ok:
                _end(proc)
                proc = None
            future.set_result(outcome)
        if proc is not None:
            _end(proc)

    def _run(self, i: int, proc: Any, conn: Any, fn: Callable, arg: Any) -> tuple[Any, bool]:
        try:
            conn.send((fn, arg))
        except (OSError, ValueError):
            return _failed(fn, "the search worker stopped"), False
        until = time.monotonic() + self.deadline
        while True:
            left = until - time.monotonic()
            try:
                if conn.poll(max(0.0, min(left, 0.05))):
                    result = conn.recv()
                    if isinstance(result, str) and result == "ready":
                        continue  # a slow start's greeting
                    if isinstance(result, TaskFailed):
                        return _failed(fn, str(result)), True
                    return result, True
            except (EOFError, OSError):
                return _failed(fn, "the search worker stopped"), False
            if self._closed.is_set():
                return _failed(fn, "the server is stopping"), False
            with self._lock:
                killed = i in self._kill
            if killed:
                return _failed(fn, "cancelled: the game is gone"), False
            if left <= 0:
                return _failed(fn, f"no answer within {self.deadline:g} s; the search "
                                   f"was stopped"), False
            if not proc.is_alive():
                return _failed(fn, "the search worker stopped"), False

    def shutdown(self, timeout: float = 3.0) -> None:
        """End every worker process now; pending tasks fail with "the server is stopping"."""
        self._closed.set()
        while True:
            try:
                item = self._tasks.get_nowait()
            except queue.Empty:
                break
            if item is not None and item[0].set_running_or_notify_cancel():
                item[0].set_result(_failed(item[1], "the server is stopping"))
        for _ in self._threads:
            self._tasks.put(None)
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            _end(proc)
        for thread in self._threads:
            thread.join(timeout)

    def pids(self) -> list[int]:
        """Process ids of the live workers (for tests and monitoring)."""
        with self._lock:
            return [p.pid for p in self._procs.values() if p.is_alive()]


def _failed(fn: Callable, why: str) -> Any:
    """What a task that did not finish answers: an AgentReply for agent jobs, else the
    exception."""
    return AgentReply(error=why) if fn is run_job else TaskFailed(why)


def _end(proc: Any) -> None:
    if proc.is_alive():
        proc.terminate()
        proc.join(1.0)
        if proc.is_alive():
            proc.kill()
            proc.join(1.0)


class ThreadPool:
    """The same interface over threads of this process (tests, debugging): no deadline
    and no cancellation of a running task."""

    def __init__(self, threads: int = 4) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="damii-search")

    def submit(self, fn: Callable[[Any], Any], arg: Any, key: str = "") -> Future:
        return self._pool.submit(fn, arg)

    def cancel(self, prefix: str) -> None:
        """Threads cannot be stopped; the task's answer is ignored by its game."""

    def shutdown(self, timeout: float = 3.0) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def pids(self) -> list[int]:
        return []


Pool = SearchPool | ThreadPool


def make_pool(workers: int, deadline: float = JOB_DEADLINE) -> Pool:
    """`workers` worker processes, or (0) a few threads of this process (tests, debugging)."""
    if workers <= 0:
        return ThreadPool()
    return SearchPool(workers, deadline)
