"""The Analyse tab in a real headless browser (the OS's Chromium driven by Playwright): a
review of a pasted PDN (the marked move, its better line on the board) and the fair-play
refusal of a rated game while it runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from damii_app.serve import create_app  # noqa: E402
from damii_env import Game  # noqa: E402
from damii_env.pdn import record  # noqa: E402
from tests.app.test_analyse import HANGING  # noqa: E402
from tests.app.test_serve_api import served  # noqa: E402

CHROMIUM = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser",
                             shutil.which("chromium") or "") if p and Path(p).exists()), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")


@pytest.fixture(scope="module")
def page():
    with served(create_app(workers=0, agent_delay=0.0)) as (base, _thread), \
            sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(base)
        page.wait_for_selector("body[data-ready='1']")
        yield page
        browser.close()


def test_a_pasted_game_is_reviewed_and_its_better_line_shown(page):
    game = Game.from_fen(HANGING, "international")
    for move in ("32-28", "22x33x44", "48-43"):
        game.push(move)
    page.click("#tab-analysis")
    page.fill("#an-pdn", record(game).to_text())
    page.select_option("#an-seconds", "0.1")
    page.click("#an-start")
    page.wait_for_selector("#an-moves span.mistake, #an-moves span.blunder", timeout=120_000)
    assert page.inner_text("#an-moves span[data-ply='0']").startswith("32-28?")
    assert "better line: " in page.inner_text("#an-line")  # the first marked move is shown
    assert page.locator("#an-graph .an-dot").count() >= 1
    page.click("#an-line-next")
    assert page.inner_text("#an-line-ply").startswith("line: 1 /")
    assert "average loss" in page.inner_text("#an-summary")


def test_a_rated_game_is_refused_while_it_runs(page):
    page.evaluate("""async () => {
        setGame(await api("POST", "/api/games", {variant: "damii", white: "human",
                                                black: "human", casual: false}));
    }""")
    page.click("#tab-analysis")
    page.click("#an-current")
    page.wait_for_function("() => /fair play/.test(document.getElementById('message')"
                           ".textContent)")
    text = page.inner_text("#message")
    assert "a rated game and still being played" in text
    page.evaluate("() => say('', 'info', 'analysis')")
    page.click("#an-hint")
    page.wait_for_function("() => /fair play/.test(document.getElementById('message')"
                           ".textContent)")
