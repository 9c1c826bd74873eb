"""The players of a trained network (``ckpt:PATH`` and ``pretrained:NAME`` specs): how their
options choose one, checked here and only here, and the evaluator of a checkpoint file.

- the network alone (:class:`~damii_agents.players.policy_player.PolicyPlayer`): the
  policy picks each hop, by argmax or by sampling (``mode``), keeping away from draws by
  rule when ahead unless ``repeat=allow``;
- with a tree search (:class:`~damii_agents.players.tree_player.TreeSearchPlayer`,
  ``sims=N``, ``mcts=puct|gumbel``);
- with minimax (:class:`~damii_agents.players.minimax_player.MinimaxPlayer`,
  ``depth=D`` and/or ``time=T``, ``nodes=N``).

All three ask one :class:`~damii_agents.search.evaluator.NetworkEvaluator`. Needs torch
(the ``train`` extra).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from damii_agents.checkpoint import load_network
from damii_agents.players.minimax_player import MAX_NODES, MinimaxPlayer
from damii_agents.players.network_player import MODES, NetworkPlayer
from damii_agents.players.policy_player import PolicyPlayer
from damii_agents.players.tree_player import SEARCHES, TreeSearchPlayer
from damii_agents.search.evaluator import NetworkEvaluator
from damii_env.engine import Engine
from damii_env.errors import InvalidOptionError

REPEATS = ("avoid", "allow")
"""``repeat``: the policy player avoids draws by rule when ahead, or allows them."""


@dataclass(frozen=True)
class NetworkOptions:
    """How a network plays: the options of a ``ckpt:`` or ``pretrained:`` spec, checked
    (raises :class:`~damii_env.errors.InvalidOptionError` naming what is wrong)."""

    mode: str = "argmax"
    sims: int = 0
    """Simulations of a tree search a hop (0: no tree search)."""
    mcts: str | None = None
    """The tree search, ``puct`` (the default) or ``gumbel``; only with `sims`."""
    depth: int = 0
    """Full moves of a minimax search (0: none, or the cap of a `time` search)."""
    time: float | None = None
    """Seconds a move for a minimax search deepened within them."""
    nodes: int = MAX_NODES
    """Positions a minimax search may make."""
    repeat: str = "avoid"

    def __post_init__(self) -> None:
        if self.sims and self.depth:
            raise InvalidOptionError("give sims (PUCT search) or depth (minimax), not both")
        if self.time is not None and not (math.isfinite(self.time) and self.time > 0):
            raise InvalidOptionError(f"time must be a positive number of seconds, "
                                     f"got {self.time}")
        if self.sims and self.time is not None:
            raise InvalidOptionError("give sims (tree search) or time (minimax deepened "
                                     "within the time), not both")
        if self.mode not in MODES:
            raise InvalidOptionError(f"mode must be argmax or sample, got {self.mode!r}")
        if self.mcts is not None and self.mcts not in SEARCHES:
            raise InvalidOptionError(f"mcts must be puct or gumbel, got {self.mcts!r}")
        if self.mcts is not None and not self.sims:
            raise InvalidOptionError("mcts chooses the search of sims=N; give sims too")
        if self.repeat not in REPEATS:
            raise InvalidOptionError(f"repeat must be avoid or allow, got {self.repeat!r}")
        if self.sims < 0 or self.depth < 0 or self.nodes < 1:
            raise InvalidOptionError(f"sims and depth must be >= 0 and nodes >= 1, got "
                                     f"{self.sims}, {self.depth}, {self.nodes}")

    def player(self, evaluator: NetworkEvaluator, seed: int | None = None,
               name: str = "neural") -> NetworkPlayer:
        """The player these options name, on `evaluator`."""
        if self.depth or self.time is not None:
            return MinimaxPlayer(evaluator, depth=self.depth, time_limit=self.time,
                                 max_nodes=self.nodes, mode=self.mode, seed=seed, name=name)
        if self.sims:
            return TreeSearchPlayer(evaluator, self.sims, search=self.mcts or "puct",
                                    mode=self.mode, seed=seed, name=name)
        return PolicyPlayer(evaluator, mode=self.mode, avoid_rule_draws=self.repeat == "avoid",
                            seed=seed, name=name)


def load_evaluator(path: str | Path, device: str = "cpu") -> NetworkEvaluator:
    """The evaluator of a checkpoint or weights file: its network, for its rules, with the
    shaping its value head was trained with added back; raises
    :class:`~damii_agents.checkpoint.CheckpointError` with the reason."""
    net, data = load_network(path, device)
    return NetworkEvaluator(net.to(device).eval(), Engine(data["variant"], **data["rule_options"]),
                            device, value_potential=data.get("value_potential"))


def load_player(path: str | Path, options: NetworkOptions = NetworkOptions(),
                device: str = "cpu", seed: int | None = None,
                name: str | None = None) -> NetworkPlayer:
    """The player of a checkpoint file, playing as `options` say."""
    return options.player(load_evaluator(path, device), seed=seed, name=name or f"ckpt:{path}")
