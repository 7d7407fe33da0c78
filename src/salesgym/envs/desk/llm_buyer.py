"""The desk's language-model buyer (``DeskEnv(buyer="llm", ...)``): a persona played by any OpenAI-compatible
chat endpoint, which hears the seller's pitch and decides, inside rules the model cannot move.

**What the model sees.** A persona prompt (``personas.system_prompt``: its archetype, one of four wordings, the
desk's decision style) with its own lead's facts, and a transcript built from the event log of *its own lead
only* (calls, discovery answers, offers with the seller's ``pitch``, its own earlier replies); never another
lead's text, never the seller's notes.

**How it answers.** One JSON object through a constrained structured output (``response_format`` with a JSON
schema): ``say`` (its words), ``decision`` (accept, reject, ask, hang_up), ``reason`` (a reject reason code) and
``do_not_call``. The environment validates it; a reply that fails (transport, HTTP, not JSON, outside the
schema) is a recorded buyer error, kept apart from the seller's mistakes: the offer gets no decision.

**What stays deterministic.** Quote rules, the discount authority and do-not-call are checked before a buyer
is asked (``tools.propose_offer``); the buyer variant's hard gates (over budget, cover outside the style's
bounds, a poor plan fit...) refuse an offer without asking the model; patience is the rule table's (each refusal
costs it; at its end the buyer hangs up whatever it said); suitability voids an accepted over-insurance sale;
the verifier scores from signed evidence and stored quotes. The model decides only among offers the rules allow.

**Exact replay.** Every reply (or failure) is written to the event log as ``buyer_replied`` with the sha256 of
the request body it answered. A reply is looked up on the tape by that hash before any request is sent, so a
clone (which shares the tape) and a replay (``DeskEnv.load_buyer_tape``) never call the model for a request
already answered. Seed (per lead, ``request_seed``) and temperature are sent with every request; the buyer's
tokens and cost are reported apart from the seller's (``usage``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from salesgym.core.events import EventLog, sha256_of
from salesgym.core.rng import uniform
from salesgym.envs.desk import buyers, personas
from salesgym.envs.desk.archetypes import BY_NAME, VARIANTS
from salesgym.envs.desk.contract import REJECT_REASONS
from salesgym.envs.desk.world import DeskWorld, Lead

if TYPE_CHECKING:
    from salesgym.envs.desk.tools import Ctx

DECISIONS = ("accept", "reject", "ask", "hang_up")
SAY_MAX = 600  # characters of a buyer's words kept
ERROR_MAX = 300
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "say": {"type": "string"},
        "decision": {"type": "string", "enum": list(DECISIONS)},
        "reason": {"anyOf": [{"type": "string", "enum": list(REJECT_REASONS)}, {"type": "null"}]},
        "do_not_call": {"type": "boolean"},
    },
    "required": ["say", "decision", "reason", "do_not_call"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "buyer_decision", "strict": True, "schema": SCHEMA}}


class Reply(BaseModel):
    """A buyer's answer as the environment accepts it (``SCHEMA``, checked again here: a server may ignore it)."""

    model_config = ConfigDict(extra="forbid")
    say: str = Field(min_length=1, max_length=4000)
    decision: Literal["accept", "reject", "ask", "hang_up"]
    reason: Literal[tuple(REJECT_REASONS)] | None = None  # type: ignore[valid-type]
    do_not_call: bool = False


