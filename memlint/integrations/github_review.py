"""Post a `memlint review` payload to a GitHub pull request, once.

    python -m memlint.integrations.github_review --repo OWNER/NAME --pr N --review review.json \
        [--commit SHA] [--api-url https://api.github.com] [--token-env GITHUB_TOKEN]

Standard library only (urllib, json), so the second stage of a fork workflow can run it from an
installed memlint without anything else, and it never imports torch or the code under review.

Idempotent, so a workflow can run it on every push:
- the review body ends with a hidden marker `<!-- memlint-review sha256=... -->`, a digest of the
  payload (its body and comments); if a review carrying the same digest exists, nothing is posted;
- a comment whose (path, line, body) is already on the pull request is not posted again, so a push
  that adds one finding gets one new comment;
- when no comment is left to post, nothing is posted (the job summary is the place for "no findings");
- with --commit, nothing is posted unless the pull request's head is still that commit.

GitHub answers 422 when a comment's line is not in the pull request's diff (the base moved, or the
payload came from another commit): the review is then posted as its summary only, listing the findings.
Errors (HTTP, missing token, unreadable payload) print one line on stderr and exit 2. Any answer but
2xx is an error: a redirect of the POST is not followed (urllib would repeat it as a GET, to wherever
`Location` points, carrying the token), and a GET is redirected only within --api-url, so the token
is never sent to another host.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator

MARKER = "<!-- memlint-review"
EXIT_ERROR = 2
USER_AGENT = "memlint-review-poster"

FORK_HELP = (
    "GitHub refused the request (403). On a pull request from a fork the workflow's token is read-only "
    "and secrets are absent, so the review cannot be posted from the `pull_request` run: run `memlint review` "
    "there and upload review.json with the pull request number as an artifact, then post it from a "
    "`workflow_run` workflow with `permissions: pull-requests: write` (see docs/github-action.md)."
)


class PostError(Exception):
    """A failure to report in one line (exit 2)."""


class HTTPFailure(PostError):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def digest(payload: dict) -> str:
    # Canonical JSON: the same findings give the same digest whatever the key order of the file.
    canonical = json.dumps({"body": payload.get("body", ""), "comments": payload.get("comments", [])}, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def marker(payload_digest: str) -> str:
    return f"{MARKER} sha256={payload_digest} -->"


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only for a GET, and only to a URL under the API (each request carries the token)."""

    def __init__(self, api_url: str):
        super().__init__()
        self.api_url = api_url

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        method = req.get_method()
        if method != "GET":
            # A write that was redirected did not happen: report it rather than repeat it elsewhere.
            fp.close()
            raise HTTPFailure(code, f"{method} {req.full_url}: HTTP {code}: redirected to {newurl}, not followed")
        if not newurl.startswith(self.api_url + "/"):
            fp.close()
            raise PostError(f"{method} {req.full_url}: HTTP {code}: refusing to follow the redirect to {newurl}: "
                            f"it is not under {self.api_url}, and the token goes only there")  # fmt: skip
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class GitHub:
    def __init__(self, api_url: str, token: str):
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.opener = urllib.request.build_opener(_Redirects(self.api_url))

    def request(self, method: str, url: str, body: dict | None = None) -> tuple[object, str]:
        """The decoded JSON answer and its Link header."""
        if not url.startswith(self.api_url + "/"):
            # The token goes with every request: never send it anywhere but the API it was given for.
            raise PostError(f"refusing to follow {url}: it is not under {self.api_url}")
        data = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": USER_AGENT,
        }
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self.opener.open(request, timeout=30) as response:
                text = response.read().decode("utf-8")
                link = response.headers.get("Link", "")
        except urllib.error.HTTPError as error:
            raise HTTPFailure(error.code, f"{method} {url}: HTTP {error.code}: {_error_message(error)}") from None
        except (urllib.error.URLError, OSError) as error:
            # Lost on the way back, a write may have happened: say so rather than "not posted".
            unsure = " (GitHub may have received it: look at the pull request)" if method != "GET" else ""
            raise PostError(f"{method} {url}: {getattr(error, 'reason', error)}{unsure}") from None
        try:
            return (json.loads(text) if text.strip() else None), link
        except ValueError:
            raise PostError(f"{method} {url}: the answer is not JSON") from None

    def paginated(self, path: str) -> Iterator[dict]:
        """Every item of a list endpoint, following the `Link: <...>; rel="next"` header page by page."""
        url: str | None = f"{self.api_url}{path}?per_page=100"
        while url:
            items, link = self.request("GET", url)
            if not isinstance(items, list):
                raise PostError(f"GET {url}: expected a list")
            yield from (item for item in items if isinstance(item, dict))
            url = next_link(link)


def next_link(header: str) -> str | None:
    for part in header.split(","):
        match = re.match(r'\s*<([^>]*)>\s*;(.*)', part)
        if match and re.search(r'\brel="?next"?', match.group(2)):
            return match.group(1)
    return None


def _error_message(error: urllib.error.HTTPError) -> str:
    try:
        answer = json.loads(error.read().decode("utf-8"))
    except (ValueError, OSError, UnicodeDecodeError):
        return error.reason or "error"
    message = answer.get("message", "") if isinstance(answer, dict) else ""
    errors = answer.get("errors", []) if isinstance(answer, dict) else []
    # GitHub's `errors` holds objects ({"message"} or {"code"}) or, for reviews, plain strings.
    details = [e if isinstance(e, str) else e.get("message") or e.get("code") for e in errors if isinstance(e, (str, dict))]
    return "; ".join(str(text) for text in [message, *details] if text) or "error"


