"""Bearer tokens and the two roles: an *agent* plays its own sessions, the *operator* also reads what only a
grader may see (scores, hidden truth, event logs) and every session.

Tokens come from the environment or a file, never from a command line (which other users of the machine can
read in the process table) and never appear in a log line or an error message: the service only ever names a
caller by a one-way digest of its token. Without any token the service runs open, and only on loopback.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Role = Literal["agent", "operator"]
AGENT_TOKENS_ENV = "SALESGYM_AGENT_TOKENS"  # comma-separated
OPERATOR_TOKEN_ENV = "SALESGYM_OPERATOR_TOKEN"
MIN_TOKEN_CHARS = 16


class AuthConfigError(ValueError):
    """Tokens that cannot be used: too short, shared between roles, missing where auth is required."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: ``name`` is a digest of the token (what sessions are owned by), never the token."""

    name: str
    role: Role

    @property
    def operator(self) -> bool:
        return self.role == "operator"


LOCAL = Principal("local", "operator")  # the only caller of an open (loopback, tokenless) service


def principal_name(token: str) -> str:
    return "t-" + hashlib.sha256(token.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Tokens:
    agents: tuple[str, ...] = ()
    operator: str | None = None
    _digests: dict[bytes, Principal] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        every = [*self.agents, *([self.operator] if self.operator else [])]
        for token in every:
            if len(token) < MIN_TOKEN_CHARS or not token.isprintable() or " " in token:
                raise AuthConfigError(f"every token must be at least {MIN_TOKEN_CHARS} printable characters, no spaces")
        if self.operator is not None and self.operator in self.agents:
            raise AuthConfigError("the operator token must differ from every agent token")
        for token in self.agents:
            self._digests[_digest(token)] = Principal(principal_name(token), "agent")
        if self.operator is not None:
            self._digests[_digest(self.operator)] = Principal(principal_name(self.operator), "operator")

    def __repr__(self) -> str:  # never print a token, even by accident
        return f"Tokens(agents={len(self.agents)}, operator={self.operator is not None})"

    @property
    def enabled(self) -> bool:
        return bool(self.agents) or self.operator is not None

    def secrets(self) -> tuple[str, ...]:
        return (*self.agents, *([self.operator] if self.operator else []))

    def check(self, authorization: str | None) -> Principal | None:
        """The caller of an ``Authorization: Bearer ...`` header, or None. Compared as digests, in constant time
        per candidate, so timing says nothing about which token nearly matched."""
        if not self.enabled:
            return LOCAL
        if not authorization or not authorization.startswith("Bearer "):
            return None
        given = _digest(authorization[len("Bearer "):].strip())
        found = None
        for digest, principal in self._digests.items():
            if hmac.compare_digest(digest, given):
                found = principal
        return found

    @classmethod
    def load(cls, path: str | Path | None = None) -> Tokens:
        """From ``path`` (JSON ``{"operator": "...", "agents": ["...", ...]}``) or else from
        ``$SALESGYM_OPERATOR_TOKEN`` and ``$SALESGYM_AGENT_TOKENS``."""
        if path is not None:
            try:
                data = json.loads(Path(path).read_text())
            except (OSError, ValueError) as err:
                raise AuthConfigError(f"{path}: cannot read the tokens file ({type(err).__name__})") from None
            if not isinstance(data, dict) or not isinstance(data.get("agents", []), list):
                raise AuthConfigError(f'{path}: expected {{"operator": "...", "agents": ["...", ...]}}')
            agents = tuple(str(t) for t in data.get("agents", []))
            operator = data.get("operator")
            return cls(agents, None if operator is None else str(operator))
        agents = tuple(t.strip() for t in os.environ.get(AGENT_TOKENS_ENV, "").split(",") if t.strip())
        return cls(agents, os.environ.get(OPERATOR_TOKEN_ENV) or None)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_auth_for(host: str, tokens: Tokens) -> None:
    """Auth is on whenever the service listens beyond loopback: refuse to start open there."""
    if not is_loopback(host) and not (tokens.agents and tokens.operator):
        raise AuthConfigError(
            f"binding to {host} needs an operator token and at least one agent token "
            f"(${OPERATOR_TOKEN_ENV}, ${AGENT_TOKENS_ENV} or --tokens-file); refusing to start without auth"
        )
