"""Self-play training for damii-env: the config (:mod:`training.config`), the PPO and
AlphaZero-style trainers (:mod:`training.ppo`, :mod:`training.alphazero`) on the shared
self-play parts (:mod:`training.selfplay`), run directories with checkpoints, logs and
reports (:mod:`training.run`), evaluation (:mod:`training.evaluate`), export of playing
files (:mod:`training.export`) and the ``damii`` command line (:mod:`training.cli`).
See ``docs/TRAINING.md``."""
