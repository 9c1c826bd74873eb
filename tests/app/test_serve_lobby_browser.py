"""Two people at two browsers (two Chromium contexts, each its own session cookie)
play a lobby game of `damii serve` by clicking: one drops (its page closed) and comes
back within the grace and the game goes on to its end; in a second game the one who
drops does not come back and loses by disconnection. Short heartbeat timeout and grace,
set for the test."""

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
GRACE, TIMEOUT = 4.0, 1.0


@pytest.fixture(scope="module")
def server():
    app = create_app(workers=0, agent_delay=0.0, grace=GRACE, heartbeat_timeout=TIMEOUT)
    with served(app) as (base, _thread):
        yield base


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


def open_page(context, base: str, name: str):
    page = context.new_page()
    page.goto(base)
    page.wait_for_selector("body[data-ready='1']")
    page.fill("#name", name)
    return page


def start_lobby_game(browser, server):
    """Ana opens a game in one context, Ben joins it from another: (contexts, pages, id)."""
    ana_ctx, ben_ctx = browser.new_context(), browser.new_context()
    ana, ben = open_page(ana_ctx, server, "ana"), open_page(ben_ctx, server, "ben")
    ana.click("#open-game")
    ana.wait_for_function("() => game !== null && game.open")
    gid = ana.evaluate("() => game.id")
    ben.click("#lobby-refresh")
    ben.click(f"#lobby-join-{gid}")
    for page in (ana, ben):
        page.wait_for_function("() => game !== null && !game.open")
    return (ana_ctx, ben_ctx), [ana, ben], gid


def click_moves(pages, plies: int) -> None:
    """The side to move clicks its first legal move, `plies` times (or to the end)."""
    for _ in range(plies):
        state = pages[0].evaluate("() => game")
        if state["over"]:
            return
        mover = pages[state["position"]["turn"]]
        mover.wait_for_function("() => game.position.legal.length > 0")
        move = mover.evaluate("() => game.position.legal[0]")
        for square in move["path"]:
            mover.click(f"#play-board-sq-{square}")
        for page in pages:
            page.wait_for_function(f"() => game.version > {state['version']}")


def test_a_lobby_game_with_a_drop_and_a_return_within_the_grace(browser, server):
    contexts, (ana, ben), gid = start_lobby_game(browser, server)
    assert "ben" in ana.inner_text("#seats") and "(you)" in ben.inner_text("#seats")
    # only the seat's own page moves: Ben's page offers no move on White's turn
    assert ben.evaluate("() => humanToMove()") is False
    click_moves([ana, ben], 4)
    ben.close()  # Ben's browser goes away
    ana.wait_for_function("() => game.connections && !game.connections[1].connected",
                          timeout=HANG_GUARD_MS)
    assert "lost the connection" in ana.inner_text("#connections")
    assert "to come back" in ana.inner_text("#connections")
    ben = open_page(contexts[1], server, "ben")  # back with the same session
    ben.click("#lobby-refresh")
    ben.click(f"#lobby-resume-{gid}")
    ana.wait_for_function("() => game.connections[1].connected", timeout=HANG_GUARD_MS)
    assert not ana.evaluate("() => game.over")
    click_moves([ana, ben], 4)
    ben.click("#resign")  # and to the end
    for page in (ana, ben):
        page.wait_for_function("() => game.over")
        assert page.inner_text("#status") == "Game over: 1-0 (resignation)"
    for context in contexts:
        context.close()


def test_a_player_who_does_not_come_back_loses_by_disconnection(browser, server):
    contexts, (ana, ben), _gid = start_lobby_game(browser, server)
    click_moves([ana, ben], 2)
    ben.close()
    ana.wait_for_function("() => game.over", timeout=HANG_GUARD_MS)  # after GRACE + TIMEOUT
    assert ana.inner_text("#status") == "Game over: 1-0 (disconnection)"
    for context in contexts:
        context.close()
