"""The sans-IO peer: id allocation and matching, and the claim-once rule for incoming requests."""

from __future__ import annotations

from jsonrpc_mcp.jsonrpc.peer import Peer


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
    assert peer.outgoing_count == 0


def test_an_unknown_response_id_matches_nothing() -> None:
    peer: Peer[str, str] = Peer()
    peer.start_outgoing("token")
    assert peer.finish_outgoing(999) is None
    assert peer.finish_outgoing("1") is None  # "1" is not 1
    assert peer.outgoing_count == 1


def test_outgoing_tokens_takes_everything_outstanding() -> None:
    peer: Peer[str, str] = Peer()
    peer.start_outgoing("a")
    peer.start_outgoing("b")
    assert sorted(peer.outgoing_tokens()) == ["a", "b"]
    assert peer.outgoing_count == 0


def test_an_incoming_id_already_in_flight_is_refused() -> None:
    peer: Peer[str, str] = Peer()
    assert peer.start_incoming(1, "first")
    assert not peer.start_incoming(1, "second")
    assert peer.incoming_token(1) == "first"


def test_an_incoming_request_can_be_claimed_only_once() -> None:
    peer: Peer[str, str] = Peer()
    peer.start_incoming("x", "scope")
    assert peer.finish_incoming("x") == "scope"
    assert peer.finish_incoming("x") is None


def test_a_claim_with_a_stale_token_does_not_take_a_newer_request_with_the_same_id() -> None:
    peer: Peer[object, object] = Peer()
    old, new = object(), object()
    peer.start_incoming(1, old)
    assert peer.finish_incoming(1) is old  # cancelled: the canceller claimed it
    assert peer.start_incoming(1, new)  # the peer reuses the id
    assert peer.finish_incoming(1, old) is None  # the old handler finishing claims nothing
    assert peer.finish_incoming(1, new) is new


def test_an_id_can_be_reused_once_finished() -> None:
    peer: Peer[str, str] = Peer()
    peer.start_incoming(1, "a")
    peer.finish_incoming(1, "a")
    assert peer.start_incoming(1, "b")
    assert peer.incoming_count == 1
