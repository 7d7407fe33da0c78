"""The service's secrets, read once when it starts and then taken out of its environment.

Tokens, the verifier's proof key and the split key reach the service through environment variables or files
(``auth.py``, ``core/env.py``, ``bench/splits.py``); whatever runs later in its process or its children (a jq
builtin, a library, a worker) must not find them there. :func:`take` reads them all, removes every variable that
held one or pointed at one, and hands them to the service as values.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from salesgym.bench import splits as sp
from salesgym.core.env import KEY_ENV, KEY_FILE_ENV, resolve_verifier_key
from salesgym.serve.auth import AGENT_TOKENS_ENV, OPERATOR_TOKEN_ENV, Tokens

SECRET_VARIABLES = (OPERATOR_TOKEN_ENV, AGENT_TOKENS_ENV, KEY_ENV, KEY_FILE_ENV, sp.KEY_ENV_VAR)


@dataclass(frozen=True)
class Secrets:
    tokens: Tokens = field(default_factory=Tokens)
    verifier_key: bytes | None = field(default=None, repr=False)  # None: the public development key
    split_key: sp.SplitKey | None = None  # opens the private splits (its repr shows only where it came from)


def take(tokens_file: Path | None) -> Secrets:
    """Every secret of the service (tokens from ``tokens_file`` or the environment), each variable removed from
    ``os.environ`` once read. Raises ``ValueError`` (an unusable token, an unreadable verifier key) or
    :class:`~salesgym.bench.splits.SplitError` (an unreadable split key) naming what is wrong."""
    tokens = Tokens.load(tokens_file)
    key, kind = resolve_verifier_key()
    split_key = sp.resolve_key()
    for name in SECRET_VARIABLES:
        os.environ.pop(name, None)
    return Secrets(tokens, key if kind == "deployment" else None, split_key)
