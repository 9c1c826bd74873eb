"""`damii serve` safe by default: one regression test per finding of the round-3 review
(F1-F7, F12-F18: spec paths, server limits, job deadlines, shutdown, bad names, pushed
replies, PDN size, session ids, variants, error texts, warm-up, quoted paths)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

import damii_app.serve.app as serve_app  # noqa: E402
from damii_app.cli import main  # noqa: E402
from damii_app.serve import create_app  # noqa: E402
from damii_app.serve.jobs import SearchPool, TaskFailed  # noqa: E402
from damii_app.serve.live import LiveGame  # noqa: E402
from damii_app.serve.views import MAX_PDN_CHARS  # noqa: E402
from tests.app.test_serve_api import EVENT_WAIT, served  # noqa: E402

WEIGHTS = serve_app.default_weights_dir()


def error_of(r, status: int = 400) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}, body  # F15: one error format
    return body["error"]


def refused(client, spec: str, variant: str = "damii") -> str:
    return error_of(client.post("/api/games", json={"variant": variant, "white": spec,
                                                    "black": "human"}))


def test_f1_no_option_replaces_the_checkpoint_path(client, tmp_path):
    outside = tmp_path / "intl.pt"
    shutil.copy(WEIGHTS / "international.pt", outside)
    for spec in (f"ckpt:damii.pt,path={outside}", f"ckpt:damii.pt,PATH={outside}",
                 "ckpt:damii.pt,path=/nonexistent.pt", "ckpt:damii.pt, path = /etc/passwd"):
        msg = refused(client, spec, "international")
        assert "the path comes right after 'ckpt:'" in msg, spec
        assert "does not exist" not in msg and "cannot be read" not in msg  # no oracle
    r = client.post("/api/arena", json={"specs": ["random", f"ckpt:damii.pt,path={outside}"]})
    assert "the path comes right after" in error_of(r)


@pytest.mark.parametrize("spec,limit", [
    ("alphabeta:depth=30", "depth up to 10"), ("alphabeta:time=86400", "time up to 5"),
    ("alphabeta:nodes=1000000000", "nodes up to 2e+06"), ("alphabeta:tt=26", "tt up to 20"),
    ("ckpt:damii.pt,sims=100000", "sims up to 800"), ("pretrained:damii,depth=12", "depth up to 4"),
])
def test_f2_f3_the_server_limits_searches_and_tables(client, spec, limit):
    assert limit in refused(client, spec)


def test_f2_a_job_over_its_deadline_has_its_worker_replaced():
    pool = SearchPool(1, deadline=1.0)
    try:
        assert pool.submit(abs, -3).result(timeout=EVENT_WAIT) == 3  # the worker is up
        (first,) = pool.pids()
        out = pool.submit(time.sleep, 3600).result(timeout=EVENT_WAIT)
        assert isinstance(out, TaskFailed) and "no answer within 1 s" in str(out)
        assert pool.submit(abs, -4).result(timeout=EVENT_WAIT) == 4  # a fresh worker answers
        assert pool.pids() != [first]
        # a task whose game is gone is answered at once, not at its deadline (set far away
        # here, so that a busy machine's slow test cannot reach it first)
        pool.deadline = 3600.0
        future = pool.submit(time.sleep, 3600, key="game1:0")
        until(future.running)
        pool.cancel("game1:")
        assert "cancelled" in str(future.result(timeout=EVENT_WAIT))
    finally:
        pool.shutdown()


def until(event, what: str = "") -> None:
    """Wait for `event()` to be true; the limit only stops a hang."""
    deadline = time.monotonic() + EVENT_WAIT
    while not event():
        assert time.monotonic() < deadline, f"never happened: {what or event}"
        time.sleep(0.02)


def test_f4_shutdown_ends_the_workers_and_pending_tasks():
    pool = SearchPool(1, deadline=60.0)
    assert pool.submit(abs, -1).result(timeout=EVENT_WAIT) == 1
    procs = list(pool._procs.values())
    # tasks longer than the test may run (its time limit): had shutdown waited for one, the
    # test would fail there; the answers and the ended workers say it did not
    busy = pool.submit(time.sleep, 3600)
    waiting = pool.submit(time.sleep, 3600)
    until(busy.running)
    pool.shutdown()
    assert "stopping" in str(busy.result(timeout=EVENT_WAIT))
    assert "stopping" in str(waiting.result(timeout=EVENT_WAIT))
    until(lambda: not any(p.is_alive() for p in procs), "the workers end")


def test_f4_a_stopped_server_leaves_no_worker_running():
    pytest.importorskip("uvicorn")
    import httpx

    app = create_app(workers=1, agent_delay=0.0)
    with served(app, join_seconds=20) as (base, thread):
        with httpx.Client(base_url=base, timeout=30) as http:
            http.get("/api/meta")
            r = http.post("/api/games", json={"white": "alphabeta:depth=10", "black": "human"})
            assert r.status_code == 200, r.text
            time.sleep(0.5)  # the search is running
            procs = list(app.state.server.pool._procs.values())
            assert procs and all(p.is_alive() for p in procs)
    assert not thread.is_alive()
    assert not any(p.is_alive() for p in procs)


@pytest.mark.parametrize("spec", ["ckpt:damii.pt\x00x", "ckpt:" + "a" * 290,
                                  "ckpt:damii.pt,depth=1\x01", "ckpt:" + "b/" * 600])
def test_f5_nul_bytes_and_long_names_get_a_clear_400(client, spec):
    msg = refused(client, spec)  # what is wrong, in one short line
    assert any(w in msg for w in ("checkpoint path", "at most 300", "must be a int")), msg
    assert "Traceback" not in msg and "\n" not in msg and len(msg) < 500
    r = client.post("/api/arena", json={"specs": ["random", spec]})
    assert r.status_code == 400 and set(r.json()) == {"error"}


def test_f5_f16_damii_eval_says_what_is_wrong_in_one_line(capsys, tmp_path):
    assert main(["eval", "random", "ckpt:" + "a" * 300, "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "too long" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert main(["eval", "random", f"ckpt:{tmp_path}", "--games", "2", "--no-progress"]) == 2
    assert "is a folder, not a checkpoint file" in capsys.readouterr().err


def test_f6_an_idle_websocket_is_not_polled_and_a_change_is_pushed(client, monkeypatch):
    gid = client.post("/api/games", json={"white": "human", "black": "human"}).json()["id"]
    calls = []
    real = LiveGame.state
    monkeypatch.setattr(LiveGame, "state", lambda self: calls.append(1) or real(self))
    with client.websocket_connect(f"/api/games/{gid}/ws") as ws:
        first = ws.receive_json()
        time.sleep(1.0)
        idle_calls = len(calls)
        assert idle_calls <= 2  # the 100 ms polling tick read the state 10 times a second
        client.post(f"/api/games/{gid}/move", json={"move": first["position"]["legal"][0]["text"]})
        pushed = ws.receive_json()
        assert pushed["version"] > first["version"] and len(pushed["moves"]) == 1


def test_f7_pdn_replays_are_bounded(client):
    assert MAX_PDN_CHARS <= 1_000_000
    msg = error_of(client.post("/api/replay", json={"pdn": "*" * (MAX_PDN_CHARS + 1)}))
    assert "pdn" in msg
    # an unreadable token is not echoed whole (F15)
    msg = error_of(client.post("/api/replay", json={"pdn": "{" * 100_000}))
    assert len(msg) < 1000


def test_f12_only_session_ids_the_server_issued(app):
    with TestClient(app) as first:
        first.cookies.set("damii_session", "a")
        r = first.post("/api/games", json={"white": "human", "black": "human"})
        assert r.status_code == 200
        issued = r.cookies.get("damii_session")
        assert issued and issued != "a"  # a chosen id is replaced by a fresh one
        gid = r.json()["id"]
    with TestClient(app) as second:
        second.cookies.set("damii_session", "a")
        assert "no game" in error_of(second.get(f"/api/games/{gid}"), 404)


def test_f13_another_variants_checkpoint_is_refused(client):
    assert "plays damii, not international" in refused(client, "ckpt:damii.pt", "international")


def test_f14_no_server_paths_in_messages(client):
    workdir = os.getcwd()
    for spec in ("ckpt:damii.pt,device=junk", "ckpt:damii.pt,mode=x", "ckpt:nope.pt"):
        msg = refused(client, spec)
        assert workdir not in msg and str(WEIGHTS) not in msg, msg


def test_no_outside_engine_command_runs_from_a_request(client, tmp_path):
    """hub:"COMMAND" plays an outside engine by running COMMAND: a page may not name one
    (the check refuses it before any player is built), in a game or an arena."""
    witness = tmp_path / "ran"
    spec = f'hub:"touch {witness}"'
    assert "not accepted by this server" in refused(client, spec)
    assert "hub:" not in refused(client, " ").split("expected one of:")[1]
    r = client.post("/api/arena", json={"specs": ["random", spec]})
    assert "not accepted by this server" in error_of(r)
    assert not witness.exists()


def test_f15_unknown_routes_and_bad_bodies_answer_in_the_one_format(client):
    assert error_of(client.get("/api/nothing-here"), 404)
    assert error_of(client.post("/api/games", content=b"\xff\xfe",
                                headers={"Content-Type": "application/json"}))
    assert error_of(client.post("/api/games", content=b"[" * 5000 + b"]" * 5000,
                                headers={"Content-Type": "application/json"}))


def test_f16_f18_folders_quoted_names_and_odd_names(tmp_path):
    weights = tmp_path / "weights"
    (weights / "sub").mkdir(parents=True)
    shutil.copy(WEIGHTS / "damii.pt", weights / "a,b.pt")
    shutil.copy(WEIGHTS / "damii.pt", weights / "sub" / "x.pt")
    with TestClient(create_app(weights, workers=0, agent_delay=0.0)) as c:
        assert "is a folder, not a checkpoint file" in refused(c, "ckpt:sub")
        assert "refused" in refused(c, "ckpt:/tmp")  # outside the folder
        r = c.post("/api/games", json={"white": 'ckpt:"a,b.pt",depth=1', "black": "human"})
        assert r.status_code == 200, r.text  # a name with a comma, in double quotes
        assert "closing quote" in refused(c, 'ckpt:"a,b.pt')
        assert "holds the character" in refused(c, "ckpt:a\tb.pt")


def test_g16_a_checkpoint_named_with_a_double_quote_is_offered_and_plays(tmp_path):
    """Issue 45 G16: /api/meta offered q"uote.pt, then every spec for it was refused (the
    server rebuilt it as ckpt:"…/q"uote.pt", which does not parse)."""
    weights = tmp_path / "weights"
    weights.mkdir()
    shutil.copy(WEIGHTS / "damii.pt", weights / 'damii_q"uote.pt')
    with TestClient(create_app(weights, workers=0, agent_delay=0.0)) as c:
        assert 'ckpt:damii_q"uote.pt' in c.get("/api/meta").json()["checkpoints"]["damii"]
        r = c.post("/api/games", json={"white": 'ckpt:damii_q"uote.pt,depth=1',
                                       "black": "human"})
        assert r.status_code == 200, r.text
        state = r.json()
        deadline = time.monotonic() + EVENT_WAIT  # only stops a hang
        while not state["moves"] and time.monotonic() < deadline:
            time.sleep(0.05)
            state = c.get(f"/api/games/{state['id']}").json()
        assert state["moves"], state["message"]  # the network played its first move


