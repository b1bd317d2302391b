"""partwise's co-partitioned sticky assignor in pure Python, with no Kafka client in it.

A port of the Rust core (crates/partwise/src/assign/copartitioned.rs, as partwise-group's
leader runs it) and of its user data (crates/partwise-wire/src/consumer.rs); the consistency
vectors in tests/vectors/copartitioned/ hold the two to the same output, so a Python leader
gives a group exactly what a Rust, Java, Go or KafkaJS leader gives it.

Topics with the same partition count and the same subscribers form a co-partition group;
partition p of a group's topics is one unit, and units go whole to members. Each generation
the assignor (1) keeps every unit with its previous owner (the member that owned most of the
unit's partitions, ties to the member sorted first) if that member still subscribes; (2) hands
the other units, in unit order, to the least-loaded subscriber; (3) moves units from the most-
to the least-loaded member while that strictly narrows the gap. Every choice is ordered by
(load, member rank, unit), ranks in Java's AbstractPartitionAssignor.MemberInfo order (static
members first by group.instance.id, then by member id, compared as Java compares strings).
"""

from __future__ import annotations

import heapq
import struct
from bisect import bisect_left, insort
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

NAME = "copartitioned"

_NONE = 1 << 31
_UNITS_MAGIC = b"pwu\x00"
_OWNED_MAGIC = b"pwo\x00"


class Member(NamedTuple):
    """One member of the group as the leader sees it."""

    id: str
    instance_id: Optional[str]
    topics: Sequence[str]
    owned: Sequence[Tuple[str, int]] = ()


class Result(NamedTuple):
    """Each member's (topic, partition) list, by member id, and every member's user data."""

    partitions: Dict[str, List[Tuple[str, int]]]
    user_data: bytes


