"""The HTTP service's API as both sides see it: the request and response models (``models.py``, pydantic only)
that the service (``salesgym.serve``) validates and answers with, and the typed client (``client.py``, on httpx)
that any caller uses, the benchmark's ``--from-service`` too. Neither imports the service or the benchmark, so
both can depend on this package without depending on each other.

Importing this package imports neither pydantic nor httpx; each module imports what it needs.
"""
