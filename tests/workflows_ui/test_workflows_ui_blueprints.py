"""UI-level blueprints: every call of every template's reference solution has a macro; its forms submit exactly
the call (a batch split record by record, which joins back into the call); every template's UI steps read in
words. Fast: no browser (the browser sweep is the campaign test)."""

from __future__ import annotations

from typing import Any

import pytest

import salesgym
from salesgym.envs.workflows.tasks.model import resolve
from salesgym.envs.workflows.tasks.templates import TEMPLATES
from salesgym.envs.workflows_ui.blueprints import MACROS, READS, describe, merged, writes_of


def _joined(parts: list[Any]) -> dict[str, Any] | None:
    """The one call the forms of a batch amount to."""
    calls = [p.call for p in parts if p.call is not None]
    if not calls:
        return None
    if len(calls) == 1:
        return calls[0]
    first = calls[0]
    return {"tool": first["tool"], "args": {**first["args"], "inputs": [i for c in calls for i in c["args"]["inputs"]]}}


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_each_call_of_the_reference_solution_is_its_forms(template: str) -> None:
    env = salesgym.make("workflows-v0", template=template)
    env.reset(seed=1)
    secret = env._world.secret
    outputs: list[dict[str, Any]] = []
    for action in secret.solution:
        call = resolve(action, secret.params, outputs)
        parts = writes_of(call, lambda tool, args: env.clone().step({"tool": tool, "args": dict(args)})[4][
            "tool_result"]["output"])  # fmt: skip
        assert parts and all(p.actions for p in parts), call["tool"]
        if call["tool"] in READS:
            assert all(p.call is None and p.actions[0].kind == "goto" for p in parts)
        elif _joined(parts) is None:  # a no-op a person has no button for: finishing a finished enrolment
            assert call["tool"] == "sequence_state_finish"
            twin, start = env.clone(), len(env.event_log())
            twin.step(call)
            assert [e["kind"] for e in twin.event_log()[start:]] == ["tool_completed"]  # it changes nothing
        else:
            joined = _joined(parts)
            assert joined is not None and joined["tool"] == call["tool"]
            if call["tool"] == "hubspot-batch-update-objects" and joined["args"] != call["args"]:
                _same_records_after(env, call, joined)  # the edit form leaves out a value the record holds
            else:
                assert joined["args"] == call["args"]
            assert parts[-1].actions[-1].kind == "click"  # every form ends with its button
        result = env.step(call)[4]["tool_result"]
        assert result["status"] == "ok", (call, result)
        outputs.append(merged(call, [result["output"]], parts[:1]))


def _same_records_after(env: Any, call: dict[str, Any], form: dict[str, Any]) -> None:
    """The edit form's call (only the properties it changes) leaves the records as the solution's call does."""
    kind, ids = call["args"]["objectType"], [{"id": i["id"]} for i in call["args"]["inputs"]]
    after = []
    for made in (call, form):
        twin = env.clone()
        assert twin.step(made)[4]["tool_result"]["status"] == "ok"
        read = {"tool": "hubspot-batch-read-objects", "args": {"objectType": kind, "inputs": ids}}
        after.append([r["properties"] for r in twin.step(read)[4]["tool_result"]["output"]["results"]])
    assert after[0] == after[1]
    sent = {k for i in form["args"]["inputs"] for k in i["properties"]}
    assert sent < {k for i in call["args"]["inputs"] for k in i["properties"]}


def test_the_edit_form_sends_only_what_the_person_changed() -> None:
    """champion-left-replace, seed 1: the solution sets the new champion's company and job title, and the record
    already holds that title; the CRM's edit form (like the product's) sends the company alone, and nothing at all
    when nothing changed."""
    from salesgym.envs.workflows_ui.blueprints import crm_update

    held = {"company": "Hooli", "jobtitle": "VP Operations"}
    look = lambda tool, args: {"results": [{"id": "7", "properties": held}]}  # noqa: E731
    update = {"objectType": "contacts", "inputs": [{"id": "7", "properties": {"company": "Pied Piper Labs",
                                                                              "jobtitle": "VP Operations"}}]}
    (part,) = crm_update(update, look)
    assert part.call == {"tool": "hubspot-batch-update-objects", "args": {
        "objectType": "contacts", "inputs": [{"id": "7", "properties": {"company": "Pied Piper Labs"}}]}}
    (same,) = crm_update({"objectType": "contacts", "inputs": [{"id": "7", "properties": held}]}, look)
    assert same.call is None and same.actions[-1].target == "btn-save"


def test_every_tool_a_solution_uses_has_a_macro_and_every_write_tool_too() -> None:
    from salesgym.envs.workflows.tools import TOOLS

    used = {s["tool"] for t in TEMPLATES.values() for s in t.solution}
    assert used <= set(MACROS) | set(READS)
    writes = {name for name, spec in TOOLS.specs.items() if spec.writes}
    assert writes <= set(MACROS) | {"ask_requester", "reply_message", "finish_task"}


def test_a_templates_ui_steps_read_in_words() -> None:
    lines = describe(TEMPLATES["crm-lifecycle-reset"])
    assert lines[0] == "1. hubspot-batch-update-objects"
    assert any("press Save" in line for line in lines) and any("{contact_id}" in line for line in lines)
    for template in TEMPLATES.values():
        assert len(describe(template)) > len(template.solution)


def test_the_reference_compares_calls_as_the_tool_reads_them() -> None:
    """A meeting form leaves out an empty deal list where the solution sends ``[]`` (pipeline-no-show,
    hygiene-double-booking): the same call; another deal list is another call."""
    from salesgym.agents.workflows_ui.reference import as_read

    form = {"type": "MEETING", "ownerId": 61000001, "associations": {"contactIds": [101]},
            "metadata": {"timestamp": "2026-07-17T14:00:00Z", "title": "Demo"}}  # fmt: skip
    solution = {**form, "associations": {"contactIds": [101], "dealIds": []}}
    other = {**form, "associations": {"contactIds": [101], "dealIds": [9001]}}
    read = as_read("hubspot-create-engagement", form)
    assert read == as_read("hubspot-create-engagement", solution) != as_read("hubspot-create-engagement", other)
    assert as_read("hubspot-create-engagement", {"type": 3}) == {"type": 3}  # refused arguments: as sent


def test_the_reference_reads_a_list_of_ids_as_a_selection() -> None:
    """The enrol dialog submits the ticked prospects in the order the page lists them, the solution in the order
    it found them (seq-webinar-followup, seed 1): the same selection; another selection is another call."""
    from salesgym.agents.workflows_ui.reference import as_read

    tool = "sequence_add_prospects"
    form = {"sequenceId": 79140, "prospectIds": [18362, 34607, 76480], "mailboxId": 34981}
    solution = {**form, "prospectIds": [18362, 76480, 34607]}
    other = {**form, "prospectIds": [18362, 76480]}
    assert as_read(tool, form) == as_read(tool, solution) != as_read(tool, other)
    engagement = {"type": "MEETING", "ownerId": 61000001, "associations": {"contactIds": [102, 101]},
                  "metadata": {"timestamp": "2026-07-17T14:00:00Z", "title": "Demo"}}  # fmt: skip
    swapped = {**engagement, "associations": {"contactIds": [101, 102]}}
    assert as_read("hubspot-create-engagement", engagement) == as_read("hubspot-create-engagement", swapped)
