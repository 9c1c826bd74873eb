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
  is the negative (0 for a draw). A game can only end on its mover's step, so a
  per-game sum of rewards is 1 for every decided game: who won is in
  ``info["player_rewards"]`` (float32 ``(B, 2)``: the final reward of White and of
  Black in a game that ended in this step, else 0) and ``info["winner"]`` (0 White,
  1 Black, -1 none or not ended).
* **Masks**: ``info["action_mask"]`` (int8 ``(B, A)``), all 0 where a game is over.
* ``info["outcome"]``: the outcome code of a game that ended in this step (1 White
  won, 2 Black won, 3 draw, 4 truncated), else 0.
* **Buffers**: the observation, the mask and the other arrays returned are the
  environment's own buffers, filled in place by one compiled pass per step (the
  observation and the mask together) and **valid until the next** ``step`` or
  ``reset``, as in EnvPool: copy what you keep (a rollout buffer that stores
  ``obs[t] = obs`` copies already). ``copy=True`` returns fresh arrays every step.
* **Autoreset** (``metadata["autoreset_mode"]``, Gymnasium 1.x; ``autoreset_mode``
  takes the enum or its name: ``"next_step"``, ``"same_step"``): ``NEXT_STEP``
  (default) returns the final observation of a game that ended, and the next step
  restarts that game, ignoring its action (reward 0, ``info["actor"] == -1``).
  ``SAME_STEP`` restarts at once: the observation is the new game's first, the final
  observation is in ``info["final_obs"]`` (dense, valid where ``info["_final_obs"]``)
  and the game's last info (mask, outcome, player rewards, winner, ...) in
  ``info["final_info"]`` (valid where ``info["_final_info"]``; each key's own mask
  ``_key`` inside it), as Gymnasium's own vector environments give them.
* An action that is not legal in an ongoing game raises
  :class:`damii_env.IllegalActionError` and leaves every game unchanged.
* **Readable games**: :meth:`DraughtsVectorEnv.fen` (the position now),
  :meth:`DraughtsVectorEnv.game` (a :class:`damii_env.Game` at the start of the move in
  progress, as the AEC env's ``board``) and :meth:`DraughtsVectorEnv.action_text` (PDN
  of a hop and of its move, mid-capture included). The compiled step keeps, per game,
  the position where a capture move began and its hops so far.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numba import njit, prange

from damii_env import _kernels as K
from damii_env import compiled as C
from damii_env.engine import PARALLEL_MIN_BATCH, Engine, State
from damii_env.errors import InvalidOptionError
from damii_env.game import Game
from damii_env.observation import (
    OBS_DTYPE,
    kernel_arguments,
    observation_low,
    observation_shape,
    observe_row,
)
from damii_env.render import Renderer
from damii_env.turn_text import ActionText, action_text

AUTORESET_NAMES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


def autoreset_mode_of(value: AutoresetMode | str) -> AutoresetMode:
    """The autoreset mode named by `value`: the enum, its value (``"NextStep"``) or its
    name in any case (``"same_step"``, ``"SAME_STEP"``, ``"same-step"``)."""
    if isinstance(value, AutoresetMode):
        mode = value
    elif isinstance(value, str):
        key = value.strip().lower().replace("-", "_")
        by_value = {m.value.lower(): m for m in AUTORESET_NAMES.values()}
        mode = AUTORESET_NAMES.get(key) or by_value.get(key.replace("_", ""))
    else:
        mode = None
    if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise InvalidOptionError(
            f"autoreset_mode must be 'next_step' or 'same_step' (or the AutoresetMode "
            f"NEXT_STEP / SAME_STEP), got {value!r}")
    return mode


