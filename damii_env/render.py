"""Pictures of positions: text (``ansi``), images (``rgb_array``, Pillow), SVG, a window.

>>> import damii_env
>>> from damii_env.render import Position, to_ansi, to_image, to_svg
>>> game = damii_env.Game("international")
>>> _ = game.push("32-28")
>>> print(to_ansi(game))                          # doctest: +SKIP
>>> to_image(game).save("position.png")           # doctest: +SKIP
>>> open("position.svg", "w").write(to_svg(game))  # doctest: +SKIP

Every function takes a *source*: a :class:`Position`, a :class:`~damii_env.Game`, or
an environment of this package (PettingZoo, Gymnasium, or vector; for the vector
environment pass ``b``, the game's row). Boards are drawn as White sees them (row 0 at
the top), whatever the side to move, with the variant's orientation and square numbers.
The image shows the last move (or the move in progress) on highlighted squares, a
green ring round the piece that must go on capturing, and a red cross on each piece
captured this turn and not yet lifted.

The ``human`` mode opens a pygame window (``pip install "damii-env[human]"``);
pygame is imported only when a window is first shown.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from damii_env import _kernels as K
from damii_env.engine import REASON_NAMES, Engine, State
from damii_env.geometry import geometry
from damii_env.rules import Rules

RENDER_MODES: tuple[str, ...] = ("human", "ansi", "rgb_array")
"""Every mode the renderer knows (``human`` needs pygame)."""


PYGAME_HINT = ('pip install "damii-env[human]" (in a clone of the repository: '
               'pip install -e ".[human]"), or pip install pygame')
"""How to get the window of ``render_mode="human"``."""


def pygame_installed() -> bool:
    """Whether pygame can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("pygame") is not None
    except (ImportError, ValueError):
        return False


def render_modes() -> list[str]:
    """The modes this installation can show, for an environment's ``metadata``: ``human``
    only where pygame is installed, so that Gymnasium's ``check_env`` and PettingZoo's
    ``render_test`` pass on a default install. A new list at every call."""
    return [m for m in RENDER_MODES if m != "human" or pygame_installed()]

RGB = tuple[int, int, int]
LIGHT: RGB = (240, 217, 181)
DARK: RGB = (176, 126, 86)
HIGHLIGHT: RGB = (214, 196, 82)
NUMBER: RGB = (236, 214, 190)
WHITE_FILL: RGB = (250, 248, 240)
WHITE_EDGE: RGB = (70, 62, 55)
WHITE_RING: RGB = (205, 198, 185)
BLACK_FILL: RGB = (38, 36, 36)
BLACK_EDGE: RGB = (8, 8, 8)
BLACK_RING: RGB = (96, 92, 90)
CROWN: RGB = (232, 178, 36)
CROWN_EDGE: RGB = (120, 78, 0)
CONTINUING: RGB = (30, 170, 70)
CAPTURED: RGB = (215, 30, 30)
FOOTER: RGB = (44, 44, 44)
FOOTER_TEXT: RGB = (240, 240, 240)

_CROWN_SHAPE = ((-1.0, 0.55), (-1.0, -0.45), (-0.5, 0.05), (0.0, -0.7), (0.5, 0.05),
                (1.0, -0.45), (1.0, 0.55))


