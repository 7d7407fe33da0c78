"""A typed Python client for the HTTP service, on httpx.

:class:`Client` is one method per endpoint, answering with the service's own response models.
:class:`RemoteEnv` makes a remote session look like an in-process environment (``reset``, ``step``,
``observe``, ``clone``, ``tool_schemas``, ``instructions``), so ``salesgym.agents.base.rollout`` plays a policy
through the service unchanged. It retries a step whose answer was lost (connection reset, timeout) with the
same ``state_version``: the service answers a retry with the recorded result, so no step is applied twice.

>>> from salesgym.service_api.client import Client, RemoteEnv   # doctest: +SKIP
>>> env = RemoteEnv(Client("http://127.0.0.1:8765", token="..."), "territory-debug-v0")  # doctest: +SKIP
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel

from salesgym.service_api.models import (
    BenchmarkSplit,
    Closed,
    Created,
    EnvList,
    Health,
    Observation,
    ReplayReport,
    SessionList,
    SessionView,
    StepResult,
    ToolsView,
)

M = TypeVar("M", bound=BaseModel)


class ServiceError(Exception):
    """A 4xx/5xx answer: ``status``, the service's ``error`` code, its one-line ``detail``."""

    def __init__(self, status: int, error: str, detail: str, state_version: int | None = None) -> None:
        super().__init__(f"{status} {error}: {detail}")
        self.status, self.error, self.detail, self.state_version = status, error, detail, state_version


