"""Agent searches off the event loop: jobs that rebuild a game from its moves and ask a
player (built from its spec and kept between moves) for a move or a hook's answer.

A job carries only plain data (the parsed spec, the variant and options, the start FEN and
the moves), so it runs the same in a thread or in a worker process. The server uses a
:class:`SearchPool` of worker processes by default: the compiled alpha-beta search holds
Python's global interpreter lock while it runs, so a search in a thread of the server
process would stall every other page for its duration. Each job has a deadline: a worker
that overruns it is killed and replaced, and :meth:`SearchPool.shutdown` ends every
worker.

Waiting tasks are a :class:`FairQueue`, one budget for every agent search (games,
tournaments, arena matches): tasks are grouped by client address (a group) and, inside
it, by share (a browser session; a tournament's boards take their organizer's share),
served round robin at both levels, so an address with 110 sessions gets one turn in each
round like an address with one, and a session with 20 games one like a session with
one. Light searches (:func:`~damii_app.serve.specs.is_light`: a reply to a person at
depth 2, ``random``, ``greedy``) go before all others, and the server's pool has a light
lane: one more worker process that runs only them, at the server's priority, so a light
reply does not wait for a running search to end (it waited up to 0.5 s behind the
``time=0.5`` searches of issue 63's pressure); the other workers run at a lower priority
(:data:`WORKER_NICE`). Heavy searches (:func:`~damii_app.serve.specs.is_quick`) hold at
most all the workers but one, and one group runs at most all the workers but one
searches that are not light while another group waits. A game's queued task is dropped
when the game ends and its running one is left to finish with its answer ignored
(:meth:`SearchPool.cancel`: no worker is killed, so nobody waits for a fresh one to
start).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from multiprocessing import get_context
from threading import Lock
from typing import Any

from damii_agents.match.game_loop import Reply, ask
from damii_agents.match.worker import single_threaded
from damii_agents.registry import PlayerSpec
from damii_env import Game
from damii_env.player import Player, make_player

HOOKS = ("wants_resign", "offers_draw", "accepts_draw")
START_SECONDS = 120.0
"""Seconds a fresh worker process may take to start (imports, first compiles)."""
STOPPING = "the server is stopping"
"""What a task pending when the server stops answers (the request gets it as a 503)."""
WORKER_NICE = 5
"""How much lower the search workers' priority for the CPU is than the server's (``os.nice``;
the light lane runs at the server's): on a machine short of cores, the event loop (pings,
moves, pages) and the light replies to people get the CPU before searches of 0.5 s."""
JOB_DEADLINE = 60.0
"""Seconds a job may take before its worker is killed and replaced (the server's caps on
search time keep a fair job well inside it, even on a loaded machine)."""


@dataclass(frozen=True)
class AgentJob:
    """One question to an agent about one position."""

    spec: PlayerSpec
    """The player spec, parsed and checked by the server (checkpoint paths made absolute):
    it pickles, and the worker builds the player from it without parsing text."""
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


class ServerStopping(Exception):
    """A request waited for a task that the stopping server will not run (answered 503
    "the server is stopping")."""


def warm_worker(with_torch: bool = True) -> None:
    """Compile the search and load torch (when installed and `with_torch`) in a fresh
    worker, before its first job's deadline starts: on a loaded machine a cold start took
    longer than the deadline, and each replaced worker started cold again."""
    run_job(AgentJob(PlayerSpec.parse("alphabeta:depth=1"), "damii", (), None, (), "warm-up"))
    if with_torch:
        try:
            import torch  # noqa: F401 - the neural players need it; loading takes seconds
        except ImportError:
            pass
        else:  # the network players' modules and first forward pass (1.2 s, measured)
            run_job(AgentJob(PlayerSpec.parse("pretrained:damii,net=search,depth=1"),
                             "damii", (), None, (), "warm-up"))
    _AGENTS.clear()
    _GAMES.clear()


def _worker_main(conn: Any, nice: int = 0, with_torch: bool = True) -> None:
    """A worker process: one thread for numba and torch, `nice` (a lower priority for
    the CPU than the server's event loop and the light lane), warmed up (`with_torch`:
    torch loaded too), then tasks until the pipe ends. Ctrl-C (sent to the whole process
    group by a terminal) is the server's to handle: a worker ignores it, so that a search
    is not broken into an agent's error (the server ends its workers itself)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        with contextlib.suppress(OSError, AttributeError):
            os.nice(nice)
    single_threaded()
    warm_worker(with_torch)
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


