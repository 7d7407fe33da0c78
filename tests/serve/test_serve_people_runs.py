"""Verifier runs on the templates where simulated people act (``workflows-counterparty``: a prospect books from
the agent's link, a colleague reassigns an owner, a customer reschedules), through a real service on loopback.

The harness plays the apps as an external replica would: an in-process environment whose people are switched
off executes each call, the app stores its tables, the call is recorded (the service plays the people on the
run), and the app reads its tables back. The verdict must be the in-process verdict of the same calls: the
reference passes, doing nothing fails, undoing a person's change is the agent's change, and no request writes as
a person."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from serve_helpers import AGENT_A, OPERATOR, Server, in_process, running

pytest.importorskip("jq")

from salesgym.envs.workflows import packs
from salesgym.envs.workflows.apps.common import format_id
from salesgym.envs.workflows.contract import TASK_APP
from salesgym.envs.workflows.tasks.model import resolve
from salesgym.envs.workflows.tools import APP_OF, OWNER_OF_TABLE

PACK = "workflows-counterparty"
ACTING = sorted(t for t, spec in packs.shipped()[PACK].templates.items() if spec.actions)
COMPARED = ("passed", "partial", "primary", "assertions", "steps", "invariant", "forbidden", "violations")
SEED = 5


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running(tmp_path_factory.mktemp("people"), "--no-access-log") as s:
        yield s


def _send(server: Server, method: str, path: str, body: Any = None, token: str = AGENT_A) -> httpx.Response:
    return httpx.request(method, server.url + path, json=body, headers={"Authorization": f"Bearer {token}"},
                         timeout=60)  # fmt: skip


def _ok(response: httpx.Response) -> Any:
    assert response.status_code < 300, response.text
    return response.json()


class Replica:
    """The task's apps outside the service: the simulator with its people switched off."""

    def __init__(self, template: str, seed: int) -> None:
        self.env = in_process("workflows-v0", seed, [], template=template, pack=PACK)
        world = self.env._world
        self.env.start_world(dataclasses.replace(world, secret=dataclasses.replace(world.secret, actions=())))
        self.apps = list(world.task.apps)

    def tables(self, app: str) -> dict[str, Any]:
        return {name.split(".", 1)[1]: dict(rows) for name, rows in self.env._state.tables.items()
                if OWNER_OF_TABLE.get(name) == app}  # fmt: skip

    def load(self, state: dict[str, Any]) -> None:
        """Read the run's tables back (a person may have written them); new ids go past every id taken."""
        s = self.env._state
        for app, objects in state.items():
            for obj, rows in objects.items():
                table = f"{app}.{obj}"
                s.tables[table] = dict(rows)
                n = s.counters.get(table, 0)
                while format_id(table, n + 1, self.env._world.seed) in rows:
                    n += 1
                if n:
                    s.counters[table] = n


def _played(server: Server, template: str, actions: list[Any], read_back: bool = True,
            solution: bool = False) -> tuple[dict[str, Any], list[Any]]:  # fmt: skip
    """A run played call by call (``solution``: the template's reference, resolved against the outputs as they
    come); its verdict and what the people did."""
    replica = Replica(template, SEED)
    run_id = _ok(_send(server, "POST", "/runs", {"kwargs": {"template": template, "pack": PACK}, "seed": SEED}))[
        "run_id"]
    secret, outputs, happened = replica.env._world.secret, [], []
    for action in actions:
        call = resolve(action, secret.params, outputs) if solution else action
        info = replica.env.step(call)[4]
        outputs.append(info["tool_result"]["output"])
        ok = info["tool_result"]["status"] == "ok"
        app = APP_OF.get(call["tool"], TASK_APP)
        if ok and app != TASK_APP:
            _ok(_send(server, "PUT", f"/runs/{run_id}/state", {"app": app, "tables": replica.tables(app)}))
        answer = _ok(_send(server, "POST", f"/runs/{run_id}/calls", {"calls": [
            {"tool": call["tool"], "args": call.get("args", {}), "status": "ok" if ok else "error"}]}))
        happened += answer["people"]
        if read_back:
            replica.load(_ok(_send(server, "GET", f"/runs/{run_id}/state"))["state"])
    return _ok(_send(server, "POST", f"/runs/{run_id}/verdict", None, OPERATOR)), happened


def _local(template: str, actions: list[Any], solution: bool = False) -> Any:
    env = in_process("workflows-v0", SEED, [], template=template, pack=PACK)
    secret, outputs = env._world.secret, []
    for action in actions:
        info = env.step(resolve(action, secret.params, outputs) if solution else action)[4]
        outputs.append(info["tool_result"]["output"])
    return env


