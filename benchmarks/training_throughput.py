"""What a training sample costs: each trainer's speed beside the network's own limit.

For every shipped config of the variants given (``configs/<variant>_ppo.yaml``,
``_alphazero.yaml``, ``_tdleaf.yaml``, where present; not the ``_quick`` ones), plus each
AlphaZero config with ``mcts=gumbel``, on this machine:

- **the trainer**: samples per second over ``--iterations`` iterations, timed after
  ``--warmup-iterations`` untimed ones (for the replay trainers, AlphaZero and TD-leaf,
  more until the first games have finished and their replay holds samples, so that the
  timed iterations learn as the rest of a run does), with the trainer's config (its
  ``torch_threads`` set to ``--threads``; a missing ``init_weights`` file replaced by a
  fresh network).
  Every pass through the network in the timed iterations is counted, by kind: value-only
  evaluations (a minimax search's leaves), inference forward passes (PPO's acting, the
  AlphaZero searches' root and leaf evaluations), and training passes (forward, backward
  and Adam, every position of every minibatch counted).
- **the network's own limit**, measured with that config's network shape (trunk,
  channels, blocks, policy head, value prior: the shape the trainer builds) at the batch
  sizes its trainer uses: value-only positions/s at the search's leaf batch (TD-leaf: the
  mean positions per network call seen in the first round's timed iterations, at most
  ``damii_training.tdleaf.LEAF_BATCH``, to two significant figures: with a cost per call of
  a + b x batch, calls of that mean batch cost what the search's calls do); inference forward
  positions/s at batch ``num_envs`` (PPO acts for all games at once; the AlphaZero
  searches evaluate one node per game per simulation, plus the roots); training
  samples/s at batch ``minibatch_size``.
- **rounds**: the trainer's timed iterations and the network's rates are measured in
  turn, ``--rounds`` times for each config (trainer, then each rate it needs, again and
  again), so that a trainer and its limit are measured minutes apart at most: on a shared
  virtual machine the network's own rate swings by up to half between runs. Each
  round gives a share; the tables give the medians and the range of the rounds' shares.
- **the share**: the limit for the same work is one over the seconds the network alone
  needs for what one trainer sample cost, ``value evaluations / value rate + forward
  evaluations / forward rate + training positions / training rate`` (all per sample,
  counted as above). So for PPO about one forward pass and ``epochs`` training passes
  (more with the alpha-beta seat's imitation positions); for AlphaZero the search's
  ``simulations + 1`` forward passes per decision (more per sample, as forced hops are
  searched but not kept) and about ``epochs`` training passes; for TD-leaf the search's
  network-valued leaves and about ``epochs`` training passes. The rest of a trainer's
  time (engine, search bookkeeping, Python) is what keeps the share below 100%; the
  target is a share of at least 50% for every trainer and shipped config.

Run by hand (results go to ``benchmarks/RESULTS.md`` with the date and the commit)::

    python benchmarks/training_throughput.py                  # all four variants
    python benchmarks/training_throughput.py --variants damii --seconds 2
    python benchmarks/training_throughput.py --configs configs/damii_tdleaf.yaml
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from damii_agents.network import NetworkShape, PolicyValueNet
from damii_env import Engine
from damii_env.observation import observe
from damii_training.config import ConfigError, TrainConfig, load_config
from damii_training.replay import legal_log_probs
from damii_training.run import TRAINERS
from damii_training.tdleaf import LEAF_BATCH

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
SUFFIXES = ("ppo", "alphazero", "tdleaf")
"""The config files benchmarked for each variant, in this order."""
ALGORITHMS = ("ppo", "alphazero", "tdleaf")
KINDS = {"value": "value-only inference", "forward": "forward inference",
         "train": "training step"}
MAX_EXTRA_WARMUP = 50
"""Iterations a replay trainer may play past the warm-up before its replay holds samples."""
TARGET = 0.5
"""A trainer should reach at least this share of the network's limit."""


# --- the network alone --------------------------------------------------------------------
def _rate(fn: Callable[[], object], items: int, seconds: float) -> float:
    fn()  # warm-up
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        done += items
    return done / (time.perf_counter() - t0)


