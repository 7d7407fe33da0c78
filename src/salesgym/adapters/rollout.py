"""The framework-neutral, token-level rollout: a model client plays tool-call episodes of any registered
environment and each episode comes back as token ids a trainer can use as they are (docs/training.md).

Each turn the client gets the exact ids of the sequence so far and returns the ids it generated; those ids
are appended as they are (mask 1, with their logprobs), the reply's text is parsed into a tool call and
stepped, and the environment's answer is tokenised as a delta (:mod:`salesgym.adapters.chat_tokens`) and
appended (mask 0, logprob 0.0). The conversation is the LLM policy's: the task card as the system prompt,
the first observation as the user message, each observation after a call as that call's ``tool`` message;
a reply without a tool call is still one step (the environment refuses the text as an invalid action) and
its answer is a user message asking for a call.

The return is the environment's plain sum of step rewards (docs/reward.md); the verifier's score is
attached operator side. :func:`group_rollout` plays N copies of one world: one reset, then ``clone()``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import salesgym
from salesgym.adapters.chat_tokens import ChatTokens, Message, Tokenizer
from salesgym.adapters.clients import ModelClient, turn_seed
from salesgym.agents.llm.policy import DEFAULT_SYSTEM, NUDGE
from salesgym.agents.llm.text_calls import parse_tool_call
from salesgym.core.events import sha256_of
from salesgym.core.observation_text import observation_text
from salesgym.llm.compact_tools import compact_tools

FORMAT = "salesgym-token-trajectory/1"


@dataclass(frozen=True)
class RolloutConfig:
    """``max_turns`` replies per episode; ``max_new_tokens`` per reply; ``max_tokens`` for the whole
    sequence (prompt and completion: a turn that might not fit is not started); ``template_kwargs`` go to
    the chat template; ``tool_schemas`` is how the prompt shows the tools: ``"full"`` (the environment's
    schemas) or ``"compact"`` (:mod:`salesgym.llm.compact_tools`, for a model with a short context); ``tools``
    which: ``"all"``, or ``"usable"``, only those the world lets the agent call where the family narrows them
    (``env.usable_tools()``: a workflows task's apps and its desk, which its task card names; the others would
    be refused), for a prompt that must be shorter still."""

    max_turns: int = 32
    max_new_tokens: int = 512
    max_tokens: int = 32_768
    template_kwargs: Mapping[str, Any] = field(default_factory=dict)
    tool_schemas: Literal["full", "compact"] = "full"
    tools: Literal["all", "usable"] = "all"

    def __post_init__(self) -> None:
        if self.tool_schemas not in ("full", "compact"):
            raise ValueError(f"tool_schemas must be 'full' or 'compact', got {self.tool_schemas!r}")
        if self.tools not in ("all", "usable"):
            raise ValueError(f"tools must be 'all' or 'usable', got {self.tools!r}")


@dataclass
class Turn:
    """One reply: the model's ids are ``completion_ids[start:end]``, the environment's answer
    ``completion_ids[end:env_end]`` (``env_end == end`` after the last turn)."""

    start: int
    end: int
    env_end: int
    text: str
    finish: str
    action: Any
    tool_result: dict[str, Any]
    reward: float


@dataclass
class TokenTrajectory:
    """One episode at token level (the fields are listed in docs/training.md)."""

    env_id: str
    world_id: str
    group_id: str
    index: int
    seed: int
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    logprobs: list[float] | None = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    end: str = ""
    score: dict[str, Any] = field(default_factory=dict)
    world_digest: str = ""  # sha256 of the hidden world: equal across a group's copies, operator side

    @property
    def rewards(self) -> list[float]:
        return [t.reward for t in self.turns]

    @property
    def episode_return(self) -> float:
        """The environment's undiscounted sum of step rewards: the return every adapter trains on."""
        return float(sum(self.rewards))

    @property
    def tool_events(self) -> list[dict[str, Any]]:
        return [{"turn": i, "action": t.action, "tool_result": t.tool_result} for i, t in enumerate(self.turns)]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(format=FORMAT, rewards=self.rewards, episode_return=self.episode_return)
        return data


def shown_tools(env: Any, cfg: RolloutConfig) -> list[dict[str, Any]]:
    """The tools the prompt shows, as ``cfg`` says (``tools``, then ``tool_schemas``)."""
    schemas = env.tool_schemas()
    usable = env.usable_tools() if cfg.tools == "usable" else None
    if usable is not None:
        schemas = [s for s in schemas if s["function"]["name"] in usable]
    return schemas if cfg.tool_schemas == "full" else compact_tools(schemas)


