"""The copartitioned consistency vectors (tests/vectors/copartitioned/vectors.txt, the Rust
leader's output, which the Rust runtime, Java, Go and KafkaJS replay too) through the pure
placement and through each client's assignor as that client calls it, with the subscription
bytes decoded by the client's own protocol classes."""

from types import SimpleNamespace

import pytest
from conftest import FakeCluster

import partwise_copartitioned as pc


def sorted_tps(tps):
    return sorted((t, p) for t, p in tps)


def test_the_vectors_are_many_shapes(cases):
    assert len(cases) >= 878
    assert any(len(c["members"]) > 100 for c in cases)
    assert any(c["name"].startswith("seed-") for c in cases)
    assert any(
        p >= c["counts"].get(t, 0) for c in cases for m in c["members"] for t, p in m[3]
    ), "claims past a count"


def test_core_replays_every_case(cases):
    for c in cases:
        members = [pc.Member(i, inst, topics, owned) for i, inst, topics, owned in c["members"]]
        r = pc.assign(members, c["counts"])
        for m in members:
            assert sorted_tps(r.partitions[m.id]) == sorted_tps(c["expect"].get(m.id, [])), (c["name"], m.id)
        assert r.user_data == c["userdata"], c["name"]
        assert pc.encode_unit_groups(pc.decode_unit_groups(r.user_data)) == r.user_data


def test_kafka_python_replays_every_case(cases):
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

    from partwise_copartitioned.kafka_python import CopartitionedAssignor

    k = 0
    for c in cases:
        assignor = CopartitionedAssignor()
        assert assignor.name == "copartitioned"
        members = []
        for mid, inst, topics, owned in c["members"]:
            k += 1
            if k % 2:
                # What a kafka-python member of this binding sends (owned partitions in the
                # standard field), as kafka-python's leader decodes it.
                member = CopartitionedAssignor()
                member._owned, member._generation = owned, 1
                raw = member.metadata(set(topics)).encode()
            else:
                # A v0 subscription with the claims only in b'pwo\0' user data.
                raw = ConsumerProtocolSubscription(version=0, topics=topics, user_data=pc.encode_owned(owned, 1)).encode()
            members.append(SimpleNamespace(member_id=mid, group_instance_id=inst, metadata=ConsumerProtocolSubscription.decode(raw)))
        out = assignor.assign(FakeCluster(c["counts"]), members)
        for mid, _, _, _ in c["members"]:
            a = ConsumerProtocolAssignment.decode(out[mid].encode())
            got = [(tp.topic, p) for tp in a.assigned_partitions for p in tp.partitions]
            assert sorted_tps(got) == sorted_tps(c["expect"].get(mid, [])), (c["name"], mid)
            assert a.user_data == c["userdata"], c["name"]


def test_aiokafka_replays_every_case_without_static_members(cases):
    from aiokafka.coordinator.protocol import ConsumerProtocol

    from partwise_copartitioned.aiokafka import CopartitionedAssignor

    replayed = 0
    for c in cases:
        if any(inst is not None for _, inst, _, _ in c["members"]):
            continue  # aiokafka drops group.instance.id before it calls an assignor
        members = {}
        for mid, _, topics, owned in c["members"]:
            member = CopartitionedAssignor.new()
            member._owned = owned
            members[mid] = ConsumerProtocol.METADATA.decode(member.metadata(topics).encode())
        out = CopartitionedAssignor.assign(FakeCluster(c["counts"]), members)
        for mid in members:
            a = ConsumerProtocol.ASSIGNMENT.decode(out[mid].encode())
            got = [(tp.topic, tp.partition) for tp in a.partitions()]
            assert sorted_tps(got) == sorted_tps(c["expect"].get(mid, [])), (c["name"], mid)
            assert a.user_data == c["userdata"], c["name"]
        replayed += 1
    assert replayed >= 300, replayed


def test_a_member_sends_what_it_was_assigned():
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

    from partwise_copartitioned.kafka_python import CopartitionedAssignor

    a = CopartitionedAssignor()
    TP = ConsumerProtocolAssignment.TopicPartition
    sent = ConsumerProtocolAssignment(version=3, assigned_partitions=[TP(topic="x", partitions=[1, 4])], user_data=b"")
    a.on_assignment(ConsumerProtocolAssignment.decode(sent.encode()), 9)
    sub = ConsumerProtocolSubscription.decode(a.metadata({"x"}).encode())
    assert [(tp.topic, list(tp.partitions)) for tp in sub.owned_partitions] == [("x", [1, 4])]
    assert sub.generation_id == 9
    assert pc.decode_owned(sub.user_data) == ([("x", 1), ("x", 4)], 9)


def test_aiokafka_consumers_in_one_process_remember_apart():
    from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

    from partwise_copartitioned.aiokafka import CopartitionedAssignor

    one, two = CopartitionedAssignor.new(), CopartitionedAssignor.new()
    one.on_assignment(ConsumerProtocolMemberAssignment(3, [("x", [0])], b""))
    two.on_assignment(ConsumerProtocolMemberAssignment(3, [("x", [1])], b""))
    assert pc.decode_owned(one.metadata(["x"]).user_data)[0] == [("x", 0)]
    assert pc.decode_owned(two.metadata(["x"]).user_data)[0] == [("x", 1)]


@pytest.mark.parametrize("cut", range(0, 30))
def test_truncated_user_data_is_not_read(cut):
    data = pc.encode_owned([("b", 3), ("a", 1), ("日本", 7)], 42)
    assert pc.decode_owned(data) == ([("a", 1), ("b", 3), ("日本", 7)], 42)
    if cut < len(data):
        assert pc.decode_owned(data[:cut]) is None
    assert pc.decode_owned(data + b"\x00") is None
    assert pc.decode_unit_groups(data) is None


def test_java_order():
    # U+FF61 sorts before U+1F600 in code point order but after it in UTF-16 (Java's).
    r = pc.assign([pc.Member("\uff61", None, ["t"]), pc.Member("\U0001f600", None, ["t"])], {"t": 1})
    assert r.partitions["\U0001f600"] == [("t", 0)]
