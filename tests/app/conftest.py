"""Fixtures of the `damii serve` tests: one app per test module (search threads in the
server process, agents without a pause between moves) and a client with its own session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def app():
    """An app with search threads in this process (no worker processes) and no database."""
    pytest.importorskip("fastapi")
    from damii_app.serve import create_app

    return create_app(workers=0, agent_delay=0.0)


@pytest.fixture()
def client(app):
    """A test client of `app` (its own cookie jar: its own session), started and stopped."""
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c