def test_f17_the_engine_is_compiled_before_the_first_request(monkeypatch):
    calls = []
    real = serve_app.warm_up
    monkeypatch.setattr(serve_app, "warm_up", lambda: calls.append(time.monotonic()) or real())
    with TestClient(create_app(workers=0, agent_delay=0.0)) as c:
        assert calls  # ran at startup, before this first request
        assert c.get("/api/meta").status_code == 200


def test_f2_agent_games_and_arenas_are_capped_for_the_whole_server():
    def as_session(c, sid=None):
        c.cookies.clear()
        if sid is not None:
            c.cookies.set("damii_session", sid)

    agents = {"white": "random", "black": "random"}
    arena = {"specs": ["random", "random"], "games": 1, "delay": 5.0}
    # agents wait 5 s between moves, so the games and matches below stay running
    with TestClient(create_app(workers=0, agent_delay=5.0, max_agent_matches=2)) as c:
        as_session(c)  # a first session: one game between agents
        assert c.post("/api/games", json=agents).status_code == 200
        as_session(c)  # a second one: an arena match
        r = c.post("/api/arena", json=arena)
        assert r.status_code == 200, r.text
        second, aid = c.cookies.get("damii_session"), r.json()["id"]
        as_session(c)  # a third session, with no game of its own, finds the server full
        for path, body in (("/api/games", agents), ("/api/arena", arena)):
            msg = error_of(c.post(path, json=body), 503)
            assert "its limit for all users together (2)" in msg, msg
            assert "try again when one has finished" in msg
        r = c.post("/api/games", json={"white": "human", "black": "random"})
        assert r.status_code == 200, r.text  # a person against an agent is not capped here
        third = c.cookies.get("damii_session")
        as_session(c, second)
        c.post(f"/api/arena/{aid}/stop")
        until(lambda: not c.get(f"/api/arena/{aid}").json()["running"],
              "the stopped match ends")
        as_session(c, third)  # a place is free again
        r = c.post("/api/games", json=agents)
        assert r.status_code == 200, r.text


