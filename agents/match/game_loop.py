"""The referee of a game in play (:class:`Referee`) and the loop that drives it with two
players (:func:`play_game`).

The rules of a game in play are written once, in :class:`Referee`: the per-move
:class:`Clock` (a move that takes longer loses on time; a Sci-Damath capture may take any
time), resignation, draw offers and their answers, illegal moves (refused with a clear
error; :meth:`Referee.illegal_move` scores one as a loss), abandoning, take-backs, and the
result and termination of a finished game. It is stepwise: the match loop below drives it
game by game, and the web app (:mod:`damii_app.serve.live`) drives it move by move. What a
player answers on its turn (a move, a resignation, a draw offer, an illegal move) is a
:class:`Reply`, and :meth:`Referee.apply` is the one place that applies it.

:func:`play_game` is the loop that both matches (:mod:`damii_agents.match.worker`) and
human play (:mod:`damii_app.play`) run through. Before each move the player to move is
asked its optional hooks ``wants_resign`` and ``offers_draw`` (the opponent's
``accepts_draw`` decides); its ``choose`` may also raise :class:`Resign`,
:class:`OfferDraw` or :class:`Abandon`. A move that takes longer than the clock allows
loses on time, and an illegal move loses at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from damii_agents.base import Abandon, Forfeit, OfferDraw, Resign
from damii_env import Game, Move
from damii_env.errors import DamiiError, GameOverError, InvalidOptionError
from damii_env.player import Player
from damii_env.rules import make_rules

CLOCK_PRESETS: dict[str, float | None] = {"standard": 60.0, "blitz": 15.0, "none": None}
"""Seconds per move of the named clocks: Damii's rules give 60 s a move in standard play
and 15 s in blitz; Damath's rules give one minute a move (the ``standard`` clock)."""
SAFETY_TURN_LIMIT = 400
"""Plies after which a game of a variant without its own turn limit is cut (a draw)."""
COLOURS = ("white", "black")


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


def won_by(side: int, termination: str) -> GameEnd:
    """The end of a game won by `side` (0 White, 1 Black)."""
    return GameEnd(side, "1-0" if side == 0 else "0-1", termination)


AGREED_DRAW = GameEnd(None, "1/2-1/2", "agreed draw")


def ask(player: Any, hook: str, game: Game) -> bool:
    """Call an optional boolean hook of a player (False when it has none)."""
    fn = getattr(player, hook, None)
    return bool(fn(game)) if callable(fn) else False


@dataclass(frozen=True)
class Reply:
    """What the player to move answered on its turn (:meth:`Referee.apply` applies it)."""

    move: Move | str | None = None
    """The move (a :class:`~damii_env.Move` or PDN text); None with ``offers_draw``: a draw
    offered instead of a move."""
    seconds: float | None = None
    """Seconds the move took (None: the time since the turn began)."""
    resign: bool = False
    offers_draw: bool = False
    abandon: bool = False
    """The game stops unfinished (a person quit)."""
    forfeit: str | None = None
    """The player cannot play on and loses; the reason (e.g. its engine exited)."""


