"""Training: the real `damii train` entry point, resume, strict configs, checkpoints."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="training needs the train extra")

from damii_agents.checkpoint import load_checkpoint  # noqa: E402
from damii_app.cli import main  # noqa: E402
from damii_env.observation import plane_names  # noqa: E402
from damii_training.config import ConfigError, load_config  # noqa: E402
from damii_training.run import run_training  # noqa: E402

TINY = ["total_steps=256", "num_envs=8", "rollout_steps=16", "channels=8", "blocks=1",
        "minibatch_size=64", "epochs=1", "eval_every=2", "eval_games=2",
        "eval_opponents=[random]", "final_eval_games=2", "final_eval_opponents=[random]",
        "checkpoint_every=1", "snapshot_every=1", "pool_prob=0.5"]


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_damii_train_entry_point_runs_each_variant(tmp_path, variant, capsys):
    run_dir = tmp_path / variant
    rc = main(["train", "configs/damii_quick.yaml", "--set", f"variant={variant}",
               *[a for s in TINY for a in ("--set", s)], "--run-dir", str(run_dir),
               "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "| random |" in out
    for name in ("config.yaml", "metrics.csv", "evals.csv", "report.md", "learning_curve.png",
                 "checkpoints/last.pt", "checkpoints/best.pt"):
        assert (run_dir / name).exists(), name
    data = load_checkpoint(run_dir / "checkpoints" / "last.pt")
    assert data["variant"] == variant and data["step"] >= 256
    with (run_dir / "metrics.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [int(r["iteration"]) for r in rows] == list(range(1, len(rows) + 1))
    cumulative = [int(r["samples"]) for r in rows]
    assert cumulative == sorted(cumulative) and cumulative[-1] == data["step"]
    assert sum(int(r["rollout_samples"]) for r in rows) == data["step"]


@pytest.mark.parametrize("extra", [
    [],
    # the alpha-beta opponent draws its seeds from the trainer's generator: still exact
    ["variant=damath", "rule_options={}", "alphabeta_prob=0.5", "score_shaping=0.1",
     "pool_prob=0.3", "alphabeta_imitation=0.5"],
])
def test_resume_continues_at_the_right_step_with_the_same_results(tmp_path, extra):
    overrides = [*TINY, *extra, "total_steps=512", "eval_every=0", "final_eval_games=0"]
    straight = tmp_path / "straight"
    run_training("configs/damii_quick.yaml", overrides, run_dir=straight, progress=False)
    # an interrupted run: stop after half the samples, then resume to the end
    cut = tmp_path / "cut"
    run_training("configs/damii_quick.yaml", [*overrides[:-3], "total_steps=256",
                                               "eval_every=0", "final_eval_games=0"],
                 run_dir=cut, progress=False)
    cfg = (cut / "config.yaml").read_text().replace("total_steps: 256", "total_steps: 512")
    (cut / "config.yaml").write_text(cfg)
    half = load_checkpoint(cut / "checkpoints" / "last.pt")
    run_training(resume=cut, progress=False)
    a = load_checkpoint(straight / "checkpoints" / "last.pt")
    b = load_checkpoint(cut / "checkpoints" / "last.pt")
    assert half["iteration"] < b["iteration"] == a["iteration"]
    assert a["step"] == b["step"]
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    with (cut / "metrics.csv").open() as f:
        iterations = [int(r["iteration"]) for r in csv.DictReader(f)]
    assert iterations == list(range(1, a["iteration"] + 1))  # none lost, none repeated


def test_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown key.*learning_rat\\b"):
        load_config("configs/damii_quick.yaml", ["learning_rat=0.1"])
    with pytest.raises(ConfigError, match="num_envs must be of type int"):
        load_config("configs/damii_quick.yaml", ["num_envs=many"])
    with pytest.raises(ConfigError, match="clip must be between 0 and 1"):
        load_config("configs/damii_quick.yaml", ["clip=2"])
    with pytest.raises(ConfigError, match="variant must be"):
        load_config("configs/damii_quick.yaml", ["variant=chess"])
    with pytest.raises(ConfigError, match="rule_options: unknown rule option"):
        load_config("configs/damii_quick.yaml", ["rule_options.flying=1"])
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_envs: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    assert load_config("configs/damii_quick.yaml", ["rule_options.turn_limit=50"]).rule_options \
        == {"turn_limit": 50}


def test_train_cli_errors(tmp_path, capsys):
    assert main(["train", "configs/damii_quick.yaml", "--set", "epochs=0"]) == 2
    assert "epochs must be >= 1" in capsys.readouterr().err
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "no config.yaml" in capsys.readouterr().err


AZ = ["algorithm=alphazero", "simulations=4", "replay_size=500", "rollout_steps=8",
      "rule_options.turn_limit=40"]


@pytest.mark.parametrize("variant", ["damii", "international", "triestine", "damath"])
def test_alphazero_entry_point_runs_each_variant(tmp_path, variant, capsys):
    run_dir = tmp_path / variant
    rc = main(["train", "configs/damii_quick.yaml", "--set", f"variant={variant}",
               *[a for s in [*TINY, *AZ, "total_steps=96"] for a in ("--set", s)],
               "--run-dir", str(run_dir), "--no-progress"])
    assert rc == 0
    assert "| random |" in capsys.readouterr().out
    data = load_checkpoint(run_dir / "checkpoints" / "last.pt")
    assert data["step"] >= 96 and data["variant"] == variant


def check_resume_is_exact(tmp_path, overrides: list[str], total: int) -> dict:
    """A run to `total` samples and a run cut at half and resumed end with the same
    network; returns the straight run's last checkpoint. Checks bookkeeping (resume), not
    correctness: the trainer is compared with itself."""
    straight = tmp_path / "straight"
    run_training("configs/damii_quick.yaml", [*overrides, f"total_steps={total}"],
                 run_dir=straight, progress=False)
    cut = tmp_path / "cut"
    run_training("configs/damii_quick.yaml", [*overrides, f"total_steps={total // 2}"],
                 run_dir=cut, progress=False)
    cfg = (cut / "config.yaml").read_text().replace(f"total_steps: {total // 2}",
                                                     f"total_steps: {total}")
    (cut / "config.yaml").write_text(cfg)
    run_training(resume=cut, progress=False)
    a = load_checkpoint(straight / "checkpoints" / "last.pt")
    b = load_checkpoint(cut / "checkpoints" / "last.pt")
    assert a["iteration"] == b["iteration"] and a["step"] == b["step"]
    assert a["trainer"]["replay"]["z"].numel() > 0  # games finished and reached the buffer
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    return a


def test_alphazero_resume_gives_the_same_network(tmp_path):
    check_resume_is_exact(tmp_path, [*TINY, *AZ, "eval_every=0", "final_eval_games=0",
                                     "rollout_steps=20"], 240)


@pytest.mark.parametrize("fen,winning_hop", [
    ("W:W26,K2,38:B13,K44", (2, 35)),   # 2x35x49 takes the last pieces
    ("W:W48,K4,K2:B18,44", (4, 22)),    # 4x22x50
])
def test_batched_search_finds_the_winning_capture(fen, winning_hop):
    """With exact terminal values, the visits go to the only sequence that wins at once,
    whatever the (untrained) network says."""
    import numpy as np

    import damii_env as d
    from damii_agents.network import NetworkShape, PolicyValueNet
    from damii_agents.search.evaluator import NetworkEvaluator
    from damii_agents.search.puct import BatchedSearch

    game = d.Game.from_fen(fen, "damii", orientation="standard")
    engine = game.engine
    torch.manual_seed(0)
    net = PolicyValueNet(NetworkShape(8, 10, engine.n_actions, channels=8, blocks=1)).eval()
    search = BatchedSearch(engine, NetworkEvaluator(net, engine), simulations=48,
                           rng=np.random.default_rng(0))
    visits, _ = search.run(game.state, noise=False)
    best = int(game.state.legal[0, int(visits[0].argmax())])
    start, direction, distance = engine.geometry.decode(best)
    landing = int(engine.ray[start, direction, distance - 1])
    assert (start + 1, landing + 1) == winning_hop


@pytest.mark.skipif(torch.cuda.is_available(), reason="the message needs a machine without CUDA")
def test_cuda_asked_without_cuda_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="no CUDA device"):
        run_training("configs/damii_quick.yaml", [*TINY, "device=cuda"], run_dir=tmp_path / "r",
                     progress=False)


def test_new_training_options_are_checked(tmp_path):
    with pytest.raises(ConfigError, match="pool_prob \\+ alphabeta_prob must be at most 1"):
        load_config("configs/damii_quick.yaml", ["pool_prob=0.6", "alphabeta_prob=0.5"])
    with pytest.raises(ConfigError, match="alphabeta_depth must be from 1 to 8"):
        load_config("configs/damii_quick.yaml", ["alphabeta_depth=0"])
    with pytest.raises(ConfigError, match="score_shaping is for scoring variants"):
        load_config("configs/damii_quick.yaml", ["score_shaping=0.1"])
    with pytest.raises(ConfigError, match="init_weights .* is not a file"):
        load_config("configs/damii_quick.yaml", [f"init_weights={tmp_path / 'none.pt'}"])


def test_init_weights_starts_from_a_checkpoint_and_refuses_a_misfit(tmp_path):
    from damii_training.ppo import PPOTrainer

    source = tmp_path / "source"
    run_training("configs/damii_quick.yaml", [*TINY, "eval_every=0", "final_eval_games=0"],
                 run_dir=source, progress=False)
    ckpt = source / "checkpoints" / "last.pt"
    trainer = PPOTrainer(load_config("configs/damii_quick.yaml",
                                     [*TINY, f"init_weights={ckpt}", "seed=5"]))
    saved = load_checkpoint(ckpt)["model"]
    for key, value in trainer.net.state_dict().items():
        assert torch.equal(value, saved[key]), key
    with pytest.raises(ConfigError, match="network .* set channels and blocks"):
        PPOTrainer(load_config("configs/damii_quick.yaml",
                               [*TINY, f"init_weights={ckpt}", "channels=16"]))
    with pytest.raises(ConfigError, match="was trained for damii"):
        PPOTrainer(load_config("configs/damii_quick.yaml",
                               [*TINY, f"init_weights={ckpt}", "variant=international"]))
    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"not a checkpoint")
    with pytest.raises(ConfigError, match="init_weights: checkpoint .* cannot be read"):
        PPOTrainer(load_config("configs/damii_quick.yaml", [*TINY, f"init_weights={broken}"]))


def _games_against_alphabeta(games: int, rollout_steps: int, turn_limit: int):
    """A PPO trainer whose every game, the first ones too, has an alpha-beta seat."""
    from damii_training.ppo import ALPHABETA, PPOTrainer

    cfg = load_config("configs/damii_quick.yaml",
                      [*TINY, f"num_envs={games}", f"rollout_steps={rollout_steps}",
                       "pool_prob=0", "alphabeta_prob=1", f"rule_options.turn_limit={turn_limit}"])
    trainer = PPOTrainer(cfg)
    trainer._assign_seats(np.arange(games))
    assert (trainer.pool_index == ALPHABETA).all()
    return trainer


def test_alphabeta_opponent_seat_is_not_trained_on():
    # one game, 40 hops at most 40 plies with a 40-ply limit: the rollout is its first game
    trainer = _games_against_alphabeta(1, 40, 40)
    learner = int(trainer.learner_colour[0])
    ro = trainer.collect()
    colour_plane = plane_names(trainer.engine.rules).index("colour")
    assert (ro.obs[:, colour_plane] == learner).all()
    assert 10 <= ro.size <= 30  # about half the hops: the opponent's are not samples


def test_alphabeta_seat_teaches_the_policy_its_hops():
    trainer = _games_against_alphabeta(4, 30, 40)
    trainer.config.alphabeta_imitation = 5.0
    trainer.learner_colour[:] = 0  # the learner plays White, alpha-beta Black, in all four
    ro = trainer.collect()
    assert ro.teacher_actions is not None and len(ro.teacher_actions) >= 4 * 10
    # the teacher's samples are Black's positions, with legal hops; the learner's White's
    colour_plane = plane_names(trainer.engine.rules).index("colour")
    assert (ro.obs[:, colour_plane] == 0).all()
    assert (ro.teacher_obs[:, colour_plane] == 1).all()
    assert bool(ro.teacher_mask[torch.arange(len(ro.teacher_actions)),
                                ro.teacher_actions].all())
    assert len(ro.teacher_actions) + ro.size == 4 * 30
    everything = torch.arange(len(ro.teacher_actions))
    with torch.no_grad():
        before = float(trainer._imitation_loss(ro, everything))
    stats = trainer.update(ro)
    with torch.no_grad():
        after = float(trainer._imitation_loss(ro, everything))
    assert stats["imitation_loss"] > 0
    assert after < before - 0.05  # the policy moved towards the teacher's hops


def test_alphabeta_opponent_beats_a_fresh_network():
    trainer = _games_against_alphabeta(8, 400, 150)
    ro = trainer.collect()
    # samples of finished games carry the learner's result (+1 win, -1 loss, 0 draw)
    lost = int((ro.targets == -1).sum())
    won = int((ro.targets == 1).sum())
    assert ro.episodes_finished >= 8
    assert lost > 3 * won  # depth-1 alpha-beta with capture quiescence sees the shots


def test_alphabeta_plays_its_moves_hop_by_hop_in_a_batched_state():
    """A trainer's seat asks the whole-move search for the move at a turn's start and
    plays its hops one by one: the first is the move's first hop (the same seed, the same
    move), the others follow in the middle of the capture."""
    from damii_agents.players.alphabeta import AlphaBetaAgent
    from damii_agents.seats import HopSeat
    from damii_env import Game

    rng = np.random.default_rng(4)
    for variant in ("damii", "triestine"):
        game = Game(variant)
        for k in range(30):
            moves = game.legal_moves()
            if not moves:
                break
            seat = HopSeat(AlphaBetaAgent(variant, depth=2, tt_bits=12), game.engine)
            chooser = AlphaBetaAgent(variant, depth=2)
            chooser.reset(int(np.random.default_rng(k).integers(1 << 62)))
            move = chooser.choose(game)
            state = game.state.take(slice(0, 1))
            played = []
            for _ in move.actions:
                hop = seat.hop(state, 0, np.random.default_rng(k))
                played.append(hop)
                game.engine.step(state, np.array([hop]))
            assert tuple(played) == move.actions
            game.push(moves[int(rng.integers(len(moves)))])


def test_score_shaping_adds_the_points_the_mover_gains():
    from damii_env import Game
    from damii_env.observation import chip_scale
    from damii_training.ppo import PPOTrainer

    # White's chip on 13 must capture Black's 5 on 18, landing on 22 'x': 4 * 5 = 20 points
    game = Game.from_fen("W:W13=4:B1=1,18=5", "damath", chip_set="counting")
    targets = {}
    for shaping in (0.0, 0.25):
        cfg = load_config("configs/damath_quick.yaml",
                          [*TINY, "num_envs=1", "rollout_steps=1", "pool_prob=0",
                           "rule_options={chip_set: counting}", f"score_shaping={shaping}"])
        trainer = PPOTrainer(cfg)
        trainer.state = game.state.copy()
        ro = trainer.collect()
        assert ro.size == 1 and not trainer.state.done[0]
        targets[shaping] = float(ro.targets[0])
    scale = chip_scale(game.engine)
    assert targets[0.25] - targets[0.0] == pytest.approx(0.25 * 20 / scale, abs=1e-6)


def test_every_config_key_is_documented():
    import dataclasses
    from pathlib import Path

    from damii_training.config import TrainConfig

    doc = (Path(__file__).parents[2] / "docs" / "TRAINING.md").read_text()
    for f in dataclasses.fields(TrainConfig):
        if f.name == "patterns":  # a section: its keys have a table of their own
            assert "| `patterns` | section |" in doc
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        assert f"| `{f.name}` | `{default!r}` |" in doc, f.name


def _train_tiny(run_dir: Path, checkpoint_every: int) -> int:
    """`damii train` of a tiny PPO run of 768 samples, no evaluations; its exit code."""
    args = [a for s in [*TINY, "total_steps=768", f"checkpoint_every={checkpoint_every}",
                        "eval_every=0", "final_eval_games=0"] for a in ("--set", s)]
    return main(["train", "configs/damii_quick.yaml", *args, "--run-dir", str(run_dir),
                 "--no-progress"])


def test_ctrl_c_names_the_checkpoint_to_resume_from(tmp_path, monkeypatch, capsys):
    from damii_training.ppo import PPOTrainer

    calls = {"n": 0}
    iterate = PPOTrainer.iterate

    def interrupted_on_the_fourth(self):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return iterate(self)

    monkeypatch.setattr(PPOTrainer, "iterate", interrupted_on_the_fourth)
    run_dir = tmp_path / "run"
    rc = _train_tiny(run_dir, checkpoint_every=2)
    assert rc == 130
    err = capsys.readouterr().err
    assert f"interrupted at iteration 3; the run continues from its last checkpoint " \
           f"(iteration 2) with: damii train --resume {run_dir}" in err
    assert load_checkpoint(run_dir / "checkpoints" / "last.pt")["iteration"] == 2
    monkeypatch.setattr(PPOTrainer, "iterate", iterate)
    assert main(["train", "--resume", str(run_dir), "--no-progress"]) == 0
    assert load_checkpoint(run_dir / "checkpoints" / "last.pt")["step"] >= 768


def test_sigterm_stops_a_run_like_ctrl_c(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    run_dir = tmp_path / "run"
    args = [a for s in [*TINY, "total_steps=100000", "checkpoint_every=1", "eval_every=0",
                        "final_eval_games=0"] for a in ("--set", s)]
    proc = subprocess.Popen([sys.executable, "-m", "damii_app.cli", "train",
                             "configs/damii_quick.yaml", *args, "--run-dir", str(run_dir),
                             "--no-progress"], stderr=subprocess.PIPE, text=True)
    last = run_dir / "checkpoints" / "last.pt"
    # wait for the event (the checkpoint on disk), however long the first iteration's
    # compile takes on a loaded machine; the bound only turns a hang into a failure
    deadline = time.monotonic() + 500
    while not last.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert last.exists(), proc.stderr.read() if proc.poll() is not None else "no checkpoint"
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "the run continues from its last checkpoint (iteration" in err
    assert f"damii train --resume {run_dir}" in err
    assert load_checkpoint(last)["iteration"] >= 1


@pytest.mark.parametrize("lam, chain", [(1.0, [2.0, 2.0, 1.0]), (0.5, [0.925, 1.65, 1.0])])
def test_gae_targets_by_hand(lam, chain):
    from damii_training.ppo import PPOTrainer

    trainer = PPOTrainer(load_config("configs/damii_quick.yaml", [*TINY, f"gae_lambda={lam}"]))
    # game row 0: White's samples at times 0, 2, 4 (interleaved with Black's one at time 1);
    # White's potential rises by 1 before its last hop, and White wins (potential 1 at the end)
    rows = np.array([0, 0, 0, 0])
    colour = np.array([0, 1, 0, 0])
    episode = np.zeros(4, dtype=np.int64)
    values = np.array([0.1, 0.5, 0.2, 0.3])
    phi = np.array([0.0, 0.0, 0.0, 1.0])
    end_value = np.array([1.0, -1.0, 1.0, 1.0])
    end_phi = np.array([1.0, -1.0, 1.0, 1.0])
    targets = trainer._gae_targets(rows, colour, episode, values, phi, end_value, end_phi)
    # White: deltas 0.1, 1.1, 0.7 backwards with lambda; Black: -1 - 0 + -1 - 0.5
    assert targets[[0, 2, 3]] == pytest.approx(chain)
    assert targets[1] == pytest.approx(-2.0)


def test_material_shaping_counts_the_piece_taken():
    from damii_env import Game
    from damii_training.ppo import PPOTrainer

    # White's man on 28 must take 23 (International numbering); Black keeps a man on 1
    targets = {}
    for shaping in (0.0, 0.1):
        trainer = PPOTrainer(load_config("configs/international_quick.yaml",
                                         [*TINY, "num_envs=1", "rollout_steps=1",
                                          "pool_prob=0", f"material_shaping={shaping}"]))
        # the position under the trainer's own rules (its turn limit included)
        game = Game.from_fen("W:W28:B23,1", "international", **trainer.config.rule_options)
        trainer.state = game.state.copy()
        ro = trainer.collect()
        assert ro.size == 1 and not trainer.state.done[0]
        targets[shaping] = float(ro.targets[0])
    assert targets[0.1] - targets[0.0] == pytest.approx(0.1, abs=1e-6)


def test_export_adds_up_a_chain_of_runs(tmp_path, capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    quiet = [*TINY, "eval_every=1", "final_eval_games=0"]
    run_training("configs/damii_quick.yaml", quiet, run_dir=first, progress=False)
    seed = first / "checkpoints" / "last.pt"
    run_training("configs/damii_quick.yaml", [*quiet, f"init_weights={seed}"],
                 run_dir=second, progress=False)
    out, png = tmp_path / "weights.pt", tmp_path / "curve.png"
    assert main(["export", str(first), str(second), "--out", str(out), "--plot", str(png)]) == 0
    printed = capsys.readouterr().out
    a, b = load_checkpoint(seed), load_checkpoint(second / "checkpoints" / "best.pt")
    shipped = load_checkpoint(out)
    assert shipped["step"] == a["step"] + b["step"]
    assert shipped["training_seconds"] == pytest.approx(a["elapsed"] + b["elapsed"], abs=0.2)
    assert [s["samples"] for s in shipped["stages"]] == [a["step"], b["step"]]
    assert "trainer" not in shipped and png.stat().st_size > 10_000
    for key, value in b["model"].items():
        assert torch.equal(shipped["model"][key], value), key
    assert f"{a['step'] + b['step']:,} samples" in printed
    # a run that did not start from the previous one's weights is not part of its chain
    assert main(["export", str(second), str(first), "--out", str(out)]) == 2
    assert "did not start from the weights" in capsys.readouterr().err
    # a third run seeded from the exported file: the export's step is the chain's, so the
    # second run counts what it had reached at that export, not the sum again
    third, out3 = tmp_path / "third", tmp_path / "weights3.pt"
    run_training("configs/damii_quick.yaml", [*quiet, f"init_weights={out}"], run_dir=third,
                 progress=False)
    assert main(["export", str(first), str(second), str(third), "--out", str(out3)]) == 0
    c = load_checkpoint(third / "checkpoints" / "best.pt")
    assert load_checkpoint(out3)["step"] == a["step"] + b["step"] + c["step"]
    assert main(["export", str(first), str(third), "--out", str(out3)]) == 2
    assert "exported from run 'second'" in capsys.readouterr().err


def test_a_signal_during_a_checkpoint_write_waits_for_the_write(tmp_path, monkeypatch, capsys):
    """SIGTERM (or Ctrl-C) arriving while a checkpoint is written stops the run cleanly
    after the write: the file is whole and the message names it."""
    import os
    import signal

    import damii_training.selfplay as trainer_module  # the network trainers' checkpoint

    real_save = trainer_module.save_checkpoint
    calls = {"n": 0}

    def save_with_a_kill_inside(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:  # the second last.pt: a SIGTERM arrives mid-write
            os.kill(os.getpid(), signal.SIGTERM)
        return real_save(*args, **kwargs)

    monkeypatch.setattr(trainer_module, "save_checkpoint", save_with_a_kill_inside)
    run_dir = tmp_path / "run"
    rc = _train_tiny(run_dir, checkpoint_every=1)
    assert rc == 143
    assert "continues from its last checkpoint (iteration 2)" in capsys.readouterr().err
    assert load_checkpoint(run_dir / "checkpoints" / "last.pt")["iteration"] == 2
    assert not list((run_dir / "checkpoints").glob("*.tmp"))
