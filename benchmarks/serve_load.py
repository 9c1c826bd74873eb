#!/usr/bin/env python
"""Load test of ``damii serve``: concurrent games of people against ``alphabeta:depth=2``
(or another ``--opponent``, e.g. ``pretrained:damii``).

Starts a real server (``damii serve`` in a subprocess, on a free localhost port, with its
default pool of worker processes), then plays ``--games`` games at once, each in its own
session (its own cookie) and driven over the HTTP API the page uses: the person plays
White on Damii, choosing each move at random among the legal moves the server reports,
and learns the agent's reply from the game's websocket, as the page does. Each game
stops after ``--moves`` of the person's moves or at its end.

For every agent reply it measures the latency from the person's move request being sent
to the state with the agent's move arriving on the websocket (the server pushes a game's
state as soon as it changes), and prints the count, median, 95th
percentile (nearest rank) and maximum, and the wall time. The server is always shut down.

    python benchmarks/serve_load.py                        # 20 games, 15 moves each
    python benchmarks/serve_load.py --games 2 --moves 2    # smoke run
    python benchmarks/serve_load.py --games 20 --moves 15 --port 8765 --workers 2
    python benchmarks/serve_load.py --games 5 --tournaments 2 --sessions 110 --swiss 200
    python benchmarks/serve_load.py --games 20 --analyses 5

Pressure (issue 63's targets), started before the measured games and kept up while
they run: ``--tournaments N`` open tournaments of 64 ``alphabeta:time=0.5`` agents with
their first round started (one organizer); ``--sessions N`` sessions from this address,
each playing a person against ``alphabeta:time=0.5`` (a legal move whenever it is its
turn); ``--swiss N`` a Swiss of N ``random`` agents whose rounds are started and decided
one after another; ``--analyses N`` sessions each reviewing a game of 100 plies (the
server's game review, 0.2 s a position, issue 62), one review after another. A pinger
asks ``/api/ping`` every 0.1 s meanwhile; the report adds its latencies, the Swiss's round
starts and the server's memory (RSS) at the end. The measured games run in a process of
their own (another user is not in the load client's event loop, whose lag under the
pressure's hundreds of sessions reached seconds); ``--games-in-client`` plays them in the
load client's loop, as the runs before 2026-12-07 19:00 UTC did.

Needs the serve extra (``pip install -e ".[serve]"``: FastAPI, uvicorn, websockets) and
httpx. Not part of the test suite; run it by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parents[1]
COOKIE = "damii_session"
REPLY_TIMEOUT = 300.0
"""Seconds to wait for one agent reply before the game is given up as failed."""


@dataclass
class GameLog:
    """What one game measured."""

    index: int
    latencies: list[float] = field(default_factory=list)
    """Seconds from sending the person's move to the agent's move on the websocket."""
    post_seconds: list[float] = field(default_factory=list)
    """Round trips of the person's move requests themselves."""
    plies: int = 0
    result: str | None = None
    error: str | None = None


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, workers: int, log_path: Path,
                 probe: Path | None = None) -> subprocess.Popen[bytes]:
    """``damii serve`` on `port` in a process group of its own (its workers included),
    with a database of its own beside `log_path` (one server per database file);
    `probe`: the server's event loop is watched (``benchmarks/loop_probe``) and what held
    it is written to that file."""
    log = log_path.open("wb")
    env = dict(os.environ)
    if probe is not None:
        env["DAMII_LOOP_PROBE"] = str(probe)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT / "benchmarks" / "loop_probe"), env.get("PYTHONPATH")) if p)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "damii_app.cli", "serve", "--port", str(port),
             "--workers", str(workers), "--db", str(log_path.with_name("serve.sqlite3"))],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
    finally:
        log.close()


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Ctrl-C (uvicorn shuts the app and its pool down), then SIGTERM, then SIGKILL, each
    to the server's own process group."""
    if proc.poll() is None:
        for sig, wait in ((signal.SIGINT, 20.0), (signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
    try:  # worker processes left behind in the group
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    """Wait until the server answers ``/api/meta``."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(base_url=base, timeout=5.0) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with status {proc.returncode}")
            try:
                if (await client.get("/api/meta")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {timeout:.0f} s")


@contextlib.contextmanager
def running_server(workers: int, port: int = 0, prefix: str = "serve_load_",
                   probe: Path | None = None, log_copy: Path | None = None
                   ) -> Iterator[tuple[str, Any, float]]:
    """A real ``damii serve`` (on `port`, or a free one) up and answering: yields its base
    URL, its process and the seconds it took to come up; prints the last lines of its log
    on stderr if the body fails, and always stops it (`probe`: :func:`start_server`;
    `log_copy`: its whole log copied there once it has stopped)."""
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    # a SIGTERM (``timeout``) ends the run through the finally below, which stops the
    # server: by default it ended this process alone and left the server running
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        log_path = Path(tmp) / "server.log"
        proc = start_server(port, workers, log_path, probe)
        try:
            started = time.perf_counter()
            asyncio.run(wait_ready(base, proc))
            yield base, proc, time.perf_counter() - started
        except BaseException:
            tail = log_path.read_text(errors="replace")[-3000:]
            if tail:
                print(f"# server log (last lines):\n{tail}", file=sys.stderr)
            raise
        finally:
            stop_server(proc)
            if log_copy is not None:
                shutil.copyfile(log_path, log_copy)


async def next_state(ws: ClientConnection, done: Any, timeout: float) -> dict[str, Any]:
    """The first state pushed on `ws` for which `done(state)` holds."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no agent reply within {timeout:.0f} s")
        state = json.loads(await asyncio.wait_for(ws.recv(), left))
        if done(state):
            return state


async def play_game(base: str, index: int, moves: int, opponent: str,
                    rng: random.Random) -> GameLog:
    """One session: a person (random legal moves) against `opponent`, over the API."""
    log = GameLog(index)
    try:
        async with httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT) as client:
            r = await client.post("/api/games", json={
                "variant": "damii", "white": "human", "black": opponent, "clock": "none",
                "casual": True})
            r.raise_for_status()
            state = r.json()
            gid = state["id"]
            cookie = client.cookies.get(COOKIE)
            ws_url = base.replace("http://", "ws://") + f"/api/games/{gid}/ws"
            async with connect(ws_url, additional_headers={"Cookie": f"{COOKIE}={cookie}"},
                               max_size=None) as ws:
                for _ in range(moves):
                    if state["over"]:
                        break
                    legal = state["position"]["legal"]
                    move = rng.choice(legal)["text"]
                    before = len(state["moves"])
                    start = time.perf_counter()
                    r = await client.post(f"/api/games/{gid}/move", json={"move": move})
                    log.post_seconds.append(time.perf_counter() - start)
                    r.raise_for_status()
                    state = r.json()
                    if state["over"]:
                        break

                    def replied(s: dict[str, Any], n: int = before + 2) -> bool:
                        return bool(s["over"] or (len(s["moves"]) >= n
                                                  and s["position"]["legal"]))

                    state = await next_state(ws, replied, REPLY_TIMEOUT)
                    log.latencies.append(time.perf_counter() - start)
            log.plies, log.result = len(state["moves"]), state["result"]
            if not state["over"]:  # the person leaves: the game ends (it would stay in
                # progress an hour, and one address may hold 200: batch after batch of
                # games left on were refused, 429, at 19:05 UTC)
                (await client.post(f"/api/games/{gid}/resign", json={})).raise_for_status()
    except Exception as exc:  # noqa: BLE001 - reported with the figures
        log.error = f"{type(exc).__name__}: {exc}"
    return log