@dataclass(frozen=True)
class LLMBuyer:
    """How the language-model buyer talks to its endpoint: plain JSON data (the key stays in ``api_key_env``).

    ``prompt_variant`` (0-3) words every persona the same way; ``None`` draws one per lead, keyed by the world's
    seed. ``seed`` is mixed with the world's seed and the lead's id into each request's sampling seed.
    ``price_in`` / ``price_out``: dollars per million prompt / completion tokens, for the buyer's cost.
    ``offline``: never send a request; one not on the tape is a buyer error (a strict replay)."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 200
    timeout_s: float = 60.0
    max_retries: int = 2
    prompt_variant: int | None = None
    price_in: float | None = None
    price_out: float | None = None
    offline: bool = False

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.model, str) or not self.model.strip():
            problems.append("a model name is needed (buyer_model)")
        if self.prompt_variant is not None and self.prompt_variant not in range(len(personas.PROMPT_VARIANTS)):
            problems.append(f"prompt_variant must be 0-{len(personas.PROMPT_VARIANTS) - 1} or None")
        if not (isinstance(self.temperature, int | float) and 0 <= self.temperature <= 2):
            problems.append("temperature must be in [0, 2]")
        if not (isinstance(self.max_tokens, int) and self.max_tokens >= 1):
            problems.append("max_tokens must be a positive integer")
        for name in ("price_in", "price_out"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or not math.isfinite(value) or value < 0):  # fmt: skip
                problems.append(f"{name} must be a number >= 0 (dollars per million tokens)")
        if problems:
            raise ValueError("invalid language-model buyer: " + "; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def configure(buyer: object, model: str | None, base_url: str | None, api_key_env: str | None,
              price_in: float | None = None, price_out: float | None = None) -> LLMBuyer | None:  # fmt: skip
    """``DeskEnv``'s buyer arguments as a configuration: None for the rule-based buyer (``"rules"``); the prices
    (dollars per million prompt / completion tokens) apply to ``"llm"`` only."""
    priced = price_in is not None or price_out is not None
    if priced and buyer != "llm":
        raise ValueError("buyer_price_in and buyer_price_out apply to buyer='llm' (an LLMBuyer carries its own "
                         "price_in and price_out)")  # fmt: skip
    if isinstance(buyer, LLMBuyer):
        return buyer
    if isinstance(buyer, Mapping):
        fields = {f.name for f in dataclasses.fields(LLMBuyer)}
        unknown = sorted(map(str, set(buyer) - fields))
        if unknown:
            raise ValueError(f"unknown language-model buyer setting(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(fields))}")  # fmt: skip
        return LLMBuyer(**dict(buyer))
    if buyer == "rules":
        if model is not None or base_url is not None:
            raise ValueError("buyer_model and buyer_base_url apply to buyer='llm'")
        return None
    if buyer == "llm":
        return LLMBuyer(model or "", base_url, api_key_env or "OPENAI_API_KEY", price_in=price_in,
                        price_out=price_out)  # fmt: skip
    raise ValueError(f"buyer must be 'rules', 'llm' or an LLMBuyer, got {buyer!r}")


def request_seed(world_seed: int, lead_id: str, base: int = 0) -> int:
    """The sampling seed of every request about ``lead_id`` (a scripted server keys its scripts by it)."""
    digest = hashlib.sha256(f"salesgym/desk-buyer/v1:{world_seed}:{lead_id}:{base}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2**31


def prompt_variant(config: LLMBuyer, world: DeskWorld, lead_id: str) -> int:
    if config.prompt_variant is not None:
        return config.prompt_variant
    return int(uniform(world.seed, "buyer-prompt", lead_id) * len(personas.PROMPT_VARIANTS))


class Heard(NamedTuple):
    """What the buyer made of an offer: a decision (None after a buyer error), its words, the tape's record."""

    decision: buyers.Decision | None
    say: str
    reply: dict[str, Any] | None  # the ``buyer_replied`` payload (None: the rules decided without the model)
    error: str | None


# --- the transcript ---------------------------------------------------------------------------------------------
HEARD_KINDS = frozenset({"call_started", "call_refused", "discovery_answered", "offer_proposed", "buyer_replied",
                         "buyer_decided", "buyer_hung_up", "call_ended"})  # fmt: skip


