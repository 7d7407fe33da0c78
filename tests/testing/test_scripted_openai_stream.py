"""The scripted OpenAI server streams a chat answer the way OpenAI does, read here by the openai SDK."""

from __future__ import annotations

import json

import openai

from salesgym.testing.scripted_openai import ScriptedOpenAI, text_reply, tool_call


def test_a_streamed_answer_assembles_to_the_same_message_and_usage() -> None:
    moves = [tool_call("wait", {"hours": 2.0}), text_reply("done")]
    with ScriptedOpenAI({None: moves}) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        chunks = list(client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "hi"}],
                                                     stream=True, stream_options={"include_usage": True}))  # fmt: skip
        plain = client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "hi"}])
        streamed_usage = server.requests[0]["usage"]
    calls = [c for chunk in chunks for choice in chunk.choices for c in choice.delta.tool_calls or []]
    assert len(calls) == 1 and calls[0].function.name == "wait"
    assert json.loads(calls[0].function.arguments or "") == {"hours": 2.0}
    assert [choice.finish_reason for chunk in chunks for choice in chunk.choices] == [None, "tool_calls"]
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == streamed_usage["total_tokens"]
    assert plain.choices[0].message.content == "done"  # streaming does not change the script's order