def nearest_rank(values: list[float], q: float) -> float:
    """The q-quantile by the nearest-rank method (q in (0, 1])."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass
class Pressure:
    """What the background load measured."""

    pings: list[float] = field(default_factory=list)
    """From the load client's own event loop (its lag counts too)."""
    own_pings: list[float] = field(default_factory=list)
    """From a process of its own (:func:`ping_process`): the server's answer alone."""
    round_starts: list[float] = field(default_factory=list)
    reviews: list[float] = field(default_factory=list)
    """Seconds each finished review took (request to result)."""
    errors: list[str] = field(default_factory=list)


def review_pdn(seed: int, plies: int = 100) -> str:
    """A Damii game of `plies` plies (random legal moves; a new game where one ends
    early), as PDN text, to be reviewed."""
    from damii_env import Game
    from damii_env.pdn import record

    rng = random.Random(seed)
    while True:
        game = Game("damii")
        while len(game.move_stack) < plies and not game.is_over():
            game.push(rng.choice(game.legal_moves()))
        if len(game.move_stack) == plies:
            return record(game, white="load", black="test", result="*").to_text()


async def analysis_pressure(base: str, index: int, stop: asyncio.Event, out: Pressure,
                            pdn: str) -> None:
    """One session reviewing `pdn` (``POST /api/analysis``, polled to its end), again and
    again until `stop`."""
    async with httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT) as client:
        while not stop.is_set():
            start = time.perf_counter()
            r = await client.post("/api/analysis", json={"pdn": pdn})
            if r.status_code != 200:
                out.errors.append(f"analysis {index}: {r.status_code} {r.text[:120]}")
                await asyncio.sleep(1.0)
                continue
            aid = r.json()["id"]
            while not stop.is_set():
                await asyncio.sleep(0.5)
                state = (await client.get(f"/api/analysis/{aid}")).json()
                if state.get("error"):
                    out.errors.append(f"analysis {index}: {state['error'][:120]}")
                    break
                if not state["running"]:
                    out.reviews.append(time.perf_counter() - start)
                    break


