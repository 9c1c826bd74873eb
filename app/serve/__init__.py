"""``damii serve``: play, watch and replay draughts in the browser (a local web app).

>>> from damii_app.serve import create_app
>>> app = create_app(workers=0)          # doctest: +SKIP
>>> run_server(port=8000)                # doctest: +SKIP

See ``docs/SERVE.md``. Needs the ``serve`` extra (FastAPI, uvicorn, websockets).
"""

from damii_app.serve.app import create_app, default_weights_dir, run_server

__all__ = ["create_app", "default_weights_dir", "run_server"]
