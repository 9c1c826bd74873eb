"""Rule sets as data.

A variant is a :class:`Rules` value: one frozen dataclass that names every rule
dimension the engine knows. The engine is written once and reads these fields;
there is no per-variant copy of the move generator. The four presets (``damii``,
``international``, ``triestine`` and ``damath``, i.e. Sci-Damath) live in
:data:`PRESETS`; :func:`make_rules` builds a rule set from a preset name and
option overrides and checks every value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from damii_env.errors import InvalidOptionError, UnknownVariantError

Orientation = Literal["standard", "mirrored"]
KingRange = Literal["flying", "short"]
Removal = Literal["end_of_sequence", "immediate"]
PromotionMidCapture = Literal["stays_man", "crowns_and_ends"]
Precedence = Literal["free", "most_pieces", "triestine", "damath"]
Scoring = Literal["none", "damath"]
FirstPlayer = Literal["first", "second", "random"]

ORIENTATIONS: tuple[str, ...] = ("standard", "mirrored")
KING_RANGES: tuple[str, ...] = ("flying", "short")
REMOVALS: tuple[str, ...] = ("end_of_sequence", "immediate")
PROMOTIONS: tuple[str, ...] = ("stays_man", "crowns_and_ends")
PRECEDENCES: tuple[str, ...] = ("free", "most_pieces", "triestine", "damath")
SCORINGS: tuple[str, ...] = ("none", "damath")
FIRST_PLAYERS: tuple[str, ...] = ("first", "second", "random")
CHIP_SET_NAMES: tuple[str, ...] = (
    "counting", "whole", "integer", "fraction", "rational", "radical", "polynomial"
)


@dataclass(frozen=True)
class Rules:
    """Every rule dimension of a draughts variant the engine plays."""

    name: str
    """Preset name this rule set was built from (``damii``, ``international``, ``triestine``,
    ``damath``)."""
    board_size: int = 10
    """N of the N x N board (even, 4..16)."""
    orientation: Orientation = "standard"
    """``standard``: dark squares have r + c odd (bottom-left dark); ``mirrored``: r + c even."""
    men_rows: int = 4
    """Rows of men each side starts with."""
    men_capture_backward: bool = True
    """Men capture backwards as well as forwards (they always move forwards only)."""
    king_range: KingRange = "flying"
    """``flying``: kings move and capture at any distance; ``short``: one square."""
    men_capture_kings: bool = True
    """Whether a man may capture an enemy king (Triestine: no, a king is a wall to men)."""
    removal: Removal = "end_of_sequence"
    """When captured pieces come off: after the whole sequence, or at once."""
    promotion_mid_capture: PromotionMidCapture = "stays_man"
    """A man reaching the far row mid-capture: jumps on as a man, or is crowned and stops."""
    precedence: Precedence = "free"
    """Which complete capture sequences are legal: all (``free``), the most pieces,
    the Triestine levels, or Damath's most-chips-then-dama."""
    repetition: int = 3
    """A position occurring this many times is a draw (0 switches the rule off)."""
    repetition_claim: int = 0
    """A position occurring this many times lets either player claim a draw, and the game
    goes on until one does (:meth:`~damii_env.game.Game.claim_draw`; 0: off). Damii's rule
    for people's games is 3 with ``repetition=0``; the engine itself never claims."""
    no_progress_moves: int = 25
    """Moves by each side with only king moves and no capture before a draw (0: off)."""
    turn_limit: int = 0
    """Moves (plies) after which the game is truncated (0: no limit); with Damath scoring
    the game is over there and the totals decide."""
    scoring: Scoring = "none"
    """``damath``: each jump scores ``taker OP taken`` and every end is decided by totals."""
    chip_set: str = "integer"
    """Damath chip values: counting, whole, integer, fraction, rational, radical, polynomial."""
    lower_wins: bool = False
    """Damath scoring: the lower total wins (the Sci-Dama science games)."""
    endgame_three_moves: int = 0
    """FMJD endgame draw: three pieces, a king among them, against a lone king are drawn
    after this many moves by each side (0: off; 16 in International draughts)."""
    endgame_two_moves: int = 0
    """FMJD endgame draw: two pieces or fewer, a king among them, against a lone king are
    drawn after this many moves by each side (0: off; 5 in International draughts)."""
    first_player: FirstPlayer = "first"
    """Who moves first: the player on the bottom rows (White, ``first``), the top
    (``second``), or drawn by the seed (``random``)."""

    def __post_init__(self) -> None:
        _check_rules(self)

    @property
    def n_squares(self) -> int:
        """Number of playable (dark) squares, N*N/2."""
        return self.board_size * self.board_size // 2

    @property
    def n_actions(self) -> int:
        """Size of the action space: N*N/2 squares x 4 directions x (N-1) distances."""
        return self.n_squares * 4 * (self.board_size - 1)

    def replace(self, **options: Any) -> Rules:
        """Return a copy with some rule options changed (checked like :func:`make_rules`)."""
        return _apply_options(self, options)

    def without_draw_rules(self) -> Rules:
        """A copy with every rule that ends a game without a result off: repetition, the
        no-progress rule, the turn limit and the endgame draws (perft counts paths)."""
        return self.replace(repetition=0, no_progress_moves=0, turn_limit=0,
                            endgame_three_moves=0, endgame_two_moves=0)


