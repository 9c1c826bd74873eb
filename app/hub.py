"""``damii hub``: the project's players as a Hub engine on standard input and output (the
protocol of Scan, version 2; docs/HUB.md), for draughts GUIs, lidraughts-bot, pydraughts'
``HubEngine`` or another ``damii`` as a ``hub:`` player.

The main loop reads commands; a search runs in a thread, so that ``ping``, ``stop`` and
``ponder-hit`` are read while it thinks (the compiled search holds Python's lock while an
iteration runs: they are answered between iterations). Parameters: ``variant`` (normal,
i.e. International, damii, triestine, damath) and ``player`` (a player spec;
``pretrained``, the default, is ``pretrained:<variant>``).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from damii_agents.registry import PlayerSpec
from damii_env import __version__
from damii_env import hub as H
from damii_env.errors import DamiiError
from damii_env.game import Game, Move
from damii_env.player import Player

MAX_DEPTH = 64
"""The deepest iteration of an open search (``level infinite``, ``go analyze``,
``go ponder``)."""
MOVES_TO_GO = 30
"""Moves a ``level time=`` clock is shared over when ``moves=`` is not given."""
WIN_SCORE = 90.0
"""The score (in men) written for a forced win."""


@dataclass
class Search:
    """One ``go``: the position, the mode, the level, and its stop flags."""

    game: Game
    mode: str
    level: dict[str, str]
    stop: threading.Event
    deadline: float | None = None
    """For an open search: perf_counter() after which no new iteration starts."""


class HubEngine:
    """The engine's state between commands, and its answers (written to `out`)."""

    def __init__(self, out: TextIO = sys.stdout, variant: str = "normal",
                 player: str = "pretrained", allow_programs: bool = False) -> None:
        self.out = out
        self.allow_programs = allow_programs
        """Whether ``set-param name=player`` may name a ``hub:`` player (a program)."""
        self._lock = threading.Lock()
        self.variant = H.variant_of(variant)
        self.player_spec = player
        self.player: Player | None = None
        self.game: Game | None = None
        self.level: dict[str, str] = {}
        self.search: Search | None = None
        self.thread: threading.Thread | None = None

    # --- output --------------------------------------------------------------------------
    def say(self, line: str) -> None:
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def error(self, message: str) -> None:
        self.say(H.format_line("error", message=" ".join(str(message).split())[:400]))

    # --- commands ------------------------------------------------------------------------
    def handle(self, line: str) -> bool:
        """Do one command; False once the engine should quit."""
        command, args = H.parse_line(line)
        if command == "quit":
            self.stop_search()
            return False
        if command == "ping":
            self.say("pong")
        elif command == "stop":
            self.stop_search()
        elif command == "ponder-hit":
            self._ponder_hit()
        elif command in self.COMMANDS:
            if command != "level" and command != "pos":
                self._wait()  # a new search, new parameters or a new game: the last one ends
            try:
                getattr(self, self.COMMANDS[command])(args)
            except DamiiError as exc:
                self.error(str(exc))
            except Exception as exc:  # noqa: BLE001 - the GUI gets the reason, the engine lives
                self.error(f"{command}: {type(exc).__name__}: {exc}")
        return True  # anything else is ignored, as the protocol asks

    COMMANDS = {"hub": "cmd_hub", "set-param": "cmd_set_param", "init": "cmd_init",
                "new-game": "cmd_new_game", "pos": "cmd_pos", "level": "cmd_level",
                "go": "cmd_go"}

    def cmd_hub(self, args: dict[str, str]) -> None:
        self.say(H.format_line("id", name="damii", version=__version__, author="damii-env"))
        self.say(H.format_line("param", name="variant", value=H.hub_variant(self.variant),
                               type="enum", values=" ".join(H.VARIANTS)))
        self.say(H.format_line("param", name="player", value=self.player_spec,
                               type="string"))
        self.say("wait")

    def cmd_set_param(self, args: dict[str, str]) -> None:
        name, value = args.get("name", ""), args.get("value", "")
        if name == "variant":
            self.variant = H.variant_of(value)
            self.player = None
            self.game = None
        elif name == "player":
            spec = self._spec(value)  # checked now: a bad spec is refused, the last one kept
            if spec.kind == "hub" and not self.allow_programs:
                raise DamiiError("player hub:... runs a program, and damii hub runs none "
                                 "named by its input; start it with --allow-programs (or "
                                 "--player) to play an outside engine")
            self.player_spec, self.player = value.strip(), None

    def _spec(self, text: str | None = None) -> PlayerSpec:
        """The parsed player spec (``pretrained`` is ``pretrained:<variant>``)."""
        text = (text if text is not None else self.player_spec).strip()
        kind, sep, rest = text.partition(",")
        if kind.lower() == "pretrained":
            text = f"pretrained:{self.variant}" + sep + rest
        return PlayerSpec.parse(text)

    def cmd_init(self, args: dict[str, str]) -> None:
        try:
            self._player()
            self._warm_up()
        except Exception as exc:  # noqa: BLE001 - e.g. ckpt: without torch: say so, go on
            self.player = None
            self.error(f"player {self.player_spec!r}: {type(exc).__name__}: {exc}")
        self.say("ready")

    def _player(self) -> Player:
        if self.player is None:
            self.player = self._spec().build(self.variant)
        return self.player

    def _warm_up(self) -> None:
        """A one-move search, so that the compiled search is ready for the first move."""
        player = self.player
        if _is_alphabeta(player):
            saved = _limits(player)
            _set_limits(player, depth=1)
            player.choose(Game(self.variant))
            _set_limits(player, *saved)
            player.reset()

    def cmd_new_game(self, args: dict[str, str]) -> None:
        reset = getattr(self.player, "reset", None)
        if callable(reset):
            reset()

    def cmd_pos(self, args: dict[str, str]) -> None:
        self.game = None
        self.game = H.read_position(args, self.variant)

    def cmd_level(self, args: dict[str, str]) -> None:
        for key in ("depth", "nodes", "move-time", "time", "moves", "inc"):
            if key in args:
                _positive(key, args[key])
        self.level = dict(args)

    def cmd_go(self, args: dict[str, str]) -> None:
        mode = next((m for m in ("think", "ponder", "analyze") if m in args), "think")
        if self.game is None:
            raise DamiiError("no position to search: send pos first (pos pos=... or "
                             "pos fen=\"...\")")
        if not self.game.legal_moves():
            raise DamiiError(f"the position is over ({self.game.result()}): no move to search")
        player = self._player()
        self.search = Search(self.game.copy(), mode, dict(self.level), threading.Event())
        self.thread = threading.Thread(target=self._think, args=(player, self.search),
                                       daemon=True, name="damii-hub-search")
        self.thread.start()

    # --- searching -----------------------------------------------------------------------
    def stop_search(self) -> None:
        """Stop the search in progress (it answers done with its best move so far)."""
        if self.search is not None:
            self.search.stop.set()

    def _ponder_hit(self) -> None:
        search = self.search
        if search is not None and search.mode == "ponder":
            search.mode = "think"
            seconds = _move_time(search.level)
            if seconds is not None:
                search.deadline = time.perf_counter() + seconds

    def _wait(self) -> None:
        """Let a search in progress end (a think ends by its level; an open one is
        stopped) before the next command changes the engine."""
        if self.thread is not None:
            if self.search is not None and self.search.mode != "think":
                self.search.stop.set()
            self.thread.join()
            self.thread = None

    def _think(self, player: Player, search: Search) -> None:
        """The search thread: info lines, then ``done``."""
        try:
            move = self._search(player, search)
        except Exception as exc:  # noqa: BLE001 - the GUI gets the reason, the engine lives
            self.error(f"search failed: {type(exc).__name__}: {exc}")
            return
        self.say(H.format_line("done", move=H.move_text(move)))

    def _search(self, player: Player, search: Search) -> Move:
        """The move: one call of the player for a bounded level, iterations one depth at a
        time (each with its info line) for a depth level or an open search."""
        game, level = search.game, search.level
        open_search = "infinite" in level or (search.mode != "think" and not
                                              {"depth", "nodes", "move-time", "time"} & set(level))
        if not _is_alphabeta(player):
            return player.choose(game)
        saved = _limits(player)
        try:
            if open_search or "depth" in level:
                top = int(level["depth"]) if "depth" in level else MAX_DEPTH
                return self._iterate(player, search, top)
            if "nodes" in level:
                _set_limits(player, nodes=int(level["nodes"]))
            elif _move_time(level) is not None:  # iterations, so that stop is heard
                seconds = _move_time(level)
                assert seconds is not None
                return self._iterate_timed(player, search, time.perf_counter() + seconds)
            move = player.choose(game)
            self._info(player, move, player.search_time, player.nodes)
            return move
        finally:
            _set_limits(player, *saved)

    def _iterate(self, player: Any, search: Search, top: int) -> Move:
        """Depth 1, 2, ... `top` (the table keeps what the last one found), an info line
        each, until stopped, past the deadline or a forced result."""
        start, nodes, move = time.perf_counter(), 0, None
        for depth in range(1, top + 1):
            _set_limits(player, depth=depth)
            player._last_fen = None  # noqa: SLF001 - search again: its cache is per position
            move = player.choose(search.game)
            nodes += player.nodes
            self._info(player, move, time.perf_counter() - start, nodes)
            if search.stop.is_set() or abs(player.last_value) >= 1e5 or (
                    search.deadline is not None and time.perf_counter() >= search.deadline):
                break
        assert move is not None
        return move

    def _iterate_timed(self, player: Any, search: Search, until: float) -> Move:
        """A ``move-time`` search as iterations of one more depth each, every one bounded
        by the time left: ``stop`` ends it after the iteration in progress (before, one
        search of the whole time heard it only at its end: 19 s of 20)."""
        start, nodes, move = time.perf_counter(), 0, None
        for depth in range(1, MAX_DEPTH + 1):
            left = until - time.perf_counter()
            if move is not None and left <= 0:
                break
            _set_limits(player, depth=depth, time=max(left, 0.001))
            player._last_fen = None  # noqa: SLF001 - search again: its cache is per position
            move = player.choose(search.game)
            nodes += player.nodes
            self._info(player, move, time.perf_counter() - start, nodes)
            if search.stop.is_set() or abs(player.last_value) >= 1e5 or \
                    player.last_depth < depth or time.perf_counter() >= until:
                break
        assert move is not None
        return move

    def _info(self, player: Any, move: Move, seconds: float, nodes: int) -> None:
        value = float(player.last_value)
        score = math.copysign(WIN_SCORE, value) if abs(value) >= 1e5 else value / 100
        nps = nodes / seconds / 1e6 if seconds > 0 else 0.0
        text = f"{score:.2f}".replace("-0.00", "0.00")
        self.say(H.format_line("info", depth=player.last_depth, score=text,
                               nodes=nodes, time=f"{seconds:.3f}", nps=f"{nps:.2f}",
                               pv=H.move_text(move)))


