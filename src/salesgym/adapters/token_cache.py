"""Token ids of text and text of token ids, cached per word: the environment's answers repeat most of their
words turn after turn, and a tokenizer's own encode costs about a microsecond a token.

A fast tokenizer (the Rust ``tokenizers`` core) splits out its added tokens, pre-tokenizes the rest into chunks
and runs its model (BPE) on each chunk alone: a chunk's ids do not depend on its neighbours. With a byte-level
pre-tokenizer on its built-in GPT-2 pattern (``_CHUNKS`` below, for ASCII), no normalizer, and added tokens
that hold no space and swallow none, a space after a printable ASCII character other than the space always
starts a chunk: no alternative that covers that character takes whitespace, and each may start at a space.

Likewise a line break between two such characters is a chunk of its own, so :meth:`TokenCache.encode` first
cuts the text at those line breaks and looks each line up whole (an environment's answer changes a few of its
lines a turn); an unseen line is cut before each such space (a space after anything else joins its piece
to the one before), and looks each piece up; an unseen piece of plain ASCII without added tokens is cut into
its chunks by the same pattern and those are looked up in turn; the tokenizer itself encodes only unseen
chunks and pieces it cannot cut. :meth:`TokenCache.decode` joins each id's bytes, as the byte-level decoder
maps them, and gives up (None) on bytes that are not UTF-8. The results are the tokenizer's, exactly:
:func:`cache_for` hands out a cache only for a tokenizer whose pipeline is that one, and decodes only where
its probe decodes the same both ways; else the caller uses the tokenizer.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Sequence
from itertools import chain, islice
from operator import itemgetter
from typing import Any, NamedTuple

MAX_ENTRIES = 1 << 15  # per table (a few MB at most); a full table starts over
_PIECE_END = frozenset(map(chr, range(0x21, 0x7F)))  # a space after one of these starts a chunk
_LAST = itemgetter(slice(-1, None))  # a piece's last character, "" for none
# the GPT-2 pattern of the byte-level pre-tokenizer on text of _PLAIN characters (\p{L} there is [A-Za-z],
# \p{N} is [0-9], \s is [\t\n\v\f\r ] in the regex engine tokenizers uses as in re.ASCII)
_CHUNKS = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+", re.ASCII)
_PLAIN = re.compile(r"[\t\n\v\f\r\x20-\x7e]*")
# encoded and decoded both ways before a cache is used: spaces in runs and after line breaks, digits,
# contractions, the spaces a clean-up would drop, non-ASCII letters and symbols, an emoji, tag look-alikes
_PROBE = (
    "Mon 2027-01-04 12:03 | day 0, 22 left\n  {\"a\": [1, 2.5]}  x\t y\r\n z  \n\nwe'll it's I'M don't . , ! ?\n"
    "café  naïve — 5€ 東京 🙂 ¿qué? <|x|> <tool_response>\n\x00\x1f \x85 \xa0 end "
)


def _byte_chars() -> dict[str, int]:
    """The byte-level alphabet: the character that stands for each byte (GPT-2's table)."""
    kept = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    moved = [b for b in range(256) if b not in kept]
    return {**{chr(b): b for b in kept}, **{chr(256 + n): b for n, b in enumerate(moved)}}


_BYTE_OF = _byte_chars()


class TokenCache:
    """``encode(text)`` equals ``backend.encode(text, add_special_tokens=False).ids``; ``decode(ids)``, when
    not None, equals the tokenizer's ``decode(ids, skip_special_tokens=False)``."""

    def __init__(self, backend: Any, added: dict[int, str], decodes: bool = False) -> None:
        self._backend = backend
        self._added = added  # id: content
        contents = sorted(added.values(), key=len, reverse=True)  # longest first, as the tokenizer matches
        self._added_re = re.compile(f"({'|'.join(map(re.escape, contents))})") if contents else None
        self._added_ids = {content: i for i, content in added.items()}
        self._cut_lines = not any("\n" in content for content in contents)  # no added token spans a cut
        self._lines: dict[str, list[int]] = {}  # a line between two cut line breaks: its ids
        self._heads: dict[str, list[int]] = {}  # a text's first piece: its ids
        self._pieces: dict[str, list[int]] = {}  # a later piece p (the text between two cuts): ids of " " + p
        self._chunks: dict[str, list[int]] = {}
        self._bytes: dict[int, bytes] | None = {} if decodes else None
        # one int object per id for every list the tables hold: a turn's ids, copied out of a few dozen of them,
        # then touch a few hundred objects that stay in the processor's caches, not one object per stored copy
        self._ints: dict[int, int] = {}
        self._newline = self._plain("\n")  # the ids of a line break between two cuts

    def encode(self, text: str) -> list[int]:
        if "\n" not in text or not self._cut_lines:
            return self._line_ids(text)
        units = _join_lines(text.split("\n"))
        if len(units) == 1:
            return self._line_ids(text)
        newline, lines = self._newline, self._lines
        out: list[int] = []
        for unit in units:
            ids = lines.get(unit)
            out += ids if ids is not None else _put(lines, unit, self._line_ids(unit))
            out += newline
        del out[len(out) - len(newline) :]
        return out

    def _line_ids(self, text: str) -> list[int]:
        """The ids of ``text`` from its pieces (its cut spaces), each looked up."""
        parts = text.split(" ")
        if not _PIECE_END.issuperset(map(_LAST, islice(parts, len(parts) - 1))):
            parts = _join(parts)  # a space follows a space, a line break, ...: not a cut
        pieces = self._pieces
        ids = list(map(pieces.get, parts))
        head = self._heads.get(parts[0])
        if head is None:
            head = _put(self._heads, parts[0], self._piece_ids(parts[0]))
        ids[0] = head
        if None in ids:
            for i in range(1, len(ids)):
                if ids[i] is None:
                    ids[i] = _put(pieces, parts[i], self._piece_ids(" " + parts[i]))
        return list(chain.from_iterable(ids))  # type: ignore[arg-type]  # every None was filled above

    def decode(self, ids: Sequence[int]) -> str | None:
        table = self._bytes
        if table is None:
            return None
        parts = list(map(table.get, ids))
        if None in parts:
            for i, part in enumerate(parts):
                if part is None:
                    parts[i] = _put(table, ids[i], self._token_bytes(ids[i]))
        try:
            return b"".join(parts).decode()  # type: ignore[arg-type]  # every None was filled above
        except UnicodeDecodeError:  # the tokenizer writes replacement characters its own way
            return None

    def _piece_ids(self, piece: str) -> list[int]:
        """The ids of an unseen piece: its added tokens split out first, as the tokenizer does, then each
        stretch between them by its chunks when it is plain ASCII, else by the tokenizer."""
        if self._added_re is None:
            return self._stretch_ids(piece)
        out: list[int] = []
        for i, part in enumerate(self._added_re.split(piece)):
            if i % 2:
                out.append(self._added_ids[part])
            elif part:
                out += self._stretch_ids(part)
        return out

    def _stretch_ids(self, text: str) -> list[int]:
        if _PLAIN.fullmatch(text) is None:
            return self._plain(text)
        out: list[int] = []
        chunks = self._chunks
        for chunk in _CHUNKS.findall(text):
            ids = chunks.get(chunk)
            out += ids if ids is not None else _put(chunks, chunk, self._plain(chunk))
        return out

    def _plain(self, text: str) -> list[int]:
        ints = self._ints
        if len(ints) >= MAX_ENTRIES:
            ints.clear()
        return [ints.setdefault(i, i) for i in self._backend.encode(text, add_special_tokens=False).ids]

    def _token_bytes(self, token_id: int) -> bytes:
        """What the byte-level decoder makes of one id: an added token's content as it is; a model token's
        characters mapped back to bytes when all are in the alphabet, else its own UTF-8."""
        if token_id in self._added:
            return self._added[token_id].encode()
        token = self._backend.id_to_token(token_id)
        if token is None:
            raise ValueError(f"token id {token_id} is not in the vocabulary")
        if all(c in _BYTE_OF for c in token):
            return bytes(_BYTE_OF[c] for c in token)
        return str(token).encode()


def _put(table: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(table) >= MAX_ENTRIES:
        table.clear()
    table[key] = value
    return value


def _join(parts: list[str]) -> list[str]:
    """``parts`` (a text split at spaces) with each part whose space does not follow a printable ASCII
    character appended, space and all, to the part before it."""
    out = [parts[0]]
    for part in parts[1:]:
        last = out[-1]
        if last[-1:] in _PIECE_END or (len(out) == 1 and not last):  # or the space opens the text
            out.append(part)
        else:
            out[-1] = f"{last} {part}"
    return out


def _join_lines(lines: list[str]) -> list[str]:
    """``lines`` (a text split at line breaks) with each line break that does not stand between two printable
    ASCII characters other than the space put back, with the line after it, into the line before it."""
    out = [lines[0]]
    for line in lines[1:]:
        last = out[-1]
        if last[-1:] in _PIECE_END and line[:1] in _PIECE_END:
            out.append(line)
        else:
            out[-1] = f"{last}\n{line}"
    return out


_CACHES: weakref.WeakKeyDictionary[Any, tuple[_Spec | None, TokenCache | None]] = weakref.WeakKeyDictionary()


def cache_for(tokenizer: Any) -> TokenCache | None:
    """The cache of ``tokenizer`` (a ``transformers`` fast tokenizer), shared by every caller while the
    tokenizer stays as it is; None when its pipeline is not the one this module models or the probe encodes
    differently (its decode is used only when the probe decodes the same)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    spec = _spec(tokenizer, backend)
    try:
        known = _CACHES.get(tokenizer)
    except TypeError:  # not hashable or not weakly referenceable: no shared cache
        return None
    if known is not None and known[0] == spec:
        return known[1]
    cache = _checked(tokenizer, backend, spec) if spec is not None and spec.modelled() else None
    _CACHES[tokenizer] = (spec, cache)
    return cache


class _Spec(NamedTuple):
    """What of a tokenizer decides how text splits into chunks and how ids decode."""

    backend: int  # id() of the Rust core: a tokenizer given a new one starts over
    size: int  # the vocabulary with its added tokens: added ones change the split
    normalizer_free: bool
    pre_tokenizer: Any
    dropout: Any
    truncation: Any
    padding: Any
    decoder: Any
    clean_up: Any  # transformers' clean-up of spaces in decode
    added: tuple[tuple[int, str, bool, bool, bool], ...]  # id, content, lstrip, rstrip, single_word

    def modelled(self) -> bool:
        pre = self.pre_tokenizer if isinstance(self.pre_tokenizer, dict) else {}
        return bool(
            self.normalizer_free
            and pre.get("type") == "ByteLevel"
            and pre.get("use_regex") is True  # the built-in GPT-2 pattern
            and pre.get("add_prefix_space") is False
            and not self.dropout  # BPE dropout samples a different split each call
            and self.truncation is None
            and self.padding is None
            and not any(
                " " in content or lstrip or rstrip or single_word  # could span a cut or swallow a space
                for _, content, lstrip, rstrip, single_word in self.added
            )
        )


def _spec(tokenizer: Any, backend: Any) -> _Spec | None:
    """``tokenizer``'s spec, or None when it cannot be read (not a fast tokenizer)."""
    try:
        added = backend.get_added_tokens_decoder()
        return _Spec(
            id(backend),
            backend.get_vocab_size(with_added_tokens=True),
            backend.normalizer is None,
            _state(backend.pre_tokenizer),
            getattr(backend.model, "dropout", None),
            backend.truncation,
            backend.padding,
            _state(backend.decoder),
            getattr(tokenizer, "clean_up_tokenization_spaces", None),
            tuple((i, t.content, t.lstrip, t.rstrip, t.single_word) for i, t in sorted(added.items())),
        )
    except (AttributeError, TypeError, ValueError):
        return None


def _checked(tokenizer: Any, backend: Any, spec: _Spec) -> TokenCache | None:
    """A cache for ``tokenizer`` when the probe encodes the same both ways (and decodes only when it decodes
    the same); else None."""
    added = {i: content for i, content, *_ in spec.added}
    cache = TokenCache(backend, added)
    ids = list(backend.encode(_PROBE, add_special_tokens=False).ids)
    if cache.encode(_PROBE) != ids or cache.encode(_PROBE) != ids:  # the second time from the tables
        return None
    if (spec.decoder or {}).get("type") != "ByteLevel":
        return cache
    probe = [*ids, *chain.from_iterable((i, *ids[:3]) for i in added)]  # every added token, between others
    decoding = TokenCache(backend, added, decodes=True)
    if decoding.decode(probe) == str(tokenizer.decode(probe, skip_special_tokens=False)):
        return decoding
    return cache


def _state(part: Any) -> Any:
    """A pipeline part's settings (its JSON form), or None for none."""
    return None if part is None else json.loads(part.__getstate__())
