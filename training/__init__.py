"""Self-play training for damii-env (installed as ``damii_training``): the config
(:mod:`damii_training.config`), the PPO, AlphaZero-style and TD-leaf trainers
(:mod:`damii_training.ppo`, :mod:`damii_training.alphazero`, :mod:`damii_training.tdleaf`)
on the shared self-play parts (:mod:`damii_training.selfplay`), run directories with
checkpoints, logs and reports (:mod:`damii_training.run`), evaluation
(:mod:`damii_training.evaluate`) and export of playing files (:mod:`damii_training.export`).
The ``damii`` command line that runs it is on the app floor (:mod:`damii_app.cli`).
See ``docs/TRAINING.md``."""
