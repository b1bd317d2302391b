package dev.partwise.groups;

import dev.partwise.regen.Json;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor.MemberData;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.AppInfoParser;

/**
 * Known answers for `partwise assign --group FILE`: kafka-clients' own
 * RangeAssignor, RoundRobinAssignor, StickyAssignor and
 * CooperativeStickyAssignor, called through the public
 * {@code assign(Cluster, GroupSubscription)}, on groups with unequal
 * subscriptions, claims from mixed generations, static members, and claims
 * past a topic's count (a leader whose members still hold partitions of a
 * topic that was deleted and recreated with fewer).
 *
 * <p>Each line holds the group exactly as `assign --group` reads it (the
 * member map's insertion order is the file's member order, as the leader's
 * {@code HashMap} is filled from the JoinGroup response), and either the
 * assignor's output or the exception it threw. Owned partitions and
 * generations are written as the assignor itself decodes them
 * ({@code memberData}): StickyAssignor reads them from the user data its own
 * {@code subscriptionUserData} wrote after {@code onAssignment},
 * CooperativeStickyAssignor from the subscription's owned partitions and
 * generation.
 */
public final class GroupCases {
    private GroupCases() {}

    /** A member before it is turned into a Subscription. */
    record M(String id, String instance, List<String> topics, List<TopicPartition> owned, int generation) {}

    record G(String name, String kind, LinkedHashMap<String, Integer> topics, List<M> members) {}

    static final class Sticky extends StickyAssignor {
        /** What the assignor will decode, read from a duplicate so the real call still sees the bytes. */
        MemberData decoded(Subscription s) {
            java.nio.ByteBuffer data = s.userData() == null ? null : s.userData().duplicate();
            Subscription copy = new Subscription(s.topics(), data, s.ownedPartitions(),
                    s.generationId().orElse(-1), s.rackId());
            return memberData(copy);
        }
    }

    static final class Coop extends CooperativeStickyAssignor {
        /** What the assignor will decode, read from a duplicate so the real call still sees the bytes. */
        MemberData decoded(Subscription s) {
            java.nio.ByteBuffer data = s.userData() == null ? null : s.userData().duplicate();
            Subscription copy = new Subscription(s.topics(), data, s.ownedPartitions(),
                    s.generationId().orElse(-1), s.rackId());
            return memberData(copy);
        }
    }

    static final String[] SPECS = {"java:range", "java:roundrobin", "java:sticky", "java:cooperative-sticky"};

    static ConsumerPartitionAssignor fresh(String spec) {
        return switch (spec) {
            case "java:range" -> new RangeAssignor();
            case "java:roundrobin" -> new RoundRobinAssignor();
            case "java:sticky" -> new Sticky();
            case "java:cooperative-sticky" -> new Coop();
            default -> throw new IllegalArgumentException(spec);
        };
    }

