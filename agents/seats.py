"""Any player as a seat in batched games that are stepped hop by hop (the trainers).

The trainers step B games at once, one hop each, and some seats are played by a
player (``alphabeta:depth=1``, a checkpoint, ``greedy``). :class:`HopSeat` adapts the
player protocol (``choose(game) -> Move``) to that: at the start of a turn it asks the
player for its full move in that game and plays the move's hops on the following
steps. A player that can pick a single hop from a batched state itself (a ``hop(engine,
state, b)`` method, as the alpha-beta player has) is asked directly at every hop.

>>> from damii_agents import PlayerSpec
>>> from damii_agents.seats import HopSeat
>>> from damii_env import Engine
>>> import numpy as np
>>> eng = Engine("damii"); state = eng.init(4)
>>> seat = HopSeat(PlayerSpec.parse("greedy").build("damii"), eng)
>>> hops = seat.hops(state, np.arange(4), np.random.default_rng(0))
>>> bool(all(h in eng.legal_actions(state, b) for b, h in enumerate(hops)))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from damii_env import Game
from damii_env.engine import Engine, State
from damii_env.player import Player


class HopSeat:
    """A player playing hops in the games of a batched engine state."""

    def __init__(self, player: Player, engine: Engine) -> None:
        self.player = player
        self.engine = engine
        self._native = getattr(player, "hop", None)
        self._plans: dict[int, list[int]] = {}
        """Remaining hops of the move each game is playing, by row."""

    @property
    def name(self) -> str:
        return getattr(self.player, "name", type(self.player).__name__)

    def _reseed(self, rng: np.random.Generator) -> None:
        reset = getattr(self.player, "reset", None)
        if callable(reset):
            reset(int(rng.integers(1 << 62)))

    def hop(self, state: State, b: int, rng: np.random.Generator) -> int:
        """The player's next hop in game `b` (seeded from `rng` at each decision)."""
        if callable(self._native):
            self._reseed(rng)
            return int(self._native(self.engine, state, int(b)))
        plan = self._plans.get(int(b))
        if int(state.continuing_square[b]) >= 0 and plan:
            return plan.pop(0)
        self._reseed(rng)
        game = Game.at(self.engine, state, int(b))
        move = game.parse_move(self.player.choose(game))
        hops = list(move.actions)
        self._plans[int(b)] = hops[1:]
        return hops[0]

    def hops(self, state: State, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The player's next hop in each game of `rows` (int64, in the order of `rows`)."""
        return np.array([self.hop(state, int(b), rng) for b in rows], dtype=np.int64)

    def state_dict(self) -> dict[str, Any]:
        """The hops still planned in each game (plain data, for exact resume)."""
        return {"plans": {int(b): list(p) for b, p in self._plans.items() if p}}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        self._plans = {int(b): [int(h) for h in p] for b, p in data.get("plans", {}).items()}
