"""``/metrics`` and the access log of ``serve --http``: scraped by a real
client from a real server, parsed with prometheus_client's own text parser.

Counts, never timings: the tool calls made are the calls counted (MCP and
the search page alike), whichever of several workers answered them; the
token guards ``/metrics`` unless it is configured open; each request is one
JSON line of the access log, which never holds the token or the question.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_http import (
    TOKEN,
    Running,
    connect,
    free_port,
    raw,
    running_server,
    sample_repos,
    server_env,
    text_of,
)

from conftest import SAMPLE_FILES, wait_for
from repolens.errors import ConfigError
from repolens.server.config import load_serve_config

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def scrape(server: Running, headers: dict[str, str] | None = AUTH) -> dict[tuple[str, tuple], float]:
    """Every sample of ``/metrics`` as {(name, sorted labels): value}."""
    status, reply_headers, body = raw("GET", f"{server.base}/metrics", headers=headers)
    assert status == 200, body
    assert {k.lower(): v for k, v in reply_headers.items()}["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def mcp_calls(server: Running, calls: list[tuple[str, dict]]) -> list[str]:
    """Each call on a connection of its own (so several workers share them)."""

    async def run() -> list[str]:
        out = []
        for tool, arguments in calls:
            async with connect(server.url) as client:
                out.append(text_of(await client.call_tool(tool, arguments)))
        return out

    return asyncio.run(run())


def access_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith('{"time"')]


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return sample_repos(tmp_path_factory.mktemp("metrics"), ("app", "other"))


@pytest.fixture(scope="module")
def one_process(roots: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    base = tmp_path_factory.mktemp("one")
    args = ["--workers", "1", "--root", f"app={roots['app']}", "--root", f"other={roots['other']}"]
    with running_server(
        args, server_env({"REPOLENS_TOKEN": TOKEN}), base / "server.err", free_port()
    ) as server:
        yield server


def test_metrics_count_every_tool_call_mcp_and_page_alike(one_process: Running):
    before = scrape(one_process)
    mcp_calls(
        one_process,
        [
            ("search_code", {"query": "session expired", "repo": "app"}),
            ("search_code", {"query": "parse url", "repo": "other"}),
            ("read_snippet", {"path": "README.md", "start": 1, "end": 2, "repo": "app"}),
            ("read_snippet", {"path": "../outside", "start": 1, "end": 2, "repo": "app"}),
            ("no_such_tool", {}),
        ],
    )
    page = f"{one_process.base}/search?" + urllib.parse.urlencode({"q": "session", "repo": "app"})
    assert raw("GET", page, headers=AUTH)[0] == 200
    after = scrape(one_process)

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("repolens_tool_calls_total", tool="search_code", outcome="ok") == 3
    assert grew("repolens_tool_calls_total", tool="read_snippet", outcome="ok") == 1
    assert grew("repolens_tool_calls_total", tool="read_snippet", outcome="error") == 1
    assert grew("repolens_tool_calls_total", tool="other", outcome="error") == 1
    assert grew("repolens_tool_call_seconds_count", tool="search_code") == 3
    assert grew("repolens_http_requests_total", route="search", method="GET", status="200") == 1
    assert grew("repolens_http_request_seconds_count", route="mcp") >= 5
    assert not [key for key in after if "no_such_tool" in str(key)]  # a caller's text is no label


def test_metrics_report_each_index_and_the_builds_the_server_ran(one_process: Running):
    samples = scrape(one_process)
    for repo in ("app", "other"):
        assert value(samples, "repolens_index_up", repo=repo) == 1
        assert value(samples, "repolens_index_files", repo=repo) == len(SAMPLE_FILES)
        assert value(samples, "repolens_index_chunks", repo=repo) > 0
        assert value(samples, "repolens_index_updated_timestamp_seconds", repo=repo) > 1.6e9
        # the server indexed both at start
        assert value(samples, "repolens_index_build_seconds_count", repo=repo, mode="build") == 1
    assert [key for key in samples if key[0] == "repolens_build_info"]
    assert value(samples, "process_cpu_seconds_total") > 0  # one process: its own process metrics


def test_metrics_need_the_token(one_process: Running):
    status, headers, body = raw("GET", f"{one_process.base}/metrics")
    assert (status, {k.lower(): v for k, v in headers.items()}.get("www-authenticate"), body) == (
        401,
        "Bearer",
        b"",
    )
    assert (
        raw("GET", f"{one_process.base}/metrics", headers={"Authorization": "Bearer wrong-token-123456"})[0]
        == 401
    )


def test_each_request_is_one_json_line_without_the_token_or_the_question(one_process: Running):
    question = "where-is-the-secret-question"
    assert raw("GET", f"{one_process.base}/search?q={question}&repo=app", headers=AUTH)[0] == 200
    assert raw("GET", f"{one_process.base}/nowhere")[0] == 401
    # a line is written once the answer is sent: the client may have it first
    wait_for(lambda: '"path": "/nowhere"' in one_process.stderr(), "the access log line of /nowhere")
    text = one_process.stderr()
    lines = access_lines(text)
    searched = [line for line in lines if line["route"] == "search" and line["status"] == 200]
    assert searched
    assert set(searched[-1]) == {"time", "method", "path", "route", "status", "bytes", "ms", "client", "pid"}
    assert searched[-1]["path"] == "/search"
    assert searched[-1]["pid"] == one_process.proc.pid
    assert [line for line in lines if line["path"] == "/nowhere"][-1]["route"] == "other"
    assert question not in text and TOKEN not in text


def test_several_workers_are_one_server_to_a_scrape(roots: dict[str, Path], tmp_path: Path):
    """Every worker's counts are in whichever worker's reply; /metrics open;
    the access log in a file; the shared folder gone when the server stops."""
    access = tmp_path / "access.jsonl"
    env = server_env(
        {"REPOLENS_TOKEN": TOKEN, "REPOLENS_METRICS": "open", "REPOLENS_ACCESS_LOG": str(access)}
    )
    args = ["--workers", "2", "--root", f"app={roots['app']}"]
    with running_server(args, env, tmp_path / "server.err", free_port()) as server:
        workers = set(json.loads(raw("GET", f"{server.base}/health", headers=AUTH)[2])["worker_pids"])
        made = 0
        while {line["pid"] for line in lines_of(access, "mcp")} != workers and made < 40:
            mcp_calls(
                server, [("search_code", {"query": f"session {made + i}", "repo": "app"}) for i in range(4)]
            )
            made += 4
        assert {line["pid"] for line in lines_of(access, "mcp")} == workers, "one worker took every call"
        seen: dict[int, set[float]] = {}  # what each worker's scrape said
        for scrapes in range(1, 41):
            said = value(
                scrape(server, headers=None), "repolens_tool_calls_total", tool="search_code", outcome="ok"
            )
            wait_for(lambda n=scrapes: len(lines_of(access, "metrics")) >= n, "the scrape's access log line")
            seen.setdefault(lines_of(access, "metrics")[-1]["pid"], set()).add(said)
            if set(seen) == workers:
                break
        assert seen == {pid: {made} for pid in workers}  # every worker's reply counts every worker's calls
        rebound = raw("GET", f"{server.base}/metrics", headers={"Host": "evil.example"})
        assert rebound[0] == 421  # open, but not to another site's page (DNS rebinding), as the page is not
        folder = Path(dict(_environ(min(workers)))["PROMETHEUS_MULTIPROC_DIR"])
        assert folder.is_dir()
    assert not folder.exists()
    assert access_lines(server.stderr()) == []  # to the file, not stderr


def lines_of(access: Path, route: str) -> list[dict]:
    """The access log's lines of ``route`` (none yet: the file is not there)."""
    text = access.read_text() if access.exists() else ""
    return [line for line in access_lines(text) if line["route"] == route]


