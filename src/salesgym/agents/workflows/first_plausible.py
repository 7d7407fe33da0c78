"""`first-plausible`: the "first plausible action" heuristic. It reads the request, looks up the first email it
names in the first app the task may use, makes the one change the request's wording suggests most directly
(a lifecycle stage, a lead status, or a booking at the first open slot it finds), and declares the task done.
One plausible action is rarely the whole workflow: it is the baseline a real agent must beat."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from salesgym.agents.base import Action, Policy, call

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
STATUS_WORDS = {"in progress": "IN_PROGRESS", "connected": "CONNECTED", "attempted to contact": "ATTEMPTED_TO_CONTACT",
                "open": "OPEN"}  # fmt: skip
EVENT_WORDS = ("30 Minute Demo", "Discovery Call", "Technical Deep Dive")


class FirstPlausible(Policy):
    name = "first-plausible"

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        task = observation["data"]["task"]
        self.prompt: str = task["prompt"]
        self.apps: list[str] = task["apps"]
        self.now: str = observation["data"]["clock"]["now"]
        self.result: dict[str, Any] = {}
        self.plan = self._plan()

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.result = tool_result

    def act(self, observation: dict[str, Any]) -> Action:
        try:
            return next(self.plan)
        except StopIteration:
            return call("finish_task", summary="done")

    def _plan(self) -> Iterator[Action]:
        emails = EMAIL.findall(self.prompt)
        email = emails[0] if emails else None
        low = self.prompt.lower()
        if "scheduler" in self.apps and email and "book" in low:
            yield from self._book(email)
            return
        if "crm" in self.apps and email:
            yield call("hubspot-search-objects", objectType="contacts", filterGroups=[
                {"filters": [{"propertyName": "email", "operator": "EQ", "value": email}]}])
            found = self.result.get("output", {}).get("results", []) if self.result.get("status") == "ok" else []
            if not found:
                return
            props: dict[str, str] = {}
            if "sales-qualified" in low:
                props["lifecyclestage"] = "salesqualifiedlead"
            for words, status in STATUS_WORDS.items():
                if f"status to {words}" in low or f"status {words}" in low:
                    props["hs_lead_status"] = status
                    break
            if props:
                yield call("hubspot-batch-update-objects", objectType="contacts",
                           inputs=[{"id": found[0]["id"], "properties": props}])
        elif "sequencer" in self.apps:
            yield call("prospect_search", email=email) if email else call("sequence_search")
        elif "prospecting" in self.apps:
            yield call("sales_search_leads", count=10)

    def _book(self, email: str) -> Iterator[Action]:
        yield call("event_types-list_event_types")
        types = self.result.get("output", {}).get("collection", []) if self.result.get("status") == "ok" else []
        wanted = next((w for w in EVENT_WORDS if w.lower() in self.prompt.lower()), EVENT_WORDS[0])
        et = next((t for t in types if t["name"] == wanted), None)
        if et is None:
            return
        start = datetime.fromisoformat(self.now.replace("Z", "+00:00")) + timedelta(hours=1)
        yield call("event_types-list_event_type_available_times", event_type=et["uri"],
                   start_time=start.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   end_time=(start + timedelta(days=7)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        slots = self.result.get("output", {}).get("collection", []) if self.result.get("status") == "ok" else []
        if slots:
            yield call("meetings-create_invitee", event_type=et["uri"], start_time=slots[0]["start_time"],
                       invitee={"name": email.split("@")[0], "email": email, "timezone": "UTC"})