@njit(cache=True, inline="always")
def _observe_and_mask_row(b, board, pending, meta, legal, chip, scores, cells, limit,
                          scoring, sqinfo, chip_table, value_scale, score_scale, obs, mask,
                          shown, shown_n):  # pragma: no cover - numba
    # the mask: clear the hops shown last time, set today's (no full-row zeroing)
    for i in range(shown_n[b]):
        mask[b, shown[b, i]] = 0
    n = meta[b, K.M_N_LEGAL] if meta[b, K.M_OUTCOME] == K.OUT_ONGOING else 0
    for i in range(n):
        a = legal[b, i]
        mask[b, a] = 1
        shown[b, i] = a
    shown_n[b] = n
    observe_row(b, meta[b, K.M_TURN], board, pending, meta, chip, scores, cells, limit,
                scoring, sqinfo, chip_table, value_scale, score_scale, obs[b])


@njit(cache=True, inline="always")
def _before_hop(b, board, meta, chip, scores, R):  # pragma: no cover - numba
    """At the start of a capture move: keep game b's rows (see ``_allocate``). The
    repetition history is left out: only ``begin_turn`` writes it, so not mid-capture;
    ``pending`` is left out: it is all 0 at a turn's start (``end_turn`` clears it)."""
    if meta[b, K.M_CONT] < 0 and meta[b, K.M_CAPTURING] == 1 \
            and meta[b, K.M_OUTCOME] == K.OUT_ONGOING:
        start_board, start_chip, start_scores, start_meta, hops, hop_n = R
        for s in range(board.shape[1]):
            start_board[b, s] = board[b, s]
            start_chip[b, s] = chip[b, s]
        for j in range(scores.shape[1]):
            start_scores[b, j] = scores[b, j]
        for j in range(meta.shape[1]):
            start_meta[b, j] = meta[b, j]


@njit(cache=True, inline="always")
def _after_hop(b, a, meta, R):  # pragma: no cover - numba
    """Record hop `a` of game b while its move goes on; forget the hops once it ended."""
    hops, hop_n = R[4], R[5]
    if meta[b, K.M_CONT] >= 0:
        hops[b, hop_n[b]] = a
        hop_n[b] += 1
    else:
        hop_n[b] = 0


