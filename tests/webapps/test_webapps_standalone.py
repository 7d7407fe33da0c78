"""The apps standalone: each in its own process on its own origin (``salesgym apps serve APP``), all keyed by
the verifier API's run id; the verifier API (``salesgym serve``) judges the run once across them, and its
verdict is the in-process one for the same instance."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))
from serve_helpers import OPERATOR, free_port, running

import salesgym
from salesgym.agents import make_policy
from salesgym.agents.base import rollout
from salesgym.webapps.control import judge, outcome

TEMPLATE, SEED = "sql-handoff", 1
FORM = {"content-type": "application/x-www-form-urlencoded"}


@contextmanager
def app_server(app: str, log: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "SALESGYM_OPERATOR_TOKEN": OPERATOR}
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "salesgym.cli", "apps", "serve", app, "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                if httpx.get(url + "/healthz", timeout=1).json()["app"] == app:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _post(client: httpx.Client, path: str, pairs: list[tuple[str, str]]) -> httpx.Response:
    from urllib.parse import urlencode

    r = client.post(path, content=urlencode(pairs), headers=FORM)
    assert r.status_code == 303, r.text[-500:]
    return r


def test_apps_in_separate_processes_are_judged_once_as_in_process(tmp_path: Path) -> None:
    with ExitStack() as stack:
        verifier = stack.enter_context(running(tmp_path, "--no-access-log"))
        auth = {"Authorization": f"Bearer {OPERATOR}"}
        created = httpx.post(verifier.url + "/runs", json={"kwargs": {"template": TEMPLATE}, "seed": SEED},
                             headers=auth, timeout=30)
        run_id = created.json()["run_id"]
        urls = {app: stack.enter_context(app_server(app, tmp_path / f"{app}.log"))
                for app in ("crm", "sequencer", "task")}
        clients: dict[str, httpx.Client] = {}
        for app, url in urls.items():
            spec = {"run_id": run_id, "env_id": "workflows-v0", "kwargs": {"template": TEMPLATE}, "seed": SEED}
            assert httpx.post(url + "/api/runs", json=spec, timeout=30).status_code == 401  # the token guards /api
            opened = httpx.post(url + "/api/runs", json=spec, headers=auth, timeout=30)
            assert opened.status_code == 201, opened.text
            clients[app] = stack.enter_context(httpx.Client(base_url=url, cookies={"sgrun": run_id}, timeout=30))
        env = salesgym.make("workflows-v0", template=TEMPLATE)
        env.reset(seed=SEED)
        p = env.hidden_truth()["instance"]["params"]
        one, two = p["people"]
        seq = clients["sequencer"]
        account = _post(seq, "/accounts/new", [("name", two["company"]), ("domain", two["domain"])])
        assert account.headers["location"].startswith("/accounts")
        made = []
        for person, account_id in ((one, one["account_id"]), (two, p["new_account_id"])):
            r = _post(seq, "/prospects/new", [("emails", person["email"]), ("firstName", person["first"]),
                                              ("lastName", person["last"]), ("accountId", str(account_id)),
                                              ("ownerId", str(person["user"]))])
            made.append(r.headers["location"].rsplit("/", 1)[-1])
        for person, prospect in zip((one, two), made, strict=True):
            _post(seq, f"/sequences/{p['sequence_id']}/add", [("prospectIds", prospect),
                                                              ("mailboxId", str(person["mailbox"]))])
        for person in (one, two):
            status = [("hs_lead_status", "ATTEMPTED_TO_CONTACT")]
            _post(clients["crm"], f"/contacts/{person['contact_id']}/edit", status)
        _post(clients["task"], "/finish", [("summary", "handed to outbound")])
        verdict = judge(run_id, urls, verifier.url, run_id, OPERATOR, OPERATOR)
    reference = make_policy("reference", seed=SEED, hidden_truth=env.hidden_truth(), family="workflows")
    for _ in rollout(env, reference, seed=SEED):
        pass
    local = env.score()
    assert verdict["passed"] is True and verdict["apps"] == ["crm", "sequencer"]
    assert outcome(verdict) == outcome(local)


def test_a_standalone_app_refuses_bad_run_specs(tmp_path: Path) -> None:
    with app_server("crm", tmp_path / "crm.log") as url:
        auth = {"Authorization": f"Bearer {OPERATOR}"}
        for spec, word in (({"seed": -1}, "seed"), ({"seed": 1, "env_id": "territory-v0"}, "env_id"),
                           ({"seed": 1, "kwargs": {"judge": "llm"}}, "kwargs"), ({"seed": 1, "nope": 1}, "unknown"),
                           ({"seed": 1, "kwargs": {"template": "no-such"}}, "template")):
            r = httpx.post(url + "/api/runs", json=spec, headers=auth, timeout=30)
            assert r.status_code == 422 and word in r.json()["error"]["message"], r.text
        assert httpx.post(url + "/api/runs", content=b"[1", headers=auth, timeout=30).status_code == 422
        assert httpx.get(url + "/api/runs/nope/export", headers=auth, timeout=30).status_code == 404
        assert httpx.get(url + "/contacts", timeout=30).status_code == 404  # no run cookie: no page