@dataclass(eq=False)
class _Task:
    """A task submitted to a pool: ``fn(arg)``, its future, its key (for :meth:`cancel`),
    its share (whose turn it takes) and whether it is heavy."""

    future: Future
    fn: Callable[[Any], Any]
    arg: Any
    key: str = ""
    share: str = ""
    heavy: bool = False
    group: str = ""
    """Whose budget it takes above the share's: the client address of the share."""
    light: bool = False
    """A search of milliseconds: it goes before every task that is not light."""
    cancelled: bool = False
    """Stopped by :meth:`_PoolBase.cancel` while running: its answer is ignored."""


def _answer(task: _Task, outcome: Any) -> None:
    """Give a task's future its outcome (once: a later one is dropped)."""
    try:
        task.future.set_result(outcome)
    except InvalidStateError:
        pass


class FairQueue:
    """The tasks waiting for a worker, one budget for all: grouped by client address
    (``group``), then by share (a browser session or a tournament's organizer), each level
    served round robin (the one served longest ago first). Light tasks go first; heavy
    tasks run on at most `heavy_slots` workers at once, and one group's tasks that are not
    light on at most `group_slots` while another group's task waits (a worker nobody else
    wants takes more of them: no worker idles while a task waits); a task
    submitted with ``replace`` drops a queued task of the same key (one queued search a
    seat). Thread-safe."""

    def __init__(self, heavy_slots: int, group_slots: int | None = None) -> None:
        self.heavy_slots = max(1, heavy_slots)
        self.group_slots = max(1, heavy_slots if group_slots is None else group_slots)
        self._cond = threading.Condition()
        self._groups: OrderedDict[str, OrderedDict[str, deque[_Task]]] = OrderedDict()
        self._heavy_running = 0
        self._group_running: dict[str, int] = {}
        self._closed = False
        self._keyed: dict[str, list[_Task]] = {}
        """The queued tasks by key: a replaced or cancelled task is found without a scan of
        every queued task (thousands under a load of tournaments)."""
        self._light = self._plain = 0
        """How many queued tasks are light, and neither light nor heavy: a worker that may
        take only those sees at once that none waits."""

    def put(self, task: _Task, replace: bool = False) -> list[_Task]:
        """Queue `task`; returns the tasks it replaced (their futures still to answer)."""
        with self._cond:
            if self._closed:
                return [task]
            dropped = self._unqueue(self._keyed.get(task.key, [])) if replace and task.key \
                else []
            shares = self._groups.setdefault(task.group, OrderedDict())
            shares.setdefault(task.share, deque()).append(task)
            if task.key:
                self._keyed.setdefault(task.key, []).append(task)
            self._light += task.light
            self._plain += not (task.light or task.heavy)
            self._cond.notify_all()
        return dropped

    def _unqueue(self, tasks: list[_Task]) -> list[_Task]:
        """Take `tasks` (queued ones) out of the queue; returns them."""
        tasks = list(tasks)
        for task in tasks:
            shares = self._groups[task.group]
            queued = shares[task.share]
            queued.remove(task)
            if not queued:
                del shares[task.share]
                if not shares:
                    del self._groups[task.group]
            self._forget(task)
        return tasks

    def _forget(self, task: _Task) -> None:
        """`task` has left the queue: out of the key index and the counts."""
        if task.key:
            same = self._keyed[task.key]
            same.remove(task)
            if not same:
                del self._keyed[task.key]
        self._light -= task.light
        self._plain -= not (task.light or task.heavy)

    def get(self, light_only: bool = False) -> _Task | None:
        """The next task to run (waits for one; `light_only`: for a light one, the light
        lane's); None once the queue is closed."""
        with self._cond:
            while not self._closed:
                # light first; then groups under their slots; then any (no worker idles
                # while a task waits: a capped group's task waits only for the others)
                task = self._pick(light_only=True)
                if task is None and not light_only:
                    task = self._pick(light_only=False) or \
                        self._pick(light_only=False, capped=False)
                if task is not None:
                    return task
                self._cond.wait()
            return None

    def _pick(self, light_only: bool, capped: bool = True) -> _Task | None:
        heavy_ok = self._heavy_running < self.heavy_slots
        if not self._light and (light_only or not heavy_ok and not self._plain):
            return None  # nothing queued that this worker may take: no scan
        for group, shares in self._groups.items():
            group_ok = self._group_running.get(group, 0) < self.group_slots
            if not light_only and capped and not group_ok:
                continue
            for share, tasks in shares.items():
                task = next((t for t in tasks if t.light or not light_only and (
                    heavy_ok or not t.heavy)), None)
                if task is None:
                    continue
                tasks.remove(task)
                self._forget(task)
                if tasks:
                    shares.move_to_end(share)
                else:
                    del shares[share]
                if shares:
                    self._groups.move_to_end(group)
                else:
                    del self._groups[group]
                self._heavy_running += task.heavy
                if not task.light:
                    self._group_running[group] = self._group_running.get(group, 0) + 1
                return task
        return None

    def done(self, task: _Task) -> None:
        """A task taken by :meth:`get` has finished (its worker is free)."""
        with self._cond:
            self._heavy_running -= task.heavy
            if not task.light:
                left = self._group_running.get(task.group, 0) - 1
                if left > 0:
                    self._group_running[task.group] = left
                else:
                    self._group_running.pop(task.group, None)
            self._cond.notify_all()

    def cancel(self, prefix: str) -> list[_Task]:
        """Take out the queued tasks whose key starts with `prefix`."""
        with self._cond:
            keys = [key for key in self._keyed if key.startswith(prefix)]
            return [task for key in keys for task in self._unqueue(self._keyed[key])]

    def close(self) -> list[_Task]:
        """No more tasks: every worker's :meth:`get` returns None; the queued tasks are
        returned (to be answered)."""
        with self._cond:
            self._closed = True
            dropped = [task for shares in self._groups.values()
                       for tasks in shares.values() for task in tasks]
            self._groups.clear()
            self._keyed.clear()
            self._light = self._plain = 0
            self._cond.notify_all()
        return dropped

    def __len__(self) -> int:
        with self._cond:
            return sum(len(tasks) for shares in self._groups.values()
                       for tasks in shares.values())


