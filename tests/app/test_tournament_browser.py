"""Clubs and tournaments of `damii serve` in Chromium, through the pages only: a teacher
makes a club and four pupils (four browser contexts, each its own session) join it with
its code, play a round robin to its standings (one pupil drops and comes back within the
reconnection grace), and a Swiss of five with two agents and a bye. Short games
(resignations, a draw agreed) keep it quick; a short heartbeat timeout and grace are
set for the test."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from damii_app.serve import create_app  # noqa: E402
from tests.app.test_serve_api import served  # noqa: E402
from tests.app.test_serve_lobby_browser import CHROMIUM, click_moves  # noqa: E402

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")
HANG_GUARD_MS = 120_000
"""A wait's limit that only stops a hang: the tests wait for the page's events."""
GRACE, TIMEOUT = 6.0, 1.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("clubs") / "serve.sqlite3"
    app = create_app(workers=0, agent_delay=0.0, grace=GRACE, heartbeat_timeout=TIMEOUT, db=db)
    with served(app) as (base, _thread):
        yield base


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


def clubs_page(context, base: str, query: str = ""):
    page = context.new_page()
    page.goto(f"{base}/clubs{query}")
    page.wait_for_selector("body[data-ready='1']")
    return page


def open_board(context, base: str, query: str, gid: str):
    """The player's game from the tournament's page: its "Play your game" link."""
    page = clubs_page(context, base, query)
    page.click(f"#t-game-{gid}")
    page.wait_for_function(f"() => typeof game !== 'undefined' && game !== null "
                           f"&& game.id === '{gid}' && mySides !== null")
    return page


def boards(page, rnd: int) -> list[dict]:
    page.wait_for_function(f"() => shown && shown.round === {rnd}")
    return [b for b in page.evaluate("() => shown.boards") if b["round"] == rnd]


def resign(loser, winner) -> None:
    loser.click("#resign")
    for page in (loser, winner):
        page.wait_for_function("() => game.over")


def standings(page) -> list[list[str]]:
    return [[td.inner_text() for td in tr.query_selector_all("td")][:4]
            for tr in page.query_selector_all("#t-standings tbody tr")]


def make_tournament(org, name: str, system: str, rounds: int | None = None) -> str:
    org.fill("#t-name", name)
    org.select_option("#t-system", system)
    if rounds is not None:
        org.fill("#t-rounds", str(rounds))
    org.click("#create-tournament")
    org.wait_for_function(f"() => shown && shown.name === '{name}'")
    return org.evaluate("() => shown.id")


def enter(context, base: str, query: str, name: str):
    page = clubs_page(context, base, query)
    page.fill("#c-name", name)
    page.click("#t-join")
    page.wait_for_function(f"() => shown && shown.you === '{name}'")
    page.close()


def test_four_pupils_of_a_club_play_a_round_robin_to_its_standings(browser, server):
    names = ["ana", "ben", "cat", "dan"]
    contexts = {n: browser.new_context() for n in ["teacher", *names]}
    teacher = clubs_page(contexts["teacher"], server)
    teacher.fill("#club-name", "Class 5B")
    teacher.click("#create-club")
    teacher.wait_for_function("() => document.querySelector('#club-info').textContent"
                              ".includes('code')")
    code = re.search(r"pupils: (\w+)", teacher.inner_text("#club-info")).group(1)
    cid = teacher.evaluate("() => clubId")
    for name in names:  # each pupil types the name and the code the teacher gives out
        page = clubs_page(contexts[name], server)
        page.fill("#c-name", name)
        page.fill("#club-code", code)
        page.click("#join-club")
        page.wait_for_function("() => document.querySelector('#club-info').textContent"
                               ".includes('You are a member')")
        page.close()
    assert teacher.evaluate("() => shown") is None
    tid = make_tournament(teacher, "Spring cup", "round-robin")
    query = f"?club={cid}&tournament={tid}"
    for name in names:
        enter(contexts[name], server, query, name)
    # each round: the teacher starts it, the pupils open their boards from the page;
    # results planned: every Black resigns but round 2 board 1, a draw agreed
    for rnd in (1, 2, 3):
        teacher.click("#t-start-round")
        for b in boards(teacher, rnd):
            white = open_board(contexts[b["white"]], server, query, b["game"])
            black = open_board(contexts[b["black"]], server, query, b["game"])
            if rnd == 1 and b["board"] == 2:  # cat-ben: a move each, and ben drops
                click_moves([white, black], 2)
                black.close()
                white.wait_for_function("() => game.connections && "
                                        "!game.connections[1].connected", timeout=HANG_GUARD_MS)
                assert "to come back" in white.inner_text("#connections")
                black = open_board(contexts[b["black"]], server, query, b["game"])
                white.wait_for_function("() => game.connections[1].connected",
                                        timeout=HANG_GUARD_MS)
                assert not white.evaluate("() => game.over")
            if rnd == 2 and b["board"] == 1:
                white.click("#offer-draw")
                black.wait_for_selector("#accept-draw:not([hidden])")
                black.click("#accept-draw")
                white.wait_for_function("() => game.over")
                assert white.inner_text("#status").startswith("Game over: 1/2-1/2")
            else:
                resign(black, white)
                assert white.inner_text("#status") == "Game over: 1-0 (resignation)"
            white.close()
            black.close()
    teacher.wait_for_function("() => shown.status === 'finished'", timeout=HANG_GUARD_MS)
    # by hand: R1 ana-dan 1-0, cat-ben 1-0; R2 cat-ana draw, ben-dan 1-0; R3 ana-ben
    # 1-0, dan-cat 1-0. Points: ana 1 + 1/2 + 1 = 2.5, cat 1 + 1/2 + 0 = 1.5, ben 0 + 1 +
    # 0 = 1, dan 0 + 0 + 1 = 1. Sonneborn-Berger: ana dan 1x1 + cat 1.5x0.5 + ben 1x1 =
    # 2.75; cat ben 1x1 + ana 2.5x0.5 = 2.25; dan cat 1.5x1 = 1.5; ben dan 1x1 = 1
    assert standings(teacher) == [["1", "ana", "2.5", "2.75"], ["2", "cat", "1.5", "2.25"],
                                  ["3", "dan", "1", "1.5"], ["4", "ben", "1", "1"]]
    assert teacher.inner_text("#t-tiebreak") == "Sonneborn-Berger"
    ladder = clubs_page(contexts["ana"], server, f"?club={cid}")
    ladder.click("#club-ladder")
    ladder.wait_for_selector("body[data-ready='1']")
    assert "Ladder of Class 5B" in ladder.inner_text("#ladder-title")
    assert len(ladder.query_selector_all("#history tbody tr")) == 6
    for context in contexts.values():
        context.close()


def test_a_swiss_of_five_with_two_agents_and_a_bye(browser, server):
    contexts = {n: browser.new_context() for n in ["ana", "ben", "cat"]}
    ana = clubs_page(contexts["ana"], server)  # ana organizes an open Swiss and plays in it
    tid = make_tournament(ana, "Open Swiss", "swiss", rounds=2)
    query = f"?tournament={tid}"
    for name in ("ana", "ben", "cat"):
        enter(contexts[name], server, query, name)
    for spec in ("random", "greedy"):
        ana.fill("#t-agent", spec)
        ana.click("#t-add-agent")
        ana.wait_for_function(f"() => shown.entrants.some((e) => e.name === '{spec}')")
    ana.click("#t-start-round")
    # round 1 (all on 0; seeds ana ben cat random greedy): the bye to greedy, the lowest;
    # ana-cat and ben-random (top half against bottom half)
    assert [(b["white"], b["black"]) for b in boards(ana, 1)] == [
        ("ana", "cat"), ("ben", "random"), ("greedy", None)]
    assert "bye" in ana.inner_text("#t-boards")
    for b, loser in zip(boards(ana, 1)[:2], ("cat", "ben"), strict=True):
        page = open_board(contexts[loser], server, query, b["game"])
        page.click("#resign")
        page.wait_for_function("() => game.over")
        page.close()
    ana.click("#t-start-round")
    # round 2: ana, random and greedy on 1 point; ben and cat on 0; the bye to cat (the
    # lowest without one); random-ana, greedy-ben (see tests/app/test_tournament_api.py)
    assert [(b["white"], b["black"]) for b in boards(ana, 2)] == [
        ("random", "ana"), ("greedy", "ben"), ("cat", None)]
    for b, loser in zip(boards(ana, 2)[:2], ("ana", "ben"), strict=True):
        page = open_board(contexts[loser], server, query, b["game"])
        page.wait_for_function("() => !game.over && humanToMove()")
        page.click("#resign")
        page.wait_for_function("() => game.over")
        page.close()
    ana.wait_for_function("() => shown.status === 'finished'", timeout=HANG_GUARD_MS)
    # points (a bye scores 1): random 2, greedy 2, ana 1, cat 1, ben 0. Buchholz (the
    # opponents' points; a bye adds nothing): random ben 0 + ana 1 = 1; greedy ben 0;
    # ana cat 1 + random 2 = 3; cat ana 1; ben random 2 + greedy 2 = 4
    assert standings(ana) == [["1", "random", "2", "1"], ["2", "greedy", "2", "0"],
                              ["3", "ana", "1", "3"], ["4", "cat", "1", "1"],
                              ["5", "ben", "0", "4"]]
    assert ana.inner_text("#t-tiebreak") == "Buchholz"
    for context in contexts.values():
        context.close()
