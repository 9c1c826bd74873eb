"""How a game ends: the one statement of the end rules, asked by the engine's turns and the
search's rows alike.

:func:`end_reason`: no legal move (a loss), a repetition (``P_REPETITION`` occurrences), no
progress (``P_NO_PROGRESS`` plies of king moves without a capture), the FMJD endgame draw
(:func:`endgame_limit`: three pieces with a king against a lone king, or fewer), the turn
limit (truncation). :func:`end_outcome` turns a reason into an outcome (Sci-Damath: the
totals decide), :func:`move_counters` keeps the draw counters after a move.
"""

from __future__ import annotations

from numba import njit

from damii_env._bits import popcount
from damii_env._kernels.damath import final_totals
from damii_env._kernels.state import (
    B_ENEMY_KINGS,
    B_ENEMY_MEN,
    B_KINGS,
    B_MEN,
    MAX_BITBOARD_SIZE,
    OUT_BLACK,
    OUT_DRAW,
    OUT_TRUNCATED,
    OUT_WHITE,
    P_ENDGAME_THREE,
    P_ENDGAME_TWO,
    P_LOWER_WINS,
    P_N,
    P_NO_PROGRESS,
    P_REPETITION,
    P_S,
    P_SCORING,
    P_TURN_LIMIT,
    REASON_ENDGAME,
    REASON_NO_ENEMY,
    REASON_NO_MOVES,
    REASON_NO_PROGRESS,
    REASON_NONE,
    REASON_REPETITION,
    REASON_TURN_LIMIT,
)


@njit(cache=True, _nrt=False)
def endgame_limit(params, board, b, bits=None):
    """Plies the FMJD endgame draw allows in game b's material, 0 if none applies.

    One side has a lone king; the other three pieces with a king among them
    (``P_ENDGAME_THREE``) or two pieces or fewer with a king (``P_ENDGAME_TWO``). The
    pieces are counted from the bit masks bits[b] where they are given (a ply stack's
    rows, :func:`board_bits`), else from the board.
    """
    if bits is not None and params[P_N] <= MAX_BITBOARD_SIZE:
        own_kings = popcount(bits[b, B_KINGS])
        own = popcount(bits[b, B_MEN]) + own_kings
        enemy_kings = popcount(bits[b, B_ENEMY_KINGS])
        enemy = popcount(bits[b, B_ENEMY_MEN]) + enemy_kings
    else:
        own = 0
        own_kings = 0
        enemy = 0
        enemy_kings = 0
        for s in range(params[P_S]):
            v = board[b, s]
            if v > 0:
                own += 1
                if v == 2:
                    own_kings += 1
            elif v < 0:
                enemy += 1
                if v == -2:
                    enemy_kings += 1
            if own > 3 and enemy > 3:
                return 0
    if own == 1 and own_kings == 1:
        n, kings = enemy, enemy_kings
    elif enemy == 1 and enemy_kings == 1:
        n, kings = own, own_kings
    else:
        return 0
    if kings == 0:
        return 0
    if n == 3:
        return params[P_ENDGAME_THREE]
    if n <= 2:
        return params[P_ENDGAME_TWO]
    return 0


@njit(cache=True, inline="always")
def end_reason(params, board, b, n, occurrences, no_progress, endgame, ply, bits=None):
    """Why the game b ends at the start of this turn, REASON_NONE if it goes on: the mover
    has `n` legal moves, the position has occurred `occurrences` times (this one
    included), `no_progress` plies of king moves without capture, `endgame` plies since
    the last capture or promotion, `ply` moves played. The one statement of the game's
    ends (the engine's turns and the search's nodes both ask here). A ply stack passes
    its rows' bit masks `bits` (:func:`board_bits`): the pieces are then counted from
    them, not from the board."""
    if bits is not None and params[P_N] <= MAX_BITBOARD_SIZE:
        enemy = (bits[b, B_ENEMY_MEN] | bits[b, B_ENEMY_KINGS]) != 0
    else:
        enemy = False
        for s in range(params[P_S]):
            if board[b, s] < 0:
                enemy = True
                break
    if not enemy:  # only reachable from a set-up position
        return REASON_NO_ENEMY
    if n == 0:
        return REASON_NO_MOVES
    if params[P_REPETITION] > 0 and occurrences >= params[P_REPETITION]:
        return REASON_REPETITION
    if params[P_NO_PROGRESS] > 0 and no_progress >= params[P_NO_PROGRESS]:
        return REASON_NO_PROGRESS
    if (params[P_ENDGAME_THREE] > 0 or params[P_ENDGAME_TWO] > 0) and endgame > 0:
        limit = endgame_limit(params, board, b, bits)
        if limit > 0 and endgame >= limit:
            return REASON_ENDGAME
    if params[P_TURN_LIMIT] > 0 and ply >= params[P_TURN_LIMIT]:
        return REASON_TURN_LIMIT
    return REASON_NONE


@njit(cache=True, inline="always")
def end_outcome(params, board, chip, scores, sqinfo, chipval, b, turn, reason):
    """The outcome code of game b ended for `reason` with `turn` to move. In a scoring
    game the totals decide every end (written to scores[b, 2:4])."""
    if params[P_SCORING] == 1:
        white, black = final_totals(params, board, chip, scores, sqinfo, chipval, b, turn)
        scores[b, 2] = white
        scores[b, 3] = black
        diff = white - black
        if params[P_LOWER_WINS] == 1:
            diff = -diff
        if abs(diff) < 1e-9:
            return OUT_DRAW
        return OUT_WHITE if diff > 0 else OUT_BLACK
    if reason == REASON_NO_MOVES:  # the mover has lost
        return OUT_BLACK if turn == 0 else OUT_WHITE
    if reason == REASON_NO_ENEMY:  # the other player has lost
        return OUT_WHITE if turn == 0 else OUT_BLACK
    if reason == REASON_TURN_LIMIT:
        return OUT_TRUNCATED
    return OUT_DRAW


@njit(cache=True, inline="always")
def move_counters(captures, promoted, was_man, no_progress, endgame):
    """The draw counters after a move: ``(no_progress, endgame, irreversible)``. A capture
    or a promotion resets the endgame count; a capture or a man's move is irreversible
    and resets the no-progress count (and the repetition record)."""
    if captures > 0 or promoted:
        endgame = 0
    else:
        endgame += 1
    irreversible = captures > 0 or was_man
    if irreversible:
        no_progress = 0
    else:
        no_progress += 1
    return no_progress, endgame, irreversible
