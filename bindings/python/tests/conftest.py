import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def vectors_path():
    """$PARTWISE_VECTORS, else the repository's tests/vectors/copartitioned/vectors.txt."""
    return os.environ.get("PARTWISE_VECTORS") or os.path.join(
        HERE, "..", "..", "..", "tests", "vectors", "copartitioned", "vectors.txt"
    )


def _list(s):
    return [] if s == "-" else s.split(",")


def _tps(s):
    out = []
    for x in _list(s):
        i = x.rindex(":")
        out.append((x[:i], int(x[i + 1:])))
    return out


def load():
    """Every case of the consistency vectors: the Rust leader's output for each group."""
    cases, c = [], None
    with open(vectors_path(), encoding="utf-8") as f:
        for line in f:
            fs = line.rstrip("\n").split(" ")
            if fs[0] == "case":
                c = {"name": fs[1], "counts": {}, "members": [], "expect": {}, "userdata": None}
            elif fs[0] == "topic":
                c["counts"][fs[1]] = int(fs[2])
            elif fs[0] == "member":
                c["members"].append((fs[1], None if fs[2] == "-" else fs[2], _list(fs[3]), _tps(fs[4])))
            elif fs[0] == "expect":
                c["expect"][fs[1]] = _tps(fs[2])
            elif fs[0] == "userdata":
                c["userdata"] = bytes.fromhex(fs[1])
            elif fs[0] == "end":
                cases.append(c)
    return cases


@pytest.fixture(scope="session")
def cases():
    return load()


class FakeCluster:
    """The one call the assignors make of a client's cluster metadata."""

    def __init__(self, counts):
        self.counts = counts

    def partitions_for_topic(self, topic):
        n = self.counts.get(topic)
        return None if n is None else set(range(n))
