"""damii-env: draughts variants (Damii, International, Triestine) for reinforcement learning.

* :class:`Game` / :class:`Move` / :func:`perft` — one game at a time, python-chess style;
* :class:`Engine` / :class:`State` — the vectorized engine that steps B games at once;
* :func:`make_rules` / :class:`Rules` — rule sets as data, presets in :data:`PRESETS`.
"""

from .engine import Engine, State
from .errors import (
    DamiiError,
    GameOverError,
    IllegalActionError,
    IllegalMoveError,
    InvalidFenError,
    InvalidOptionError,
    UnknownVariantError,
)
from .game import Game, Move, Outcome, perft
from .rules import PRESETS, Rules, make_rules

__version__ = "0.1.0"

VARIANTS: tuple[str, ...] = tuple(PRESETS)

__all__ = [
    "DamiiError",
    "Engine",
    "Game",
    "GameOverError",
    "IllegalActionError",
    "IllegalMoveError",
    "InvalidFenError",
    "InvalidOptionError",
    "Move",
    "Outcome",
    "PRESETS",
    "Rules",
    "State",
    "UnknownVariantError",
    "VARIANTS",
    "make_rules",
    "perft",
]
