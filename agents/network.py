"""The policy-value network: a residual convnet over the observation planes, sized by
:class:`NetworkShape` (every checkpoint stores its shape).

Input ``(B, C, N, N)`` planes from :func:`damii_env.observation.observe`; outputs policy
logits over the hop actions ``(B, A)`` (A = N*N/2 * 4 * (N-1)) and a value in [-1, 1]
for the player to move. Illegal actions are masked by the caller (:func:`masked_logits`).

The parts that a shape selects:

- **Trunk**: ``conv``, a residual convnet ``channels`` wide and ``blocks`` residual blocks
  deep (0: the stem alone); or ``mlp``, a per-square multilayer perceptron: the planes at
  the playable squares, flattened, through ``1 + blocks`` hidden layers ``channels`` wide
  (a few per cent of the convnet's arithmetic, for searches that value many leaves).
- **Policy head**: ``dense``, one linear layer from 8 feature planes to every action
  (``8 N^2 x A`` weights: 1.4 million on 10x10; with the ``mlp`` trunk, from its last
  hidden layer); or ``factorised`` (``conv`` trunk only), a 1x1 convolution
  that gives each square ``4 (N-1)`` logits, one per direction and distance, read at the
  square a hop starts from (the action encoding is square x direction x distance).
- **Policy trunk**: ``shared`` (the policy head reads the value's trunk), or ``conv`` /
  ``mlp``: the policy has a tower of its own, a trunk of that kind ``policy_channels``
  wide and ``policy_blocks`` deep, and the value keeps the main trunk. A search that values
  many leaves calls :meth:`PolicyValueNet.value`, which runs the main trunk alone, so the
  value can stay a cheap perceptron while the policy, which is read once per move, is a
  convnet that sees the board's local patterns (the captures).
- **Value prior** (``value_prior > 0``): the value is ``tanh(head + prior)``, where the
  prior is a learned linear function of each plane's sum over the board, started at
  ``value_prior`` times the material balance (men 1, kings ``king_worth``; Sci-Damath:
  the lead in the totals, in units of the largest chip value, where the higher total
  wins; the weights are learned, so ``lower_wins`` turns them round in training).
  A fresh network then values positions by
  material, and the head learns what material misses.

>>> from agents.network import NetworkShape, PolicyValueNet
>>> import torch
>>> net = PolicyValueNet(NetworkShape(8, 10, 1800, channels=16, blocks=1,
...                                   policy_head="factorised", value_prior=0.2))
>>> logits, value = net(torch.zeros(2, 8, 10, 10))
>>> tuple(logits.shape), tuple(value.shape)
((2, 1800), (2,))
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from damii_env.errors import InvalidArgumentError
from damii_env.observation import square_cells

SHAPE_BOUNDS: dict[str, tuple[int, int]] = {
    "in_channels": (1, 64), "board_size": (4, 16), "n_actions": (1, 8 * 8 * 4 * 15),
    "channels": (1, 1024), "blocks": (0, 64)}
"""The network sizes a shape may take (checked before anything is built)."""
POLICY_HEADS = ("dense", "factorised")
TRUNKS = ("conv", "mlp")
POLICY_TRUNKS = ("shared", *TRUNKS)
POLICY_FIELDS = ("policy_head", "policy_trunk", "policy_channels", "policy_blocks")
"""The fields of a shape that only the policy depends on (the value does not)."""
POLICY_KEYS = ("policy_head.", "policy_tower.")
"""Prefixes of the policy's weights in a network's state dict."""


def policy_tower_kind(trunk: str, policy_trunk: str) -> str:
    """The kind of trunk (``conv`` or ``mlp``) a policy head reads, for a shape's ``trunk``
    and ``policy_trunk``."""
    return trunk if policy_trunk == "shared" else policy_trunk


@dataclass(frozen=True)
class NetworkShape:
    """Everything needed to rebuild a network: saved in every checkpoint."""

    in_channels: int
    board_size: int
    n_actions: int
    channels: int = 64
    blocks: int = 4
    policy_head: str = "dense"
    """``dense`` or ``factorised`` (see the module documentation)."""
    orientation: str = "standard"
    """Board orientation of the rule set (where each square is in the planes)."""
    value_prior: float = 0.0
    """Starting weight of the material prior of the value (0: no prior, a plain tanh)."""
    king_worth: float = 3.0
    """Material worth of a king in the prior (men are 1)."""
    trunk: str = "conv"
    """``conv`` (residual convnet) or ``mlp`` (per-square perceptron)."""
    policy_trunk: str = "shared"
    """``shared`` (the policy reads the main trunk) or its own ``conv`` / ``mlp`` tower."""
    policy_channels: int = 32
    """Width of the policy's own tower (unused when ``policy_trunk`` is ``shared``)."""
    policy_blocks: int = 3
    """Depth of the policy's own tower, as ``blocks`` (unused when ``shared``)."""

    def __post_init__(self) -> None:
        bounds = {**SHAPE_BOUNDS, "policy_channels": SHAPE_BOUNDS["channels"],
                  "policy_blocks": SHAPE_BOUNDS["blocks"]}
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidArgumentError(
                    f"network {name} must be an integer from {low} to {high}, got {value!r:.80}")
        for name in ("value_prior", "king_worth"):
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value)):
                raise InvalidArgumentError(
                    f"network {name} must be a finite number, got {value!r:.80}")
        if self.policy_head not in POLICY_HEADS:
            raise ValueError(f"policy_head must be one of {POLICY_HEADS}, "
                             f"got {self.policy_head!r}")
        if self.trunk not in TRUNKS:
            raise ValueError(f"trunk must be one of {TRUNKS}, got {self.trunk!r}")
        if self.policy_trunk not in POLICY_TRUNKS:
            raise ValueError(f"policy_trunk must be one of {POLICY_TRUNKS}, "
                             f"got {self.policy_trunk!r}")
        if self.policy_tower_kind == "mlp" and self.policy_head != "dense":
            raise ValueError("the policy reads an mlp trunk, which has no board to read a "
                             "factorised head from; use policy_head='dense' or "
                             "policy_trunk='conv'")

    @property
    def policy_tower_kind(self) -> str:
        """The kind of trunk the policy head reads: ``conv`` or ``mlp``."""
        return policy_tower_kind(self.trunk, self.policy_trunk)

    def value_part(self) -> dict[str, int | float | str]:
        """The fields the value depends on (a warm start may change the rest)."""
        return {k: v for k, v in self.to_dict().items() if k not in POLICY_FIELDS}

    def to_dict(self) -> dict[str, int | float | str]:
        return asdict(self)


