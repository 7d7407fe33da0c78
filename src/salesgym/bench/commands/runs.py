"""``salesgym runs``: the runs in the database."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Column, Table

from salesgym.bench.commands.console import fail, open_store, out
from salesgym.bench.commands.options import DEFAULT_DB, DbPath
from salesgym.bench.store import StoreError


def runs(db: DbPath = DEFAULT_DB) -> None:
    """List the runs in the database."""
    store = open_store(db, readonly=True)
    try:
        found = store.runs()
        # run ids and split names are copied from here: never cut or wrapped, whatever the terminal's width
        widest = {k: max((len(getattr(r, k)) for r in found), default=3) for k in ("id", "split")}
        t = Table(Column("run", no_wrap=True, min_width=widest["id"]), Column("created", overflow="fold"),
                  Column("split", no_wrap=True, min_width=widest["split"]), "ablation", "policies", "episodes")
        for r in found:
            eps = store.episodes(r.id)
            cells = (
                r.id,
                r.created,
                r.split,
                str(r.config.get("ablation") or "—"),
                str(len(r.policies)),
                str(len(eps)),
            )
            t.add_row(*(escape(c) for c in cells))  # stored text is data, not markup
    except StoreError as e:
        fail(str(e))
    finally:
        store.close()
    out.print(t)
