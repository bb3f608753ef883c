"""The sans-IO peer: id allocation and matching, the claim-once rule for incoming requests, and the
event each incoming message becomes."""

from __future__ import annotations

import pytest

from jsonrpc_mcp.jsonrpc import codec
from jsonrpc_mcp.jsonrpc.errors import INVALID_REQUEST, InvalidRequest
from jsonrpc_mcp.jsonrpc.messages import ErrorResponse, Invalid, Notification, Request, Response
from jsonrpc_mcp.jsonrpc.peer import (
    Batch,
    Cancel,
    CancelSpec,
    Duplicate,
    InvalidMessage,
    NotificationArrived,
    Peer,
    ResponseArrived,
    Start,
    UnknownResponse,
)


def test_outgoing_ids_are_unique_and_never_reused() -> None:
    peer: Peer[str, str] = Peer()
    ids = [peer.start_outgoing(f"t{i}") for i in range(100)]
    for rid in ids[:50]:
        peer.finish_outgoing(rid)
    ids += [peer.start_outgoing("later") for _ in range(10)]
    assert len(set(ids)) == len(ids) == 110


def test_a_response_matches_its_token_exactly_once() -> None:
    peer: Peer[str, str] = Peer()
    rid = peer.start_outgoing("token")
    assert peer.finish_outgoing(rid) == "token"
    assert peer.finish_outgoing(rid) is None
    assert peer.outgoing_tokens() == []


def test_an_unknown_response_id_matches_nothing() -> None:
    peer: Peer[str, str] = Peer()
    peer.start_outgoing("token")
    assert peer.finish_outgoing(999) is None
    assert peer.finish_outgoing("1") is None  # "1" is not 1
    assert peer.outgoing_tokens() == ["token"]


def test_outgoing_tokens_takes_everything_outstanding() -> None:
    peer: Peer[str, str] = Peer()
    peer.start_outgoing("a")
    peer.start_outgoing("b")
    assert sorted(peer.outgoing_tokens()) == ["a", "b"]
    assert peer.outgoing_tokens() == []


def _started(peer: Peer[str, object], rid: int | str) -> object:
    """Start an incoming request ``rid`` as a message would; its token."""
    event = peer.next_event(Request(rid, "m"))
    assert isinstance(event, Start)
    return event.token


def test_an_incoming_request_can_be_claimed_only_once() -> None:
    peer: Peer[str, object] = Peer(object)
    token = _started(peer, "x")
    assert peer.finish_incoming("x") is token
    assert peer.finish_incoming("x") is None


def test_a_claim_with_a_stale_token_does_not_take_a_newer_request_with_the_same_id() -> None:
    peer: Peer[str, object] = Peer(object)
    old = _started(peer, 1)
    assert peer.finish_incoming(1) is old  # cancelled: the canceller claimed it
    new = _started(peer, 1)  # the peer reuses the id
    assert peer.finish_incoming(1, old) is None  # the old handler finishing claims nothing
    assert peer.finish_incoming(1, new) is new


def test_an_id_can_be_reused_once_finished() -> None:
    peer: Peer[str, object] = Peer(object)
    first = _started(peer, 1)
    peer.finish_incoming(1, first)
    second = _started(peer, 1)
    assert peer.take_all_incoming() == [second]


def test_take_all_incoming_claims_every_request_in_flight() -> None:
    peer: Peer[str, object] = Peer(object)
    tokens = [_started(peer, rid) for rid in (1, "2", 3)]
    assert peer.take_all_incoming() == tokens
    assert peer.take_all_incoming() == []
    assert all(peer.finish_incoming(rid) is None for rid in (1, "2", 3))


# -- classification: one event per incoming message ------------------------------------------------
CANCEL = CancelSpec("cancel/it", "id")


def classifier() -> Peer[str, object]:
    return Peer(object, cancel=CANCEL)


def test_a_request_with_a_fresh_id_starts_and_is_registered_under_its_token() -> None:
    peer = classifier()
    event = peer.next_event(Request(7, "m"))
    assert isinstance(event, Start)
    assert event.request == Request(7, "m")
    assert peer.take_all_incoming() == [event.token]


