"""Matches on a Ray cluster (``damii eval ... --ray [ADDRESS]``), and connecting to one.

Ray is optional (the ``distributed`` extra) and imported only here and in
``training/distributed.py``, never by ``import damii_env`` or ``import damii_agents``.

:func:`connect` joins this process to a cluster: ``auto`` (the cluster ``ray start``
started on this machine, or ``RAY_ADDRESS``), ``HOST:PORT`` (a head node), or ``local``
(a Ray instance started in this process). An address that does not answer is refused
within :data:`CONNECT_TIMEOUT_S` seconds instead of Ray's own minutes of retries.

:func:`play_on_ray` plays the games of a match on actors, one CPU each, that build the
players once from their specs, as the local worker processes do. Every game has its own
seed, so the results, table, JSON and PDN are those of a local run with the same seed.
A game whose actor dies is played again on a new actor.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

from damii_agents.match.config import GameTask, MatchConfig
from damii_agents.match.results import GameResult
from damii_agents.match.worker import init_worker, play_task
from damii_env.errors import DamiiError

EXTRA_HINT = ('pip install "damii-env[distributed]" '
              '(from a checkout: pip install -e ".[distributed]")')
"""How to get Ray: the project's ``distributed`` extra."""
CONNECT_TIMEOUT_S = 20.0
"""Longest wait for a cluster to answer (a TCP probe, then Ray's own handshake)."""
PROBE_TIMEOUT_S = 5.0
"""Longest wait for the TCP probe of the head node's port."""
MAX_REPLACEMENTS = 20
"""Actors replaced in one match or run before giving up (a node that cannot start them)."""


class DistributedError(DamiiError):
    """Ray is missing, the cluster cannot be reached, or its actors keep failing."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`DistributedError` that names the extra."""
    try:
        import ray
    except ImportError as exc:
        raise DistributedError(f"--ray needs Ray, which is not installed here ({exc}); "
                               f"install the distributed extra: {EXTRA_HINT}") from None
    return ray


def _resolve(ray: Any, address: str) -> tuple[str, int]:
    """``auto`` or ``HOST:PORT`` as a host and a port."""
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address

        try:
            found = canonicalize_bootstrap_address("auto")
        except Exception as exc:  # Ray raises ConnectionError or ValueError here
            found, reason = None, f" ({exc})"
        else:
            reason = ""
        if found is None:
            raise DistributedError(
                f"--ray auto: no running Ray cluster found on this machine{reason}; start one "
                f"with `ray start --head`, give its HOST:PORT, or use --ray local")
        address = found
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise DistributedError(f"--ray {address!r}: expected auto, local or HOST:PORT "
                               f"(the head node's address, e.g. 10.0.0.5:6379)")
    return host.strip("[]"), int(port)


def connect(address: str | None = "auto", num_cpus: int | None = None) -> tuple[Any, bool]:
    """Join this process to a Ray cluster; returns ``(ray, started)``, ``started`` being
    whether this call connected (and the caller should ``ray.shutdown()`` when done).
    A process already connected (``ray.init`` called before) keeps its cluster."""
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    import logging

    address = (address or "auto").strip()
    kwargs: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": True}
    if address == "local":  # starts here: nothing to wait for but this machine
        ray.init(num_cpus=num_cpus, include_dashboard=False, **kwargs)
        return ray, True
    else:
        host, port = _resolve(ray, address)
        try:
            socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
        except OSError as exc:
            why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
            raise DistributedError(
                f"cannot reach a Ray cluster at {host}:{port} ({why}); start its head with "
                f"`ray start --head` there, or check the address and the firewall") from None
        kwargs["address"] = f"{host}:{port}"
    _init_within(ray, CONNECT_TIMEOUT_S, kwargs)
    return ray, True


