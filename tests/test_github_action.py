"""The GitHub Action (action.yml, docs/github-action.md) and its review poster,
`python -m memlint.integrations.github_review`, run as the action runs it against a local fake of the
GitHub REST endpoints it calls (small pages to force pagination, 422 for a line outside the diff,
403 for a fork's read-only token)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from integration_helpers import REPO, memlint

TOKEN = "test-token"
FORK_TOKEN = "fork-token"
HEAD = "a" * 40
PAGE_SIZE = 2


class FakeGitHub:
    """State of one repository's pull requests, served with GitHub's shapes."""

    def __init__(self) -> None:
        self.reviews: list[dict] = []
        self.comments: list[dict] = []
        self.heads = {1: HEAD}
        self.outside_diff: set[tuple[str, int]] = set()  # (path, line) GitHub cannot place a comment on
        self.requests: list[tuple[str, str, dict]] = []  # (method, path with query, headers)
        self.redirects: dict[tuple[str, str], tuple[int, str]] = {}  # (method, path with query) -> (status, Location)
        self.lock = threading.Lock()
        self.url = ""

    def posts(self) -> list[tuple[str, str, dict]]:
        return [r for r in self.requests if r[0] == "POST"]

    def add_review(self, body: str) -> dict:
        review = {"id": len(self.reviews) + 1, "body": body, "state": "COMMENTED", "commit_id": HEAD, "user": {"login": "bot"}}
        self.reviews.append(review)
        return review

    def add_comment(self, review_id: int, comment: dict) -> None:
        self.comments.append({
            "id": len(self.comments) + 100, "pull_request_review_id": review_id, "path": comment["path"],
            "line": comment["line"], "original_line": comment["line"], "side": comment.get("side", "RIGHT"),
            "start_line": comment.get("start_line"), "body": comment["body"], "commit_id": HEAD,
        })  # fmt: skip


def handler(state: FakeGitHub) -> type:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # keep the test output clean
            pass

        def answer(self, status: int, body: object, headers: dict | None = None) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def route(self, method: str) -> None:
            with state.lock:
                state.requests.append((method, self.path, {k.lower(): v for k, v in self.headers.items()}))
                url = urlsplit(self.path)
                if (method, self.path) in state.redirects:
                    status, location = state.redirects[method, self.path]
                    return self.answer(status, {"message": "Moved"}, {"Location": location})
                token = self.headers.get("Authorization", "")
                if token not in (f"Bearer {TOKEN}", f"Bearer {FORK_TOKEN}"):
                    return self.answer(401, {"message": "Bad credentials"})
                if self.headers.get("Accept") != "application/vnd.github+json" or not self.headers.get("User-Agent"):
                    return self.answer(400, {"message": "missing headers"})
                match = re.fullmatch(r"/repos/owner/name/pulls/(\d+)(/reviews|/comments)?", url.path)
                if not match or int(match.group(1)) not in state.heads:
                    return self.answer(404, {"message": "Not Found"})
                number, what = int(match.group(1)), match.group(2)
                if method == "GET" and what is None:
                    return self.answer(200, {"number": number, "head": {"sha": state.heads[number]}})
                if method == "GET":
                    return self.page(url, state.reviews if what == "/reviews" else state.comments)
                if method == "POST" and what == "/reviews":
                    if token == f"Bearer {FORK_TOKEN}":
                        return self.answer(403, {"message": "Resource not accessible by integration"})
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                    return self.create_review(body)
                return self.answer(404, {"message": "Not Found"})

        def page(self, url, items: list[dict]) -> None:
            # GitHub caps per_page; this fake caps it at PAGE_SIZE so that every list spans pages.
            query = parse_qs(url.query)
            page = int(query.get("page", ["1"])[0])
            start = (page - 1) * PAGE_SIZE
            headers = {}
            if start + PAGE_SIZE < len(items):
                last = (len(items) + PAGE_SIZE - 1) // PAGE_SIZE
                link = f"{state.url}{url.path}?per_page={PAGE_SIZE}&page="
                headers["Link"] = f'<{link}{page + 1}>; rel="next", <{link}{last}>; rel="last"'
            self.answer(200, items[start : start + PAGE_SIZE], headers)

        def create_review(self, body: dict) -> None:
            if body.get("event") != "COMMENT" or not isinstance(body.get("body"), str):
                return self.answer(422, {"message": "Unprocessable Entity", "errors": ["bad review"]})
            for comment in body.get("comments", []):
                if (comment["path"], comment["line"]) in state.outside_diff:
                    return self.answer(422, {"message": "Unprocessable Entity", "errors": ["Line could not be resolved"]})
            review = state.add_review(body["body"])
            for comment in body.get("comments", []):
                state.add_comment(review["id"], comment)
            self.answer(200, review)

        def do_GET(self) -> None:
            self.route("GET")

        def do_POST(self) -> None:
            self.route("POST")

    return Handler


@pytest.fixture
def github():
    state = FakeGitHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


class Elsewhere:
    """Another host: it records what reaches it and answers 200 with a review-like object to anything,
    as a server that collects tokens would."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict]] = []
        self.url = ""


