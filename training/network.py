"""The policy-value network: a small residual convnet over the observation planes.

Input ``(B, C, N, N)`` planes from :func:`damii_env.observation.observe`; outputs policy
logits over the hop actions ``(B, A)`` (A = N*N/2 * 4 * (N-1)) and a value in [-1, 1]
for the player to move. Illegal actions are masked by the caller (:func:`masked_logits`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class NetworkShape:
    """Everything needed to rebuild a network: saved in every checkpoint."""

    in_channels: int
    board_size: int
    n_actions: int
    channels: int = 64
    blocks: int = 4

    def to_dict(self) -> dict[str, int]:
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


class PolicyValueNet(nn.Module):
    """Residual trunk, a policy head over the action encoding and a value head."""

    def __init__(self, shape: NetworkShape) -> None:
        super().__init__()
        self.shape = shape
        c, n = shape.channels, shape.board_size
        self.stem = nn.Sequential(
            nn.Conv2d(shape.in_channels, c, 3, padding=1, bias=False), nn.BatchNorm2d(c),
            nn.ReLU(),
        )
        self.trunk = nn.Sequential(*[ResidualBlock(c) for _ in range(shape.blocks)])
        self.policy_head = nn.Sequential(
            nn.Conv2d(c, 8, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(),
            nn.Linear(8 * n * n, shape.n_actions),
        )
        self.value_head = nn.Sequential(
            nn.Conv2d(c, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
            nn.Linear(4 * n * n, 64), nn.ReLU(), nn.Linear(64, 1), nn.Tanh(),
        )

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(self.stem(obs))
        return self.policy_head(h), self.value_head(h).squeeze(-1)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The value head alone (for searches that only evaluate leaves)."""
        return self.value_head(self.trunk(self.stem(obs))).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits with illegal actions (mask 0) set to a large negative number."""
    return logits.masked_fill(mask == 0, -1e9)
