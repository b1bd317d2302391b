// Replays the copartitioned consistency vectors (tests/vectors/copartitioned/vectors.txt,
// written by the Rust leader's path) through CopartitionedAssignor.assign and fails on the
// first case whose partitions or user data bytes differ from the Rust leader's.
package dev.partwise;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public final class VectorCheck {
    /** A member line of the vectors file: instance id null for none. */
    record Member(String id, String instanceId, List<String> topics, List<TopicPartition> owned) {}

    /** One case of the vectors file; BrokerVectorCheck reads the same. */
    record Case(String name, Map<String, Integer> topics, List<Member> members,
            Map<String, List<TopicPartition>> expect, String userData) {}

    static List<TopicPartition> parts(String s) {
        List<TopicPartition> out = new ArrayList<>();
        if (s.equals("-")) {
            return out;
        }
        for (String tp : s.split(",")) {
            int colon = tp.lastIndexOf(':');
            out.add(new TopicPartition(tp.substring(0, colon), Integer.parseInt(tp.substring(colon + 1))));
        }
        return out;
    }

    static Cluster cluster(Map<String, Integer> topics) {
        Node node = new Node(0, "localhost", 9092);
        List<PartitionInfo> infos = new ArrayList<>();
        for (Map.Entry<String, Integer> t : topics.entrySet()) {
            for (int p = 0; p < t.getValue(); p++) {
                infos.add(new PartitionInfo(t.getKey(), p, node, new Node[] {node}, new Node[] {node}));
            }
        }
        return new Cluster("vectors", List.of(node), infos, Set.of(), Set.of());
    }

    static String hex(ByteBuffer b) {
        StringBuilder s = new StringBuilder();
        ByteBuffer d = b.duplicate();
        while (d.hasRemaining()) {
            s.append(String.format("%02x", d.get()));
        }
        return s.toString();
    }

    /** Java's Cluster has no topics with zero partitions; those cases are checked with counts directly. */
    static String check(Case c, boolean ownedInUserData) {
        Map<String, Subscription> subs = new HashMap<>();
        for (Member m : c.members()) {
            Subscription t = ownedInUserData
                    ? new Subscription(m.topics(), CopartitionedAssignor.encodeOwned(m.owned(), 1), List.of(), 1, Optional.empty())
                    : new Subscription(m.topics(), null, m.owned(), 1, Optional.empty());
            t.setGroupInstanceId(Optional.ofNullable(m.instanceId()));
            subs.put(m.id(), t);
        }
        Map<String, Assignment> got = new CopartitionedAssignor()
                .assign(cluster(c.topics()), new GroupSubscription(subs)).groupAssignment();
        for (Map.Entry<String, List<TopicPartition>> e : c.expect().entrySet()) {
            Assignment a = got.get(e.getKey());
            if (a == null) {
                return "no assignment for " + e.getKey();
            }
            if (!new HashSet<>(a.partitions()).equals(new HashSet<>(e.getValue())) || a.partitions().size() != e.getValue().size()) {
                return e.getKey() + ": java " + a.partitions() + ", rust " + e.getValue();
            }
            if (!hex(a.userData()).equals(c.userData())) {
                return e.getKey() + ": user data java " + hex(a.userData()) + ", rust " + c.userData();
            }
            List<List<String>> groups = CopartitionedAssignor.unitGroups(a);
            if (groups == null || !hex(ByteBuffer.wrap(Copartitioned.encodeUnitGroups(groups))).equals(c.userData())) {
                return e.getKey() + ": user data does not decode back to itself";
            }
        }
        if (got.size() != c.expect().size()) {
            return "java assigned " + got.size() + " members, rust " + c.expect().size();
        }
        return null;
    }

    /**
     * The case with one more member whose subscription held a topic name that was not UTF-8
     * (kafka-clients hands it over with U+FFFD in its place), besides the case's topics: it
     * gets nothing and the user data, and the others exactly what the Rust leader gives them
     * without it, as the Rust leader assigns around such a member.
     */
    static String checkUnreadable(Case c) {
        Map<String, Subscription> subs = new HashMap<>();
        for (Member m : c.members()) {
            Subscription t = new Subscription(m.topics(), null, m.owned(), 1, Optional.empty());
            t.setGroupInstanceId(Optional.ofNullable(m.instanceId()));
            subs.put(m.id(), t);
        }
        List<String> topics = new ArrayList<>(c.topics().keySet());
        topics.add("\uFFFD\uFFFD");
        String hostile = "hostile-client-0d9c7f5e-3a1b-4c2d-8e9f-0123456789ab";
        subs.put(hostile, new Subscription(topics, null, List.of(), -1, Optional.empty()));
        // The assignor says on stderr whom it gave nothing; 848 times is noise here.
        java.io.PrintStream err = System.err;
        Map<String, Assignment> got;
        try {
            System.setErr(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
            got = new CopartitionedAssignor()
                    .assign(cluster(c.topics()), new GroupSubscription(subs)).groupAssignment();
        } finally {
            System.setErr(err);
        }
        Assignment h = got.get(hostile);
        if (h == null || !h.partitions().isEmpty() || !hex(h.userData()).equals(c.userData())) {
            return "the unreadable member got " + (h == null ? "no assignment" : h.partitions());
        }
        for (Map.Entry<String, List<TopicPartition>> e : c.expect().entrySet()) {
            Assignment a = got.get(e.getKey());
            if (a == null || !new HashSet<>(a.partitions()).equals(new HashSet<>(e.getValue()))) {
                return e.getKey() + " beside an unreadable member: java "
                        + (a == null ? null : a.partitions()) + ", rust without it " + e.getValue();
            }
        }
        return null;
    }

    /** Every case of the vectors file at {@code path}. */
    static List<Case> read(String path) throws java.io.IOException {
        List<Case> cases = new ArrayList<>();
        Case cur = null;
        for (String line : Files.readAllLines(Path.of(path), StandardCharsets.UTF_8)) {
            String[] w = line.split(" ");
            switch (w[0]) {
                case "case" -> cur = new Case(w[1], new LinkedHashMap<>(), new ArrayList<>(), new LinkedHashMap<>(), null);
                case "topic" -> cur.topics().put(w[1], Integer.parseInt(w[2]));
                case "member" -> cur.members().add(new Member(w[1], w[2].equals("-") ? null : w[2],
                        w[3].equals("-") ? List.of() : List.of(w[3].split(",")), parts(w[4])));
                case "expect" -> cur.expect().put(w[1], parts(w[2]));
                case "userdata" -> cur = new Case(cur.name(), cur.topics(), cur.members(), cur.expect(), w[1]);
                case "end" -> cases.add(cur);
                default -> throw new IllegalArgumentException(path + ": unexpected line: " + line);
            }
        }
        if (cases.isEmpty()) {
            throw new IllegalArgumentException(path + ": no cases");
        }
        return cases;
    }

    public static void main(String[] args) throws Exception {
        List<Case> cases = read(args[0]);
        int failed = 0;
        for (Case c : cases) {
            for (boolean viaUserData : new boolean[] {false, true}) {
                String why = check(c, viaUserData);
                if (why != null) {
                    failed++;
                    if (failed <= 10) {
                        System.err.println("MISMATCH " + c.name() + (viaUserData ? " (owned in user data)" : "") + ": " + why);
                    }
                }
            }
        }
        int unreadable = 0;
        for (Case c : cases) {
            String why = checkUnreadable(c);
            if (why != null) {
                unreadable++;
                if (unreadable <= 10) {
                    System.err.println("MISMATCH " + c.name() + " (beside an unreadable member): " + why);
                }
            }
        }
        System.out.println("copartitioned vectors beside a member whose subscription is not UTF-8: "
                + (cases.size() - unreadable) + " of " + cases.size() + " give it nothing and the others the Rust leader's");
        System.out.println("copartitioned vectors: " + cases.size() + " cases x 2 (owned in the standard field, in user data): "
                + (2 * cases.size() - failed) + " equal to the Rust leader, " + failed + " differ");
        System.exit(failed == 0 && unreadable == 0 ? 0 : 1);
    }
}