def test_f15_a_pdn_without_a_variant_says_what_is_missing_and_what_is_expected(client):
    from damii_env.pdn import PdnError, loads

    cases = {
        '[White "a"]\n\n1. 32-28 *': "has no Variant or GameType tag",
        '[Variant "chess"]\n\n1. 32-28 *': "unknown variant 'chess' in its Variant tag",
        '[GameType "21"]\n\n1. 32-28 *': "has no Variant tag and GameType '21'",
    }
    for text, missing in cases.items():
        msg = error_of(client.post("/api/replay", json={"pdn": text}))
        assert missing in msg and 'expected e.g. [Variant "damii"]' in msg, msg
        assert "None" not in msg
        (game,) = loads(text)  # the same words where the PDN is read outside the server
        with pytest.raises(PdnError, match="expected e.g."):
            game.replay()
    (game,) = loads('[GameType "20"]\n\n1. 32-28 *')
    assert game.variant == "international"


def test_an_engine_the_operator_named_is_offered_as_hub_name_and_nothing_else(tmp_path):
    """damii serve --engine fake="COMMAND": the page is offered hub:fake and it plays (here
    a fake engine's first move); a page cannot give it engine parameters, a bigger search
    than the server's caps, another name or a command of its own."""
    import sys

    from tests.app.test_serve_api import new, wait_for

    fake = Path(__file__).resolve().parents[1] / "hub" / "fake_engine.py"
    app = create_app(workers=0, agent_delay=0.0,
                     engines={"fake": f'"{sys.executable}" "{fake}" illegal'})
    with TestClient(app) as client:
        assert "hub:fake" in client.get("/api/meta").json()["players"]
        state = new(client, variant="international", white="hub:fake,time=0.5",
                    black="human")
        state = wait_for(client, state["id"], lambda s: s["moves"])
        assert state["moves"][0] == "32-28"
        assert "no engine parameter (hash)" in refused(client, "hub:fake,hash=2",
                                                       "international")
        assert "up to 5" in refused(client, "hub:fake,time=60", "international")
        witness = tmp_path / "ran"
        for spec in ("hub:other", f'hub:"touch {witness}"'):
            message = refused(client, spec, "international")
            assert "not accepted by this server" in message and "hub:fake" in message
    assert not witness.exists()


