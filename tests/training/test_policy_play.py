"""TD-leaf's ``policy_play`` (DAgger): in the policy's games the policy network's first
choice is played, in the others the search's; every decision keeps the search's targets."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training needs the train extra")

import damii_env as d  # noqa: E402
from damii_agents.players.policy_player import PolicyPlayer  # noqa: E402
from damii_agents.search import minimax  # noqa: E402
from damii_agents.search.evaluator import NetworkEvaluator  # noqa: E402
from damii_training.config import ConfigError, load_config  # noqa: E402
from damii_training.tdleaf import TDLeafTrainer  # noqa: E402
from tests.training.test_tdleaf import TINY  # noqa: E402


def _opening_trainer(policy_play: float, monkeypatch
                     ) -> tuple[TDLeafTrainer, list[np.ndarray], int, int]:
    """A trainer of 4 games at Damii's opening whose search prefers one hop by 0.5, not
    the one the policy alone plays; the hops each step plays are recorded. Returns the
    trainer, the record, the search's hop and the policy's."""
    cfg = load_config("configs/damii_quick.yaml", [
        *TINY, "num_envs=4", "rollout_steps=1", "explore_plies=0",
        f"policy_play={policy_play}"])
    trainer = TDLeafTrainer(cfg)
    state = trainer.state
    k = int(state.n_legal[0])
    # the policy alone (the `ckpt:` player, argmax): an independent reading of the network
    agent = PolicyPlayer(NetworkEvaluator(trainer.net, d.Engine("damii")))
    (policy_action,) = agent.choose(d.Game("damii")).actions
    opening = state.legal[0, :k].tolist()
    searched = (opening.index(policy_action) + 1) % k  # the search's favourite: another hop
    values = np.zeros(4 * k)
    values[searched::k] = 0.5
    found = minimax.SearchResult(values=values, root=np.repeat(np.arange(4), k),
                                 hop_index=np.tile(np.arange(k), 4), nodes=5 * k,
                                 leaves=4 * k)
    monkeypatch.setattr(minimax, "search", lambda *a, **kw: found)
    played: list[np.ndarray] = []
    step = trainer.engine.step
    monkeypatch.setattr(trainer.engine, "step",
                        lambda st, acts: (played.append(np.array(acts)), step(st, acts))[1])
    return trainer, played, opening[searched], policy_action


def test_policy_games_play_the_policy_and_keep_the_search_targets(monkeypatch):
    trainer, played, search_action, policy_action = _opening_trainer(0.5, monkeypatch)
    assert search_action != policy_action
    trainer.play()
    # rows 0 and 1 (round(0.5 * 4) = 2 games) play the policy's hop, rows 2 and 3 the search's
    assert played[0].tolist() == [policy_action, policy_action, search_action, search_action]
    # every decision's policy target is still the search's softmax: its mass on the
    # search's favourite
    for _row, _obs, legal, policy, _colour, best in trainer.pending:
        k = len(policy)
        assert legal[int(np.argmax(policy))] == search_action
        assert best == pytest.approx(0.5)
        assert k == 9


def test_without_policy_play_every_game_plays_the_search(monkeypatch):
    trainer, played, search_action, _policy_action = _opening_trainer(0.0, monkeypatch)
    trainer.play()
    assert played[0].tolist() == [search_action] * 4


@pytest.mark.parametrize("bad", ["-0.1", "1.5"])
def test_policy_play_is_a_share(bad):
    with pytest.raises(ConfigError, match="policy_play.*from 0 to 1"):
        load_config("configs/damii_quick.yaml", [*TINY, f"policy_play={bad}"])