@pytest.fixture
def elsewhere():
    state = Elsewhere()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def record(self, method: str) -> None:
            state.requests.append((method, self.path, {k.lower(): v for k, v in self.headers.items()}))
            data = json.dumps({"id": 999, "body": "", "head": {"sha": HEAD}}).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.record("GET")

        def do_POST(self) -> None:
            self.record("POST")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


def comment(path: str, line: int, code: str = "ML001") -> dict:
    return {"path": path, "line": line, "side": "RIGHT", "body": f"**{code}** `accumulated-loss`: a finding on line {line}"}


def payload(*comments: dict) -> dict:
    count = len(comments)
    return {"body": f"memlint found {count} findings on the lines changed since `main`.", "event": "COMMENT", "comments": list(comments)}


def post(github: FakeGitHub, review: dict | Path, tmp_path: Path, *extra: str, token: str | None = TOKEN) -> subprocess.CompletedProcess:
    if isinstance(review, dict):
        file = tmp_path / "review.json"
        file.write_text(json.dumps(review), encoding="utf-8")
    else:
        file = review
    environment = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GITHUB_API_URL")}
    if token is not None:
        environment["GITHUB_TOKEN"] = token
    command = [sys.executable, "-m", "memlint.integrations.github_review", "--repo", "owner/name", "--pr", "1",
               "--review", str(file), "--api-url", github.url, *extra]  # fmt: skip
    return subprocess.run(command, cwd=REPO, env=environment, check=False, capture_output=True, text=True, timeout=60)


# ---------------------------------------------------------------------------- the poster


def test_first_post_creates_one_review_with_every_comment(github, tmp_path):
    result = post(github, payload(comment("a.py", 3), comment("b.py", 7)), tmp_path, "--commit", HEAD)
    assert result.returncode == 0, result.stderr
    assert len(github.reviews) == 1 and len(github.posts()) == 1
    assert re.search(r"<!-- memlint-review sha256=[0-9a-f]{64} -->", github.reviews[0]["body"])
    assert [(c["path"], c["line"]) for c in github.comments] == [("a.py", 3), ("b.py", 7)]
    _, _, headers = github.posts()[0]
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["x-github-api-version"] == "2022-11-28"


