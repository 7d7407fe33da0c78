"""Evidence records and their proofs.

Only simulated buyer actors create evidence, through :meth:`Verifier.issue`; each record carries a keyed
MAC (``proof_ref``) over its content. The key is held by the environment and its verifier object, which the
agent side never receives: observations show evidence without proofs, and nothing an agent writes is ever
passed to ``issue``. The terminal score re-checks every proof, so a record smuggled into the ledger counts for
nothing. Which kinds of evidence exist is the family's business (``kinds``): the engine only signs and checks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Set
from typing import Any, NamedTuple

import orjson

VERIFIER_ID = "verifier:v1"


class Evidence(NamedTuple):
    id: str
    type: str  # one of the family's evidence kinds
    subject: str  # the opportunity (or task) the evidence is about
    source_actor: str
    timestamp: float
    claim: Mapping[str, Any]
    proof_ref: str
    verified_by: str = VERIFIER_ID

    def body(self) -> dict[str, Any]:
        """The signed content: everything except the proof itself."""
        return {
            "id": self.id,
            "type": self.type,
            "subject": self.subject,
            "source_actor": self.source_actor,
            "timestamp": self.timestamp,
            "claim": dict(self.claim),
        }

    def to_dict(self) -> dict[str, Any]:
        """``body()`` with the proof, in one dict (an accepted sale builds two of these)."""
        return {"id": self.id, "type": self.type, "subject": self.subject, "source_actor": self.source_actor,
                "timestamp": self.timestamp, "claim": dict(self.claim), "proof_ref": self.proof_ref,
                "verified_by": self.verified_by}  # fmt: skip

    def public(self) -> dict[str, Any]:
        """What the seller may see: no proof, the claim as the buyer stated it."""
        return {k: v for k, v in self.body().items()}

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> Evidence:
        # tuple.__new__: the named tuple's keyword constructor costs more than the conversions (a fold per evidence)
        return tuple.__new__(
            Evidence,
            (
                str(data["id"]),
                str(data["type"]),
                str(data["subject"]),
                str(data["source_actor"]),
                float(data["timestamp"]),
                dict(data["claim"]),
                str(data["proof_ref"]),
                str(data.get("verified_by", VERIFIER_ID)),
            ),
        )


# Claims are small flat records of strings and numbers; sorted compact JSON is canonical enough, and a
# prebuilt encoder is several times faster than json.dumps with options.
_json_claim_text = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode
_INT_LIMIT = 2**63  # orjson's integers; the standard library's text of any smaller int is the same


def _claim_text(claim: Mapping[str, Any]) -> str:
    """``_json_claim_text(claim)``, the text every proof is computed over, by orjson (a tenth of the time) when
    the two are known to write it alike: a dict whose keys are printable ASCII and whose values are printable
    ASCII strings (the standard library escapes anything else to ``\\uXXXX``), ints within 64 bits, floats
    whose ``repr`` is positional (zero, or 1e-4 <= |x| < 1e16: ``repr`` writes ``1e-05``, ``1e+16`` outside,
    orjson ``1e-5``, ``0.00005``), booleans and None. Anything else takes the standard library's encoder
    (``tests/core/test_evidence_text.py`` holds the two equal)."""
    if type(claim) is not dict:
        return _json_claim_text(claim)
    for key, value in claim.items():
        kind = type(value)
        if kind is str:
            ok = value.isascii() and value.isprintable()
        elif kind is float:
            ok = 1e-4 <= abs(value) < 1e16 or value == 0.0
        elif kind is int:
            ok = -_INT_LIMIT < value < _INT_LIMIT
        else:
            ok = value is None or kind is bool
        if not ok or type(key) is not str or not (key.isascii() and key.isprintable()):
            return _json_claim_text(claim)
    return orjson.dumps(claim, option=orjson.OPT_SORT_KEYS).decode()


class Verifier:
    """Issues and checks proofs over the family's evidence ``kinds``; the key it derives never leaves it."""

    __slots__ = ("__key", "_kinds", "_verified")

    def __init__(self, secret: bytes, world_seed: int, kinds: Set[str]) -> None:
        self._kinds = frozenset(kinds)
        # proof -> (the exact record that was checked, its Evidence): re-scoring a growing log, or a clone's
        # log that shares the same records, costs a dict comparison per record instead of a MAC
        self._verified: dict[str, tuple[dict[str, Any], Evidence]] = {}
        self.__key = hashlib.sha256(secret + b"\x00" + str(world_seed).encode()).digest()  # 32 bytes: a BLAKE2b key

    def _mac(self, e: Evidence) -> str:
        # A fixed field order and a sorted claim: cheap to build, and unambiguous (\x1f never appears in ids).
        message = "\x1f".join((e[0], e[1], e[2], e[3], f"{e[4]:.6f}", _claim_text(e[5])))
        return hashlib.blake2b(message.encode(), key=self.__key, digest_size=16).hexdigest()  # keyed BLAKE2 = a MAC

    def issue(
        self,
        evidence_id: str,
        kind: str,
        subject: str,
        source_actor: str,
        timestamp: float,
        claim: Mapping[str, Any],
    ) -> Evidence:
        if kind not in self._kinds:
            raise ValueError(f"unknown evidence kind {kind!r}")
        # tuple.__new__ and no _replace: the named tuple's Python-level constructors cost more than the MAC
        fields = (evidence_id, kind, subject, source_actor, timestamp, dict(claim))
        proof = self._mac(tuple.__new__(Evidence, (*fields, "", VERIFIER_ID)))
        signed: Evidence = tuple.__new__(Evidence, (*fields, proof, VERIFIER_ID))
        self._verified[signed.proof_ref] = (signed.to_dict(), signed)  # issued here, so known good
        return signed

    def signed_record(self, evidence: Evidence) -> dict[str, Any]:
        """The plain record of evidence this verifier issued: the one it keeps, so the event that carries it and
        the running verdict that reads it back share it (read-only), and the check is an identity test."""
        return self._verified[evidence.proof_ref][0]

    def check(self, evidence: Evidence) -> bool:
        return hmac.compare_digest(self._mac(evidence), evidence.proof_ref)

    def verified(self, record: Mapping[str, Any]) -> Evidence | None:
        """The evidence a plain record describes if its proof holds, else None (also for malformed records)."""
        proof = record.get("proof_ref")
        hit = self._verified.get(proof) if isinstance(proof, str) else None
        if hit is not None and (hit[0] is record or hit[0] == record):
            return hit[1]
        try:
            evidence = Evidence.from_dict(record)
        except (KeyError, TypeError, ValueError):
            return None
        if evidence.type not in self._kinds or not self.check(evidence):
            return None
        self._verified[evidence.proof_ref] = ({**record, "claim": dict(record["claim"])}, evidence)
        return evidence

    def __repr__(self) -> str:
        return "Verifier(<key withheld>)"

    def __reduce__(self) -> Any:
        raise TypeError("the verifier cannot be pickled or copied out of the environment")