def offer_words(plan: str, coverage: int, term_years: int | None, premium: float, discount: int, next_step: str,
                pitch: str | None) -> str:  # fmt: skip
    term = f", {term_years} years" if term_years else ""
    off = f" after a {discount}% discount" if discount else ""
    ask = "asks you to decide today" if next_step == "close_today" else "offers to follow up"
    said = f' The seller says: "{pitch}"' if pitch else ""
    return f"The seller offers {plan} cover of ${coverage:,}{term} at ${premium:,.2f} a month{off}, and {ask}.{said}"


def transcript(log: EventLog, quotes: Mapping[str, Any], lead_id: str) -> list[str]:
    """This lead's conversation so far, one line per happening: built from events whose ``lead_id`` is this
    lead's, of the kinds a buyer witnesses (never a note, never another lead)."""
    lines: list[str] = []
    for e in log:
        if e.kind not in HEARD_KINDS or e.payload.get("lead_id") != lead_id:
            continue
        p = e.payload
        if e.kind == "call_started":
            lines.append("(The seller calls you.)")
        elif e.kind == "call_refused":
            lines.append("(The seller called again; you refused the call.)")
        elif e.kind == "discovery_answered":
            lines.append(f"The seller asks about your {p['topic']}; you answer: {p['value']}.")
        elif e.kind == "offer_proposed":
            q = quotes[p["quote_id"]]
            lines.append(offer_words(q.plan, q.coverage, q.term_years, p["premium"], p["discount_pct"],
                                     p["next_step"], p.get("pitch")))  # fmt: skip
        elif e.kind == "buyer_replied" and p.get("say"):
            lines.append(f'You said: "{p["say"]}"')
        elif e.kind == "buyer_decided":
            reason = f" ({REJECT_REASONS.get(p['reason'], p['reason'])})" if p.get("reason") else ""
            lines.append(f"Your decision: {p['decision'].replace('_', ' ')}{reason}.")
        elif e.kind in ("buyer_hung_up", "call_ended"):
            lines.append("(The call ends.)")
    return lines


