"""Rendering: text boards, Pillow images, SVG, the pygame window, and render_test."""

from __future__ import annotations

import importlib.util
import os
import xml.etree.ElementTree as ET

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from pettingzoo.test import render_test  # noqa: E402

import damii_env as d  # noqa: E402
from damii_env import render  # noqa: E402
from damii_env.render import Position, to_ansi, to_image, to_rgb_array, to_svg  # noqa: E402
from damii_env.vector_env import DraughtsVectorEnv  # noqa: E402

HAVE_PYGAME = importlib.util.find_spec("pygame") is not None

CONFIGS = [
    pytest.param("damii", {"orientation": "mirrored"}, id="damii-mirrored"),
    pytest.param("damii", {"orientation": "standard"}, id="damii-standard"),
    pytest.param("international", {}, id="international"),
    pytest.param("triestine", {}, id="triestine"),
]

DOUBLE_CAPTURE = "W:W28,K49:B22,12,K3"


def mid_capture_game() -> d.Game:
    """White has jumped 22 with the man from 28 and must go on from 17 (standard)."""
    game = d.Game.from_fen(DOUBLE_CAPTURE, "damii", orientation="standard")
    move = game.parse_move("28x17x8")
    game.engine.step(game.state, np.array(move.actions[:1]))
    return game


def colour_near(image: np.ndarray, rgb: tuple[int, int, int], tol: int = 12) -> int:
    return int((np.abs(image.astype(int) - np.array(rgb)).max(axis=2) <= tol).sum())


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_pettingzoo_render_test(variant, options):
    def env_fn(render_mode=None):
        env = d.env(variant, render_mode=render_mode, **options)
        if render_mode == "human":  # show frames without waiting 1/render_fps s each
            env.unwrapped._renderer.window.fps = 0
        return env

    if not HAVE_PYGAME:  # pragma: no cover - depends on the installation
        pytest.skip("pygame is not installed (the 'human' extra)")
    render_test(env_fn)


@pytest.mark.parametrize("variant", ["damii", "international", "triestine"])
def test_rgb_array_of_each_variant(variant):
    env = d.env(variant, render_mode="rgb_array")
    env.reset()
    image = env.render()
    assert image.dtype == np.uint8 and image.shape[1:] == (640, 3) and image.shape[0] > 640
    assert colour_near(image, render.WHITE_FILL) > 1000
    assert colour_near(image, render.BLACK_FILL) > 1000


@pytest.mark.parametrize("orientation,bottom_left_dark", [("standard", True), ("mirrored", False)])
def test_image_follows_the_orientation(orientation, bottom_left_dark):
    image = to_rgb_array(d.Game("damii", orientation=orientation), square=20, caption=False,
                         numbers=False)
    pixel = tuple(int(x) for x in image[10 * 20 - 3, 2])  # bottom-left square, off the piece
    assert (pixel == render.DARK) == bottom_left_dark
    assert (pixel == render.LIGHT) == (not bottom_left_dark)


def test_mid_capture_marks():
    game = mid_capture_game()
    pos = Position.from_state(game.engine, game.state)
    assert pos.continuing == 16 and pos.move_start == 27 and pos.pending[21]
    image = to_rgb_array(game)
    assert colour_near(image, render.CAPTURED, tol=30) > 100  # the cross on 22
    assert colour_near(image, render.CONTINUING, tol=30) > 100  # the ring round 17
    assert colour_near(image, render.HIGHLIGHT, tol=10) > 2000  # squares 28 and 17
    assert colour_near(image, render.CROWN, tol=30) > 100  # kings on 49 and 3
    text = to_ansi(game)
    assert "(b)" in text and "[w]" in text and "[.]" in text
    assert "continue from 17" in text


def test_ansi_board():
    game = d.Game("international")
    game.push("32-28")
    text = to_ansi(game)
    lines = text.splitlines()
    assert len(lines) == 11 and lines[0].endswith("1-5") and lines[9].endswith("46-50")
    board = "\n".join(lines[:10])
    assert board.count("b") == board.count("w") == 20 and "last move 32-28" in lines[10]
    assert lines[0] == "    b     b     b     b     b     1-5"


def test_game_over_status():
    pos = Position.from_fen("B:W28:B", "international")
    assert pos.status() == "game over: White wins (no legal move)"


def test_svg_is_well_formed_and_matches_the_position():
    game = mid_capture_game()
    svg = to_svg(game)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.get("width") == "640"
    rects = root.findall(f"{ns}rect")
    assert len(rects) == 100 + 1  # squares and the caption strip
    circles = root.findall(f"{ns}circle")
    assert len(circles) == 2 * 5 + 1  # two rings a piece, plus the continuing ring
    assert len(root.findall(f"{ns}polygon")) == 2  # two crowns
    assert len(root.findall(f"{ns}polyline")) == 2  # the cross on the captured piece
    assert to_svg(Position.from_fen("W:W31:B20", "damii"), caption=False).count("<text") == 50


def test_to_image_sources_and_errors():
    env = d.env("triestine")
    env.reset()
    a = to_rgb_array(env)
    b = to_rgb_array(env.unwrapped)
    c = to_rgb_array(d.Game("triestine"))
    assert (a == b).all() and (a == c).all()
    assert to_image(env, square=10).size == (100, 118)
    with pytest.raises(TypeError):
        to_ansi(42)


def test_gym_and_vector_env_render():
    import gymnasium

    env = gymnasium.make("damii_env/International-v0", render_mode="ansi")
    env.reset(seed=0)
    assert "international (standard)" in env.render()
    envs = DraughtsVectorEnv(3, "triestine", render_mode="rgb_array")
    envs.reset()
    frames = envs.render()
    assert len(frames) == 3 and frames[0].shape[2] == 3


@pytest.mark.skipif(not HAVE_PYGAME, reason="pygame is not installed (the 'human' extra)")
def test_human_window_opens_and_closes():
    env = d.env("damii", render_mode="human")
    env.unwrapped._renderer.window.fps = 0
    env.reset()
    assert env.render() is None
    window = env.unwrapped._renderer.window
    assert window._screen is not None and window._screen.get_size() == (640, 672)
    env.close()
    assert window._screen is None


def test_render_without_mode_warns_and_returns_none():
    env = d.raw_env("damii")
    with pytest.warns(UserWarning, match="render mode"):
        assert env.render() is None
    with pytest.raises(d.InvalidOptionError):
        d.raw_env("damii", render_mode="svg")


@pytest.mark.parametrize("variant", ["damii", "damath"])
def test_a_game_shows_itself_as_svg_in_a_notebook(variant):
    """Issue 45, D8: Jupyter calls ``_repr_svg_``; the picture is render.to_svg's."""
    game = d.Game(variant)
    svg = game._repr_svg_()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert svg == d.render.to_svg(game, square=40)
