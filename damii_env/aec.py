# noqa: D212, D415
"""
# Draughts: Damii, International, Triestine, Sci-Damath (PettingZoo AEC)

| Import             | `damii_env.env(variant)`, `damii_env.envs.damii_v0.env()`     |
|--------------------|-----------------------------------------------------------------|
| Variants           | `damii_v0`, `international_v0`, `triestine_v0`, `damath_v0`     |
| Actions            | Discrete                                                        |
| Parallel API       | No                                                              |
| Manual Control     | No                                                              |
| Agents             | `agents= ['player_0', 'player_1']`                              |
| Agents             | 2                                                               |
| Action Shape       | (1,)                                                            |
| Action Values      | Discrete(1800) (Sci-Damath: Discrete(896))                      |
| Observation Shape  | (8, 10, 10) (Sci-Damath: (15, 8, 8))                            |
| Observation Values | [0, 1] (Sci-Damath: [-1, 1])                                    |

Draughts on a 10x10 board: Ghanaian **Damii** (flying kings, free choice among
captures, dark corner on the right), **International** draughts (the same movement,
most pieces must be taken) and **Triestine** draughts (short kings, men capture
forwards only and never kings, Italian-style capture precedence); and **Sci-Damath**
on 8x8, where chips carry numbers, every capture scores `taker OP taken` with the
operation of the landing square, and the final totals decide the game. The rules and
every decision where the rule texts are silent are in `docs/RULES.md` and
`docs/DAMATH.md`.

```python
import damii_env

env = damii_env.env(variant="damii", render_mode="ansi")   # or international, triestine
env.reset(seed=42)
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:
        mask = observation["action_mask"]
        action = env.action_space(agent).sample(mask)   # your policy here
    env.step(action)
env.close()
```

`player_0` plays White: it starts on the bottom rows and moves first. `player_1`
plays Black. A move that captures several pieces is played as several consecutive
steps by the same agent: `agent_selection` stays on that agent until the capture
is complete.

### Arguments

``` python
damii_env.env(variant="damii", render_mode=None, score_shaping=0.0, **rule_options)
```

`variant`: `"damii"`, `"international"`, `"triestine"` or `"damath"`.

`score_shaping` (Sci-Damath only): each step also pays the change of the agent's
score lead (own points minus the opponent's; the opponent's minus its own under
`lower_wins=True`, where the lower total wins), divided by the largest value a chip of
the set can take and multiplied by this weight; the opponent gets the opposite. 0
(default) keeps the rewards at the end only. The shaping is
`damii_env.episode.shaping_potential`, the same the trainers use.

`render_mode`: `None`, `"human"` (a pygame window; `pip install "damii-env[human]"`;
without pygame, said once at construction, each board is printed as text),
`"ansi"` (text board) or `"rgb_array"` (an image with Pillow).

`rule_options`: any field of `damii_env.Rules`, for example
`orientation="standard"` (Damii's other orientation: dark corner on the left),
`turn_limit=200` (truncate after 200 plies), `repetition=0` or
`no_progress_moves=0` (switch a draw rule off); for Sci-Damath `chip_set="radical"`,
`lower_wins=True`, `first_player="random"` (then `player_1` may move first).

### Observation Space

The observation is a dictionary with an `observation` element, the planes described
below, and an `action_mask` element, the legal actions.

`observation` is a float32 array `(8, N, N)` seen by the agent that observes, in its
own orientation: its men start at the bottom and move up (the board is turned 180
degrees for `player_1`), so one network can play both sides. Square planes mark the
dark squares only; the two constant planes fill every cell.

| Channel | Content |
|---------|---------|
| 0 | own men |
| 1 | own kings |
| 2 | opponent men |
| 3 | opponent kings |
| 4 | the piece that must continue capturing (mid multi-capture), else empty |
| 5 | pieces captured this turn, not yet removed (always empty in Triestine: removed at once) |
| 6 | constant: king-only plies without capture / plies of the no-progress draw (0: rule off) |
| 7 | constant: the observer's colour, 0 for `player_0` (White), 1 for `player_1` (Black) |
| 8 | Sci-Damath: value of each own chip where it stands (damas doubled), scaled to [-1, 1] |
| 9 | Sci-Damath: the same for the opponent's chips |
| 10-13 | Sci-Damath: the squares marked +, -, x, / |
| 14 | Sci-Damath, constant: own score minus the opponent's, scaled and clipped to [-1, 1] |

The planes are computed by `damii_env.observation.observe`, the same function the
vector environment uses.

#### Legal Actions Mask

`action_mask` is an int8 vector of length 1800; 1 marks a legal action of the agent
to move. It is all zeros for the other agent, and after the game has ended. During a
multi-capture it only allows the next jump of the capturing piece. The mask only
allows hops that lie on a legal complete move under the variant's capture
precedence. Taking an illegal action ends the game with a reward of -1 for the agent
that took it and 0 for the other (`TerminateIllegalWrapper`); the unwrapped
`raw_env` raises `damii_env.IllegalActionError` instead.

### Action Space

An action is one hop of one piece, seen from the agent to move:

    action = ((square - 1) * 4 + direction) * (N - 1) + (distance - 1)

`square` is the PDN number (1..50) of the starting square *in the mover's
orientation* (for `player_1` square `s` is the absolute square `51 - s`), `direction`
0 up-left, 1 up-right, 2 down-left, 3 down-right ("up" is forward for the mover),
`distance` the diagonal steps to the landing square (1..9). 50 x 4 x 9 = 1800
actions. A quiet move is one action; a capture of k pieces is k actions.

### Rewards

| Winning | Losing | Draw or truncated |
| :----: | :---: | :---: |
| +1 | -1 | 0 |

Sci-Damath: the greater total (score plus remaining chips, damas doubled) wins,
whatever ended the game (no chips, no move, repetition, the 100-ply turn limit);
`score_shaping` adds the intermediate rewards described above.

A player with no piece or no legal move on their turn loses. A position occurring
the third time, and 25 moves by each side with only king moves and no capture, are
draws (both can be changed by rule options). With `turn_limit`, the game is
truncated (not drawn) after that many plies.

### Version History

* v0: Initial release (damii-env 0.1.0)

"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from damii_env.engine import Engine, OutcomeCode, State
from damii_env.episode import outcome_reward, shaping_potential
from damii_env.errors import IllegalActionError, InvalidOptionError
from damii_env.game import Game
from damii_env.observation import observation_low, observation_shape, observe
from damii_env.render import Renderer, render_modes
from damii_env.rules import make_rules
from damii_env.turn_text import ActionText, TurnRecord, action_text

AGENTS: tuple[str, str] = ("player_0", "player_1")
"""Agent names by colour: ``player_0`` White, ``player_1`` Black."""


def wrap(raw: AECEnv) -> AECEnv:
    """Apply PettingZoo's standard wrappers for classic games (as ``chess_v6`` does)."""
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def env(variant: str = "damii", render_mode: str | None = None, **rule_options: Any) -> AECEnv:
    """A wrapped draughts AEC environment (see the module documentation)."""
    return wrap(raw_env(variant, render_mode=render_mode, **rule_options))


