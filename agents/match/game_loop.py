"""One game between two players, with a per-move clock, resignation and agreed draws.

:func:`play_game` is the loop that both matches (:mod:`damii_agents.match.worker`) and
human play (:mod:`damii_app.play`) run through. Before each move the player to move is
asked its
optional hooks ``wants_resign`` and ``offers_draw`` (the opponent's ``accepts_draw``
decides); its ``choose`` may also raise :class:`Resign`, :class:`OfferDraw` or
:class:`Abandon`. A move that takes longer than the :class:`Clock` allows loses on time,
and an illegal move loses at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from damii_agents.base import Abandon, Agent, OfferDraw, Resign

from damii_env import Game, Move
from damii_env.errors import DamiiError, InvalidOptionError
from damii_env.rules import make_rules

CLOCK_PRESETS: dict[str, float | None] = {"standard": 60.0, "blitz": 15.0, "none": None}
"""Seconds per move of the named clocks: Damii's rules give 60 s a move in standard play
and 15 s in blitz; Damath's rules give one minute a move (the ``standard`` clock)."""
SAFETY_TURN_LIMIT = 400
"""Plies after which a game of a variant without its own turn limit is cut (a draw)."""


@dataclass(frozen=True)
class Clock:
    """A per-move time limit; ``seconds=None`` is no clock."""

    seconds: float | None = None
    captures_exempt: bool = False
    """Damath: a capturing move may take any time (rule 6)."""

    @classmethod
    def parse(cls, spec: str | float | None, variant: str = "damii", **options: Any) -> Clock:
        """``standard``, ``blitz``, ``none`` or a number of seconds, for a variant."""
        rules = make_rules(variant, **options)
        if spec is None or isinstance(spec, int | float):
            seconds = None if spec is None else float(spec)
        elif spec.strip().lower() in CLOCK_PRESETS:
            seconds = CLOCK_PRESETS[spec.strip().lower()]
        else:
            try:
                seconds = float(spec)
            except ValueError:
                raise InvalidOptionError(
                    f"clock {spec!r}: expected standard, blitz, none or seconds per move"
                ) from None
        if seconds is not None and not seconds > 0:
            raise InvalidOptionError(f"clock must be a positive number of seconds, got {spec!r}")
        return cls(seconds=seconds, captures_exempt=rules.scoring == "damath")

    def overstepped(self, elapsed: float, move: Move) -> bool:
        """Whether a move that took `elapsed` seconds loses on time."""
        if self.seconds is None or (self.captures_exempt and move.is_capture):
            return False
        return elapsed > self.seconds

    def __str__(self) -> str:
        if self.seconds is None:
            return "none"
        return f"{self.seconds:g} s/move" + (" (captures exempt)" if self.captures_exempt else "")


@dataclass(frozen=True)
class GameEnd:
    """How a game ended: the winner (0 White, 1 Black, None), PDN result and reason."""

    winner: int | None
    result: str
    termination: str

    @property
    def white_points(self) -> float:
        """Points of White: 1, 0, or 1/2 for a draw, a cut or an unfinished game."""
        return 0.5 if self.winner is None else 1.0 - self.winner


def _won_by(side: int, termination: str) -> GameEnd:
    return GameEnd(side, "1-0" if side == 0 else "0-1", termination)


def _ask(player: Agent, hook: str, game: Game) -> bool:
    """Call an optional boolean hook of a player (False when it has none)."""
    fn = getattr(player, hook, None)
    return bool(fn(game)) if callable(fn) else False


MoveCallback = Callable[[Game, Move, int], None]
"""Called after each move with the game, the move and the side (0 White) that made it."""


def play_game(game: Game, players: Sequence[Agent], clock: Clock = Clock(),
              on_move: MoveCallback | None = None) -> GameEnd:
    """Play `game` on to its end between ``players[0]`` (White) and ``players[1]``."""
    for p in players:  # a searching player keeps within the clock (see BaseAgent.set_clock)
        hook = getattr(p, "set_clock", None)
        if callable(hook):
            hook(clock.seconds)
    while not game.is_over():
        side = game.turn
        player, other = players[side], players[1 - side]
        if _ask(player, "wants_resign", game):
            return _won_by(1 - side, "resignation")
        if _ask(player, "offers_draw", game) and _ask(other, "accepts_draw", game):
            return GameEnd(None, "1/2-1/2", "agreed draw")
        start = time.perf_counter()
        while True:
            try:
                choice = player.choose(game)
                break
            except Resign:
                return _won_by(1 - side, "resignation")
            except Abandon:
                return GameEnd(None, "*", "abandoned")
            except OfferDraw:
                if _ask(other, "accepts_draw", game):
                    return GameEnd(None, "1/2-1/2", "agreed draw")
                _ask(player, "draw_declined", game)
        elapsed = time.perf_counter() - start
        try:
            move = game.parse_move(choice)
        except DamiiError:
            return _won_by(1 - side, f"illegal move {choice}")
        if clock.overstepped(elapsed, move):
            return _won_by(1 - side, "time forfeit")
        game.push(move)
        if on_move is not None:
            on_move(game, move, side)
    outcome = game.outcome()
    assert outcome is not None
    return GameEnd(outcome.winner, outcome.result(), outcome.termination)


def game_options(variant: str, **options: Any) -> dict[str, Any]:
    """Rule options for match games: `options` plus the safety turn limit where needed."""
    if make_rules(variant, **options).turn_limit == 0:
        return {**options, "turn_limit": SAFETY_TURN_LIMIT}
    return dict(options)
