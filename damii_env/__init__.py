"""damii-env: draughts variants for reinforcement learning.

Four rule presets: ``damii`` (Ghanaian draughts), ``international``, ``triestine`` and
``damath`` (Sci-Damath); see ``docs/RULES.md`` and ``docs/DAMATH.md``.

* :class:`Game` / :class:`Move` / :func:`perft` — one game at a time, python-chess style;
* :class:`Engine` / :class:`State` — the vectorized engine that steps B games at once;
* :func:`make_rules` / :class:`Rules` — rule sets as data, presets in :data:`PRESETS`;
* :func:`env` / :class:`raw_env` — PettingZoo AEC environments (per variant:
  :mod:`damii_env.envs`, ``damii_v0``, ``international_v0``, ``triestine_v0``,
  ``damath_v0``);
* Gymnasium ids ``damii_env/Damii-v0``, ``damii_env/International-v0``,
  ``damii_env/Triestine-v0``, ``damii_env/Damath-v0`` (registered on import;
  :class:`DraughtsEnv`; ``"damii_env:damii_env/Damii-v0"`` imports this package first)
  and the batched self-play :class:`DraughtsVectorEnv`;
* PettingZoo registry ids ``damii_env/damii-v0``, ... (``pettingzoo.make("aec", id)``).
"""

# first: numba must cache this package's compiled functions where compile_cache says
from damii_env import compile_cache  # noqa: F401, I001
from damii_env import envs
from damii_env.aec import env, raw_env, register_pettingzoo_envs
from damii_env.engine import EndReason, Engine, OutcomeCode, State
from damii_env.errors import (
    DamiiError,
    GameOverError,
    IllegalActionError,
    IllegalMoveError,
    InvalidFenError,
    InvalidOptionError,
    OpponentError,
    UnknownVariantError,
)
from damii_env.game import Game, Move, Outcome, perft
from damii_env.gym_env import DraughtsEnv, register_envs
from damii_env.player import Player, PlayerSpecError, make_player
from damii_env.rules import PRESETS, Rules, make_rules
from damii_env.vector_env import DraughtsVectorEnv

register_envs()
register_pettingzoo_envs()

__version__ = "0.2.0"

VARIANTS: tuple[str, ...] = tuple(PRESETS)

__all__ = [
    "DamiiError",
    "DraughtsEnv",
    "DraughtsVectorEnv",
    "Engine",
    "Game",
    "GameOverError",
    "IllegalActionError",
    "IllegalMoveError",
    "InvalidFenError",
    "InvalidOptionError",
    "EndReason",
    "Move",
    "OpponentError",
    "Outcome",
    "OutcomeCode",
    "PRESETS",
    "Player",
    "PlayerSpecError",
    "Rules",
    "State",
    "UnknownVariantError",
    "VARIANTS",
    "env",
    "envs",
    "make_player",
    "make_rules",
    "raw_env",
    "perft",
]
