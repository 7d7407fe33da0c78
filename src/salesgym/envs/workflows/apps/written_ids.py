"""Record ids in tests written by a record's place in its table: ``keyed`` turns the ids the workflows instances
had before ids were keyed by the seed (the n-th contact ``10n``, company ``500n``, deal ``900n``, lead ``L000n``,
list ``LL00n``, account ``A00n``, event type ``ET000n``, scheduled event ``EV0000n``, owner ``6100000n``; a
sequencer record ``n`` under the argument or path that names its table; numbers as well as strings)
into the instance's keyed ids (``apps.common.format_id``).

>>> from salesgym.envs.workflows.apps.common import format_id
>>> keyed("/contacts/101/edit") == f"/contacts/{format_id('crm.contacts', 1, 1)}/edit"
True
>>> keyed({"sequenceId": 1, "prospectIds": [1, 2]})["prospectIds"] == [int(format_id("sequencer.prospects", n, 1))
...                                                                   for n in (1, 2)]
True
"""

from __future__ import annotations

import re
from typing import Any

from salesgym.envs.workflows.apps.common import format_id

# a pattern of a written id and the table whose n-th record (the pattern's group) it names
_WRITTEN = [
    (r"\b6100000(\d)\b", "crm.owners"), (r"\b900(\d)\b", "crm.deals"), (r"\b500(\d)\b", "crm.companies"),
    (r"\b10(\d)\b", "crm.contacts"),
    (r"\bLL00(\d)\b", "prospecting.lists"), (r"\bL000(\d)\b", "prospecting.leads"),
    (r"\bA00(\d)\b", "prospecting.accounts"), (r"\bET000(\d)\b", "scheduler.event_types"),
    (r"\bEV0000(\d)\b", "scheduler.scheduled_events"),
    (r"(?<=/sequences/)(\d+)\b", "sequencer.sequences"), (r"(?<=/prospects/)(\d+)\b", "sequencer.prospects"),
]  # fmt: skip
# sequencer arguments that hold plain record numbers
_SEQUENCER_ARGS = {"sequenceId": "sequencer.sequences", "prospectId": "sequencer.prospects",
                   "prospectIds": "sequencer.prospects", "mailboxId": "sequencer.mailboxes",
                   "accountId": "sequencer.accounts", "ownerId": "sequencer.users"}  # fmt: skip


def _text(text: str, seed: int) -> str:
    for pattern, table in _WRITTEN:
        text = re.sub(pattern, lambda m, t=table: format_id(t, int(m.group(1)), seed), text)  # type: ignore[misc]
    return text


def keyed(value: Any, seed: int = 1, table: str | None = None) -> Any:
    """``value`` (strings, numbers, lists, dicts, tuples) with every written id replaced by the keyed one."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, int)):
        text = _text(str(value), seed)  # a written id of its own form first (a CRM owner is an ownerId too)
        if text == str(value) and table and text.isdigit():
            text = format_id(table, int(text), seed)
        return text if isinstance(value, str) else int(text)
    if isinstance(value, dict):
        return {k: keyed(v, seed, _SEQUENCER_ARGS.get(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and isinstance(value[0], str) and value[0] in _SEQUENCER_ARGS:  # a form's (name, value)
            pair = [value[0], keyed(value[1], seed, _SEQUENCER_ARGS[value[0]])]
            return tuple(pair) if isinstance(value, tuple) else pair
        items = [keyed(v, seed, table) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value
