"""Training for damii-env (installed as ``damii_training``): the one config
(:mod:`damii_training.config`), the trainers by ``algorithm``
(:data:`damii_training.trainers.TRAINERS`): PPO, AlphaZero-style and TD-leaf
(:mod:`damii_training.ppo`, :mod:`damii_training.alphazero`, :mod:`damii_training.tdleaf`,
on the shared self-play parts of :mod:`damii_training.selfplay`) and the learned
evaluation of the compiled alpha-beta (:mod:`damii_training.patterns`); the one run driver
(:mod:`damii_training.run`) with its run directory, CSV logs and resume checks
(:mod:`damii_training.rundir`) and learning curve (:mod:`damii_training.curves`);
evaluation (:mod:`damii_training.evaluate`), Ray self-play
(:mod:`damii_training.distributed`) and export of playing files
(:mod:`damii_training.export`). The ``damii`` command line that runs it is on the app floor
(:mod:`damii_app.cli`). See ``docs/TRAINING.md``."""

from pathlib import Path

from damii_env import compile_cache

# before any module of this package defines a compiled function (damii_env/compile_cache.py)
compile_cache.register_package("damii_training", Path(__file__).parent)
