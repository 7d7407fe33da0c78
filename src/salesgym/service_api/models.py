"""Request and response bodies of the HTTP service: the OpenAPI schema is generated from these, and the
Python client reads responses into them. Only pydantic: importing this pulls in no web framework."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

JSONObject = dict[str, Any]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TaskRef(_Model):
    split: str = Field(description="a frozen benchmark split (GET /benchmark/{split})", min_length=1, max_length=100)
    id: str = Field(description="one of the split's task ids", min_length=1, max_length=100)


class CreateSession(_Model):
    """Either a world by ``env_id`` and ``seed`` (with ``kwargs``), or a benchmark ``task`` (nothing else)."""

    env_id: str | None = Field(None, description="a registered environment id (GET /envs)", max_length=200)
    kwargs: JSONObject = Field(default_factory=dict, description="keyword arguments for make(), JSON values only")
    seed: int | None = Field(None, description="the world seed", ge=0, lt=2**63)
    task: TaskRef | None = Field(None, description="a benchmark task: the service picks its world and seed")

    @model_validator(mode="after")
    def _one_kind(self) -> CreateSession:
        if self.task is not None and (self.env_id is not None or self.seed is not None or self.kwargs):
            raise ValueError("give a task alone, or env_id and seed (and kwargs) without a task")
        if self.task is None and (self.env_id is None or self.seed is None):
            raise ValueError("give env_id and seed, or a task")
        return self


class StepRequest(_Model):
    state_version: int = Field(
        description="the session's state_version this call expects; a retry with the same version and action "
        "returns the recorded result, another version gets 409",
        ge=0,
    )
    action: Any = Field(description='a tool call: {"tool": name, "args": {...}} or its JSON text; bad calls '
                        "are answered as data (status 'error'), like the environment's own step")


class Observation(_Model):
    text: str
    data: JSONObject


class SessionView(_Model):
    """What the agent may see of a session."""

    session_id: str
    env_id: str
    kwargs: JSONObject
    seed: int | None = Field(description="the world seed; null for a benchmark task (its seed is the operator's)")
    task: str | None = Field(None, description='the benchmark task, "split/task id", if the session is one')
    status: str = Field(description="open, closed or expired")
    steps: int
    state_version: int
    terminated: bool
    truncated: bool
    observation: Observation
    parent: str | None = None


class Created(SessionView):
    instructions: str
    tools: list[JSONObject] = Field(description="OpenAI function tools (strict); GET /sessions/{id}/tools for MCP")


class StepResult(_Model):
    session_id: str
    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: JSONObject = Field(description="tool_result (status, state_version, time_cost, resource_cost, "
                             "event_ids, output) and state_version")
    state_version: int
    step: int = Field(description="1-based index of this step in the session")
    replayed: bool = Field(description="true when this answers a retry with the recorded result")


class ToolsView(_Model):
    openai: list[JSONObject]
    mcp: list[JSONObject]
    instructions: str


class SessionList(_Model):
    sessions: list[SessionView]


class ReplayReport(_Model):
    """The session rebuilt from its durable record in a fresh environment and compared with the live one."""

    session_id: str
    steps: int
    state_version: int
    identical: bool
    event_log_hash: str | None = Field(None, description="operator only")


class Closed(_Model):
    session_id: str
    status: str


class EnvList(_Model):
    envs: list[str]


class Health(_Model):
    status: str
    version: str
    auth: bool
    open_sessions: int


class Problem(_Model):
    """Every 4xx answer: a machine-readable ``error`` code and a one-line ``detail``."""

    error: str
    detail: str
    state_version: int | None = None


class BenchmarkSplit(_Model):
    split: str
    env_id: str
    description: str
    private: bool
    sha256: str = Field(description="the frozen manifest's hash")
    tasks: list[str] = Field(description='task ids: open one with POST /sessions {"task": {"split", "id"}}')
