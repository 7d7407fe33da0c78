"""Tasks as data: the blueprint format (``model.py``), the fixtures that set a template's scene in the seeded
population (``fixtures.py``), the templates themselves (``templates.py``) and the jq helpers (``jqlib.py``)."""
