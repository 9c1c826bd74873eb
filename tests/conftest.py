"""Shared helpers for the test suite."""

from __future__ import annotations

import atexit
import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest

import damii_env as d

# The tests' searches never read the endgame databases a developer made (`damii endgame
# make`): a search that probes one plays other moves than the fingerprints record. The
# folder they would be read from is kept for the endgame tests that reuse a made database.
os.environ.setdefault("DAMII_MADE_ENDGAME_DIR", os.environ.get("DAMII_ENDGAME_DIR") or str(
    Path.home() / ".cache" / "damii" / "endgame"))
os.environ["DAMII_ENDGAME_DIR"] = tempfile.mkdtemp(prefix="damii-test-endgame-")
atexit.register(shutil.rmtree, os.environ["DAMII_ENDGAME_DIR"], True)


def random_placement_fen(rng: random.Random, n_squares: int = 50, size: int = 10,
                         max_pieces: int = 12, king_share: float = 0.5) -> str:
    """A random legal-looking position: up to `max_pieces` a side, many kings."""
    squares = list(range(1, n_squares + 1))
    rng.shuffle(squares)
    nw, nb = rng.randint(1, max_pieces), rng.randint(1, max_pieces)
    half = size // 2

    def token(sq: int, white: bool) -> str:
        king = rng.random() < king_share
        if white and sq <= half:
            king = True
        if not white and sq > n_squares - half:
            king = True
        return ("K" if king else "") + str(sq)

    white = ",".join(token(s, True) for s in squares[:nw])
    black = ",".join(token(s, False) for s in squares[nw:nw + nb])
    return f"{rng.choice('WB')}:W{white}:B{black}"


def random_game_fens(variant: str, n_games: int, seed: int, max_plies: int = 200,
                     **options) -> list[str]:
    """Every position (FEN) of `n_games` random games played with the single-game API."""
    rng = random.Random(seed)
    fens = []
    for _ in range(n_games):
        g = d.Game(variant, **options)
        for _ in range(max_plies):
            if g.is_over():
                break
            fens.append(g.fen())
            g.push(rng.choice(g.legal_moves()))
    return fens


@pytest.fixture(scope="session")
def international_game_fens() -> list[str]:
    return random_game_fens("international", n_games=12, seed=7)


def replay_batched_games(eng, state, games: list, rng, max_steps: int = 100_000):
    """Step random hops in the batch `state` and replay every completed turn on `games[b]`.

    Yields ``(b, continuing)`` after each hop of game b: ``continuing`` is True while a
    capture goes on; otherwise the turn's hops have just been pushed on ``games[b]`` as
    the one legal move whose actions they are.
    """
    hops: list[list[int]] = [[] for _ in games]
    for _ in range(max_steps):
        if state.done.all():
            return
        turns = state.turn.copy()
        actions = eng.sample_actions(state, rng)
        eng.step(state, actions)
        for b in range(len(games)):
            if actions[b] < 0:
                continue
            hops[b].append(int(actions[b]))
            if state.turn[b] == turns[b]:
                yield b, True
                continue
            g = games[b]
            match = [m for m in g.legal_moves() if m.actions == tuple(hops[b])]
            assert len(match) == 1, (g.fen(), hops[b])
            g.push(match[0])
            hops[b] = []
            yield b, False


