"""The scenes of the example pack's templates: each returns its instance's parameters (tests copy this pack to a
temporary folder; nothing here is in the salesgym package)."""

from salesgym.envs.workflows.apps import scheduler
from salesgym.envs.workflows.contract import iso
from salesgym.envs.workflows.population import add_contact
from salesgym.envs.workflows.tasks import fixtures as fx


def student(b, rng):
    """A new inbound lead who is a student."""
    company_key, company = fx.company(b, rng)
    key, contact = add_contact(b, rng, company, company_key, lifecycle="lead", lead_status="NEW")
    return {"contact_id": key, **fx.person_params("contact", contact)}


def handover(b, rng):
    """A customer contact whose owner leaves: the new owner is one of the others, named in the request."""
    company_key, company = fx.company(b, rng)
    key, contact = add_contact(b, rng, company, company_key, lifecycle="customer", lead_status="CONNECTED")
    current = contact["properties"]["hubspot_owner_id"]
    new = rng.choice([o for o in b.rows("crm.owners") if o != current])
    return {"contact_id": key, **fx.person_params("contact", contact), "new_owner_id": new,
            "new_owner": fx.owner_name(b, new)}


def demo_with_tz(b, rng):
    """A qualified lead who asked for a demo; the requester knows their time zone."""
    company_key, company = fx.company(b, rng)
    key, contact = add_contact(b, rng, company, company_key, lifecycle="salesqualifiedlead", lead_status="OPEN")
    day = fx.business_day(b, rng)
    return {"contact_id": key, **fx.person_params("contact", contact), "after": iso(day)[:10],
            "start": fx.earliest(b, "demo", day), "tz": rng.choice(fx.TIMEZONES),
            "event_type": f"{scheduler.API}/event_types/{b.event_types['demo']}"}
