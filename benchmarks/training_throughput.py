"""What a training sample costs: the network's own limits and each trainer's speed.

For each variant and network shape, on this machine:

- **inference**: positions valued per second (the value head alone, as a search's leaves
  are valued, and the full forward pass, as PPO acts) at the batch sizes the trainers use;
- **training**: samples per second of gradient steps (forward, backward, Adam) at the
  trainers' minibatch size;
- **trainers**: each trainer's samples per second over a few iterations of a shipped
  config, beside the network limit for the same work, as a share of it. One PPO sample
  costs one forward pass and ``epochs`` training passes; one TD-leaf sample costs the
  leaves of its search plus ``epochs`` training passes.

Run by hand (results go to ``benchmarks/RESULTS.md`` with the date and the commit)::

    python benchmarks/training_throughput.py                  # all four variants
    python benchmarks/training_throughput.py --variants damii --seconds 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.network import NetworkShape, PolicyValueNet
from damii_env import Engine
from damii_env.observation import observation_shape, observe
from training.config import load_config
from training.run import TRAINERS

SHAPES = {
    "conv 32x3 dense (shipped PPO)": dict(channels=32, blocks=3),
    "conv 32x2 factorised": dict(channels=32, blocks=2, policy_head="factorised"),
    "conv 16x1 factorised": dict(channels=16, blocks=1, policy_head="factorised"),
    "mlp 128x1 (TD-leaf)": dict(trunk="mlp", channels=128, blocks=1, value_prior=0.2),
}


def _rate(fn, items: int, seconds: float) -> float:
    fn()  # warm-up
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        done += items
    return done / (time.perf_counter() - t0)


def network_rates(variant: str, shape_kw: dict, seconds: float) -> dict[str, float]:
    engine = Engine(variant)
    c, n, _ = observation_shape(engine.rules)
    shape = NetworkShape(c, n, engine.n_actions, orientation=engine.rules.orientation,
                         **shape_kw)
    net = PolicyValueNet(shape)
    rng = np.random.default_rng(0)
    state = engine.init(1024)
    for _ in range(40):
        engine.step(state, engine.sample_actions(state, rng))
        engine.reset_where(state)
    obs = torch.from_numpy(observe(engine, state))
    mask = torch.from_numpy(engine.legal_action_mask(state))
    net.eval()
    with torch.no_grad():
        value = _rate(lambda: net.value(obs), len(obs), seconds)
        forward = _rate(lambda: net(obs[:128]), 128, seconds)
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    batch = obs[:512]

    def step() -> None:
        logits, v = net(batch)
        masked = logits.masked_fill(mask[:512] == 0, -1e9)
        loss = torch.logsumexp(masked, -1).mean() + v.square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    train = _rate(step, len(batch), seconds)
    return {"value/s": value, "forward/s": forward, "train/s": train,
            "params": sum(p.numel() for p in net.parameters())}


def trainer_rate(config: str, iterations: int) -> tuple[float, dict[str, float]]:
    cfg = load_config(config, ["eval_every=0", "final_eval_games=0"])
    trainer = TRAINERS[cfg.algorithm](cfg)
    trainer.iterate()
    t0 = time.perf_counter()
    s0 = trainer.samples
    leaves0 = getattr(trainer, "leaves", 0)
    for _ in range(iterations):
        trainer.iterate()
    dt = time.perf_counter() - t0
    extra = {"leaves_per_sample": (getattr(trainer, "leaves", 0) - leaves0)
             / max(trainer.samples - s0, 1)}
    return (trainer.samples - s0) / dt, extra


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", nargs="+", default=["damii", "international", "triestine",
                                                      "damath"])
    p.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    p.add_argument("--iterations", type=int, default=3, help="trainer iterations timed")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s)\n")
    print("| variant | network | parameters | value-only positions/s (batch 1024) | "
          "forward/s (batch 128) | training samples/s (batch 512) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    limits = {}
    for variant in args.variants:
        for name, kw in SHAPES.items():
            r = network_rates(variant, kw, args.seconds)
            limits[(variant, name)] = r
            print(f"| {variant} | {name} | {r['params']:,} | {r['value/s']:,.0f} | "
                  f"{r['forward/s']:,.0f} | {r['train/s']:,.0f} |")
    print("\n| config | trainer samples/s | network limit for the same work | share |")
    print("| --- | ---: | ---: | ---: |")
    for variant in args.variants:
        for config, shape, algo in ((f"configs/{variant}_ppo.yaml",
                                     "conv 32x3 dense (shipped PPO)", "ppo"),
                                    ("configs/damii_tdleaf.yaml", "mlp 128x1 (TD-leaf)",
                                     "tdleaf")):
            if algo == "tdleaf" and variant != "damii":
                continue
            rate, extra = trainer_rate(config, args.iterations)
            lim = limits[(variant, shape)]
            cfg = load_config(config)
            if algo == "ppo":  # one forward pass, `epochs` training passes
                per = 1 / lim["forward/s"] + cfg.epochs / lim["train/s"]
            else:  # the search's leaves, then `epochs` training passes
                per = extra["leaves_per_sample"] / lim["value/s"] + cfg.epochs / lim["train/s"]
            print(f"| {config} | {rate:,.0f} | {1 / per:,.0f} | {rate * per:.0%} |")


if __name__ == "__main__":
    main()