# --- the buyer --------------------------------------------------------------------------------------------------
class ModelBuyer:
    """The buyer of every lead of one environment: its configuration, its tape (request sha256 -> the recorded
    ``buyer_replied`` payload; shared by the environment's clones) and a client made on the first real request."""

    def __init__(self, config: LLMBuyer) -> None:
        from salesgym.llm.config import LLMConfig

        c = self.config = config
        self.llm = LLMConfig(model=c.model, base_url=c.base_url, api_key_env=c.api_key_env, timeout_s=c.timeout_s,
                             max_retries=c.max_retries, temperature=c.temperature, top_p=None,
                             max_tokens=c.max_tokens, tool_choice=None,
                             extra_body={"response_format": RESPONSE_FORMAT})  # fmt: skip
        self.tape: dict[str, dict[str, Any]] = {}
        self.sent = 0  # requests this process actually sent (a replay sends none)
        self._client: Any = None

    def load(self, events: Iterable[Mapping[str, Any]]) -> int:
        """Put every ``buyer_replied`` record of an event log (or the bare records) on the tape; returns how many."""
        n = 0
        for e in events:
            record = e["payload"] if e.get("kind") == "buyer_replied" else e if "request_sha256" in e else None
            if record is not None:
                self.tape[str(record["request_sha256"])] = dict(record)
                n += 1
        return n

    def request(self, world: DeskWorld, lead: Lead, lines: list[str], offer: str) -> dict[str, Any]:
        """The JSON body the endpoint is asked for this offer (``client.request_body``: what is posted)."""
        from salesgym.llm.client import request_body

        c = self.config
        system = personas.system_prompt(lead, world.variant, prompt_variant(c, world, lead.id),
                                        buyers.target_cover(lead, "TERM"))  # fmt: skip
        history = "\n".join(lines) if lines else "(This is the start of your conversation with the seller.)"
        user = f"The conversation so far:\n{history}\n\nNow: {offer}\nAnswer with the JSON object."
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return request_body(self.llm, messages, [], request_seed(world.seed, lead.id, c.seed))

    def _ask(self, body: dict[str, Any], digest: str, lead_id: str) -> dict[str, Any]:
        """The tape's record for this request: from the tape, else from the endpoint (then taped)."""
        taped = self.tape.get(digest)
        if taped is not None:
            return taped
        record: dict[str, Any] = {"lead_id": lead_id, "request_sha256": digest, "model": self.config.model,
                                  "content": None, "say": None, "error": None, "attempts": 1,
                                  "usage": {"prompt_tokens": 0, "completion_tokens": 0}}  # fmt: skip
        if self.config.offline:  # a strict replay: what is not on the tape is not asked
            record["error"] = "the request is not on the buyer tape (offline: no request is sent)"
            self.tape[digest] = record
            return record
        self.sent += 1
        try:
            if self._client is None:
                from salesgym.llm.client import ChatClient

                self._client = ChatClient(self.llm)
            done = self._client.complete(body["messages"], [], body["seed"])
            record["attempts"] = done.requests
            record["usage"] = {"prompt_tokens": done.usage.prompt_tokens,
                               "completion_tokens": done.usage.completion_tokens}  # fmt: skip
            record["content"] = done.message.get("content")
        except Exception as err:  # any failure of the counterparty's endpoint: a recorded buyer error
            record["error"] = _clip(f"{type(err).__name__}: {err}")
            record["attempts"] = max(1, len(getattr(err, "errors", ())))
        self.tape[digest] = record
        return record

    def hear(self, ctx: Ctx, lead: Lead, offer: buyers.Offer, history: buyers.History, term_years: int | None,
             discount: int, pitch: str | None) -> Heard:  # fmt: skip
        """The buyer's answer to ``offer``: the rules' refusal when a hard gate fails, else the model's."""
        world = ctx.world
        arch = BY_NAME[lead.archetype]
        gate = buyers.gate(lead, VARIANTS[world.variant], offer, history, buyers.plan_fit(lead, offer.plan, arch))
        if gate is not None:  # outside what the rules allow: refused, the model is not asked
            d = _refusal(lead, history, gate)
            return Heard(d, CANNED.speak(d.decision, d.reason, lead.persona), None, None)
        words = offer_words(offer.plan, offer.coverage, term_years, offer.premium, discount, offer.next_step, pitch)
        body = self.request(world, lead, transcript(ctx.log, ctx.state.quotes, lead.id), words)
        digest = sha256_of(body)
        record = self._ask(body, digest, lead.id)
        if record["error"] is not None:
            return Heard(None, "", record, record["error"])
        reply, problem = parse(record["content"])
        if reply is None:
            return Heard(None, "", record, problem)
        record = {**record, "say": reply.say.strip()[:SAY_MAX]}
        self.tape[digest] = record
        return Heard(_decision(lead, history, reply), record["say"], record, None)

    def __getstate__(self) -> dict[str, Any]:  # an HTTP client does not travel to a worker or a pickle
        return {**self.__dict__, "_client": None}


CANNED = buyers.CannedVoice()


def parse(content: object) -> tuple[Reply | None, str | None]:
    """The reply a model's text holds, or None and why not (one JSON object, as ``SCHEMA`` says; a code fence
    around it is tolerated, nothing else)."""
    if not isinstance(content, str) or not content.strip():
        return None, "the buyer model returned no text"
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return None, _clip(f"the buyer model's reply is not JSON: {content!r}")
    try:
        return Reply.model_validate(data), None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(map(str, first["loc"])) or "reply"
        return None, _clip(f"the buyer model's reply breaks the schema at {where}: {first['msg']}")


def _refusal(lead: Lead, history: buyers.History, reason: str) -> buyers.Decision:
    """A refusal, patience spent as the rule table spends it; at its end the buyer hangs up."""
    patience = round(history.patience - buyers.PATIENCE_COST[history.rejections >= 2], 4)
    if patience <= buyers.HANG_UP_AT:
        arch = BY_NAME[lead.archetype]
        trust = min(1.0, lead.trust + arch.discovery * min(history.topics, 3))
        return buyers.Decision("hang_up", "out_of_patience", patience, patience <= 0.0 or trust < buyers.DNC_TRUST,
                               0.0, 0.0)  # fmt: skip
    return buyers.Decision("reject", reason, patience, False, 0.0, 0.0)


