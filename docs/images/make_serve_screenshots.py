"""Screenshots of ``damii serve`` for the README and docs/SERVE.md, taken by headless
Chromium: ``python docs/images/make_serve_screenshots.py`` (needs the serve and train
extras, playwright and the OS's chromium; about a minute). Each is the page as a user
sees it, its tabs at the top:

- ``serve_damii.png``, ``serve_damath.png``: the Play tab, a game against ``random``
  after a few moves, a piece selected and its moves shown;
- ``serve_analyse.png``: the Analyse tab after a review of an International game
  (``alphabeta:depth=3`` against ``greedy``): the summary a side, the evaluation graph,
  the marked moves and the board at the first blunder with the better line;
- ``serve_clubs.png``: Clubs and tournaments, the organizer's page of a club's round
  robin (two pupils and two agents) played to its standings.

Saved as 256-colour PNGs (a few tens of KB each)."""

from __future__ import annotations

import random
import socket
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from PIL import Image
from playwright.sync_api import Page, sync_playwright

from damii_app.serve import create_app
from damii_app.serve.session import SessionLimits
from damii_env import Game, make_player
from damii_env.pdn import record

OUT = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1180, "height": 790}
OPEN = SessionLimits(address_burst=1e9, address_rate=1e9, total_burst=1e9, total_rate=1e9)
"""The script's browsers all come from 127.0.0.1: no rationing of new sessions."""


def save(page: Page, name: str, **options) -> None:
    """A screenshot of `page` as a 256-colour PNG in docs/images/."""
    path = OUT / name
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(path), **options)
    with Image.open(path) as shot:
        small = shot.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)
    print("wrote", path, f"({path.stat().st_size // 1024} KB)")


def play_tab(page: Page, variant: str, rng: random.Random, plies: int = 12) -> None:
    """A game against random on the Play tab, `plies` moves in, a piece selected."""
    page.click("#tab-play")
    page.select_option("#variant", variant)
    page.fill("#white", "human")
    page.fill("#black", "random")
    page.click("#start")
    page.wait_for_function(f"() => game && game.layout.variant === '{variant}'")
    for _ in range(plies):
        page.wait_for_function("() => game.over || game.position.legal.length > 0")
        state = page.evaluate("() => game")
        if state["over"]:
            break
        legal = state["position"]["legal"]
        captures = [m for m in legal if m["captured"]]
        move = rng.choice(captures or legal)
        for square in move["path"]:
            page.click(f"#play-board-sq-{square}")
        page.wait_for_function(f"() => game.version > {state['version']}")
    page.wait_for_function("() => game.over || game.position.legal.length > 0")
    legal = page.evaluate("() => game.position.legal")
    if legal:
        page.click(f"#play-board-sq-{legal[0]['path'][0]}")
    save(page, f"serve_{variant}.png")


def reviewed_game() -> str:
    """The PDN of an International game, alphabeta:depth=3 against greedy (at most 80
    plies): a game with a few blunders to mark."""
    game = Game("international")
    players = (make_player("alphabeta:depth=3", "international", seed=1),
               make_player("greedy", "international", seed=2))
    while not game.is_over() and len(game.move_stack) < 80:
        game.push(players[len(game.move_stack) % 2].choose(game))
    return record(game, white="alphabeta:depth=3", black="greedy",
                  event="damii serve screenshot").to_text()


def analyse_tab(page: Page) -> None:
    page.click("#tab-analysis")
    page.fill("#an-pdn", reviewed_game())
    page.select_option("#an-seconds", "0.1")
    page.click("#an-start")
    page.wait_for_selector("#an-graph .an-dot", timeout=600_000)
    page.wait_for_function("() => /average loss/.test($('an-summary').textContent)")
    marked = page.locator("#an-moves span.blunder, #an-moves span.mistake").first
    marked.click()
    page.wait_for_function("() => /better line/.test($('an-line').textContent)")
    save(page, "serve_analyse.png")


def ok(response) -> dict:
    """The JSON of a 200 answer (httpx's or Playwright's)."""
    status = getattr(response, "status_code", None) or getattr(response, "status", None)
    assert status == 200, response.text() if callable(response.text) else response.text
    return response.json()


def clubs_page(page: Page, base: str) -> None:
    """A club (the page's browser organizes it), two pupils and two agents in a round
    robin of three rounds, every board decided, then the organizer's page."""
    teacher = page.request
    club = ok(teacher.post(f"{base}/api/clubs", data={"name": "Class 5B"}))
    pupils = {name: httpx.Client(base_url=base, timeout=60) for name in ("ana", "ben")}
    for name, http in pupils.items():
        ok(http.post("/api/clubs/join", json={"code": club["code"], "name": name}))
    t = ok(teacher.post(f"{base}/api/tournaments", data={
        "name": "Spring cup", "system": "round-robin", "club": club["id"],
        "max_players": 4}))
    tid = t["id"]
    for http in pupils.values():
        ok(http.post(f"/api/tournaments/{tid}/join", json={}))
    for spec in ("greedy", "alphabeta:depth=2"):
        ok(teacher.post(f"{base}/api/tournaments/{tid}/agents", data={"spec": spec}))
    for rnd in (1, 2, 3):
        ok(teacher.post(f"{base}/api/tournaments/{tid}/rounds"))
        view = ok(teacher.get(f"{base}/api/tournaments/{tid}"))
        for board in (b for b in view["boards"] if b["round"] == rnd):
            white, black = pupils.get(board["white"]), pupils.get(board["black"])
            game = f"/api/games/{board['game']}"
            if white and black:  # the two pupils agree a draw
                ok(white.post(f"{game}/draw", json={"action": "offer"}))
                ok(black.post(f"{game}/draw", json={"action": "accept"}))
            elif white or black:  # a pupil against an agent resigns
                ok((white or black).post(f"{game}/resign", json={}))
        while any(b["result"] is None for b in
                  ok(teacher.get(f"{base}/api/tournaments/{tid}"))["boards"]):
            time.sleep(0.2)  # the agents' game plays itself
    page.goto(f"{base}/clubs?club={club['id']}&tournament={tid}")
    page.wait_for_function("() => document.querySelectorAll('#t-standings tbody tr')"
                           ".length === 4")
    save(page, "serve_clubs.png", full_page=True)


def main() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(workers=0, agent_delay=0.0, db=Path(tmp) / "serve.sqlite3",
                         session_limits=OPEN)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                               log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        rng = random.Random(7)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(base)
            page.wait_for_selector("body[data-ready='1']")
            for variant in ("damii", "damath"):
                play_tab(page, variant, rng)
            page.set_viewport_size({**VIEWPORT, "height": 1000})
            analyse_tab(page)
            clubs_page(page, base)
            browser.close()
        server.should_exit = True


if __name__ == "__main__":
    main()
