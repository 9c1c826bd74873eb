#!/usr/bin/env python
"""Memory soak of ``damii serve``: many short games through the HTTP API, the server's
resident memory (RSS) sampled against the games played.

Starts a real server (``damii serve`` in a subprocess, as :mod:`serve_load` does: a free
localhost port, its own database, its default settings), then until ``--seconds`` have
passed:

- ``--clients`` loops each play short games of a person against ``--opponent`` (default
  ``random``): the person plays ``--moves`` random legal moves (the agent's reply read
  from the game's state), then resigns; every ``--games-per-session`` games the client
  drops its cookie and so starts a new browser session (sessions come and go, as in a
  school);
- ``--agent-clients`` loops each play whole games between two agents (``random`` against
  ``greedy``), new ones as they end (the server paces agents' moves, 0.25 s a move).

Every ``--every`` seconds it samples the server process's RSS, its workers' RSS and the
games finished so far, and prints one line; at the end a summary: the RSS after the first
minute, at the end and at its highest, their ratio, and the games played. ``--csv FILE``
writes the samples. Needs the serve extra and httpx; not part of the test suite.

    nice -n 5 python benchmarks/serve_soak.py --seconds 600          # the 10-minute soak
    python benchmarks/serve_soak.py --seconds 60 --clients 2         # smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import platform
import random
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_load import (  # noqa: E402
    REPLY_TIMEOUT,
    ROOT,
    rss_mb,
    running_server,
)


@dataclass
class Tally:
    """What the clients did."""

    games: int = 0
    """Games finished (resigned or ended on the board)."""
    agent_games: int = 0
    sessions: int = 0
    moves: int = 0
    errors: list[str] = field(default_factory=list)
    refusals: int = 0
    """Requests refused with 429 or 503 (a limit of the server: retried after a pause)."""
    started: float = field(default_factory=time.monotonic)
    failed: list[tuple[float, float, float, str, str]] = field(default_factory=list)
    """Requests that failed in the transport: seconds since the start, seconds the
    client's connection had been idle before it, seconds the request took, the route,
    the error's kind."""


async def _ok(client: httpx.AsyncClient, method: str, url: str, tally: Tally,
              **kwargs: object) -> dict | None:
    """The JSON of a request that succeeded; None (and a pause) when the server refused
    it for a limit; an error is counted."""
    start = time.monotonic()
    idle = start - getattr(client, "soak_last", start)
    try:
        r = await client.request(method, url, **kwargs)
    except httpx.HTTPError as exc:  # when and after how long an idle: the cause's trace
        tally.failed.append((start - tally.started, idle, time.monotonic() - start,
                             f"{method} {url.split('/api/')[-1].split('/')[0]}",
                             type(exc).__name__))
        raise
    client.soak_last = time.monotonic()  # type: ignore[attr-defined]
    if r.status_code in (429, 503):
        tally.refusals += 1
        await asyncio.sleep(float(r.headers.get("retry-after", "1")) / 10)
        return None
    if r.status_code != 200:
        tally.errors.append(f"{method} {url.split('/api/')[-1][:30]}: {r.status_code} "
                            f"{r.text[:120]}")
        return None
    return r.json()


async def person_games(base: str, index: int, args: argparse.Namespace, stop: float,
                       tally: Tally) -> None:
    """:func:`person_client` until `stop`: a client whose connection failed (the error
    counted) starts again a second later in a new session, so that the clients stay as
    many as asked for the whole run."""
    while time.monotonic() < stop:
        await person_client(base, index, args, stop, tally)
        if time.monotonic() < stop:
            await asyncio.sleep(1.0)


