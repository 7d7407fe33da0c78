"""Each replica enforces its platform's own rules in the sandbox; a refused call changes nothing."""

from __future__ import annotations

from typing import Any

from tests.workflows.wf_helpers import params, step, workflow

from salesgym.envs.workflows.contract import iso, parse_iso


def refused(env: Any, tool: str, **args: Any) -> str:
    before = {k: dict(v) for k, v in env._state.tables.items()}
    out = step(env, tool, **args)
    assert out["status"] == "error", out["output"]
    assert {k: dict(v) for k, v in env._state.tables.items()} == before, "a refused call changed a table"
    return str(out["output"]["error"])


# --- CRM ---------------------------------------------------------------------------------------------------------
def test_contact_email_is_unique_case_insensitively() -> None:
    env = workflow("crm-dedupe-inbound")
    p = params(env)
    why = refused(env, "hubspot-batch-create-objects", objectType="contacts",
                  inputs=[{"properties": {"email": p["form_email"], "firstname": "X"}}])
    assert why.startswith("409") and p["contact_id"] in why
    other = next(k for k in env._state.rows("crm.contacts") if k != p["contact_id"])
    assert refused(env, "hubspot-batch-update-objects", objectType="contacts",
                   inputs=[{"id": other, "properties": {"email": p["contact_email"].upper()}}]).startswith("409")
    ok = step(env, "hubspot-batch-create-objects", objectType="contacts",
              inputs=[{"properties": {"email": "fresh.person@example.org"}}])
    assert ok["status"] == "ok"


def test_deal_stage_belongs_to_its_pipeline_and_won_needs_a_close_date() -> None:
    env = workflow("crm-renewal-negotiation")
    deal = params(env)["deal_id"]
    for stage in ("Negotiation", "qualifiedtobuy"):  # a label, and a stage of another pipeline
        assert "not a stage of pipeline" in refused(env, "hubspot-batch-update-objects", objectType="deals",
                                                    inputs=[{"id": deal, "properties": {"dealstage": stage}}])
    assert step(env, "hubspot-batch-update-objects", objectType="deals",
                inputs=[{"id": deal, "properties": {"dealstage": params(env)["stage_negotiation"]}}])["status"] == "ok"
    won = workflow("crm-closed-won")
    deal = params(won)["deal_id"]
    assert "closedate" in refused(won, "hubspot-batch-update-objects", objectType="deals",
                                  inputs=[{"id": deal, "properties": {"dealstage": "closedwon"}}])
    assert step(won, "hubspot-batch-update-objects", objectType="deals", inputs=[{"id": deal, "properties": {
        "dealstage": "closedwon", "closedate": "2026-05-01"}}])["output"]["results"][0]["properties"]["closedate"] \
        == "2026-05-01T00:00:00Z"


def test_lifecycle_never_moves_backwards_unless_cleared() -> None:
    env = workflow("crm-lifecycle-reset")
    cid = params(env)["contact_id"]

    def stage() -> str:
        return str(env._state.rows("crm.contacts")[cid]["properties"]["lifecyclestage"])

    out = step(env, "hubspot-batch-update-objects", objectType="contacts",
               inputs=[{"id": cid, "properties": {"lifecyclestage": "lead"}}])
    assert out["status"] == "ok" and stage() == "customer"  # accepted, and nothing changes (as HubSpot does)
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[{"id": cid, "properties":
                                                                              {"lifecyclestage": "evangelist"}}])
    assert stage() == "evangelist"  # forwards is fine
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[{"id": cid, "properties":
                                                                              {"lifecyclestage": ""}}])
    step(env, "hubspot-batch-update-objects", objectType="contacts", inputs=[{"id": cid, "properties":
                                                                              {"lifecyclestage": "lead"}}])
    assert stage() == "lead"


def test_enums_owners_associations_and_engagements_are_checked() -> None:
    env = workflow("crm-inbound-sql")
    cid = params(env)["contact_id"]
    assert "not a valid option" in refused(env, "hubspot-batch-update-objects", objectType="contacts",
                                           inputs=[{"id": cid, "properties": {"hs_lead_status": "HOT"}}])
    assert "owner" in refused(env, "hubspot-batch-update-objects", objectType="contacts",
                              inputs=[{"id": cid, "properties": {"hubspot_owner_id": "7100001"}}])
    company = next(iter(env._state.rows("crm.companies")))
    assert "not defined" in refused(env, "hubspot-batch-create-associations", fromObjectType="contacts",
                                    toObjectType="companies", inputs=[{"from": {"id": cid}, "to": {"id": company},
                                                                       "types": [{"associationTypeId": 3}]}])
    assert "at least one" in refused(env, "hubspot-create-engagement", type="NOTE", ownerId=params(env)["owner_int"],
                                     associations={}, metadata={"timestamp": "2026-05-01", "body": "hi"})
    ok = step(env, "hubspot-batch-create-associations", fromObjectType="contacts", toObjectType="companies",
              inputs=[{"from": {"id": cid}, "to": {"id": company}, "types": [{"associationTypeId": 1}]}])
    assert ok["status"] == "ok"
    listed = step(env, "hubspot-list-associations", objectType="companies", objectId=company, toObjectType="contacts")
    assert any(r["toObjectId"] == cid and {"category": "HUBSPOT_DEFINED", "typeId": 2, "label": "Primary"}
               in r["associationTypes"] for r in listed["output"]["results"])  # the inverse shows on the company