@dataclass(frozen=True, eq=False)
class Position:
    """A position to draw, in absolute terms (square indices 0..S-1 of the orientation)."""

    rules: Rules
    board: np.ndarray
    """int8 (S,): + White, - Black; 1 man, 2 king."""
    turn: int
    """Colour to move: 0 White, 1 Black."""
    pending: np.ndarray
    """bool (S,): pieces captured this turn and not yet lifted."""
    continuing: int = -1
    """Square of the piece that must go on capturing, or -1."""
    move_start: int = -1
    """Square where the move in progress started, or -1."""
    last_move: tuple[int, int] | None = None
    """(from, to) squares of the last completed move."""
    outcome: int = K.OUT_ONGOING
    reason: int = K.REASON_NONE
    labels: tuple[str, ...] | None = None
    """Sci-Damath: the chip value written on each square's piece ('' where none)."""
    ops: tuple[str, ...] | None = None
    """Sci-Damath: the operation of each square."""
    scores: tuple[float, float] | None = None
    """Sci-Damath: points of White and Black so far."""

    @classmethod
    def from_state(cls, engine: Engine, state: State, b: int = 0) -> Position:
        """Game `b` of an engine state."""
        meta = state.meta[b]
        turn = int(meta[K.M_TURN])
        S = engine.n_squares

        def absolute(square: int) -> int:
            return S - 1 - square if turn == 1 and square >= 0 else int(square)

        board, pending = state.board[b], state.pending[b]
        if turn == 1:
            board, pending = -board[::-1], pending[::-1]
        last = (int(meta[K.M_LAST_FROM]), int(meta[K.M_LAST_TO]))
        damath: dict[str, Any] = {}
        if engine.scoring:
            from damii_env.damath import OPS, chips_of

            table = chips_of(engine.rules.chip_set)
            chips = engine.absolute_chips(state)[b]
            damath = dict(
                labels=tuple(table[int(c)].label if c >= 0 else "" for c in chips),
                ops=tuple(OPS[int(o)] for o in engine.square_info[:, K.SQ_OP]),
                scores=(float(state.scores[b, 0]), float(state.scores[b, 1])),
            )
        return cls(rules=engine.rules, board=board.astype(np.int8), turn=turn,
                   pending=pending.astype(bool), continuing=absolute(int(meta[K.M_CONT])),
                   move_start=absolute(int(meta[K.M_SEQ_START])),
                   last_move=last if last[0] >= 0 else None,
                   outcome=int(meta[K.M_OUTCOME]), reason=int(meta[K.M_REASON]), **damath)

    @classmethod
    def from_fen(cls, fen: str, variant: str | Rules = "damii", **options: Any) -> Position:
        """A position from PDN FEN text (square numbers of the variant's orientation)."""
        engine = Engine(variant, **options)
        return cls.from_state(engine, engine.from_fen(fen))

    @property
    def highlighted(self) -> tuple[int, ...]:
        """Squares of the move in progress, else of the last move."""
        if self.continuing >= 0:
            return (self.move_start, self.continuing)
        return self.last_move or ()

    def status(self) -> str:
        """One line: who is to move (and must continue capturing), or how the game ended."""
        side = ("White", "Black")[self.turn]
        if self.outcome == K.OUT_ONGOING:
            text = f"{side} to move"
            if self.continuing >= 0:
                text += f", capturing from {self.move_start + 1}: continue from " \
                        f"{self.continuing + 1}"
            elif self.last_move:
                text += f" (last move {self.last_move[0] + 1}-{self.last_move[1] + 1})"
            return text
        result = {K.OUT_WHITE: "White wins", K.OUT_BLACK: "Black wins", K.OUT_DRAW: "draw",
                  K.OUT_TRUNCATED: "truncated"}[self.outcome]
        return f"game over: {result} ({REASON_NAMES[self.reason]})"


def position_of(source: Any, b: int = 0) -> Position:
    """The :class:`Position` of a source (Position, Game, or environment; row `b`)."""
    if isinstance(source, Position):
        return source
    inner = getattr(source, "unwrapped", source)
    for obj in (inner, source):
        engine = getattr(obj, "engine", None)
        state = getattr(obj, "game_state", None)
        if state is None:
            state = getattr(obj, "state", None)
        if isinstance(engine, Engine) and isinstance(state, State):
            return Position.from_state(engine, state, b)
    raise TypeError(
        f"cannot draw a {type(source).__name__}; expected a Position, a Game or an environment"
        f" of damii_env"
    )


# --- text -------------------------------------------------------------------------------


def to_ansi(source: Any, b: int = 0) -> str:
    """The board as text, as White sees it.

    ``w``/``W`` White man/king, ``b``/``B`` Black man/king, ``.`` empty dark square;
    ``[x]`` marks the squares of the last move (or of the move in progress) and ``(x)``
    a piece captured this turn and not yet lifted. Each row ends with its square numbers.
    """
    pos = position_of(source, b)
    geo = geometry(pos.rules.board_size, pos.rules.orientation)
    glyph = {0: ".", 1: "w", 2: "W", -1: "b", -2: "B"}
    marked = set(pos.highlighted)
    lines = []
    for r in range(pos.rules.board_size):
        cells, squares = [], []
        for c in range(pos.rules.board_size):
            s = int(geo.rc_square[r, c])
            if s < 0:
                cells.append("   ")
                continue
            squares.append(s + 1)
            g = glyph[int(pos.board[s])]
            if pos.pending[s]:
                cells.append(f"({g})")
            elif s in marked:
                cells.append(f"[{g}]")
            else:
                cells.append(f" {g} ")
        lines.append("".join(cells) + f"   {squares[0]:>2}-{squares[-1]}")
    lines.append(f"{pos.rules.name} ({pos.rules.orientation}): {pos.status()}")
    return "\n".join(lines)


