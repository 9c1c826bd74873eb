"""Hostile input (issue 13): every bad input gets a documented DamiiError, or one clean
line and a non-zero exit from the command line; no crash, no hang, no lost result."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import damii_env as d
from damii_app.cli import main
from damii_env.engine import Engine
from damii_env.errors import (
    DamiiError,
    ForeignStateError,
    IllegalActionError,
    InvalidArgumentError,
    UnwritablePathError,
)


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    """A small Damii checkpoint written by the project's own save_checkpoint."""
    from damii_agents.checkpoint import save_checkpoint
    from damii_agents.network import NetworkShape, PolicyValueNet
    from damii_env.observation import planes_for

    eng = Engine("damii")
    net = PolicyValueNet(NetworkShape(in_channels=len(planes_for(eng.rules)), board_size=10,
                                      n_actions=eng.n_actions, channels=8, blocks=1,
                                      orientation=eng.rules.orientation))
    return save_checkpoint(tmp_path / "small.pt", net, "damii", {}, 0)


# --- 1. an engine refuses a state another rule set made ----------------------------------
@pytest.mark.parametrize("maker, stepper", [("damath", "damii"), ("damii", "damath"),
                                            ("damii", "international")])
def test_an_engine_refuses_a_foreign_state(maker, stepper):
    state = Engine(maker).init(2)
    eng = Engine(stepper)
    action = 1089 if stepper == "damath" else 0
    with pytest.raises(ForeignStateError, match=f"made by the {maker} engine.*{stepper}"):
        eng.step(state, [action, action])
    for call in (eng.legal_action_mask, eng.sample_actions, eng.reset_where):
        with pytest.raises(ForeignStateError):
            call(state)
    with pytest.raises(ForeignStateError):
        eng.perft(state, 1)


def test_other_rule_options_are_named_and_equal_rules_agree():
    state = Engine("damii").init(1)
    with pytest.raises(ForeignStateError, match="turn_limit=200"):
        Engine("damii", turn_limit=200).step(state, [0])
    Engine("damii").legal_action_mask(state)  # a second engine of the same rules is fine
    with pytest.raises(ForeignStateError):
        Engine("damii").empty_state(2).put(0, Engine("international").init(1))


# --- 2. arrays from a caller are checked before compiled code runs ------------------------
@pytest.mark.parametrize("shape, dtype", [((1000, 1800), np.int8), ((64, 10), np.int8),
                                          ((1, 1800), np.int16), ((1, 1800), bool)])
def test_a_wrong_mask_buffer_is_refused(shape, dtype):
    eng = Engine("damii")
    with pytest.raises(InvalidArgumentError, match=r"shape \(1, 1800\)"):
        eng.legal_action_mask(eng.init(1), out=np.zeros(shape, dtype=dtype))
    with pytest.raises(InvalidArgumentError, match="C-contiguous"):
        eng.legal_action_mask(eng.init(1), out=np.zeros((1, 3600), dtype=np.int8)[:, ::2])


def test_from_boards_checks_values():
    eng, dam = Engine("damii"), Engine("damath")
    with pytest.raises(InvalidArgumentError, match="boards.*-2 to 2, got 7"):
        eng.from_boards(np.full((1, 50), 7), [0])
    with pytest.raises(InvalidArgumentError, match="turns.*0 to 1, got 5"):
        eng.from_boards(np.zeros((1, 50)), [5])
    with pytest.raises(InvalidArgumentError, match="chips.*got 100"):
        dam.from_boards(dam.start_board()[None], [0], np.full((1, 32), 100))
    with pytest.raises(InvalidArgumentError, match=r"shape \(B, 50\)"):
        eng.from_boards(np.zeros((1, 32)), [0])


# --- API arguments -----------------------------------------------------------------------
@pytest.mark.parametrize("size", [0, -5, 2.5, True, "4"])
def test_batch_sizes(size):
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        Engine("damii").init(size)


@pytest.mark.parametrize("action", [[2**70], [1089.7], ["12"], [None]])
def test_actions_must_be_integers(action):
    eng = Engine("damii")
    with pytest.raises(IllegalActionError, match="integers"):
        eng.step(eng.init(1), action)