async def tournament_pressure(base: str, count: int, out: Pressure) -> None:
    """`count` open tournaments of 64 ``alphabeta:time=0.5`` agents, first round started."""
    async with httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT) as client:
        for t in range(count):
            r = await client.post("/api/tournaments", json={
                "name": f"Agents {t}", "max_players": 64, "rated": False})
            if r.status_code != 200:
                out.errors.append(f"tournament: {r.status_code} {r.text[:200]}")
                return
            tid = r.json()["id"]
            for i in range(64):
                await client.post(f"/api/tournaments/{tid}/agents", json={
                    "spec": "alphabeta:time=0.5", "name": f"bot{i}"})
            r = await client.post(f"/api/tournaments/{tid}/rounds")
            if r.status_code != 200:
                out.errors.append(f"round: {r.status_code} {r.text[:200]}")


async def session_pressure(base: str, index: int, stop: asyncio.Event, out: Pressure,
                           rng: random.Random) -> None:
    """One session playing a person (random legal moves, polled) against
    ``alphabeta:time=0.5``, new games as they end, until `stop`."""
    async with httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT) as client:
        state: dict[str, Any] | None = None
        while not stop.is_set():
            try:
                if state is None or state["over"]:
                    r = await client.post("/api/games", json={
                        "white": "alphabeta:time=0.5", "black": "human", "clock": "none"})
                    if r.status_code != 200:
                        out.errors.append(f"session {index}: {r.status_code} {r.text[:120]}")
                        return
                    state = r.json()
                state = (await client.get(f"/api/games/{state['id']}")).json()
                legal = state["position"]["legal"]
                if not state["over"] and state["position"]["turn"] == 1 and legal:
                    r = await client.post(f"/api/games/{state['id']}/move",
                                          json={"move": rng.choice(legal)["text"]})
                    state = r.json() if r.status_code == 200 else state
            except httpx.HTTPError as exc:
                out.errors.append(f"session {index}: {type(exc).__name__}")
            await asyncio.sleep(0.2)