def _environ(pid: int) -> list[tuple[str, str]]:
    raw_env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return [tuple(item.decode().split("=", 1)) for item in raw_env if b"=" in item]  # type: ignore[misc]


def test_page_metrics_and_access_log_turned_off(roots: dict[str, Path], tmp_path: Path):
    env = server_env(
        {
            "REPOLENS_TOKEN": TOKEN,
            "REPOLENS_PAGE": "false",
            "REPOLENS_METRICS": "off",
            "REPOLENS_ACCESS_LOG": "off",
        }
    )
    with running_server(
        ["--workers", "1", "--root", f"app={roots['app']}"], env, tmp_path / "err", free_port()
    ) as server:
        assert raw("GET", f"{server.base}/search?q=x", headers=AUTH)[0] == 404
        assert raw("GET", f"{server.base}/metrics", headers=AUTH)[0] == 404
        assert raw("GET", f"{server.base}/search?q=x")[0] == 401  # nothing opens without the token
        assert mcp_calls(server, [("search_code", {"query": "session", "repo": "app"})])
    assert access_lines(server.stderr()) == []


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        (
            {"REPOLENS_METRICS": "public"},
            "REPOLENS_METRICS: metrics must be one of token, open, off, got 'public'",
        ),
        ({"REPOLENS_PAGE": "maybe"}, "REPOLENS_PAGE: page must be true or false, got 'maybe'"),
        (
            {"REPOLENS_ACCESS_LOG": " "},
            "REPOLENS_ACCESS_LOG: access_log must be 'stderr', 'off' or a file's path",
        ),
    ],
)
def test_bad_settings_are_one_line(roots: dict[str, Path], env: dict[str, str], needle: str):
    with pytest.raises(ConfigError) as info:
        load_serve_config(root_specs=[f"app={roots['app']}"], read_token=False, env=env)
    assert str(info.value) == needle


def test_settings_come_from_the_config_file_and_default(roots: dict[str, Path], tmp_path: Path):
    config = tmp_path / "serve.toml"
    config.write_text('[serve]\npage = false\nmetrics = "open"\naccess_log = "logs/access.jsonl"\n')
    loaded = load_serve_config(
        config_file=config, root_specs=[f"app={roots['app']}"], read_token=False, env={}
    )
    assert (loaded.page, loaded.metrics, loaded.access_log) == (
        False,
        "open",
        tmp_path / "logs" / "access.jsonl",
    )
    default = load_serve_config(root_specs=[f"app={roots['app']}"], read_token=False, env={})
    assert (default.page, default.metrics, default.access_log) == (True, "token", "stderr")