def _same(remote: dict[str, Any], local: dict[str, Any]) -> None:
    assert {k: remote[k] for k in COMPARED if k != "forbidden"} == {k: local[k] for k in COMPARED
                                                                    if k != "forbidden"}
    assert remote["forbidden"]["passed"] == local["forbidden"]["passed"]


FINISH = {"tool": "finish_task", "args": {"summary": "done"}}


@pytest.mark.parametrize("template", ACTING)
def test_the_reference_played_through_a_run_passes_with_the_in_process_verdict(server: Server,
                                                                                template: str) -> None:  # fmt: skip
    solution = list(packs.shipped()[PACK].templates[template].solution)
    local = _local(template, [*solution, FINISH], solution=True)
    expected = local.score()
    assert expected["passed"]
    remote, happened = _played(server, template, [*solution, FINISH], solution=True)
    assert remote["passed"]
    _same(remote, expected)
    acted = [h for h in happened if h["kind"] == "user_acted"]
    assert [h["action"] for h in acted] == list(local._state.acted)  # the same person acted, once
    assert [h["text"] for h in happened if h["kind"] == "message_received"] == [
        m["text"] for m in local._state.inbox if m["turn"] in local._state.acted]


@pytest.mark.parametrize("template", ACTING)
def test_doing_nothing_fails_as_in_process(server: Server, template: str) -> None:
    remote, _ = _played(server, template, [FINISH])
    expected = _local(template, [FINISH]).score()
    assert not remote["passed"] and not expected["passed"]
    _same(remote, expected)


REASSIGN = "user-owner-reassigned"


def _owner_back(template: str) -> list[Any]:
    """The reference, then the owner set back to who it was before the colleague's reassignment."""
    env = in_process("workflows-v0", SEED, [], template=template, pack=PACK)
    p = env._world.secret.params
    old = env._world.tables["crm.contacts"][p["contact_id"]]["properties"]["hubspot_owner_id"]
    back = {"tool": "hubspot-batch-update-objects", "args": {"objectType": "contacts", "inputs": [
        {"id": p["contact_id"], "properties": {"hubspot_owner_id": old}}]}}
    return [back]


def test_undoing_the_persons_change_is_the_agents_and_fails_as_in_process(server: Server) -> None:
    solution = list(packs.shipped()[PACK].templates[REASSIGN].solution)
    local = _local(REASSIGN, [*solution], solution=True)
    assert local._state.acted  # the colleague has reassigned the contact by now
    actions = [*_resolved(REASSIGN, solution), *_owner_back(REASSIGN), FINISH]
    expected = _local(REASSIGN, actions).score()
    assert not expected["passed"] and expected["violations"].get("invariant")
    remote, _ = _played(server, REASSIGN, actions)
    assert not remote["passed"]
    _same(remote, expected)


def test_an_app_that_does_not_read_back_undoes_the_person(server: Server) -> None:
    """An app that stores its old tables over the person's change has changed it back: the agent's change."""
    solution = _resolved(REASSIGN, list(packs.shipped()[PACK].templates[REASSIGN].solution))
    remote, happened = _played(server, REASSIGN, [*solution, FINISH], read_back=False)
    assert [h["action"] for h in happened if h["kind"] == "user_acted"] == ["reassign"]
    assert not remote["passed"] and remote["violations"].get("invariant")


def _resolved(template: str, solution: list[Any]) -> list[Any]:
    """The reference's calls with their outputs filled in, as played in process."""
    env = _local(template, solution, solution=True)
    return [{"tool": e.payload["tool"], "args": e.payload["args"]} for e in env._log if e.kind == "tool_completed"]