def test_the_same_payload_twice_posts_once(github, tmp_path):
    review = payload(comment("a.py", 3), comment("b.py", 7))
    assert post(github, review, tmp_path).returncode == 0
    again = post(github, review, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "nothing posted" in again.stdout
    assert len(github.reviews) == 1 and len(github.comments) == 2


def test_one_new_finding_gets_one_new_comment(github, tmp_path):
    assert post(github, payload(comment("a.py", 3), comment("b.py", 7)), tmp_path).returncode == 0
    result = post(github, payload(comment("a.py", 3), comment("b.py", 7), comment("c.py", 1)), tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(github.reviews) == 2
    assert [(c["path"], c["line"]) for c in github.comments if c["pull_request_review_id"] == 2] == [("c.py", 1)]
    assert "2 findings already commented on are not repeated" in github.reviews[1]["body"]


def test_pagination_finds_a_review_and_comments_on_later_pages(github, tmp_path):
    review = payload(comment("a.py", 3))
    assert post(github, review, tmp_path).returncode == 0
    memlint_review = github.reviews.pop()
    for index in range(3):  # other reviewers push memlint's review to page 2
        github.add_review(f"looks good {index}")
    github.reviews.append(memlint_review)
    before = len(github.posts())
    assert post(github, review, tmp_path).returncode == 0
    assert len(github.posts()) == before
    assert any(m == "GET" and "/reviews" in p and "page=2" in p for m, p, _ in github.requests)

    # Comments: the existing one sits on page 3 of the comments, the payload's summary differs.
    for index in range(4):
        github.comments.insert(0, {**github.comments[-1], "id": 900 + index, "path": f"other{index}.py"})
    changed = {**payload(comment("a.py", 3), comment("d.py", 2)), "body": "a different summary"}
    assert post(github, changed, tmp_path).returncode == 0
    assert [(c["path"], c["line"]) for c in github.comments if c["pull_request_review_id"] == len(github.reviews)] == [("d.py", 2)]
    assert any(m == "GET" and "/comments" in p and "page=3" in p for m, p, _ in github.requests)


def test_a_line_outside_the_diff_falls_back_to_the_summary(github, tmp_path):
    github.outside_diff.add(("b.py", 7))
    review = payload(comment("a.py", 3), comment("b.py", 7))
    result = post(github, review, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "summary only" in result.stdout and "422" in result.stdout
    assert len(github.reviews) == 1 and github.comments == []
    body = github.reviews[0]["body"]
    assert "`a.py` line 3" in body and "`b.py` line 7" in body and "<!-- memlint-review sha256=" in body
    # The fallback carries the digest: the next run posts nothing.
    assert post(github, review, tmp_path).returncode == 0
    assert len(github.reviews) == 1


def test_a_fork_token_explains_the_two_stage_workflow(github, tmp_path):
    result = post(github, payload(comment("a.py", 3)), tmp_path, token=FORK_TOKEN)
    assert result.returncode == 2
    assert "403" in result.stderr and "fork" in result.stderr and "workflow_run" in result.stderr
    assert "Traceback" not in result.stderr
    assert github.reviews == []


def test_a_missing_token_exits_2_before_any_request(github, tmp_path):
    result = post(github, payload(comment("a.py", 3)), tmp_path, token=None)
    assert result.returncode == 2
    assert "GITHUB_TOKEN" in result.stderr and "Traceback" not in result.stderr
    assert github.requests == []


@pytest.mark.parametrize("content", [None, "{not json", "[1, 2]", '{"body": "x", "comments": [{"path": "a.py"}]}'])
def test_an_unreadable_review_file_exits_2(github, tmp_path, content):
    file = tmp_path / "review.json"
    if content is not None:
        file.write_text(content, encoding="utf-8")
    result = post(github, file, tmp_path)
    assert result.returncode == 2
    assert "review file" in result.stderr and "Traceback" not in result.stderr
    assert github.requests == []


def test_http_errors_exit_2_with_the_message(github, tmp_path):
    result = post(github, payload(comment("a.py", 3)), tmp_path, token="wrong")
    assert result.returncode == 2
    assert "HTTP 401" in result.stderr and "Bad credentials" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirected_post_is_a_failure_and_sends_nothing_elsewhere(github, elsewhere, tmp_path, status):
    # urllib follows a 301/302/303 answer to a POST with a GET carrying every header, the token
    # included, to wherever Location points; the other host's 200 then read as "posted".
    github.redirects["POST", "/repos/owner/name/pulls/1/reviews"] = (status, f"{elsewhere.url}/collect")
    result = post(github, payload(comment("a.py", 3)), tmp_path)
    assert result.returncode == 2, result.stdout
    assert "posted a review" not in result.stdout and "Traceback" not in result.stderr
    assert f"HTTP {status}" in result.stderr and "failed to post" in result.stderr, result.stderr
    assert elsewhere.requests == []
    assert github.reviews == []


@pytest.mark.parametrize("status", [301, 302, 307])
def test_a_redirect_to_another_host_never_gets_the_token(github, elsewhere, tmp_path, status):
    github.redirects["GET", "/repos/owner/name/pulls/1/reviews?per_page=100"] = (status, f"{elsewhere.url}/repos/owner/name/pulls/1/reviews")
    result = post(github, payload(comment("a.py", 3)), tmp_path)
    assert result.returncode == 2, result.stdout
    assert elsewhere.requests == [], elsewhere.requests
    assert elsewhere.url in result.stderr and "Traceback" not in result.stderr
    assert github.posts() == []


def test_a_redirect_within_the_api_is_followed(github, tmp_path):
    # GitHub answers a GET for a renamed repository with 301 to the same API.
    github.redirects["GET", "/repos/owner/name/pulls/1"] = (301, f"{github.url}/repos/owner/name/pulls/1?moved=1")
    result = post(github, payload(comment("a.py", 3)), tmp_path, "--commit", HEAD)
    assert result.returncode == 0, result.stderr
    assert ("GET", "/repos/owner/name/pulls/1?moved=1") in [(m, p) for m, p, _ in github.requests]
    assert len(github.reviews) == 1


def test_nothing_is_posted_when_the_pull_request_moved_on(github, tmp_path):
    result = post(github, payload(comment("a.py", 3)), tmp_path, "--commit", "b" * 40)
    assert result.returncode == 0, result.stderr
    assert "nothing posted" in result.stdout and github.posts() == []


def test_an_empty_review_posts_nothing(github, tmp_path):
    result = post(github, payload(), tmp_path)
    assert result.returncode == 0 and github.posts() == []


# ---------------------------------------------------------------------------- end to end

BASE_TRAIN = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
running_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
print(running_loss)
"""

HEAD_TRAIN = BASE_TRAIN.replace("    optimizer.step()\n", "    optimizer.step()\n    running_loss += loss\n")


def git(*args: str, cwd: Path) -> str:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=environment).stdout.strip()


@pytest.fixture
def project(github, tmp_path) -> Path:
    """A repository whose head commit adds an ML001 finding; the fake pull request #1 is at that head."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "train.py").write_text(BASE_TRAIN, encoding="utf-8")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "base", cwd=project)
    base = git("rev-parse", "HEAD", cwd=project)
    (project / "src" / "train.py").write_text(HEAD_TRAIN, encoding="utf-8")
    git("commit", "-q", "-am", "accumulate the loss", cwd=project)
    github.heads[1] = git("rev-parse", "HEAD", cwd=project)
    git("tag", "base", base, cwd=project)
    return project


def test_memlint_review_then_the_poster(github, project, tmp_path):
    result = memlint("review", "--base", "base", cwd=project)
    assert result.returncode == 0, result.stderr
    review_file = tmp_path / "review.json"
    review_file.write_text(result.stdout, encoding="utf-8")

    posted = post(github, review_file, tmp_path, "--commit", github.heads[1])
    assert posted.returncode == 0, posted.stderr
    line = HEAD_TRAIN.splitlines().index("    running_loss += loss") + 1
    assert [(c["path"], c["line"]) for c in github.comments] == [("src/train.py", line)]
    assert "ML001" in github.comments[0]["body"]
    assert "<!-- memlint-review sha256=" in github.reviews[0]["body"]
    assert post(github, review_file, tmp_path, "--commit", github.heads[1]).returncode == 0
    assert len(github.reviews) == 1


# ---------------------------------------------------------------------------- action.yml and the docs' workflows

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
ACTION_TEXT = (REPO / "action.yml").read_text(encoding="utf-8")
DOC = (REPO / "docs" / "github-action.md").read_text(encoding="utf-8")
WORKFLOWS = [yaml.safe_load(block) for block in re.findall(r"^```yaml\n(.*?)^```", DOC, re.DOTALL | re.MULTILINE)]
USES = re.compile(r"(\./\S+|docker://\S+|[^\s@/]+/[^\s@]+@\S+)")


def triggers(workflow: dict) -> object:
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as true


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def uses_memlint(step: dict) -> bool:
    return bool(re.fullmatch(r"[^@]*/memlint@\S+", step.get("uses", "")))


def test_the_action_is_composite_with_bash_steps():
    assert ACTION["runs"]["using"] == "composite"
    for step in ACTION["runs"]["steps"]:
        assert step["shell"] == "bash" and isinstance(step["run"], str) and "uses" not in step
        # Inputs reach the scripts through env: an input's value must never be pasted into the script.
        assert "${{" not in step["run"]
    assert ACTION["inputs"]["mode"]["default"] == "annotations"
    assert ACTION["inputs"]["args"]["default"] == "."
    assert {"args", "mode", "fail-level", "working-directory", "version", "sarif-file", "base", "github-token"} <= set(ACTION["inputs"])
    assert {"version", "sarif-file", "review-file"} <= set(ACTION["outputs"])


def test_the_action_references_only_its_inputs():
    referenced = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", ACTION_TEXT))
    assert referenced and referenced <= set(ACTION["inputs"])
    assert set(ACTION["inputs"]) <= referenced, "an input nothing uses"


def test_the_action_scripts_parse_and_cover_every_mode():
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    for step in ACTION["runs"]["steps"]:
        subprocess.run(["bash", "-n"], input=step["run"], text=True, check=True)
    script = step_named("lint")["run"]
    assert "memlint check --output-format github" in script
    assert re.search(r"memlint check --output-format sarif --fail-level \"\$FAIL_LEVEL\" -o \"\$sarif_path\"", script)
    assert "memlint review --base" in script and "python -m memlint.integrations.github_review" in script
    # One analysis per review: the payload and the job summary come from the same `memlint review`.
    assert len(re.findall(r"^\s*memlint review ", script, re.MULTILINE)) == 1


def test_the_docs_workflows_are_well_formed():
    workflows = [w for w in WORKFLOWS if isinstance(w, dict) and "jobs" in w]
    assert len(workflows) >= 6
    for workflow in workflows:
        assert triggers(workflow) and workflow.get("permissions")
        for job in workflow["jobs"].values():
            assert job["runs-on"] and job["steps"]
        for step in steps(workflow):
            assert ("uses" in step) != ("run" in step), step
            if "uses" in step:
                assert USES.fullmatch(step["uses"]), step["uses"]
            else:
                assert isinstance(step["run"], str) and step["run"].strip()
            assert isinstance(step.get("with", {}), dict) and isinstance(step.get("env", {}), dict)
            if uses_memlint(step):
                assert set(step.get("with", {})) <= set(ACTION["inputs"]), step


def test_the_docs_list_every_input_and_output():
    documented = set(re.findall(r"^\| `([\w-]+)` \|", DOC, re.MULTILINE))
    assert set(ACTION["inputs"]) <= documented
    for output in ACTION["outputs"]:
        assert f"`{output}`" in DOC.split("Outputs:", 1)[1].split("\n\n", 1)[0]


def test_the_docs_monorepo_workflow_uses_the_new_inputs():
    (step,) = [s for w in WORKFLOWS if "jobs" in w for s in steps(w) if uses_memlint(s) and "working-directory" in s.get("with", {})]
    assert step["with"]["fail-level"] in ("none", "info", "warning", "error")
    assert step["with"]["args"].splitlines() == ["src", "notebooks/first run"]  # one argument per line


def test_the_sarif_workflow_may_write_security_events():
    (sarif,) = [w for w in WORKFLOWS if "jobs" in w and any("upload-sarif" in s.get("uses", "") for s in steps(w))]
    assert sarif["permissions"]["security-events"] == "write"
    assert any(uses_memlint(s) and s["with"]["mode"] == "sarif" for s in steps(sarif))


def test_the_fork_workflow_has_two_stages():
    stage1 = [w for w in WORKFLOWS if "jobs" in w and any("upload-artifact" in s.get("uses", "") for s in steps(w))]
    stage2 = [w for w in WORKFLOWS if "jobs" in w and "workflow_run" in (triggers(w) or {})]
    assert len(stage1) == 1 and len(stage2) == 1
    (first,), (second,) = stage1, stage2

    # Stage 1: the pull request's code, a read-only token, no secrets; uploads the payload and the number.
    assert triggers(first) == "pull_request"
    assert all(v in ("read", "none") for v in first["permissions"].values())
    assert "secrets." not in json.dumps(first)
    (review,) = [s for s in steps(first) if uses_memlint(s)]
    assert review["with"]["mode"] == "review" and review["with"]["post"] == "false"
    (upload,) = [s for s in steps(first) if "upload-artifact" in s.get("uses", "")]
    assert {review["with"]["review-file"], "pr-number"} <= set(upload["with"]["path"].split())

    # Stage 2: the base repository's token, the artifact, the poster; never the pull request's code.
    assert first["name"] in triggers(second)["workflow_run"]["workflows"]
    assert second["permissions"]["pull-requests"] == "write"
    (download,) = [s for s in steps(second) if "download-artifact" in s.get("uses", "")]
    assert download["with"]["name"] == upload["with"]["name"]
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert not any("checkout" in s.get("uses", "") or uses_memlint(s) for s in steps(second))
    (poster,) = [s for s in steps(second) if "memlint.integrations.github_review" in s.get("run", "")]
    assert "--commit" in poster["run"] and "${{" not in poster["run"]


def step_named(step_id: str) -> dict:
    (step,) = [s for s in ACTION["runs"]["steps"] if s.get("id") == step_id]
    return step


def run_action(
    mode: str, project: Path, tmp_path: Path, inputs: dict | None = None, step_id: str = "lint", shims: Path | None = None,
    **env: str,
) -> subprocess.CompletedProcess:  # fmt: skip
    """One of the action's steps as the runner runs it: its env (inputs filled in, defaults for the rest),
    bash, in the workspace (`project`), memlint on PATH (after `shims`, when given)."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    step = step_named(step_id)
    values = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values.update({"mode": mode, "args": "src", "base": "base", "github-token": TOKEN, **(inputs or {})})
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    for name, value in step.get("env", {}).items():
        expression = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", value)
        environment[name] = values[expression.group(1)] if expression else ""
    (tmp_path / "output").touch()
    (tmp_path / "summary").touch()
    path = [str(shims)] if shims else []
    environment.update(
        PATH=os.pathsep.join([*path, os.path.dirname(sys.executable), environment.get("PATH", "")]),
        GITHUB_OUTPUT=str(tmp_path / "output"), GITHUB_STEP_SUMMARY=str(tmp_path / "summary"),
        GITHUB_WORKSPACE=str(project), NO_COLOR="1", **env,
    )  # fmt: skip
    return subprocess.run(["bash", "-c", step["run"]], cwd=project, env=environment, check=False, capture_output=True, text=True)


def annotated_files(result: subprocess.CompletedProcess) -> list[str]:
    return re.findall(r"^::(?:error|warning|notice) file=([^,]+),", result.stdout, re.MULTILINE)


def outputs(tmp_path: Path) -> dict:
    return dict(line.split("=", 1) for line in (tmp_path / "output").read_text(encoding="utf-8").splitlines())


def test_the_action_annotations_and_sarif_modes(github, project, tmp_path):
    annotations = run_action("annotations", project, tmp_path)
    assert annotations.returncode == 1, annotations.stderr  # findings fail the step
    assert re.search(r"^::(error|warning) file=src/train\.py,line=\d+", annotations.stdout, re.MULTILINE)
    sarif = run_action("sarif", project, tmp_path)
    assert sarif.returncode == 0, sarif.stderr  # by default, sarif mode leaves the findings to code scanning
    report = json.loads((project / "memlint.sarif").read_text(encoding="utf-8"))
    assert report["version"] == "2.1.0" and report["runs"][0]["results"]
    assert outputs(tmp_path)["sarif-file"] == "memlint.sarif"
    assert run_action("bogus", project, tmp_path).returncode == 2


# The project's one finding is ML001, a warning.
@pytest.mark.parametrize(
    ("mode", "level", "status"),
    [
        ("annotations", "", 1), ("annotations", "info", 1), ("annotations", "warning", 1), ("annotations", "error", 0),
        ("annotations", "none", 0), ("sarif", "", 0), ("sarif", "warning", 1), ("sarif", "error", 0),
    ],
)  # fmt: skip
def test_the_fail_level_decides_whether_findings_fail_the_step(github, project, tmp_path, mode, level, status):
    result = run_action(mode, project, tmp_path, {"fail-level": level})
    assert result.returncode == status, result.stderr
    if mode == "annotations":
        assert annotated_files(result) == ["src/train.py"]  # shown whether or not they fail the step
    else:
        assert json.loads((project / "memlint.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]
        assert outputs(tmp_path)["sarif-file"] == "memlint.sarif"


def test_a_wrong_fail_level_is_an_error(github, project, tmp_path):
    result = run_action("annotations", project, tmp_path, {"fail-level": "severe"})
    assert result.returncode == 2 and "severe" in result.stderr


def test_args_on_several_lines_keep_spaces(github, project, tmp_path):
    (project / "my code").mkdir()
    (project / "my code" / "loop.py").write_text(HEAD_TRAIN, encoding="utf-8")
    (project / "other").mkdir()
    (project / "other" / "loop.py").write_text(HEAD_TRAIN, encoding="utf-8")
    several = run_action("annotations", project, tmp_path, {"args": "  my code  \n\nsrc\n--select\nML001\n"})
    assert several.returncode == 1, several.stderr
    assert sorted(annotated_files(several)) == ["my code/loop.py", "src/train.py"]
    one_line = run_action("annotations", project, tmp_path, {"args": "src  other --select ML001"})
    assert sorted(annotated_files(one_line)) == ["other/loop.py", "src/train.py"]
    # One line is split on whitespace, never glob-expanded.
    globbed = run_action("annotations", project, tmp_path, {"args": "s*"})
    assert "s*: no such file" in globbed.stderr and not annotated_files(globbed)


def test_the_working_directory(github, project, tmp_path):
    annotations = run_action("annotations", project, tmp_path, {"working-directory": "src", "args": "."})
    assert annotations.returncode == 1, annotations.stderr
    assert annotated_files(annotations) == ["src/train.py"]  # GitHub places annotations from the workspace
    sarif = run_action("sarif", project, tmp_path, {"working-directory": "src", "args": "train.py"})
    assert sarif.returncode == 0, sarif.stderr
    report = json.loads((project / "memlint.sarif").read_text(encoding="utf-8"))  # beside the workflow's files
    assert not (project / "src" / "memlint.sarif").exists()
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in report["runs"][0]["results"]} == {"train.py"}
    missing = run_action("annotations", project, tmp_path, {"working-directory": "nowhere"})
    assert missing.returncode != 0 and not annotated_files(missing)


def test_the_version_output(project, tmp_path):
    import memlint as installed

    result = run_action("annotations", project, tmp_path, step_id="version")
    assert result.returncode == 0, result.stderr
    assert outputs(tmp_path) == {"version": installed.__version__}
    assert ACTION["outputs"]["version"]["value"] == "${{ steps.version.outputs.version }}"


def counting_shim(tmp_path: Path) -> Path:
    """A `memlint` ahead of the real one on PATH that logs each command line, to count the analyses."""
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "memlint"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path / "calls"}"\nexec "{sys.executable}" -m memlint "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return shims


def test_the_action_review_mode_posts_once(github, project, tmp_path):
    env = {"GITHUB_REPOSITORY": "owner/name", "GITHUB_API_URL": github.url, "PR_NUMBER": "1", "HEAD_SHA": github.heads[1]}
    if os.name == "nt":
        pytest.skip("the shim is a shell script")
    result = run_action("review", project, tmp_path, shims=counting_shim(tmp_path), **env)
    assert result.returncode == 0, result.stderr
    assert len((tmp_path / "calls").read_text(encoding="utf-8").splitlines()) == 1  # one analysis
    assert len(github.reviews) == 1 and {c["path"] for c in github.comments} == {"src/train.py"}
    summary = (tmp_path / "summary").read_text(encoding="utf-8")
    assert "## memlint review" in summary and "| `src/train.py` |" in summary and "ML001" in summary
    review_file = project / "memlint-review.json"
    assert json.loads(review_file.read_text(encoding="utf-8"))["comments"]
    assert outputs(tmp_path)["review-file"] == review_file.name
    # The next push's run, with the same findings, posts nothing.
    assert post(github, review_file, tmp_path, "--commit", github.heads[1]).returncode == 0
    assert len(github.reviews) == 1


def test_the_review_mode_posts_then_fails_at_the_fail_level(github, project, tmp_path):
    env = {"GITHUB_REPOSITORY": "owner/name", "GITHUB_API_URL": github.url, "PR_NUMBER": "1", "HEAD_SHA": github.heads[1]}
    below = run_action("review", project, tmp_path, {"fail-level": "error", "post": "false"}, **env)
    assert below.returncode == 0, below.stderr
    assert github.reviews == []  # post: false
    failing = run_action("review", project, tmp_path, {"fail-level": "warning", "working-directory": "src", "args": "."}, **env)
    assert failing.returncode == 1, failing.stderr
    assert len(github.reviews) == 1 and {c["path"] for c in github.comments} == {"src/train.py"}
    assert (project / "memlint-review.json").is_file() and not (project / "src" / "memlint-review.json").exists()
