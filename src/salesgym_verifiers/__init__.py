"""The verifiers v1 plugin of salesgym: ``--env.taskset.id salesgym-verifiers``.

verifiers loads a taskset by importing a top-level module named after its id and taking the one ``Taskset``
subclass in its ``__all__``; this module is that name for :mod:`salesgym.adapters.verifiers_v1`.
"""

from salesgym.adapters.verifiers_v1 import SalesgymTaskset

__all__ = ["SalesgymTaskset"]
