"""The Sci-Damath policy's capture planes (damii_agents.network.CapturePoints): hand-built
positions with hand-computed points, and the one-jump captures checked against the
engine's legal hops in positions from random games."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from damii_agents.network import CapturePoints, NetworkShape, PolicyValueNet  # noqa: E402
from damii_env.engine import Engine  # noqa: E402
from damii_env.observation import observe, plane_names, square_cells  # noqa: E402

ENGINE = Engine("damath")
NAMES = plane_names(ENGINE.rules)
C = len(NAMES)
N = ENGINE.rules.board_size


def _shape(**kw) -> NetworkShape:
    return NetworkShape(C, N, ENGINE.n_actions, channels=16, blocks=1, trunk="mlp",
                        policy_trunk="conv", policy_channels=8, policy_blocks=1,
                        policy_head="factorised", orientation=ENGINE.rules.orientation,
                        policy_features="capture_points", **kw)


def _planes(obs: torch.Tensor) -> torch.Tensor:
    return CapturePoints(_shape())(obs)


def _channel(mover: int, diagonal: int) -> int:
    """First of the five planes (jump, +, -, x, /) of a side and a diagonal."""
    return (mover * 4 + diagonal) * 5


def _dark_cell() -> tuple[int, int]:
    """A dark square with room for a jump up and to the right, and one back down-left."""
    dark = set(square_cells(N, ENGINE.rules.orientation).tolist())
    for r in range(2, N - 1):
        for c in range(1, N - 2):
            if r * N + c in dark:
                return r, c
    raise AssertionError("no such square")


def _position(mover_plane: str, mover_value: float, op: str) -> tuple[torch.Tensor, int, int]:
    """An own piece at (r, c) worth `mover_value` (as the plane shows it), an opponent man
    worth 0.125 up-right of it, the square behind marked `op`, everything else empty."""
    r, c = _dark_cell()
    obs = torch.zeros(1, C, N, N)
    obs[0, NAMES.index(mover_plane), r, c] = 1.0
    obs[0, NAMES.index("own_chip_values"), r, c] = mover_value
    obs[0, NAMES.index("opponent_men"), r - 1, c + 1] = 1.0
    obs[0, NAMES.index("opponent_chip_values"), r - 1, c + 1] = 0.125
    obs[0, NAMES.index(op), r - 2, c + 2] = 1.0
    return obs, r, c


def test_a_man_jumping_a_man_scores_by_the_landing_square():
    obs, r, c = _position("own_men", 0.25, "op_mul")
    out = _planes(obs)[0]
    first = _channel(0, 1)  # the observer's pieces, diagonal (-1, +1)
    assert out[first, r, c] == 1.0
    # a = 0.25, b = 0.125 and the landing square is x: only the x plane, 4 a b = 0.125
    assert out[first + 1:first + 5, r, c].tolist() == [0.0, 0.0, 0.125, 0.0]
    # the opponent's man can jump the observer's piece down-left, when that square is empty
    back = _channel(1, 2)  # the opponent's pieces, diagonal (+1, -1)
    assert out[back, r - 1, c + 1] == 1.0
    # the only jumps on the board: one each way
    jumps = out[[_channel(m, d) for m in (0, 1) for d in range(4)]]
    assert jumps.sum() == 2.0


@pytest.mark.parametrize("op,expected", [("op_add", 0.375), ("op_sub", 0.125),
                                         ("op_div", 2.0)])
def test_each_operation_has_its_plane(op, expected):
    obs, r, c = _position("own_men", 0.25, op)
    out = _planes(obs)[0]
    first = _channel(0, 1)
    points = out[first + 1:first + 5, r, c].tolist()
    index = ("op_add", "op_sub", "op_mul", "op_div").index(op)
    assert points[index] == pytest.approx(expected)
    assert sum(abs(p) for i, p in enumerate(points) if i != index) == 0.0


def test_a_dama_counts_its_own_value_and_doubles_the_points():
    # the chip-value plane shows a dama's value doubled: 0.5 is a chip worth 0.25
    obs, r, c = _position("own_kings", 0.5, "op_mul")
    out = _planes(obs)[0]
    assert out[_channel(0, 1) + 3, r, c] == pytest.approx(2 * 4 * 0.25 * 0.125)


def test_no_jump_over_a_piece_with_something_behind_it():
    obs, r, c = _position("own_men", 0.25, "op_mul")
    obs[0, NAMES.index("own_men"), r - 2, c + 2] = 1.0  # the landing square is taken
    out = _planes(obs)[0]
    assert out[_channel(0, 1), r, c] == 0.0


def _random_positions(games: int = 64, plies: int = 60, seed: int = 3):
    """Positions at the start of a turn from random Sci-Damath games (and the states)."""
    rng = np.random.default_rng(seed)
    state = ENGINE.init(games, rng)
    for _ in range(plies):
        ENGINE.step(state, ENGINE.sample_actions(state, rng))
        ENGINE.reset_where(state, None, rng)
        yield state


def test_the_jump_planes_match_the_engines_one_jump_captures():
    """At the start of a turn: a jump plane of the observer's is set only where the engine
    has a capture to play (captures are compulsory), and every legal jump over an adjacent
    piece onto the square behind it is set at its square and diagonal (a legal capture
    may also be a dama's longer one, which the planes leave out)."""
    cells = square_cells(N, ENGINE.rules.orientation)
    n1 = N - 1
    checked = captures = 0
    for state in _random_positions():
        obs = observe(ENGINE, state)
        planes = _planes(torch.as_tensor(obs))
        for b in range(state.batch_size):
            if state.done[b] or obs[b, NAMES.index("continuing")].any():
                continue
            legal = ENGINE.legal_actions(state, b)
            is_capture = [any(state.board[b, ENGINE.ray[a // (4 * n1), (a // n1) % 4, j]] < 0
                              for j in range(a % n1)) for a in legal]
            mover_jumps = planes[b, [_channel(0, d) for d in range(4)]]
            if mover_jumps.any():
                assert any(is_capture), b
            for a, capture in zip(legal, is_capture, strict=True):
                s, d, k = a // (4 * n1), (a // n1) % 4, a % n1
                near = ENGINE.ray[s, d, 0]
                if not capture or k != 1 or state.board[b, near] >= 0:
                    continue
                dr, dc = np.subtract(divmod(cells[near], N), divmod(cells[s], N))
                diagonal = CapturePoints.DIAGONALS.index((int(dr), int(dc)))
                r, c = divmod(int(cells[s]), N)
                assert planes[b, _channel(0, diagonal), r, c] == 1.0
                captures += 1
            checked += 1
    assert checked > 1000 and captures > 100


def test_the_planes_feed_the_policy_tower_only():
    net = PolicyValueNet(_shape())
    obs = torch.as_tensor(observe(ENGINE, ENGINE.init(4, 0)))
    logits, value = net(obs)
    assert logits.shape == (4, ENGINE.n_actions)
    assert torch.equal(value, net.value(obs))
    assert not any("policy_features" in k for k in net.state_dict())  # nothing to save


def test_the_shape_refuses_capture_points_without_damath_planes_or_a_tower():
    with pytest.raises(ValueError, match="Sci-Damath"):
        NetworkShape(8, 10, 1800, policy_trunk="conv", policy_features="capture_points")
    with pytest.raises(ValueError, match="policy_trunk='conv'"):
        NetworkShape(C, N, ENGINE.n_actions, policy_features="capture_points")
    with pytest.raises(ValueError, match="policy_features must be one of"):
        NetworkShape(C, N, ENGINE.n_actions, policy_trunk="conv", policy_features="threats")


def test_the_config_asks_for_damath_and_a_policy_tower():
    from damii_training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="needs variant: damath and policy_trunk: conv"):
        load_config("configs/damii_quick.yaml", ["policy_features=capture_points",
                                                 "policy_trunk=conv"])
    with pytest.raises(ConfigError, match="policy_features must be none or capture_points"):
        load_config("configs/damii_quick.yaml", ["policy_features=threats"])
    config = load_config("configs/damath_tdleaf_policy.yaml", ["init_weights="])  # no runs/
    assert config.policy_features == "capture_points"
