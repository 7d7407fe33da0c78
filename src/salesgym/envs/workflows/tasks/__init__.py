"""Tasks as data: the blueprint format (``model.py``); the package's templates (``catalogue/``, data files by sales
motion, loaded by ``templates.py``) and the ``workflows-counterparty`` pack it ships by name (``counterparty/``);
the fixtures that set a template's scene in the seeded population (``fixtures*.py``). The jq helpers are the
family's ``jqlib.py``."""