# --- drawing (one description, two backends: Pillow and SVG) ------------------------------


class Canvas(Protocol):
    """The drawing operations a position picture needs (pixel coordinates)."""

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: RGB) -> None: ...

    def circle(self, cx: float, cy: float, r: float, fill: RGB | None, edge: RGB | None,
               width: float) -> None: ...

    def polygon(self, points: list[tuple[float, float]], fill: RGB, edge: RGB,
                width: float) -> None: ...

    def line(self, points: list[tuple[float, float]], colour: RGB, width: float) -> None: ...

    def text(self, x: float, y: float, text: str, colour: RGB, size: float,
             centred: bool) -> None: ...


def _layout(pos: Position, square: int, caption: bool) -> tuple[int, int]:
    n = pos.rules.board_size
    return n * square, n * square + (max(18, square // 2) if caption else 0)


def draw_position(canvas: Canvas, pos: Position, square: int = 64, numbers: bool = True,
                  caption: bool = True) -> None:
    """Draw `pos` on `canvas`, `square` pixels a square, White's view (row 0 on top)."""
    rules = pos.rules
    n = rules.board_size
    geo = geometry(n, rules.orientation)
    marked = set(pos.highlighted)
    for r in range(n):
        for c in range(n):
            s = int(geo.rc_square[r, c])
            colour = LIGHT if s < 0 else HIGHLIGHT if s in marked else DARK
            canvas.rect(c * square, r * square, (c + 1) * square, (r + 1) * square, colour)
            if numbers and s >= 0:
                canvas.text(c * square + 0.04 * square, r * square + 0.04 * square, str(s + 1),
                            WHITE_EDGE if s in marked else NUMBER, 0.16 * square, False)
            if pos.ops is not None and s >= 0 and not pos.board[s]:
                canvas.text((c + 0.5) * square, (r + 0.5) * square, pos.ops[s], NUMBER,
                            0.34 * square, True)
    for s in np.flatnonzero(pos.board):
        r, c = (int(x) for x in geo.square_rc[s])
        cx, cy = (c + 0.5) * square, (r + 0.5) * square
        v = int(pos.board[s])
        fill, edge, ring = (WHITE_FILL, WHITE_EDGE, WHITE_RING) if v > 0 else \
            (BLACK_FILL, BLACK_EDGE, BLACK_RING)
        radius = 0.37 * square
        canvas.circle(cx, cy, radius, fill, edge, 0.04 * square)
        canvas.circle(cx, cy, 0.72 * radius, None, ring, 0.035 * square)
        label = pos.labels[s] if pos.labels is not None else ""
        if abs(v) == 2:
            k = 0.2 * square if not label else 0.1 * square
            top = cy if not label else cy - 0.22 * square
            canvas.polygon([(cx + k * x, top + k * y) for x, y in _CROWN_SHAPE], CROWN,
                           CROWN_EDGE, 0.025 * square)
        if label:
            size = 0.3 * square if len(label) <= 3 else 0.9 * square / len(label)
            canvas.text(cx, cy + (0.05 * square if abs(v) == 2 else 0), label,
                        BLACK_FILL if v > 0 else WHITE_FILL, size, True)
        if s == pos.continuing:
            canvas.circle(cx, cy, 0.46 * square, None, CONTINUING, 0.07 * square)
        if pos.pending[s]:
            d = 0.3 * square
            canvas.line([(cx - d, cy - d), (cx + d, cy + d)], CAPTURED, 0.09 * square)
            canvas.line([(cx - d, cy + d), (cx + d, cy - d)], CAPTURED, 0.09 * square)
    if caption:
        width, height = _layout(pos, square, caption)
        canvas.rect(0, n * square, width, height, FOOTER)
        caption_text = f"{rules.name} ({rules.orientation}) - {pos.status()}"
        if pos.scores is not None:
            caption_text += f" - scores {pos.scores[0]:.2f} : {pos.scores[1]:.2f}"
        size = min(0.5 * (height - n * square), 1.7 * width / max(len(caption_text), 1))
        canvas.text(width / 2, (n * square + height) / 2, caption_text, FOOTER_TEXT, size, True)


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(size, 1))


class PillowCanvas:
    """A Pillow image drawn at `scale` times the size, then smoothed down."""

    def __init__(self, width: int, height: int, scale: int = 2) -> None:
        self.size = (width, height)
        self.scale = scale
        self.image = Image.new("RGB", (width * scale, height * scale), LIGHT)
        self.draw = ImageDraw.Draw(self.image)

    def _p(self, *xs: float) -> list[float]:
        return [x * self.scale for x in xs]

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: RGB) -> None:
        x0, y0, x1, y1 = self._p(x0, y0, x1, y1)
        self.draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=fill)

    def circle(self, cx: float, cy: float, r: float, fill: RGB | None, edge: RGB | None,
               width: float) -> None:
        cx, cy, r = self._p(cx, cy, r)
        self.draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=edge,
                          width=max(1, round(width * self.scale)))

    def polygon(self, points: list[tuple[float, float]], fill: RGB, edge: RGB,
                width: float) -> None:
        pts = [tuple(self._p(x, y)) for x, y in points]
        self.draw.polygon(pts, fill=fill, outline=edge, width=max(1, round(width * self.scale)))

    def line(self, points: list[tuple[float, float]], colour: RGB, width: float) -> None:
        pts = [tuple(self._p(x, y)) for x, y in points]
        self.draw.line(pts, fill=colour, width=max(1, round(width * self.scale)))

    def text(self, x: float, y: float, text: str, colour: RGB, size: float,
             centred: bool) -> None:
        x, y = self._p(x, y)
        self.draw.text((x, y), text, fill=colour, font=_font(round(size * self.scale)),
                       anchor="mm" if centred else "la")

    def finish(self) -> Image.Image:
        if self.scale == 1:
            return self.image
        return self.image.reduce(self.scale)  # box filter: fast anti-aliasing


