"""Gymnasium single-agent environments: one learner against an opponent policy.

>>> import gymnasium, damii_env
>>> env = gymnasium.make("damii_env/Damii-v0")          # International-v0, Triestine-v0
>>> obs, info = env.reset(seed=0)
>>> mask = info["action_mask"]                          # int8 (1800,)
>>> obs, reward, terminated, truncated, info = env.step(int(mask.nonzero()[0][0]))

The ids are registered when ``damii_env`` is imported. Where it is not (the worker
processes of SB3's ``SubprocVecEnv``, a script that only names the id), prefix the module:
``gymnasium.make("damii_env:damii_env/Damii-v0")`` imports it first, in any process.
Each spec sets ``max_episode_steps`` (:data:`MAX_EPISODE_STEPS` learner steps, far more
than a game takes), so ``gymnasium.make`` adds a ``TimeLimit``.

=================================  ==============================================
``damii_env/Damii-v0``             Damii (Ghanaian draughts)
``damii_env/International-v0``     International draughts
``damii_env/Triestine-v0``         Triestine draughts
``damii_env/Damath-v0``            Sci-Damath (rewards by the final totals)
=================================  ==============================================

Keyword arguments of ``gymnasium.make`` (all optional):

* ``opponent``: the other player. ``None`` (default) plays uniformly random legal
  hops drawn from the environment's seeded generator. Otherwise any player:

  - a player spec, resolved by :func:`damii_env.player.make_player`:
    ``"greedy"``, ``"alphabeta:depth=2"``, ``"ckpt:agents/weights/damii.pt,depth=2"``, ...;
  - a :class:`damii_env.player.Player` (``choose(game) -> Move``), for example an
    agent of the ``agents`` package; it is reseeded (``reset(seed)``) from the
    environment's generator at each reset, when it has that hook;
  - a hop policy: an object with ``act(observation, action_mask) -> action`` or a
    callable ``f(observation, action_mask) -> action``, which sees the observation
    from its own side and picks one hop at a time.

  If the opponent raises or picks an illegal move, :class:`damii_env.OpponentError`
  is raised and the game is put back as it was before the step (after a failed
  ``reset``, call ``reset`` again).
* ``play_as``: ``"random"`` (default: a colour drawn at each reset from the seed),
  ``"white"`` or ``"black"``. The learner always sees the board from its own side.
* ``illegal_action``: what an action outside the mask does. ``"loss"`` (default):
  the episode ends, reward -1, ``info["illegal_action"] = True``. ``"random"``: a
  random legal action is played instead (and ``info["illegal_action"] = True``).
  ``"raise"``: :class:`damii_env.IllegalActionError`.
* ``render_mode``: ``"human"`` (a pygame window; without pygame, said once, each board
  is printed as text), ``"ansi"`` or ``"rgb_array"``.
* any rule option of :class:`damii_env.Rules` (``orientation="standard"``,
  ``turn_limit=200``, ...).

The observation is the planes of :mod:`damii_env.observation` (float32 ``(C, N, N)``).
One step is one hop of the learner (a multi-capture takes several steps), followed by
the opponent's whole move when the learner's move is complete. The legal actions are
in ``info["action_mask"]`` (int8) and in :meth:`DraughtsEnv.action_masks` (bool, the
method sb3-contrib's ``MaskablePPO`` calls); the learner's colour (0 White, 1 Black) in
``info["colour"]`` and, the same, ``info["color"]``. Rewards: +1 win, -1 loss, 0 draw or
truncation (``turn_limit``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
from gymnasium import spaces

from damii_env.engine import Engine, State
from damii_env.episode import LOSS, outcome_reward
from damii_env.errors import DamiiError, GameOverError, InvalidOptionError, OpponentError
from damii_env.game import Game
from damii_env.observation import observation_low, observation_shape, observe
from damii_env.player import Player, make_player
from damii_env.render import RENDER_MODES, Renderer, render_modes
from damii_env.turn_text import ActionText, TurnRecord, action_text

GYM_IDS: dict[str, str] = {
    "damii": "damii_env/Damii-v0",
    "international": "damii_env/International-v0",
    "triestine": "damii_env/Triestine-v0",
    "damath": "damii_env/Damath-v0",
}
"""Gymnasium id of each variant."""

MAX_EPISODE_STEPS = 1000
"""Learner steps (hops) before ``gymnasium.make``'s ``TimeLimit`` truncates an episode."""