class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(x + y)


class FactorisedPolicy(nn.Module):
    """Per-square logits for every direction and distance, read at each square."""

    def __init__(self, channels: int, shape: NetworkShape) -> None:
        super().__init__()
        n1 = shape.board_size - 1
        self.conv = nn.Conv2d(channels, 4 * n1, 1)
        cells = torch.as_tensor(square_cells(shape.board_size, shape.orientation).copy())
        self.register_buffer("cells", cells, persistent=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = self.conv(h).flatten(2)[:, :, self.cells]  # (B, 4 (N-1), S)
        return out.transpose(1, 2).flatten(1)  # action (s * 4 + d) * (N-1) + k


class SquareMLP(nn.Module):
    """The planes at the playable squares, flattened, through ``1 + depth`` layers."""

    def __init__(self, shape: NetworkShape, width: int, depth: int) -> None:
        super().__init__()
        cells = torch.as_tensor(square_cells(shape.board_size, shape.orientation).copy())
        self.register_buffer("cells", cells, persistent=False)
        layers: list[nn.Module] = [nn.Linear(shape.in_channels * len(cells), width), nn.ReLU()]
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.layers = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.layers(obs.flatten(2)[:, :, self.cells].flatten(1))


def _conv_stem(shape: NetworkShape, width: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(shape.in_channels, width, 3, padding=1, bias=False),
                         nn.BatchNorm2d(width), nn.ReLU())


def _policy_head(shape: NetworkShape, tower: str, width: int) -> nn.Module:
    """The policy head over a trunk of kind `tower` (``conv`` or ``mlp``) `width` wide."""
    if tower == "mlp":
        return nn.Linear(width, shape.n_actions)
    if shape.policy_head == "factorised":
        return FactorisedPolicy(width, shape)
    n = shape.board_size
    return nn.Sequential(nn.Conv2d(width, 8, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Flatten(), nn.Linear(8 * n * n, shape.n_actions))


class PolicyValueNet(nn.Module):
    """A trunk, a policy head over the action encoding and a value head (the policy may
    have a tower of its own: ``policy_trunk``)."""

    def __init__(self, shape: NetworkShape) -> None:
        super().__init__()
        self.shape = shape
        c, n = shape.channels, shape.board_size
        shared = shape.policy_trunk == "shared"
        self.prior: nn.Linear | None = None
        self.policy_tower: nn.Module | None = None
        # built in this order (the seeded initial weights of every shape depend on it)
        if shape.trunk == "mlp":
            self.stem: nn.Module = SquareMLP(shape, c, shape.blocks)
            self.trunk: nn.Module = nn.Identity()
            if shared:
                self.policy_head = _policy_head(shape, "mlp", c)
            value: list[nn.Module] = [nn.Linear(c, 1)]
        else:
            self.stem = _conv_stem(shape, c)
            self.trunk = nn.Sequential(*[ResidualBlock(c) for _ in range(shape.blocks)])
            if shared:
                self.policy_head = _policy_head(shape, "conv", c)
            value = [nn.Conv2d(c, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                     nn.Linear(4 * n * n, 64), nn.ReLU(), nn.Linear(64, 1)]
        if shape.value_prior > 0:
            self.prior = nn.Linear(shape.in_channels, 1)
            self._init_prior()
            nn.init.zeros_(value[-1].weight)  # the prior alone at the start
            nn.init.zeros_(value[-1].bias)
        else:
            value.append(nn.Tanh())
        self.value_head = nn.Sequential(*value)
        if not shared:
            pc, pb = shape.policy_channels, shape.policy_blocks
            if shape.policy_trunk == "mlp":
                self.policy_tower = SquareMLP(shape, pc, pb)
            else:
                self.policy_tower = nn.Sequential(
                    _conv_stem(shape, pc), *[ResidualBlock(pc) for _ in range(pb)])
            self.policy_head = _policy_head(shape, shape.policy_trunk, pc)

    def _init_prior(self) -> None:
        """Material weights: own men +w, own kings +w*king, the opponent's the negatives;
        Sci-Damath (15 planes): own and opponent chip values, and the score lead."""
        w, king = self.shape.value_prior, self.shape.king_worth
        weights = torch.zeros(self.shape.in_channels)
        weights[:4] = torch.tensor([w, w * king, -w, -w * king])
        if self.shape.in_channels >= 15:
            # the planes' sums are: chip values / (2 c) each side, 8 x score lead / c (c:
            # the largest chip value), so these weights give w x totals lead / c
            weights[:4] = 0.0
            weights[8], weights[9], weights[14] = 2 * w, -2 * w, w / 8
        with torch.no_grad():
            self.prior.weight.copy_(weights[None, :])
            self.prior.bias.zero_()

    def _value(self, obs: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        v = self.value_head(h).squeeze(-1)
        if self.prior is not None:
            v = torch.tanh(v + self.prior(obs.sum(dim=(2, 3))).squeeze(-1))
        return v

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(self.stem(obs))
        p = h if self.policy_tower is None else self.policy_tower(obs)
        return self.policy_head(p), self._value(obs, h)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The value head alone (for searches that only evaluate leaves)."""
        return self._value(obs, self.trunk(self.stem(obs)))


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions (mask 0) set to a large negative number."""
    return logits.masked_fill(mask == 0, -1e9)