def test_perft_depth_is_bounded():
    eng = Engine("damii")
    for depth in (-1, 21, 2.0):
        with pytest.raises(InvalidArgumentError, match="perft depth"):
            eng.perft(eng.init(1), depth)


# --- 4. a damaged checkpoint is refused; network sizes are bounded ------------------------
@pytest.mark.parametrize("where", [0.3, 0.5, 0.9])
def test_a_corrupted_checkpoint_is_refused(tmp_path, weights, where):
    from damii_agents.checkpoint import CheckpointError, load_network

    load_network(weights)  # the intact file loads
    data = bytearray(weights.read_bytes())
    at = int(len(data) * where)
    data[at:at + 64] = bytes(b ^ 0x5A for b in data[at:at + 64])
    bad = tmp_path / "bad.pt"
    bad.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="damaged|cannot be read"):
        load_network(bad)


def test_a_checkpoint_with_a_huge_network_is_refused_before_building(tmp_path, weights):
    import torch

    from damii_agents.checkpoint import CheckpointError, load_network

    data = torch.load(weights, weights_only=True)
    data["network"]["blocks"] = 10**6
    path = tmp_path / "big.pt"
    torch.save(data, path)
    with pytest.raises(CheckpointError, match="blocks must be an integer from 0 to 64"):
        load_network(path)


# --- 5. outputs are checked before the work; finished games are kept ----------------------
def test_unwritable_outputs_fail_before_any_game(tmp_path, capsys, monkeypatch):
    import damii_agents.match.scheduling as scheduling
    import damii_app.play as play

    def no_work(*args, **kwargs):
        raise AssertionError("the work started before the output was checked")

    # the work itself fails the test if it starts (no guessed wall-clock bound)
    monkeypatch.setattr(scheduling, "play_all", no_work)
    monkeypatch.setattr(play, "play_game", no_work)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["eval", "random", "greedy", "--games", "2", "--no-progress",
                 "--out", str(blocker)]) == 2
    assert main(["export", str(tmp_path), "--out", str(blocker / "x.pt")]) == 2
    assert main(["play", "--opponent", "random", "--pdn", str(blocker / "g.pdn")]) == 2
    err = capsys.readouterr().err
    assert err.count("damii: error: ") == 3 and "Traceback" not in err


def test_play_human_checks_the_pdn_path_first(tmp_path):
    from damii_app.play import play_human

    blocker = tmp_path / "file"
    blocker.write_text("x")
    asked = []
    with pytest.raises(UnwritablePathError, match="cannot write"):
        play_human("damii", "random", clock="none", pdn_path=blocker / "game.pdn",
                   input_fn=asked.append)
    assert not asked  # no move was asked for


# --- FEN and move text --------------------------------------------------------------------
@pytest.mark.parametrize("fen, variant", [
    ("W:W" + "3" * 5000 + ":B1", "international"),
    ("W:W21-23=-9:B1=2", "damath"),
    ("W:W21=-9:B1=2:S1e400,0", "damath"),
    ("W:W21=-9:B1=2:S1e100000000,0", "damath"),
    ("W:W٣١:B1", "international"),
    ("W:W３１:B1", "international"),
])
@pytest.mark.timeout(60)  # a huge number must not be worked out: a hang fails the test
def test_bad_fens(fen, variant):
    with pytest.raises(d.InvalidFenError):
        d.Game.from_fen(fen, variant)


@pytest.mark.parametrize("text", ["32-28\x1c", "\x1d32-28", "32\x1e-28", "32-\x1f28",
                                  "３２-２８", "²", "3" * 5000 + "-28"])
def test_bad_move_text(text):
    with pytest.raises(d.IllegalMoveError, match="cannot read move"):
        d.Game("international").push(text)


def test_human_play_survives_odd_numbers(tmp_path):
    from damii_app.play import play_human

    out: list[str] = []
    lines = iter(["²", "3" * 5000, "resign"])
    result = play_human("international", "random:seed=1", clock="none",
                        pdn_path=tmp_path / "g.pdn", input_fn=lambda p: next(lines),
                        output_fn=out.append)
    assert result.end.termination == "resignation"
    assert (tmp_path / "g.pdn").is_file()


