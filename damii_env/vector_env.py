"""A batched Gymnasium vector environment for self-play, stepped by the numba engine.

>>> import numpy as np
>>> from damii_env.vector_env import DraughtsVectorEnv
>>> envs = DraughtsVectorEnv(num_envs=256, variant="damii")
>>> obs, info = envs.reset(seed=0)                    # obs (256, 8, 10, 10) float32
>>> rng = np.random.default_rng(0)
>>> for _ in range(100):
...     masks = info["action_mask"]                    # (256, 1800) int8
...     actions = [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]
...     obs, rewards, terminated, truncated, info = envs.step(actions)

There is no opponent inside: both sides are played by the caller, one hop per game
and step, which is what self-play needs.

* **Observations** are for the player to move after the step (``info["to_play"]``:
  0 White, 1 Black), from that player's side (the planes of
  :mod:`damii_env.observation`), so one network serves both colours.
* **Rewards** are for the player who acted in the step (``info["actor"]``): +1 when
  the step won the game, -1 when it lost, else 0. The other player's final reward
  is the negative (0 for a draw). A game can only end on its mover's step.
* **Masks**: ``info["action_mask"]`` (int8 ``(B, A)``), all 0 where a game is over.
* ``info["outcome"]``: the outcome code of a game that ended in this step (1 White
  won, 2 Black won, 3 draw, 4 truncated), else 0.
* **Autoreset** (``metadata["autoreset_mode"]``, Gymnasium 1.x): ``NEXT_STEP``
  (default) returns the final observation of a game that ended, and the next step
  restarts that game, ignoring its action (reward 0, ``info["actor"] == -1``).
  ``SAME_STEP`` restarts at once: the observation is the new game's first, the final
  observation is in ``info["final_obs"]`` (dense, valid where ``info["_final_obs"]``).
* An action that is not legal in an ongoing game raises
  :class:`damii_env.IllegalActionError` and leaves every game unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _kernels as K
from .engine import Engine, State
from .episode import outcome_rewards
from .errors import InvalidOptionError
from .observation import observation_low, observation_shape, observe
from .render import Renderer


class DraughtsVectorEnv(VectorEnv):
    """`num_envs` games of one variant stepped together; see the module documentation."""

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"],
                                "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 64, variant: str = "damii",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 render_mode: str | None = None, **rule_options: Any) -> None:
        mode = AutoresetMode(autoreset_mode) if isinstance(autoreset_mode, str) else autoreset_mode
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise InvalidOptionError(
                f"autoreset_mode must be NEXT_STEP or SAME_STEP, got {autoreset_mode!r}"
            )
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise InvalidOptionError(
                f"render_mode cannot be {render_mode!r}; expected None, 'ansi' or 'rgb_array'"
            )
        self.engine = Engine(variant, **rule_options)
        self.num_envs = int(num_envs)
        self.autoreset_mode = mode
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.render_mode = render_mode
        self._renderer = Renderer(render_mode)
        self.single_observation_space = spaces.Box(
            observation_low(self.engine.rules), 1.0, shape=observation_shape(self.engine.rules),
            dtype=np.float32)
        self.single_action_space = spaces.Discrete(self.engine.n_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.game_state: State = self.engine.init(self.num_envs)
        self._restart = np.zeros(self.num_envs, dtype=bool)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Restart every game (the seed only matters for ``first_player="random"``)."""
        super().reset(seed=seed)
        self.game_state = self.engine.init(self.num_envs, self.np_random)
        self._restart[:] = False
        actor = np.full(self.num_envs, -1, dtype=np.int8)
        return observe(self.engine, self.game_state), self._info(actor, self._outcome_none())

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """One hop in every game; see the module documentation for what comes back."""
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        eng, st = self.engine, self.game_state
        actor = st.turn.astype(np.int8)
        eng.step(st, actions)  # finished games are left as they are
        outcome = st.outcome.copy()
        rewards = outcome_rewards(outcome, actor)
        info: dict[str, Any] = {}
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            restart = self._restart
            rewards[restart] = 0.0
            outcome[restart] = K.OUT_ONGOING
            actor[restart] = -1
            eng.reset_where(st, restart, self.np_random)
            terminated, truncated = st.terminated.copy(), st.truncated.copy()
            self._restart = terminated | truncated
        else:
            terminated, truncated = st.terminated.copy(), st.truncated.copy()
            done = terminated | truncated
            if done.any():
                info["final_obs"] = np.zeros_like(self.observation_space.low)
                info["final_obs"][done] = observe(eng, st.take(done))
                info["_final_obs"] = done
                eng.reset_where(st, done, self.np_random)
        info.update(self._info(actor, outcome))
        return observe(eng, st), rewards, terminated, truncated, info

    @staticmethod
    def _flags(value: np.ndarray) -> np.ndarray:
        return np.ones(value.shape[0], dtype=bool)

    def _outcome_none(self) -> np.ndarray:
        return np.zeros(self.num_envs, dtype=np.int32)

    def _info(self, actor: np.ndarray, outcome: np.ndarray) -> dict[str, Any]:
        info = {
            "action_mask": self.engine.legal_action_mask(self.game_state),
            "to_play": self.game_state.turn.astype(np.int8),
            "actor": actor,
            "outcome": outcome,
        }
        info.update({f"_{key}": self._flags(value) for key, value in info.items()})
        return info

    def render(self) -> tuple[Any, ...] | None:
        """A text board or an image of every game (mind the cost with many games)."""
        if self.render_mode is None:
            return None
        return tuple(self._renderer.render(self, b) for b in range(self.num_envs))