class Client:
    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, model: type[M] | None = None, **kwargs: Any) -> Any:
        response = self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = {}
            if not isinstance(body, dict):
                body = {}
            raise ServiceError(response.status_code, str(body.get("error", "http_error")),
                               str(body.get("detail", response.reason_phrase)), body.get("state_version"))
        data = response.json()
        return data if model is None else model.model_validate(data)

    # -- service ------------------------------------------------------------------------------------
    def health(self) -> Health:
        return self._call("GET", "/healthz", Health)  # type: ignore[no-any-return]

    def envs(self) -> list[str]:
        return self._call("GET", "/envs", EnvList).envs  # type: ignore[no-any-return]

    # -- agent side ---------------------------------------------------------------------------------
    def create(self, env_id: str, seed: int, **kwargs: Any) -> Created:
        return self._call("POST", "/sessions", Created,  # type: ignore[no-any-return]
                          json={"env_id": env_id, "seed": seed, "kwargs": kwargs})

    def create_task(self, split: str, task_id: str) -> Created:
        """A session of one benchmark task: the service picks the world and keeps its seed."""
        return self._call("POST", "/sessions", Created,  # type: ignore[no-any-return]
                          json={"task": {"split": split, "id": task_id}})

    def benchmark(self, split: str) -> BenchmarkSplit:
        return self._call("GET", f"/benchmark/{split}", BenchmarkSplit)  # type: ignore[no-any-return]

    def sessions(self) -> list[SessionView]:
        return self._call("GET", "/sessions", SessionList).sessions  # type: ignore[no-any-return]

    def session(self, session_id: str) -> SessionView:
        return self._call("GET", f"/sessions/{session_id}", SessionView)  # type: ignore[no-any-return]

    def observation(self, session_id: str) -> Observation:
        return self._call("GET", f"/sessions/{session_id}/observation", Observation)  # type: ignore[no-any-return]

    def tools(self, session_id: str) -> ToolsView:
        return self._call("GET", f"/sessions/{session_id}/tools", ToolsView)  # type: ignore[no-any-return]

    def step(self, session_id: str, action: Any, state_version: int) -> StepResult:
        body = {"state_version": state_version, "action": action}
        return self._call("POST", f"/sessions/{session_id}/step", StepResult, json=body)  # type: ignore[no-any-return]

    def clone(self, session_id: str) -> Created:
        return self._call("POST", f"/sessions/{session_id}/clone", Created)  # type: ignore[no-any-return]

    def replay(self, session_id: str) -> ReplayReport:
        return self._call("POST", f"/sessions/{session_id}/replay", ReplayReport)  # type: ignore[no-any-return]

    def close_session(self, session_id: str) -> Closed:
        return self._call("DELETE", f"/sessions/{session_id}", Closed)  # type: ignore[no-any-return]

    # -- operator side ------------------------------------------------------------------------------
    def score(self, session_id: str) -> dict[str, Any]:
        return self._call("GET", f"/sessions/{session_id}/score")  # type: ignore[no-any-return]

    def events(self, session_id: str, offset: int = 0, limit: int = 10_000) -> dict[str, Any]:
        return self._call("GET", f"/sessions/{session_id}/events",  # type: ignore[no-any-return]
                          params={"offset": offset, "limit": limit})

    def hidden_truth(self, session_id: str) -> dict[str, Any]:
        return self._call("GET", f"/sessions/{session_id}/hidden")  # type: ignore[no-any-return]

    def task_sessions(self, split: str) -> dict[str, Any]:
        """Every session opened for a task of ``split``, oldest first, with its recorded actions, and the
        fingerprint of the service's code."""
        return self._call("GET", f"/benchmark/{split}/sessions")  # type: ignore[no-any-return]

    # -- the verifier API (docs/serve.md): runs judged from state the apps store --------------------
    def create_run(self, seed: int, env_id: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """A practice run: the caller picks the instance, so it is never scored (without ``env_id``: the service's
        default, its first id whose family offers the verifier API)."""
        body = {"seed": seed, "kwargs": kwargs, **({} if env_id is None else {"env_id": env_id})}
        return self._call("POST", "/runs", json=body)  # type: ignore[no-any-return]

    def create_task_run(self, split: str, task_id: str) -> dict[str, Any]:
        """A run of one benchmark task: the service picks the instance and keeps its seed."""
        return self._call("POST", "/runs", json={"task": {"split": split, "id": task_id}})  # type: ignore[no-any-return]

    def task_runs(self, split: str) -> dict[str, Any]:
        """Every run opened for a task of ``split`` with its verdict once judged (operator)."""
        return self._call("GET", f"/benchmark/{split}/runs")  # type: ignore[no-any-return]

    def run(self, run_id: str) -> dict[str, Any]:
        return self._call("GET", f"/runs/{run_id}")  # type: ignore[no-any-return]

    def run_state(self, run_id: str, app: str | None = None) -> dict[str, Any]:
        params = {} if app is None else {"app": app}
        return self._call("GET", f"/runs/{run_id}/state", params=params)["state"]  # type: ignore[no-any-return]

    def store_state(self, run_id: str, app: str, tables: dict[str, Any]) -> dict[str, Any]:
        return self._call("PUT", f"/runs/{run_id}/state",  # type: ignore[no-any-return]
                          json={"app": app, "tables": tables})

    def record_calls(self, run_id: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
        return self._call("POST", f"/runs/{run_id}/calls", json={"calls": calls})  # type: ignore[no-any-return]

    def run_assertions(self, run_id: str, assertions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Ad-hoc assertions, or with None the task's own (operator)."""
        body = {"task": True} if assertions is None else {"assertions": assertions}
        return self._call("POST", f"/runs/{run_id}/assertions", json=body)  # type: ignore[no-any-return]

    def verdict(self, run_id: str) -> dict[str, Any]:
        return self._call("POST", f"/runs/{run_id}/verdict")  # type: ignore[no-any-return]

    def delete_run(self, run_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/runs/{run_id}")  # type: ignore[no-any-return]


class RemoteEnv:
    """A session behind the salesgym environment API. ``reset(seed)`` opens a new session (closing the last);
    one made by :meth:`for_task` opens a session of that benchmark task at every ``reset()`` (a new trial; the
    task's world and seed are the service's, so a seed given to ``reset`` is not used: episode loops written
    for in-process environments run unchanged)."""

    def __init__(self, client: Client, env_id: str, retries: int = 5, backoff_s: float = 0.05,
                 **kwargs: Any) -> None:
        self.client, self.env_id, self.kwargs = client, env_id, kwargs
        self.task: tuple[str, str] | None = None
        self.retries, self.backoff_s = retries, backoff_s
        self.session_id: str | None = None
        self.state_version = 0
        self._obs: dict[str, Any] = {}
        self._tools: list[dict[str, Any]] = []
        self._instructions = ""

    @classmethod
    def for_task(cls, client: Client, split: str, task_id: str, retries: int = 5) -> RemoteEnv:
        env = cls(client, client.benchmark(split).env_id, retries)
        env.task = (split, task_id)
        return env

    def reset(self, seed: int | None = None, options: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        if self.task is None and seed is None:
            raise ValueError("a remote session needs an explicit seed")
        if self.session_id is not None:
            self.close()
        if self.task is not None:
            created = self.client.create_task(*self.task)
        else:
            assert seed is not None
            created = self.client.create(self.env_id, seed, **self.kwargs)
        self._adopt(created)
        return self._obs, {"state_version": self.state_version, "instructions": self._instructions}

    def _adopt(self, created: Created) -> None:
        self.session_id, self.state_version = created.session_id, created.state_version
        self._obs = created.observation.model_dump()
        self._tools, self._instructions = created.tools, created.instructions

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        sid = self._require()
        for attempt in range(self.retries + 1):
            try:
                result = self.client.step(sid, action, self.state_version)
                break
            except httpx.TransportError:  # the answer may be lost after the step was applied: retry, same version
                if attempt == self.retries:
                    raise
                time.sleep(self.backoff_s * 2**attempt)
        self.state_version = result.state_version
        self._obs = result.observation.model_dump()
        return self._obs, result.reward, result.terminated, result.truncated, result.info

    def observe(self) -> dict[str, Any]:
        return self._obs

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self._tools

    def instructions(self) -> str:
        return self._instructions

    def clone(self) -> RemoteEnv:
        twin = RemoteEnv(self.client, self.env_id, self.retries, self.backoff_s, **self.kwargs)
        twin._adopt(self.client.clone(self._require()))
        return twin

    def close(self) -> None:
        if self.session_id is not None:
            self.client.close_session(self.session_id)
            self.session_id = None

    def _require(self) -> str:
        if self.session_id is None:
            raise RuntimeError("call reset() before using the environment")
        return self.session_id
