"""The one player protocol, and player specs resolved by the installed providers.

A player is anything with a ``name`` and ``choose(game) -> Move``: given a
:class:`~damii_env.game.Game` at the start of its turn, it returns one legal full move.
The arena, human play, the Gymnasium environment's opponent and the trainers' opponent
seats all take players through this protocol (adapters turn it into hops where the
caller steps hop by hop).

Players are also named by short text specs (``random``, ``greedy``,
``alphabeta:depth=2``, ``ckpt:agents/weights/damii.pt,depth=2``). This package holds the
rules and environments only; the players themselves come from packages that register
a spec class for a spec's kind under the entry-point group ``damii_env.players`` (the
``agents`` package of this project registers ``random``, ``greedy``, ``alphabeta``,
``ckpt``, ``pretrained`` and ``hub``: :func:`player_kinds` lists them). So
``gymnasium.make("damii_env/Damii-v0", opponent="alphabeta:depth=2")`` works
without ``damii_env`` importing any player code itself.

>>> from damii_env.player import make_player
>>> player = make_player("greedy", "damii", seed=0)
>>> player.name
'greedy'
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from damii_env.errors import DamiiError

if TYPE_CHECKING:  # pragma: no cover - types only
    from damii_env.game import Game, Move

ENTRY_POINT_GROUP = "damii_env.players"
"""Entry-point group of player specs: name = spec kind, value = a class whose
``parse(text)`` checks a spec's text once and returns a value (picklable, to send to
worker processes) whose ``build(variant, seed=None, **rule_options)`` makes the player."""


@runtime_checkable
class Player(Protocol):
    """A player: given a game at the start of its turn, choose a full move.

    Optional hooks, called only where a player has them (looked up with ``getattr``):

    - ``reset(seed)``: before each game (a match, a trainer's opponent seat);
    - ``set_clock(seconds)``: before each game, the seconds a move may take (None: no
      clock);
    - ``wants_resign(game) -> bool``: asked before each of its moves;
    - ``offers_draw(game) -> bool``: asked before each of its moves;
    - ``accepts_draw(game) -> bool``: asked when the opponent offers a draw;
    - ``draw_declined(game)``: told when the draw it offered was declined (it is then
      asked to choose again);
    - ``hop(engine, state, b) -> int``: the hop it plays next in game `b` of a batched
      engine state, mid-capture too (trainers that step games hop by hop use it where
      present, else they play the hops of the move ``choose`` returns).
    """

    name: str

    def choose(self, game: Game) -> Move: ...


class PlayerSpecError(DamiiError):
    """A player spec that names no installed kind of player, or has bad options."""


@cache
def _factories() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def player_kinds() -> tuple[str, ...]:
    """The spec kinds the installed providers offer (``random``, ``alphabeta``, ...)."""
    return tuple(sorted(_factories()))


def spec_kind(spec: str) -> str:
    """The kind of a spec: the text before the first ``:`` (``alphabeta:depth=2`` ->
    ``alphabeta``), lower-cased."""
    if not isinstance(spec, str) or not spec.strip():
        raise PlayerSpecError(f"a player spec must be a non-empty string, got {spec!r}")
    return spec.strip().partition(":")[0].strip().lower()


def parse_spec(spec: Any) -> Any:
    """A spec's text parsed and checked once by the provider of its kind (a parsed spec,
    anything with ``build``, is returned as it is)."""
    if callable(getattr(spec, "build", None)):
        return spec
    kind = spec_kind(spec)
    factories = _factories()
    if kind not in factories:
        known = ", ".join(player_kinds()) or "none (install damii-env with its agents package)"
        raise PlayerSpecError(f"no installed player kind {kind!r} in spec {spec!r}; "
                              f"kinds installed: {known}")
    return factories[kind].load().parse(spec)


def make_player(spec: Any, variant: str = "damii", seed: int | None = None,
                **rule_options: Any) -> Player:
    """The player a spec names (its text, or a spec :func:`parse_spec` gave), for a
    variant (rule options as for ``Game``)."""
    return parse_spec(spec).build(variant, seed, **rule_options)
