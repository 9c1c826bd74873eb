"""Compiled kernels of the rules core (numba), one file a concern.

All rule differences between variants come in through the ``params`` vector (built from
:class:`damii_env.rules.Rules` by :mod:`damii_env.engine`); there is no per-variant code
path. The files, each opening with the rules it states:

* :mod:`.state` the named records (:class:`Tables`, :class:`Games`, :class:`Plies`) and
  the columns of their packed arrays;
* :mod:`.masks` the board as bit masks: who can capture, quiet moves, shifts;
* :mod:`.hops` one hop: action codes, jumps and steps by scanning the board;
* :mod:`.sequences` which captures are legal (capture sequences and precedence);
* :mod:`.moves` the one list of whole moves, a whole move played, crowning, perft;
* :mod:`.hashing` position keys; :mod:`.damath` Sci-Damath's arithmetic;
* :mod:`.ends` how a game ends;
* :mod:`.turns` the environments' hop-by-hop engine and its batch drivers;
* :mod:`.plies` the search's positions.

The kernels run once a hop, a move or a node make no array and are compiled without
reference counts (``_nrt=False``): numba's count on each array argument is an atomic
instruction, left in large functions by its pruning pass (docs/ARCHITECTURE.md). The few
that need arrays make them and hand them to such a loop (:func:`perft`, :func:`step_games`).

This package is private to ``damii_env``: code outside it uses :mod:`damii_env.compiled`.
"""

from damii_env._bits import lowest_bit, mirror, popcount, prefetch_row  # noqa: F401
from damii_env._kernels.damath import *  # noqa: F403
from damii_env._kernels.ends import *  # noqa: F403
from damii_env._kernels.hashing import *  # noqa: F403
from damii_env._kernels.hops import *  # noqa: F403
from damii_env._kernels.masks import *  # noqa: F403
from damii_env._kernels.moves import *  # noqa: F403
from damii_env._kernels.plies import *  # noqa: F403
from damii_env._kernels.sequences import *  # noqa: F403
from damii_env._kernels.sequences import _scratch  # noqa: F401
from damii_env._kernels.state import *  # noqa: F403
from damii_env._kernels.turns import *  # noqa: F403
from damii_env._kernels.turns import _copy_row  # noqa: F401