class Referee:
    """The rules of one game in play, applied step by step.

    ``referee = Referee(game, clock)``; then, while ``referee.end`` is None:
    ``referee.apply(reply)`` for what the player to move answered (a :class:`Reply`), or
    the single steps: ``referee.play(move, seconds)`` for the move of ``referee.to_move``
    (an illegal move is refused with :class:`~damii_env.errors.IllegalMoveError` and
    changes nothing; a move over the clock loses on time), ``resign(side)``,
    ``offer_draw(side)`` and ``answer_draw(side, accept)``, ``time_forfeit(side)``,
    ``illegal_move(text)``, ``abandon()``, ``disconnection(side)``, ``check_time()`` (the
    side to move loses once its time is up). Every ending sets ``referee.end`` (a
    :class:`GameEnd`) once; a finished game refuses further steps with a
    :class:`~damii_env.errors.GameOverError`.

    `now` is the time source of the turn timer (seconds; ``time.monotonic`` by default).
    """

    def __init__(self, game: Game, clock: Clock = Clock(),
                 now: Callable[[], float] = time.monotonic) -> None:
        self.game, self.clock, self._now = game, clock, now
        self.end: GameEnd | None = None
        self.end_on_board = False
        """Whether the game ended by the board (no move, turn limit), not by a person."""
        self.draw_offer: int | None = None
        """The side whose draw offer stands, if any."""
        self.turn_started = now()
        self._board_end()

    @classmethod
    def start(cls, variant: str, clock: Clock = Clock(), fen: str | None = None,
              now: Callable[[], float] = time.monotonic, **options: Any) -> Referee:
        """A new game of `variant` (from `fen`), with the safety turn limit where needed."""
        options = game_options(variant, **options)
        game = Game.from_fen(fen, variant, **options) if fen else Game(variant, **options)
        return cls(game, clock, now)

    # --- state -------------------------------------------------------------------------
    @property
    def to_move(self) -> int:
        """The side to move (0 White, 1 Black)."""
        return self.game.turn

    @property
    def over(self) -> bool:
        return self.end is not None

    def clock_applies(self) -> bool:
        """Whether the move to play now is timed (not for a Sci-Damath capture)."""
        return self.clock.seconds is not None and not (
            self.clock.captures_exempt and any(m.is_capture for m in self.game.legal_moves()))

    def remaining(self) -> float | None:
        """Seconds left for the move to play now (None: no clock, exempt, or over)."""
        if self.over or not self.clock_applies():
            return None
        assert self.clock.seconds is not None
        return self.clock.seconds - (self._now() - self.turn_started)

    def require_playing(self) -> None:
        """Raise GameOverError once the game has ended."""
        if self.end is not None:
            raise GameOverError(f"the game is over ({self.end.result}, "
                                f"{self.end.termination})")

    def _side(self, side: int) -> int:
        if side not in (0, 1):
            raise InvalidOptionError(f"side must be 0 (White) or 1 (Black), got {side!r}")
        return side

    def _finish(self, end: GameEnd, on_board: bool = False) -> GameEnd:
        self.end, self.end_on_board, self.draw_offer = end, on_board, None
        return end

    def _board_end(self) -> None:
        if self.end is None and self.game.is_over():
            outcome = self.game.outcome()
            assert outcome is not None
            self._finish(GameEnd(outcome.winner, outcome.result(), outcome.termination),
                         on_board=True)

    # --- steps -------------------------------------------------------------------------
    def play(self, move: Move | str, seconds: float | None = None) -> GameEnd | None:
        """The side to move plays `move`, which took `seconds` (None: the time since its
        turn began). Over the clock it loses on time and the move is not made; after the
        move an offer made to the mover lapses. Returns ``self.end``."""
        self.require_playing()
        legal = self.game.parse_move(move)  # IllegalMoveError: refused, nothing changes
        side = self.to_move
        if seconds is None:
            seconds = self._now() - self.turn_started
        if self.clock.overstepped(seconds, legal):
            return self._finish(won_by(1 - side, "time forfeit"))
        self.game.push(legal)
        if self.draw_offer == 1 - side:
            self.draw_offer = None
        self.turn_started = self._now()
        self._board_end()
        return self.end

    def apply(self, reply: Reply,
              answer_draw: Callable[[], bool] | None = None) -> GameEnd | None:
        """Apply what the player to move answered: a resignation or abandoning ends the
        game; a draw offer goes to the other side; then the move is played (an illegal
        one loses, one over the clock loses on time). With `answer_draw` the other side
        answers the offer at once, before the move (an accepted offer ends the game and
        the move is not played); without it the offer stands after the move, for the
        other side to answer later. Returns ``self.end``."""
        self.require_playing()
        side = self.to_move
        if reply.resign:
            return self.resign(side)
        if reply.abandon:
            return self.abandon()
        if reply.forfeit is not None:
            return self._finish(won_by(1 - side, reply.forfeit))
        if reply.offers_draw and answer_draw is not None:
            self.offer_draw(side)
            if self.answer_draw(1 - side, answer_draw()) is not None:
                return self.end
        if reply.offers_draw and reply.move is None:
            if answer_draw is None:
                self.offer_draw(side)
            return self.end
        if reply.move is None:
            return self.illegal_move(None)
        try:
            self.play(reply.move, reply.seconds)
        except DamiiError:
            return self.illegal_move(reply.move)
        if reply.offers_draw and answer_draw is None and self.end is None:
            self.offer_draw(side)
        return self.end

    def check_time(self) -> GameEnd | None:
        """The side to move loses on time once its time is up. Returns ``self.end``."""
        left = self.remaining()
        if left is not None and left < 0:
            self.time_forfeit(self.to_move)
        return self.end

    def time_forfeit(self, side: int) -> GameEnd:
        """`side` loses on time."""
        self.require_playing()
        return self._finish(won_by(1 - self._side(side), "time forfeit"))

    def illegal_move(self, text: object) -> GameEnd:
        """The side to move tried the illegal move `text` and loses."""
        self.require_playing()
        return self._finish(won_by(1 - self.to_move, f"illegal move {text}"))

    def disconnection(self, side: int) -> GameEnd:
        """`side` lost the connection and did not come back within the grace time."""
        self.require_playing()
        return self._finish(won_by(1 - self._side(side), "disconnection"))

    def resign(self, side: int) -> GameEnd:
        """`side` resigns."""
        self.require_playing()
        return self._finish(won_by(1 - self._side(side), "resignation"))

    def offer_draw(self, side: int) -> None:
        """`side` offers a draw; it stands until answered or until the other side moves."""
        self.require_playing()
        self.draw_offer = self._side(side)

    def answer_draw(self, side: int, accept: bool) -> GameEnd | None:
        """`side` accepts (an agreed draw) or declines the offer of the other side."""
        self.require_playing()
        if self.draw_offer is None:
            raise InvalidOptionError("no draw is on offer")
        if self._side(side) == self.draw_offer:
            raise InvalidOptionError(f"{COLOURS[side]} cannot answer its own draw offer")
        if accept:
            return self._finish(AGREED_DRAW)
        self.draw_offer = None
        return None

    def finish(self, end: GameEnd, on_board: bool = False) -> GameEnd:
        """End the game as a rule outside this referee says (a claimed repetition, a
        match's game clock or disqualification); `on_board`: it can be taken back."""
        self.require_playing()
        return self._finish(end, on_board)

    def abandon(self, termination: str = "abandoned") -> GameEnd:
        """The game stops unfinished (result ``*``)."""
        self.require_playing()
        return self._finish(GameEnd(None, "*", termination))

    def take_back(self) -> Move:
        """Take back the last move (a game that ended by the board plays on; one ended by
        a person or the clock cannot be taken back)."""
        if self.end is not None and not self.end_on_board:
            raise InvalidOptionError(f"the game ended by {self.end.termination}; "
                                     f"it cannot be taken back")
        if not self.game.move_stack:
            raise InvalidOptionError("there is no move to take back")
        move = self.game.pop()
        self.end, self.end_on_board, self.draw_offer = None, False, None
        self.turn_started = self._now()
        return move