def _is_alphabeta(player: Any) -> bool:
    """Whether `player` is the alpha-beta (its limits can be set, it tells its search)."""
    return all(hasattr(player, a) for a in ("depth", "time_limit", "max_nodes", "last_value",
                                            "last_depth", "nodes", "search_time"))


def _limits(player: Any) -> tuple[int | None, float | None, int | None]:
    return player.depth, player.time_limit, player.max_nodes


def _set_limits(player: Any, depth: int | None = None, time: float | None = None,
                nodes: int | None = None) -> None:
    player.depth, player.time_limit, player.max_nodes = depth, time, nodes


def _positive(key: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value >= 0):
        raise DamiiError(f"level {key}={text!r:.30}: expected a number >= 0")
    return value


def _move_time(level: dict[str, str]) -> float | None:
    """The seconds a move of a ``level move-time=`` or ``level [moves=] time= [inc=]``
    (the increment counts before the move; at most half of what is left)."""
    if "move-time" in level:
        return max(_positive("move-time", level["move-time"]), 0.001)
    if "time" not in level:
        return None
    left = _positive("time", level["time"]) + _positive("inc", level.get("inc", "0"))
    moves = _positive("moves", level["moves"]) if "moves" in level else MOVES_TO_GO
    return max(min(left / max(moves, 1.0), left / 2), 0.001)


def read_lines(inp: TextIO, limit: int = H.MAX_LINE) -> Iterator[str]:
    """The input's lines, each cut at `limit` characters as it is read (the rest of a
    longer line is read in pieces and dropped: a 600 MB line costs no memory)."""
    while True:
        line = inp.readline(limit)
        if not line:
            return
        if not line.endswith("\n"):
            while True:  # drop the rest of a long line
                rest = inp.readline(limit)
                if not rest or rest.endswith("\n"):
                    break
        yield line


def run(inp: TextIO = sys.stdin, out: TextIO = sys.stdout, variant: str = "normal",
        player: str = "pretrained", allow_programs: bool = False) -> HubEngine:
    """Read commands until ``quit`` or the end of the input; returns the engine (its
    search thread may still run: the caller exits). `allow_programs`: ``set-param
    name=player`` may name a ``hub:`` player (it runs a program)."""
    engine = HubEngine(out, variant, player, allow_programs)
    for line in read_lines(inp):
        if not engine.handle(line):
            break
    engine.stop_search()  # the input ended: the GUI is gone
    return engine
