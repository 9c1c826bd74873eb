"""Matches and self-play on Ray (issue 15): a real local Ray instance (``ray.init(num_cpus=2)``,
no mocks), bad addresses through the real ``damii`` command, and a missing Ray."""

from __future__ import annotations

import importlib.util
import json
import logging
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from damii_app.cli import main

ROOT = Path(__file__).resolve().parents[2]
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="Ray (the distributed extra) is not installed")

TINY = {"name": "tiny", "variant": "damii", "rule_options": {"turn_limit": 60},
        "algorithm": "tdleaf", "num_envs": 8, "rollout_steps": 16, "trunk": "mlp",
        "channels": 16, "blocks": 1, "minibatch_size": 64, "checkpoint_every": 1,
        "eval_every": 0, "final_eval_games": 0, "torch_threads": 1, "simulations": 2}
"""A run whose self-play finishes games within a few actor calls."""


HANG_GUARD_S = 300
"""Only stops a command that hangs (one waiting on Ray's own minutes of retries); the tests
check what the command says, not how fast a busy machine runs it."""


def _damii(*args: str, timeout: float = HANG_GUARD_S) -> subprocess.CompletedProcess:
    """The real command line in a process of its own."""
    return subprocess.run([sys.executable, "-m", "damii_app.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


# --- without a cluster ---------------------------------------------------------------------

def test_asking_for_ray_without_the_extra_names_the_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray absent: `import ray` fails
    # `--ray` before the specs or the config takes them for what they are, not an address
    assert main(["eval", "--ray", "random", "greedy", "--games", "2", "--no-progress",
                 "--out", str(tmp_path / "eval")]) == 2
    err = capsys.readouterr().err
    assert "damii-env[distributed]" in err and "Ray" in err
    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps(TINY))
    assert main(["train", "--ray", str(config), "--run-dir", str(tmp_path / "run"),
                 "--no-progress"]) == 2
    assert "damii-env[distributed]" in capsys.readouterr().err
    assert not (tmp_path / "run" / "config.yaml").exists()  # refused before the run began


def test_ray_config_keys_are_checked():
    from damii_training.config import ConfigError, config_from_dict

    config_from_dict({"ray_address": "10.0.0.5:6379", "ray_actors": 8})
    for bad in ({"ray_address": "somewhere"}, {"ray_actors": 0}, {"ray_weights_every": 0},
                {"ray_address": "auto", "ray_weights_every": 5, "ray_max_staleness": 2}):
        with pytest.raises(ConfigError, match="ray_"):
            config_from_dict(bad)


@needs_ray
def test_an_unreachable_address_is_refused_at_once_with_a_clear_error(tmp_path):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    out = _damii("eval", "random", "greedy", "--games", "2", "--no-progress",
                 "--ray", f"127.0.0.1:{port}", "--out", str(tmp_path / "eval"))
    # the command's own probe answered (refused at once), not Ray's minutes of retries:
    # only the probe says "cannot reach", and only a refused connection says why so
    assert out.returncode == 2, out.stderr[-2000:]
    assert f"cannot reach a Ray cluster at 127.0.0.1:{port} (Connection refused)" in \
        out.stderr.splitlines()[-1], out.stderr[-2000:]


@needs_ray
@pytest.mark.slow
def test_an_address_that_never_answers_is_refused_not_waited_for(tmp_path):
    server = socket.socket()  # accepts connections and never says a word
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held = []
    threading.Thread(target=lambda: [held.append(server.accept()) for _ in range(64)],
                     daemon=True).start()
    port = server.getsockname()[1]
    out = _damii("eval", "random", "greedy", "--games", "2", "--no-progress",
                 "--ray", f"127.0.0.1:{port}", "--out", str(tmp_path / "eval"))
    server.close()
    # the command's own deadline ended the wait (Ray alone would retry for minutes)
    from damii_agents.match.ray import CONNECT_TIMEOUT_S

    assert out.returncode == 2, out.stderr[-2000:]
    assert f"did not answer within {CONNECT_TIMEOUT_S:.0f} s" in out.stderr.splitlines()[-1]


# --- on a local Ray instance ----------------------------------------------------------------

@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()


def _without_times(data: Any) -> Any:
    """A results.json without the games' wall-clock seconds."""
    if isinstance(data, dict):
        return {k: _without_times(v) for k, v in data.items() if k != "seconds"}
    if isinstance(data, list):
        return [_without_times(v) for v in data]
    return data


def test_eval_on_ray_gives_the_local_results(ray_cluster, tmp_path, capsys):
    args = ["eval", "random", "greedy", "--games", "6", "--clock", "none", "--seed", "7",
            "--no-progress"]
    assert main([*args, "--workers", "1", "--out", str(tmp_path / "local")]) == 0
    local = capsys.readouterr().out
    assert main([*args, "--ray", "--out", str(tmp_path / "ray")]) == 0
    on_ray = capsys.readouterr().out
    assert local.split("saved:")[0] == on_ray.split("saved:")[0]  # the tables
    assert (tmp_path / "local" / "games.pdn").read_text() == \
        (tmp_path / "ray" / "games.pdn").read_text()
    results = [_without_times(json.loads((tmp_path / d / "results.json").read_text()))
               for d in ("local", "ray")]
    assert results[0] == results[1]


def test_training_with_two_actors_checkpoints_and_resumes(ray_cluster, tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps({**TINY, "total_steps": 100, "ray_actors": 3}))
    run = tmp_path / "run"
    assert main(["train", str(config), "--ray", "--run-dir", str(run), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "2 free CPUs; running 2 self-play actors instead of the 3 asked for" in err
    assert "ray_address: auto" in (run / "config.yaml").read_text()
    rows = (run / "metrics.csv").read_text().splitlines()[1:]
    first = int(rows[-1].split(",")[1])
    assert first >= 100 and (run / "checkpoints" / "last.pt").is_file()
    # --resume goes on from the checkpoint's samples, with the actors started afresh
    assert main(["train", "--resume", str(run), "--set", f"total_steps={first + 100}",
                 "--no-progress"]) == 0
    rows = (run / "metrics.csv").read_text().splitlines()[1:]
    samples = [int(r.split(",")[1]) for r in rows]
    assert samples == sorted(samples) and samples[-1] >= first + 100 and first in samples


def test_a_killed_actor_is_replaced_and_no_sample_is_lost_or_counted_twice(ray_cluster):
    from damii_training.config import config_from_dict
    from damii_training.distributed import distributed_trainer

    config = config_from_dict({**TINY, "algorithm": "alphazero", "ray_address": "auto",
                               "replay_size": 100_000, "total_steps": 10**6})
    t = distributed_trainer(config)
    try:
        t.iterate()
        victim = next(iter(t.actors))
        ray_cluster.kill(t.actors[victim])  # this test's own actor, by its handle
        for _ in range(200):
            if t.replaced and any(a > 1 for a, _, _ in t.accepted):
                break  # the replacement has delivered
            t.iterate()
        live = set(t.actors)
    finally:
        t.close()
    assert t.replaced == 1 and victim not in live and len(live) == 2
    taken = [(a, s) for a, s, _ in t.taken]
    assert len(taken) == len(set(taken))  # no batch taken twice
    for actor in {a for a, _ in taken}:  # each actor's batches 1, 2, ... in order, none skipped
        assert [s for a, s in taken if a == actor] == list(range(1, 1 + t.last_seq[actor]))
    assert set(t.accepted) <= set(t.taken)
    # every sample taken is counted unless dropped as stale, and is in the replay buffer once
    assert t.samples == sum(n for *_, n in t.accepted) == sum(n for *_, n in t.taken) - t.dropped
    assert t.samples == t.replay_len > 0


@pytest.mark.slow
def test_ppo_self_play_on_ray(ray_cluster, tmp_path):
    from damii_training.config import config_from_dict
    from damii_training.distributed import distributed_trainer

    t = distributed_trainer(config_from_dict({**TINY, "algorithm": "ppo",
                                              "ray_address": "auto"}))
    try:
        stats = [t.iterate() for _ in range(3)]
    finally:
        t.close()
    assert t.samples == sum(s["rollout_samples"] for s in stats) > 0
    assert all(s["staleness"] <= t.config.ray_max_staleness for s in stats)


@needs_ray
@pytest.mark.slow
@pytest.mark.timeout(900)  # starts Ray and trains in a subprocess given 300 s
def test_the_damii_command_trains_on_a_ray_instance_of_its_own(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text(json.dumps({**TINY, "algorithm": "ppo", "total_steps": 200}))
    out = _damii("train", str(config), "--ray", "local", "--run-dir", str(tmp_path / "run"),
                    "--no-progress", timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Ray actors" in out.stderr and (tmp_path / "run" / "report.md").is_file()
