"""What the players of a trained network share (:mod:`~damii_agents.players.policy_player`,
:mod:`~damii_agents.players.tree_player`, :mod:`~damii_agents.players.minimax_player`):
the network's evaluator, the rules it was trained for, and the loop that plays a move
hop by hop, each hop picked from the player's preferences over the legal hops. Needs
torch (the ``train`` extra)."""

from __future__ import annotations

import numpy as np
import torch

from damii_agents.base import BaseAgent
from damii_agents.checkpoint import CheckpointError
from damii_agents.search.evaluator import NetworkEvaluator
from damii_env import Game, Move
from damii_env.engine import Engine, State

MODES = ("argmax", "sample")
"""How a network player picks a hop from its preferences: the best, or drawn by them."""


class NetworkPlayer(BaseAgent):
    """A player that picks its hops from a network's preferences (see :meth:`hop_weights`):
    the best (``argmax``) or drawn in proportion (``sample``)."""

    def __init__(self, evaluator: NetworkEvaluator, mode: str = "argmax",
                 seed: int | None = None, name: str = "neural") -> None:
        self.evaluator = evaluator
        evaluator.net.eval()
        self.mode = mode
        self.name = name
        self.torch_rng = torch.Generator().manual_seed(seed if seed is not None else 0)
        self.np_rng = np.random.default_rng(seed)

    @property
    def engine(self) -> Engine:
        """The engine of the rules the network was trained for."""
        return self.evaluator.engine

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.np_rng = np.random.default_rng(seed)
            self.torch_rng.manual_seed(seed)

    def _check_game(self, game: Game) -> None:
        # the turn limit only cuts games short; every other rule must match the training's
        trained = self.engine.rules
        if game.rules.replace(turn_limit=0) != trained.replace(turn_limit=0):
            raise CheckpointError(f"{self.name} was trained for {trained.name} ({trained}); "
                                  f"it cannot play {game.rules.name} ({game.rules})")

    def begin_move(self) -> None:
        """Called before the hops of each move (a time-limited search starts its clock)."""

    def hop_weights(self, state: State, evaluator: NetworkEvaluator) -> np.ndarray:
        """Preferences (A,) over the actions of game 0 of `state` (0 at illegal ones),
        the evaluator the one for the game's engine."""
        raise NotImplementedError  # pragma: no cover - implemented by the players

    def choose(self, game: Game) -> Move:
        self._check_game(game)
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        if len(moves) == 1:
            return moves[0]
        evaluator = self.evaluator.for_engine(game.engine)
        state = game.state.copy()
        turn = int(state.turn[0])
        hops: list[int] = []
        self.begin_move()
        while int(state.turn[0]) == turn and not state.done[0]:
            p = self.hop_weights(state, evaluator)
            self._check_weights(p, state, game)
            if self.mode == "argmax":
                a = int(np.argmax(p))
            else:
                a = int(torch.multinomial(torch.from_numpy(p / p.sum()), 1,
                                          generator=self.torch_rng))
            hops.append(a)
            game.engine.step(state, np.array([a]))
        for m in moves:
            if m.actions == tuple(hops):
                return m
        raise RuntimeError(f"hops {hops} form no legal move")  # unreachable: mask is sound


    def _check_weights(self, p: np.ndarray, state: State, game: Game) -> None:
        """Refuse preferences that pick no legal hop: a network whose outputs are NaN or
        infinite here (huge weights overflow) would otherwise play action 0, illegal."""
        legal = state.legal[0, :int(state.n_legal[0])].astype(np.int64)
        if not np.isfinite(p).all() or not p[legal].sum() > 0:
            raise CheckpointError(
                f"{self.name}: the network gives NaN or infinite values for this position "
                f"({game.fen()}), so it cannot choose a move; its weights are broken (too "
                f"large?): use another checkpoint or train it again")


def on_legal(state: State, engine: Engine, weights: np.ndarray) -> np.ndarray:
    """Weights (n_legal,) of game 0's legal hops, in the order of its legal list, as
    weights (A,) over every action (0 elsewhere)."""
    p = np.zeros(engine.n_actions)
    k = int(state.n_legal[0])
    p[state.legal[0, :k].astype(np.int64)] = weights
    return p