def test_create_app_leaves_the_environment_as_it_was():
    """R10: the engines an app is given are its own (passed to its spec checker, sent
    parsed to its workers): creating, starting and stopping an app changes no environment
    variable, and a second app in the same process with other engines changes nothing for
    the first."""
    import sys

    from tests.app.test_serve_api import new, wait_for

    fake = Path(__file__).resolve().parents[1] / "hub" / "fake_engine.py"
    before = dict(os.environ)
    first = create_app(workers=0, agent_delay=0.0,
                       engines={"fake": f'"{sys.executable}" "{fake}" illegal'})
    assert dict(os.environ) == before
    with TestClient(first) as client:
        second = create_app(workers=0, agent_delay=0.0, engines={"other": "true"})
        assert dict(os.environ) == before
        state = new(client, variant="international", white="hub:fake,time=0.5",
                    black="human")
        assert wait_for(client, state["id"], lambda s: s["moves"])["moves"][0] == "32-28"
        assert "not accepted by this server" in refused(client, "hub:other", "international")
        assert second.state.server.checker.engines == {"other": "true"}
    assert dict(os.environ) == before


@pytest.mark.parametrize("item, message", [("dame", 'NAME="COMMAND"'), ("=dame hub", 'NAME='),
                                           ("a b=dame hub", "letters, digits")])
def test_a_bad_engine_option_is_refused_before_the_server_starts(item, message):
    with pytest.raises(SystemExit, match=message):
        main(["serve", "--engine", item])
