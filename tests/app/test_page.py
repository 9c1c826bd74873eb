"""The page of `damii serve` (issue 45, D7): the start position before any game, a status
line per tab, the "can move" rings clear of the square numbers and Sci-Damath's operations,
Sci-Damath's scores as a table, an icon, a stopped server shown at once, the lobby's
players in the New-game row, the clock named in the lobby list, and the ladder's page.
API-level checks first, then Chromium (skipped without it) in the style of
test_serve_browser.py."""

from __future__ import annotations

import contextlib
import shutil
import socket
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from damii_app.serve import create_app  # noqa: E402
from tests.app.test_serve_api import served  # noqa: E402

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                             shutil.which("chromium") or "") if p and Path(p).exists()), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="no chromium (apt-get install chromium)")
PIECES = {"damii": 40, "international": 40, "triestine": 40, "damath": 24}
HANG_GUARD_MS = 120_000
"""A wait's limit that only stops a hang: the tests wait for the page's events."""


# --- API and HTML ---------------------------------------------------------------------------
def test_meta_gives_each_variants_start_position(client):
    start = client.get("/api/meta").json()["start"]
    assert set(start) == set(PIECES)
    for variant, board in start.items():
        assert board["layout"]["variant"] == variant
        assert len(board["layout"]["squares"]) == len(board["position"]["board"])
        assert sum(1 for p in board["position"]["board"] if p) == PIECES[variant]
    assert start["damath"]["layout"]["ops"] and start["damath"]["position"]["chips"]


