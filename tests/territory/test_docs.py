"""docs/tools.md is generated from the tool specs; these tests fail when the two drift apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from salesgym.envs.territory import docs
from salesgym.envs.territory.tools import TOOLS

TOOLS_MD = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_tools_md_is_the_generated_text() -> None:
    assert TOOLS_MD.read_text(encoding="utf-8") == docs.render(), (
        "docs/tools.md is stale: run `python -m salesgym.envs.territory.docs --write`"
    )


def test_every_tool_has_a_section_and_a_summary_row() -> None:
    text = docs.render()
    assert len(TOOLS.names()) == 18
    for name in TOOLS.names():
        assert f"\n## `{name}`\n" in text
        assert f"| [`{name}`](#{name}) |" in text
        assert f'{{"tool": "{name}", "args": ' in text


def test_every_argument_is_documented_with_its_description() -> None:
    text = docs.render()
    for spec in TOOLS.specs.values():
        section = text.split(f"## `{spec.name}`", 1)[1].split("\n## ", 1)[0]
        for field_name, field in spec.args.model_fields.items():
            assert f"| `{field_name}` |" in section, (spec.name, field_name)
            if field.description:
                assert field.description.replace("|", "\\|") in section


def test_examples_are_valid_calls_the_environment_accepts() -> None:
    assert set(docs.EXAMPLES) == set(TOOLS.names())
    for name in TOOLS.names():
        spec, _ = TOOLS.parse(docs.example_call(TOOLS.specs[name]))
        assert spec.name == name


def test_a_drifted_example_fails_generation() -> None:
    spec = TOOLS.specs["send_proposal"]
    broken = {**docs.EXAMPLES, "send_proposal": {"opportunity_id": "o003", "discount_pct": 99}}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(docs, "EXAMPLES", broken)
        with pytest.raises(ValueError):
            docs.example_call(spec)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string", "minLength": 1, "maxLength": 40}, "string (1-40 chars)"),
        ({"type": "integer", "minimum": 1, "maximum": 15}, "integer 1..15"),
        ({"anyOf": [{"type": "number"}, {"type": "null"}]}, "number or null"),
        ({"type": "string", "enum": ["a", "b"]}, 'one of `"a"`, `"b"`'),
    ],
)
def test_type_rendering(schema: dict[str, object], expected: str) -> None:
    assert docs.type_of(schema) == expected


def test_check_mode_reports_drift(tmp_path: Path) -> None:
    target = tmp_path / "tools.md"
    assert docs.main(["--write", "--path", str(target)]) == 0
    assert docs.main(["--check", "--path", str(target)]) == 0
    target.write_text(target.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    assert docs.main(["--check", "--path", str(target)]) == 1


def test_families_md_quotes_the_catalogue() -> None:
    """docs/families.md's effective numbers are the generated ones, and its overview table's capacity
    overrides are the families' own."""
    from salesgym.envs.territory.families import FAMILIES

    text = Path("docs/families.md").read_text(encoding="utf-8")
    assert docs.with_families_block(text) == text, "run `python -m salesgym.envs.territory.docs --write`"
    names = {"se": "SE", "legal": "legal", "procurement": "procurement", "management": "management"}
    for name, spec in FAMILIES.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{name}` | $"))
        overrides = ", ".join(f"{names[k]} {v:g}" for k, v in spec.capacity.items()) or "none"
        assert row.rstrip(" |").endswith(overrides), (row, overrides)
        assert f"| {spec.nonviable_rate:.0%} | {spec.competitor_rate:.0%} |" in row


def test_the_required_column_agrees_with_the_mcp_schema() -> None:
    """An argument docs/tools.md calls optional ("no") is one the MCP schema leaves out of ``required``, and the
    reverse, so a client reading either leaves out the same arguments (``page`` of ``view_opportunity`` is)."""
    import salesgym

    text = TOOLS_MD.read_text(encoding="utf-8")
    for tool in salesgym.make("territory-debug-v0").mcp_tools():
        section = text.split(f"## `{tool['name']}`", 1)[1].split("\n## ", 1)[0]
        documented = {}
        for line in section.splitlines():
            cells = [c.strip() for c in line.split(" | ")]
            if line.startswith("| `") and len(cells) >= 4:
                documented[cells[0].strip("| `")] = cells[2] != "no"
        schema = tool["inputSchema"]
        assert documented == {n: n in schema.get("required", []) for n in schema["properties"]}, tool["name"]
    assert "page" not in next(t for t in salesgym.make("territory-debug-v0").mcp_tools()
                              if t["name"] == "view_opportunity")["inputSchema"].get("required", [])
