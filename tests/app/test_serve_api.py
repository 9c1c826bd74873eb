"""`damii serve` through FastAPI's test client: games in all four variants, hop-by-hop
captures, clocks, draws, resignation, take-backs, sessions, checkpoint paths, replay of a
`damii eval` PDN and watching an arena match."""

from __future__ import annotations

import contextlib
import os
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from damii_agents.match import MatchConfig, reports, run_match  # noqa: E402
from damii_app.cli import build_parser  # noqa: E402
from damii_app.serve import create_app  # noqa: E402
from damii_env.pdn import loads  # noqa: E402

MULTI_CAPTURE = "W:W32,35,39,40,42,43,45,46,47,48,50:B1,2,3,4,5,7,8,11,13,14,15,23,34"
DAMATH_CAPTURE = ("W:W21=-3,23=-1,24=-7,25=0,27=10,30=8,31=-5,32=2:B1=2,3=8,5=-5,6=10,8=0,"
                  "9=4,10=-7,11=-3,16=-11,18=6,K29=-9:S-4,-1061/9")


def new(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    return r.json()


EVENT_WAIT = 1800.0
"""Seconds a test waits for an event (a move, a start) before it calls it hung: a guard
against a hang, not a margin (issue 60: the suite runs on a busy 2-core laptop, where a
cold worker took minutes to start)."""


def wait_for(client, gid, pred, timeout=EVENT_WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.get(f"/api/games/{gid}").json()
        if pred(state):
            return state
        time.sleep(0.02)
    raise AssertionError(f"timed out; last state: {state['message']}")


def play_first(client, state):
    """Play the first legal move of `state`; the new state."""
    r = client.post(f"/api/games/{state['id']}/move",
                    json={"move": state["position"]["legal"][0]["text"]})
    assert r.status_code == 200, r.text
    return r.json()


def error_of(r) -> str:
    assert r.status_code in (400, 404), r.text
    return r.json()["error"]


def test_page_static_files_and_meta(client):
    page = client.get("/")
    assert page.status_code == 200 and 'id="play-board"' in page.text
    assert "drawBoard" in client.get("/static/app.js").text
    meta = client.get("/api/meta").json()
    assert meta["variants"] == ["damii", "international", "triestine", "damath"]
    assert "human" in meta["players"] and "alphabeta:depth=2" in meta["players"]
    assert "ckpt:damii.pt" in meta["checkpoints"]["damii"]
    assert "damii_session" in client.cookies


def test_the_page_offers_the_pretrained_players_named_as_in_the_help(client):
    """The strongest shipped player, the network's policy and its search, for every
    variant; each one starts a game and answers a move."""
    meta = client.get("/api/meta").json()
    for variant in meta["variants"]:
        assert meta["pretrained"][variant] == [
            f"pretrained:{variant}", f"pretrained:{variant},net=policy",
            f"pretrained:{variant},net=search,depth=2"]
    for spec in meta["pretrained"]["international"]:
        state = client.post("/api/games", json={"variant": "international", "white": spec,
                                                "black": "human", "clock": "none"}).json()
        assert "error" not in state, state
        # the first move also loads the network, and with a cold numba cache compiles the
        # search: 118 s for pretrained:international on the idle machine (85 s before the
        # region tables, 2026-12-05), more on a busy one
        deadline = time.monotonic() + EVENT_WAIT
        while time.monotonic() < deadline:
            state = client.get(f"/api/games/{state['id']}").json()
            if state["moves"]:
                break
            time.sleep(0.05)
        assert len(state["moves"]) == 1, spec


@pytest.mark.parametrize("variant,squares,orientation", [
    ("damii", 50, "mirrored"), ("international", 50, "standard"),
    ("triestine", 50, "standard"), ("damath", 32, "mirrored")])
def test_every_variant_has_a_board(client, variant, squares, orientation):
    state = new(client, variant=variant, white="human", black="human")
    layout, pos = state["layout"], state["position"]
    assert len(layout["squares"]) == squares == len(pos["board"])
    assert layout["orientation"] == orientation
    assert state["seats"] == [{"label": "human", "human": True}] * 2
    assert pos["legal"] and all(m["path"][0] in range(1, squares + 1) for m in pos["legal"])
    if variant == "damath":
        assert set(layout["ops"]) == set("+-x/")
        assert pos["scores"] == ["0", "0"] and sum(c is not None for c in pos["chips"]) == 24
    # mirrored boards have a dark square in the top left corner: square 1
    assert layout["squares"][0] == ([0, 0] if orientation == "mirrored" else [0, 1])


def test_a_whole_game_against_random_and_its_pdn(client):
    state = new(client, variant="damii", white="human", black="random", seed=3)
    gid = state["id"]
    for _ in range(400):
        state = wait_for(client, gid, lambda s: s["over"] or s["position"]["legal"])
        if state["over"]:
            break
        play_first(client, state)
    assert state["over"] and state["result"] in ("1-0", "0-1", "1/2-1/2", "*")
    pdn = client.get(f"/api/games/{gid}/pdn").text
    assert pdn == state["pdn"]
    (record,) = loads(pdn)
    assert record.moves == state["moves"] and record.result == state["result"]
    assert record.tags["White"] == "human" and record.tags["Black"] == "random"
    assert record.replay().fen() == state["position"]["fen"]
    assert "game is over" in error_of(client.post(f"/api/games/{gid}/move", json={"move": "1-2"}))


def test_multi_captures_come_hop_by_hop_and_the_engine_enforces_them(client):
    state = new(client, variant="international", white="human", black="human", fen=MULTI_CAPTURE)
    legal = state["position"]["legal"]
    assert [m["text"] for m in legal] == ["40x29x18x9x20"]  # compulsory, most pieces
    assert legal[0]["captured"] == [34, 23, 13, 14]
    gid = state["id"]
    msg = error_of(client.post(f"/api/games/{gid}/move", json={"move": "32-28"}))
    assert "not legal" in msg and "40x29x18x9x20" in msg
    state = client.post(f"/api/games/{gid}/move", json={"move": "40x29x18x9x20"}).json()
    board = state["position"]["board"]
    assert all(board[s - 1] == 0 for s in (34, 23, 13, 14)) and board[20 - 1] == 1
    assert state["position"]["last"] == [40, 29, 18, 9, 20]


def test_bad_input_gets_a_clear_message_and_the_server_goes_on(client):
    cases = [
        ({"variant": "chess"}, "unknown variant 'chess'"),
        ({"black": "minimax"}, "'minimax'"),
        ({"black": "alphabeta:depth=0"}, "depth"),
        ({"fen": "W:W99:B1"}, "99"),
        ({"clock": "forever"}, "'forever'"),
        ({"black": "ckpt:/etc/passwd"}, "checkpoints come only from the weights folder"),
        ({"black": "ckpt:../README.md"}, "refused"),
        ({"black": "ckpt:weights/../pyproject.toml"}, "refused"),
        ({"white": 5}, "white"),
        ({"seed": -1}, "seed"),
    ]
    for body, expected in cases:
        assert expected in error_of(client.post("/api/games", json=body)), body
    assert "invalid request" in error_of(client.post("/api/games", content=b"{not json",
                                                     headers={"Content-Type": "application/json"}))
    gid = new(client, white="human", black="human")["id"]
    assert "cannot read move" in error_of(client.post(f"/api/games/{gid}/move",
                                                      json={"move": "e2-e4"}))
    assert "move" in error_of(client.post(f"/api/games/{gid}/move", json={}))
    assert "no game" in error_of(client.get("/api/games/nope"))
    assert "no move to take back" in error_of(client.post(f"/api/games/{gid}/takeback"))
    # checkpoints inside the folder are fine, with or without the folder's name
    for spec in ("ckpt:damii.pt", "ckpt:weights/damii.pt,depth=1"):
        assert new(client, black=spec)["seats"][1]["label"] == spec
    assert client.get("/api/meta").status_code == 200


def test_sessions_are_isolated(app, client):
    gid = new(client, white="human", black="human")["id"]
    with TestClient(app) as other:
        assert "no game" in error_of(other.get(f"/api/games/{gid}"))
        assert "no game" in error_of(other.post(f"/api/games/{gid}/move", json={"move": "31-26"}))
        assert "no game" in error_of(other.post(f"/api/games/{gid}/resign", json={}))
        url = f"/api/games/{gid}/ws"
        with pytest.raises(WebSocketDisconnect), other.websocket_connect(url) as ws:
            ws.receive_json()
    with client.websocket_connect(f"/api/games/{gid}/ws") as ws:
        assert ws.receive_json()["id"] == gid


def test_takebacks_in_casual_games_only(client):
    state = new(client, variant="damii", white="human", black="random", seed=1)
    gid = state["id"]
    play_first(client, state)
    state = wait_for(client, gid, lambda s: len(s["moves"]) == 2)
    state = client.post(f"/api/games/{gid}/takeback").json()
    assert state["moves"] == [] and state["position"]["turn"] == 0 and state["position"]["legal"]
    rated = new(client, white="human", black="human", casual=False)
    play_first(client, rated)
    assert "casual games only" in error_of(client.post(f"/api/games/{rated['id']}/takeback"))
    # an agent playing White moves again after the take-back
    state = new(client, white="greedy", black="human", seed=2)
    state = wait_for(client, state["id"], lambda s: len(s["moves"]) == 1)
    play_first(client, state)
    state = wait_for(client, state["id"], lambda s: len(s["moves"]) == 3)
    client.post(f"/api/games/{state['id']}/takeback")
    state = wait_for(client, state["id"], lambda s: len(s["moves"]) == 1 and s["position"]["legal"])
    assert state["position"]["turn"] == 1


def test_resignation_and_draws(client):
    gid = new(client, white="human", black="human")["id"]
    state = client.post(f"/api/games/{gid}/draw", json={"action": "offer"}).json()
    assert state["draw_offer"] == "white"
    assert "own draw offer" in error_of(client.post(f"/api/games/{gid}/draw",
                                                    json={"action": "accept", "side": "white"}))
    state = client.post(f"/api/games/{gid}/draw", json={"action": "accept"}).json()
    assert (state["result"], state["termination"]) == ("1/2-1/2", "agreed draw")
    assert '[Termination "agreed draw"]' in state["pdn"]
    gid = new(client, white="human", black="random")["id"]
    state = client.post(f"/api/games/{gid}/draw", json={"action": "offer"}).json()
    assert not state["over"] and "declines" in state["message"]
    assert "played by random" in error_of(client.post(f"/api/games/{gid}/resign",
                                                      json={"side": "black"}))
    state = client.post(f"/api/games/{gid}/resign", json={}).json()
    assert (state["result"], state["termination"]) == ("0-1", "resignation")
    assert "game is over" in error_of(client.post(f"/api/games/{gid}/draw",
                                                  json={"action": "accept"}))


def test_clock_loss_on_time_and_the_damath_capture_exemption(client):
    state = new(client, white="human", black="human", clock="0.3")
    assert state["clock"]["seconds"] == 0.3 and 0 < state["clock"]["remaining"] <= 0.3
    time.sleep(0.45)
    state = client.get(f"/api/games/{state['id']}").json()
    assert (state["result"], state["termination"]) == ("0-1", "time forfeit")
    damath = new(client, variant="damath", white="human", black="human", clock="0.3",
                 fen=DAMATH_CAPTURE)
    time.sleep(0.45)
    state = client.get(f"/api/games/{damath['id']}").json()
    assert not state["over"] and state["clock"]["exempt"]
    move = state["position"]["legal"][0]
    assert move["text"] == "21x14x7" and "score" in move
    state = client.post(f"/api/games/{damath['id']}/move", json={"move": "21x14x7"}).json()
    assert state["position"]["scores"][0] != "-4" and not state["over"]


def test_replay_a_pdn_written_by_damii_eval(client, tmp_path):
    result = run_match(MatchConfig("damath", ("random", "greedy"), games=2, workers=1,
                                   clock="none"), progress=False, elo_samples=10)
    paths = reports.save(result, tmp_path)
    text = paths["pdn"].read_text() if "pdn" in paths else (tmp_path / "games.pdn").read_text()
    games = loads(text)
    data = client.post("/api/replay", json={"pdn": text, "index": 1}).json()
    assert data["count"] == 2 and data["index"] == 1 and len(data["games"]) == 2
    assert data["moves"] == games[1].moves
    assert len(data["frames"]) == len(games[1].moves) + 1
    assert data["frames"][-1]["fen"] == games[1].replay().fen()
    assert data["layout"]["scoring"] and "scores" in data["frames"][-1]
    assert "no game found" in error_of(client.post("/api/replay", json={"pdn": "hello"})) or \
        "cannot read" in error_of(client.post("/api/replay", json={"pdn": "hello"}))
    assert "there is no game 3" in error_of(client.post("/api/replay",
                                                        json={"pdn": text, "index": 2}))
    broken = text.replace(games[0].moves[0], "1-2", 1)
    assert "cannot be played" in error_of(client.post("/api/replay", json={"pdn": broken}))


def test_watch_an_arena_match_live(client):
    r = client.post("/api/arena", json={"variant": "triestine", "specs": ["random", "greedy"],
                                        "games": 2, "delay": 0})
    assert r.status_code == 200, r.text
    aid = r.json()["id"]
    with client.websocket_connect(f"/api/arena/{aid}/ws") as ws:
        assert ws.receive_json()["id"] == aid
    deadline = time.monotonic() + 120
    while (state := client.get(f"/api/arena/{aid}").json())["running"]:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert state["error"] is None and state["played"] == 2
    assert sum(state["points"].values()) == 2.0
    assert {(g["white"], g["black"]) for g in state["results"]} == {("random", "greedy"),
                                                                  ("greedy", "random")}
    assert len(loads(client.get(f"/api/arena/{aid}/pdn").text)) == 2
    assert "'x'" in error_of(client.post("/api/arena", json={"specs": ["random", "x"]}))
    assert "specs" in error_of(client.post("/api/arena", json={"specs": ["random"]}))


def test_agents_search_in_worker_processes():
    with TestClient(create_app(workers=1, agent_delay=0.0)) as client:
        state = new(client, white="alphabeta:depth=3", black="human")
        assert client.get("/api/meta").status_code == 200  # the loop answers meanwhile
        state = wait_for(client, state["id"], lambda s: s["moves"])
        assert len(state["moves"]) == 1 and state["position"]["turn"] == 1
        pids = client.app.state.server.pool.pids()  # the search ran in a worker process
        assert len(pids) == 1 and os.getpid() not in pids


def test_the_command_line_binds_to_localhost_by_default():
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port, args.workers) == ("127.0.0.1", 8000, 2)


def test_a_closed_page_ends_its_websocket_and_the_server_stops():
    """A page that goes (or a finished game, which never changes) must not keep its
    websocket handler alive: uvicorn waits for open handlers when it shuts down, so
    Ctrl-C on `damii serve` hung after any game had been opened in a page."""
    pytest.importorskip("uvicorn")
    httpx = pytest.importorskip("httpx")
    ws_client = pytest.importorskip("websockets.sync.client")
    with served(create_app(workers=0, agent_delay=0.0), join_seconds=15) as (base, thread):
        with httpx.Client(base_url=base) as http:
            state = http.post("/api/games", json={"white": "human", "black": "human"}).json()
            cookie = {"Cookie": f"damii_session={http.cookies['damii_session']}"}
        url = f"{base.replace('http', 'ws', 1)}/api/games/{state['id']}/ws"
        with ws_client.connect(url, additional_headers=cookie) as ws:  # a page that goes
            assert '"version"' in ws.recv(timeout=10)
        still_open = ws_client.connect(url, additional_headers=cookie)  # one still open
        assert '"version"' in still_open.recv(timeout=10)
    assert not thread.is_alive(), "the server waited for websocket handlers on shutdown"
    still_open.close()


@contextlib.contextmanager
def served(app, join_seconds: float = 10, port: int | None = None):
    """`app` served by uvicorn in a thread on `port` (default: a free local one): yields
    its base URL and the thread; on leaving, asks the server to stop and waits up to
    `join_seconds`."""
    import socket
    import threading

    import uvicorn

    if port is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + EVENT_WAIT  # the warm-up: minutes on a cold, busy machine
    while not server.started:
        assert thread.is_alive(), "the server stopped before it started"
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", thread
    finally:
        server.should_exit = True
        thread.join(join_seconds)
