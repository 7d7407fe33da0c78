"""The web apps' control side: open a run for a task instance, export what one app holds for the HTTP verifier
API, and judge a run whose apps live in separate processes (or containers) through that API.

A run of a standalone app is the same task instance in every app (the same environment id, template and seed
build the same world); each app writes only its own tables. At the end each app's tables and calls go to the
verifier API under one run id, which judges the run once across them (``judge``), as it does for the tool path.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from salesgym.webapps.run import Run, Runs
from salesgym.webapps.variants import variant as find_variant

ENV_IDS = ("workflows-v0", "workflows-debug-v0")
KWARGS = ("template", "tier", "max_calls")
TASK_TOOLS = ("ask_requester", "reply_message", "finish_task")


def problem(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def open_run(runs: Runs, spec: Mapping[str, Any]) -> Run:
    """A run from ``{env_id, kwargs: {template, tier, max_calls}, seed, run_id?, variant?}`` (``ValueError``
    names what is wrong)."""
    import salesgym

    unknown = sorted(set(spec) - {"env_id", "kwargs", "seed", "run_id", "variant"})
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}")
    env_id = spec.get("env_id", "workflows-v0")
    if env_id not in ENV_IDS:
        raise ValueError(f"env_id must be one of {', '.join(ENV_IDS)}")
    kwargs = spec.get("kwargs", {})
    if not isinstance(kwargs, dict) or set(kwargs) - set(KWARGS):
        raise ValueError(f"kwargs is an object with at most {', '.join(KWARGS)}")
    seed = spec.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise ValueError("seed is an int in [0, 2**63)")
    run_id = spec.get("run_id")
    if run_id is not None and not isinstance(run_id, str):
        raise ValueError("run_id is a string")
    env = salesgym.make(env_id, **kwargs)
    env.reset(seed=seed)
    return runs.open(env, find_variant(str(spec.get("variant", "default"))), run_id)


def export(run: Run, app: str) -> dict[str, Any]:
    """What ``app`` holds of ``run`` for the verifier API: its tables (``{object: {id: record}}``, none for the
    task desk) and the calls its pages made (``{tool, args, status}``), in order."""
    from salesgym.envs.workflows.tools import OWNER_OF_TABLE

    with run.lock:
        tables = run.env.replay().tables
        calls = [{"tool": c.tool, "args": c.args, "status": c.status} for c in run.calls if c.app == app]
    own = {name.split(".", 1)[1]: dict(rows) for name, rows in tables.items() if OWNER_OF_TABLE.get(name) == app}
    return {"run_id": run.run_id, "app": app, "tables": own, "calls": calls}


def _http(method: str, url: str, body: Any = None, token: str = "") -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            found: dict[str, Any] = json.load(response)
            return found
    except urllib.error.HTTPError as err:
        detail = err.read().decode("utf-8", "replace")[:300]
        raise RuntimeError(f"{method} {url}: HTTP {err.code}: {detail}") from None
    except urllib.error.URLError as err:
        raise RuntimeError(f"{method} {url}: {err.reason}") from None


def judge(run_id: str, apps: Mapping[str, str], verifier: str, verifier_run: str, app_token: str = "",
          operator_token: str = "") -> dict[str, Any]:  # fmt: skip
    """Collect each app's export of ``run_id`` (``apps``: app -> origin) into the verifier API's run
    ``verifier_run`` (already created there for the same instance) and return its verdict. The task desk
    (``task``) sends calls only."""
    base = verifier.rstrip("/")
    calls: list[dict[str, Any]] = []
    for app, origin in apps.items():
        out = _http("GET", f"{origin.rstrip('/')}/api/runs/{run_id}/export", token=app_token)
        if app != "task":
            _http("PUT", f"{base}/runs/{verifier_run}/state", {"app": app, "tables": out["tables"]}, operator_token)
        calls += out["calls"]
    # finish_task last, as an agent's trajectory ends with it; the rest in app order (no rule reads the order)
    calls.sort(key=lambda c: c["tool"] == "finish_task")
    if calls:
        _http("POST", f"{base}/runs/{verifier_run}/calls", {"calls": calls}, operator_token)
    return _http("POST", f"{base}/runs/{verifier_run}/verdict", {}, operator_token)


def outcome(score: Mapping[str, Any]) -> dict[str, Any]:
    """What two verdicts of the same instance must agree on whichever way the agent worked (tools or pages, one
    process or several): pass or fail, each assertion's outcome, the partial score and each global check.
    Timestamps, call counts and event numbers may differ (a page creates one record per form)."""
    return {"passed": score["passed"], "partial": score["partial"],
            "assertions": [(a["step"], a["name"], a["passed"]) for s in score["steps"] for a in s["assertions"]],
            "invariant": score["invariant"]["passed"], "audit": score["audit"]["passed"],
            "forbidden": score["forbidden"]["passed"]}  # fmt: skip