async def person_client(base: str, index: int, args: argparse.Namespace, stop: float,
                        tally: Tally) -> None:
    """Short games of a person against the opponent, resigned after a few moves; a new
    session every few games; until `stop` or a failed connection."""
    rng = random.Random(args.seed * 1_000 + index)
    client: httpx.AsyncClient | None = None
    played = since = 0
    try:
        while time.monotonic() < stop:
            if client is None or played - since >= args.games_per_session:
                # (a refused game counted no game: before 2026-12-07 19:20 UTC each
                # refusal made a new session, and a new connection, at once)
                if client is not None:
                    await client.aclose()
                client = httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT)
                tally.sessions += 1
                since = played
            state = await _ok(client, "POST", "/api/games", tally, json={
                "white": "human", "black": args.opponent, "clock": "none"})
            if state is None:
                continue
            gid = state["id"]
            for _ in range(args.moves):
                if state["over"] or time.monotonic() >= stop:
                    break
                legal = state["position"]["legal"]
                if not legal:  # the agent is still to move: read the state again
                    await asyncio.sleep(0.05)
                    state = await _ok(client, "GET", f"/api/games/{gid}", tally) or state
                    continue
                moved = await _ok(client, "POST", f"/api/games/{gid}/move", tally,
                                  json={"move": rng.choice(legal)["text"]})
                if moved is None:
                    break
                tally.moves += 1
                state = moved
                deadline = time.monotonic() + REPLY_TIMEOUT
                while not state["over"] and not state["position"]["legal"] \
                        and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                    state = await _ok(client, "GET", f"/api/games/{gid}", tally) or state
            if not state["over"]:
                await _ok(client, "POST", f"/api/games/{gid}/resign", tally, json={})
            played += 1
            tally.games += 1
    except httpx.HTTPError as exc:
        tally.errors.append(f"client {index}: {type(exc).__name__}: {exc}")
    finally:
        if client is not None:
            await client.aclose()


async def agent_games(base: str, index: int, stop: float, tally: Tally) -> None:
    """Whole games between two agents, one after another, in one session."""
    async with httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT) as client:
        tally.sessions += 1
        try:
            while time.monotonic() < stop:
                state = await _ok(client, "POST", "/api/games", tally, json={
                    "white": "random", "black": "greedy", "clock": "none",
                    "seed": index})
                if state is None:
                    continue
                while not state["over"] and time.monotonic() < stop:
                    await asyncio.sleep(1.0)
                    state = await _ok(client, "GET", f"/api/games/{state['id']}",
                                      tally) or state
                if state["over"]:
                    tally.games += 1
                    tally.agent_games += 1
        except httpx.HTTPError as exc:
            tally.errors.append(f"agents {index}: {type(exc).__name__}: {exc}")