def _check_choice(field: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InvalidOptionError(
            f"rule option {field!r} cannot be {value!r}; allowed values: {', '.join(allowed)}"
        )


MAX_NO_PROGRESS_MOVES = 1000
"""Largest ``no_progress_moves``: the position history of a batch is sized by it."""


def _check_int(field: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidOptionError(
            f"rule option {field!r} must be an integer from {low} to {high}, got {value!r}"
        )


def _check_claim(rules: Rules) -> None:
    """The repetition claim: 0 (off) or at least 2, and not after the automatic draw."""
    claim, auto = rules.repetition_claim, rules.repetition
    _check_int("repetition_claim", claim, 0, 1000)
    if claim == 1:
        raise InvalidOptionError(
            "rule option 'repetition_claim' must be 0 (off) or at least 2, got 1")
    if claim and auto and auto <= claim:
        raise InvalidOptionError(
            f"rule option 'repetition_claim' is {claim} but 'repetition' is {auto}: the game "
            f"would end by itself when the position occurs {auto} times, before anyone could "
            f"claim; set "
            f"repetition=0 (claims only) or above {claim}")


def _check_rules(rules: Rules) -> None:
    _check_int("board_size", rules.board_size, 4, 16)
    if rules.board_size % 2:
        raise InvalidOptionError(f"rule option 'board_size' must be even, got {rules.board_size}")
    _check_choice("orientation", rules.orientation, ORIENTATIONS)
    _check_int("men_rows", rules.men_rows, 0, rules.board_size // 2 - 1)
    _check_choice("king_range", rules.king_range, KING_RANGES)
    _check_choice("removal", rules.removal, REMOVALS)
    _check_choice("promotion_mid_capture", rules.promotion_mid_capture, PROMOTIONS)
    _check_choice("precedence", rules.precedence, PRECEDENCES)
    _check_int("repetition", rules.repetition, 0, 1000)
    if rules.repetition == 1:
        raise InvalidOptionError("rule option 'repetition' must be 0 (off) or at least 2, got 1")
    _check_claim(rules)
    # each game keeps 2 * no_progress_moves + 2 position hashes: 1000 moves is 16 KB a game
    _check_int("no_progress_moves", rules.no_progress_moves, 0, MAX_NO_PROGRESS_MOVES)
    _check_int("turn_limit", rules.turn_limit, 0, 1_000_000)
    _check_int("endgame_three_moves", rules.endgame_three_moves, 0, 1000)
    _check_int("endgame_two_moves", rules.endgame_two_moves, 0, 1000)
    _check_choice("scoring", rules.scoring, SCORINGS)
    _check_choice("chip_set", rules.chip_set, CHIP_SET_NAMES)
    _check_choice("first_player", rules.first_player, FIRST_PLAYERS)
    if rules.scoring == "damath" and rules.board_size != 8:
        raise InvalidOptionError(
            f"Damath scoring needs the 8x8 board (its operation grid), got {rules.board_size}"
        )
    if rules.scoring == "damath" and rules.orientation != "mirrored":
        # its chips and operations are laid out on the dark squares of that board only: in
        # the standard orientation no chip would stand on a dark square
        raise InvalidOptionError(
            f"Damath scoring is played on its own board, orientation 'mirrored' (its chips "
            f"and operations lie on those dark squares), got orientation "
            f"{rules.orientation!r}; leave orientation out")
    for field in ("men_capture_backward", "men_capture_kings", "lower_wins"):
        if not isinstance(getattr(rules, field), bool):
            raise InvalidOptionError(
                f"rule option {field!r} must be true or false, got {getattr(rules, field)!r}"
            )


PRESETS: dict[str, Rules] = {
    "damii": Rules(name="damii", orientation="mirrored", precedence="free"),
    "international": Rules(name="international", orientation="standard", precedence="most_pieces",
                           endgame_three_moves=16, endgame_two_moves=5),
    "triestine": Rules(
        name="triestine",
        orientation="standard",
        men_capture_backward=False,
        king_range="short",
        men_capture_kings=False,
        removal="immediate",
        promotion_mid_capture="crowns_and_ends",
        precedence="triestine",
    ),
    "damath": Rules(
        name="damath",
        board_size=8,
        orientation="mirrored",
        men_rows=3,
        removal="immediate",
        precedence="damath",
        no_progress_moves=0,
        turn_limit=100,
        scoring="damath",
    ),
}
"""The rule presets by variant name."""

OPTION_NAMES: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(Rules) if f.name != "name"
)


def _apply_options(base: Rules, options: dict[str, Any]) -> Rules:
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise InvalidOptionError(
            f"unknown rule option(s) {', '.join(unknown)}; known options: {', '.join(OPTION_NAMES)}"
        )
    options = {k: v for k, v in options.items() if v is not None}
    return dataclasses.replace(base, **options)


def make_rules(variant: str | Rules = "damii", **options: Any) -> Rules:
    """Build the rule set of a preset (``damii``, ``international``, ``triestine``, ``damath``).

    Keyword options override fields of :class:`Rules` (``orientation="standard"``,
    ``turn_limit=200``, ...); ``None`` leaves a field as the preset has it.
    """
    if isinstance(variant, Rules):
        base = variant
    else:
        if not isinstance(variant, str) or variant.lower() not in PRESETS:
            raise UnknownVariantError(
                f"unknown variant {variant!r}; expected one of: {', '.join(PRESETS)}"
            )
        base = PRESETS[variant.lower()]
    return _apply_options(base, options)
