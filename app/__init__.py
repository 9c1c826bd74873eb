"""What a person runs, on top of the library: the ``damii`` command line
(:mod:`damii_app.cli`), a game in the terminal (:mod:`damii_app.play`) and the web app
(:mod:`damii_app.serve`). Nothing below imports this floor."""
