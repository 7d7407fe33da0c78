"""Request bodies of the HTTP verifier API (``verifier_api.py``); only pydantic."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from salesgym.service_api.models import TaskRef

JSONObject = dict[str, Any]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateRun(_Model):
    """A benchmark ``task`` (the service resolves its world and seed; the run counts), or an instance by
    ``env_id``, ``kwargs`` and ``seed`` (a practice run: never scored)."""

    env_id: str | None = Field(None, max_length=200, description="a registered id whose family offers this API "
                               "(default: the first such id, workflows-v0)")
    kwargs: JSONObject = Field(default_factory=dict, description='keyword arguments for make(), e.g. {"template": '
                               '"crm-closed-won"}')
    seed: int | None = Field(None, description="the instance seed: a practice run", ge=0, lt=2**63)
    task: TaskRef | None = Field(None, description="a benchmark task: the service picks its world and seed")

    @model_validator(mode="after")
    def _one_kind(self) -> CreateRun:
        if self.task is not None and (self.env_id is not None or self.seed is not None or self.kwargs):
            raise ValueError("give a task alone, or a seed (with env_id and kwargs) for a practice run")
        if self.task is None and self.seed is None:
            raise ValueError("give a task, or a seed for a practice run")
        return self


class StoreState(_Model):
    app: str = Field(description="the app storing its state: one of the task's apps", max_length=40)
    tables: dict[str, JSONObject] = Field(description="{object: {id: record}}, e.g. {\"contacts\": {\"101\": "
                                          "{...}}}; objects not named keep what they hold")


class Call(_Model):
    tool: str = Field(max_length=100)
    args: JSONObject = Field(default_factory=dict)
    status: Literal["ok", "error"] = "ok"


class RecordCalls(_Model):
    calls: list[Call] = Field(description="the agent's calls, in order (a refused call has status error); "
                              "finish_task's summary is what a rubric on the summary reads")


class AssertionSpec(_Model):
    name: str | None = Field(None, max_length=200)
    expr: str = Field(description="a jq program over the state document {app: {object: [records]}}")
    op: str = Field(description="equals, not_equals, contains, count, exists, gt, gte, lt, lte, matches, in")
    expected: Any = True
    step: int | None = Field(None, ge=0)


class RunAssertions(_Model):
    assertions: list[AssertionSpec] | None = Field(None, description="ad-hoc assertions; omit (or set task) to run "
                                                   "the task's own (operator only)")
    task: bool = Field(False, description="run the task's own assertions (operator only)")