def java_key(s: str) -> bytes:
    """A sort key ordering strings as java.lang.String.compareTo does (UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def _member_key(m: Member):
    if m.instance_id is not None:
        return (0, java_key(m.instance_id))
    return (1, java_key(m.id))


def assign(members: Sequence[Member], counts: Dict[str, int]) -> Result:
    """Places members over the topics they subscribe to.

    counts gives a topic's partition count; a topic missing from it does not exist and its
    subscriptions are ignored.
    """
    known: Dict[str, int] = {}
    for m in members:
        for t in m.topics:
            n = counts.get(t)
            if n is not None:
                known[t] = max(int(n), 0)
    # Topic indices in code point order, as the Rust leader's topic map.
    topics = sorted(known)
    partitions = [known[t] for t in topics]
    topic_index = {t: i for i, t in enumerate(topics)}
    n = len(members)
    subscribed = [[topic_index[t] for t in m.topics if t in topic_index] for m in members]
    order = sorted(range(n), key=lambda i: _member_key(members[i]))  # stable, as Rust's sort_by
    rank = [0] * n
    for r, m in enumerate(order):
        rank[m] = r

    nt = len(topics)
    topic_base = []
    total = 0
    for t in range(nt):
        topic_base.append(total)
        total += partitions[t]
    prev = [_NONE] * total

    # Co-partition groups: a topic joins the group of the first topic before it with its count
    # and subscribers.
    subscribers: List[List[int]] = [[] for _ in range(nt)]
    for m in range(n):
        for t in subscribed[m]:
            s = subscribers[t]
            if not s or s[-1] != m:
                s.append(m)
    groups: List[List[int]] = []
    group_members: List[List[int]] = []
    group_of_key: Dict[tuple, int] = {}
    group_of = [-1] * nt
    for t in range(nt):
        if not subscribers[t]:
            continue
        k = (partitions[t], tuple(subscribers[t]))
        g = group_of_key.get(k)
        if g is None:
            g = group_of_key[k] = len(groups)
            groups.append([])
            group_members.append(subscribers[t])
        group_of[t] = g
        groups[g].append(t)
    member_groups: List[List[int]] = [[] for _ in range(n)]
    for g, ms in enumerate(group_members):
        for m in ms:
            member_groups[m].append(g)
    ng = len(groups)
    unit_base = []
    units = 0
    for g in range(ng):
        unit_base.append(units)
        units += partitions[groups[g][0]]
    unit_base.append(units)
    unit_group = []
    for g in range(ng):
        unit_group.extend([g] * (unit_base[g + 1] - unit_base[g]))

    # Claims: a partition claimed twice goes to the member sorted first.
    for m, member in enumerate(members):
        r = rank[m]
        for topic, p in member.owned:
            t = topic_index.get(topic)
            if t is not None and 0 <= p < partitions[t]:
                slot = topic_base[t] + p
                if r < prev[slot]:
                    prev[slot] = r

    owner = [_NONE] * units
    load = [0] * n
    # Step 1: previous owners (most of the unit's partitions, ties to the lower rank), while
    # they still subscribe to the unit's group.
    in_group = [False] * n
    for g in range(ng):
        ts = groups[g]
        for m in group_members[g]:
            in_group[m] = True
        for u in range(unit_base[g], unit_base[g + 1]):
            i = u - unit_base[g]
            if len(ts) == 1:
                best = prev[topic_base[ts[0]] + i]
            else:
                best = _most_claims([prev[topic_base[t] + i] for t in ts])
            if best != _NONE:
                m = order[best]
                if in_group[m]:
                    owner[u] = m
                    load[m] += 1
        for m in group_members[g]:
            in_group[m] = False

    # Step 2: unowned units in unit order, each to its group's least-loaded subscriber. Heap
    # entries go stale when a member's load changes and are dropped when they surface.
    heaps = []
    for g in range(ng):
        h = [(load[m], rank[m]) for m in group_members[g]]
        heapq.heapify(h)
        heaps.append(h)
    for u in range(units):
        if owner[u] != _NONE:
            continue
        h = heaps[unit_group[u]]
        while load[order[h[0][1]]] != h[0][0]:
            heapq.heappop(h)
        m = order[h[0][1]]
        owner[u] = m
        load[m] += 1
        entry = (load[m], rank[m])
        for g in member_groups[m]:
            heapq.heappush(heaps[g], entry)

    # Step 3: loads within one of each other admit no narrowing move.
    if n and max(load) > min(load) + 1:
        _rebalance(group_members, member_groups, unit_base, order, rank, owner, load)

    held: List[List[int]] = [[] for _ in range(n)]
    for u, m in enumerate(owner):
        held[m].append(u)
    out: Dict[str, List[Tuple[str, int]]] = {}
    for m in range(n):
        mine = held[m]
        lst: List[Tuple[str, int]] = []
        for t, name in enumerate(topics):
            g = group_of[t]
            if g < 0:
                continue
            lo, hi = bisect_left(mine, unit_base[g]), bisect_left(mine, unit_base[g + 1])
            lst.extend((name, u - unit_base[g]) for u in mine[lo:hi])
        out[members[m].id] = lst
    named = [[topics[t] for t in ts] for ts in groups]
    return Result(out, encode_unit_groups(named))


def _most_claims(claims: List[int]) -> int:
    """The rank owning most of a unit's partitions, ties to the lower rank; _NONE for none."""
    ranks = [r for r in claims if r != _NONE]
    if not ranks:
        return _NONE
    tally: Dict[int, int] = {}
    for r in ranks:
        tally[r] = tally.get(r, 0) + 1
    return min(tally, key=lambda r: (-tally[r], r))


def _rebalance(group_members, member_groups, unit_base, order, rank, owner, load) -> None:
    """Step 3: from the heaviest member down, the first move of a unit to the lightest member of
    one of its groups that strictly narrows the gap, until none does."""
    n = len(load)
    by_load = []
    for ms in group_members:
        h = [(load[m], rank[m]) for m in ms]
        heapq.heapify(h)
        by_load.append(h)

    def lightest(g: int) -> int:
        h = by_load[g]
        while load[order[h[0][1]]] != h[0][0]:
            heapq.heappop(h)
        return order[h[0][1]]

    every = sorted((load[m], rank[m]) for m in range(n))
    held: List[List[int]] = [[] for _ in range(n)]
    for u, m in enumerate(owner):
        held[m].append(u)
    while True:
        moved = False
        for la, ra in reversed(list(every)):
            a = order[ra]
            best_after, best_unit, best_to = 0, -1, -1
            for g in member_groups[a]:
                b = lightest(g)
                lb, rb = load[b], rank[b]
                if rb == ra:
                    continue
                # Every unit weighs the same: a's highest unit of the group is as good as any,
                # and moving it keeps low indices put.
                hs = held[a]
                j = bisect_left(hs, unit_base[g + 1]) - 1
                if j < 0 or hs[j] < unit_base[g]:
                    continue
                if lb + 1 < la:
                    after = abs((la - 1) - (lb + 1))
                    if best_unit < 0 or after < best_after:
                        best_after, best_unit, best_to = after, hs[j], b
            if best_unit >= 0:
                b = best_to
                held[a].remove(best_unit)
                insort(held[b], best_unit)
                owner[best_unit] = b
                every.remove((load[a], rank[a]))
                every.remove((load[b], rank[b]))
                load[a] -= 1
                load[b] += 1
                insort(every, (load[a], rank[a]))
                insort(every, (load[b], rank[b]))
                for m in (a, b):
                    for g in member_groups[m]:
                        heapq.heappush(by_load[g], (load[m], rank[m]))
                moved = True
                break
            # No lighter member can gain from anyone lighter than a.
            if la <= every[0][0] + 1:
                break
        if not moved:
            return


