"""The package's workflow templates: ``TEMPLATES``, by id in the catalogue's order (the seed's draw and the frozen
splits go by it). They are data: ``catalogue/templates/<motion>.json``, one file per sales motion, each template's
blueprint (goal, prompt, steps with app, objective, actions and assertions, changes, forbidden actions, facts,
reference solution) in the template-pack format (``packs.py``); their fixtures stay Python (``fixtures*.py``,
named ``module:function``). ``catalogue/pack.json`` lists the ids in order. Read and validated once per process.
"""

from __future__ import annotations

from collections.abc import Mapping

from salesgym.envs.workflows.packs import package
from salesgym.envs.workflows.tasks.model import Template

TEMPLATES: Mapping[str, Template] = package()
