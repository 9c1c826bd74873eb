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
- **Policy features** (``capture_points``, Sci-Damath with a policy tower of its own): the
  tower also reads :class:`CapturePoints`, planes of each one-jump capture and its points
  computed from the observation. A jump's points are a product or quotient of two chip
  values, which sums of convolutions and ReLUs can only approximate.
- **Value prior** (``value_prior > 0``): the value is ``tanh(head + prior)``, where the
  prior is a learned linear function of each plane's sum over the board, started at
  ``value_prior`` times the material balance (men 1, kings ``king_worth``; Sci-Damath:
  the lead in the totals, in units of the largest chip value, where the higher total
  wins; the weights are learned, so ``lower_wins`` turns them round in training).
  A fresh network then values positions by
  material, and the head learns what material misses.

>>> from damii_agents.network import NetworkShape, PolicyValueNet
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
from damii_env.observation import BASE_PLANES, DAMATH_PLANES, square_cells

SHAPE_BOUNDS: dict[str, tuple[int, int]] = {
    "in_channels": (1, 64), "board_size": (4, 16), "n_actions": (1, 8 * 8 * 4 * 15),
    "channels": (1, 1024), "blocks": (0, 64)}
"""The network sizes a shape may take (checked before anything is built)."""
POLICY_HEADS = ("dense", "factorised")
TRUNKS = ("conv", "mlp")
POLICY_TRUNKS = ("shared", *TRUNKS)
POLICY_FEATURES = ("none", "capture_points")
"""What a policy tower of its own reads besides the planes (:class:`CapturePoints`)."""
DAMATH_CHANNELS = len(BASE_PLANES) + len(DAMATH_PLANES)
POLICY_FIELDS = ("policy_head", "policy_trunk", "policy_channels", "policy_blocks",
                 "policy_features")
"""The fields of a shape that only the policy depends on (the value does not)."""
POLICY_KEYS = ("policy_head.", "policy_tower.")
"""Prefixes of the policy's weights in a network's state dict."""


def policy_features_problem(policy_features: str, policy_trunk: str, in_channels: int
                            ) -> str | None:
    """Why a network with these fields cannot read `policy_features` (None if it can)."""
    if policy_features not in POLICY_FEATURES:
        return f"policy_features must be one of {POLICY_FEATURES}, got {policy_features!r}"
    if policy_features != "none" and (policy_trunk != "conv" or in_channels != DAMATH_CHANNELS):
        return (f"policy_features {policy_features!r} reads Sci-Damath's chip values into a "
                f"policy tower of its own; it needs variant: damath and policy_trunk: conv "
                f"(the Sci-Damath planes, {DAMATH_CHANNELS} channels, and "
                f"policy_trunk='conv'; got {in_channels} channels and {policy_trunk!r})")
    return None


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
    policy_features: str = "none"
    """``none``, or ``capture_points``: the policy's own conv tower also reads
    :class:`CapturePoints` (Sci-Damath planes only)."""

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
        problem = policy_features_problem(self.policy_features, self.policy_trunk,
                                          self.in_channels)
        if problem:
            raise ValueError(problem)
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
        self.register_buffer("cells", _flat_cells(shape, 4 * n1), persistent=False)
        self.squares = len(square_cells(shape.board_size, shape.orientation))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = torch.index_select(self.conv(h).flatten(1), 1, self.cells)
        out = out.view(len(h), -1, self.squares)  # (B, 4 (N-1), S)
        return out.transpose(1, 2).flatten(1)  # action (s * 4 + d) * (N-1) + k


def _flat_cells(shape: NetworkShape, channels: int) -> torch.Tensor:
    """Indices into planes (channels, N, N) flattened of each channel's playable squares,
    channel by channel: ``x.flatten(1)[:, idx]`` is ``x.flatten(2)[:, :, cells].flatten(1)``
    (an ``index_select`` over one flat dimension is several times faster on a CPU)."""
    n = shape.board_size
    cells = torch.as_tensor(square_cells(n, shape.orientation).copy())
    return (torch.arange(channels)[:, None] * (n * n) + cells[None, :]).flatten()


def _channel(name: str) -> int:
    return [p.name for p in (*BASE_PLANES, *DAMATH_PLANES)].index(name)


