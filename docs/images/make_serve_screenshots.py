"""Screenshots of ``damii serve`` for the README and docs/SERVE.md, taken by headless
Chromium: ``python docs/images/make_serve_screenshots.py`` (needs the serve extra,
playwright and the OS's chromium). One image per variant: a game against ``random``
after a few moves, a piece selected and its moves highlighted."""

from __future__ import annotations

import random
import socket
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

from damii_app.serve import create_app

OUT = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"


def main(plies: int = 12) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(workers=0, agent_delay=0.0),
                                           host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    rng = random.Random(7)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1180, "height": 760})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("body[data-ready='1']")
        for variant in ("damii", "international", "triestine", "damath"):
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
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=str(OUT / f"serve_{variant}.png"))
            print("wrote", OUT / f"serve_{variant}.png")
        browser.close()
    server.should_exit = True


if __name__ == "__main__":
    main()
