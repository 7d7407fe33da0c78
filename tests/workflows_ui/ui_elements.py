"""Finding an observed element by its HTML id (a test's way to a bid; agents read the tree)."""

from __future__ import annotations


def element(obs: dict, html_id: str) -> dict:
    """The observed element with this HTML id (a test's way to find a bid; agents read the tree)."""
    found = [e for e in obs["data"]["elements"] if e["id"] == html_id]
    assert found, f"no #{html_id} on {obs['data']['url']}"
    return found[0]