    public static void main(String[] argv) throws IOException {
        Path repo = Path.of(argv[0]);
        String version = AppInfoParser.getVersion();
        List<G> groups = new ArrayList<>();
        handWritten(groups);
        Random rnd = new Random(20261202L);
        for (int i = 0; i < 40; i++) groups.add(chain(rnd, "mixed-" + i, false));
        for (int i = 0; i < 16; i++) groups.add(chain(rnd, "stale-" + i, true));
        Path out = repo.resolve("tests/vectors/assignors/java_group_cases.jsonl");
        int lines = 0, errors = 0;
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
            for (G g : groups) {
                for (String spec : SPECS) {
                    ConsumerPartitionAssignor a = fresh(spec);
                    Map<String, Subscription> subs = subscriptions(a, g);
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("kafka_clients", version);
                    line.put("case", g.name);
                    line.put("kind", g.kind);
                    line.put("assignor", spec);
                    line.put("class", a.getClass().getSuperclass() == Object.class
                            ? a.getClass().getName() : baseName(a));
                    line.put("group", new Json.Raw(groupJson(a, g, subs)));
                    try {
                        Map<String, Assignment> res = a.assign(cluster(g), new GroupSubscription(subs)).groupAssignment();
                        Map<String, Object> asg = new LinkedHashMap<>();
                        for (M m : g.members) asg.put(m.id, Json.sorted(res.get(m.id).partitions()));
                        line.put("assignment", asg);
                        line.put("error", null);
                    } catch (RuntimeException e) {
                        errors++;
                        line.put("assignment", null);
                        Map<String, Object> err = new LinkedHashMap<>();
                        err.put("class", e.getClass().getName());
                        err.put("message", e.getMessage());
                        line.put("error", err);
                    }
                    w.println(Json.of(line));
                    lines++;
                }
            }
        }
        System.err.printf("java-groups: kafka-clients %s, %d groups, %d lines (%d threw) -> %s%n",
                version, groups.size(), lines, errors, out);
    }

    static String baseName(ConsumerPartitionAssignor a) {
        Class<?> c = a.getClass();
        while (c.getName().startsWith("dev.partwise")) c = c.getSuperclass();
        return c.getName();
    }

    static Cluster cluster(G g) {
        List<PartitionInfo> parts = new ArrayList<>();
        Node[] none = new Node[0];
        g.topics.forEach((t, n) -> {
            for (int p = 0; p < n; p++) parts.add(new PartitionInfo(t, p, null, none, none));
        });
        return new Cluster("pw", List.of(), parts, java.util.Set.of(), java.util.Set.of());
    }

    /** The subscriptions as the leader's map holds them, in the file's member order. */
    static Map<String, Subscription> subscriptions(ConsumerPartitionAssignor a, G g) {
        Map<String, Subscription> subs = new HashMap<>();
        for (M m : g.members) {
            Subscription s;
            if (a instanceof StickyAssignor sticky) {
                java.nio.ByteBuffer data = null;
                if (m.generation >= 0) {
                    sticky.onAssignment(new Assignment(m.owned),
                            new ConsumerGroupMetadata("pw", m.generation, m.id, Optional.ofNullable(m.instance)));
                    data = sticky.subscriptionUserData(new java.util.HashSet<>(m.topics));
                }
                // An eager member revokes before it joins (no owned partitions
                // in the subscription) but still sends its generation.
                s = new Subscription(m.topics, data, List.of(), m.generation, Optional.empty());
            } else {
                s = new Subscription(m.topics, null, m.owned, m.generation, Optional.empty());
            }
            s.setGroupInstanceId(Optional.ofNullable(m.instance));
            subs.put(m.id, s);
        }
        return subs;
    }

    static String groupJson(ConsumerPartitionAssignor a, G g, Map<String, Subscription> subs) {
        StringBuilder b = new StringBuilder("{\"group\": ").append(Json.str(g.name)).append(", \"topics\": [");
        boolean first = true;
        for (Map.Entry<String, Integer> e : g.topics.entrySet()) {
            if (!first) b.append(", ");
            first = false;
            b.append("{\"name\": ").append(Json.str(e.getKey())).append(", \"partitions\": ").append(e.getValue()).append('}');
        }
        b.append("], \"members\": [");
        first = true;
        for (M m : g.members) {
            Subscription s = subs.get(m.id);
            List<TopicPartition> owned;
            Optional<Integer> gen;
            if (a instanceof Sticky st) {
                MemberData d = st.decoded(s);
                owned = d.partitions;
                gen = d.generation;
            } else if (a instanceof Coop co) {
                MemberData d = co.decoded(s);
                owned = d.partitions;
                gen = d.generation;
            } else {
                owned = s.ownedPartitions();
                gen = s.generationId();
            }
            if (!first) b.append(", ");
            first = false;
            b.append("{\"id\": ").append(Json.str(m.id))
                    .append(", \"instance_id\": ").append(Json.str(m.instance))
                    .append(", \"subscription\": ").append(Json.of(m.topics))
                    .append(", \"owned_partitions\": ").append(byTopicRuns(owned))
                    .append(", \"generation\": ").append(gen.map(String::valueOf).orElse("null"))
                    .append('}');
        }
        return b.append("]}").toString();
    }

    /** `[[topic, [partitions]], ...]`, one entry per run of one topic, in list order. */
    static String byTopicRuns(List<TopicPartition> tps) {
        StringBuilder b = new StringBuilder("[");
        String cur = null;
        boolean firstRun = true;
        for (TopicPartition tp : tps) {
            if (!tp.topic().equals(cur)) {
                if (cur != null) b.append("]]");
                if (!firstRun) b.append(", ");
                firstRun = false;
                cur = tp.topic();
                b.append('[').append(Json.str(cur)).append(", [").append(tp.partition());
            } else {
                b.append(", ").append(tp.partition());
            }
        }
        if (cur != null) b.append("]]");
        return b.append(']').toString();
    }

    static List<TopicPartition> tps(Object... topicThenPartitions) {
        List<TopicPartition> out = new ArrayList<>();
        String t = null;
        for (Object o : topicThenPartitions) {
            if (o instanceof String s) t = s;
            else out.add(new TopicPartition(t, (Integer) o));
        }
        return out;
    }

    static LinkedHashMap<String, Integer> topics(Object... nameThenCount) {
        LinkedHashMap<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < nameThenCount.length; i += 2) m.put((String) nameThenCount[i], (Integer) nameThenCount[i + 1]);
        return m;
    }

    static void handWritten(List<G> out) {
        // Two members claim t1-0; the claim of the higher generation wins.
        out.add(new G("two-claims-higher-generation", "mixed-generations", topics("t1", 3, "t2", 2), List.of(
                new M("c0", null, List.of("t1", "t2"), tps("t1", 0, 1, "t2", 0), 5),
                new M("c1", null, List.of("t1"), tps("t1", 0, 2), 4),
                new M("c2", null, List.of("t1", "t2"), tps("t2", 1), 5))));
        // A member that missed a rebalance still claims its old partitions.
        out.add(new G("missed-rebalance", "mixed-generations", topics("a", 6, "b", 6), List.of(
                new M("m-b", null, List.of("a", "b"), tps("a", 0, 1, 2, "b", 0, 1, 2), 3),
                new M("m-a", null, List.of("a", "b"), tps("a", 0, 3, 4, "b", 3, 4), 4),
                new M("m-c", null, List.of("a", "b"), tps("a", 5, "b", 5), 4),
                new M("m-d", null, List.of("a", "b"), List.of(), -1))));
        // Static members with unequal subscriptions.
        out.add(new G("static-unequal", "unequal-subscriptions", topics("p", 5, "q", 3), List.of(
                new M("i-z-1", "i-z", List.of("p", "q"), tps("p", 0, 1, "q", 0), 2),
                new M("i-m-1", "i-m", List.of("q"), tps("q", 1, 2), 2),
                new M("i-a-1", "i-a", List.of("p"), tps("p", 2, 3, 4), 2),
                new M("i-b-1", "i-b", List.of("p", "q"), List.of(), -1))));
        // The case: t0 recreated with 106 partitions while members claim 108.
        List<M> big = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            List<TopicPartition> own = new ArrayList<>();
            for (int p = i; p < 108; p += 4) own.add(new TopicPartition("t0", p));
            big.add(new M(String.format("c%d", i), null, List.of("t0"), own, 7));
        }
        out.add(new G("shrunk-106-of-108", "stale-claims", topics("t0", 106), big));
        // Claims past the count on one topic of two, with unequal subscriptions.
        out.add(new G("stale-unequal", "stale-claims", topics("x", 4, "y", 3), List.of(
                new M("c0", null, List.of("x", "y"), tps("x", 0, 4, 5, "y", 0), 3),
                new M("c1", null, List.of("x"), tps("x", 1, 2), 3),
                new M("c2", null, List.of("x", "y"), tps("x", 3, "y", 1, 2, 3), 3))));
    }

    static String memberId(Random rnd, int i) {
        return String.format("c%d-%08x", i, rnd.nextInt());
    }

    /**
     * A chain of rebalances with this assignor-independent bookkeeping: the
     * claims of generation g come from a real sticky assignment of the group
     * as it was, one member keeps an older generation's claims (it missed a
     * rebalance), members leave and join; with {@code stale}, a topic ends
     * with fewer partitions than the claims name.
     */
    static G chain(Random rnd, String name, boolean stale) {
        int nTopics = 1 + rnd.nextInt(3);
        LinkedHashMap<String, Integer> before = new LinkedHashMap<>();
        for (int t = 0; t < nTopics; t++) before.put("t" + t, 1 + rnd.nextInt(8));
        int nMembers = 2 + rnd.nextInt(4);
        List<M> members = new ArrayList<>();
        for (int i = 0; i < nMembers; i++) {
            String instance = rnd.nextInt(4) == 0 ? "i-" + (char) ('a' + rnd.nextInt(26)) + i : null;
            members.add(new M(memberId(rnd, i), instance, someTopics(rnd, before.keySet()), List.of(), -1));
        }
        // Generation 1: a fresh StickyAssignor assignment; generation 2: again after a change.
        Map<String, List<TopicPartition>> g1 = stickyOf(before, members);
        int older = rnd.nextInt(members.size());
        List<M> gen1 = new ArrayList<>();
        for (M m : members) gen1.add(new M(m.id, m.instance, m.topics, g1.get(m.id), 1));
        List<M> changed = new ArrayList<>(gen1);
        if (rnd.nextBoolean() && changed.size() > 2) changed.remove(rnd.nextInt(changed.size()));
        changed.add(new M(memberId(rnd, nMembers), null, someTopics(rnd, before.keySet()), List.of(), -1));
        Map<String, List<TopicPartition>> g2 = stickyOf(before, changed);
        List<M> now = new ArrayList<>();
        for (int i = 0; i < changed.size(); i++) {
            M m = changed.get(i);
            if (i == older % changed.size() && m.generation == 1) {
                now.add(m); // missed generation 2: still claims generation 1's partitions
            } else {
                now.add(new M(m.id, m.instance, rnd.nextInt(5) == 0 ? someTopics(rnd, before.keySet()) : m.topics,
                        g2.get(m.id), 2));
            }
        }
        if (rnd.nextInt(3) == 0) now.add(new M(memberId(rnd, nMembers + 1), null, someTopics(rnd, before.keySet()), List.of(), -1));
        LinkedHashMap<String, Integer> after = new LinkedHashMap<>(before);
        if (stale) {
            String t = "t" + rnd.nextInt(nTopics);
            int n = before.get(t);
            after.put(t, Math.max(1, n - 1 - rnd.nextInt(Math.max(1, n / 2))));
        }
        return new G(name, stale ? "stale-claims" : "mixed-generations", after, now);
    }

    static List<String> someTopics(Random rnd, Collection<String> all) {
        List<String> out = new ArrayList<>();
        for (String t : all) if (rnd.nextInt(3) != 0) out.add(t);
        if (out.isEmpty()) out.add(all.iterator().next());
        return out;
    }

    static Map<String, List<TopicPartition>> stickyOf(LinkedHashMap<String, Integer> topics, List<M> members) {
        Sticky a = new Sticky();
        G g = new G("prior", "", topics, members);
        Map<String, Assignment> res = a.assign(cluster(g), new GroupSubscription(subscriptions(a, g))).groupAssignment();
        Map<String, List<TopicPartition>> out = new HashMap<>();
        for (M m : members) out.put(m.id, new ArrayList<>(Json.sorted(res.get(m.id).partitions())));
        return out;
    }
}
