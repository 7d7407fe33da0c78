"""Hostile input for every boundary that reads JSON or jq from outside the process: one corpus shared by the
HTTP service's tests, the MCP server's tests (stdio and streamable HTTP), the tool-call fuzzer
(``tests/territory/test_fuzz.py``, ``benchmarks/fuzz_campaign.py``) and ``benchmarks/hostile_campaign.py``.

:data:`WIRE` holds JSON texts an outsider can send: nesting deeper than any parser's stack, bodies over the size
limits, lone surrogates, integers of thousands of digits, ``NaN`` and ``Infinity``, bytes that are not UTF-8,
duplicate keys, broken syntax, and (for HTTP) content types that are not JSON. Each item is a JSON *value*
that a test places where a value goes (a step's action, a tool's arguments, a run's tables) with
:meth:`Hostile.inside`, or, with ``whole``, a message of its own. Every item must be refused at the boundary:
an HTTP 4xx or a JSON-RPC error with a reason, the server still serving and no traceback in its log.

:data:`JQ_PROGRAMS` holds jq programs that try to read anything but the state document (the environment, files,
modules, the program's location, further inputs), write to the server's streams, stop the process, or burn
its time and memory; :data:`JQ_READERS` hold programs that read the whole document (which must stay allowed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

try:  # for :func:`raw_jq` (the test extra installs jq)
    import jq
except ImportError:  # pragma: no cover
    jq = None

JSON = "application/json"
BIG = 300 * 1024  # over the HTTP service's default body limit (256 KiB)
HUGE = 5 * 1024 * 1024  # over any limit (the MCP server's is 4 MiB a message)


@dataclass(frozen=True)
class Hostile:
    """One hostile input: ``value`` is JSON-ish bytes (never a raw newline, which would split a stdio message)."""

    name: str
    kind: str  # depth, size, surrogate, huge_int, non_finite, non_utf8, duplicate_keys, syntax, content_type
    value: bytes
    content_type: str | None = JSON  # what an HTTP client declares (None: no Content-Type header)
    whole: bool = False  # the value is the whole message, not a value inside one

    def inside(self, before: bytes, after: bytes) -> bytes:
        """The message: ``before + value + after``, or the value alone when it is a whole message."""
        return self.value if self.whole else before + self.value + after

    @property
    def over_http_only(self) -> bool:
        """A content type is an HTTP header: over stdio there is nothing to get wrong."""
        return self.kind == "content_type"

    def __str__(self) -> str:
        return self.name


def _deep_list(n: int) -> bytes:
    return b"[" * n + b"]" * n


def _deep_object(n: int) -> bytes:
    return b'{"a":' * n + b"1" + b"}" * n


WIRE: tuple[Hostile, ...] = (
    # nesting: Python's reader recurses (1,000 frames), the MCP SDK's has its own limit, some callers go deeper
    Hostile("list nested 100 deep", "depth", _deep_list(100)),
    Hostile("list nested 2,000 deep", "depth", _deep_list(2_000)),
    Hostile("list nested 20,000 deep (40 KB)", "depth", _deep_list(20_000)),
    Hostile("list nested 100,000 deep", "depth", _deep_list(100_000)),
    Hostile("object nested 20,000 deep", "depth", _deep_object(20_000)),
    Hostile("unclosed brackets 50,000 deep", "depth", b"[" * 50_000),
    # size
    Hostile("a 300 KiB string", "size", b'"' + b"x" * BIG + b'"'),
    Hostile("a 5 MiB string", "size", b'"' + b"x" * HUGE + b'"'),
    # text that is not Unicode: lone and reversed surrogate escapes, in values and keys
    Hostile("a lone high surrogate", "surrogate", b'"\\ud800"'),
    Hostile("a lone low surrogate", "surrogate", b'"\\udfff"'),
    Hostile("a lone surrogate inside text", "surrogate", b'"abc\\uD83Ddef"'),
    Hostile("a reversed surrogate pair", "surrogate", b'"\\udc00\\ud800"'),
    Hostile("a lone surrogate as a key", "surrogate", b'{"\\ud800": 1}'),
    # numbers
    Hostile("a 5,000-digit integer", "huge_int", b"9" * 5_000),
    Hostile("a negative 5,000-digit integer", "huge_int", b"-" + b"9" * 5_000),
    Hostile("a 4,300-digit integer (Python's limit)", "huge_int", b"1" + b"0" * 4_299),
    Hostile("a 200-digit integer", "huge_int", b"1" * 200),
    Hostile("a 5,000-digit integer in a list", "huge_int", b"[1, " + b"7" * 5_000 + b"]"),
    Hostile("NaN", "non_finite", b"NaN"),
    Hostile("Infinity", "non_finite", b"Infinity"),
    Hostile("-Infinity", "non_finite", b"-Infinity"),
    Hostile("NaN inside an object", "non_finite", b'{"hours": NaN}'),
    Hostile("a float beyond a double (1e999)", "non_finite", b"1e999"),
    Hostile("an exponent of nine digits", "non_finite", b"1e999999999"),
    # bytes that are not UTF-8
    Hostile("bytes 0xff 0xfe", "non_utf8", b'"\xff\xfe"'),
    Hostile("Latin-1 text", "non_utf8", b'"caf\xe9"'),
    Hostile("an overlong encoding of '/'", "non_utf8", b'"\xc0\xaf"'),
    Hostile("a surrogate encoded as UTF-8 bytes", "non_utf8", b'"\xed\xa0\x80"'),
    Hostile("a truncated multi-byte character", "non_utf8", b'"\xe2\x82"'),
    Hostile("a message in UTF-16", "non_utf8", '{"a": 1}'.encode("utf-16"), whole=True),
    # duplicate keys: which one wins differs between readers
    Hostile("duplicate keys", "duplicate_keys", b'{"hours": 1, "hours": 2, "until": null}'),
    Hostile("duplicate keys, nested", "duplicate_keys", b'{"a": {"b": 1, "b": 1}}'),
    Hostile("duplicate keys in the whole message", "duplicate_keys",
            b'{"jsonrpc": "2.0", "jsonrpc": "2.0", "id": 1, "method": "ping"}', whole=True),
    # syntax
    Hostile("a raw control character in a string", "syntax", b'"a\x00b"'),
    Hostile("a truncated value", "syntax", b'{"a": '),
    Hostile("single quotes", "syntax", b"{'a': 1}"),
    Hostile("a trailing comma", "syntax", b"[1, 2,]"),
    Hostile("two values", "syntax", b'{"a": 1} {"b": 2}', whole=True),
    Hostile("not JSON at all", "syntax", b"hello", whole=True),
    # what an HTTP client says it sends (the body itself is fine JSON)
    Hostile("Content-Type text/plain", "content_type", b'{"a": 1}', content_type="text/plain"),
    Hostile("a form", "content_type", b"a=1&b=2", content_type="application/x-www-form-urlencoded", whole=True),
    Hostile("multipart", "content_type", b"--x\r\n\r\n1\r\n--x--", content_type="multipart/form-data; boundary=x",
            whole=True),
    Hostile("JSON declared as UTF-16", "content_type", b'{"a": 1}', content_type="application/json; charset=utf-16"),
    Hostile("no Content-Type", "content_type", b'{"a": 1}', content_type=None),
)


def wire(kinds: tuple[str, ...] | None = None) -> Iterator[Hostile]:
    """The items of :data:`WIRE`, or of the given kinds."""
    return (h for h in WIRE if kinds is None or h.kind in kinds)


# -- jq ------------------------------------------------------------------------------------------------------------
# Every builtin that reaches beyond the document, in the spellings jq accepts (string interpolation, object
# shorthand, definitions that shadow, bindings), plus programs that never end or eat memory.
JQ_ESCAPES: tuple[str, ...] = (
    "$ENV", "$ENV.SALESGYM_OPERATOR_TOKEN", "$ENV | keys", "env", "env | keys", "env.SALESGYM_AGENT_TOKENS",
    "{$ENV}", '"\\(env)"', '"\\($ENV.HOME)"', "[env[]] | join(\",\")", "$ENV as $e | $e", "def f: env; f",
    "$__loc__", "input_filename", "input", "[inputs]", "first(inputs)", "input_line_number",
    'import "canary" as $c {search: "/"}; $c', 'include "canary" {search: "/tmp"}; .', '"a" | modulemeta',
    "get_search_list", "get_prog_origin", "get_jq_origin", "$__prog_args",
    '"x" | debug', '"x" | debug("msg")', '"x" | stderr', "halt", "halt_error", '"bye" | halt_error(1)',
    "[limit(3; env)]", "try env catch .", "(env | tostring)", "reduce env as $x (0; 1)",
)
JQ_READERS: tuple[str, ...] = ("[paths] | length", "[paths(type == \"string\")] | length", "getpath([\"crm\"]) | keys",
                               "[.. | strings] | length", "tostream | select(length == 2) | .[1] | tostring",
                               "[paths(scalars)] | length", "to_entries | map(.key)")
JQ_SLOW: tuple[str, ...] = ("[range(300000000)] | length", "last(range(1e12))", "repeat(.)",
                            '[limit(1e9; repeat("x"))] | length', "def f: f; f")
JQ_GREEDY: tuple[str, ...] = ('[range(1e8)] | map(tostring)', '"x" * 1e9 | length', "[range(4e7)] | tojson | length")
JQ_PROGRAMS: tuple[str, ...] = JQ_ESCAPES + JQ_SLOW + JQ_GREEDY
# jq's own regular expressions stop themselves (Oniguruma's retry limit); the verifier's ``matches`` operator is
# Python's, and this one backtracks for ever
SLOW_MATCH = {"expr": '"a" * 40 + "!"', "op": "matches", "expected": "^(a+)+$"}


def raw_jq(payload: Mapping[str, Any]) -> list[Any]:
    """A sandbox target that runs ``payload["program"]`` on ``payload["input"]`` with *no* check at all: what the
    tests use to show that the sandbox worker itself holds where the service's refusal of builtins is bypassed."""
    if jq is None:  # pragma: no cover
        raise ValueError("needs the jq library")
    return list(jq.compile(payload["program"]).input_value(payload["input"]).all())
