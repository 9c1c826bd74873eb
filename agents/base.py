"""The player interface shared by every built-in agent, the arena and human play."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from damii_env import Game, Move


@runtime_checkable
class Agent(Protocol):
    """A player: given a game, choose a full move.

    Agents may also implement the optional hooks of :class:`BaseAgent` (resign, draw
    offers). ``name`` is how tables and PDN records call the player.
    """

    name: str

    def choose(self, game: Game) -> Move: ...


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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