# --- command line -------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["perft", "--depth", "0", "--divide"],
    ["perft", "--depth", "21"],
    ["perft", "--depth", "-1"],
    ["eval", "random", "alphabeta:time=nan", "--games", "2", "--no-progress"],
    ["eval", "random", "alphabeta:time=inf", "--games", "2", "--no-progress"],
    ["eval", "random", "alphabeta:depth=61", "--games", "2", "--no-progress"],
    ["eval", "random", "greedy", "--seed", "-5"],
    ["eval", "random", "greedy", "--workers", "0"],
    ["show", "W:W٣١:B1"],
])
def test_cli_bad_arguments_give_one_line(argv, capsys, tmp_path):
    try:
        code = main(argv + (["--out", str(tmp_path)] if argv[0] == "eval" else []))
    except SystemExit as exc:  # argparse: usage and one error line, exit 2
        code = exc.code if isinstance(exc.code, int) else 1
    assert code != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error" in err


def test_alphabeta_honours_the_match_clock():
    from damii_agents.match.game_loop import Clock, play_game
    from damii_env.player import make_player

    game = d.Game("damii", turn_limit=4)
    searcher = make_player("alphabeta:depth=30", "damii")
    # the search keeps to 80% of the clock's seconds: 2 s leave a loaded machine 0.4 s of
    # margin a move (no bound on the test's own wall time)
    end = play_game(game, (searcher, make_player("random", "damii")), Clock(seconds=2))
    assert end.termination != "time forfeit"


