"""Sci-Damath's classroom match (its rulebook's rules 1-8 and 15-16, docs/DAMATH.md): the
match clock (:class:`MatchRules`: 20 minutes of play, then the totals decide; one minute
a move, captures excepted; a warning and a forced move after the minute; the fourth
violation disqualifies), touch move, the coin toss, and the score sheet a player keeps.

:class:`ClassroomMatch` is the state of one match (violations, time used, the touched
chip, the forced moves); :class:`~damii_app.serve.live.LiveGame` drives it, and the
game's :class:`~damii_agents.match.game_loop.Referee` ends the game when it says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from damii_agents.match.game_loop import GameEnd, won_by
from damii_env import Game, Move
from damii_env.damath import chips_of
from damii_env.errors import IllegalMoveError, InvalidOptionError

NAME = "sci-damath"
"""The clock spec of the match: ``sci-damath``, ``sci-damath:touch``, or with its times
``sci-damath:move=SECONDS,game=MINUTES`` (tests use seconds)."""
MOVE_SECONDS = 60.0
"""Rule 6: one minute a move (recording included), captures excepted."""
GAME_MINUTES = 20.0
"""Rule 16: the game ends after 20 minutes."""
DISQUALIFIED_AT = 4
"""Rule 8: the fourth violation of the minute disqualifies."""
_ITEM = re.compile(r"^(touch|move=[0-9]{1,4}(\.[0-9]{1,3})?|game=[0-9]{1,3}(\.[0-9]{1,3})?)$")


@dataclass(frozen=True)
class MatchRules:
    """The settings of a classroom match (the rulebook's by default)."""

    move_seconds: float = MOVE_SECONDS
    game_minutes: float = GAME_MINUTES
    touch_move: bool = False

    @classmethod
    def parse(cls, text: str) -> MatchRules | None:
        """The match a clock spec names (None: the spec is not ``sci-damath...``)."""
        head, _, rest = text.strip().lower().partition(":")
        if head.strip() != NAME:
            return None
        values: dict[str, Any] = {}
        for item in filter(None, (t.strip() for t in rest.split(","))):
            if not _ITEM.match(item):
                raise InvalidOptionError(
                    f"clock {text!r:.60}: cannot read {item!r:.30}; expected sci-damath, "
                    f"sci-damath:touch or sci-damath:move=SECONDS,game=MINUTES,touch")
            key, _, value = item.partition("=")
            if key == "touch":
                values["touch_move"] = True
            else:
                values["move_seconds" if key == "move" else "game_minutes"] = float(value)
        rules = cls(**values)
        if not 0.5 <= rules.move_seconds <= 600 or not 0.05 <= rules.game_minutes <= 300:
            raise InvalidOptionError(
                f"clock {text!r:.60}: a move's time must be 0.5 to 600 seconds and the "
                f"game's 0.05 to 300 minutes (the rulebook: move=60, game=20)")
        return rules

    @property
    def seconds(self) -> float:
        """The time of a move (the clock's per-move seconds)."""
        return self.move_seconds

    @property
    def game_seconds(self) -> float:
        return self.game_minutes * 60

    def __str__(self) -> str:
        items = []
        if self.move_seconds != MOVE_SECONDS:
            items.append(f"move={self.move_seconds:g}")
        if self.game_minutes != GAME_MINUTES:
            items.append(f"game={self.game_minutes:g}")
        if self.touch_move:
            items.append("touch")
        return NAME + (":" + ",".join(items) if items else "")

    def describe(self) -> str:
        """The match's rules in words (the PDN's Clock tag, the page)."""
        return (f"Sci-Damath match: {self.game_minutes:g} min a game, {self.move_seconds:g} s "
                f"a move (captures exempt), the {DISQUALIFIED_AT}th violation disqualifies"
                + (", touch move" if self.touch_move else ""))


@dataclass
class ClassroomMatch:
    """The state of one classroom match."""

    rules: MatchRules
    violations: list[int] = field(default_factory=lambda: [0, 0])
    used: list[float] = field(default_factory=lambda: [0.0, 0.0])
    """Seconds each side has used on its finished turns (the game clock is their sum)."""
    forced: list[int] = field(default_factory=list)
    """Plies (0-based) the arbiter played after a violation."""
    touched: int | None = None
    """The square of the chip the player to move has touched (touch move)."""

    def game_left(self, turn_seconds: float) -> float:
        """Seconds left of the game's time, the turn in progress having taken
        `turn_seconds`."""
        return self.rules.game_seconds - sum(self.used) - turn_seconds

    def turn_over(self, side: int, seconds: float) -> None:
        """`side` has moved after `seconds`: its time is counted, the touch forgotten."""
        self.used[side] += max(0.0, seconds)
        self.touched = None

    def forced_move(self, game: Game) -> Move:
        """The move the arbiter plays: the first legal move, in the order of
        :meth:`~damii_env.Game.legal_moves` (the page's list), of the touched chip if one
        was touched, else of all."""
        legal = game.legal_moves()
        of_touched = [m for m in legal if m.path[0] == self.touched]
        return (of_touched or legal)[0]

    def touch(self, game: Game, square: int) -> None:
        """The player to move touches the chip on `square` (touch move): it must move."""
        if not self.rules.touch_move:
            raise InvalidOptionError("this match is not played with touch move")
        if self.touched is not None and self.touched != square:
            raise IllegalMoveError(f"touch move: the chip on {self.touched} was touched "
                                   f"and must move")
        if not any(m.path[0] == square for m in game.legal_moves()):
            raise IllegalMoveError(f"the chip on {square} has no legal move; touch move "
                                   f"binds only a chip that can move")
        self.touched = square

    def check_move(self, move: Move) -> None:
        """Touch move: a move of another chip than the touched one is refused."""
        if self.touched is not None and move.path[0] != self.touched:
            raise IllegalMoveError(f"touch move: the chip on {self.touched} was touched "
                                   f"and must move, not the one on {move.path[0]}")

    def kept(self, side: int) -> dict[str, Any]:
        """What the database keeps of one side (in its seat's entry)."""
        return {"violations": self.violations[side], "used": round(self.used[side], 3),
                "forced": list(self.forced), "touched": self.touched}

    def restore(self, seats: list[dict[str, Any]]) -> None:
        """Take up what :meth:`kept` wrote in the seats' entries."""
        for side, seat in enumerate(seats[:2]):
            self.violations[side] = int(seat.get("violations", 0))
            self.used[side] = float(seat.get("used", 0.0))
        self.forced = sorted({int(p) for seat in seats for p in seat.get("forced", [])})
        touched = next((seat.get("touched") for seat in seats[:2]
                        if seat.get("touched") is not None), None)
        self.touched = None if touched is None else int(touched)

    def check_touched(self, game: Game) -> None:
        """Forget a kept touch that binds no chip able to move (a changed database)."""
        if self.touched is not None and not any(m.path[0] == self.touched
                                                for m in game.legal_moves()):
            self.touched = None


def totals_end(game: Game, minutes: float) -> GameEnd:
    """The end at the game clock (rule 16): the totals decide (rules 18-20: each side's
    score plus its chips left, a dama's value doubled; the greater total wins, the lower
    with ``lower_wins``; equal totals draw)."""
    tw, tb = game.totals()
    how = f"time up after {minutes:g} min, totals {tw} to {tb}"
    if tw == tb:
        return GameEnd(None, "1/2-1/2", how)
    return won_by(0 if (float(tw) > float(tb)) != game.rules.lower_wins else 1, how)


def disqualified(side: int) -> GameEnd:
    """`side` is disqualified at its fourth violation of the minute (rule 8), whatever
    the score sheet says."""
    return won_by(1 - side, f"disqualification ({DISQUALIFIED_AT}th time violation)")


def sheet_row(before: Game, move: Move, forced: bool = False) -> dict[str, Any]:
    """One line of the score sheet: `move` played from the position `before` (which it
    changes: the move is pushed)."""
    move = before.parse_move(move)  # the legal move, with its jumps' arithmetic
    table = chips_of(before.rules.chip_set)
    info = before.engine.square_info
    board, chips = before.board(), before.chips()
    side, ply, start = before.turn, before.ply, move.path[0] - 1
    taker = table[int(chips[start])]
    was_dama = abs(int(board[start])) == 2
    jumps = [{"op": j.op, "taker": str(j.taker), "taken": str(j.taken),
              "multiplier": j.multiplier, "points": str(j.points)} for j in move.jumps]
    before.push(move)
    xy = ("x" if move.captured else "-").join(
        f"({int(info[s - 1][1])},{int(info[s - 1][2])})" for s in move.path)
    return {"ply": ply + 1, "number": ply // 2 + 1, "side": ("white", "black")[side],
            "move": str(move), "xy": xy, "chip": taker.label, "dama": was_dama,
            "crowned": move.crowns,
            "jumps": jumps,
            "points": str(move.score) if move.captured and move.score is not None else None,
            "scores": [str(s) for s in before.scores()], "forced": forced}


class ScoreSheet:
    """The score sheet of a Sci-Damath game as a player keeps it, one row a move (number,
    side, the move in square numbers and Damath (x, y), the moving chip and whether it is
    or becomes a dama, each capture's operation and points, the running scores, a forced
    move marked); kept up to date move by move (:meth:`rows`)."""

    def __init__(self) -> None:
        self._replay: Game | None = None
        self._rows: list[dict[str, Any]] = []
        self._moves: list[str] = []

    def rows(self, game: Game, forced: list[int] | tuple[int, ...] = ()) -> list[dict[str, Any]]:
        """The rows of `game`'s moves (none for a game without Sci-Damath scoring)."""
        if not game.engine.scoring:
            return []
        played = [str(m) for m in game.move_stack]
        if self._replay is None or played[:len(self._moves)] != self._moves:
            self._replay = Game.from_fen(game.start_fen, game.rules)
            self._rows, self._moves = [], []
        for move in game.move_stack[len(self._moves):]:
            self._rows.append(sheet_row(self._replay, move))
            self._moves.append(str(move))
        return [dict(r, forced=r["ply"] - 1 in forced) for r in self._rows]


def sheet_csv(rows: list[dict[str, Any]], totals: tuple[Any, Any], result: str,
              termination: str | None, violations: list[int] | None = None) -> str:
    """The score sheet as CSV (one line a move; the totals and the result at the end)."""
    def cell(text: Any) -> str:
        text = str(text)
        return f'"{text}"' if any(c in text for c in ',"\n') else text

    lines = ["ply,move,side,notation,coordinates,chip,dama,operations,points,"
             "score white,score black,note"]
    for r in rows:
        ops = " + ".join(f"{j['taker']} {j['op']} {j['taken']}"
                         + (f" (x{j['multiplier']})" if j["multiplier"] > 1 else "")
                         for j in r["jumps"])
        dama = "dama" if r["dama"] else ("becomes dama" if r["crowned"] else "")
        note = "forced by the arbiter" if r["forced"] else ""
        lines.append(",".join(cell(v) for v in (
            r["ply"], r["number"], r["side"], r["move"], r["xy"], r["chip"], dama, ops,
            r["points"] or "", *r["scores"], note)))
    lines.append(f"totals (chips left added; damas doubled),,,,,,,,,{cell(totals[0])},"
                 f"{cell(totals[1])},")
    if violations is not None:
        lines.append(f"violations of the minute,,,,,,,,,{violations[0]},{violations[1]},")
    lines.append(f"result,{cell(result)},,,,,,,,,,{cell(termination or '')}")
    return "\n".join(lines) + "\n"
