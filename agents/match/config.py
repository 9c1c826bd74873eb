"""The set-up of a match (:class:`MatchConfig`): who plays, how many games, which clock
and rules; one game of it as sent to a player process (:class:`GameTask`); the players'
names in tables and PDN (:func:`player_names`) and the one rated 0 (:func:`anchor_index`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from damii_agents.match.game_loop import Clock
from damii_agents.registry import PlayerSpec
from damii_env.errors import InvalidOptionError
from damii_env.player import Player, PlayerSpecError


def player_names(specs: Sequence[str | PlayerSpec]) -> list[str]:
    """Unique names for the specs (a repeated spec gets ``#2``, ``#3``)."""
    seen: Counter[str] = Counter()
    names = []
    for spec in map(str, specs):
        seen[spec] += 1
        names.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return names


def anchor_index(specs: Sequence[str | PlayerSpec | None], skip: Collection[int] = ()) -> int:
    """The player rated 0: the first ``random`` agent, else the first spec.

    Seats in `skip` or given as None (ready-made players, whose spec is only a label)
    are never taken for a ``random`` agent; neither is a label that is not a spec.
    """
    for i, spec in enumerate(specs):
        if i in skip or spec is None:
            continue
        try:
            if PlayerSpec.parse(spec).kind == "random":
                return i
        except PlayerSpecError:
            continue
    return 0


@dataclass(frozen=True)
class MatchConfig:
    """A round robin: every pair of specs plays ``games`` games (rounded up to even)."""

    variant: str
    specs: tuple[str, ...]
    """Player specs as given, one a seat; for a seat in ``players`` only the label under
    which that player appears in tables and PDN. Parsed once, into :attr:`parsed`."""
    games: int = 2
    clock: str | float | None = "standard"
    workers: int | None = None
    """Worker processes (None: min(2, CPUs)); 1 plays in this process."""
    seed: int = 0
    opening_plies: int = 2
    rule_options: Mapping[str, Any] = field(default_factory=dict)
    event: str = "damii-env eval"
    gauntlet: bool = False
    """Only the first spec meets every other one (a checkpoint against the baselines)."""
    players: Mapping[int, Player] = field(default_factory=dict, compare=False, repr=False)
    """Ready-made player objects by seat (an index into ``specs``), used instead of
    building those seats from their specs, e.g. ``{0: PolicyPlayer(evaluator)}`` for a
    network in training. Objects cannot be sent to worker processes, so a match with
    ready-made players is played in this process whatever ``workers`` says. Their
    ``reset(seed)`` is called before each game as for any player."""

    def __post_init__(self) -> None:
        if len(self.specs) < 2:
            raise InvalidOptionError(f"a match needs at least two agents, got {list(self.specs)}")
        for i, player in self.players.items():
            if not (isinstance(i, int) and 0 <= i < len(self.specs)):
                raise InvalidOptionError(
                    f"ready-made player seat {i!r} is not an index into {list(self.specs)}")
            if not callable(getattr(player, "choose", None)):
                raise InvalidOptionError(f"ready-made player {player!r} has no choose(game)")
        object.__setattr__(self, "specs", tuple(map(str, self.specs)))
        object.__setattr__(self, "parsed", tuple(
            None if i in self.players else PlayerSpec.parse(spec)
            for i, spec in enumerate(self.specs)))
        if self.games < 1 or self.opening_plies < 0:
            raise InvalidOptionError("games must be >= 1 and opening plies >= 0")
        self.make_clock()

    parsed: tuple[PlayerSpec | None, ...] = field(init=False, compare=False, repr=False,
                                                  default=())
    """The specs parsed (:meth:`PlayerSpec.parse`, once, here), one a seat; None for a
    seat in ``players``. They travel to the worker processes as they are."""

    @property
    def names(self) -> list[str]:
        """The players' unique names, one a seat (see :func:`player_names`)."""
        return player_names(self.specs)

    @property
    def anchor(self) -> int:
        """The seat rated 0 (see :func:`anchor_index`)."""
        return anchor_index(self.parsed)

    @property
    def openings_per_pairing(self) -> int:
        """Openings per pairing; each is played twice, once from each seat."""
        return (self.games + 1) // 2

    def make_clock(self) -> Clock:
        """The per-move clock of the match's games."""
        return Clock.parse(self.clock, self.variant, **self.rule_options)

    def n_workers(self) -> int:
        """Worker processes to use: 1 (this process) when there are ready-made players."""
        if self.players:
            return 1
        return max(1, self.workers if self.workers else min(2, os.cpu_count() or 1))


@dataclass(frozen=True)
class GameTask:
    """One game of a match, as sent to a worker."""

    index: int
    white: int
    black: int
    opening: tuple[str, ...]
    seed: int