def test_a_request_whose_id_is_in_flight_is_a_duplicate_and_registers_nothing() -> None:
    peer = classifier()
    first = peer.next_event(Request(7, "m"))
    again = peer.next_event(Request(7, "other"))
    assert isinstance(first, Start) and isinstance(again, Duplicate)
    assert again.id == 7 and again.error.code == INVALID_REQUEST
    assert "duplicate" in again.error.message
    assert peer.take_all_incoming() == [first.token]


def test_a_response_wakes_its_waiter_once_and_then_is_unknown() -> None:
    peer = classifier()
    rid = peer.start_outgoing("slot")
    arrived = peer.next_event(Response(rid, 1))
    assert isinstance(arrived, ResponseArrived) and arrived.token == "slot"
    late = peer.next_event(ErrorResponse(rid, {"code": -1, "message": "x"}))
    assert isinstance(late, UnknownResponse) and late.response.id == rid
    assert isinstance(peer.next_event(ErrorResponse(None, {"code": -1, "message": "x"})), UnknownResponse)


def test_the_configured_notification_cancels_and_claims_the_request() -> None:
    peer = classifier()
    start = peer.next_event(Request("a", "m"))
    assert isinstance(start, Start)
    event = peer.next_event(Notification("cancel/it", {"id": "a", "reason": "r"}))
    assert isinstance(event, Cancel)
    assert event.request_id == "a" and event.token is start.token
    assert event.notification.params == {"id": "a", "reason": "r"}
    assert peer.finish_incoming("a", start.token) is None  # claimed: the handler may not answer
    again = peer.next_event(Notification("cancel/it", {"id": "a"}))
    assert isinstance(again, Cancel) and again.request_id == "a" and again.token is None


def test_a_cancellation_without_a_usable_id_cancels_nothing() -> None:
    peer = classifier()
    start = peer.next_event(Request(1, "m"))
    for params in ({"id": True}, {"id": None}, {}, ["1"], None):
        event = peer.next_event(Notification("cancel/it", params))
        assert isinstance(event, Cancel) and event.request_id is None and event.token is None
    assert isinstance(start, Start) and peer.take_all_incoming() == [start.token]


def test_other_notifications_arrive_and_without_a_cancel_spec_nothing_cancels() -> None:
    peer = classifier()
    assert isinstance(peer.next_event(Notification("note")), NotificationArrived)
    plain: Peer[str, object] = Peer(object)
    plain.next_event(Request(1, "m"))
    event = plain.next_event(Notification("cancel/it", {"id": 1}))
    assert isinstance(event, NotificationArrived) and len(plain.take_all_incoming()) == 1


def test_unusable_input_is_an_invalid_message_with_the_error_to_answer() -> None:
    peer = classifier()
    event = peer.next_event(codec.decode(b'{"jsonrpc": "2.0", "id": 3, "method": 5}'))
    assert isinstance(event, InvalidMessage) and event.id == 3 and event.error.code == INVALID_REQUEST


def test_a_batch_is_the_events_of_its_items_in_order() -> None:
    peer = classifier()
    batch = peer.next_event(
        [Request(1, "m"), Notification("n"), Request(1, "m"), Invalid(None, InvalidRequest("bad"))]
    )
    assert isinstance(batch, Batch) and batch.has_requests
    assert [type(e) for e in batch.events] == [Start, NotificationArrived, Duplicate, InvalidMessage]
    only_notes = peer.next_event([Notification("n")])
    assert isinstance(only_notes, Batch) and not only_notes.has_requests


def test_a_batch_where_batches_are_not_served_is_invalid_and_registers_nothing() -> None:
    peer: Peer[str, object] = Peer(object, batches=lambda: False)
    event = peer.next_event([Request(1, "m")])
    assert isinstance(event, InvalidMessage) and event.id is None and event.error.code == INVALID_REQUEST
    assert peer.take_all_incoming() == []


def test_a_peer_without_a_token_factory_cannot_start_requests() -> None:
    with pytest.raises(RuntimeError):
        Peer[str, str]().next_event(Request(1, "m"))