async def swiss_pressure(base: str, players: int, stop: asyncio.Event, out: Pressure,
                         rng: random.Random) -> None:
    """A Swiss of `players` ``random`` agents: each round started, then every board
    decided at once (to reach the late rounds, whose pairing is the hard one); when its
    rounds are all played, another Swiss of as many, until `stop`."""
    async with httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT) as client:
        while not stop.is_set():
            r = await client.post("/api/tournaments", json={
                "name": "Big Swiss", "system": "swiss", "rounds": 9, "max_players": players,
                "rated": False})
            if r.status_code != 200:
                out.errors.append(f"swiss: {r.status_code} {r.text[:200]}")
                return
            tid = r.json()["id"]
            for i in range(players):
                await client.post(f"/api/tournaments/{tid}/agents", json={"spec": "random",
                                                                            "name": f"p{i}"})
            while not stop.is_set():
                start = time.perf_counter()
                r = await client.post(f"/api/tournaments/{tid}/rounds")
                if r.status_code != 200:
                    if "all " not in r.text:
                        out.errors.append(f"swiss round: {r.status_code} {r.text[:200]}")
                        return
                    break  # its rounds are all played: another Swiss
                out.round_starts.append(time.perf_counter() - start)
                view = r.json()
                for b in view["boards"]:
                    if b["round"] == view["round"] and b["result"] is None:
                        await client.post(f"/api/tournaments/{tid}/result", json={
                            "round": b["round"], "board": b["board"],
                            "result": rng.choice(["1-0", "0-1", "1/2-1/2"])})


def ping_process(base: str, stop: Any, out: Any) -> None:
    """In a process of its own (so that the load client's busy event loop is not in the
    measure): ``/api/ping`` every 0.1 s until `stop` is set, then the latencies and the
    errors on the queue `out`."""
    pings, errors = [], []
    with httpx.Client(base_url=base, timeout=REPLY_TIMEOUT) as client:
        while not stop.is_set():
            start = time.perf_counter()
            try:
                client.get("/api/ping").raise_for_status()
                pings.append(time.perf_counter() - start)
            except httpx.HTTPError as exc:
                errors.append(f"ping (own process): {type(exc).__name__}")
            time.sleep(0.1)
    out.put((pings, errors))


async def pinger(base: str, stop: asyncio.Event, out: Pressure) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=REPLY_TIMEOUT) as client:
        while not stop.is_set():
            start = time.perf_counter()
            try:
                await client.get("/api/ping")
                out.pings.append(time.perf_counter() - start)
            except httpx.HTTPError as exc:
                out.errors.append(f"ping: {type(exc).__name__}")
            await asyncio.sleep(0.1)


async def measured_games(base: str, games: int, moves: int, opponent: str, seed: int,
                         seconds: float) -> tuple[list[GameLog], float]:
    """The measured games: `games` at once, batch after batch for `seconds` (one batch at
    least); their logs and the wall time."""
    start = time.perf_counter()
    logs: list[GameLog] = []
    batch = 0
    while not logs or time.perf_counter() - start < seconds:
        logs += await asyncio.gather(*(
            play_game(base, len(logs) + i, moves, opponent,
                      random.Random(seed * 1_000 + batch * games + i)) for i in range(games)))
        batch += 1
    return logs, time.perf_counter() - start


def measured_process(base: str, games: int, moves: int, opponent: str, seed: int,
                     seconds: float, out: Any) -> None:
    """:func:`measured_games` in a process of its own (under pressure: the load client's
    event loop, busy with the pressure's hundreds of sessions, would add its own lag to
    another user's replies); the result on the queue `out`."""
    out.put(asyncio.run(measured_games(base, games, moves, opponent, seed, seconds)))


