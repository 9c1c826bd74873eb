"""Exceptions raised by damii-env.

Every error a user can cause is a subclass of :class:`DamiiError`, itself a
``ValueError``, and its message says what was wrong and what is expected.
"""

from __future__ import annotations


class DamiiError(ValueError):
    """Base class of every input error raised by damii-env."""


class UnknownVariantError(DamiiError):
    """A variant name that is not one of the presets."""


class InvalidOptionError(DamiiError):
    """A rule option that does not exist or has a value it cannot take."""


class InvalidFenError(DamiiError):
    """A position text (PDN FEN) that cannot be read."""


class IllegalMoveError(DamiiError):
    """A full move that is not legal in the current position, or unreadable move text."""


class IllegalActionError(DamiiError):
    """An action index that the action mask does not allow."""


class GameOverError(DamiiError):
    """A move or action given to a game that has already ended."""


class OpponentError(DamiiError):
    """The Gymnasium environment's opponent raised or chose an illegal move; the
    environment is left as it was before the step (or the reset) that asked it."""


class InvalidArgumentError(DamiiError):
    """An argument of an API call outside what it accepts: a batch size, a depth, an
    array of the wrong shape, dtype or values, an action that is not an integer."""


class ForeignStateError(DamiiError):
    """A :class:`~damii_env.engine.State` given to an engine that did not make it (another
    variant or other rule options); the message names both rule sets."""


class UnwritablePathError(DamiiError):
    """An output file or folder (``--out``, ``--pdn``) that cannot be written; checked
    before any game is played or anything is trained."""