PLAY_AS = ("random", "white", "black")
_COLOURS = {"white": 0, "black": 1}
ILLEGAL_ACTIONS = ("loss", "random", "raise")


@runtime_checkable
class Policy(Protocol):
    """Anything that picks an action from an observation and its action mask."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


HopPolicy = Callable[[np.ndarray, np.ndarray], int]


def _as_opponent(opponent: Any, variant: str, rule_options: dict[str, Any]
                 ) -> Player | HopPolicy | None:
    """The opponent as a Player, a hop policy, or None (random hops)."""
    if opponent is None or (isinstance(opponent, str) and opponent.strip().lower() == "random"):
        return None
    if isinstance(opponent, str):
        return make_player(opponent, variant, **rule_options)
    if isinstance(opponent, Player):
        return opponent
    if isinstance(opponent, Policy):
        return opponent.act
    if callable(opponent):
        return opponent
    raise InvalidOptionError(
        f"opponent must be None, a player spec such as 'alphabeta:depth=2', a player with "
        f"choose(game), an object with act(observation, action_mask) or a callable, "
        f"got {type(opponent).__name__}"
    )


class DraughtsEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One learner against an opponent; see the module documentation."""

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 2}
    """Every mode, for ``gymnasium.make`` (which reads the class's metadata: without
    "human" listed it would wrap the env in its HumanRendering and ask for
    ``gymnasium[classic-control]``); an instance lists the modes it can show."""

    def __init__(self, variant: str = "damii", opponent: Any = None, play_as: str = "random",
                 illegal_action: str = "loss", render_mode: str | None = None,
                 **rule_options: Any) -> None:
        if play_as not in PLAY_AS:
            raise InvalidOptionError(f"play_as must be one of {PLAY_AS}, got {play_as!r}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise InvalidOptionError(
                f"illegal_action must be one of {ILLEGAL_ACTIONS}, got {illegal_action!r}"
            )
        self.engine = Engine(variant, **rule_options)
        self.opponent = _as_opponent(opponent, variant, rule_options)
        self.play_as = play_as
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        shown = render_modes()  # "human" prints text where pygame is missing (said so)
        if render_mode == "human" and "human" not in shown:
            shown.insert(0, "human")
        self.metadata = {**type(self).metadata, "render_modes": shown}  # own copy
        self._renderer = Renderer(render_mode, title=f"{self.engine.rules.name} draughts",
                                  fps=self.metadata["render_fps"])
        self.observation_space = spaces.Box(observation_low(self.engine.rules), 1.0,
                                            shape=observation_shape(self.engine.rules),
                                            dtype=np.float32)
        self.action_space = spaces.Discrete(self.engine.n_actions)
        self.game_state: State = self.engine.start_state()
        self._turn = TurnRecord()
        self.colour = 0
        self._over = True

    # --- episode -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """New game; ``options={"fen": ...}`` starts from a position."""
        super().reset(seed=seed)
        self.game_state = self.engine.start_state(self.np_random, (options or {}).get("fen"))
        self.colour = (int(self.np_random.integers(2)) if self.play_as == "random"
                       else _COLOURS[self.play_as])
        if isinstance(self.opponent, Player) and callable(getattr(self.opponent, "reset", None)):
            self.opponent.reset(int(self.np_random.integers(2**31)))
        self._over = False
        try:
            self._opponent_moves()
        except OpponentError:
            self._over = True  # the start position stays; reset again
            raise
        self._over = bool(self.game_state.done[0])
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._over:
            raise GameOverError("the episode is over; call reset() to start a new one")
        action = int(action)
        illegal = not self._is_legal(action)
        if illegal:
            if self.illegal_action == "raise":
                self.engine.step(self.game_state, np.array([action]))  # raises with details
            if self.illegal_action == "loss":
                self._over = True
                info = self._info(illegal_action=True)
                return self._observe(), LOSS, True, False, info
            action = int(self.engine.sample_actions(self.game_state, self.np_random)[0])
        before = self.game_state.copy()
        self._turn.before_hop(self.game_state, action)
        self.engine.step(self.game_state, np.array([action]))
        try:
            self._opponent_moves()
        except OpponentError:
            self.game_state = before
            self._turn.hops.pop()
            raise
        st = self.game_state
        self._over = bool(st.done[0])
        reward = outcome_reward(int(st.outcome[0]), self.colour)
        if self.render_mode == "human":
            self.render()
        info = self._info(illegal_action=True) if illegal else self._info()
        return self._observe(), reward, bool(st.terminated[0]), bool(st.truncated[0]), info

    def _is_legal(self, action: int) -> bool:
        st = self.game_state
        return bool(np.any(st.legal[0, : st.n_legal[0]] == action))

    def _opponent_moves(self) -> None:
        """Let the opponent play until it is the learner's turn or the game is over;
        raises :class:`OpponentError` if it fails (the caller puts the game back)."""
        st = self.game_state
        while not st.done[0] and int(st.turn[0]) != self.colour:
            if self.opponent is None:
                hops = [int(self.engine.sample_actions(st, self.np_random)[0])]
            elif isinstance(self.opponent, Player):
                hops = self._player_hops(self.opponent)
            else:
                hops = [self._policy_hop(self.opponent)]
            for hop in hops:
                self.engine.step(st, np.array([hop]))

    def _player_hops(self, player: Player) -> list[int]:
        """The hops of the full move a Player chooses here (checked before any is played)."""
        game = Game.at(self.engine, self.game_state)
        name = getattr(player, "name", type(player).__name__)
        try:
            choice = player.choose(game)
        except Exception as exc:
            raise OpponentError(f"the opponent {name!r} failed to choose a move in "
                                f"{game.fen()}: {type(exc).__name__}: {exc}") from exc
        try:
            move = game.parse_move(choice)
        except DamiiError as exc:
            raise OpponentError(f"the opponent {name!r} chose {choice!s}, which is not a "
                                f"legal move in {game.fen()}: {exc}") from exc
        return list(move.actions)

    def _policy_hop(self, policy: HopPolicy) -> int:
        """The hop a hop policy picks here (checked against the mask)."""
        st = self.game_state
        mask = self.engine.legal_action_mask(st)[0]
        try:
            action = policy(observe(self.engine, st)[0], mask)
        except Exception as exc:
            raise OpponentError(f"the opponent policy failed: {type(exc).__name__}: {exc}"
                                ) from exc
        if isinstance(action, (bool, float)) or not isinstance(action, (int, np.integer)) \
                or not 0 <= int(action) < mask.shape[0] or not mask[int(action)]:
            legal = np.flatnonzero(mask).tolist()
            raise OpponentError(f"the opponent policy chose action {action!r}, which is not "
                                f"legal here; legal actions: {legal}")
        return int(action)

    def _observe(self) -> np.ndarray:
        return observe(self.engine, self.game_state, colour=self.colour)[0]

    def _info(self, illegal_action: bool = False) -> dict[str, Any]:
        if self._over:
            mask = np.zeros(self.engine.n_actions, dtype=np.int8)
        else:
            mask = self.engine.legal_action_mask(self.game_state)[0]
        info: dict[str, Any] = {"action_mask": mask, "colour": self.colour,
                                "color": self.colour}
        if illegal_action:
            info["illegal_action"] = True
        if self.game_state.done[0]:
            info["outcome"] = int(self.game_state.outcome[0])
        return info

    def action_masks(self) -> np.ndarray:
        """bool (A,): the learner's legal actions now (for sb3-contrib's MaskablePPO)."""
        if self._over:
            return np.zeros(self.engine.n_actions, dtype=bool)
        return self.engine.legal_action_mask(self.game_state)[0].astype(bool)

    def fen(self) -> str:
        """The position as PDN FEN (Sci-Damath: with chip values and scores)."""
        return self.engine.fen(self.game_state)

    @property
    def board(self) -> Game:
        """The game as a :class:`damii_env.Game` (a copy), standing at the start of the
        learner's move in progress (like ``chess_v6``'s ``board``)."""
        return self._turn.turn_start(self.engine, self.game_state)[0]

    def action_text(self, action: int) -> ActionText:
        """PDN text of the learner's hop `action` and of the full move it belongs to,
        mid-capture included (:class:`damii_env.turn_text.ActionText`)."""
        game, played = self._turn.turn_start(self.engine, self.game_state)
        return action_text(game, played, int(action))

    # --- rendering ---------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        return self._renderer.render(self)

    def close(self) -> None:
        self._renderer.close()


def register_envs() -> None:
    """Register the Gymnasium ids of :data:`GYM_IDS` (once)."""
    for variant, env_id in GYM_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="damii_env.gym_env:DraughtsEnv",
                               kwargs={"variant": variant},
                               max_episode_steps=MAX_EPISODE_STEPS)