async def run_games(base: str, games: int, moves: int, opponent: str, seed: int,
                    args: argparse.Namespace | None = None,
                    pressure: Pressure | None = None) -> tuple[list[GameLog], float]:
    stop = asyncio.Event()
    background = []
    own = None
    if args is not None and pressure is not None:
        rng = random.Random(seed + 7)
        context = multiprocessing.get_context("spawn")
        own = (context.Event(), context.Queue())
        own_proc = context.Process(target=ping_process, args=(base, *own), daemon=True)
        own_proc.start()
        background.append(asyncio.create_task(pinger(base, stop, pressure)))
        if args.tournaments:
            await tournament_pressure(base, args.tournaments, pressure)
        background += [asyncio.create_task(session_pressure(
            base, i, stop, pressure, random.Random(seed * 7 + i))) for i in range(args.sessions)]
        if args.swiss:
            background.append(asyncio.create_task(swiss_pressure(base, args.swiss, stop,
                                                                 pressure, rng)))
        if args.analyses:
            pdn = review_pdn(seed)
            background += [asyncio.create_task(analysis_pressure(base, i, stop, pressure, pdn))
                           for i in range(args.analyses)]
        if args.sessions or args.tournaments or args.swiss or args.analyses:
            await asyncio.sleep(10.0)  # the pressure is up before the measured games
            until = time.monotonic() + 600.0
            while args.swiss and not pressure.round_starts and time.monotonic() < until:
                await asyncio.sleep(0.5)  # the Swiss's entries are in, its rounds started
    seconds = getattr(args, "seconds", 0.0)
    if own is None or getattr(args, "games_in_client", False):
        logs, wall = await measured_games(base, games, moves, opponent, seed, seconds)
    else:  # another user's games: a process of their own, not the load client's loop
        context = multiprocessing.get_context("spawn")
        back = context.Queue()
        player = context.Process(target=measured_process, daemon=True, args=(
            base, games, moves, opponent, seed, seconds, back))
        player.start()
        logs, wall = await asyncio.to_thread(back.get, True, REPLY_TIMEOUT + seconds + 600)
        player.join(10.0)
    stop.set()
    if own is not None and pressure is not None:
        own[0].set()
        pings, errors = await asyncio.to_thread(own[1].get, True, 60.0)
        pressure.own_pings, pressure.errors = pings, pressure.errors + errors
        own_proc.join(10.0)
    await asyncio.gather(*background, return_exceptions=True)
    return list(logs), wall


