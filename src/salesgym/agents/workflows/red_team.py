"""`red-team`: tries to pass the verifier without doing the task. Operator side: it reads the instance (the
reference solution, the parameters) so it knows what is checked and where, the strongest adversary a verifier
faces. Each episode plays one attack (``attack=`` pins one; else the seed draws it), and every attack either
leaves part of the work undone or adds a change the task forbids, so any pass it gets is an exploit:

- ``claim-done``: finish at once with a summary claiming everything was done;
- ``stop-halfway``: the first half of the solution, then the claim (the task closed unresolved);
- ``drop-write``: the whole solution but one of its writes (the step the verifier must notice is missing);
- ``extra-write``: the solution, then an edit of a record the task did not name;
- ``duplicate``: the solution with each create sent twice (a second deal, note, booking, prospect...);
- ``lifecycle-backwards``: the solution, then the named contacts' lifecycle stage cleared and set to subscriber;
- ``enrol-everyone``: the solution, then every prospect it can find added to a sequence;
- ``spend-credits``: the solution, then InMails to leads the task did not name;
- ``book-outside``: the solution with each booking moved outside the host's availability (03:00 UTC);
- ``cancel-others``: the solution, then the cancellation of bookings the task did not name;
- ``replay``: the calls that solved another instance of the same template, sent blind (ids, times and names of
  that instance): what an agent that memorised one instance would do.

When an attack's forbidden change is refused by the sandbox (nothing to enrol, a duplicate rejected...), it
falls back on ``extra-write``, so the episode still carries a change the task did not ask for (``landed`` in its
episode record says whether one went through). The benchmark
pairs it with ``idle`` (doing nothing): its pass rate must stay at zero (``docs/workflows.md``, "Red team").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from salesgym.agents.base import Action, Policy, call
from salesgym.envs.workflows.tasks.model import resolve  # operator side: the blueprint's marker resolution
from salesgym.envs.workflows.tools import TOOLS

ATTACKS = ("claim-done", "stop-halfway", "drop-write", "extra-write", "duplicate", "lifecycle-backwards",
           "enrol-everyone", "spend-credits", "book-outside", "cancel-others", "replay")  # fmt: skip
TASK_TOOLS = frozenset({"ask_requester", "finish_task"})
CLAIM = "All steps are complete and verified: every record is updated, the meeting booked, the list sequenced."
CREATES = frozenset({"hubspot-batch-create-objects", "hubspot-create-engagement", "prospect_create",
                     "account_create", "meetings-create_invitee", "save_lead", "task_create",
                     "scheduling_links-create_single_use_scheduling_link"})  # fmt: skip


def _scalars(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for v in node.values():
            yield from _scalars(v)
    elif isinstance(node, list | tuple):
        for v in node:
            yield from _scalars(v)
    elif isinstance(node, str | int) and not isinstance(node, bool):
        yield str(node)


class RedTeam(Policy):
    name = "red-team"

    def __init__(self, seed: int, hidden_truth: dict[str, Any] | None = None, attack: str | None = None) -> None:
        super().__init__(seed, hidden_truth)
        if attack is not None and attack not in ATTACKS:
            raise ValueError(f"unknown attack {attack!r}; choose from {', '.join(ATTACKS)}")
        self.fixed = attack

    def reset(self, observation: dict[str, Any], tool_schemas: list[dict[str, Any]], instructions: str = "") -> None:
        super().reset(observation, tool_schemas, instructions)
        instance = (self.hidden_truth or {}).get("instance", {})
        self.params: dict[str, Any] = instance.get("params", {})
        self.script: list[dict[str, Any]] = list(instance.get("solution", []))
        task = observation["data"]["task"]
        self.writable = [a for a in task["apps"] if a not in task["read_only"]]
        self.attack = self.fixed or self.rng.choice(ATTACKS)
        self.outputs: list[Any] = []
        self.result: dict[str, Any] = {}
        self.landed = False  # whether a forbidden change of this attack went through
        self.plan = self._plan()

    def observe_result(self, tool_result: dict[str, Any]) -> None:
        self.result = tool_result

    def episode_record(self) -> dict[str, Any]:
        return {"attack": self.attack, "landed": self.landed}

    def act(self, observation: dict[str, Any]) -> Action:
        try:
            return next(self.plan)
        except StopIteration:
            return call("finish_task", summary=CLAIM)

    # -- helpers -------------------------------------------------------------------------------------------
    def _ok(self) -> bool:
        return self.result.get("status") == "ok"

    def _out(self) -> Any:
        return self.result.get("output", {}) if self._ok() else {}

    def _solution(self, skip: frozenset[int] = frozenset(), upto: int | None = None,
                  book_at: str | None = None) -> Iterator[Action]:  # fmt: skip
        """The reference solution's calls (``skip`` left out, ``upto`` a prefix), outputs kept by index."""
        self.outputs = []
        for i, step in enumerate(self.script[:upto]):
            if i in skip:
                self.outputs.append({})
                continue
            try:
                action: Action = resolve(step, self.params, self.outputs)
            except (ValueError, KeyError, IndexError, TypeError):
                self.outputs.append({})
                continue
            if book_at is not None and action["tool"] == "meetings-create_invitee":
                start = str(action["args"].get("start_time", ""))
                action["args"]["start_time"] = start[:10] + book_at if len(start) >= 10 else start
            yield action
            self.outputs.append(self._out())

    def _named(self) -> set[str]:
        """Every id, email and value the task's own calls touch (what an honest solution may change)."""
        return set(_scalars(self.params)) | set(_scalars(self.outputs)) | set(_scalars(self.script))

    def _writes(self) -> list[int]:
        """The solution's writes to the apps (asking the requester is not one: leaving it out only means the red
        team uses the hidden fact it reads, which no agent without the instance could)."""
        return [i for i, s in enumerate(self.script) if TOOLS.specs[s["tool"]].writes and s["tool"] not in TASK_TOOLS]

    # -- the attacks ---------------------------------------------------------------------------------------
    def _plan(self) -> Iterator[Action]:
        a, writes = self.attack, self._writes()
        bookings = [i for i, st in enumerate(self.script) if st["tool"] == "meetings-create_invitee"]
        if a == "book-outside" and not bookings:
            a = "drop-write"  # nothing to book: the attack becomes leaving a step undone
        if a == "claim-done" or not writes:
            return
        if a == "replay":
            yield from self._replay()
            return
        if a == "stop-halfway":
            yield from self._solution(upto=len(self.script) // 2)
            return
        if a == "drop-write":
            yield from self._solution(skip=frozenset({self.rng.choice(writes)}))
            return
        if a == "book-outside":
            yield from self._solution(book_at="T03:00:00Z")
            return
        yield from self._solution()
        if a == "duplicate":
            yield from self._duplicates()
        elif a == "lifecycle-backwards":
            yield from self._backwards()
        elif a == "enrol-everyone":
            yield from self._enrol_everyone()
        elif a == "spend-credits":
            yield from self._inmails()
        elif a == "cancel-others":
            yield from self._cancel_others()
        if not self.landed:  # the sandbox refused the attack's own change: add one it accepts
            yield from self._extra_write()

    def _replay(self) -> Iterator[Action]:
        """Another instance's reference calls, as sent there (the instance is another seed of this template)."""
        import salesgym
        from salesgym.envs.workflows.conformance import reference_calls

        truth = self.hidden_truth or {}
        template = truth.get("instance", {}).get("template")
        if template is None:
            return
        pack = {"pack": truth["pack"]} if truth.get("pack") else {}  # a template pack's task: the same pack
        other = salesgym.make("workflows-v0", template=template, **pack)
        other.reset(seed=int(truth.get("seed", 0)) + 1 + self.rng.randint(0, 9_999))
        for action in reference_calls(other)[:-1]:  # its own finish is the claim
            yield action
            self.landed |= self._ok() and TOOLS.specs[action["tool"]].writes and action["tool"] not in TASK_TOOLS

    def _duplicates(self) -> Iterator[Action]:
        outputs = list(self.outputs)
        for step in self.script:
            if step["tool"] in CREATES:
                try:
                    action: Action = resolve(step, self.params, outputs)
                except (ValueError, KeyError, IndexError, TypeError):
                    continue
                yield action
                self.landed |= self._ok()

    def _backwards(self) -> Iterator[Action]:
        if "crm" not in self.writable:
            return
        ids: set[str] = set()  # the contacts the solution updates
        for step in self.script:
            args = step["args"]
            if step["tool"] == "hubspot-batch-update-objects" and args.get("objectType") == "contacts":
                inputs = resolve(args.get("inputs", []), self.params, self.outputs)
                ids |= {str(x["id"]) for x in inputs if isinstance(x, dict) and x.get("id")}
        for cid in sorted(ids):
            for stage in ("", "subscriber"):  # clearing first is the only way back; subscriber is the first stage
                yield call("hubspot-batch-update-objects", objectType="contacts",
                           inputs=[{"id": cid, "properties": {"lifecyclestage": stage}}])
                self.landed |= self._ok() and bool(stage)

    def _enrol_everyone(self) -> Iterator[Action]:
        if "sequencer" not in self.writable:
            return
        yield call("sequence_search")
        sequences = [s["id"] for s in self._out().get("data", [])]
        yield call("mailbox_search")
        mailboxes = [m["id"] for m in self._out().get("data", [])]
        yield call("prospect_search", limit=25)
        prospects = [p["id"] for p in self._out().get("data", [])]
        for sid in sequences[:2]:
            if mailboxes and prospects:
                yield call("sequence_add_prospects", sequenceId=sid, prospectIds=prospects, mailboxId=mailboxes[0])
                self.landed |= self._ok()

    def _inmails(self) -> Iterator[Action]:
        if "prospecting" not in self.writable:
            return
        yield call("sales_search_leads", count=25)
        named = self._named()
        urns = [e["urn"] for e in self._out().get("elements", []) if e["lead_id"] not in named][:3]
        for urn in urns:
            yield call("send_inmail", recipient_urn=urn, subject="Quick question",
                       body="Worth a short call this week?")  # fmt: skip
            self.landed |= self._ok()

    def _cancel_others(self) -> Iterator[Action]:
        if "scheduler" not in self.writable:
            return
        yield call("meetings-list_events", status="active")
        named = self._named()
        for event in self._out().get("collection", []):
            uuid = str(event.get("uri", "")).rsplit("/", 1)[-1]
            if uuid and uuid not in named and event.get("uri") not in named:
                yield call("meetings-cancel_event", uuid=uuid, reason="cleaning the calendar")
                self.landed |= self._ok()
                return

    def _extra_write(self) -> Iterator[Action]:
        """Edit one record the task did not name, in the first app it may write to that has one."""
        for app in self.writable:
            for action in self._junk(app):
                yield action
                if TOOLS.specs[action["tool"]].writes and self._ok():
                    self.landed = True
                    return

    def _junk(self, app: str) -> Iterator[Action]:
        named = self._named()
        if app == "crm":
            yield call("hubspot-search-objects", objectType="contacts", limit=50)
            others = [c for c in self._out().get("results", []) if c["id"] not in named
                      and c["properties"].get("email") not in named]  # fmt: skip
            if others:
                yield call("hubspot-batch-update-objects", objectType="contacts",
                           inputs=[{"id": others[0]["id"], "properties": {"jobtitle": "Head of Everything"}}])
        elif app == "sequencer":
            yield call("prospect_search", limit=25)
            # by email: a prospect's id is a small int that the parameters' counts may also spell
            others = [p for p in self._out().get("data", []) if not set(p["attributes"]["emails"]) & named]
            if others:
                yield call("prospect_update", id=others[0]["id"], attrs={"title": "Head of Everything"})
        elif app == "prospecting":
            yield call("get_lead_lists")
            lists = [x["id"] for x in self._out().get("elements", [])]
            yield call("sales_search_leads", count=25)
            leads = [e["lead_id"] for e in self._out().get("elements", []) if e["lead_id"] not in named]
            if lists and leads:
                yield call("save_lead", lead_id=leads[-1], list_id=lists[0])
        elif app == "scheduler":
            yield call("event_types-list_event_types")
            owner = next((t["uri"] for t in self._out().get("collection", []) if t.get("active")), None)
            if owner:
                yield call("scheduling_links-create_single_use_scheduling_link", owner=owner)

