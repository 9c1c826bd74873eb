"""Headless Chromium through the page of `damii serve`: a Sci-Damath classroom match where
White lets the minute pass four times (shortened to 2 s for the test: the clock spec
``sci-damath:move=2``; the rulebook's is 60 s) and is disqualified while ahead on the
score sheet, with each warning shown and each forced move marked; touch move (the chip
selected must move, in the page and on the server); and a claimed threefold repetition
between two people at one screen."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from damii_app.serve import create_app  # noqa: E402
from tests.app.test_serve_api import served  # noqa: E402

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                             shutil.which("chromium") or "") if p and Path(p).exists()), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")
HANG_GUARD_MS = 120_000
"""A wait's limit that only stops a hang: the tests wait for the page's events."""
# White's chips -11 on 29 and 2 on 32, Black's 2 on 1 and -11 on 4; White 20 points up:
# totals White 20 - 11 + 2 = 11, Black 0 + 2 - 11 = -9, and no capture for three moves
AHEAD = "W:W29=-11,32=2:B1=2,4=-11:S20,0"


@pytest.fixture(scope="module")
def page():
    # the server's ticker looks at the clocks every heartbeat_timeout / 3 = 0.2 s
    with served(create_app(workers=0, agent_delay=0.0, heartbeat_timeout=0.6)) as (base, _):
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(base)
            page.wait_for_selector("body[data-ready='1']")
            yield page
            browser.close()


def start(page, variant: str, clock: str, fen: str) -> None:
    page.select_option("#variant", variant)
    page.fill("#white", "human")
    page.fill("#black", "human")
    page.select_option("#clock", clock)
    page.fill("#fen", fen)
    page.click("#start")
    page.wait_for_function("() => game !== null && game.seats[1].label === 'human'"
                           " && game.moves.length === 0")


def click_move(page, *squares: int) -> None:
    version = page.evaluate("() => game.version")
    for square in squares:
        page.click(f"#play-board-sq-{square}")
    page.wait_for_function(f"() => game.version > {version}")


def test_four_violations_disqualify_white_while_ahead(page):
    assert "sci-damath" in page.evaluate("() => meta.clocks")
    page.evaluate("""() => { const o = document.createElement('option');
        o.value = o.textContent = 'sci-damath:move=2'; $('clock').appendChild(o); }""")
    start(page, "damath", "sci-damath:move=2", AHEAD)
    assert "Sci-Damath match" in page.inner_text("#match-view")
    for n, black in enumerate([(4, 8), (8, 12), (12, 16)], start=1):
        # White does nothing: after 2 s the warning, and the arbiter's move
        page.wait_for_function(f"() => game.match.violations[0] === {n}", timeout=HANG_GUARD_MS)
        assert page.evaluate("() => game.position.turn") == 1
        assert page.get_attribute("#message", "class") == "error"
        assert f"warning {n} for human (white)" in page.inner_text("#message")
        page.wait_for_function(f"() => document.querySelector('#match-view').textContent"
                               f".includes('warnings White {n}, Black 0')")
        click_move(page, *black)  # Black moves at once
    page.wait_for_function("() => game.over", timeout=HANG_GUARD_MS)
    state = page.evaluate("() => game")
    assert (state["result"], state["termination"]) == \
        ("0-1", "disqualification (4th time violation)")
    assert state["match"]["violations"] == [4, 0] and state["position"]["totals"] == ["11", "-9"]
    assert "disqualified" in page.inner_text("#message")
    assert page.inner_text("#status").startswith("Game over: 0-1 (disqualification")
    # the score sheet: six moves, White's three forced, the totals White ahead
    assert page.locator("#sheet tr.forced").count() == 3
    rows = page.locator("#sheet tr")
    assert rows.count() == 1 + 6 + 1
    assert "(forced)" in rows.nth(1).inner_text() and "29-25" in rows.nth(1).inner_text()
    assert rows.nth(7).inner_text().split("\t")[-2:] == ["11", "−9"]
    assert '[Violations "White 4, Black 0"]' in page.inner_text("#pdn")
    sheet = page.evaluate("async () => (await fetch(`/api/games/${game.id}/sheet`)).text()")
    assert "violations of the minute,,,,,,,,,4,0," in sheet


def test_a_threefold_repetition_claimed_in_the_page(page):
    start(page, "damii", "none", "W:WK46:BK5")
    for _ in range(2):
        for path in [(46, 41), (5, 10), (41, 46), (10, 5)]:
            assert page.is_hidden("#claim-draw")
            click_move(page, *path)
    assert page.evaluate("() => [game.claim, game.repetitions, game.over]") == [True, 3, False]
    page.click("#claim-draw")
    page.wait_for_function("() => game.over")
    assert page.inner_text("#status") == "Game over: 1/2-1/2 (threefold repetition claimed)"
    assert "claims the draw" in page.inner_text("#message")


def test_touch_move_holds_the_chip_selected(page):
    page.evaluate("""() => { const o = document.createElement('option');
        o.value = o.textContent = 'sci-damath:move=30,touch'; $('clock').appendChild(o); }""")
    start(page, "damath", "sci-damath:move=30,touch", AHEAD)
    page.click("#play-board-sq-29")  # touched: the page tells the server
    page.wait_for_function("() => game.match.touched === 29")
    page.click("#play-board-sq-32")  # another chip: refused in the page
    assert "the chip on 29 was touched and must move" in page.inner_text("#message")
    refused = page.evaluate("""async () => (await fetch(`/api/games/${game.id}/move`, {
        method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({move: '32-28'})})).json()""")
    assert "the chip on 29 was touched and must move" in refused["error"]  # and the server
    click_move(page, 25)  # the touched chip, still selected, moves on
    assert page.evaluate("() => [game.moves, game.match.touched]") == [["29-25"], None]
