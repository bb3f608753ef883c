"""The harness must be able to fail: each fault of the fault server fails exactly its requirements."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp_conformance import HttpTarget, InProcessTarget, Run, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance.faultserver import MODERN, create_server, http_app, serve_with_faults
from tests import timeouts

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
SPEC = load_spec()


async def _run(faults: list[str], timeout: float = 2) -> Run:
    target = InProcessTarget(functools.partial(serve_with_faults, create_server(), faults=faults))
    with anyio.fail_after(30 * timeout):
        return await check(target, revisions=REVISIONS, timeout=timeout, spec=SPEC)


def _failed(run: Run) -> set[str]:
    return {v.id for v in run.verdicts if v.status in ("fail", "error")}


def _sends_notification(step: dict[str, Any]) -> bool:
    if "handshake" in step:  # notifications/initialized, unless the step says not to
        return bool(step["handshake"].get("initialized", True))
    sent = step.get("send")
    items = sent if isinstance(sent, list) else [sent]
    return any(isinstance(i, dict) and "method" in i and "id" not in i for i in items)


def _expects_error_with_id(pattern: Any) -> bool:
    """Whether a pattern insists on an error response carrying a concrete request id."""
    if isinstance(pattern, dict):
        if "$one_of" in pattern:  # every accepted reading must insist on it
            return all(_expects_error_with_id(p) for p in pattern["$one_of"])
        if "$unordered" in pattern:
            return any(_expects_error_with_id(p) for p in pattern["$unordered"])
        error, rid = pattern.get("error"), pattern.get("id", None)
        return (
            isinstance(error, dict)
            and "$absent" not in error
            and rid is not None
            and not (isinstance(rid, dict) and "$absent" in rid)
        )
    if isinstance(pattern, list):
        return any(_expects_error_with_id(v) for v in pattern)
    return False


@pytest.mark.anyio
async def test_without_faults_every_requirement_passes() -> None:
    run = await _run([])
    assert _failed(run) == set()


@pytest.mark.anyio
async def test_answering_notifications_fails_the_no_response_requirements() -> None:
    expected = {
        f.id
        for f in SPEC.fixtures
        if f.transports != ("stdio",)
        and any(_sends_notification(s) for s in f.steps)
        and any("expect_no_response" in s or "expect" in s or "expect_message" in s for s in f.steps)
    }
    expected |= {"lifecycle:initialized:no-response", "jsonrpc:response:solicited"}
    expected |= {"modern:result:result-type-invariant"}  # the stray result has no resultType either
    expected |= {"jsonrpc:message:schema-valid"}  # nor any schema a response with id null
    run = await _run(["answers-notifications"])
    ran = {
        v.id for v in run.verdicts if v.status != "skip"
    }  # (e.g. skipped without an official trigger tool)
    assert _failed(run) == expected & ran


@pytest.mark.anyio
async def test_negotiating_the_wrong_revision_fails_version_negotiation_for_the_other_revisions() -> None:
    run = await _run(["wrong-revision"])
    failed = {(v.id, v.revision) for v in run.verdicts if v.status == "fail"}
    expected = {
        (rid, revision)
        for rid in (
            "lifecycle:initialize:version-negotiation",
            "lifecycle:initialize:unknown-client-capabilities",
        )
        for revision in ("2025-03-26", "2025-06-18", "2025-11-25")
    }
    assert failed == expected


@pytest.mark.anyio
async def test_emitting_32002_in_2026_07_28_fails_only_the_resource_not_found_requirement() -> None:
    run = await _run(["resource-not-found-32002"])
    assert {(v.id, v.revision) for v in run.verdicts if v.status == "fail"} == {
        ("modern:resources:read-unknown", "2026-07-28")
    }


@pytest.mark.anyio
async def test_omitting_result_type_fails_the_result_type_requirements() -> None:
    run = await _run(["omits-result-type"])
    expected = {f.id for f in SPEC.fixtures if '"resultType"' in str(f.raw).replace("'", '"')}
    expected.discard("modern:caching:tools-list")  # (none of these name resultType; kept explicit below)
    assert _failed(run) == {
        "modern:caching:resources-read",
        "modern:discover:result-shape",
        "modern:result:result-type-discover",
        "modern:result:result-type-invariant",
        "modern:result:result-type-prompts-list",
        "modern:result:result-type-resources-list",
        "modern:result:result-type-resources-templates-list",
        "modern:result:result-type-tools-list",
        # the Tasks extension's fixtures whose answers must say resultType (spec/mcp/tasks.json)
        "tasks:cancel:empty-ack",
        "tasks:create:durable",
        "tasks:lifecycle:completed-inlines-result",
        "tasks:negotiation:no-task-without-extension",
        "tasks:dispatch:instant-result",  # (the fault server's slow_compute; issue 26's tasks details)
        "tasks:cancel:terminal-ack",
        "tasks:wire:field-names",
        "tasks:wire:inlined-result",
        "jsonrpc:message:schema-valid",  # every 2026-07-28 result definition requires resultType
    }
    assert _failed(run) <= expected | {"modern:result:result-type-invariant", "jsonrpc:message:schema-valid"}


@pytest.mark.anyio
async def test_nulling_error_ids_fails_every_requirement_expecting_an_error_for_a_readable_request() -> None:
    run = await _run(["error-id-null"])
    ran = {v.id for v in run.verdicts if v.status != "skip"}
    expected = {
        f.id
        for f in SPEC.fixtures
        if f.id in ran and any(_expects_error_with_id(s.get("expect")) for s in f.steps)
    }
    expected.add("jsonrpc:message:schema-valid")  # 2026-07-28's typed errors (-32022...) require the id
    assert _failed(run) == expected


@pytest.mark.anyio
async def test_progress_after_the_result_fails_only_the_progress_requirement() -> None:
    run = await _run(["progress-after-result"])
    assert {(v.id, v.revision) for v in run.verdicts if v.status == "fail"} == {
        ("behaviour:progress:token-increasing", revision) for revision in REVISIONS
    }


@pytest.mark.anyio
async def test_answering_a_cancelled_request_fails_the_cancellation_requirements() -> None:
    # a generous timeout: the cancellation fixtures wait for a sampling request before they cancel,
    # and one that came late on a busy machine skipped a fixture instead of failing it
    run = await _run(["answers-cancelled"], timeout=10)
    failed = {(v.id, v.revision) for v in run.verdicts if v.status == "fail"}
    legacy = {("behaviour:cancel:legacy-in-flight", revision) for revision in REVISIONS[:-1]}
    # every subscription the listen fixtures end with notifications/cancelled gets a response too
    listen = {f.id for f in SPEC.fixtures if f.id.startswith("behaviour:listen:")}
    modern = {(rid, MODERN) for rid in listen | {"behaviour:cancel:modern-stdio-in-flight"}}
    # a tools/call result answering subscriptions/listen is no SubscriptionsListenResult
    modern.add(("jsonrpc:message:schema-valid", MODERN))
    # so does the list-change stream (the fault server declares tools, not prompts, listChanged)
    modern.add(("modern:listen:tools-list-changed", MODERN))
    assert failed == legacy | modern


@pytest.mark.anyio
async def test_untagged_subscription_notifications_fail_only_the_tagging_requirement() -> None:
    run = await _run(["untagged-subscription-notifications"])
    assert {(v.id, v.revision) for v in run.verdicts if v.status == "fail"} == {
        ("behaviour:listen:notifications-tagged", MODERN)
    }


FAULT_SERVER = [sys.executable, "-m", "jsonrpc_mcp_conformance.faultserver"]
ROOT = str(Path(__file__).resolve().parents[2])


@pytest.mark.anyio
async def test_junk_on_stdout_fails_only_the_stdout_requirement() -> None:
    target = StdioTarget([*FAULT_SERVER, "--fault", "junk-stdout"], cwd=ROOT)
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(
            target, revisions=["2025-11-25"], only=["stdio:*", "jsonrpc:id:*"], timeout=2, spec=SPEC
        )
    assert _failed(run) == {"stdio:stdout:json-lines"}


@pytest.mark.anyio
async def test_never_exiting_on_eof_fails_only_the_shutdown_requirement() -> None:
    target = StdioTarget([*FAULT_SERVER, "--fault", "never-exits"], cwd=ROOT)
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(target, revisions=["2025-11-25"], only=["stdio:*"], timeout=2, spec=SPEC)
    assert _failed(run) == {"stdio:shutdown:exit-on-eof"}


# -- over Streamable HTTP: an ASGI wrapper injects the fault -----------------------------------------
HTTP_REVISIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


async def _run_http(faults: list[str]) -> Run:
    from ..http.support import serving

    app, mcp_app = http_app(faults)
    async with serving(app, mcp_app=mcp_app) as base:
        with anyio.fail_after(timeouts.LONG_RUN):
            return await check(
                HttpTarget(f"{base}/mcp", timeout=5),
                revisions=HTTP_REVISIONS,
                only=["http:*"],
                timeout=5,
                spec=SPEC,
            )


def _failed_at(run: Run) -> set[tuple[str, str]]:
    return {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}


@pytest.mark.anyio
async def test_over_http_without_faults_every_http_requirement_passes_or_skips() -> None:
    run = await _run_http([])
    assert _failed_at(run) == set()
    passed = {(v.id, v.revision) for v in run.verdicts if v.status == "pass"}
    assert {
        ("http:session:id-visible-ascii", "2025-11-25"),
        ("http:modern:sse-no-buffering", MODERN),
    } <= passed


@pytest.mark.anyio
async def test_a_session_id_with_a_space_fails_only_the_visible_ascii_requirement() -> None:
    run = await _run_http(["session-id-with-space"])
    assert _failed_at(run) == {("http:session:id-visible-ascii", r) for r in HTTP_REVISIONS[:3]}


@pytest.mark.anyio
async def test_sse_without_x_accel_buffering_fails_only_the_no_buffering_requirement() -> None:
    run = await _run_http(["sse-buffered"])
    assert _failed_at(run) == {("http:modern:sse-no-buffering", MODERN)}


@pytest.mark.anyio
async def test_copying_answers_onto_the_get_stream_fails_the_stream_requirements() -> None:
    run = await _run_http(["broadcast"])
    assert _failed_at(run) == {
        (rid, revision)
        for rid in ("http:get:no-responses", "http:sse:no-broadcast", "http:sse:event-ids-unique")
        for revision in HTTP_REVISIONS[:3]
    }