def test_search_filters_or_between_groups_and_within_a_group() -> None:
    env = workflow("crm-inbound-sql")
    p = params(env)
    one = step(env, "hubspot-search-objects", objectType="contacts", filterGroups=[
        {"filters": [{"propertyName": "email", "operator": "EQ", "value": p["contact_email"].upper()},
                     {"propertyName": "lifecyclestage", "operator": "EQ", "value": "marketingqualifiedlead"}]}])
    assert [r["id"] for r in one["output"]["results"]] == [p["contact_id"]]
    none = step(env, "hubspot-search-objects", objectType="contacts", filterGroups=[
        {"filters": [{"propertyName": "email", "operator": "EQ", "value": p["contact_email"]},
                     {"propertyName": "lifecyclestage", "operator": "EQ", "value": "customer"}]}])
    assert none["output"]["total"] == 0
    either = step(env, "hubspot-search-objects", objectType="contacts", filterGroups=[
        {"filters": [{"propertyName": "email", "operator": "EQ", "value": p["contact_email"]}]},
        {"filters": [{"propertyName": "lifecyclestage", "operator": "EQ", "value": "customer"}]}])
    assert either["output"]["total"] > 1


# --- sequencer ---------------------------------------------------------------------------------------------------
def test_no_reenrolment_opt_outs_and_exclusive_sequences() -> None:
    env = workflow("seq-webinar-followup")
    p = params(env)
    seq, box = p["sequence_id"], p["mailbox"]
    assert "already been in this sequence" in refused(env, "sequence_add_prospects", sequenceId=seq,
                                                      prospectIds=[p["repeat"]], mailboxId=box)
    assert "opted out" in refused(env, "sequence_add_prospects", sequenceId=seq, prospectIds=[p["opted_out"]],
                                  mailboxId=box)
    mixed = step(env, "sequence_add_prospects", sequenceId=seq, prospectIds=[p["eligible"][0], p["opted_out"]],
                 mailboxId=box)
    assert mixed["status"] == "ok" and mixed["output"]["batch"]["failures"] == [
        {"prospectId": p["opted_out"], "error": "Prospect has opted out of email"}]
    assert "already been" in refused(env, "sequence_add_prospects", sequenceId=seq, prospectIds=[p["eligible"][0]],
                                     mailboxId=box)
    ids = {s["attributes"]["name"]: s["id"] for s in step(env, "sequence_search")["output"]["data"]}
    assert "not active" in refused(env, "sequence_add_prospects", sequenceId=ids["Cold Outbound Q1"],
                                   prospectIds=[p["eligible"][1]], mailboxId=box)
    assert step(env, "sequence_add_prospects", sequenceId=ids["Enterprise Nurture"], prospectIds=[p["eligible"][1]],
                mailboxId=box)["status"] == "ok"  # the exclusive Enterprise Nurture
    assert "exclusive" in refused(env, "sequence_add_prospects", sequenceId=ids["SQL Outbound"],
                                  prospectIds=[p["eligible"][1]], mailboxId=box)
    state = mixed["output"]["sequenceStateIds"][0]
    first = step(env, "sequence_state_finish", id=state)
    again = step(env, "sequence_state_finish", id=state)
    assert first["output"] == again["output"] and len(again["event_ids"]) == 1  # idempotent: only the call's record
    assert str(state) in env._state.rows("sequencer.sequence_states")


def test_prospect_emails_are_unique() -> None:
    env = workflow("sql-handoff")
    existing = next(iter(env._state.rows("sequencer.prospects").values()))
    assert "already been taken" in refused(env, "prospect_create", attrs={"emails": existing["attributes"]["emails"]})


