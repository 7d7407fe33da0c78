"""A tokenizer and tiny causal LMs the adapter tests build themselves (no hub downloads).

The tokenizer is a byte-level BPE trained on a territory's task card, tool schemas and observations, with
ChatML special tokens; two chat templates: ``PREFIX`` (ChatML, prefix-preserving) and ``THINK`` (its
generation prompt opens an empty reasoning block that a rendered reply does not have, and rendered replies
drop any reasoning: like Qwen3's, not prefix-preserving).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import salesgym

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_TOOLS = "{% if tools %}\n\n# Tools\n{% for t in tools %}{{ t | tojson }}\n{% endfor %}{% endif %}"
_TURNS = (
    "{% for m in messages %}"
    "{% if m.role == 'system' %}<|im_start|>system\n{{ m.content }}" + _TOOLS + "<|im_end|>\n"
    "{% elif m.role == 'assistant' %}<|im_start|>assistant\n{{ REPLY }}<|im_end|>\n"
    "{% elif m.role == 'tool' %}<|im_start|>user\n<tool_response>\n{{ m.content }}\n</tool_response><|im_end|>\n"
    "{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{% endif %}{% endfor %}"
)
PREFIX = (
    _TURNS.replace("{{ REPLY }}", "{{ m.content }}")
    + "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
THINK = (
    _TURNS.replace("{{ REPLY }}", "{{ m.content.split('</think>')[-1].lstrip() }}")
    + "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n\n</think>\n\n{% endif %}"
)


def call_text(tool: str, args: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': tool, 'arguments': args})}\n</tool_call>"


@cache
def _bpe_json() -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    env = salesgym.make("territory-debug-v0")
    corpus = []
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        corpus += [info["instructions"], obs["text"], json.dumps(env.tool_schemas())]
        obs, *_ = env.step({"tool": "view_opportunity", "args": {"opportunity_id": None, "page": 0}})
        corpus.append(obs["text"])
    corpus.append(call_text("wait", {"hours": 2.0, "until": None}))
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # fmt: skip
    tok.train_from_iterator(corpus, trainer)
    return str(tok.to_str())


def make_tokenizer(template: str = PREFIX) -> Any:
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(_bpe_json()),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=template,
    )


def tiny_model(tokenizer: Any, seed: int = 0) -> Any:
    """A randomly initialised Llama of about 200k parameters."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=48, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32_768,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
    )  # fmt: skip
    return LlamaForCausalLM(config)