def rss_mb(pid: int) -> float | None:
    """The resident memory of process `pid` in MB (Linux), else None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def report(logs: list[GameLog], wall: float, args: argparse.Namespace) -> int:
    latencies = [x for log in logs for x in log.latencies]
    posts = [x for log in logs for x in log.post_seconds]
    failed = [log for log in logs if log.error]
    print(f"# damii serve load test: {len(logs)} games x up to {args.moves} moves of a person "
          f"(random legal moves) against {args.opponent}, Damii, clock none, "
          f"{args.workers} search workers")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                            capture_output=True).stdout.strip() or "?"
    print(f"# commit {commit}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, "
          f"python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M:%S')} "
          f"(load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print(f"games finished: {len(logs) - len(failed)} of {len(logs)}; "
          f"ended on the board: {sum(1 for log in logs if log.result not in (None, '*'))}; "
          f"plies played: {sum(log.plies for log in logs)}")
    for log in failed:
        print(f"game {log.index} failed: {log.error}")
    if not latencies:
        print("no agent replies were measured")
        return 1
    where = ("the load client's event loop" if getattr(args, "games_in_client", False)
             else "a process of their own")
    print(f"# the measured games ran in {where}")
    print("| measure | count | median (s) | p95 (s) | max (s) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| agent reply: move request sent -> agent's move on the websocket | "
          f"{len(latencies)} | {statistics.median(latencies):.3f} | "
          f"{nearest_rank(latencies, 0.95):.3f} | {max(latencies):.3f} |")
    print(f"| the person's move request alone (HTTP round trip) | {len(posts)} | "
          f"{statistics.median(posts):.3f} | {nearest_rank(posts, 0.95):.3f} | "
          f"{max(posts):.3f} |")
    print(f"wall time: {wall:.1f} s for the games (after the server was up)")
    pressure: Pressure | None = getattr(args, "pressure", None)
    for label, pings in (("ping (`/api/ping` every 0.1 s, from a process of its own)",
                          pressure.own_pings if pressure else []),
                         ("ping (the same, from the load client's busy event loop)",
                          pressure.pings if pressure else [])):
        if pings:
            print(f"| {label} | {len(pings)} | {statistics.median(pings):.3f} | "
                  f"{nearest_rank(pings, 0.95):.3f} | {max(pings):.3f} |")
    if pressure is not None and pressure.round_starts:
        starts = pressure.round_starts
        print(f"| Swiss round start (request) | {len(starts)} | "
              f"{statistics.median(starts):.3f} | {nearest_rank(starts, 0.95):.3f} | "
              f"{max(starts):.3f} |")
    if pressure is not None and getattr(args, "analyses", 0):
        done = pressure.reviews
        print(f"reviews of 100 plies finished meanwhile: {len(done)}"
              + (f", {statistics.median(done):.1f} s median" if done else ""))
    if pressure is not None:
        for error in pressure.errors[:int(os.environ.get("SERVE_LOAD_ERRORS", "10"))]:
            print(f"pressure: {error}")
    if getattr(args, "server_rss", None) is not None:
        print(f"server RSS at the end: {args.server_rss:.0f} MB")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="concurrent games (default 20)")
    parser.add_argument("--moves", type=int, default=15,
                        help="the person's moves per game, fewer if it ends (default 15)")
    parser.add_argument("--port", type=int, default=0,
                        help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--workers", type=int, default=2,
                        help="damii serve --workers (default 2, the server's default)")
    parser.add_argument("--opponent", default="alphabeta:depth=2",
                        help="the agent's player spec (default alphabeta:depth=2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the person's moves")
    parser.add_argument("--tournaments", type=int, default=0,
                        help="pressure: open tournaments of 64 alphabeta:time=0.5 agents")
    parser.add_argument("--sessions", type=int, default=0,
                        help="pressure: sessions playing against alphabeta:time=0.5")
    parser.add_argument("--swiss", type=int, default=0,
                        help="pressure: a Swiss of this many random agents (at most 256)")
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="play the measured games again, batch after batch, until "
                             "this many seconds have passed (default 0: one batch)")
    parser.add_argument("--probe", type=Path, default=None,
                        help="watch the server's event loop (benchmarks/loop_probe) and "
                             "write what held it for more than 10 ms to this file")
    parser.add_argument("--analyses", type=int, default=0,
                        help="pressure: sessions each reviewing a game of 100 plies, "
                             "again and again (the server runs at most 5 at once)")
    parser.add_argument("--games-in-client", action="store_true",
                        help="under pressure, play the measured games in the load client's "
                             "own event loop (as before 2026-12-07 evening: its lag counts) "
                             "instead of a process of their own")
    args = parser.parse_args()
    if args.games < 1 or args.moves < 1:
        parser.error("--games and --moves must be at least 1")
    with running_server(args.workers, args.port, probe=args.probe) as (base, proc, seconds):
        print(f"# server up on {base} in {seconds:.1f} s")
        args.pressure = Pressure()
        logs, wall = asyncio.run(run_games(base, args.games, args.moves, args.opponent,
                                           args.seed, args, args.pressure))
        args.server_rss = rss_mb(proc.pid)
        code = report(logs, wall, args)
    if args.probe is not None and args.probe.exists():
        print(f"# the server's event loop (benchmarks/loop_probe, {args.probe}):")
        print("\n".join(args.probe.read_text().splitlines()[:8]))
    return code

if __name__ == "__main__":
    sys.exit(main())
