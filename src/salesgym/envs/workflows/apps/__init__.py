"""The four app replicas, one module each; ``REPLICAS`` maps the app's neutral name to its tools and tables.

Each module is an independent implementation of a platform's public shapes and rules (its docstring says
which); they share only ``common.py`` (records, ids, the three writes, paging)."""

from __future__ import annotations

from types import ModuleType

from salesgym.envs.workflows.apps import crm, prospecting, scheduler, sequencer

REPLICAS: dict[str, ModuleType] = {"crm": crm, "prospecting": prospecting, "sequencer": sequencer,
                                   "scheduler": scheduler}  # fmt: skip