def _hex(colour: RGB | None) -> str:
    return "none" if colour is None else "#{:02x}{:02x}{:02x}".format(*colour)


class SvgCanvas:
    """SVG elements collected as text."""

    def __init__(self, width: int, height: int) -> None:
        self.size = (width, height)
        self.parts: list[str] = []

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: RGB) -> None:
        self.parts.append(f'<rect x="{x0:g}" y="{y0:g}" width="{x1 - x0:g}" '
                          f'height="{y1 - y0:g}" fill="{_hex(fill)}"/>')

    def circle(self, cx: float, cy: float, r: float, fill: RGB | None, edge: RGB | None,
               width: float) -> None:
        # Pillow draws the outline inside the radius; match it
        r_mid = r - width / 2 if edge is not None else r
        self.parts.append(f'<circle cx="{cx:g}" cy="{cy:g}" r="{r_mid:g}" fill="{_hex(fill)}" '
                          f'stroke="{_hex(edge)}" stroke-width="{width:g}"/>')

    def polygon(self, points: list[tuple[float, float]], fill: RGB, edge: RGB,
                width: float) -> None:
        pts = " ".join(f"{x:g},{y:g}" for x, y in points)
        self.parts.append(f'<polygon points="{pts}" fill="{_hex(fill)}" stroke="{_hex(edge)}" '
                          f'stroke-width="{width:g}" stroke-linejoin="round"/>')

    def line(self, points: list[tuple[float, float]], colour: RGB, width: float) -> None:
        pts = " ".join(f"{x:g},{y:g}" for x, y in points)
        self.parts.append(f'<polyline points="{pts}" fill="none" stroke="{_hex(colour)}" '
                          f'stroke-width="{width:g}" stroke-linecap="round"/>')

    def text(self, x: float, y: float, text: str, colour: RGB, size: float,
             centred: bool) -> None:
        anchor = ('text-anchor="middle" dominant-baseline="central"' if centred
                  else 'dominant-baseline="hanging"')
        safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        self.parts.append(f'<text x="{x:g}" y="{y:g}" font-family="DejaVu Sans, sans-serif" '
                          f'font-size="{size:g}" fill="{_hex(colour)}" {anchor}>{safe}</text>')

    def finish(self) -> str:
        w, h = self.size
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
                f'viewBox="0 0 {w} {h}">\n' + "\n".join(self.parts) + "\n</svg>\n")