class CapturePoints(nn.Module):
    """Sci-Damath's one-jump captures and their points, as planes computed from the
    observation (no weights): an input for the policy, whose convolutions cannot multiply
    two chip values.

    For each side (the observer's pieces jumping the opponent's, then the reverse) and each
    of the four diagonals, at the square a jump would start from: 1 where a piece stands
    with an enemy piece next to it and an empty dark square behind (the jump over an
    adjacent piece; the flying dama's longer jumps and the capture rules' precedence are
    not modelled), and four planes of that jump's points, one per operation of the landing
    square: ``a + b``, ``a - b``, ``4 a b`` and ``a / b`` (clipped to [-4, 4]), times 2 for
    a jumping dama and 2 for a jumped one, where ``a`` and ``b`` are the two chips' values
    over twice the set's largest (the scale of the chip-value planes). 2 x 4 x 5 = 40
    planes. The engine's rules decide what is legal and what it scores; these planes are
    only what the network sees.
    """

    OPS = ("op_add", "op_sub", "op_mul", "op_div")
    DIAGONALS = ((-1, -1), (-1, 1), (1, -1), (1, 1))
    PLANES = 2 * len(DIAGONALS) * (1 + len(OPS))

    def __init__(self, shape: NetworkShape) -> None:
        super().__init__()
        n = shape.board_size
        dark = torch.zeros(n * n)
        dark[torch.as_tensor(square_cells(n, shape.orientation).copy())] = 1.0
        self.register_buffer("dark", dark.reshape(n, n), persistent=False)
        self.ops = [_channel(name) for name in self.OPS]
        pairs = (("own_men", "opponent_men"), ("own_kings", "opponent_kings"),
                 ("own_chip_values", "opponent_chip_values"))
        self.men, self.kings, self.values = ([_channel(a), _channel(b)] for a, b in pairs)

    @staticmethod
    def _shift(x: torch.Tensor, dr: int, dc: int) -> torch.Tensor:
        """``out[..., r, c] = x[..., r + dr, c + dc]`` (0 off the board)."""
        n = x.shape[-1]
        padded = nn.functional.pad(x, (2, 2, 2, 2))
        return padded[..., 2 + dr:2 + dr + n, 2 + dc:2 + dc + n]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        men, kings, values = obs[:, self.men], obs[:, self.kings], obs[:, self.values]
        pieces = men + kings
        values = values / (1.0 + kings)  # the planes double a dama's value
        empty = self.dark * (1.0 - pieces.sum(dim=1))  # (B, N, N)
        ops = obs[:, self.ops]  # (B, 4, N, N)
        out = []
        for mover, victim in ((0, 1), (1, 0)):
            for dr, dc in self.DIAGONALS:
                over = self._shift(pieces[:, victim], dr, dc)
                behind = self._shift(empty, 2 * dr, 2 * dc)
                jump = pieces[:, mover] * over * behind
                a = values[:, mover]
                b = self._shift(values[:, victim], dr, dc)
                mult = jump * (1.0 + kings[:, mover]) * (1.0 + self._shift(kings[:, victim],
                                                                            dr, dc))
                quotient = torch.where(b != 0, a / torch.where(b != 0, b, 1.0), 0.0)
                points = torch.stack((a + b, a - b, 4.0 * a * b, quotient.clamp(-4.0, 4.0)), 1)
                landing_ops = self._shift(ops, 2 * dr, 2 * dc)
                out += [jump[:, None], points * landing_ops * mult[:, None]]
        return torch.cat(out, dim=1)


class SquareMLP(nn.Module):
    """The planes at the playable squares, flattened, through ``1 + depth`` layers."""

    def __init__(self, shape: NetworkShape, width: int, depth: int) -> None:
        super().__init__()
        self.register_buffer("cells", _flat_cells(shape, shape.in_channels), persistent=False)
        layers: list[nn.Module] = [nn.Linear(len(self.cells), width), nn.ReLU()]
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.layers = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.layers(torch.index_select(obs.flatten(1), 1, self.cells))


def _conv_stem(shape: NetworkShape, width: int, in_channels: int | None = None
               ) -> nn.Sequential:
    in_channels = shape.in_channels if in_channels is None else in_channels
    return nn.Sequential(nn.Conv2d(in_channels, width, 3, padding=1, bias=False),
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
        self.policy_features: CapturePoints | None = None
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
                    _conv_stem(shape, pc, shape.in_channels + self._extra_planes()),
                    *[ResidualBlock(pc) for _ in range(pb)])
            if shape.policy_features == "capture_points":
                self.policy_features = CapturePoints(shape)
            self.policy_head = _policy_head(shape, shape.policy_trunk, pc)

    def _extra_planes(self) -> int:
        """Planes the policy's tower reads besides the observation."""
        return CapturePoints.PLANES if self.shape.policy_features == "capture_points" else 0

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
        if self.policy_tower is None:
            p = h
        elif self.policy_features is None:
            p = self.policy_tower(obs)
        else:
            p = self.policy_tower(torch.cat((obs, self.policy_features(obs)), dim=1))
        return self.policy_head(p), self._value(obs, h)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The value head alone (for searches that only evaluate leaves)."""
        return self._value(obs, self.trunk(self.stem(obs)))


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions (mask 0) set to a large negative number."""
    return logits.masked_fill(mask == 0, -1e9)
