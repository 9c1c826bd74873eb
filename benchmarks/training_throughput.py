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
  mean positions per network call seen in the timed iterations, at most
  ``training.tdleaf.LEAF_BATCH``, to two significant figures: with a cost per call of
  a + b x batch, calls of that mean batch cost what the search's calls do); inference forward
  positions/s at batch ``num_envs`` (PPO acts for all games at once; the AlphaZero
  searches evaluate one node per game per simulation, plus the roots); training
  samples/s at batch ``minibatch_size``. Each rate is measured once per variant, shape,
  pass and batch.
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

from agents.network import NetworkShape, PolicyValueNet
from damii_env import Engine
from damii_env.observation import observe
from training.config import ConfigError, TrainConfig, load_config
from training.replay import legal_log_probs
from training.run import TRAINERS
from training.tdleaf import LEAF_BATCH

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
    """Positions per second of one pass at one batch size, each measured once per
    (variant, network shape, pass, batch)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.rates: dict[tuple[str, NetworkShape, str, int], float] = {}
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
        if key not in self.rates:
            print(f"  network {cfg.variant} {shape_name(shape)}: {KINDS[kind]} at batch "
                  f"{batch} ...", file=sys.stderr, flush=True)
            self.rates[key] = self._measure(cfg, shape, kind, batch)
        return self.rates[key]

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
class TrainerRun:
    label: str
    cfg: TrainConfig
    shape: NetworkShape
    samples_per_s: float
    samples: int
    work: Work
    leaves: int = 0
    note: str = ""


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


def run_trainer(label: str, cfg: TrainConfig, note: str, warmup: int, iterations: int
                ) -> TrainerRun:
    print(f"trainer {label}: {warmup} warm-up + {iterations} timed iterations ...",
          file=sys.stderr, flush=True)
    trainer = TRAINERS[cfg.algorithm](cfg)
    for _ in range(warmup):
        trainer.iterate()
    extra = 0  # the replay trainers learn once games have finished: time them learning
    while getattr(trainer, "replay_len", 1) == 0 and extra < MAX_EXTRA_WARMUP:
        trainer.iterate()
        extra += 1
    work = Work()
    s0, leaves0 = trainer.samples, getattr(trainer, "leaves", 0)
    with counting(work):
        t0 = time.perf_counter()
        for _ in range(iterations):
            trainer.iterate()
        dt = time.perf_counter() - t0
    samples = trainer.samples - s0
    if extra:
        note = ", ".join(filter(None, [note, f"{extra} more warm-up iteration(s), until "
                                              f"the first games finished"]))
    return TrainerRun(label, cfg, trainer.shape, samples / dt, samples, work,
                      getattr(trainer, "leaves", 0) - leaves0, note)


def batch_of(run: TrainerRun, kind: str) -> int:
    """The batch a trainer's passes of this kind run at (see the module doc)."""
    if kind == "train":
        return run.cfg.minibatch_size
    if kind == "forward":
        return run.cfg.num_envs
    mean = run.work.positions[kind] / max(run.work.calls[kind], 1)
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
    p.add_argument("--seconds", type=float, default=3.0, help="time per network measurement")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads, for the network and the trainers (default 1)")
    p.add_argument("--iterations", type=int, default=3, help="trainer iterations timed")
    p.add_argument("--warmup-iterations", type=int, default=3,
                   help="trainer iterations played before the timed ones (default 3)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    paths = args.configs if args.configs else discover(args.variants)
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
                                    args.iterations))
    rates = NetworkRates(args.seconds)
    rows = []
    for run in runs:
        per_sample = {k: run.work.positions[k] / max(run.samples, 1) for k in KINDS}
        seconds = 0.0
        for kind, n in per_sample.items():
            if n:
                seconds += n / rates.rate(run.cfg, run.shape, kind, batch_of(run, kind))
        limit = 1 / seconds if seconds else float("inf")
        rows.append((run, per_sample, limit, run.samples_per_s / limit))

    print(f"torch {torch.__version__}, {args.threads} thread(s); trainers timed over "
          f"{args.iterations} iteration(s) after {args.warmup_iterations} warm-up\n")
    print("| variant | network | parameters | pass | batch | positions/s |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    params: dict[NetworkShape, int] = {}
    for (variant, shape, kind, batch), r in rates.rates.items():
        if shape not in params:
            params[shape] = parameters(shape)
        print(f"| {variant} | {shape_name(shape)} | {params[shape]:,} | {KINDS[kind]} | "
              f"{batch:,} | {r:,.0f} |")
    print("\n| config | network | network evaluations / sample (batch) | training "
          "positions / sample (batch) | trainer samples/s | network limit samples/s | "
          "share |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for run, per, limit, share in rows:
        evals = " + ".join(f"{per[k]:,.1f} {k} ({batch_of(run, k):,})"
                           for k in ("value", "forward") if per[k]) or "0"
        train = f"{per['train']:,.2f} ({batch_of(run, 'train'):,})"
        print(f"| {run.label} | {shape_name(run.shape)} | {evals} | {train} | "
              f"{run.samples_per_s:,.0f} | {limit:,.0f} | {share:.0%} |")
    print()
    for run, _per, limit, share in rows:
        verdict = "meets" if share >= TARGET else "BELOW"
        extra = [f"{run.samples:,} samples timed"]
        extra += [f"{k} calls at mean batch {run.work.positions[k] / run.work.calls[k]:,.0f}"
                  for k in ("value", "forward") if run.work.calls[k]]
        if run.cfg.algorithm == "tdleaf":
            extra.append(f"{run.leaves / max(run.samples, 1):,.1f} search leaves/sample")
        if run.note:
            extra.append(run.note)
        print(f"- {run.label}: {verdict} the target: {run.samples_per_s:,.0f} samples/s = "
              f"{share:.0%} of the network's {limit:,.0f} (target >= {TARGET:.0%}; "
              f"{', '.join(extra)})")


if __name__ == "__main__":
    main()