def _init_within(ray: Any, seconds: float, kwargs: dict[str, Any]) -> None:
    """``ray.init(**kwargs)``, or a :class:`DistributedError` after `seconds`."""
    box: dict[str, BaseException] = {}

    def init() -> None:
        try:
            if "address" in kwargs:
                _check_token(ray, kwargs["address"])
            ray.init(**kwargs)
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=init, name="ray-init", daemon=True)
    thread.start()
    thread.join(seconds)
    where = kwargs.get("address", "a local instance")
    if thread.is_alive():
        raise DistributedError(f"the Ray cluster at {where} did not answer within {seconds:.0f} s; "
                               f"is it a Ray head node (`ray start --head`) of Ray "
                               f"{ray.__version__}?")
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, DistributedError):
            raise exc
        raise DistributedError(f"cannot connect to the Ray cluster at {where}: "
                               f"{type(exc).__name__}: {exc}") from None


def _check_token(ray: Any, address: str) -> None:
    """Refuse at once a cluster that wants a token this process does not send (Ray
    would retry for minutes)."""
    refused = getattr(ray.exceptions, "AuthenticationError", None)
    try:
        from ray._raylet import GcsClient
    except ImportError:  # another Ray: ray.init reports what goes wrong
        return
    if refused is None:
        return
    try:
        GcsClient(address=address)
    except refused:
        raise DistributedError(
            f"the Ray cluster at {address} uses token authentication (what `ray start` does "
            f"since Ray 2.59) and this process sends no token: set RAY_AUTH_MODE=token here, "
            f"with the cluster's token in ~/.ray/auth_token or RAY_AUTH_TOKEN") from None
    except Exception:  # anything else: ray.init reports it
        return


def free_cpus(ray: Any, wanted: int = 0, wait_s: float = 3.0) -> int:
    """CPUs of the cluster not taken by actors, waiting up to `wait_s` for those of
    actors just stopped to come back when fewer than `wanted` are free."""
    deadline = time.monotonic() + wait_s
    while True:
        free = int(ray.available_resources().get("CPU", 0))
        if free >= wanted or time.monotonic() > deadline:
            return free
        time.sleep(0.2)


def actor_count(ray: Any, asked: int | None, what: str) -> int:
    """How many one-CPU actors to start: `asked` (all free CPUs when None), or what the
    cluster has when that is fewer, said on stderr."""
    free = free_cpus(ray, asked or 0)
    if free < 1:
        raise DistributedError("the Ray cluster has no free CPU for an actor; "
                               "add a node or stop other jobs on it")
    if asked is None:
        return free
    if asked > free:
        print(f"damii: the Ray cluster has {free} free CPU{'s' * (free != 1)}; running "
              f"{free} {what} instead of the {asked} asked for", file=sys.stderr)
        return free
    return asked


class RayMatchWorker:
    """A Ray actor that plays games of one match (as a local worker process does)."""

    def __init__(self, config: MatchConfig) -> None:
        init_worker(config)

    def play(self, task: GameTask) -> GameResult:
        return play_task(task)


def play_on_ray(config: MatchConfig, tasks: list[GameTask], address: str | None = "auto"
                ) -> Iterator[GameResult]:
    """The games of `tasks` played on a Ray cluster, as they finish; ``config.workers``
    actors (None: one a free CPU)."""
    if config.players:
        raise DistributedError("a match with ready-made player objects is played in this "
                               "process; give every player as a spec to play it on Ray")
    ray, started = connect(address)
    actors: list[Any] = []
    try:
        n = min(actor_count(ray, config.workers, "match actors"), len(tasks))
        remote = ray.remote(num_cpus=1, max_restarts=0)(RayMatchWorker)
        queue = deque(tasks)
        running: dict[Any, tuple[Any, GameTask]] = {}

        def submit(actor: Any) -> None:
            if queue:
                task = queue.popleft()
                running[actor.play.remote(task)] = (actor, task)

        for _ in range(n):
            actors.append(remote.remote(config))
            submit(actors[-1])
        replaced = 0
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            actor, task = running.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except ray.exceptions.RayActorError as exc:
                replaced += 1
                if replaced > MAX_REPLACEMENTS:
                    raise DistributedError(f"match actors keep dying ({replaced} so far); "
                                           f"last: {exc}") from None
                queue.appendleft(task)  # the game is played again from its own seed
                actor = remote.remote(config)
                actors.append(actor)
                submit(actor)
                continue
            yield result
            submit(actor)
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()
