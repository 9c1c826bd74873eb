"""The built wheel, installed outside the repository: its ``damii serve`` offers the
shipped checkpoints of every variant (issue 40: the server looked for its weights beside
the source tree, so an installed wheel offered none), and runs the shipped training configs
by name (issue 60: configs/ was not in the wheel)."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("setuptools", reason="builds the wheel without build isolation")

from tests.helpers import build_wheel  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
VARIANTS = ("damii", "international", "triestine", "damath")

ASK_THE_SERVER = """
import json, damii_agents, damii_app
from fastapi.testclient import TestClient
from damii_app.serve import create_app
from damii_training.config import config_file, load_config, shipped_configs
meta = TestClient(create_app(workers=0)).get("/api/meta").json()
print(json.dumps({"damii_agents": damii_agents.__file__, "damii_app": damii_app.__file__,
                  "meta": meta, "configs": shipped_configs(),
                  "quick": str(config_file("damii_quick")),
                  "quick_name": load_config("damii_quick").name}))
"""


def test_an_installed_wheel_serves_the_shipped_checkpoints(tmp_path):
    """Install the wheel (``--no-deps``) into a fresh virtualenv outside the repository;
    its dependencies come from this environment's site-packages through a .pth file (the
    virtualenv's base interpreter may have none of them), where an editable install of
    this project stays inactive. From a folder outside the repository, its app's
    ``/api/meta`` offers the shipped checkpoint of every variant."""
    wheel = build_wheel(tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True, timeout=120)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, timeout=300,
                   capture_output=True)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    ours = [p for p in {*site.getsitepackages(), sysconfig.get_paths()["purelib"]}
            if Path(p).is_dir()]
    Path(purelib, "outer_dependencies.pth").write_text("\n".join(ours) + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run([str(python), "-c", ASK_THE_SERVER], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    answer = json.loads(out.stdout.splitlines()[-1])
    for package in ("damii_agents", "damii_app"):  # the wheel's, not the repository's
        assert Path(answer[package]).resolve().is_relative_to(venv.resolve()), answer[package]
    meta = answer["meta"]
    assert meta["weights_dir"] == "weights"
    for variant in VARIANTS:
        assert f"ckpt:{variant}.pt" in meta["checkpoints"][variant], meta["checkpoints"]
        assert f"pretrained:{variant}" in meta["pretrained"][variant]
    # the shipped configs are package data: damii train NAME from anywhere (issue 60)
    shipped = sorted(path.stem for path in (REPO / "configs").glob("*.yaml"))
    assert answer["configs"] == shipped
    assert Path(answer["quick"]).resolve().is_relative_to(venv.resolve()), answer["quick"]
    assert answer["quick_name"] == "damii-quick"
