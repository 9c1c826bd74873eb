"""What every built-in player shares: :class:`BaseAgent` gives the optional hooks of
:class:`damii_env.player.Player` (the one player protocol: a ``name`` and
``choose(game) -> Move``) their defaults; the exceptions a player raises to resign, offer a
draw or leave a game.
"""

from __future__ import annotations

from damii_agents import deprecation
from damii_env import Game, Move
from damii_env.player import Player


class Resign(Exception):
    """Raised by a player's ``choose`` to resign the game."""


class OfferDraw(Exception):
    """Raised by a player's ``choose`` to offer a draw; it is asked again if declined."""


class Abandon(Exception):
    """Raised by a player's ``choose`` to leave the game unfinished (result ``*``)."""


class Forfeit(Exception):
    """Raised by a player's ``choose`` that cannot play on (its engine exited, hung,
    answered garbage or an illegal move): it loses the game, the message as the reason."""


CLOCK_SHARE = 0.5
"""Part of a match clock's time per move that a searching player may use (the rest is
margin)."""


class BaseAgent:
    """Defaults for the optional hooks: never resign, never offer or accept a draw."""

    name: str = "agent"

    def choose(self, game: Game) -> Move:  # pragma: no cover - abstract
        raise NotImplementedError

    def reset(self, seed: int | None = None) -> None:
        """Called before each game; seeds any randomness of the agent."""

    def wants_resign(self, game: Game) -> bool:
        """Asked before each of the agent's moves."""
        return False

    def offers_draw(self, game: Game) -> bool:
        """Asked before each of the agent's moves."""
        return False

    def accepts_draw(self, game: Game) -> bool:
        """Asked when the opponent offers a draw."""
        return False

    def set_clock(self, seconds: float | None) -> None:
        """Told before each game how many seconds a move may take (None: no clock)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def __getattr__(name: str) -> object:
    """0.1.0's ``Agent`` (the player protocol, ``damii_env.Player``), with a
    DeprecationWarning naming it, until 0.3.0."""
    if name != "Agent":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    deprecation.warn(__name__, name)
    return Player