def to_image(source: Any, b: int = 0, square: int = 64, numbers: bool = True,
             caption: bool = True) -> Image.Image:
    """A Pillow image of the position (`square` pixels a square)."""
    pos = position_of(source, b)
    canvas = PillowCanvas(*_layout(pos, square, caption))
    draw_position(canvas, pos, square, numbers, caption)
    return canvas.finish()


def to_rgb_array(source: Any, b: int = 0, square: int = 64, numbers: bool = True,
                 caption: bool = True) -> np.ndarray:
    """uint8 (H, W, 3) picture of the position."""
    return np.asarray(to_image(source, b, square, numbers, caption), dtype=np.uint8).copy()


def to_svg(source: Any, b: int = 0, square: int = 64, numbers: bool = True,
           caption: bool = True) -> str:
    """SVG text of the position (the same picture as :func:`to_image`)."""
    pos = position_of(source, b)
    canvas = SvgCanvas(*_layout(pos, square, caption))
    draw_position(canvas, pos, square, numbers, caption)
    return canvas.finish()


# --- windows and the render() of the environments ------------------------------------------


class HumanWindow:
    """A pygame window that shows frames; pygame is imported on the first frame."""

    def __init__(self, title: str = "damii-env", fps: int = 2) -> None:
        self.title = title
        self.fps = fps
        self._screen: Any = None
        self._clock: Any = None

    def show(self, frame: np.ndarray) -> None:
        try:
            import pygame
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(f'render_mode="human" needs pygame: {PYGAME_HINT}') from exc
        height, width = frame.shape[:2]
        if self._screen is None or self._screen.get_size() != (width, height):
            pygame.display.init()
            pygame.display.set_caption(self.title)
            self._screen = pygame.display.set_mode((width, height))
            self._clock = pygame.time.Clock()
        self._screen.blit(pygame.surfarray.make_surface(frame.swapaxes(0, 1)), (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        if self._screen is not None:
            import pygame

            pygame.display.quit()
            self._screen = None
            self._clock = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_screen": None, "_clock": None}


class Renderer:
    """What an environment's ``render()`` does for its render mode."""

    def __init__(self, mode: str | None, title: str = "damii-env", fps: int = 2,
                 square: int = 64) -> None:
        if mode is not None and mode not in RENDER_MODES:
            from damii_env.errors import InvalidOptionError

            raise InvalidOptionError(
                f"render_mode cannot be {mode!r}; expected None or one of {', '.join(RENDER_MODES)}"
            )
        if mode == "human" and not pygame_installed():
            # said at construction, not first at reset(); a warning, not an error, because
            # PettingZoo's render_test builds every env with render_mode="human" to read its
            # metadata, pygame or not (the first frame raises, see HumanWindow.show)
            import warnings

            warnings.warn(
                f'render_mode "human" opens a pygame window, and pygame is not installed: '
                f'{PYGAME_HINT}; until then "human" prints each board as text (render_mode '
                f'"ansi" returns that text, "rgb_array" images)', UserWarning, stacklevel=3)
        self.text_instead = mode == "human" and not pygame_installed()
        """Human mode without pygame: each frame is printed as the text board."""
        self.mode = mode
        self.square = square
        self.window = HumanWindow(title, fps) if mode == "human" else None

    def render(self, source: Any, b: int = 0) -> str | np.ndarray | None:
        """Text (ansi), an image (rgb_array), or None after showing the window (human).

        Without a render mode it warns, as Gymnasium and PettingZoo environments do.
        """
        if self.mode is None:
            import gymnasium

            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        if self.mode == "ansi":
            return to_ansi(source, b)
        if self.mode == "rgb_array":
            return to_rgb_array(source, b, self.square)
        if self.mode == "human" and self.text_instead:
            print(to_ansi(source, b), flush=True)
        elif self.mode == "human":
            assert self.window is not None
            self.window.show(to_rgb_array(source, b, self.square))
        return None

    def close(self) -> None:
        if self.window is not None:
            self.window.close()