# --- scheduler ---------------------------------------------------------------------------------------------------
def test_bookings_only_in_open_slots_of_the_right_length() -> None:
    env = workflow("sched-earliest-demo")
    p = params(env)
    invitee = {"name": "A B", "email": p["invitee_email"], "timezone": p["tz"]}
    start = parse_iso(p["start"])
    assert start is not None
    busy = next(b for b in env._state.rows("scheduler.busy_times").values() if b["start_time"] > p["start"])
    for bad in (busy["start_time"], iso(start.replace(minute=10)), iso(start.replace(hour=6)),
                iso(parse_iso(env._world.anchor).replace(hour=7))):  # busy, off the grid, outside hours, the past
        assert refused(env, "meetings-create_invitee", event_type=p["event_type"], start_time=bad,
                       invitee=invitee).startswith(("409", "400"))
    assert "time zone" in refused(env, "meetings-create_invitee", event_type=p["event_type"], start_time=p["start"],
                                  invitee={**invitee, "timezone": "Mars/Olympus"})
    ok = step(env, "meetings-create_invitee", event_type=p["event_type"], start_time=p["start"], invitee=invitee)
    event = ok["output"]["resource"]["scheduled_event"]
    end = parse_iso(event["end_time"])
    assert end is not None and (end - start).total_seconds() == 30 * 60
    assert refused(env, "meetings-create_invitee", event_type=p["event_type"], start_time=p["start"],
                   invitee=invitee).startswith("409")  # the slot is taken now
    inactive = next(e for e in env._state.rows("scheduler.event_types").values() if not e["active"])
    assert "not active" in refused(env, "meetings-create_invitee", event_type=inactive["uri"], start_time=p["start"],
                                   invitee=invitee)


def test_cancel_needs_an_active_event_and_ranges_are_bounded() -> None:
    env = workflow("sched-reschedule")
    p = params(env)
    assert step(env, "meetings-cancel_event", uuid=p["old_uuid"], reason="moved")["status"] == "ok"
    assert "already canceled" in refused(env, "meetings-cancel_event", uuid=p["old_uuid"], reason="again")
    assert "at most" in refused(env, "event_types-list_event_type_available_times", event_type=p["event_type"],
                                start_time=p["start"], end_time="2030-01-01T00:00:00Z")
    assert "future" in refused(env, "event_types-list_event_type_available_times", event_type=p["event_type"],
                               start_time="2020-01-01T00:00:00Z", end_time="2020-01-02T00:00:00Z")
    slots = step(env, "event_types-list_event_type_available_times", event_type=p["event_type"],
                 start_time=p["day"] + "T00:00:00Z", end_time=p["day"] + "T23:59:00Z")["output"]["collection"]
    assert slots[0]["start_time"] == p["start"]  # the fixture's expectation is the tool's own first slot


# --- prospecting -------------------------------------------------------------------------------------------------
def test_inmail_credits_never_go_below_zero_and_first_degree_is_free() -> None:
    env = workflow("pros-abm-list")
    leads = env._state.rows("prospecting.leads").values()
    paid = next(x for x in leads if x["degree"] > 1 and not x["open_profile"])
    free = next(x for x in leads if x["degree"] == 1 and not x["open_profile"])
    credits = env._state.rows("prospecting.credits")["inmail"]["available"]
    assert "200" in refused(env, "send_inmail", recipient_urn=paid["urn"], subject="x" * 201, body="hi")
    for _ in range(credits):
        assert step(env, "send_inmail", recipient_urn=paid["urn"], subject="Hi", body="Hello")["status"] == "ok"
    assert "no InMail credits" in refused(env, "send_inmail", recipient_urn=paid["urn"], subject="Hi", body="Hello")
    assert env._state.rows("prospecting.credits")["inmail"]["available"] == 0
    sent = step(env, "send_inmail", recipient_urn=free["urn"], subject="Hi", body="Hello")
    assert sent["status"] == "ok" and sent["output"]["credit_spent"] is False


def test_a_lead_is_saved_once_per_list_and_search_is_and_across_filters() -> None:
    env = workflow("pros-abm-list")
    p = params(env)
    found = step(env, "sales_search_leads", company=[p["company"]], seniority_level=["VP", "CXO"],
                 function_area=["Engineering"], changed_jobs=True)["output"]["elements"]
    assert sorted(x["lead_id"] for x in found) == p["targets"]
    assert step(env, "save_lead", lead_id=p["targets"][0], list_id=p["list_id"])["status"] == "ok"
    assert refused(env, "save_lead", lead_id=p["targets"][0], list_id=p["list_id"]).startswith("409")


# --- permissions -------------------------------------------------------------------------------------------------
def test_task_permissions_refuse_other_apps_and_writes_to_read_only_apps() -> None:
    env = workflow("enrich-contacts")  # prospecting read only, crm writable, no scheduler or sequencer
    assert "no access to the scheduler" in refused(env, "event_types-list_event_types")
    lead = next(iter(env._state.rows("prospecting.leads").values()))
    assert "read the prospecting app but not write" in refused(env, "send_inmail", recipient_urn=lead["urn"],
                                                               subject="Hi", body="x")
    assert step(env, "get_sales_profile", lead_id=lead["lead_id"])["status"] == "ok"
    assert step(env, "hubspot-list-owners")["status"] == "ok"
