"""The training configs shipped with damii-env, installed as ``damii_training.configs``:
``damii train NAME`` runs ``NAME.yaml`` from here (:func:`damii_training.config.shipped_configs`)
from any directory, in a clone or from the installed wheel."""