class raw_env(AECEnv):
    """Draughts as a PettingZoo AEC environment, without the standard wrappers.

    ``engine`` is the rules engine and ``game_state`` the one-game engine state; use
    :meth:`fen` for the position as text.
    """

    metadata: dict[str, Any] = {
        "render_modes": render_modes(),
        "name": "draughts_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, variant: str = "damii", render_mode: str | None = None,
                 score_shaping: float = 0.0, **rule_options: Any) -> None:
        super().__init__()
        self.engine = Engine(variant, **rule_options)
        if score_shaping and not self.engine.scoring:
            raise InvalidOptionError(
                f"score_shaping is for scoring variants (damath), not {self.engine.rules.name}"
            )
        self.score_shaping = float(score_shaping)
        rules = self.engine.rules
        # this instance's own metadata and list of modes: a wrapper that edits them
        # changes no other instance or variant
        self.metadata = {**type(self).metadata, "render_modes": render_modes(),
                         "name": f"{rules.name}_v0"}
        self.render_mode = render_mode
        self._renderer = Renderer(render_mode, title=f"{rules.name} draughts",
                                  fps=self.metadata["render_fps"])
        self.possible_agents = list(AGENTS)
        shape = observation_shape(rules)
        n_actions = self.engine.n_actions
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(observation_low(self.engine.rules), 1.0, shape=shape,
                                          dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(n_actions,), dtype=np.int8),
            })
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(n_actions) for agent in self.possible_agents}
        self.np_random, self.np_random_seed = seeding.np_random(None)
        self._start(self.engine.start_state(self.np_random))

    # --- spaces ------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # --- episode -----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game. ``options={"fen": "W:W31-50:B1-20"}`` starts from a position.

        The game itself is deterministic; `seed` only draws the first player when the
        rule option ``first_player="random"`` is set.
        """
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        self._start(self.engine.start_state(self.np_random, (options or {}).get("fen")))
        if self.render_mode == "human":
            self.render()

    def _start(self, state: State) -> None:
        self.game_state = state
        self._turn = TurnRecord()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[int(state.turn[0])]
        self._end_if_over()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        colour = self.possible_agents.index(agent)
        planes = observe(self.engine, self.game_state, colour=colour)[0]
        if agent == self.agent_selection and not (self.terminations.get(agent, True)
                                                  or self.truncations.get(agent, True)):
            mask = self.engine.legal_action_mask(self.game_state)[0]
        else:
            mask = np.zeros(self.engine.n_actions, dtype=np.int8)
        return {"observation": planes, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play one hop for ``agent_selection`` (``None`` once the game has ended)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must play an action; None is only for a dead agent")
        potential_before = self._potential()
        self._turn.before_hop(self.game_state, int(action))
        self.engine.step(self.game_state, np.array([int(action)], dtype=np.int64))
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.score_shaping:
            gain = self._potential() - potential_before
            self.rewards["player_0"] += gain
            self.rewards["player_1"] -= gain
        self.agent_selection = self.possible_agents[int(self.game_state.turn[0])]
        self._end_if_over()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _potential(self) -> float:
        """White's score-shaping potential now (see :mod:`damii_env.episode`)."""
        return float(shaping_potential(self.engine, self.game_state, score=self.score_shaping)[0])

    def _end_if_over(self) -> None:
        outcome = int(self.game_state.outcome[0])
        if outcome == OutcomeCode.ONGOING:
            return
        for colour, agent in enumerate(self.possible_agents):
            self.rewards[agent] += outcome_reward(outcome, colour)
        truncated = outcome == OutcomeCode.TRUNCATED
        self.terminations = dict.fromkeys(self.agents, not truncated)
        self.truncations = dict.fromkeys(self.agents, truncated)

    # --- extras ------------------------------------------------------------------------
    def fen(self) -> str:
        """The position as PDN FEN (pieces captured mid-move are still on the board;
        Sci-Damath: with chip values, and the scores to 6 decimals)."""
        return self.engine.fen(self.game_state)

    @property
    def board(self) -> Game:
        """The game as a :class:`damii_env.Game` (a copy), standing at the start of the
        move in progress (like ``chess_v6``'s ``board``); :meth:`fen` is the position now."""
        return self._turn.turn_start(self.engine, self.game_state)[0]

    def action_text(self, action: int) -> ActionText:
        """PDN text of hop `action` for the agent to move and of the full move it belongs
        to, mid-capture included (:class:`damii_env.turn_text.ActionText`)."""
        game, played = self._turn.turn_start(self.engine, self.game_state)
        return action_text(game, played, int(action))

    def render(self) -> str | np.ndarray | None:
        return self._renderer.render(self)

    def close(self) -> None:
        self._renderer.close()