@pytest.mark.parametrize("template", ACTING)
def test_an_agent_cannot_write_as_a_person(server: Server, template: str) -> None:
    """What a person would write, stored by the app before the person acts, is the agent's change (and, like the
    same call in process, an unexpected one); no body field names a writer."""
    local = _local(template, _resolved(template, list(packs.shipped()[PACK].templates[template].solution)))
    person = {name: rows for name, rows in local._state.tables.items()
              if rows != local._world.tables.get(name) and OWNER_OF_TABLE[name] in local._world.task.apps}
    run_id = _ok(_send(server, "POST", "/runs", {"kwargs": {"template": template, "pack": PACK}, "seed": SEED}))[
        "run_id"]
    for bad in ({"actor": "user:prospect"}, {"by": "user:colleague"}):
        for path, body in ((f"/runs/{run_id}/state", {"app": "crm", "tables": {}, **bad}),):
            r = _send(server, "PUT", path, body)
            assert r.status_code == 422, r.text
        r = _send(server, "POST", f"/runs/{run_id}/calls", {"calls": [{**FINISH, **bad}]})
        assert r.status_code == 422, r.text
    for app in local._world.task.apps:  # the whole end state of the reference, the person's part included
        tables = {n.split(".", 1)[1]: rows for n, rows in person.items() if OWNER_OF_TABLE[n] == app}
        if tables:
            _ok(_send(server, "PUT", f"/runs/{run_id}/state", {"app": app, "tables": tables}))
    _ok(_send(server, "POST", f"/runs/{run_id}/calls", {"calls": [{**FINISH, "status": "ok"}]}))
    remote = _ok(_send(server, "POST", f"/runs/{run_id}/verdict", None, OPERATOR))
    assert not remote["passed"] and remote["violations"].get("invariant")
    mine = {(c["table"], c["id"]) for c in remote["invariant"]["unexpected"]}
    theirs = {(e.payload["table"], e.payload["id"]) for e in local._log
              if e.kind.startswith("record_") and e.actor.startswith("user:")}  # fmt: skip
    assert mine & theirs  # what the person did in process is the agent's here


def test_a_task_without_people_answers_calls_as_before(server: Server) -> None:
    run_id = _ok(_send(server, "POST", "/runs", {"kwargs": {"template": "policy-lead-routing", "pack": PACK},
                                                 "seed": SEED}))["run_id"]  # fmt: skip
    answer = _ok(_send(server, "POST", f"/runs/{run_id}/calls", {"calls": [FINISH]}))
    assert "people" not in answer and answer["calls"] == 1


MALFORMED = [
    (REASSIGN, "crm", {"contacts": "contact_id"}, [{}, {"properties": {}}, {"properties": {"x": [1]}}]),
    ("user-books-from-link", "scheduler", {"scheduling_links": None}, [{}, {"booking_url": 7, "owner": []}]),
    ("user-reschedules", "scheduler", {"invitees": None}, [{"email": "x", "status": "active", "event": 3}]),
]


@pytest.mark.parametrize(("template", "app", "where", "records"), MALFORMED)
def test_records_in_another_shape_leave_the_people_idle_not_a_server_error(
        server: Server, template: str, app: str, where: dict[str, Any], records: list[Any]) -> None:  # fmt: skip
    """An app may store records its platform would never hold: the person acts on what is there or finds nothing
    to act on (the answer is the run, never a 500), and the run is still judged."""
    env = in_process("workflows-v0", SEED, [], template=template, pack=PACK)
    [(obj, param)] = where.items()
    key = str(env._world.secret.params[param]) if param else "X1"
    action = env._world.secret.actions[0]
    trigger = {"tool": action["after"][0], "args": {"body": "https://calendly.example/d/x"}} if action["after"] else {
        "tool": "hubspot-list-owners", "args": {}}
    for record in records:
        run_id = _ok(_send(server, "POST", "/runs", {"kwargs": {"template": template, "pack": PACK},
                                                     "seed": SEED}))["run_id"]  # fmt: skip
        _ok(_send(server, "PUT", f"/runs/{run_id}/state", {"app": app, "tables": {obj: {key: record}}}))
        answer = _send(server, "POST", f"/runs/{run_id}/calls", {"calls": [trigger, trigger, trigger]})
        assert answer.status_code == 200 and isinstance(answer.json()["people"], list), answer.text
        assert _send(server, "POST", f"/runs/{run_id}/verdict", None, OPERATOR).status_code == 200


@pytest.mark.parametrize("template", [REASSIGN, "policy-lead-routing"])
@pytest.mark.parametrize("part", ["properties", "attributes", "relationships"])
def test_a_record_whose_fields_are_not_an_object_is_refused(server: Server, template: str, part: str) -> None:
    run_id = _ok(_send(server, "POST", "/runs", {"kwargs": {"template": template, "pack": PACK}, "seed": SEED}))[
        "run_id"]
    for bad in (None, [], "x", 1):
        r = _send(server, "PUT", f"/runs/{run_id}/state", {"app": "crm", "tables": {"contacts": {"1": {part: bad}}}})
        assert r.status_code == 422 and r.json()["error"] == "invalid_table", r.text
        assert f"{part} must be an object" in r.json()["detail"]
    assert _send(server, "POST", f"/runs/{run_id}/verdict", None, OPERATOR).status_code == 200
