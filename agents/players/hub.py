"""Any draughts engine that speaks the Hub protocol (Scan's; dame-rs's ``dame hub``, the
project's own ``damii hub``) as a player: ``hub:"dame hub",time=0.1`` (docs/HUB.md).

One engine process a :class:`HubPlayer`, started when the player is built, told
``new-game`` before each game (:meth:`HubPlayer.reset`) and ended by :meth:`HubPlayer.close`
(also when the player is garbage-collected or the process exits). The engine dies with
the thread that started it (Linux: ``PR_SET_PDEATHSIG``), so no engine is left behind
after Ctrl-C, a crash, SIGTERM or SIGKILL.

An engine that exits, answers nothing within its time and a margin, answers garbage or
plays an illegal move loses that game: :meth:`HubPlayer.choose` raises
:class:`HubEngineError` (a :class:`~damii_agents.base.Forfeit`), whose message the match
writes as the game's termination; an engine that exited or hung is started again for the
next game.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Mapping
from typing import Any

from damii_agents.base import CLOCK_SHARE, BaseAgent, Forfeit
from damii_env import hub as H
from damii_env.errors import DamiiError, IllegalMoveError
from damii_env.game import Game, Move

START_TIMEOUT = 60.0
"""Seconds an engine has to answer ``hub`` with ``wait`` (a Python engine imports first)."""
INIT_TIMEOUT = 300.0
"""Seconds an engine has to answer ``init`` with ``ready`` (it may load or compile:
``damii hub``'s first ``init`` on an empty numba cache compiles the rules and the search:
113 s on the 2-core machine at load 1.3-1.8, and the same compile took 170 s at load 3)."""
DEFAULT_TIME = 0.1
"""Seconds a move (``level move-time``) when the spec gives no time, depth or nodes: as
``pretrained:NAME``."""
MARGIN = 1.0
"""Seconds past its time an engine may take before it loses (at least; also
:data:`MARGIN_SHARE` of its time)."""
MARGIN_SHARE = 0.5
NO_LIMIT_WAIT = 300.0
"""Seconds a depth- or node-limited engine may take a move when there is no clock (the
spec's ``timeout=`` sets another)."""
QUIT_GRACE = 1.0
"""Seconds an engine has to exit after ``quit`` before it is killed."""
CHUNK = 65536
"""Bytes read from an engine's output at a time (a line is cut at
:data:`~damii_env.hub.MAX_LINE` characters as it comes, never read whole)."""
MAX_QUEUED = 10_000
"""Lines of an engine's output waiting to be read: an engine that writes more than this
between two reads floods, and loses."""
LEVELS = ("time", "depth", "nodes")
"""The spec options sent as ``level`` (``time`` as ``move-time``)."""

PR_SET_PDEATHSIG = 1
_LIBC = None
if sys.platform.startswith("linux"):  # loaded here: never between fork and exec
    with contextlib.suppress(OSError):
        _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)

_LIVE: weakref.WeakSet[HubPlayer] = weakref.WeakSet()


class HubEngineError(Forfeit, DamiiError):
    """An outside engine that cannot play on: it could not start, exited, hung, answered
    garbage or played an illegal move. In a game it loses (a Forfeit); elsewhere it is a
    :class:`~damii_env.errors.DamiiError` with the same message."""


def _die_with_parent(parent: int) -> Any:
    """A ``preexec_fn``: the child gets SIGKILL when the thread that started it ends
    (Linux; elsewhere :meth:`HubPlayer.close` and ``atexit`` end it)."""
    def preexec() -> None:
        if _LIBC is not None:
            _LIBC.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl: do not outlive it
            os._exit(1)
    return preexec