def encode_unit_groups(groups: Iterable[Sequence[str]]) -> bytes:
    """The co-partition groups as assignment user data, byte for byte as the Rust leader writes
    them: b'pwu\\0', an int32 group count, per group an int32 topic count and each name as an
    int16 length and its UTF-8 bytes (big-endian)."""
    groups = list(groups)
    out = [_UNITS_MAGIC, struct.pack(">i", len(groups))]
    for g in groups:
        out.append(struct.pack(">i", len(g)))
        for t in g:
            b = t.encode("utf-8")
            out.append(struct.pack(">h", len(b)) + b)
    return b"".join(out)


class _Walk:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def int(self, size: int) -> int:
        if self.at + size > len(self.data):
            raise ValueError("truncated")
        v = struct.unpack_from(">h" if size == 2 else ">i", self.data, self.at)[0]
        self.at += size
        return v

    def count(self) -> int:
        v = self.int(4)
        if v < 0 or v > len(self.data) - self.at:
            raise ValueError("count past the end")
        return v

    def name(self) -> str:
        n = self.int(2)
        if n < 0 or self.at + n > len(self.data):
            raise ValueError("name past the end")
        s = self.data[self.at:self.at + n].decode("utf-8")
        self.at += n
        return s

    def done(self) -> bool:
        return self.at == len(self.data)


def decode_unit_groups(data: Optional[bytes]) -> Optional[List[List[str]]]:
    """The groups in user data written by encode_unit_groups; None for anything else."""
    if not data or not bytes(data).startswith(_UNITS_MAGIC):
        return None
    w = _Walk(bytes(data)[4:])
    try:
        groups = [[w.name() for _ in range(w.count())] for _ in range(w.count())]
    except (ValueError, UnicodeDecodeError, struct.error):
        return None
    return groups if w.done() else None


def encode_owned(owned: Iterable[Tuple[str, int]], generation: int) -> bytes:
    """Owned partitions and their generation as subscription user data, as the Rust, Java, Go
    and KafkaJS members write them (b'pwo\\0'): a leader that reads no owned-partitions field
    (an aiokafka leader, an old subscription version) reads them here."""
    by_topic: Dict[str, List[int]] = {}
    for t, p in owned:
        by_topic.setdefault(t, []).append(int(p))
    out = [_OWNED_MAGIC, struct.pack(">ii", generation, len(by_topic))]
    for t in sorted(by_topic):
        b = t.encode("utf-8")
        ps = by_topic[t]
        out.append(struct.pack(">h", len(b)) + b + struct.pack(">i%di" % len(ps), len(ps), *ps))
    return b"".join(out)


def decode_owned(data: Optional[bytes]) -> Optional[Tuple[List[Tuple[str, int]], int]]:
    """(owned partitions, generation) in user data written by encode_owned; None for anything
    else (another assignor's bytes, truncated or trailing bytes)."""
    if not data or not bytes(data).startswith(_OWNED_MAGIC):
        return None
    w = _Walk(bytes(data)[4:])
    try:
        generation = w.int(4)
        owned = []
        for _ in range(w.count()):
            t = w.name()
            for _ in range(w.count()):
                owned.append((t, w.int(4)))
    except (ValueError, UnicodeDecodeError, struct.error):
        return None
    return (owned, generation) if w.done() else None