def _decision(lead: Lead, history: buyers.History, reply: Reply) -> buyers.Decision:
    if reply.decision == "accept":
        return buyers.Decision("accept", None, history.patience, False, 0.0, 0.0)
    if reply.decision == "ask":  # a question costs no patience; the offer stands undecided
        return buyers.Decision("ask", None, history.patience, False, 0.0, 0.0)
    if reply.decision == "hang_up":
        return buyers.Decision("hang_up", "out_of_patience", history.patience, reply.do_not_call, 0.0, 0.0)
    return _refusal(lead, history, reply.reason or "not_convinced")


def usage(log: EventLog, config: LLMBuyer) -> dict[str, Any]:
    """The buyer model's requests, tokens and cost in this episode (apart from the seller's), from the tape."""
    replies = prompt = completion = failed = 0
    for e in log:
        if e.kind == "buyer_replied":
            replies += 1
            prompt += int(e.payload["usage"]["prompt_tokens"])
            completion += int(e.payload["usage"]["completion_tokens"])
            failed += e.payload["error"] is not None
    cost = None
    if config.price_in is not None and config.price_out is not None:
        cost = round((prompt * config.price_in + completion * config.price_out) / 1e6, 6)
    return {"buyer_model": config.model, "buyer_replies": replies, "buyer_failed_requests": failed,
            "buyer_prompt_tokens": prompt, "buyer_completion_tokens": completion, "buyer_cost_usd": cost}  # fmt: skip


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ERROR_MAX else text[: ERROR_MAX - 3] + "..."


def bench_options(family: str, buyer: str | None, model: str | None, base_url: str | None,
                  api_key_env: str | None, price_in: float | None = None,
                  price_out: float | None = None) -> dict[str, str | float | None]:  # fmt: skip
    """``salesgym bench``'s ``--buyer`` options as the desk's ``make`` arguments (none for the rule-based
    buyer, so its runs keep their ids; the prices only when given, so an unpriced run keeps its id), after asking
    the buyer's endpoint once; ``ValueError`` says what is wrong in one line."""
    if buyer in (None, "rules"):
        if any(v is not None for v in (model, base_url, api_key_env, price_in, price_out)):
            raise ValueError("--buyer-model, --buyer-base-url, --buyer-api-key-env, --buyer-price-in and "
                             "--buyer-price-out apply to --buyer llm")  # fmt: skip
        return {}
    if buyer != "llm":
        raise ValueError(f"--buyer must be rules or llm, got {buyer!r}")
    if family != "desk":
        raise ValueError(f"--buyer llm applies to desk splits; this split is a {family} split")
    config = LLMBuyer(model or "", base_url, api_key_env or "OPENAI_API_KEY", price_in=price_in, price_out=price_out)
    if not os.environ.get(config.api_key_env):
        raise ValueError(f"set ${config.api_key_env} to the buyer endpoint's API key (any value for a local server "
                         "that ignores it), or name another with --buyer-api-key-env")  # fmt: skip
    from salesgym.llm.client import ChatClient

    info = ChatClient(ModelBuyer(config).llm).probe()
    if info.unreachable is not None or info.refused is not None:
        raise ValueError(f"the buyer endpoint {base_url or 'api.openai.com'} "
                         + (f"does not answer ({info.unreachable})" if info.unreachable else
                            f"refused the key in ${config.api_key_env} ({info.refused})"))  # fmt: skip
    prices = {f"buyer_{k}": v for k, v in (("price_in", price_in), ("price_out", price_out)) if v is not None}
    return {"buyer": "llm", "buyer_model": config.model, "buyer_base_url": base_url,
            "buyer_api_key_env": config.api_key_env, **prices}  # fmt: skip