class NetworkRates:
    """Positions per second of one pass at one batch size for one (variant, network
    shape): each call to :meth:`rate` measures anew, and every measurement is kept."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.rates: dict[tuple[str, NetworkShape, str, int], list[float]] = {}
        self._positions: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def positions(self, variant: str, rule_options: dict, batch: int
                  ) -> tuple[torch.Tensor, torch.Tensor]:
        """Observations and legal hops (action ids, -1 past each position's) of `batch`
        positions of random games."""
        if variant not in self._positions:
            engine = Engine(variant, **rule_options)
            rng = np.random.default_rng(0)
            state = engine.init(1024, rng)
            for _ in range(40):
                engine.step(state, engine.sample_actions(state, rng))
                engine.reset_where(state, rng=rng)
            legal = state.legal_padded.astype(np.int64)
            self._positions[variant] = (torch.from_numpy(observe(engine, state)),
                                        torch.from_numpy(legal))
        obs, legal = self._positions[variant]
        rows = torch.arange(batch) % len(obs)
        return obs[rows].contiguous(), legal[rows].contiguous()

    def rate(self, cfg: TrainConfig, shape: NetworkShape, kind: str, batch: int) -> float:
        key = (cfg.variant, shape, kind, batch)
        print(f"  network {cfg.variant} {shape_name(shape)}: {KINDS[kind]} at batch "
              f"{batch} ...", file=sys.stderr, flush=True)
        rate = self._measure(cfg, shape, kind, batch)
        self.rates.setdefault(key, []).append(rate)
        return rate

    def _measure(self, cfg: TrainConfig, shape: NetworkShape, kind: str, batch: int) -> float:
        torch.manual_seed(0)
        net = PolicyValueNet(shape)
        obs, legal = self.positions(cfg.variant, cfg.rule_options, batch)
        hops = (legal >= 0).float()
        if kind != "train":
            net.eval()
            fn = (lambda: net.value(obs)) if kind == "value" else (lambda: net(obs))
            with torch.no_grad():
                return _rate(fn, batch, self.seconds)
        net.train()
        opt = torch.optim.Adam(net.parameters(), lr=1e-4, weight_decay=1e-4)

        def step() -> None:  # the replay trainers' step: cross-entropy over the legal
            logits, v = net(obs)  # hops, value, clip
            loss = -(legal_log_probs(logits, legal) * hops).sum(1).mean() / 8 \
                + v.square().mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()

        return _rate(step, batch, self.seconds)


def shape_name(shape: NetworkShape) -> str:
    name = f"{shape.trunk} {shape.channels}x{shape.blocks} {shape.policy_head}"
    if shape.policy_trunk != "shared":
        name += (f" on a {shape.policy_trunk} {shape.policy_channels}x{shape.policy_blocks} "
                 f"policy tower")
    return name + (f", prior {shape.value_prior:g}" if shape.value_prior else "")


def parameters(shape: NetworkShape) -> int:
    return sum(p.numel() for p in PolicyValueNet(shape).parameters())


# --- the trainers -------------------------------------------------------------------------
@dataclass
class Work:
    """Positions through the network, and calls, by kind (see ``KINDS``)."""

    positions: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    def add(self, kind: str, n: int) -> None:
        self.positions[kind] += n
        self.calls[kind] += 1


@contextlib.contextmanager
def counting(work: Work) -> Iterator[None]:
    """Count every pass of every PolicyValueNet (the learner's, pool snapshots'): value
    head alone, inference forward (no gradient), training forward (gradient on)."""
    forward, value = PolicyValueNet.forward, PolicyValueNet.value

    def counted_forward(net: PolicyValueNet, obs: torch.Tensor):
        work.add("train" if torch.is_grad_enabled() else "forward", len(obs))
        return forward(net, obs)

    def counted_value(net: PolicyValueNet, obs: torch.Tensor):
        work.add("train" if torch.is_grad_enabled() else "value", len(obs))
        return value(net, obs)

    PolicyValueNet.forward, PolicyValueNet.value = counted_forward, counted_value
    try:
        yield
    finally:
        PolicyValueNet.forward, PolicyValueNet.value = forward, value


@dataclass
class Round:
    """One round of a trainer: its timed iterations, the network's limit for the same work
    measured right after them, and the share."""

    samples_per_s: float
    samples: int
    work: Work
    leaves: int
    batches: dict[str, int]
    limit: float
    share: float


@dataclass
class TrainerRun:
    label: str
    cfg: TrainConfig
    shape: NetworkShape
    rounds: list[Round] = field(default_factory=list)
    note: str = ""

    def median(self, name: str) -> float:
        return float(np.median([getattr(r, name) for r in self.rounds]))

    def per_sample(self) -> dict[str, float]:
        """Network positions per trainer sample, by kind, over all rounds."""
        samples = max(sum(r.samples for r in self.rounds), 1)
        return {k: sum(r.work.positions[k] for r in self.rounds) / samples for k in KINDS}

    def batch(self, kind: str) -> int:
        """The batch the network rate of this kind is measured at (the first round's)."""
        return self.rounds[0].batches[kind]


def load(path: Path, extra: list[str], threads: int) -> tuple[TrainConfig, str]:
    """The config with evaluations off and the benchmark's threads; a missing
    `init_weights` file (a later stage of a run not trained here) gives a fresh network."""
    overrides = ["eval_every=0", "final_eval_games=0", f"torch_threads={threads}", *extra]
    try:
        return load_config(path, overrides), ""
    except ConfigError as exc:
        if "init_weights" not in str(exc):
            raise
        return load_config(path, [*overrides, "init_weights="]), "init_weights missing: fresh"


def run_trainer(label: str, cfg: TrainConfig, note: str, warmup: int, iterations: int,
                rounds: int, rates: NetworkRates) -> TrainerRun:
    """Warm the trainer up, then `rounds` times: time `iterations` iterations, and measure
    the network's rates for the work they did."""
    print(f"trainer {label}: {warmup} warm-up + {rounds} x {iterations} timed iterations ...",
          file=sys.stderr, flush=True)
    trainer = TRAINERS[cfg.algorithm](cfg)
    for _ in range(warmup):
        trainer.iterate()
    extra = 0  # the replay trainers learn once games have finished: time them learning
    while getattr(trainer, "replay_len", 1) == 0 and extra < MAX_EXTRA_WARMUP:
        trainer.iterate()
        extra += 1
    if extra:
        note = ", ".join(filter(None, [note, f"{extra} more warm-up iteration(s), until "
                                              f"the first games finished"]))
    run = TrainerRun(label, cfg, trainer.shape, note=note)
    for _ in range(rounds):
        work = Work()
        s0, leaves0 = trainer.samples, getattr(trainer, "leaves", 0)
        with counting(work):
            t0 = time.perf_counter()
            for _ in range(iterations):
                trainer.iterate()
            dt = time.perf_counter() - t0
        samples = trainer.samples - s0
        if not run.rounds:  # the batches of the first round's calls, kept for the rest
            batches = {k: batch_of(cfg, work, k) for k in KINDS}
        seconds = sum(work.positions[k] / max(samples, 1)
                      / rates.rate(cfg, trainer.shape, k, batches[k])
                      for k in KINDS if work.positions[k])
        limit = 1 / seconds if seconds else float("inf")
        run.rounds.append(Round(samples / dt, samples, work,
                                getattr(trainer, "leaves", 0) - leaves0, batches, limit,
                                samples / dt / limit))
    return run


def batch_of(cfg: TrainConfig, work: Work, kind: str) -> int:
    """The batch a trainer's passes of this kind run at (see the module doc)."""
    if kind == "train":
        return cfg.minibatch_size
    if kind == "forward":
        return cfg.num_envs
    mean = work.positions[kind] / max(work.calls[kind], 1)
    return max(1, min(LEAF_BATCH, int(float(f"{mean:.2g}"))))


def discover(variants: list[str]) -> list[Path]:
    found = []
    for variant in variants:
        for suffix in SUFFIXES:
            path = CONFIGS / f"{variant}_{suffix}.yaml"
            if path.is_file():
                found.append(path)
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", nargs="+", default=["damii", "international", "triestine",
                                                      "damath"])
    p.add_argument("--configs", nargs="+", type=Path, default=None,
                   help="benchmark these config files only (instead of the variants' "
                        "shipped ones); an alphazero config also gets its mcts=gumbel row")
    p.add_argument("--seconds", type=float, default=2.0, help="time per network measurement")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads, for the network and the trainers (default 1)")
    p.add_argument("--iterations", type=int, default=3,
                   help="trainer iterations timed in each round (default 3)")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds of trainer timing and network measurement per config "
                        "(default 3; the medians are reported)")
    p.add_argument("--warmup-iterations", type=int, default=3,
                   help="trainer iterations played before the timed ones (default 3)")
    args = p.parse_args()
    for name in ("seconds", "iterations", "rounds"):
        if getattr(args, name) <= 0:
            p.error(f"--{name} must be positive, got {getattr(args, name)}")
    torch.set_num_threads(args.threads)
    paths = args.configs if args.configs else discover(args.variants)
    rates = NetworkRates(args.seconds)
    runs: list[TrainerRun] = []
    for path in paths:
        cfg, note = load(path, [], args.threads)
        if cfg.algorithm not in ALGORITHMS:
            print(f"skipping {path}: algorithm {cfg.algorithm}", file=sys.stderr)
            continue
        full = path.resolve()
        rel = full.relative_to(CONFIGS.parent) if full.is_relative_to(CONFIGS.parent) else path
        derived = [([], "")]
        if cfg.algorithm == "alphazero" and cfg.mcts != "gumbel":
            derived.append((["mcts=gumbel"], " --set mcts=gumbel"))
        for extra, suffix in derived:
            cfg, note = load(path, extra, args.threads)
            runs.append(run_trainer(f"{rel}{suffix}", cfg, note, args.warmup_iterations,
                                    args.iterations, args.rounds, rates))

    print(f"torch {torch.__version__}, {args.threads} thread(s); each config: "
          f"{args.warmup_iterations} warm-up iterations, then {args.rounds} rounds of "
          f"{args.iterations} timed iterations each followed by the network's rates "
          f"({args.seconds:g} s each); medians over the rounds\n")
    print("| variant | network | parameters | pass | batch | positions/s (median) | "
          "range |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: |")
    params: dict[NetworkShape, int] = {}
    for (variant, shape, kind, batch), measured in rates.rates.items():
        if shape not in params:
            params[shape] = parameters(shape)
        print(f"| {variant} | {shape_name(shape)} | {params[shape]:,} | {KINDS[kind]} | "
              f"{batch:,} | {np.median(measured):,.0f} | {min(measured):,.0f}-"
              f"{max(measured):,.0f} |")
    print("\n| config | network | network evaluations / sample (batch) | training "
          "positions / sample (batch) | trainer samples/s | network limit samples/s | "
          "share | rounds' shares |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for run in runs:
        per = run.per_sample()
        evals = " + ".join(f"{per[k]:,.1f} {k} ({run.batch(k):,})"
                           for k in ("value", "forward") if per[k]) or "0"
        train = f"{per['train']:,.2f} ({run.batch('train'):,})"
        shares = ", ".join(f"{r.share:.0%}" for r in run.rounds)
        print(f"| {run.label} | {shape_name(run.shape)} | {evals} | {train} | "
              f"{run.median('samples_per_s'):,.0f} | {run.median('limit'):,.0f} | "
              f"{run.median('share'):.0%} | {shares} |")
    print()
    for run in runs:
        share = run.median("share")
        verdict = "meets" if share >= TARGET else "BELOW"
        samples = sum(r.samples for r in run.rounds)
        extra = [f"{samples:,} samples timed"]
        calls = {k: sum(r.work.calls[k] for r in run.rounds) for k in KINDS}
        positions = {k: sum(r.work.positions[k] for r in run.rounds) for k in KINDS}
        extra += [f"{k} calls at mean batch {positions[k] / calls[k]:,.0f}"
                  for k in ("value", "forward") if calls[k]]
        if run.cfg.algorithm == "tdleaf":
            leaves = sum(r.leaves for r in run.rounds)
            extra.append(f"{leaves / max(samples, 1):,.1f} search leaves/sample")
        if run.note:
            extra.append(run.note)
        print(f"- {run.label}: {verdict} the target: {run.median('samples_per_s'):,.0f} "
              f"samples/s, median share {share:.0%} of the network's "
              f"{run.median('limit'):,.0f} (rounds {min(r.share for r in run.rounds):.0%}-"
              f"{max(r.share for r in run.rounds):.0%}; target >= {TARGET:.0%}; "
              f"{', '.join(extra)})")


if __name__ == "__main__":
    main()