# --- fuzz: FEN, move text and CLI arguments -----------------------------------------------
FUZZ = settings(max_examples=60, deadline=2000, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
fen_text = st.one_of(
    st.text(max_size=40),
    st.builds(lambda a, b, c: f"{a}:W{b}:B{c}", st.sampled_from(["W", "B", "X", ""]),
              st.text("K0123456789,-=/ √S١３\x1c", max_size=20),
              st.text("K0123456789,-=/ √S١３\x1c", max_size=20)),
)


@FUZZ
@given(fen=fen_text, variant=st.sampled_from(["damii", "international", "triestine",
                                               "damath"]))
def test_fuzz_fen(fen, variant):
    try:
        game = d.Game.from_fen(fen, variant)
    except DamiiError:
        return
    game.legal_moves()


@FUZZ
@given(text=st.one_of(st.text(max_size=30), st.text("0123456789-x \t\x1c²３", max_size=30)))
def test_fuzz_move_text(text):
    game = d.Game("international")
    try:
        game.push(text)
    except DamiiError:
        pass


@FUZZ
@given(argv=st.lists(st.sampled_from(
    ["perft", "show", "--depth", "-1", "0", "2", "99", "x", "--divide", "--variant", "damii",
     "international", "triestine", "damath", "--fen", "W:W31:B1", "W:W٣١:B1", "--numbers",
     "--orientation", "mirrored", "nan", "1e400", "²", "W:W21-23=-9:B1=2"]), max_size=7))
def test_fuzz_cli(argv):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            main(argv)  # anything but a DamiiError (printed) or argparse's exit propagates
        except SystemExit:
            pass
    assert "Traceback" not in err.getvalue()


# --- training configs ---------------------------------------------------------------------
LAUGHS = ('a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
          + "".join(f"{k}: &{k} [{','.join([f'*{p}'] * 9)}]\n"
                    for p, k in zip("abcdefgh", "bcdefghi", strict=True))
          + "eval_opponents: *i\n")


@pytest.mark.parametrize("text, message", [
    (LAUGHS.encode(), "YAML aliases"),
    (b"name: caf\xe9\n", "not UTF-8"),
    (b"channels: 32.5\n", "channels must be of type int"),
    (b"rule_options: turn_limit\n", "rule_options must be of type dict"),
    (b"value_coef: .inf\n", "value_coef must be a finite number"),
    (b"learning_rate: .nan\n", "learning_rate must be a finite number"),
    (b"seed: -5\n", "seed must be from 0"),
    (b"seed: 99999999999999999999\n", "seed must be from 0"),
    (b"eval_opponents: [random, alphabeta:dpth=2]\n", "unknown option.*dpth"),
    (b"name: ../../escape\n", "name must be"),
])
def test_bad_configs(tmp_path, text, message):
    from damii_training.config import ConfigError, load_config

    path = tmp_path / "config.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert len(str(info.value)) < 2000


@pytest.mark.parametrize("override", ["seed=[", "seed=-1", "value_coef=.inf"])
def test_bad_overrides(override):
    from damii_training.config import ConfigError, load_config

    with pytest.raises(ConfigError):
        load_config(None, [override])


# --- issue 29 --------------------------------------------------------------------------
def test_damath_in_the_standard_orientation_is_refused():
    """F8: its chips lie on the dark squares of its own board only."""
    from damii_env.errors import InvalidOptionError

    with pytest.raises(InvalidOptionError, match="orientation 'mirrored'"):
        d.Game("damath", orientation="standard")
    assert d.Game("damath", orientation="mirrored").chips().max() >= 0


def _crafted(weights: Path, tmp_path: Path, edit) -> Path:
    """A copy of `weights` with `edit(data)` applied (torch.save: valid checksums)."""
    import torch

    data = torch.load(weights, weights_only=True)
    edit(data)
    path = tmp_path / "crafted.pt"
    torch.save(data, path)
    return path


def _set(key, value):
    return lambda data: data.__setitem__(key, value)


def _weights(fn):
    def edit(data):
        data["model"] = {k: fn(v) for k, v in data["model"].items()}
    return edit


@pytest.mark.parametrize("edit, message", [
    (_set("rule_options", "x"), "rule_options must be a mapping"),
    (_set("rule_options", {1: 2}), "rule_options must be a mapping"),
    (_set("value_potential", float("nan")), "value_potential must map"),
    (_set("value_potential", "x"), "value_potential must map"),
    (_set("value_potential", {"material": float("inf")}), "value_potential must map"),
    (_set("step", -3), "step must be a non-negative integer"),
    (_set("model", [1, 2]), "model must map parameter names to tensors"),
    (_set("network", "x"), "network must be a mapping"),
    (_weights(lambda t: t.float() * float("nan") if t.is_floating_point() else t), "NaN"),
    (_weights(lambda t: t.float() + float("inf") if t.is_floating_point() else t), "NaN or inf"),
    (_weights(lambda t: t.to(__import__("torch").bool)), "are torch.bool"),
    (_weights(lambda t: t.to(__import__("torch").int8)), "are torch.int8"),
    (_weights(lambda t: t.to(__import__("torch").complex64)
              if t.is_floating_point() else t), "are torch.complex64"),
    (_weights(lambda t: t.double() if t.is_floating_point() else t), "are torch.float64"),
    (_weights(lambda t: t[:1] if t.dim() and len(t) > 1 else t), "the network needs"),
    # issue 45, G16: were accepted silently
    (_set("version", 2), "version '2' is not one this damii-env reads"),
    (_set("version", "1"), "version '1' is not one"),
    (lambda d: d["network"].__setitem__("orientation", "standard"),
     "'standard' orientation, but damii .* 'mirrored'"),
])
def test_crafted_checkpoints_are_refused_naming_the_field(tmp_path, weights, edit, message):
    """F10: each file has valid checksums; each is refused in one line saying what is
    wrong, before a network plays a move."""
    from damii_agents.checkpoint import CheckpointError, load_network

    with pytest.raises(CheckpointError, match=message):
        load_network(_crafted(weights, tmp_path, edit))


def test_the_largest_allowed_shape_with_small_weights_is_refused_at_once(tmp_path, weights,
                                                                        monkeypatch):
    """F10: the shapes are compared on the meta device, before any network is built."""
    from damii_agents.checkpoint import CheckpointError, load_network

    def huge(data):
        data["network"].update(channels=1024, blocks=64)

    import damii_agents.checkpoint as checkpoint

    built: list[str] = []  # the device of each network built (75 s for this one on "cpu")
    real = checkpoint.PolicyValueNet

    def recording(shape):
        net = real(shape)
        built.append(next(net.parameters()).device.type)
        return net

    monkeypatch.setattr(checkpoint, "PolicyValueNet", recording)
    with pytest.raises(CheckpointError, match="do not fit its network: missing trunk.1"):
        load_network(_crafted(weights, tmp_path, huge))
    assert built == ["meta"]  # only the shapes, on the meta device: no weights were made


def test_a_nan_checkpoint_in_eval_gives_one_line(tmp_path, weights, capsys):
    """F10: a broken network stops the command before the match, saying why."""
    bad = _crafted(weights, tmp_path, _weights(
        lambda t: t * float("nan") if t.is_floating_point() else t))
    assert main(["eval", "random", f"ckpt:{bad}", "--games", "2", "--no-progress",
                 "--clock", "none", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "NaN or infinite" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_huge_finite_weights_stop_a_match_with_one_line(tmp_path, weights, capsys):
    """Issue 45, G8: weights of 1e38 pass the finite check but the network's outputs
    overflow; the match used to abort with "action 0 ... is not legal"."""
    big = _crafted(weights, tmp_path, _weights(
        lambda t: t * 0 + 1e38 if t.is_floating_point() else t))
    assert main(["eval", "random", f"ckpt:{big}", "--games", "2", "--no-progress",
                 "--clock", "none", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "the network gives NaN or infinite values for this position" in err, err
    assert "Traceback" not in err and "is not legal" not in err


@pytest.mark.parametrize("text, message", [
    # issue 45, G18: were accepted (the last of two keys won; an empty board trained)
    (b"seed: 1\nseed: 2\n", "the key 'seed' is given twice .line 2."),
    (b"rule_options: {turn_limit: 5, turn_limit: 6}\n", "'turn_limit' is given twice"),
    (b"rule_options: {board_size: 4, men_rows: 0}\n", "men_rows must be at least 1"),
    # issue 45, G8: coefficients without an upper bound turned the loss to NaN
    (b"value_coef: 1.0e+300\n", "value_coef must be from 0 to 100"),
    (b"entropy_coef: 1.0e+300\n", "entropy_coef must be from 0 to 10"),
    (b"max_grad_norm: 1.0e+300\n", "max_grad_norm must be above 0 and at most 1000"),
    (b"alphabeta_imitation: 1.0e+300\n", "alphabeta_imitation must be from 0 to 100"),
    (b"score_shaping: 1.0e+300\n", "score_shaping must be from 0 to 100"),
    (b"material_shaping: 1.0e+300\n", "material_shaping must be from 0 to 100"),
    (b"ray_weights_every: 1000000000000\n", "ray_weights_every must be from 1 to"),
    (b"1: 2\n", "keys must be names"),
    (b"~: x\n", "keys must be names"),
    (b"rule_options: {1: 2}\n", "rule_options: keys must be names"),
    (b"rule_options: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
    (b"total_steps: " + b"9" * 5000 + b"\n", "cannot be read"),
    (b"total_step: 5\n", r"total_step \(did you mean total_steps\?\)"),
    (b"rollout_steps: 1000000000000\n", "rollout_steps must be >= 1 and <= 100,000"),
    (b"minibatch_size: 100000000\n", "minibatch_size must be >= 1 and <="),
    (b"pool_size: 100000000\n", "pool_size must be >= 0 and <= 1000"),
    (b"simulations: 100000000\n", "simulations must be >= 1 and <= 100,000"),
    (b"epochs: 100000000\n", "epochs must be >= 1 and <= 1000"),
    (b"algorithm: alphazero\nreplay_size: 1000000000000000\n", "replay_size must be >= 1 and <="),
    (b"num_envs: 65536\nrollout_steps: 100000\n", "GiB for their observations alone"),
])
def test_bad_configs_of_issue_29(tmp_path, text, message):
    """F9: no traceback, no MemoryError: one ConfigError naming the key."""
    from damii_training.config import ConfigError, load_config

    path = tmp_path / "config.yaml"
    path.write_bytes(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert len(str(info.value)) < 2000


@pytest.mark.parametrize("override, message", [
    ("total_steps=" + "9" * 5000, "cannot be read"),
    ("replay_size=1000000000000000", "replay_size must be >= 1 and <="),
    ("rule_options=" + "[" * 3000 + "]" * 3000, "nested too deeply|rule_options must be"),
])
def test_bad_overrides_of_issue_29(override, message):
    from damii_training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=message):
        load_config("configs/damii_quick.yaml", [override])


@pytest.mark.parametrize("text", [
    b"rule_options: " + b"[" * 2000 + b"]" * 2000 + b"\n",  # past Python's recursion limit
    b"total_steps: " + b"9" * 5000 + b"\n",
])
def test_damii_train_reads_a_config_file_once_safely(tmp_path, text, capsys):
    """Issue 45, G7: `damii train FILE` read the file a second time (``is_pattern_config``)
    before the hardened loader and gave a traceback; since patterns became a trainer of
    the one run driver, the CLI reads it through load_config alone."""
    path = tmp_path / "c.yaml"
    path.write_bytes(text)
    assert main(["train", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "nested too deeply" in err or "cannot be read" in err


def test_an_unknown_set_key_is_blamed_on_set_not_the_file():
    """Issue 45, D8: ``--set total_step=100`` was reported as the file's unknown key."""
    from damii_training.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=r"^--set total_step=\.\.\.: unknown key total_step "
                                          r"\(did you mean total_steps\?\)"):
        load_config("configs/damii_quick.yaml", ["total_step=100"])


def test_an_iteration_larger_than_the_run_is_noted(tmp_path, capsys):
    """F9: num_envs x rollout_steps above total_steps is said before training."""
    from damii_training.run import run_training

    run_training("configs/damii_quick.yaml", [
        "total_steps=64", "num_envs=8", "rollout_steps=16", "channels=8", "blocks=1",
        "eval_every=0", "final_eval_games=0"], run_dir=tmp_path / "run", progress=False)
    err = capsys.readouterr().err
    assert "num_envs x rollout_steps = 128 samples, more than total_steps = 64" in err


def test_damii_play_does_not_overwrite_an_existing_pdn(tmp_path, monkeypatch, capsys):
    """Issue 45, G17: ``--pdn notes.txt`` replaced the file's content without a word."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("32-28\nquit\n"))
    assert main(["play", "--opponent", "random", "--pdn", str(notes)]) == 2
    err = capsys.readouterr().err
    assert "already exists; damii play does not overwrite a file" in err
    assert notes.read_text() == "my notes\n"


def test_damii_alone_prints_the_help(capsys):
    """Issue 45, D8: ``damii`` alone said only "the following arguments are required"."""
    assert main([]) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: damii") and "{perft,show,eval,play,train" in out


def test_damii_export_reads_a_run_config_safely(tmp_path, capsys):
    """Issue 45, G7's other door: ``damii export`` read a run's config.yaml with a bare
    yaml.safe_load (a deep file was a RecursionError traceback)."""
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("rule_options: " + "[" * 2000 + "]" * 2000 + "\n")
    assert main(["export", str(run), "--out", str(tmp_path / "x.pt")]) == 2
    err = capsys.readouterr().err.strip()
    assert "nested too deeply" in err and "Traceback" not in err


def test_a_yaml_merge_may_give_its_keys_again(tmp_path):
    """Issue 45, G18: only a key given twice by hand is refused; ``<<: *base`` followed by
    one of base's keys is YAML's override, as before."""
    from damii_training.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text("rule_options: &r {turn_limit: 50}\nseed: 3\n"
                    "eval_opponents: [random]\nfinal_eval_opponents: [random]\n")
    assert load_config(path).rule_options == {"turn_limit": 50}
    path.write_text("rule_options:\n  <<: {turn_limit: 50, repetition: 3}\n  turn_limit: 60\n")
    assert load_config(path).rule_options["turn_limit"] == 60
