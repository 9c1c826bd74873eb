"""Work spread over worker processes with no way to hang: :func:`unordered_map`, and
:class:`WorkerPool` for workers kept over several maps.

``multiprocessing.Pool`` waits forever for the result of a worker that died (killed, out
of memory, a crash in compiled code), and its ``terminate`` can block on the task
queue's lock; a match then hangs with its workers left as zombies. Here the parent waits
for results in short slices, notices a worker that ended without finishing its work and
says so, and on any way out (the last result, an error, Ctrl-C) ends every worker: a
polite stop first, then SIGKILL.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import queue
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from damii_env.errors import DamiiError

T = TypeVar("T")
R = TypeVar("R")

POLL_SECONDS = 0.2
"""How often the parent looks at its workers while it waits for a result."""
STOP_SECONDS = 5.0
"""How long a worker has to end after the last task before it is killed."""


class WorkerDied(DamiiError):
    """A worker process ended (killed, crashed) before finishing its tasks."""


def _portable(error: BaseException) -> BaseException:
    """`error` if it survives pickling, else a RuntimeError with its type and message."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


def _serve(tasks: Any, results: Any, initializer: Callable[..., None] | None,
           initargs: tuple[Any, ...]) -> None:
    """A worker's life: set up, then take ``(index, fn, item)`` tasks until the ``None``
    that ends the queue."""
    try:
        if initializer is not None:
            initializer(*initargs)
    except BaseException as error:  # reported to the parent, which stops the work
        results.put((-1, False, _portable(error)))
        return
    for index, fn, item in iter(tasks.get, None):
        try:
            results.put((index, True, fn(item)))
        except BaseException as error:  # the parent re-raises it
            results.put((index, False, _portable(error)))


class WorkerPool:
    """`workers` processes kept for several maps (:meth:`imap_unordered`), so that what
    they set up (players, search tables) serves every map; used as a context manager, it
    ends them on the way out. The same guarantees as :func:`unordered_map`: a worker's
    error is raised here, a dead worker raises :class:`WorkerDied`, and a map left early
    (break, error, Ctrl-C) ends every worker, the pool then closed."""

    def __init__(self, workers: int, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = (), context: str = "spawn") -> None:
        ctx = mp.get_context(context)
        self._tasks, self._results = ctx.Queue(), ctx.Queue()
        self._procs = [ctx.Process(target=_serve, daemon=True,
                                   args=(self._tasks, self._results, initializer, initargs))
                       for _ in range(max(1, workers))]
        self._closed = False
        try:
            for proc in self._procs:
                proc.start()
        except BaseException:
            self.close()
            raise

    def imap_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """``fn(item)`` for every item (`fn` a module's function: it is sent to the
        workers), yielded as each finishes."""
        if self._closed:
            raise RuntimeError("this worker pool is closed (a map was left early, or the "
                               "pool's with-block has ended)")
        todo = list(items)
        for index, item in enumerate(todo):
            self._tasks.put((index, fn, item))
        finished = False
        try:
            for _ in range(len(todo)):
                yield _next_result(self._results, self._procs)
            finished = True
        finally:
            if not finished:  # the workers may still be at this map's tasks: end them
                self.close()

    def close(self) -> None:
        """End every worker (those at work are terminated, then killed if they linger)."""
        if self._closed:
            return
        self._closed = True
        for _ in self._procs:
            self._tasks.put(None)
        _stop(self._procs, self._tasks, self._results)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def unordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int,
                  initializer: Callable[..., None] | None = None,
                  initargs: tuple[Any, ...] = (), context: str = "spawn") -> Iterator[R]:
    """``fn(item)`` for every item, computed by `workers` processes, yielded as each
    finishes. An error in a worker is raised here (its type kept where it pickles); a
    worker that dies raises :class:`WorkerDied` naming its exit code. Leaving the
    iteration early (break, error, Ctrl-C) ends every worker."""
    todo = list(items)
    with WorkerPool(min(workers, len(todo)), initializer, initargs, context) as pool:
        yield from pool.imap_unordered(fn, todo)


def _next_result(results: Any, procs: list[Any]) -> Any:
    """The next finished result, or the worker's error raised; WorkerDied when a worker
    has ended with a bad exit code, or every worker has ended and nothing is left."""
    while True:
        try:
            index, ok, value = results.get(timeout=POLL_SECONDS)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise WorkerDied(f"a worker process ended with exit code {dead[0].exitcode} "
                                 "before finishing its games (killed, out of memory, or a "
                                 "crash); the results so far are kept") from None
            if all(p.exitcode == 0 for p in procs):
                try:
                    index, ok, value = results.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    raise WorkerDied("every worker process ended with work left "
                                     "undone") from None
            else:
                continue
        if ok:
            return value
        raise value


def _stop(procs: list[Any], tasks: Any, results: Any) -> None:
    """End every worker: those still at work are terminated, then killed if they linger."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        if proc.pid is not None:
            proc.join(STOP_SECONDS)
            if proc.is_alive():
                proc.kill()
                proc.join(STOP_SECONDS)
    for q in (tasks, results):
        q.cancel_join_thread()
        q.close()