class _PoolBase:
    """What both pools share: a :class:`FairQueue` of tasks and their submission."""

    def __init__(self, workers: int) -> None:
        self.queue = FairQueue(workers - 1 if workers > 1 else 1)
        self._closed = threading.Event()
        self._lock = Lock()
        self._running: dict[int, _Task] = {}
        self.budget_of: Callable[[str], tuple[str, str]] = lambda share: (share, share)
        """A task's (group, share) from the share it was submitted with: the server sets
        it (a session's client address; a tournament's organizer)."""

    def submit(self, fn: Callable[[Any], Any], arg: Any, key: str = "", share: str = "",
               heavy: bool = False, replace: bool = False, light: bool = False) -> Future:
        """Run ``fn(arg)`` in a worker: `key` names the task for :meth:`cancel`, `share`
        whose turn it takes (round robin, inside its group: :attr:`budget_of`), `heavy` a
        long search (never on the last free worker), `light` a search of milliseconds
        (before the others), `replace` drops a queued task of the same key."""
        group, share = self.budget_of(share)
        task = _Task(Future(), fn, arg, key, share, heavy and not light, group, light)
        if self._closed.is_set():
            _answer(task, _failed(fn, STOPPING))
            return task.future
        for old in self.queue.put(task, replace):
            _answer(old, _failed(old.fn, STOPPING if old is task else
                                 "replaced by a newer search of the same game"))
        return task.future

    def cancel(self, prefix: str) -> None:
        """Stop every task whose key starts with `prefix` (its game is gone): the queued
        ones are dropped, the running ones answered now (the search runs out its capped
        time in its worker, and its answer is ignored)."""
        for task in self.queue.cancel(prefix):
            _answer(task, _failed(task.fn, "cancelled: the game is gone"))
        with self._lock:
            running = [(i, t) for i, t in self._running.items() if t.key.startswith(prefix)]
        for i, task in running:
            self._stop(i, task)

    def _stop(self, i: int, task: _Task) -> None:
        _answer(task, _failed(task.fn, "cancelled: the game is gone"))

    def _take(self, i: int, light_only: bool = False) -> _Task | None:
        """Worker `i`'s next task (`light_only`: a light one; None: the pool is closed)."""
        while True:
            task = self.queue.get(light_only)
            if task is None:
                return None
            if task.future.set_running_or_notify_cancel():
                with self._lock:
                    self._running[i] = task
                return task
            self.queue.done(task)

    def _finish(self, i: int, task: _Task, outcome: Any) -> None:
        with self._lock:
            self._running.pop(i, None)
        self.queue.done(task)
        _answer(task, outcome)

    def _close(self) -> None:
        """Refuse new tasks; answer the queued and running ones "the server is stopping"."""
        self._closed.set()
        for task in self.queue.close():
            _answer(task, _failed(task.fn, STOPPING))
        with self._lock:
            running = list(self._running.values())
        for task in running:
            _answer(task, _failed(task.fn, STOPPING))


