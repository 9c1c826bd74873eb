"""A player from a training checkpoint (``ckpt:path``): the policy network picks hops,
by argmax or by sampling, optionally refined by a few PUCT simulations over full moves
that use the network's priors and values. Needs torch (the ``train`` extra).
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import torch

from damii_env import Game, Move
from damii_env.engine import Engine, State
from damii_env.observation import observe
from training.checkpoint import CheckpointError, load_network
from training.network import PolicyValueNet, masked_logits

from .base import BaseAgent


class NeuralAgent(BaseAgent):
    """Plays the moves a policy-value network prefers."""

    def __init__(self, net: PolicyValueNet, variant: str, rule_options: dict, mode: str = "argmax",
                 simulations: int = 0, seed: int | None = None, device: str = "cpu",
                 name: str = "neural", c_puct: float = 1.5) -> None:
        if mode not in ("argmax", "sample"):
            raise ValueError(f"mode must be 'argmax' or 'sample', got {mode!r}")
        self.net = net.to(device).eval()
        self.variant = variant
        self.rule_options = dict(rule_options)
        self.engine = Engine(variant, **self.rule_options)
        self.mode = mode
        self.simulations = simulations
        self.device = device
        self.name = name
        self.c_puct = c_puct
        self.rng = random.Random(seed)
        self.torch_rng = torch.Generator().manual_seed(seed if seed is not None else 0)

    @classmethod
    def load(cls, path: str | Path, mode: str = "argmax", simulations: int = 0,
             seed: int | None = None, device: str = "cpu", name: str | None = None
             ) -> NeuralAgent:
        """The agent of a checkpoint file; raises CheckpointError with the reason."""
        net, data = load_network(path, device)
        return cls(net, data["variant"], data["rule_options"], mode=mode, simulations=simulations,
                   seed=seed, device=device, name=name or f"ckpt:{path}")

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng.seed(seed)
            self.torch_rng.manual_seed(seed)

    @torch.no_grad()
    def evaluate(self, state: State, engine: Engine | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Action probabilities (B, A) over legal hops and values (B,) for the movers."""
        engine = engine or self.engine
        obs = torch.from_numpy(observe(engine, state)).to(self.device)
        mask = torch.from_numpy(engine.legal_action_mask(state)).to(self.device)
        logits, value = self.net(obs)
        probs = torch.softmax(masked_logits(logits, mask), dim=-1)
        return probs.cpu().numpy(), value.cpu().numpy()

    def _check_game(self, game: Game) -> None:
        # the turn limit only cuts games short; every other rule must match the training's
        if game.rules.replace(turn_limit=0) != self.engine.rules.replace(turn_limit=0):
            raise CheckpointError(
                f"{self.name} was trained for {self.engine.rules.name} with options "
                f"{self.rule_options}; it cannot play {game.rules.name} ({game.rules})"
            )

    def choose(self, game: Game) -> Move:
        self._check_game(game)
        moves = game.legal_moves()
        if not moves:
            raise ValueError("no legal move: the game is over")
        if len(moves) == 1:
            return moves[0]
        if self.simulations > 0:
            return self._search(game, moves)
        state = game.state.copy()
        turn = int(state.turn[0])
        hops: list[int] = []
        while int(state.turn[0]) == turn and not state.done[0]:
            probs, _ = self.evaluate(state, game.engine)
            p = probs[0]
            if self.mode == "argmax":
                a = int(np.argmax(p))
            else:
                a = int(torch.multinomial(torch.from_numpy(p), 1, generator=self.torch_rng))
            hops.append(a)
            game.engine.step(state, np.array([a]))
        for m in moves:
            if m.actions == tuple(hops):
                return m
        raise RuntimeError(f"hops {hops} form no legal move")  # unreachable: mask is sound

    # --- a few PUCT simulations over full moves --------------------------------------
    def _priors(self, game: Game, moves: list[Move]) -> tuple[np.ndarray, float]:
        """Prior of each full move (product of its hop probabilities) and the position value."""
        probs, values = self.evaluate(game.state, game.engine)
        priors = np.array([probs[0, m.actions[0]] for m in moves], dtype=np.float64)
        # multi-hop moves: multiply the probabilities of the later hops
        for i, m in enumerate(moves):
            if len(m.actions) > 1:
                state = game.state.copy()
                for j, a in enumerate(m.actions[:-1]):
                    game.engine.step(state, np.array([a]))
                    p, _ = self.evaluate(state, game.engine)
                    priors[i] *= p[0, m.actions[j + 1]]
        total = priors.sum()
        priors = priors / total if total > 0 else np.full(len(moves), 1 / len(moves))
        return priors, float(values[0])

    def _search(self, game: Game, moves: list[Move]) -> Move:
        game = game.copy()
        tree: dict[str, dict] = {}

        def node(fen: str, g: Game) -> dict:
            if fen not in tree:
                ms = g.legal_moves()
                pri, val = self._priors(g, ms) if ms else (np.zeros(0), 0.0)
                tree[fen] = {"moves": ms, "prior": pri, "n": np.zeros(len(ms)),
                             "w": np.zeros(len(ms)), "value": val}
            return tree[fen]

        root = node(game.fen(), game)
        for _ in range(self.simulations):
            path = []
            g = game.copy()
            while True:
                fen = g.fen()
                fresh = fen not in tree
                nd = node(fen, g)
                if g.is_over():
                    o = g.outcome()
                    value = 0.0 if o.winner is None else (1.0 if o.winner == g.turn else -1.0)
                    break
                if fresh:
                    value = nd["value"]
                    break
                total = nd["n"].sum()
                q = np.where(nd["n"] > 0, nd["w"] / np.maximum(nd["n"], 1), 0.0)
                u = self.c_puct * nd["prior"] * math.sqrt(total + 1) / (1 + nd["n"])
                i = int(np.argmax(q + u))
                path.append((nd, i))
                g.push(nd["moves"][i])
            for nd, i in reversed(path):
                value = -value  # the parent's mover is the other player
                nd["n"][i] += 1
                nd["w"][i] += value
        best = int(np.argmax(root["n"]))
        return root["moves"][best]