def children_rss_mb(pid: int) -> float:
    """The RSS of the processes whose parent is `pid` (the search workers), in MB."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("PPid", "").strip() == str(pid):
            total += rss_mb(int(entry.name)) or 0.0
    return total


async def sample(pid: int, started: float, stop: float, every: float, tally: Tally,
                 rows: list[tuple[float, int, float, float]]) -> None:
    """Every `every` seconds: elapsed seconds, games played, server and workers' RSS."""
    print("| s | games played | moves | sessions | server RSS (MB) | workers' RSS (MB) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    while True:
        now = time.monotonic()
        server, workers = rss_mb(pid) or 0.0, children_rss_mb(pid)
        rows.append((now - started, tally.games, server, workers))
        print(f"| {now - started:.0f} | {tally.games} | {tally.moves} | {tally.sessions} | "
              f"{server:.0f} | {workers:.0f} |", flush=True)
        if now >= stop:
            return
        await asyncio.sleep(min(every, max(0.0, stop - now)))


async def soak(base: str, pid: int, args: argparse.Namespace
               ) -> tuple[Tally, list[tuple[float, int, float, float]]]:
    tally, rows = Tally(), []
    started = tally.started = time.monotonic()
    stop = started + args.seconds
    clients = [asyncio.create_task(person_games(base, i, args, stop, tally))
               for i in range(args.clients)]
    clients += [asyncio.create_task(agent_games(base, i, stop, tally))
                for i in range(args.agent_clients)]
    await sample(pid, started, stop, args.every, tally, rows)
    await asyncio.gather(*clients)
    server, workers = rss_mb(pid) or 0.0, children_rss_mb(pid)
    rows.append((time.monotonic() - started, tally.games, server, workers))
    return tally, rows


def summary(tally: Tally, rows: list[tuple[float, int, float, float]],
            args: argparse.Namespace) -> int:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            capture_output=True).stdout.strip() or "?"
    print(f"# damii serve memory soak: {args.seconds:.0f} s, {args.clients} clients of "
          f"short games (a person, {args.moves} moves, against {args.opponent}, then "
          f"resigns; a new session every {args.games_per_session} games), "
          f"{args.agent_clients} clients of random-greedy games; {args.workers} workers")
    print(f"# commit {commit}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M:%S')} (load average at the end: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    after_minute = next((r for r in rows if r[0] >= 60.0), rows[0])
    highest = max(rows, key=lambda r: r[2])
    end = rows[-1]
    print(f"games played: {tally.games} ({tally.agent_games} between agents), "
          f"{tally.moves} moves of people, {tally.sessions} sessions; refused for a "
          f"limit: {tally.refusals}; errors: {len(tally.errors)}")
    print(f"server RSS: {after_minute[2]:.0f} MB after the first minute "
          f"({after_minute[1]} games), {end[2]:.0f} MB at the end ({end[1]} games), "
          f"highest {highest[2]:.0f} MB at {highest[0]:.0f} s ({highest[1]} games); "
          f"end / first minute {end[2] / after_minute[2]:.2f}x, highest / first minute "
          f"{highest[2] / after_minute[2]:.2f}x")
    print(f"workers' RSS: {after_minute[3]:.0f} MB after the first minute, "
          f"{end[3]:.0f} MB at the end")
    if tally.failed:
        idle = sorted(f[1] for f in tally.failed)
        print(f"requests failed in the transport: {len(tally.failed)}; the connection idle "
              f"before them: {sum(1 for x in idle if x < 4.0)} under 4 s, "
              f"{sum(1 for x in idle if 4.0 <= x < 6.0)} 4-6 s, "
              f"{sum(1 for x in idle if x >= 6.0)} over 6 s (uvicorn closes a connection "
              f"idle 5 s); routes: {dict(Counter(f[3] for f in tally.failed))}; first at "
              f"{min(f[0] for f in tally.failed):.0f} s, last at "
              f"{max(f[0] for f in tally.failed):.0f} s")
        for when, before, took, route, kind in tally.failed[:5]:
            print(f"  failed: at {when:.1f} s, idle {before:.2f} s, took {took:.2f} s, "
                  f"{route}, {kind}")
    kinds = Counter(re.sub(r"^(client|agents) \d+", r"\1 N", error) for error in tally.errors)
    for error, count in kinds.most_common(10):
        print(f"error ({count}x): {error}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["seconds", "games", "server_rss_mb", "workers_rss_mb"])
            out.writerows([(f"{s:.1f}", g, f"{a:.1f}", f"{b:.1f}") for s, g, a, b in rows])
    return 1 if tally.errors else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0,
                        help="how long the games go on (default 600)")
    parser.add_argument("--clients", type=int, default=8,
                        help="loops of short games of a person (default 8)")
    parser.add_argument("--agent-clients", type=int, default=2,
                        help="loops of whole games between agents (default 2)")
    parser.add_argument("--moves", type=int, default=6,
                        help="the person's moves before resigning (default 6)")
    parser.add_argument("--games-per-session", type=int, default=10,
                        help="games a client plays before it starts a new session")
    parser.add_argument("--opponent", default="random",
                        help="the person's opponent (default random)")
    parser.add_argument("--workers", type=int, default=2, help="damii serve --workers")
    parser.add_argument("--every", type=float, default=15.0,
                        help="seconds between samples (default 15)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--csv", help="write the samples to this CSV file")
    parser.add_argument("--server-log", type=Path, default=None,
                        help="copy the server's whole log (uvicorn's included) to this file")
    args = parser.parse_args()
    with running_server(args.workers, prefix="serve_soak_",
                        log_copy=args.server_log) as (base, proc, seconds):
        print(f"# server up on {base} in {seconds:.1f} s; RSS "
              f"{rss_mb(proc.pid) or 0:.0f} MB before any game")
        tally, rows = asyncio.run(soak(base, proc.pid, args))
        return summary(tally, rows, args)

if __name__ == "__main__":
    sys.exit(main())
