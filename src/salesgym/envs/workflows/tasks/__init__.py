"""Tasks as data: the blueprint format (``model.py``), the fixtures that set a template's scene in the seeded
population (``fixtures.py``, ``fixtures_more.py``, ``fixtures_tier4.py``), the templates themselves
(``templates.py``, then ``templates_more.py`` and ``templates_tier4.py``, which register into its ``CATALOGUE``).
The jq helpers are the family's ``jqlib.py``.

The package imports the template modules here, in this order, so the catalogue's order (the seed's draw, the
splits' declaration order) is the same whichever of its modules a caller imports first. ``templates_counterparty``
is not imported here: it is the ``workflows-counterparty`` pack, outside the catalogue (``packs.builtin``)."""

from salesgym.envs.workflows.tasks import templates, templates_more, templates_tier4  # noqa: F401  (registration)
