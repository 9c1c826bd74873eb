"""The network alone (``ckpt:PATH``, ``pretrained:NAME``): the policy picks each hop, by
argmax or by sampling; when its value head says it is ahead, the argmax player keeps
away from draws by rule (repetition, no progress, endgame)."""

from __future__ import annotations

import numpy as np

from damii_agents.players.network_player import NetworkPlayer
from damii_agents.search.evaluator import NetworkEvaluator
from damii_env.engine import EndReason, Engine, State


class PolicyPlayer(NetworkPlayer):
    """Plays the hops the policy network prefers."""

    def __init__(self, evaluator: NetworkEvaluator, mode: str = "argmax",
                 avoid_rule_draws: bool = True, seed: int | None = None,
                 name: str = "neural") -> None:
        super().__init__(evaluator, mode=mode, seed=seed, name=name)
        self.avoid_rule_draws = avoid_rule_draws
        """Policy alone (argmax), ahead by its value head: play the policy's best quiet hop
        that neither repeats a position nor lets the game be drawn by a rule (repetition,
        no progress, endgame) at once or by a reply (see :func:`no_rule_draw_first`)."""

    def hop_weights(self, state: State, evaluator: NetworkEvaluator) -> np.ndarray:
        probs, value = evaluator.action_probs(state)
        p = probs[0]
        if (self.avoid_rule_draws and self.mode == "argmax" and value[0] > 0
                and not state.capturing[0]):
            p = no_rule_draw_first(state, evaluator.engine, p)
        return p


def no_rule_draw_first(state: State, engine: Engine, p: np.ndarray) -> np.ndarray:
    """`p` as is when its best hop leads to a position not seen before in this game
    (since the last capture or man move), does not end the game drawn by a rule, and
    leaves the opponent no reply that does; else one-hot on the policy's best hop
    that does all three (`p` as is when none does). A policy sees no history, and
    it misreads the no-progress counter: without this, a side that is ahead shuffles
    its kings into a repetition or no-progress draw where a man move was at hand. It
    looks at most two plies ahead, at the positions' identity and the game's rules
    only, never at their value."""
    k = int(state.n_legal[0])
    legal = state.legal[0, :k].astype(np.int64)
    children = state.take(np.zeros(k, dtype=np.int64))  # every hop played at once
    engine.step(children, legal)
    new = (children.repetitions == 0) & ~_drawn_by_rule(children)
    order = np.argsort(-p[legal], kind="stable")
    for i in order[new[order]]:
        if not _reply_draws(engine, children.take(slice(i, i + 1))):
            if i == order[0]:
                return p
            one = np.zeros_like(p)
            one[legal[i]] = 1.0
            return one
    return p


RULE_DRAWS = (EndReason.REPETITION, EndReason.NO_PROGRESS, EndReason.ENDGAME)
"""The ways a game is drawn by a rule (not by the players' moves running out)."""


def _drawn_by_rule(state: State) -> np.ndarray:
    """(B,) whether each game is over, drawn by one of :data:`RULE_DRAWS`."""
    return state.done & np.isin(state.reason, RULE_DRAWS)


def _reply_draws(engine: Engine, state: State) -> bool:
    """Whether a reply of the side to move in game 0 ends the game drawn by a rule (a
    capture or a man move draws by none, but it is tried as well: cheap)."""
    if state.done[0] or state.capturing[0]:
        return False
    k = int(state.n_legal[0])
    replies = state.take(np.zeros(k, dtype=np.int64))
    engine.step(replies, state.legal[0, :k].astype(np.int64))
    return bool(np.any(_drawn_by_rule(replies)))
