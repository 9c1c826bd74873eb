"""What the network trainers share: the engine and its games, the network and its
optimizer, the random generators, turning all of that into checkpointable plain data, and
what the run driver asks of a trainer (:class:`damii_training.trainers.Trainer`): its
checkpoint, its resume, its player and its line of the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from damii_agents.checkpoint import CheckpointError, check_model, load_checkpoint, save_checkpoint
from damii_agents.network import POLICY_KEYS, NetworkShape, PolicyValueNet
from damii_agents.players.network_player import NetworkPlayer
from damii_agents.players.neural import NetworkOptions
from damii_agents.search.evaluator import NetworkEvaluator
from damii_env.engine import Engine, State
from damii_env.episode import king_worth
from damii_env.observation import observation_shape
from damii_env.rules import make_rules
from damii_training.config import TrainConfig
from damii_training.rundir import (
    METRIC_FIELDS,
    ResumeError,
    TrainingDiverged,
    check_loaded_games,
    check_resumable,
    check_resume_fields,
)


def guarded_step(trainer: Any, loss: torch.Tensor, parts: dict[str, torch.Tensor]) -> None:
    """Backpropagate `loss`, clip the gradient and step `trainer`'s optimizer, unless the
    loss or the gradient's norm is NaN or infinite: then raise :class:`TrainingDiverged`
    naming the terms (`parts`) before anything changes the weights."""
    cfg = trainer.config

    def diverged(what: str) -> TrainingDiverged:
        terms = ", ".join(f"{k} {float(v.detach()):.4g}" for k, v in parts.items())
        return TrainingDiverged(
            f"the {what} became NaN or infinite in iteration {trainer.iteration + 1} "
            f"({terms}); training stopped before that step. Lower learning_rate, "
            f"value_coef, entropy_coef or the shaping coefficients")

    if not bool(torch.isfinite(loss)):
        raise diverged("loss")
    trainer.optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(trainer.net.parameters(), cfg.max_grad_norm)
    if not bool(torch.isfinite(norm)):
        raise diverged("gradient")
    trainer.optimizer.step()


def check_snapshot(weights: dict[str, torch.Tensor], net: PolicyValueNet, what: str) -> None:
    """Raise ValueError (or CheckpointError) when the network weights `weights` (an
    opponent-pool snapshot, say) do not fit `net` or hold NaN or infinite values."""
    check_model(weights, net.state_dict(), what)
    for key, tensor in weights.items():
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() \
                and not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"{what}: the weights {str(key)[:40]!r} hold NaN or infinite "
                             f"values")


def value_potential(config: TrainConfig) -> dict[str, float]:
    """The shaping a run's critic was trained with (see ``damii_env.episode.shaping_potential``):
    players that search with the value head add it back."""
    return {"material": float(config.material_shaping), "score": float(config.score_shaping)}


class SelfPlayTrainer:
    """Base of the PPO, AlphaZero-style and TD-leaf trainers."""

    unit = "samples"
    """What :attr:`samples` counts: training samples (hops played by the learner)."""
    metric_fields = METRIC_FIELDS
    """The columns of the run's ``metrics.csv``."""
    plays_opponents = True
    """The run evaluates :meth:`player` against the config's opponent specs."""
    progress = False
    """Whether the trainer may draw progress bars of its own (set by the run)."""

    def __init__(self, config: TrainConfig, weight_decay: float = 0.0) -> None:
        self.config = config
        self.engine = Engine(config.rules)
        c, n, _ = observation_shape(self.engine.rules)
        rules = self.engine.rules
        self.shape = NetworkShape(c, n, self.engine.n_actions, config.channels, config.blocks,
                                  policy_head=config.policy_head, orientation=rules.orientation,
                                  value_prior=config.value_prior,
                                  king_worth=king_worth(rules),
                                  trunk=config.trunk, policy_trunk=config.policy_trunk,
                                  policy_channels=config.policy_channels,
                                  policy_blocks=config.policy_blocks,
                                  policy_features=config.policy_features)
        if config.torch_threads:
            torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.torch_rng = torch.Generator().manual_seed(config.seed)
        if config.device.startswith("cuda") and not torch.cuda.is_available():
            from damii_training.config import ConfigError

            raise ConfigError(f"device {config.device!r} was asked for but torch sees no CUDA "
                              f"device here; use device: cpu")
        self.device = torch.device(config.device)
        self.net = PolicyValueNet(self.shape).to(self.device)
        if config.init_weights:
            self._load_initial_weights(config.init_weights)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate,
                                          weight_decay=weight_decay)
        self.state: State = self.engine.init(config.num_envs, self.rng)
        self.iteration = 0
        self.samples = 0

    def _load_initial_weights(self, path: str) -> None:
        """Warm start from a checkpoint of the same variant, rules and network shape; where
        only the policy's shape differs (:data:`damii_agents.network.POLICY_FIELDS`), the value's
        weights alone."""
        from damii_agents.checkpoint import CheckpointError, load_network
        from damii_training.config import ConfigError

        try:
            net, data = load_network(path)
        except CheckpointError as exc:
            raise ConfigError(f"init_weights: {exc}") from exc
        ours = self.engine.rules.replace(turn_limit=0)
        theirs = make_rules(data["variant"], **data["rule_options"]).replace(turn_limit=0)
        if theirs != ours:
            raise ConfigError(f"init_weights {path!r} was trained for {data['variant']} "
                              f"{data['rule_options']}, not {self.config.variant} "
                              f"{self.config.rule_options}")
        if net.shape.value_part() != self.shape.value_part():
            raise ConfigError(f"init_weights {path!r} has network {net.shape}, this config "
                              f"builds {self.shape}; set channels and blocks to match")
        if net.shape == self.shape:
            self.net.load_state_dict(net.state_dict())
            return
        # another policy (head or tower): the value's weights carry over, the policy starts
        # fresh
        value_keys = {k: v for k, v in net.state_dict().items() if not k.startswith(POLICY_KEYS)}
        missing, unexpected = self.net.load_state_dict(value_keys, strict=False)
        assert not unexpected and all(k.startswith(POLICY_KEYS) for k in missing)

    def iterate(self) -> dict[str, float]:  # pragma: no cover - implemented by the trainers
        raise NotImplementedError

    @property
    def goal(self) -> int:
        """Samples after which the run stops (``total_steps``)."""
        return self.config.total_steps

    def save(self, path: Path, best_score: float, elapsed: float) -> Path:
        """Write the training checkpoint (network, this trainer's state, the run's counters)."""
        return save_checkpoint(path, self.net, self.config.variant, self.config.rule_options,
                               self.samples, iteration=self.iteration,
                               trainer=self.state_dict(), best_score=best_score,
                               elapsed=elapsed, value_potential=value_potential(self.config))

    def restore(self, path: Path) -> dict[str, Any]:
        """Continue from the checkpoint :meth:`save` wrote; returns its data (the run's
        counters). Raises :class:`ResumeError` naming what does not fit the config."""
        config = self.config
        data = load_checkpoint(path, config.device)
        check_resumable(data, config, path, self.shape.to_dict())
        check_resume_fields(data, path)
        try:
            check_model(data["model"], self.net.state_dict(), path)
            self.net.load_state_dict(data["model"])
            self.load_state_dict(data["trainer"])
            check_loaded_games(self)
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError,
                IndexError, CheckpointError) as exc:  # malformed fields or other config
            raise ResumeError(
                f"cannot resume from {str(path)!r}: it does not fit the run's config.yaml "
                f"(algorithm {config.algorithm}): {type(exc).__name__}: "
                f"{str(exc)[:300]}; was config.yaml edited after the run started, or "
                f"the checkpoint changed?") from None
        return data

    def player(self) -> NetworkPlayer:
        """The learner as a player: its network alone, or with minimax to ``eval_depth``,
        on the trainer's engine, the run's shaping added back to its values."""
        depth = self.config.eval_depth
        evaluator = NetworkEvaluator(self.net, self.engine, self.device,
                                     value_potential=value_potential(self.config))
        return NetworkOptions(depth=depth).player(
            evaluator, name="learner" if not depth else f"learner,depth={depth}")

    def describe(self) -> str:
        """The report's line on what was trained."""
        cfg = self.config
        return (f"- algorithm: {cfg.algorithm}, network: {cfg.blocks} blocks x {cfg.channels} "
                f"channels, {cfg.policy_head} policy head, value prior {cfg.value_prior:g}")

    def write_files(self, run_dir: Path) -> None:
        """Files a run keeps beside its checkpoints (none: the checkpoints hold the network)."""

    def report_lines(self, run_dir: Path) -> list[str]:
        """Lines the report adds after its evaluation table (none)."""
        return []

    def state_dict(self) -> dict[str, Any]:
        """Optimizer, counters, random generators and the games in progress (plain data)."""
        return {
            "optimizer": self.optimizer.state_dict(),
            "iteration": self.iteration,
            "samples": self.samples,
            "numpy_rng": self.rng.bit_generator.state,
            "torch_rng": self.torch_rng.get_state(),
            "torch_global_rng": torch.get_rng_state(),
            # uint64 hashes travel as int64 bit patterns (plain tensors load safely)
            "games": {name: torch.from_numpy(np.ascontiguousarray(
                arr.view(np.int64) if arr.dtype == np.uint64 else arr))
                for name, arr in vars(self.state).items() if isinstance(arr, np.ndarray)},
        }

    def _check_optimizer_state(self) -> None:
        """The loaded optimizer's moments: the shape of their weights, finite (raises
        ValueError; a wrong shape would fail only at the first step)."""
        names = {id(p): k for k, p in self.net.named_parameters()}
        for param, state in self.optimizer.state.items():
            for key, value in state.items():
                if not isinstance(value, torch.Tensor) or key == "step":
                    continue
                name = names.get(id(param), "?")
                if value.shape != param.shape:
                    raise ValueError(f"optimizer state {key} of {name} has shape "
                                     f"{tuple(value.shape)}, the weights {tuple(param.shape)}")
                if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                    raise ValueError(f"optimizer state {key} of {name} holds NaN or "
                                     f"infinite values")

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Continue from :meth:`state_dict`'s data; raises ValueError, TypeError or KeyError
        for data that does not fit (a counter that is not a count, games of another type or
        shape)."""
        for key in ("iteration", "samples"):
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10**13:
                raise ValueError(f"{key} must be a non-negative integer up to 10**13, got "
                                 f"{value!r:.40}")
        if not isinstance(data["optimizer"], dict):
            raise TypeError(f"optimizer must be the optimizer's state, got "
                            f"{type(data['optimizer']).__name__}")
        self.optimizer.load_state_dict(data["optimizer"])
        self._check_optimizer_state()
        self.iteration = int(data["iteration"])
        self.samples = int(data["samples"])
        self.rng.bit_generator.state = data["numpy_rng"]
        self.torch_rng.set_state(data["torch_rng"])
        torch.set_rng_state(data["torch_global_rng"])
        arrays = {k for k, v in vars(self.state).items() if isinstance(v, np.ndarray)}
        missing = sorted(arrays - set(data["games"]))
        if missing:
            raise ValueError(f"games in progress: {', '.join(missing)} missing (a checkpoint "
                             f"holds every array of the games: {', '.join(sorted(arrays))})")
        for name, tensor in data["games"].items():
            if name not in arrays or not isinstance(tensor, torch.Tensor):
                raise ValueError(f"games in progress: {str(name)[:40]!r} is not an array of "
                                 f"the games ({', '.join(sorted(arrays))})")
            arr = tensor.numpy().copy()
            live = getattr(self.state, name)
            saved = np.dtype(np.int64) if live.dtype == np.uint64 else live.dtype
            if arr.dtype != saved:  # the compiled kernels take these types only
                raise ValueError(f"games in progress: {name} is {arr.dtype}, the engine keeps "
                                 f"{saved}")
            if live.dtype == np.uint64:
                arr = arr.view(np.uint64)
            if name == "hist" and arr.shape[0] == live.shape[0] and arr.shape != live.shape:
                # an older version sized the position history otherwise: the positions of
                # a game are its first columns either way
                fitted = np.zeros_like(live)
                width = min(arr.shape[1], live.shape[1])
                fitted[:, :width] = arr[:, :width]
                arr = fitted
            if arr.shape != live.shape:
                raise ValueError(f"games in progress: {name} has shape {tuple(arr.shape)}, "
                                 f"this config makes {tuple(live.shape)}")
            setattr(self.state, name, arr)