@njit(cache=True)
def _turn_start_legal(T, G):  # pragma: no cover - numba
    """Legal hops of game 0 of `G`, set at a turn's start (no position is recorded)."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    K.generate_turn(params, ray, board, pending, meta, legal, 0, K._scratch(params))


@njit(cache=True, _nrt=False)
def _observe_rows(rows, board, pending, meta, legal, chip, scores, cells, limit, scoring,
                  sqinfo, chip_table, value_scale, score_scale, obs, mask, shown,
                  shown_n, hop_n):  # pragma: no cover - numba
    for i in range(rows.shape[0]):
        hop_n[rows[i]] = 0  # a restarted game has no move in progress
        _observe_and_mask_row(rows[i], board, pending, meta, legal, chip, scores, cells, limit,
                              scoring, sqinfo, chip_table, value_scale, score_scale, obs, mask,
                              shown, shown_n)


@njit(cache=True)
def _step_observe(lo, hi, T, G, actions, status, cells, limit, scoring, chip_table,
                  value_scale, score_scale, obs, mask, shown, shown_n,
                  R):  # pragma: no cover - numba
    """One hop in each of the games lo..hi-1 (and its record, see ``_before_hop``), then
    its observation and mask while its rows are in cache: the one step body, called for
    all the games on one thread, or per block of games by :func:`_step_observe_parallel`."""
    _step_observe_rows(lo, hi, T, G, actions, status, cells, limit, scoring, chip_table,
                       value_scale, score_scale, obs, mask, shown, shown_n, R,
                       K._scratch(T.params))


@njit(cache=True, _nrt=False)
def _step_observe_rows(lo, hi, T, G, actions, status, cells, limit, scoring, chip_table,
                       value_scale, score_scale, obs, mask, shown, shown_n, R,
                       scratch):  # pragma: no cover - numba
    """The loop of :func:`_step_observe`, without reference counts (it makes no array:
    a count is an atomic instruction on every array it names, each game)."""
    params, ray, zobrist, sqinfo, chipval = T
    board, pending, meta, hist, legal, chip, scores = G
    for b in range(lo, hi):
        _before_hop(b, board, meta, chip, scores, R)
        status[b] = K.apply_action(T, G, b, actions[b], scratch)
        _after_hop(b, actions[b], meta, R)
        _observe_and_mask_row(b, board, pending, meta, legal, chip, scores, cells, limit,
                              scoring, sqinfo, chip_table, value_scale, score_scale, obs, mask,
                              shown, shown_n)


@njit(cache=True, parallel=True)
def _step_observe_parallel(T, G, actions, status, cells, limit, scoring, chip_table,
                           value_scale, score_scale, obs, mask, shown, shown_n,
                           R):  # pragma: no cover - numba
    """:func:`_step_observe` on numba's threads: blocks of 32 games handed out one at a
    time (as in the engine's own step)."""
    B = actions.shape[0]
    block = 32
    for c in prange((B + block - 1) // block):
        _step_observe(c * block, min(B, (c + 1) * block), T, G, actions, status, cells, limit,
                      scoring, chip_table, value_scale, score_scale, obs, mask, shown, shown_n,
                      R)


@njit(cache=True, _nrt=False)
def _settle_flags(meta, terminated, truncated):  # pragma: no cover - numba
    """The flags of the games that are over: truncated by the turn limit, else terminated.
    Returns how many are over."""
    over = 0
    for b in range(meta.shape[0]):
        o = meta[b, K.M_OUTCOME]
        truncated[b] = o == K.OUT_TRUNCATED
        terminated[b] = o != K.OUT_ONGOING and o != K.OUT_TRUNCATED
        over += o != K.OUT_ONGOING
    return over


@njit(cache=True, _nrt=False)
def _settle(meta, actor, restart, rewards, outcome, terminated, truncated, player_rewards,
            winner):  # pragma: no cover - numba
    """After a step: per-game results of the games that ended in it (not of those that
    restart now), then the flags of the games that are over (:func:`_settle_flags`).
    Returns how many are over."""
    for b in range(meta.shape[0]):
        o = meta[b, K.M_OUTCOME]
        if restart[b]:
            o = K.OUT_ONGOING
            actor[b] = -1
        outcome[b] = o
        white = C.outcome_reward(o, 0)
        player_rewards[b, 0] = white
        player_rewards[b, 1] = -white  # zero-sum (-0.0 where nobody won, as always)
        winner[b] = C.winner(o)
        rewards[b] = 0.0 if actor[b] < 0 else (white if actor[b] == 0 else -white)
    return _settle_flags(meta, terminated, truncated)


class DraughtsVectorEnv(VectorEnv):
    """`num_envs` games of one variant stepped together; see the module documentation."""

    metadata: dict[str, Any] = {"render_modes": ("ansi", "rgb_array"),
                                "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 64, variant: str = "damii",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 render_mode: str | None = None, copy: bool = False,
                 **rule_options: Any) -> None:
        mode = autoreset_mode_of(autoreset_mode)
        modes = type(self).metadata["render_modes"]
        if render_mode not in (None, *modes):
            raise InvalidOptionError(
                f"render_mode cannot be {render_mode!r}; expected None, 'ansi' or 'rgb_array'"
            )
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise InvalidOptionError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.engine = Engine(variant, **rule_options)
        self.num_envs = int(num_envs)
        self.autoreset_mode = mode
        self.copy = bool(copy)
        # this instance's own metadata: a wrapper that edits it changes no other env
        self.metadata = {"render_modes": list(modes), "autoreset_mode": mode}
        self.render_mode = render_mode
        self._renderer = Renderer(render_mode)
        self.single_observation_space = spaces.Box(
            observation_low(self.engine.rules), 1.0, shape=observation_shape(self.engine.rules),
            dtype=np.float32)
        self.single_action_space = spaces.Discrete(self.engine.n_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.game_state: State = self.engine.init(self.num_envs)
        self._allocate()

    def _allocate(self) -> None:
        """The output buffers, reused every step (light squares of obs stay 0)."""
        B, eng = self.num_envs, self.engine
        self._obs = np.zeros((B, *self.single_observation_space.shape), dtype=OBS_DTYPE)
        self._final_obs = np.zeros_like(self._obs)
        self._mask = np.zeros((B, eng.n_actions), dtype=np.int8)
        self._shown = np.zeros((B, self.game_state.legal.shape[1]), dtype=np.int16)
        self._shown_n = np.zeros(B, dtype=np.int32)
        self._restart = np.zeros(B, dtype=bool)
        self._status = np.zeros(B, dtype=np.int8)
        self._rewards = np.zeros(B, dtype=np.float32)
        self._terminated = np.zeros(B, dtype=bool)
        self._truncated = np.zeros(B, dtype=bool)
        self._outcome = np.zeros(B, dtype=np.int32)
        self._actor = np.zeros(B, dtype=np.int8)
        self._to_play = np.zeros(B, dtype=np.int8)
        self._player_rewards = np.zeros((B, 2), dtype=np.float32)
        self._winner = np.zeros(B, dtype=np.int8)
        # the move in progress of each game, kept by the compiled step: the rows at the
        # start of a capture move (board, chips, scores, counters) and its hops so far
        S = eng.n_squares
        self._hops = np.zeros((B, S + 2), dtype=np.int16)
        self._hop_n = np.zeros(B, dtype=np.int32)
        self._record = (np.zeros((B, S), dtype=np.int8), np.full((B, S), -1, dtype=np.int8),
                        np.zeros((B, 4), dtype=np.float64),
                        np.zeros((B, K.N_META), dtype=np.int32), self._hops, self._hop_n)
        self._all = np.ones(B, dtype=bool)
        self._all.setflags(write=False)
        self._kernel_args = kernel_arguments(eng)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Restart every game (the seed only matters for ``first_player="random"``)."""
        super().reset(seed=seed)
        self.game_state = self.engine.init(self.num_envs, self.np_random)
        self._restart[:] = False
        self._actor[:] = -1
        self._outcome[:] = 0
        self._player_rewards[:] = 0
        self._winner[:] = -1
        self._observe_rows(np.arange(self.num_envs))
        self._to_play[:] = self.game_state.turn
        return self._out(self._obs), self._info()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:
        """One hop in every game; see the module documentation for what comes back."""
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        eng, st = self.engine, self.game_state
        eng._check_actions(st, actions)  # raises before any game changes
        self._actor[:] = st.turn
        self._step_and_observe(actions)  # finished games are left as they are
        over = _settle(st.meta, self._actor, self._restart, self._rewards, self._outcome,
                       self._terminated, self._truncated, self._player_rewards, self._winner)
        info: dict[str, Any] = {}
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            if self._restart.any():
                self._observe_rows(eng.reset_where(st, self._restart, self.np_random))
                _settle_flags(st.meta, self._terminated, self._truncated)
            np.logical_or(self._terminated, self._truncated, out=self._restart)
        elif over:
            done = np.logical_or(self._terminated, self._truncated)
            self._final_obs[done] = self._obs[done]
            info["final_obs"] = self._out(self._final_obs)
            info["_final_obs"] = done
            # the finished games' last info (copied: the restart rewrites the buffers), as
            # Gymnasium's own vector envs give it beside final_obs
            final_info = {k: np.array(v, copy=True) for k, v in self._info().items()
                          if not k.startswith("_")}
            final_info.update({f"_{k}": done.copy() for k in list(final_info)})
            info["final_info"] = final_info
            info["_final_info"] = done
            self._observe_rows(eng.reset_where(st, done, self.np_random))
        self._to_play[:] = st.turn
        info.update(self._info())
        return (self._out(self._obs), self._out(self._rewards), self._out(self._terminated),
                self._out(self._truncated), info)

    def _flat(self) -> np.ndarray:
        return self._obs.reshape(self.num_envs, self._obs.shape[1], -1)

    def _step_and_observe(self, actions: np.ndarray) -> None:
        """The hops, the observations and the masks, in one compiled pass over the games."""
        st, eng = self.game_state, self.engine
        cells, limit, scoring, _sq, chip_table, value_scale, score_scale = self._kernel_args
        args = (eng.tables, st.arrays, actions, self._status, cells, limit, scoring, chip_table,
                value_scale, score_scale, self._flat(), self._mask, self._shown, self._shown_n,
                self._record)
        if self.num_envs >= PARALLEL_MIN_BATCH and numba.get_num_threads() > 1:
            old = numba.set_parallel_chunksize(1)
            try:
                _step_observe_parallel(*args)
            finally:
                numba.set_parallel_chunksize(old)
        else:
            _step_observe(0, self.num_envs, *args)

    def _observe_rows(self, rows: np.ndarray) -> None:
        """Observation and mask of the games at `rows` (after a restart)."""
        if rows.size == 0:
            return
        st = self.game_state
        _observe_rows(np.asarray(rows, dtype=np.int64), st.board, st.pending, st.meta, st.legal,
                      st.chip, st.scores, *self._kernel_args, self._flat(), self._mask,
                      self._shown, self._shown_n, self._hop_n)

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def _info(self) -> dict[str, Any]:
        info = {
            "action_mask": self._out(self._mask),
            "to_play": self._out(self._to_play),
            "actor": self._out(self._actor),
            "outcome": self._out(self._outcome),
            "player_rewards": self._out(self._player_rewards),
            "winner": self._out(self._winner),
        }
        info.update({f"_{key}": self._all for key in list(info)})
        return info

    # --- readable games ------------------------------------------------------------------
    def fen(self, index: int = 0) -> str:
        """FEN of game `index` now (Sci-Damath: with chip values and scores)."""
        return self.engine.fen(self.game_state, self._index(index))

    def game(self, index: int = 0) -> Game:
        """Game `index` as a :class:`damii_env.Game` (a copy: its moves leave the env as
        is), standing at the start of the move in progress, as the AEC env's ``board``;
        :meth:`fen` is the position now."""
        return self._turn_start(self._index(index))[0]

    def action_text(self, index: int, action: int) -> ActionText:
        """PDN text of hop `action` in game `index` and of the full move it belongs to,
        mid-capture included (:class:`damii_env.turn_text.ActionText`)."""
        game, played = self._turn_start(self._index(index))
        return action_text(game, played, int(action))

    def _turn_start(self, i: int) -> tuple[Game, tuple[int, ...]]:
        """Game i at the start of its move in progress, and the hops played in it."""
        st = self.game_state
        n = int(self._hop_n[i])
        # mid-capture every hop so far captured; a state stepped outside the env has no
        # record that fits it and Game.at raises
        if n == 0 or st.meta[i, K.M_CONT] < 0 or n != st.meta[i, K.M_SEQ_COUNT]:
            return Game.at(self.engine, st, i), ()
        start = st.take(slice(i, i + 1))
        start_board, start_chip, start_scores, start_meta = self._record[:4]
        start.board[0], start.chip[0] = start_board[i], start_chip[i]
        start.scores[0], start.meta[0] = start_scores[i], start_meta[i]
        start.pending[0] = 0
        _turn_start_legal(self.engine.tables, start.arrays)
        return Game.at(self.engine, start), tuple(int(a) for a in self._hops[i, :n])

    def _index(self, index: int) -> int:
        i = int(index)
        if not 0 <= i < self.num_envs:
            raise InvalidOptionError(f"game index must be in [0, {self.num_envs}), got {index!r}")
        return i

    def render(self) -> tuple[Any, ...] | None:
        """A text board or an image of every game (mind the cost with many games)."""
        if self.render_mode is None:
            return None
        return tuple(self._renderer.render(self, b) for b in range(self.num_envs))


__all__ = ["DraughtsVectorEnv", "autoreset_mode_of"]
