"""The OpenEnv adapter: OpenEnv's own app factory on a real uvicorn server on loopback, full episodes
played through OpenEnv's own ``EnvClient`` over the WebSocket session (runs in its own venv: ``.ci/run``)."""

from __future__ import annotations

import pytest

pytest.importorskip("openenv")

import httpx
from env_episodes import reference
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction, ListToolsObservation

import salesgym
from salesgym.adapters.openenv import SalesgymClient, SalesgymObservation, serve
from salesgym.adapters.tool_episode import split_tasks


@pytest.mark.parametrize(
    ("env_id", "family", "seed"),
    [("territory-debug-v0", "territory", 3), ("desk-debug-v0", "desk", 5), ("workflows-debug-v0", "workflows", 2)],
)
def test_full_episode_over_the_websocket_session_matches_in_process(env_id: str, family: str, seed: int) -> None:
    ref = reference(lambda: salesgym.make(env_id), family, seed)
    with serve(env_id) as url, SalesgymClient(base_url=url).sync() as client:
        first = client.reset(seed=seed)
        obs = first.observation
        assert isinstance(obs, SalesgymObservation) and not first.done
        assert obs.instructions and obs.text
        assert obs.tools == salesgym.make(env_id).mcp_tools()  # the environment's own schemas
        rewards, results = [], []
        for action in ref.actions:
            result = client.step(CallToolAction(tool_name=action["tool"], arguments=action.get("args") or {}))
            rewards.append(result.reward)
            results.append(result)
        state = client.state()
    assert rewards == ref.rewards
    assert [r.done for r in results] == [False] * (len(results) - 1) + [True]
    last = results[-1]
    assert last.metadata is not None and last.metadata["terminated"]
    report = last.metadata["salesgym"]
    assert report["event_log_hash"] == ref.event_log_hash  # the same calls made in process: the same log
    assert report["score"] == ref.score and report["episode_return"] == pytest.approx(ref.episode_return)
    assert state.event_log_hash == ref.event_log_hash and state.step_count == len(ref.actions) and state.done


def test_listing_refusals_and_split_worlds() -> None:
    task = split_tasks("debug")[1]
    with serve("territory-v0") as url:
        with SalesgymClient(base_url=url).sync() as client:
            with pytest.raises(RuntimeError, match=r"call reset\(\) before step"):
                client.step(CallToolAction(tool_name="wait", arguments={}))
            with pytest.raises(RuntimeError, match="seed must be an int"):
                client.reset(seed=-1)
            with pytest.raises(RuntimeError, match="index must be in"):
                client.reset(split="debug", index=7)
            listing = client.step(ListToolsAction())  # the session outlives the refusals
            assert isinstance(listing.observation, ListToolsObservation)
            names = [t.name for t in listing.observation.tools]
            assert names == [t["name"] for t in salesgym.make("territory-v0").mcp_tools()]
            first = client.reset(split="debug", index=1)
            assert first.observation.metadata["seed"] == task.seed
            assert first.observation.text == task.start().first_text  # the split's world, as bench makes it
            bad = client.step(CallToolAction(tool_name="teleport", arguments={"to": "Mars"}))
            assert bad.reward == 0.0 and not bad.done and bad.observation.result["status"] == "error"
            assert "teleport" in bad.observation.result["output"]["error"]
        splits = httpx.get(f"{url}/territory-v0/splits", timeout=5).json()
        assert {"name": "debug", "type": "test"} in splits and "desk-eval" not in {s["name"] for s in splits}
        listed = httpx.post(f"{url}/territory-v0/task", json={"split": "debug", "index": 1}, timeout=5).json()["task"]
        assert listed["id"] == task.id and listed["seed"] == task.seed
        assert httpx.post(f"{url}/territory-v0/num_tasks", json={"split": "debug"}, timeout=5).json() == {
            "num_tasks": 3
        }
        assert httpx.post(f"{url}/territory-v0/task", json={"split": "debug", "index": 9}, timeout=5).status_code == 400
        # plain HTTP: /reset then /step each get a fresh environment; the step is refused with the reason
        assert httpx.post(f"{url}/reset", json={"seed": 3}, timeout=5).status_code == 200
        step = httpx.post(f"{url}/step", json={"action": {"type": "call_tool", "tool_name": "wait",
                                                          "arguments": {}}}, timeout=5)  # fmt: skip
        assert step.status_code == 409 and "needs a session: the /ws WebSocket" in step.json()["detail"]
        assert "Traceback" not in step.text
        bad = httpx.post(f"{url}/reset", json={"split": "debug", "index": 7}, timeout=5)
        assert bad.status_code == 400 and "index must be in" in bad.json()["detail"]
        health = httpx.get(f"{url}/health", timeout=5)
        assert health.status_code == 200
        schema = httpx.get(f"{url}/schema", timeout=5).json()
        assert "text" in schema["observation"]["properties"]


def test_openenvs_generic_client_plays_the_episode_with_plain_dict_actions() -> None:
    from openenv import GenericEnvClient  # what tools that know nothing of salesgym use (e.g. verifiers')

    ref = reference(lambda: salesgym.make("desk-debug-v0"), "desk", 5)
    with serve("desk-debug-v0") as url, GenericEnvClient(base_url=url).sync() as client:
        assert client.reset(seed=5).observation["instructions"]
        results = [client.step({"type": "call_tool", "tool_name": a["tool"], "arguments": a.get("args") or {}})
                   for a in ref.actions]  # fmt: skip
    assert [r.reward for r in results] == ref.rewards and results[-1].done
    assert results[-1].observation["metadata"]["salesgym"]["score"] == ref.score


def test_openenv_mcp_json_rpc_inside_a_websocket_session_steps_the_episode() -> None:
    import json

    from websockets.sync.client import connect

    ref = reference(lambda: salesgym.make("desk-debug-v0"), "desk", 5)
    with serve("desk-debug-v0") as url, connect(url.replace("http://", "ws://") + "/ws") as ws:

        def send(message: dict) -> dict:
            ws.send(json.dumps(message))
            return dict(json.loads(ws.recv()))

        assert send({"type": "reset", "data": {"seed": 5}})["type"] == "observation"
        listed = send({"type": "mcp", "data": {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}}})
        assert [t["name"] for t in listed["data"]["result"]["tools"]] == [
            t["name"] for t in salesgym.make("desk-debug-v0").mcp_tools()
        ]
        rewards = []
        for i, action in enumerate(ref.actions):
            params = {"name": action["tool"], "arguments": action.get("args") or {}}
            reply = send({"type": "mcp", "data": {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                                                   "params": params}})  # fmt: skip
            rewards.append(reply["data"]["result"]["reward"])
        final = reply["data"]["result"]
    assert rewards == ref.rewards and final["done"]
    assert final["metadata"]["salesgym"]["event_log_hash"] == ref.event_log_hash


def test_an_unknown_environment_is_refused_when_the_app_is_made() -> None:
    from salesgym.adapters.openenv import make_app

    with pytest.raises(ValueError, match="unknown environment"):
        make_app("nope-v0")