PETTINGZOO_IDS: dict[str, str] = {
    "damii": "damii_env/damii-v0",
    "international": "damii_env/international-v0",
    "triestine": "damii_env/triestine-v0",
    "damath": "damii_env/damath-v0",
}
"""PettingZoo registry id of each variant's AEC environment (``pettingzoo.make("aec", id)``,
PettingZoo 1.27+; the spelling ``damii_env/damii_v0`` finds the same)."""


def register_pettingzoo_envs() -> None:
    """Register the AEC environments of :data:`PETTINGZOO_IDS` in PettingZoo's registry
    (once; nothing to do with a PettingZoo older than its registry, 1.27)."""
    import pettingzoo

    if not hasattr(pettingzoo, "register"):
        return
    for variant, env_id in PETTINGZOO_IDS.items():
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=f"damii_env.envs.{variant}_v0:env")


def variant_api(variant: str, module: str) -> tuple[type[raw_env], Callable[..., AECEnv]]:
    """The ``raw_env`` class and ``env`` function of one variant's module (``damii_v0``, ...);
    `module` is that module's ``__name__``, so that the environments pickle."""
    title = make_rules(variant).name

    class variant_raw_env(raw_env):
        metadata = {**raw_env.metadata, "render_modes": render_modes(), "name": f"{title}_v0"}

        def __init__(self, render_mode: str | None = None, **rule_options: Any) -> None:
            super().__init__(variant, render_mode=render_mode, **rule_options)

    variant_raw_env.__name__ = variant_raw_env.__qualname__ = "raw_env"
    variant_raw_env.__module__ = module
    variant_raw_env.__doc__ = f"The {title} environment without the standard wrappers."

    def variant_env(render_mode: str | None = None, **rule_options: Any) -> AECEnv:
        return wrap(variant_raw_env(render_mode=render_mode, **rule_options))

    variant_env.__name__ = variant_env.__qualname__ = "env"
    variant_env.__module__ = module
    variant_env.__doc__ = f"The {title} environment, wrapped like PettingZoo's classic envs."
    return variant_raw_env, variant_env