def board(diagram: str, turn: str = "W", orientation: str = "standard") -> str:
    """The PDN FEN of a board drawn as text, so that the picture is the test.

    One line per row, top row first (White moves up). Each cell is two characters wide;
    only the dark squares hold a mark: ``.`` empty, ``w``/``W`` a White man/king,
    ``b``/``B`` a Black man/king; light squares are left blank. The diagram's common
    indentation is ignored. ``orientation`` is that of RULES.md: ``standard`` (dark
    squares where row + column is odd, the bottom-left corner dark) or ``mirrored``.
    A mark on a light square, a row of the wrong length or an unknown mark is an error.
    """
    import textwrap

    rows = [line.rstrip() for line in textwrap.dedent(diagram).splitlines() if line.strip()]
    size = len(rows)
    if size not in (8, 10):
        raise ValueError(f"a diagram has 8 or 10 rows, not {size}")
    if orientation not in ("standard", "mirrored"):
        raise ValueError(f"orientation is 'standard' or 'mirrored', not {orientation!r}")
    dark_parity = 1 if orientation == "standard" else 0
    pieces: dict[str, list[str]] = {"W": [], "B": []}
    square = 0
    for r, line in enumerate(rows):
        if len(line) > 2 * size:
            raise ValueError(f"row {r} is wider than {size} cells: {line!r}")
        cells = {i // 2: ch for i, ch in enumerate(line) if ch != " "}
        if any(i % 2 for i, ch in enumerate(line) if ch != " "):
            raise ValueError(f"row {r}: a mark off the two-character grid: {line!r}")
        for c in range(size):
            dark = (r + c) % 2 == dark_parity
            mark = cells.get(c)
            if not dark:
                if mark is not None:
                    raise ValueError(f"row {r}, column {c} is a light square: {line!r}")
                continue
            square += 1
            if mark is None:
                raise ValueError(f"row {r}, column {c}: a dark square needs a mark: {line!r}")
            if mark not in ".wWbB":
                raise ValueError(f"row {r}, column {c}: unknown mark {mark!r} (use . w W b B)")
            if mark != ".":
                king = "K" if mark.isupper() else ""
                pieces[mark.upper()].append(f"{king}{square}")
    if turn not in ("W", "B"):
        raise ValueError(f"turn is 'W' or 'B', not {turn!r}")
    return f"{turn}:W{','.join(pieces['W'])}:B{','.join(pieces['B'])}"


def _time_limit(item: pytest.Item) -> float:
    """The test's pytest-timeout limit in seconds: its marker, else --timeout, else the ini
    value (0: none)."""
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0] or 0)
    try:
        given = item.config.getoption("timeout")
        return float(item.config.getini("timeout") if given is None else given or 0)
    except (ValueError, TypeError):  # pytest-timeout not installed
        return 0.0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """A backstop to pytest-timeout for hangs inside compiled code.

    A numba kernel holds the GIL, so a test stuck in one compiled call cannot be stopped by
    either of pytest-timeout's methods (the signal handler and the timer thread both wait
    for the call to return). faulthandler's watchdog thread needs no GIL: 60 s after the
    test's limit it prints every thread's stack and ends the run with exit status 1.
    """
    import faulthandler
    import os

    limit = _time_limit(item)
    if limit <= 0:
        yield
        return
    try:  # pytest's own copy of the terminal's stderr (fd 2 is captured during a test)
        from _pytest.faulthandler import fault_handler_stderr_fd_key
        fd = item.config.stash[fault_handler_stderr_fd_key]
    except (ImportError, KeyError):
        fd = 2
    os.write(fd, b"")  # fail here, not in the watchdog, if the descriptor is gone
    faulthandler.dump_traceback_later(limit + 60, exit=True, file=fd)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def _hub_policy_per_test(monkeypatch):
    """Each test starts without the process-wide Hub policy (``damii serve``'s
    ``run_server`` sets it in ``os.environ`` for the server and its workers; ``create_app``
    sets nothing), and any a test sets is undone after it, so a test cannot refuse a later
    test's ``hub:`` player."""
    from damii_agents.registry import HUB_ENGINES, HUB_REFUSED

    for name in (HUB_REFUSED, HUB_ENGINES):
        monkeypatch.delenv(name, raising=False)


# --- the suite's own counts, which the README's Development section quotes -----------------
SUITE_COUNTS = pytest.StashKey[dict]()
"""What this session collected, before any selection: the test files (collected or skipped
whole), the tests of the default run (not ``slow``) and those of them that need Chromium.
``tests/test_doc_figures.py`` compares them with the README; ``DAMII_TEST_COUNTS_TO=FILE``
writes them to FILE as JSON (the same test's way when it runs alone)."""


def _needs_chromium(item: pytest.Item) -> bool:
    """A browser test: it drives Chromium (the `browser` fixture) or is skipped without it."""
    return "browser" in getattr(item, "fixturenames", ()) or any(
        "chromium" in str(mark.kwargs.get("reason", "")) for mark in item.iter_markers("skipif"))


_SKIPPED_FILES: list[str] = []


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A test file skipped whole at collection (``pytest.importorskip`` of a missing extra)."""
    if report.skipped and report.nodeid.endswith(".py"):
        _SKIPPED_FILES.append(report.nodeid)


@pytest.hookimpl(tryfirst=True)  # before -m, -k and --deselect leave tests out
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    import json
    import os

    default = [item for item in items if item.get_closest_marker("slow") is None]
    counts = config.stash[SUITE_COUNTS] = {
        "files": sorted({item.nodeid.split("::")[0] for item in items}),
        "skipped_files": sorted(_SKIPPED_FILES), "default": len(default),
        "browser": sum(map(_needs_chromium, default)), "slow": len(items) - len(default)}
    if out := os.environ.get("DAMII_TEST_COUNTS_TO"):
        with open(out, "w") as f:
            json.dump(counts, f)