def split_command(command: str) -> list[str]:
    """The program and arguments of a command (split as a shell would, no shell run); a
    clear error when it is empty or its program is not found."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise HubEngineError(f"cannot read the engine command {command!r:.100}: {exc}") \
            from None
    if not argv:
        raise HubEngineError('an engine command is needed, e.g. hub:"dame hub"')
    if shutil.which(argv[0]) is None:
        raise HubEngineError(f"engine command {command!r:.100}: {argv[0]!r:.80} is not an "
                             f"executable program (not found on PATH or not executable)")
    return argv


class HubPlayer(BaseAgent):
    """A player whose moves come from a Hub engine process (``hub:"COMMAND"``).

    `level` holds the spec's ``time``, ``depth`` or ``nodes`` (sent as ``level``), `params`
    the engine parameters (sent as ``set-param``), `timeout` the seconds a move may take
    before the engine loses (default: its time and a margin, or the clock's). The engine
    is started and initialised here; a :class:`HubEngineError` says why it could not be.
    """

    def __init__(self, command: str, variant: str = "international",
                 level: Mapping[str, float] | None = None,
                 params: Mapping[str, str] | None = None, timeout: float | None = None,
                 name: str | None = None) -> None:
        self.command = command
        self.argv = split_command(command)
        self.variant = variant
        self.hub_variant = H.hub_variant(variant)
        self.level = dict(level or {})
        self.params = dict(params or {})
        self.timeout = timeout
        self.name = name or f'hub:"{command}"'
        self.engine_name = self.argv[0]
        self.last_info: dict[str, str] = {}
        """The last ``info`` of the engine's last search (depth, score, pv...)."""
        self.last_error: str | None = None
        self._last_line = ""
        self._clock: float | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue(MAX_QUEUED)
        self._flooded = threading.Event()
        self._stderr: deque[str] = deque(maxlen=20)
        self._pumps: list[threading.Thread] = []
        """The threads reading the engine's output and error output."""
        self._new_game = False
        _LIVE.add(self)
        self._start()

    # --- the process ---------------------------------------------------------------------
    def _start(self) -> None:
        """Start the engine and go through ``hub``, ``set-param`` and ``init``."""
        self.close()
        self._lines, self._stderr = queue.Queue(MAX_QUEUED), deque(maxlen=20)
        self._flooded = threading.Event()
        self.last_error, self._last_line = None, ""
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, bufsize=0, start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()))
        except OSError as exc:
            raise HubEngineError(f"cannot start the engine {self.command!r:.100}: "
                                 f"{exc.strerror or exc}") from None
        self._proc = proc
        self._pumps = []
        lines, flooded = self._lines, self._flooded

        def queue_line(line: str | None) -> bool:
            try:
                lines.put_nowait(line)
            except queue.Full:  # more than MAX_QUEUED lines unread: the engine floods
                flooded.set()
                return False
            return True

        def keep_error(line: str | None) -> bool:
            if line is not None:
                self._stderr.append(line)
            return True

        for stream, sink in ((proc.stdout, queue_line), (proc.stderr, keep_error)):
            pump = threading.Thread(target=_pump, args=(stream, sink), daemon=True,
                                    name=f"hub-{proc.pid}")
            pump.start()
            self._pumps.append(pump)
        try:
            self._handshake()
        except BaseException:
            self.close()
            raise

    def _handshake(self) -> None:
        self._send("hub")
        params: dict[str, dict[str, str]] = {}
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            command, args = self._expect(deadline, START_TIMEOUT, "answer hub with wait")
            if command == "wait":
                break
            if command == "id" and args.get("name"):
                self.engine_name = args["name"][:40]
            elif command == "param" and args.get("name"):
                params[args["name"]] = args
        self._set_variant(params.get("variant"))
        for key, value in self.params.items():
            if key not in params:
                raise HubEngineError(
                    f"engine {self.command!r:.80} has no parameter {key!r:.40}; its "
                    f"parameters: {', '.join(params) or 'none'} (time=, depth=, nodes= and "
                    f"timeout= are the player's own options)")
            self._send(H.format_line("set-param", name=key, value=value))
        self._send("init")
        deadline = time.monotonic() + INIT_TIMEOUT
        while self._expect(deadline, INIT_TIMEOUT, "answer init with ready")[0] != "ready":
            pass

    def _set_variant(self, declared: Mapping[str, str] | None) -> None:
        """Ask for this player's variant (``normal`` needs nothing unless the engine
        declares another default); a clear error if the engine does not play it."""
        want = self.hub_variant
        if declared is None:
            if want != "normal":
                raise HubEngineError(
                    f"engine {self.command!r:.80} declares no variant parameter: it plays "
                    f"International draughts (normal) only, not {self.variant}")
            return
        values = declared.get("values", "").split()
        if values and want not in values:
            raise HubEngineError(f"engine {self.command!r:.80} plays {', '.join(values)}, "
                                 f"not {want} ({self.variant})")
        if declared.get("value") != want:
            self._send(H.format_line("set-param", name="variant", value=want))

    def _send(self, line: str) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise self._exited()
        try:
            proc.stdin.write((line + "\n").encode("utf-8"))
            proc.stdin.flush()
        except (OSError, ValueError):
            raise self._exited() from None

    def _exited(self) -> HubEngineError:
        """The error of an engine whose output ended: its exit status and last words."""
        proc, status = self._proc, None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = proc.wait(QUIT_GRACE)
            for pump in self._pumps:  # its last error output may still be on the way
                pump.join(QUIT_GRACE)
        said = f"; it said: error {self.last_error!r}" if self.last_error else ""
        if self._stderr:
            said += f"; its last error output: {self._stderr[-1][:200]!r}"
        self.close()
        if status is None:
            return HubEngineError(f"engine {self.engine_name} closed its output without "
                                  f"exiting (it was stopped){said}")
        return HubEngineError(f"engine {self.engine_name} exited (exit status {status}){said}")

    def _expect(self, deadline: float, limit: float, what: str) -> tuple[str, dict[str, str]]:
        """The engine's next line that is not empty, before `deadline`; it loses
        (:class:`HubEngineError`) if its output ends, it floods its output, or the time
        runs out (checked before every line: an engine that keeps talking still loses on
        time)."""
        while True:
            if self._flooded.is_set():
                self.close()
                raise HubEngineError(f"engine {self.engine_name} wrote more than "
                                     f"{MAX_QUEUED} lines without being read (it floods "
                                     f"its output)")
            try:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise queue.Empty
                line = self._lines.get(timeout=left)
            except queue.Empty:
                self.close()
                said = f"; its last error: {self.last_error!r}" if self.last_error else (
                    f"; its last line: {self._last_line[:80]!r}" if self._last_line else "")
                raise HubEngineError(f"engine {self.engine_name} did not {what} within "
                                     f"{limit:.3g} s{said}") from None
            if line is None:
                raise self._exited()
            self._last_line = line
            command, args = H.parse_line(line)
            if command == "error":
                self.last_error = args.get("message", line)[:200]
            if command:
                return command, args

    def _drain(self) -> bool:
        """Drop what the engine said after its last answer (a late line must not answer
        the next search); False if its output has ended."""
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                return True
            if line is None:
                return False

    def close(self) -> None:
        """End the engine (``quit``, then killed if it does not exit at once)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(b"quit\n")
                proc.stdin.flush()
        try:
            proc.wait(QUIT_GRACE)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(QUIT_GRACE)
        with contextlib.suppress(OSError):  # what it started in its group ends with it
            os.killpg(proc.pid, signal.SIGKILL)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()

    def __del__(self) -> None:
        try:  # no contextlib here: at interpreter exit module globals may be gone
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at exit
            pass

    def __enter__(self) -> HubPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the player ----------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """A new game: ``new-game`` (an engine that exited or hung starts again at the
        next move)."""
        self._new_game = True

    def set_clock(self, seconds: float | None) -> None:
        """The match's seconds a move: an engine's time is kept within a share of it."""
        self._clock = seconds

    def _level(self) -> tuple[str, float]:
        """The ``level`` line of a move and the seconds the engine has to answer."""
        clock = self._clock
        if "depth" in self.level or "nodes" in self.level:
            key = "depth" if "depth" in self.level else "nodes"
            line = H.format_line("level", **{key: int(self.level[key])})
            wait = clock if clock is not None else NO_LIMIT_WAIT
        else:
            wait = float(self.level.get("time", DEFAULT_TIME))
            if clock is not None:
                wait = min(wait, CLOCK_SHARE * clock)
            line = H.format_line("level", move_time=f"{wait:.3f}")
        if self.timeout is not None:
            return line, self.timeout
        return line, wait + max(MARGIN, MARGIN_SHARE * wait)

    def choose(self, game: Game) -> Move:
        """The engine's move in `game`; :class:`HubEngineError` (the game is lost) if it
        exits, hangs, answers garbage or plays an illegal move."""
        if self._proc is None or self._proc.poll() is not None or not self._drain():
            self._start()
        elif self._new_game:
            self._send("new-game")
        self._new_game = False
        args, tail = H.position_args(game)
        moves = " ".join(H.move_text(m) for m in tail)
        self._send(H.format_line("pos", **args, moves=moves or None))
        level, limit = self._level()
        self._send(level)
        self._send("go think")
        deadline = time.monotonic() + limit
        self.last_info, self.last_error, self._last_line = {}, None, ""
        while True:
            command, args = self._expect(deadline, limit, "answer with a move")
            if command == "info":
                self.last_info = args
            elif command == "done":
                break
        text = args.get("move", "")
        try:
            return H.parse_move(game, text)
        except IllegalMoveError as exc:
            if "cannot read" in str(exc):
                raise HubEngineError(f"engine {self.engine_name} answered garbage: done "
                                     f"move={text!r:.40}") from None
            raise HubEngineError(f"illegal move {text} by engine {self.engine_name}") \
                from None


def _pump(stream: Any, sink: Any) -> None:
    """Copy a stream's lines to `sink` (None once it ends), read in chunks of
    :data:`CHUNK` bytes: a line is cut at :data:`~damii_env.hub.MAX_LINE` characters and
    the rest of it dropped as it comes (an engine that writes a gigabyte without a newline
    costs no memory). Stops when `sink` answers False."""
    fd = stream.fileno()
    part, dropping = bytearray(), False
    limit = H.MAX_LINE
    with contextlib.suppress(OSError, ValueError):
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            start = 0
            while True:
                newline = chunk.find(b"\n", start)
                piece = chunk[start:] if newline < 0 else chunk[start:newline]
                if not dropping:
                    part += piece[:max(0, limit - len(part))]
                    dropping = len(part) >= limit
                if newline < 0:
                    break
                text = part.decode("utf-8", errors="replace").rstrip("\r")
                part, dropping = bytearray(), False
                if not sink(text):
                    return
                start = newline + 1
    if part:
        sink(part.decode("utf-8", errors="replace").rstrip("\r"))
    sink(None)


@atexit.register
def close_all() -> None:
    """End every engine still running (at the interpreter's exit)."""
    for player in list(_LIVE):
        with contextlib.suppress(Exception):
            player.close()