class SearchPool(_PoolBase):
    """Worker processes for agents' searches and other heavy work, each task with a
    deadline. ``submit(fn, arg, key=...)`` returns a future; a task over its deadline,
    or one whose key :meth:`cancel` names, kills its worker (a fresh one takes its place)
    and its future raises :class:`TaskFailed` (an :class:`AgentReply` with an error for
    :func:`run_job`). Tasks wait in a :class:`FairQueue`."""

    def __init__(self, workers: int, deadline: float = JOB_DEADLINE, light_lane: bool = False,
                 nice: int = 0) -> None:
        super().__init__(workers)
        self.deadline = deadline
        self.nice = nice
        """How much lower the `workers`' priority for the CPU is (``os.nice``)."""
        self.lane = workers if light_lane else None
        """The light lane's worker (its index; None: none): a process of its own that
        runs only light tasks, at the server's priority, so that a light reply never
        waits for a heavier search to end (it loads torch at its first network job)."""
        self._lane_ready = threading.Event()
        self._ctx = get_context("spawn")
        self._procs: dict[int, Any] = {}
        self._threads = [threading.Thread(target=self._serve, args=(i,), daemon=True,
                                          name=f"damii-pool-{i}")
                         for i in range(workers + (1 if light_lane else 0))]
        for thread in self._threads:
            thread.start()

    def _stop(self, i: int, task: _Task) -> None:
        """A running task is answered now; its worker finishes the search (capped in time
        by the server's limits, and by the job deadline) and its answer is dropped: killing
        the worker cost everyone a fresh worker's start (20 s on a loaded machine)."""
        task.cancelled = True
        _answer(task, _failed(task.fn, "cancelled: the game is gone"))

    def _spawn(self, i: int) -> tuple[Any, Any]:
        parent, child = self._ctx.Pipe()
        lane = i == self.lane
        proc = self._ctx.Process(target=_worker_main,
                                 args=(child, 0 if lane else self.nice, not lane),
                                 daemon=True, name="damii-light" if lane else f"damii-search-{i}")
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
        lane = i == self.lane
        proc, conn = self._spawn(i) if lane else (None, None)  # the lane is ready at once
        if lane:
            self._lane_ready.set()
        while not self._closed.is_set():
            task = self._take(i, light_only=lane)
            if task is None:
                break
            if proc is None or not proc.is_alive():
                proc, conn = self._spawn(i)
            outcome, ok = self._run(proc, conn, task.fn, task.arg)
            if not ok:
                _end(proc)
                proc = None
            self._finish(i, task, outcome)
        if proc is not None:
            _end(proc)

    def _run(self, proc: Any, conn: Any, fn: Callable, arg: Any) -> tuple[Any, bool]:
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
                return _failed(fn, STOPPING), False
            if left <= 0:
                return _failed(fn, f"no answer within {self.deadline:g} s; the search "
                                   f"was stopped"), False
            if not proc.is_alive():
                return _failed(fn, "the search worker stopped"), False

    def shutdown(self, timeout: float = 3.0) -> None:
        """End every worker process now; pending tasks fail with "the server is stopping"."""
        self._close()
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            _end(proc)
        for thread in self._threads:
            thread.join(timeout)

    def pids(self) -> list[int]:
        """Process ids of the live workers, the light lane's not counted (for tests and
        monitoring)."""
        with self._lock:
            return [p.pid for i, p in self._procs.items() if p.is_alive() and i != self.lane]

    def lane_started(self, timeout: float | None = None) -> bool:
        """Wait until the light lane's worker has started (True at once without a lane)."""
        return self.lane is None or self._lane_ready.wait(timeout)

    def lane_pid(self) -> int | None:
        """The light lane's process id (None: no lane, or not started)."""
        with self._lock:
            proc = self._procs.get(self.lane) if self.lane is not None else None
        return proc.pid if proc is not None and proc.is_alive() else None


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


class ThreadPool(_PoolBase):
    """The same interface over threads of this process (tests, debugging), with the same
    :class:`FairQueue`: no deadline, and a running task cannot be stopped (its answer is
    given at once and the thread's is ignored)."""

    def __init__(self, threads: int = 4) -> None:
        super().__init__(threads)
        self._threads = [threading.Thread(target=self._serve, args=(i,), daemon=True,
                                          name=f"damii-search-{i}") for i in range(threads)]
        for thread in self._threads:
            thread.start()

    def _serve(self, i: int) -> None:
        while True:
            task = self._take(i)
            if task is None:
                return
            try:
                outcome = task.fn(task.arg)
            except Exception as exc:  # noqa: BLE001 - the task's answer
                outcome = _failed(task.fn, f"{type(exc).__name__}: {exc}")
            self._finish(i, task, outcome)

    def shutdown(self, timeout: float = 3.0) -> None:
        """Pending tasks fail with "the server is stopping" (running threads finish on
        their own, unwaited)."""
        self._close()

    def pids(self) -> list[int]:
        return []


Pool = SearchPool | ThreadPool


def make_pool(workers: int, deadline: float = JOB_DEADLINE) -> Pool:
    """`workers` worker processes (at :data:`WORKER_NICE`) and the light lane's, or (0) a
    few threads of this process (tests, debugging)."""
    if workers <= 0:
        return ThreadPool()
    return SearchPool(workers, deadline, light_lane=True, nice=WORKER_NICE)