def test_favicon_ping_and_the_ladder_page(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
    assert client.get("/static/favicon.svg").status_code == 200
    page = client.get("/").text
    assert 'rel="icon"' in page and 'href="/ladder"' in page and 'id="offline"' in page
    assert client.get("/api/ping").json() == {"ok": True}
    ladder = client.get("/ladder")
    assert ladder.status_code == 200 and 'id="ladder"' in ladder.text
    assert 'id="history"' in ladder.text and "/static/ladder.js" in ladder.text
    assert client.get("/static/ladder.js").status_code == 200


# --- Chromium -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(app, port: int):
    """`app` served by uvicorn on `port` in a thread, stopped on leaving: its base URL."""
    with served(app, port=port) as (base, _thread):
        yield base


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    return tmp_path_factory.mktemp("db") / "ladder.db"


@pytest.fixture(scope="module")
def server(db_path):
    pytest.importorskip("uvicorn")
    with serving(create_app(workers=0, agent_delay=0.0, db=db_path), free_port()) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("no chromium (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


@pytest.fixture()
def page(browser, server):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(server)
    page.wait_for_selector("body[data-ready='1']")
    yield page
    context.close()


def pieces_on(page, board: str) -> int:
    return page.locator(f"#{board} .piece").count()


def new_game(page, variant: str, white: str = "human", black: str = "random",
             casual: bool = True) -> dict:
    page.select_option("#variant", variant)
    page.fill("#white", white)
    page.fill("#black", black)
    page.set_checked("#casual", casual)
    page.click("#start")
    page.wait_for_function(f"() => game !== null && game.layout.variant === '{variant}' "
                           f"&& game.seats[1].label === '{black}'")
    return page.evaluate("() => game")


@needs_chromium
def test_the_boards_show_the_start_position_before_any_game(page):
    assert pieces_on(page, "play-board") == 40 and pieces_on(page, "watch-board") == 40
    assert page.locator("#play-board .dark").count() == 50
    page.select_option("#variant", "damath")
    assert pieces_on(page, "play-board") == 24
    assert page.locator("#play-board .op").count() == 32
    page.click("#tab-watch")
    page.select_option("#w-variant", "damath")
    assert pieces_on(page, "watch-board") == 24


@needs_chromium
def test_each_tab_keeps_its_own_status_line(page):
    page.click("#tab-replay")
    page.fill("#replay-text", '[Variant "damii"]\n1. 31-26 16-21 *')
    page.click("#replay-load")
    page.wait_for_function("() => document.querySelector('#message').textContent"
                           ".startsWith('loaded game 1 of 1')")
    page.click("#tab-watch")
    assert page.inner_text("#message") == ""
    page.click("#tab-play")
    assert page.inner_text("#message") == ""
    page.click("#tab-replay")
    assert page.inner_text("#message").startswith("loaded game 1 of 1: 2 moves")


RING_CLEARANCE = """(board) => {
  const svg = document.getElementById(board);
  const rings = [...svg.querySelectorAll('circle.movable')];
  const clashes = [];
  for (const ring of rings) {
    const sq = ring.dataset.square;
    const cx = +ring.getAttribute('cx'), cy = +ring.getAttribute('cy');
    const outer = +ring.getAttribute('r') + ring.getAttribute('stroke-width') / 2;
    for (const label of svg.querySelectorAll(`text[data-square="${sq}"]`)) {
      const b = label.getBBox();
      const dx = Math.max(b.x - cx, 0, cx - (b.x + b.width));
      const dy = Math.max(b.y - cy, 0, cy - (b.y + b.height));
      if (Math.hypot(dx, dy) <= outer) clashes.push(`${sq} ${label.textContent}`);
      if (ring.compareDocumentPosition(label) !== Node.DOCUMENT_POSITION_FOLLOWING)
        clashes.push(`${sq} ${label.textContent} drawn under the ring`);
    }
  }
  return [rings.length, clashes];
}"""


@needs_chromium
@pytest.mark.parametrize("variant", ["damii", "damath"])
def test_the_can_move_rings_leave_numbers_and_operations_readable(page, variant):
    new_game(page, variant)
    page.wait_for_function("() => document.querySelectorAll('#play-board circle.movable')"
                           ".length > 0")
    rings, clashes = page.evaluate(RING_CLEARANCE, "play-board")
    labels = page.locator("#play-board text.op").count()
    assert rings >= 4 and clashes == []
    assert labels == (32 if variant == "damath" else 0)


@needs_chromium
def test_damath_scores_are_a_readable_table(page):
    new_game(page, "damath")
    rows = page.eval_on_selector_all("#scores tr", "(rows) => rows.map((r) => "
                                     "[...r.children].map((c) => c.textContent))")
    assert rows[0] == ["", "White", "Black"]
    assert rows[1] == ["Score", "0", "0"]
    assert rows[2][0] == "With the chips left" and len(rows[2]) == 3
    assert "chips left on the board" in page.inner_text("#scores caption")


@needs_chromium
def test_no_request_fails_on_load_and_the_icon_is_there(browser, server):
    context = browser.new_context()
    page = context.new_page()
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400
            else None)
    page.on("console", lambda m: failed.append(m.text) if m.type == "error" else None)
    page.goto(server)
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_timeout(500)
    assert failed == []
    icon = page.evaluate("() => document.querySelector('link[rel=icon]').href")
    assert page.request.get(icon).status == 200
    context.close()


@needs_chromium
def test_a_stopped_server_shows_at_once_and_a_restart_clears_it(browser):
    port = free_port()
    context = browser.new_context()
    page = context.new_page()
    page.clock.install()  # the page's timers, which the test stops below
    with serving(create_app(workers=0, agent_delay=0.0), port) as base:
        page.goto(base)
        page.wait_for_selector("body[data-ready='1']")
        new_game(page, "damii")
        page.wait_for_function("() => gameWS !== null && gameWS.readyState === 1")
        assert page.locator("#offline").is_hidden()
        # from here no timer of the page fires: neither its poll of /api/ping nor a retry
        page.clock.pause_at(page.evaluate("() => Date.now()") + 1000)
    # at once: the game's websocket closing is what shows it (no click, no poll); the
    # timeout only stops a hang
    page.wait_for_selector("#offline", state="visible", timeout=HANG_GUARD_MS)
    assert "cannot be reached" in page.inner_text("#offline")
    page.clock.resume()  # the page asks again every few seconds and reconnects
    with serving(create_app(workers=0, agent_delay=0.0), port):
        page.wait_for_selector("#offline", state="hidden", timeout=HANG_GUARD_MS)
    context.close()


@needs_chromium
def test_the_lobby_shows_its_players_and_names_the_clock(browser, server):
    ana_ctx, ben_ctx = browser.new_context(), browser.new_context()
    ana, ben = ana_ctx.new_page(), ben_ctx.new_page()
    for p, name in ((ana, "ana"), (ben, "ben")):
        p.goto(server)
        p.wait_for_selector("body[data-ready='1']")
        p.fill("#name", name)
    ana.click("#open-game")
    ana.wait_for_function("() => game !== null && game.open")
    assert ana.input_value("#white") == "ana" and ana.is_disabled("#white")
    assert ana.input_value("#black") == "waiting for a player" and ana.is_disabled("#black")
    gid = ana.evaluate("() => game.id")
    ben.click("#lobby-refresh")
    entry = ben.locator("#lobby li", has=ben.locator(f"#lobby-join-{gid}"))
    assert "(damii, no clock, casual)" in entry.inner_text()
    ben.click(f"#lobby-join-{gid}")
    ana.wait_for_function("() => !game.open")
    ana.wait_for_function("() => document.querySelector('#black').value === 'ben'")
    assert ben.input_value("#white") == "ana" and ben.input_value("#black") == "ben"
    ana.click("#start")  # a new game against an agent: the specs typed before come back
    ana.wait_for_function("() => game !== null && !game.lobby")
    assert ana.input_value("#white") == "human" and ana.input_value("#black") == "random"
    assert not ana.is_disabled("#white")
    ana_ctx.close()
    ben_ctx.close()


@needs_chromium
def test_the_ladder_has_a_page_linked_from_the_main_page(page, server):
    new_game(page, "damii", casual=False)
    page.click("#resign")
    page.wait_for_function("() => game.over")
    with page.context.expect_page() as opened:
        page.click("#tab-ladder")
    ladder = opened.value
    ladder.wait_for_selector("body[data-ready='1']")
    assert ladder.url.rstrip("/") == f"{server}/ladder"
    rows = ladder.eval_on_selector_all("#ladder tbody tr", "(rows) => rows.map((r) => "
                                       "[...r.children].map((c) => c.textContent))")
    names = [row[1] for row in rows]
    assert "random" in names and len(rows) >= 2
    history = ladder.inner_text("#history tbody")
    assert "resignation" in history and "0-1" in history
    assert ladder.locator("#history a[download]").count() >= 1