def play(
    env: Any,
    client: ModelClient,
    tokenizer: Tokenizer,
    *,
    seed: int,
    config: RolloutConfig | None = None,
    env_id: str = "",
    world_id: str = "",
    group_id: str = "",
    index: int = 0,
    parse: Callable[[str], tuple[Any, dict[str, Any] | None]] = parse_tool_call,
) -> TokenTrajectory:
    """Play one episode in ``env``, which is freshly reset with ``seed`` (or a fresh clone of such)."""
    cfg = config or RolloutConfig()
    tools = shown_tools(env, cfg)
    chat = ChatTokens(tokenizer, tools, cfg.template_kwargs)
    messages: list[Message] = [
        {"role": "system", "content": env.instructions() or DEFAULT_SYSTEM},
        {"role": "user", "content": observation_text(env.observe())},
    ]
    traj = TokenTrajectory(env_id, world_id or f"{env_id}:{seed}", group_id, index, seed, chat.prompt_ids(messages))
    traj.messages = messages
    has_logprobs = True
    traj.end = "max_turns"
    sequence = list(traj.prompt_ids)  # prompt and completion so far, grown in place: no copy per turn
    completion, mask, turns = traj.completion_ids, traj.mask, traj.turns  # the trajectory's own lists, grown in place
    for turn in range(cfg.max_turns):
        if len(sequence) + cfg.max_new_tokens > cfg.max_tokens:
            traj.end = "context_limit"
            break
        gen = client.generate(sequence, max_new_tokens=cfg.max_new_tokens, seed=turn_seed(seed, index, turn))
        start = len(completion)
        completion += gen.ids
        sequence += gen.ids
        mask += [1] * len(gen.ids)
        has_logprobs = has_logprobs and gen.logprobs is not None
        if has_logprobs and gen.logprobs is not None and traj.logprobs is not None:
            traj.logprobs += gen.logprobs
        else:
            traj.logprobs = None
        text = chat.decode(gen.ids)
        reply = text.removesuffix(chat.eos_text) if gen.finish == "stop" else text
        action, call = parse(reply)
        obs, reward, terminated, truncated, info = env.step(action)
        assistant: Message = {"role": "assistant", "content": reply}
        if call is not None:
            call_id = f"call_{turn}"
            arguments = json.dumps(call["arguments"])
            assistant["tool_calls"] = [{"id": call_id, "type": "function",
                                        "function": {"name": call["name"], "arguments": arguments}}]  # fmt: skip
            answer: Message = {"role": "tool", "tool_call_id": call_id, "content": observation_text(obs)}
        else:
            answer = {"role": "user", "content": f"{NUDGE}\n\n{observation_text(obs)}"}
        messages += [assistant, answer]
        end = len(completion)
        done = terminated or truncated
        if not done and turn + 1 < cfg.max_turns:  # the last answer is never trained on: left out
            env_ids = chat.env_turn_ids([answer], gen.ids)
            completion += env_ids
            sequence += env_ids
            mask += [0] * len(env_ids)
            if traj.logprobs is not None:
                traj.logprobs += [0.0] * len(env_ids)
        turns.append(Turn(start, end, len(completion), text, gen.finish, action, info["tool_result"], float(reward)))
        if done:
            traj.end = "terminated" if terminated else "truncated"
            break
    traj.score = env.score()
    traj.world_digest = sha256_of(env.hidden_truth())
    return traj


def group_rollout(
    env_id: str,
    client: ModelClient | Sequence[ModelClient],
    tokenizer: Tokenizer,
    *,
    seed: int,
    n: int,
    config: RolloutConfig | None = None,
    make_kwargs: Mapping[str, Any] | None = None,
    world_id: str | None = None,
    group_id: str | None = None,
) -> list[TokenTrajectory]:
    """``n`` episodes of one world: the environment is made and reset with ``seed`` once and each episode
    plays its own ``clone()`` (same world, same event tape, its own state). ``client`` is one client for all
    (each copy samples with its own seeds) or one per copy."""
    clients = list(client) if isinstance(client, Sequence) else [client] * n
    if len(clients) != n:
        raise ValueError(f"{len(clients)} clients for a group of {n}")
    env = salesgym.make(env_id, **dict(make_kwargs or {}))
    env.reset(seed=seed)
    world = world_id or f"{env_id}:{seed}"
    copies = [env.clone() for _ in range(n)]  # cloned before any step: every copy starts where reset left it
    return [
        play(
            twin,
            c,
            tokenizer,
            seed=seed,
            config=config,
            env_id=env_id,
            world_id=world,
            group_id=group_id or world,
            index=i,
        )
        for i, (twin, c) in enumerate(zip(copies, clients, strict=True))
    ]
