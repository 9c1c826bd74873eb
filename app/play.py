"""``damii play``: one game in the terminal, a person (:class:`HumanAgent`) against an
agent, played by the match's own referee (:func:`~damii_agents.match.game_loop.play_game`)
and saved as PDN.

On a terminal the person's clock counts down at the prompt and the game ends the moment the
time is up (:class:`~damii_agents.players.human.TerminalInput`); while the agent works the
terminal says it is thinking (and the engine says so when it must compile first).

Ctrl-C ends the game anywhere, at the prompt or while the agent thinks: the game is saved
unfinished (result ``*``) and :attr:`PlayResult.interrupted` is set (``damii play`` exits
with status 130). The agent works in a thread of its own, so that Ctrl-C never lands inside
its compiled search (numba cannot pass an exception up through a compiled call: it used to
end in a ``SystemError`` traceback, with no PDN saved)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from damii_agents.base import Abandon
from damii_agents.match.game_loop import Clock, GameEnd, game_options, play_game
from damii_agents.match.reports import check_writable
from damii_agents.players.human import (
    COLOURS,
    HumanAgent,
    InputFn,
    OutputFn,
    TerminalInput,
    marked_board,
    move_label,
)
from damii_agents.registry import PlayerSpec
from damii_env import Game, Move
from damii_env.errors import InvalidOptionError
from damii_env.pdn import record, write_file


@dataclass
class PlayResult:
    """A finished human game: how it ended, the game, and where its PDN was saved."""

    end: GameEnd
    game: Game
    pdn_path: Path
    quit: bool = False
    """Whether the person left with ``quit`` (an unfinished game they chose to end)."""
    interrupted: bool = False
    """Whether Ctrl-C (SIGINT) ended the game, at the prompt or while the agent thought."""
    agent_busy: bool = False
    """Whether the agent's thread was still working when the game ended (an interrupted
    search): the caller should leave the process at once (``os._exit``) rather than wait."""


def default_pdn_path() -> Path:
    return Path("runs") / "play" / f"{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.pdn"


def thinking_line(who: str, kind: str, first: bool) -> str:
    """What the terminal says while the agent `who` (of `kind`) chooses its move. Whether
    the search must be compiled first is said by the engine itself, and only when it is
    (``damii_env.compile_cache``: the packages ship the compiled code)."""
    if first and kind == "hub":
        return f"{who} is thinking… (starting the engine)"
    return f"{who} is thinking…"


class Thinking:
    """The agent's turn on the terminal: ``thinking…`` before its move; on a terminal
    (`live`) the seconds tick on that line, which the move's line then replaces."""

    def __init__(self, line: str, write: OutputFn, live: bool = False,
                 raw: Callable[[str], None] | None = None) -> None:
        self.line, self.write, self.live = line, write, live
        self.raw = raw or (lambda text: (sys.stdout.write(text), sys.stdout.flush()))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Thinking:
        if not self.live:
            self.write(self.line)
            return self
        self.raw(self.line)
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()
        return self

    def _tick(self) -> None:
        start = time.monotonic()
        while not self._stop.wait(1.0):
            self.raw(f"\r\x1b[K{self.line} {time.monotonic() - start:.0f} s")

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.raw("\r\x1b[K")


