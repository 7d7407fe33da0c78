"""The benchmark's commands, one module each (``bench``, ``report``, ``export``, ``runs``, ``splits``), and what
they share: ``options`` (the typer options several commands declare), ``console`` (where they print and how
they fail), ``prices``, ``prepare`` (a run's checks before its first episode), ``interrupts`` and ``leaderboard``.
``salesgym calibrate`` (``calibrate_command.py``) and ``salesgym view`` use the shared modules too; ``cli.py``
puts every command on the main app.

Every expected failure (bad argument, tampered or unbuildable split, missing key, damaged or read-only
database, unwritable output path, unknown run, missing environment) ends with one clear ``error:`` line on
stderr and a non-zero exit, never a traceback.
"""
