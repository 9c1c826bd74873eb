"""`damii serve` in a real headless browser (the OS's Chromium driven by Playwright):
play a whole game against `random` by clicking, check the PDN the page shows against the
server's record, and replay a PDN file step by step and automatically."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from damii_app.serve import create_app  # noqa: E402
from damii_env.pdn import loads  # noqa: E402
from tests.app.test_serve_api import served  # noqa: E402

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                             shutil.which("chromium") or "") if p and Path(p).exists()), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")


@pytest.fixture(scope="module")
def server():
    with served(create_app(workers=0, agent_delay=0.0)) as (base, _thread):
        yield base


@pytest.fixture(scope="module")
def page(server):
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(server)
        page.wait_for_selector("body[data-ready='1']")
        yield page
        browser.close()


def test_play_a_whole_game_against_random_by_clicking(page):
    page.select_option("#variant", "damii")
    page.fill("#white", "human")
    page.fill("#black", "random")
    page.click("#start")
    page.wait_for_function("() => game !== null && game.seats[1].label === 'random'")
    clicks = 0
    for _ in range(300):
        page.wait_for_function("() => game.over || (game.position.legal.length > 0)")
        state = page.evaluate("() => game")
        if state["over"]:
            break
        move = state["position"]["legal"][-1]
        version = state["version"]
        for square in move["path"]:
            page.click(f"#play-board-sq-{square}")
            clicks += 1
        page.wait_for_function(f"() => game.version > {version}")
    state = page.evaluate("() => game")
    assert state["over"] and clicks >= len(state["moves"])  # two or more clicks a move
    assert page.inner_text("#status").startswith("Game over")
    shown = page.inner_text("#pdn")
    record = page.evaluate(f"async () => (await fetch('/api/games/{state['id']}/pdn')).text()")
    assert shown.strip() == record.strip()
    (game,) = loads(record)
    assert game.moves == state["moves"] and game.result == state["result"] != "*"
    assert game.replay().fen() == state["position"]["fen"]


def ply_shown(page, text: str) -> None:
    page.wait_for_function(
        f"() => document.querySelector('#rp-ply').textContent.startsWith('{text}')")


def test_replay_a_pdn_file_step_by_step_and_automatically(page, tmp_path):
    record = page.evaluate("async () => (await fetch(`/api/games/${game.id}/pdn`)).text()")
    path = tmp_path / "games.pdn"
    path.write_text(record + "\n" + record.replace('[Round "1"]', '[Round "2"]'))
    n = len(loads(record)[0].moves)
    page.click("#tab-replay")
    page.set_input_files("#replay-file", str(path))
    ply_shown(page, "ply 0")
    assert page.locator("#replay-game option").count() == 2
    for _ in range(3):
        page.click("#rp-next")
    assert page.inner_text("#rp-ply").startswith(f"ply 3 / {n}")
    page.click("#rp-prev")
    assert page.inner_text("#rp-ply").startswith(f"ply 2 / {n}")
    page.click("#rp-last")
    assert page.inner_text("#rp-ply").startswith(f"ply {n} / {n}")
    page.select_option("#rp-speed", "250")
    page.click("#rp-first")
    page.click("#rp-play")
    ply_shown(page, "ply 2 ")
    page.click("#rp-play")  # pause
    # a bad PDN shows a message in the page
    page.fill("#replay-text", '[Variant "damii"]\n1. 99-98 *')
    page.click("#replay-load")
    page.wait_for_function("() => document.querySelector('#message').className === 'error'")
    assert "cannot be played" in page.inner_text("#message")
