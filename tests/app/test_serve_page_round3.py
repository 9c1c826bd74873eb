"""The page items of issue 60 (the new user's run, N6-N10), each on its reproducer: the
Sci-Damath coin toss shown to both pupils (N6; also through the API), the tournament
list and message brought up to date after the last round (N7), the Watch tab's Points
line clear of the Export button (N8), a rated lobby or tournament game shown as rated
(N9), and two people at one screen named White and Black, not "you — you" (N10).
Chromium checks are skipped without it (they use test_page.py's fixtures db_path, page
and server)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from damii_app.serve import create_app  # noqa: E402
from damii_app.serve.session import SessionLimits  # noqa: E402
from tests.app.test_page import CHROMIUM, db_path, needs_chromium, page, server  # noqa: E402,F401

OPEN = SessionLimits(address_burst=1e9, address_rate=1e9, total_burst=1e9, total_rate=1e9)


def test_n6_the_coin_toss_is_said_when_the_match_is_opened_and_joined():
    app = create_app(workers=0, agent_delay=0.0, session_limits=OPEN)
    with TestClient(app) as ana, TestClient(app) as ben:
        opened = ana.post("/api/lobby", json={"name": "ana", "variant": "damath",
                                              "clock": "sci-damath", "casual": False}).json()
        assert opened["message"].startswith("coin toss: ")
        joined = ben.post(f"/api/lobby/{opened['id']}/join", json={"name": "ben"}).json()
        # before: "ben joins as black; white to move", and the toss was never shown again
        assert joined["message"].startswith("ben joins as black; coin toss: ")
        assert ("white (ana) moves first" in joined["message"]
                or "black (ben) moves first" in joined["message"]), joined["message"]


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


def opened(browser, base: str, name: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.goto(base)
    tab.wait_for_selector("body[data-ready='1']")
    tab.fill("#name", name)
    return context, tab


@needs_chromium
def test_n6_n9_a_rated_classroom_match_shows_the_toss_and_is_not_ticked_casual(
        browser, server):  # noqa: F811 - the fixture
    ana_ctx, ana = opened(browser, server, "ana")
    ben_ctx, ben = opened(browser, server, "ben")
    ana.select_option("#variant", "damath")
    ana.select_option("#clock", "sci-damath")
    ana.set_checked("#casual", False)
    ana.click("#open-game")
    ana.wait_for_function("() => game !== null && game.open")
    assert "coin toss" in ana.inner_text("#message")  # before: overwritten at once
    gid = ana.evaluate("() => game.id")
    ben.set_checked("#casual", True)  # ben's form says casual; the game is rated
    ben.click("#lobby-refresh")
    ben.click(f"#lobby-join-{gid}")
    ben.wait_for_function("() => game !== null && !game.open")
    ben.wait_for_function("() => document.querySelector('#message').textContent"
                          ".includes('coin toss')")
    assert not ben.is_checked("#casual") and ben.is_disabled("#casual")
    assert "rated" in ben.inner_text("#seats")
    ana_ctx.close()
    ben_ctx.close()


@needs_chromium
def test_n10_two_people_at_one_screen_are_white_and_black(page):  # noqa: F811
    page.fill("#white", "human")
    page.fill("#black", "human")
    page.click("#start")
    page.wait_for_function("() => game !== null && game.seats.every((s) => s.human)")
    seats = page.inner_text("#seats")
    assert "you — " not in seats and "two players at this screen" in seats, seats


@needs_chromium
def test_n8_the_points_line_is_clear_of_the_export_button(page):  # noqa: F811
    page.click("#tab-watch")
    page.fill("#w-specs", "random, greedy")
    page.fill("#w-games", "2")
    page.fill("#w-delay", "0")
    page.click("#w-start")
    page.wait_for_function("() => arena && !arena.running")
    points, button = (page.locator(x).bounding_box() for x in ("#w-points", "#w-download"))
    assert "Points:" in page.inner_text("#w-points")
    assert button["y"] >= points["y"] + points["height"] - 0.5, (points, button)


@needs_chromium
def test_n7_the_list_and_message_follow_the_last_round(browser, server):  # noqa: F811 - fixture
    context = browser.new_context()
    org = context.new_page()
    org.goto(f"{server}/clubs")
    org.wait_for_selector("body[data-ready='1']")
    org.fill("#t-name", "Last round")
    org.click("#create-tournament")
    org.wait_for_function("() => shown && shown.name === 'Last round'")
    for spec in ("random", "greedy"):
        org.fill("#t-agent", spec)
        org.click("#t-add-agent")
        org.wait_for_function(f"() => shown.entrants.some((e) => e.name === '{spec}')")
    org.click("#t-start-round")  # a round robin of two: one round, played by the agents
    org.wait_for_function("() => shown.status === 'finished'", timeout=120_000)
    org.wait_for_function("() => document.querySelector('#tournaments').textContent"
                          ".includes('Last round') && !document.querySelector('#tournaments')"
                          ".textContent.match(/Last round[^\\n]*running/)")
    assert "has finished" in org.inner_text("#message")
    assert org.input_value("#t-name") == ""
    context.close()