def comment_key(comment: dict) -> tuple:
    # An existing comment whose line went outdated keeps its place in `original_line`.
    line = comment.get("line") if comment.get("line") is not None else comment.get("original_line")
    return comment.get("path"), line, (comment.get("body") or "").strip()


def summary_only(body: str, comments: list[dict], reason: str) -> str:
    """The review body with the findings listed, for when GitHub will not place them on the diff."""
    lines = [body, "", f"_The findings could not be placed on the diff ({reason}); they are:_", ""]
    for c in comments:
        first_line = (c.get("body") or "").strip().splitlines()[0] if (c.get("body") or "").strip() else ""
        lines.append(f"- `{c.get('path')}` line {c.get('line')}: {first_line}")
    return "\n".join(lines)


def load_payload(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as file:
            payload = json.load(file)
    except (OSError, UnicodeDecodeError) as error:
        raise PostError(f"cannot read the review file {path}: {error}") from None
    except ValueError as error:
        raise PostError(f"the review file {path} is not JSON: {error}") from None
    def is_comment(c: object) -> bool:
        return isinstance(c, dict) and isinstance(c.get("path"), str) and isinstance(c.get("line"), int) and isinstance(c.get("body"), str)

    comments = payload.get("comments", []) if isinstance(payload, dict) else None
    if not (isinstance(comments, list) and all(map(is_comment, comments)) and isinstance(payload.get("body", ""), str)):
        raise PostError(f"the review file {path} is not a `memlint review` payload (an object with `body` and `comments`)")
    return payload


def post(github: GitHub, repo: str, pr: int, payload: dict, commit: str | None) -> str:
    """Post what is new in the payload; returns what was done, for the log."""
    base = f"/repos/{repo}/pulls/{pr}"
    if commit:
        # The payload is about `commit`: if the pull request has moved on, a later run reviews the new head.
        # In the fork workflow this also stops a tampered artifact from aiming the review at another pull request.
        pull, _ = github.request("GET", f"{github.api_url}{base}")
        head = pull["head"].get("sha") if isinstance(pull, dict) and isinstance(pull.get("head"), dict) else None
        if head != commit:
            return f"memlint: pull request #{pr} is at {head}, not {commit}; nothing posted (the run for its head posts)."
    payload_digest = digest(payload)
    for review in github.paginated(f"{base}/reviews"):
        if marker(payload_digest) in (review.get("body") or ""):
            return "memlint: this review is already on the pull request; nothing posted."
    existing = {comment_key(c) for c in github.paginated(f"{base}/comments")}
    comments = payload.get("comments", [])
    new = [c for c in comments if comment_key(c) not in existing]
    if not new:
        return "memlint: no new findings to comment on; nothing posted."
    body = payload.get("body", "")
    if len(new) < len(comments):
        repeated = len(comments) - len(new)
        body += f"\n\n{repeated} finding{'' if repeated == 1 else 's'} already commented on are not repeated."
    review = {"body": f"{body}\n\n{marker(payload_digest)}", "event": "COMMENT", "comments": new}
    if commit:
        review["commit_id"] = commit
    try:
        create_review(github, f"{github.api_url}{base}/reviews", review)
    except HTTPFailure as failure:
        if failure.status != 422:
            raise
        fallback = {"body": f"{summary_only(body, new, 'GitHub answered 422')}\n\n{marker(payload_digest)}", "event": "COMMENT"}
        if commit:
            fallback["commit_id"] = commit
        create_review(github, f"{github.api_url}{base}/reviews", fallback)
        return (f"memlint: GitHub rejected the comments ({failure}); posted the summary only, "
                f"listing {len(new)} finding{'' if len(new) == 1 else 's'}.")  # fmt: skip
    return f"memlint: posted a review with {len(new)} comment{'' if len(new) == 1 else 's'}."


def create_review(github: GitHub, url: str, review: dict) -> None:
    """POST the review; GitHub answers with the review it created, anything else is a failure."""
    answer, _ = github.request("POST", url, review)
    if not (isinstance(answer, dict) and "id" in answer):
        raise PostError(f"POST {url}: the answer is not the review created")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memlint.integrations.github_review", description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="OWNER/NAME of the repository")
    parser.add_argument("--pr", required=True, type=int, help="pull request number")
    parser.add_argument("--review", required=True, help="the JSON `memlint review` printed")
    parser.add_argument("--commit", help="the pull request's head commit the review is about")
    parser.add_argument("--api-url", default=os.environ.get("GITHUB_API_URL") or "https://api.github.com")
    parser.add_argument("--token-env", default="GITHUB_TOKEN", help="environment variable holding the token")
    args = parser.parse_args(argv)
    try:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", args.repo):
            raise PostError(f"--repo must be OWNER/NAME, not {args.repo!r}")
        token = os.environ.get(args.token_env, "").strip()
        if not token:
            raise PostError(f"no token: set the {args.token_env} environment variable (e.g. to ${{{{ github.token }}}})")
        payload = load_payload(args.review)
        print(post(GitHub(args.api_url, token), args.repo, args.pr, payload, args.commit))
    except HTTPFailure as failure:
        print(f"memlint: failed to post the review: {failure}", file=sys.stderr)
        if failure.status == 403:
            print(f"memlint: {FORK_HELP}", file=sys.stderr)
        return EXIT_ERROR
    except PostError as error:
        print(f"memlint: failed to post the review: {error}", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