MoveCallback = Callable[[Game, Move, int], None]
"""Called after each move with the game, the move and the side (0 White) that made it."""


def play_game(game: Game, players: Sequence[Player], clock: Clock = Clock(),
              on_move: MoveCallback | None = None) -> GameEnd:
    """Play `game` on to its end between ``players[0]`` (White) and ``players[1]``."""
    for p in players:  # a searching player keeps within the clock (see BaseAgent.set_clock)
        hook = getattr(p, "set_clock", None)
        if callable(hook):
            hook(clock.seconds)
    referee = Referee(game, clock)
    while referee.end is None:
        side, ply = referee.to_move, len(game.move_stack)
        _turn(referee, players[side], players[1 - side])
        if on_move is not None and len(game.move_stack) > ply:
            on_move(game, game.move_stack[-1], side)
    assert referee.end is not None
    return referee.end


def _turn(referee: Referee, player: Player, other: Player) -> None:
    """One turn of the player to move, each answer applied by the referee: its hooks
    ``wants_resign`` and ``offers_draw``, then its ``choose`` (a :class:`Resign`,
    :class:`Abandon` or :class:`OfferDraw` raised there is its answer; an offer declined
    asks it again)."""
    game = referee.game

    def answer_draw() -> bool:
        return ask(other, "accepts_draw", game)

    if ask(player, "wants_resign", game):
        referee.apply(Reply(resign=True))
        return
    if ask(player, "offers_draw", game) and \
            referee.apply(Reply(offers_draw=True), answer_draw) is not None:
        return
    start = time.perf_counter()
    while referee.end is None:
        try:
            choice = player.choose(game)
        except Resign:
            referee.apply(Reply(resign=True))
        except Abandon:
            referee.apply(Reply(abandon=True))
        except Forfeit as exc:
            referee.apply(Reply(forfeit=str(exc) or "forfeit"))
        except OfferDraw:
            if referee.apply(Reply(offers_draw=True), answer_draw) is None:
                ask(player, "draw_declined", game)
            continue
        else:
            referee.apply(Reply(move=choice, seconds=time.perf_counter() - start))
        return


def game_options(variant: str, **options: Any) -> dict[str, Any]:
    """Rule options for match games: `options` plus the safety turn limit where needed."""
    if make_rules(variant, **options).turn_limit == 0:
        return {**options, "turn_limit": SAFETY_TURN_LIMIT}
    return dict(options)