class AnnouncedAgent:
    """The agent, saying on the terminal that it is thinking while it chooses (every other
    attribute is the agent's own).

    Its answers (``choose`` and the hooks ``wants_resign``, ``offers_draw``,
    ``accepts_draw``) are worked out in a thread of its own while this thread waits, so that
    Ctrl-C is raised here, never inside the agent's compiled search. After Ctrl-C the agent
    is not asked again: its ``choose`` raises :class:`Abandon` (the game ends unfinished)."""

    HOOKS = ("wants_resign", "offers_draw", "accepts_draw", "draw_declined")
    TURN_HOOKS = ("wants_resign", "offers_draw")
    """The hooks asked at the start of the agent's own turn (the thinking starts there)."""

    def __init__(self, agent: Any, who: str, kind: str, write: OutputFn,
                 live: bool = False) -> None:
        self._agent, self._who, self._kind, self._write = agent, who, kind, write
        self._live, self._first = live, True
        self._worker: threading.Thread | None = None
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._working = threading.Event()
        self._thinking: Thinking | None = None
        self.interrupted = False
        """Whether Ctrl-C stopped the wait for one of the agent's answers."""

    @property
    def busy(self) -> bool:
        """Whether the agent's thread is still working (on an answer no longer awaited)."""
        return self._working.is_set()

    def _answer(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the agent's thread; KeyboardInterrupt here marks `interrupted`
        and raises :class:`Abandon`. The thread lives as long as the game (an engine it
        starts lives as long as the thread that started it)."""
        if self.interrupted:
            raise Abandon
        if self._worker is None:
            self._worker = threading.Thread(target=self._serve, name="damii-play-agent",
                                            daemon=True)
            self._worker.start()
        box: dict[str, Any] = {}
        done = threading.Event()
        self._working.set()
        self._jobs.put((fn, args, box, done))
        try:
            while not done.wait(0.25):
                pass
        except KeyboardInterrupt:
            self.interrupted = True
            raise Abandon from None
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _serve(self) -> None:
        """The agent's thread: each job in turn, until :meth:`close`."""
        while (job := self._jobs.get()) is not None:
            fn, args, box, done = job
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # passed on to the waiting thread
                box["error"] = exc
            finally:
                self._working.clear()
                done.set()

    def close(self) -> None:
        """End the agent's thread once its work is done (at the game's end)."""
        if self._worker is not None:
            self._jobs.put(None)
            self._worker = None

    def _think(self) -> None:
        """Say that the agent thinks, once a turn: its turn's first answer (the hook
        ``wants_resign`` searches the position that ``choose`` then plays)."""
        if self._thinking is None:
            line = thinking_line(self._who, self._kind, self._first)
            self._first = False
            self._thinking = Thinking(line, self._write, self._live)
            self._thinking.__enter__()

    def stop_thinking(self) -> None:
        """End the thinking line (its move came, or the turn ended otherwise)."""
        if self._thinking is not None:
            thinking, self._thinking = self._thinking, None
            thinking.__exit__(None, None, None)

    def choose(self, game: Game) -> Move:
        if self.interrupted:
            raise Abandon
        self._think()
        try:
            return self._answer(self._agent.choose, game)
        finally:
            self.stop_thinking()

    def _hook(self, name: str, game: Game) -> bool:
        if self.interrupted:
            return False
        if name in self.TURN_HOOKS:
            self._think()
        try:
            answer = bool(self._answer(getattr(self._agent, name), game))
        except Abandon:  # Ctrl-C: no answer; the next choose ends the game
            self.stop_thinking()
            return False
        if answer:  # it resigns or offers a draw: no move follows
            self.stop_thinking()
        return answer

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not yet set (copy, pickle): no endless lookup
            raise AttributeError(name)
        value = getattr(self._agent, name)
        if name in self.HOOKS and callable(value):
            return lambda game: self._hook(name, game)
        return value


@contextlib.contextmanager
def _ctrl_c_noted(noted: list[int]) -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt as usual and is also noted in `noted` (the person's
    prompt turns it into an abandoned game; the caller then knows it was Ctrl-C, not the
    end of the input)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN or previous is None:  # a background job: leave it so
        yield
        return

    def stop(signum: int, frame: object) -> None:
        noted.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def play_human(variant: str, opponent: str, clock: str | float | None = "none",
               colour: str = "white", pdn_path: str | Path | None = None,
               seed: int | None = None, name: str = "human", input_fn: InputFn | None = None,
               output_fn: OutputFn | None = None, **rule_options: Any) -> PlayResult:
    """Play one game, a person against the agent `opponent` (a spec), and save it as PDN."""
    if colour not in COLOURS:
        raise InvalidOptionError(f"colour must be white or black, got {colour!r}")
    pdn_path = check_writable(pdn_path or default_pdn_path())
    options = game_options(variant, **rule_options)
    the_clock = Clock.parse(clock, variant, **rule_options)
    spec = PlayerSpec.parse(opponent)
    agent = spec.build(variant, seed, **options)
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(seed)
    terminal = TerminalInput() if input_fn is None and TerminalInput.usable() else None
    human = HumanAgent(name, input_fn, output_fn, move_seconds=the_clock.seconds,
                       captures_exempt=the_clock.captures_exempt, terminal=terminal)
    output_fn = human.write
    other = 1 if colour == "white" else 0
    live = output_fn is print and terminal is not None and terminal.live
    announced = AnnouncedAgent(agent, f"{COLOURS[other]} ({opponent})", spec.kind, output_fn,
                               live)
    players = (human, announced) if colour == "white" else (announced, human)
    game = Game(variant, **options)
    timing = "no clock (casual)" if the_clock.seconds is None else \
        f"clock {the_clock}: a move that takes longer loses the game on time (the prompt " \
        f"counts down the time left)"
    output_fn(f"{game.rules.name}: you play {colour} against {opponent}; {timing}. "
              f"Type help for commands.")

    def announce(g: Game, move: Move, side: int) -> None:
        if players[side] is announced:
            output_fn(f"{COLOURS[side]} ({opponent}) plays {move_label(move)}")

    ctrl_c: list[int] = []
    with _ctrl_c_noted(ctrl_c):
        try:
            end = play_game(game, players, the_clock, on_move=announce)
        except KeyboardInterrupt:  # between turns: the game ends here all the same
            ctrl_c.append(signal.SIGINT)
            end = GameEnd(None, "*", "abandoned")
        finally:
            announced.stop_thinking()
            agent_busy = announced.busy
            announced.close()
    interrupted = bool(ctrl_c) or announced.interrupted
    if interrupted:
        output_fn("interrupted (Ctrl-C): the game ends here, unfinished")
    output_fn(marked_board(game, game.move_stack[-1] if game.move_stack else None))
    output_fn(f"result {end.result} ({end.termination})")
    white, black = (name, opponent) if colour == "white" else (opponent, name)
    pdn = record(game, white=white, black=black, result=end.result, event="damii-env play",
                 extra_tags={"Termination": end.termination, "Clock": str(the_clock)})
    try:
        path = write_file(pdn_path, [pdn])
    except OSError as exc:  # the place broke during the game: keep the game anyway
        path = write_file(default_pdn_path(), [pdn])
        output_fn(f"cannot write {str(pdn_path)!r} ({exc.strerror or exc}); "
                  f"saved the game to {path} instead")
    else:
        output_fn(f"game saved to {path}")
    return PlayResult(end, game, path, quit=human.quit, interrupted=interrupted,
                      agent_busy=agent_busy)
