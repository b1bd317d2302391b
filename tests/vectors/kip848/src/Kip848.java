// Known answers of the KIP-848 server assignors: runs the real UniformAssignor
// and RangeAssignor of one kafka-group-coordinator version (the jar on the class
// path) through their public API (GroupSpec, SubscribedTopicDescriber) over a
// fixed list of scenarios and prints one JSON line per (scenario, assignor).
//
// The inputs are built the way the coordinator builds them:
//  * memberIds(): the key set of a HashMap<String, _> filled in the scenario's
//    member order (TargetAssignmentBuilder / GroupSpecImpl keep members in one);
//  * a member's current assignment: Collectors.toMap of new HashSet<>(list) per
//    topic, wrapped unmodifiable (Assignment.fromRecord replaying a target
//    assignment record, Utils.assignmentFromTopicPartitions), so the owned
//    partitions iterate in HashSet<Integer> order of the list as recorded;
//  * subscriptionType(): HOMOGENEOUS when every subscribed topic has every
//    member as a subscriber (the coordinator's count of subscribers per topic).
// Topic ids are chosen so that their HashMap/HashSet order and their Uuid order
// are the scenario's topic order (msb fixed, lsb = msb ^ (index + 1): hashCode
// index + 1), which is the order partwise takes the topics in.
//
// Churn steps replay the previous step's result as the next current
// assignment, each set's partitions in the iteration order the coordinator
// would write to its record. Output "iteration" records that order too.
//
// Usage: java -cp CLASSES:JARS Kip848 VERSION   (JSON lines on stdout)
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.*;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

import java.util.*;
import java.util.stream.Collectors;

public class Kip848 {
    static final long MSB = 0x7061727477690000L;

    record Sub(Optional<String> instance, Set<Uuid> topics) implements MemberSubscription {
        public Optional<String> rackId() { return Optional.empty(); }
        public Optional<String> instanceId() { return instance; }
        public Set<Uuid> subscribedTopicIds() { return topics; }
    }

    record Asg(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}

    /** A member: id, optional instance id, subscribed topic names, owned (topic name, partition) in record order. */
    record M(String id, String instance, List<String> topics, List<Object[]> owned) {}

    static final class Spec implements GroupSpec {
        final Map<String, Sub> subs = new HashMap<>();
        final Map<String, Map<Uuid, Set<Integer>>> current = new HashMap<>();
        final Map<Uuid, Set<Integer>> assigned = new HashMap<>();
        final SubscriptionType type;

        Spec(List<M> members, Map<String, Uuid> ids) {
            Map<String, Integer> subscribers = new HashMap<>();
            for (M m : members) {
                Set<Uuid> t = new HashSet<>();
                for (String name : m.topics) { t.add(ids.get(name)); subscribers.merge(name, 1, Integer::sum); }
                subs.put(m.id, new Sub(Optional.ofNullable(m.instance), Collections.unmodifiableSet(t)));
                Map<Uuid, List<Integer>> lists = new LinkedHashMap<>();
                for (Object[] o : m.owned) lists.computeIfAbsent(ids.get((String) o[0]), k -> new ArrayList<>()).add((Integer) o[1]);
                Map<Uuid, Set<Integer>> cur = lists.entrySet().stream().collect(Collectors.toMap(
                    Map.Entry::getKey, e -> Collections.unmodifiableSet(new HashSet<>(e.getValue()))));
                current.put(m.id, Collections.unmodifiableMap(cur));
                cur.forEach((k, v) -> assigned.computeIfAbsent(k, x -> new HashSet<>()).addAll(v));
            }
            boolean homogeneous = subscribers.values().stream().allMatch(c -> c == members.size());
            type = homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        }
        public Collection<String> memberIds() { return subs.keySet(); }
        public SubscriptionType subscriptionType() { return type; }
        public boolean isPartitionAssigned(Uuid t, int p) { Set<Integer> s = assigned.get(t); return s != null && s.contains(p); }
        public boolean isPartitionAssignable(Uuid t, int p) { return true; }
        public MemberSubscription memberSubscription(String m) { return subs.get(m); }
        public MemberAssignment memberAssignment(String m) { return new Asg(current.getOrDefault(m, Map.of())); }
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String version;
    static int lines = 0;

    /** Runs one assignor on one group, prints the line, returns each member's result in iteration order. */
    static Map<String, List<Object[]>> run(String name, String caseName, LinkedHashMap<String, Integer> topics, List<M> members) {
        Map<String, Uuid> ids = new LinkedHashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        int i = 0;
        for (String t : topics.keySet()) { Uuid u = new Uuid(MSB, MSB ^ (i + 1)); ids.put(t, u); names.put(u, t); i++; }
        Spec spec = new Spec(members, ids);
        SubscribedTopicDescriber d = new SubscribedTopicDescriber() {
            public int numPartitions(Uuid id) { String n = names.get(id); return n == null ? -1 : topics.get(n); }
            public Set<String> racksForPartition(Uuid id, int part) { return Set.of(); }
        };
        PartitionAssignor a = name.equals("uniform") ? new UniformAssignor() : new RangeAssignor();
        StringBuilder out = new StringBuilder();
        out.append("{\"version\":").append(q(version)).append(",\"assignor\":").append(q("kip848:" + a.name()))
           .append(",\"case\":").append(q(caseName)).append(",\"subscription_type\":").append(q(spec.type.toString()));
        out.append(",\"topics\":[");
        boolean first = true;
        for (var e : topics.entrySet()) { out.append(first ? "" : ",").append("[").append(q(e.getKey())).append(",").append(e.getValue()).append("]"); first = false; }
        out.append("],\"members\":[");
        first = true;
        for (M m : members) {
            out.append(first ? "" : ",").append("{\"id\":").append(q(m.id));
            if (m.instance != null) out.append(",\"instance_id\":").append(q(m.instance));
            out.append(",\"topics\":[").append(m.topics.stream().map(Kip848::q).collect(Collectors.joining(","))).append("]");
            out.append(",\"owned\":[").append(m.owned.stream().map(o -> "[" + q((String) o[0]) + "," + o[1] + "]").collect(Collectors.joining(","))).append("]}");
            first = false;
        }
        out.append("],\"member_ids_order\":[").append(spec.memberIds().stream().map(Kip848::q).collect(Collectors.joining(","))).append("]");
        Map<String, List<Object[]>> result = new LinkedHashMap<>();
        try {
            GroupAssignment g = a.assign(spec, d);
            out.append(",\"expected\":{");
            StringBuilder it = new StringBuilder(",\"iteration\":{");
            first = true;
            for (M m : members) {
                MemberAssignment ma = g.members().get(m.id);
                Map<Uuid, Set<Integer>> parts = ma == null ? Map.of() : ma.partitions();
                List<Object[]> iter = new ArrayList<>();
                for (var e : parts.entrySet()) for (Integer p : e.getValue()) iter.add(new Object[]{names.get(e.getKey()), p});
                result.put(m.id, iter);
                List<Object[]> sorted = new ArrayList<>(iter);
                sorted.sort(Comparator.comparing((Object[] o) -> (String) o[0]).thenComparing(o -> (Integer) o[1]));
                out.append(first ? "" : ",").append(q(m.id)).append(":[")
                   .append(sorted.stream().map(o -> "[" + q((String) o[0]) + "," + o[1] + "]").collect(Collectors.joining(","))).append("]");
                it.append(first ? "" : ",").append(q(m.id)).append(":[")
                   .append(iter.stream().map(o -> "[" + q((String) o[0]) + "," + o[1] + "]").collect(Collectors.joining(","))).append("]");
                first = false;
            }
            out.append("}").append(it).append("}");
        } catch (PartitionAssignorException e) {
            out.append(",\"error\":").append(q(e.getClass().getSimpleName() + ": " + e.getMessage()));
            result = null;
        }
        out.append("}");
        System.out.println(out);
        lines++;
        return result;
    }

    static List<String> ids(String prefix, int k) {
        List<String> r = new ArrayList<>();
        int width = Math.max(2, String.valueOf(k - 1).length());
        for (int i = 0; i < k; i++) r.add(prefix + String.format("%0" + width + "d", i));
        return r;
    }

    static List<String> randomIds(Random r, int k) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < k; i++) out.add(new Uuid(r.nextLong(), r.nextLong()).toString());
        return out;
    }

    static LinkedHashMap<String, Integer> topics(Object... kv) {
        LinkedHashMap<String, Integer> t = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) t.put((String) kv[i], (Integer) kv[i + 1]);
        return t;
    }

    static List<M> fresh(List<String> memberIds, List<String> topics) {
        return memberIds.stream().map(id -> new M(id, null, topics, List.of())).collect(Collectors.toList());
    }

    /** A fresh assignment, then churn: each step's result is the next step's current assignment. */
    static void churn(String name, String caseName, LinkedHashMap<String, Integer> topics, List<String> start, List<List<String>> steps) {
        List<String> all = new ArrayList<>(topics.keySet());
        Map<String, List<Object[]>> prev = run(name, caseName + "/0", topics, fresh(start, all));
        int s = 1;
        for (List<String> members : steps) {
            if (prev == null) return;
            List<M> ms = new ArrayList<>();
            for (String id : members) ms.add(new M(id, null, all, prev.getOrDefault(id, List.of())));
            prev = run(name, caseName + "/" + s, topics, ms);
            s++;
        }
    }

    public static void main(String[] args) {
        version = args[0];
        Random r = new Random(848);
        for (String a : List.of("uniform", "range")) {
            // The smallest case: three members, one partition.
            run(a, "smallest", topics("clicks.v2", 1), fresh(ids("m", 3), List.of("clicks.v2")));
            // Fresh homogeneous groups.
            int[][] shapes = {{1, 1}, {2, 1}, {2, 3}, {3, 2}, {3, 4}, {3, 10}, {4, 6}, {4, 7}, {5, 12}, {7, 20}, {10, 3}, {16, 100}};
            for (int[] sh : shapes) {
                run(a, "fresh/m" + sh[0] + "/p" + sh[1], topics("t0", sh[1]), fresh(ids("m", sh[0]), List.of("t0")));
                run(a, "fresh2/m" + sh[0] + "/p" + sh[1], topics("orders", sh[1], "payments", sh[1] + 1),
                    fresh(ids("m", sh[0]), List.of("orders", "payments")));
            }
            run(a, "fresh3/m3", topics("a", 5, "b", 7, "c", 2), fresh(ids("m", 3), List.of("a", "b", "c")));
            run(a, "fresh/random-ids/m5", topics("t0", 13), fresh(randomIds(r, 5), List.of("t0")));
            run(a, "fresh/random-ids/m24", topics("t0", 50, "t1", 50), fresh(randomIds(r, 24), List.of("t0", "t1")));
            // Static members (range orders them by instance id).
            List<M> st = new ArrayList<>();
            List<String> sids = ids("m", 4);
            for (int i = 0; i < 4; i++) st.add(new M(sids.get(i), "i" + (3 - i), List.of("t0"), List.of()));
            run(a, "static/m4", topics("t0", 10), st);
            // Churn: leave, join, leave and join; the previous result as the current assignment.
            churn(a, "churn/leave", topics("t0", 10), ids("m", 4), List.of(ids("m", 4).subList(1, 4)));
            churn(a, "churn/join", topics("t0", 10), ids("m", 3), List.of(ids("m", 4)));
            churn(a, "churn/many", topics("orders", 24, "payments", 24), ids("m", 5),
                List.of(List.of("m00", "m01", "m02", "m03", "m04", "m05", "m06"), List.of("m01", "m03", "m05", "m06"),
                        List.of("m01", "m03", "m05", "m06", "m07", "m08", "m09"), List.of("m09", "m01")));
            churn(a, "churn/big", topics("t0", 100, "t1", 40), ids("m", 3),
                List.of(ids("m", 7), ids("m", 5).subList(1, 5), ids("m", 11)));
            List<String> rid = randomIds(r, 9);
            churn(a, "churn/random-ids", topics("t0", 64), rid.subList(0, 4), List.of(rid, rid.subList(3, 9)));
            // Owned partitions past the HashSet's first table: the kept ones are the first in set order.
            List<Object[]> own = new ArrayList<>();
            for (int p : new int[]{35, 3, 20, 17, 1, 33, 19, 2, 49, 18}) own.add(new Object[]{"t0", p});
            run(a, "owned/hash-order", topics("t0", 50), List.of(new M("m00", null, List.of("t0"), own),
                new M("m01", null, List.of("t0"), List.of()), new M("m02", null, List.of("t0"), List.of())));
            List<Object[]> own2 = new ArrayList<>();
            for (int p = 0; p < 40; p++) own2.add(new Object[]{"t0", (p * 37) % 80});
            run(a, "owned/hash-order-resized", topics("t0", 80), List.of(new M("m00", null, List.of("t0"), own2),
                new M("m01", null, List.of("t0"), List.of()), new M("m02", null, List.of("t0"), List.of()), new M("m03", null, List.of("t0"), List.of())));
            // A bucket of the owned set with 9 entries in a 16-slot table: HashMap resizes it.
            List<Object[]> own3 = new ArrayList<>();
            for (int p = 0; p < 9; p++) own3.add(new Object[]{"t0", 16 * p});
            run(a, "owned/bucket-resize", topics("t0", 160), List.of(new M("m00", null, List.of("t0"), own3),
                new M("m01", null, List.of("t0"), List.of()), new M("m02", null, List.of("t0"), List.of()),
                new M("m03", null, List.of("t0"), List.of()), new M("m04", null, List.of("t0"), List.of()),
                new M("m05", null, List.of("t0"), List.of()), new M("m06", null, List.of("t0"), List.of()),
                new M("m07", null, List.of("t0"), List.of()), new M("m08", null, List.of("t0"), List.of()),
                new M("m09", null, List.of("t0"), List.of()), new M("m10", null, List.of("t0"), List.of()),
                new M("m11", null, List.of("t0"), List.of()), new M("m12", null, List.of("t0"), List.of()),
                new M("m13", null, List.of("t0"), List.of()), new M("m14", null, List.of("t0"), List.of()),
                new M("m15", null, List.of("t0"), List.of()), new M("m16", null, List.of("t0"), List.of()),
                new M("m17", null, List.of("t0"), List.of()), new M("m18", null, List.of("t0"), List.of()),
                new M("m19", null, List.of("t0"), List.of()), new M("m20", null, List.of("t0"), List.of()),
                new M("m21", null, List.of("t0"), List.of()), new M("m22", null, List.of("t0"), List.of()),
                new M("m23", null, List.of("t0"), List.of()), new M("m24", null, List.of("t0"), List.of()),
                new M("m25", null, List.of("t0"), List.of()), new M("m26", null, List.of("t0"), List.of()),
                new M("m27", null, List.of("t0"), List.of()), new M("m28", null, List.of("t0"), List.of()),
                new M("m29", null, List.of("t0"), List.of()), new M("m30", null, List.of("t0"), List.of()),
                new M("m31", null, List.of("t0"), List.of())));
            // Unequal subscriptions (heterogeneous), fresh and with owned partitions.
            run(a, "hetero/fresh", topics("a", 3, "b", 6, "c", 4), List.of(
                new M("m00", null, List.of("a", "b"), List.of()), new M("m01", null, List.of("b"), List.of()),
                new M("m02", null, List.of("b", "c"), List.of())));
            run(a, "hetero/owned", topics("a", 4, "b", 8), List.of(
                new M("m00", null, List.of("a", "b"), List.<Object[]>of(new Object[]{"b", 0}, new Object[]{"b", 1}, new Object[]{"b", 2}, new Object[]{"b", 3}, new Object[]{"b", 4})),
                new M("m01", null, List.of("b"), List.<Object[]>of(new Object[]{"b", 5})),
                new M("m02", null, List.of("a"), List.<Object[]>of(new Object[]{"a", 0}))));
            run(a, "hetero/random-ids", topics("x", 7, "y", 7, "z", 9), List.of(
                new M("c-" + rid.get(0), null, List.of("x", "y", "z"), List.of()), new M("c-" + rid.get(1), null, List.of("y"), List.of()),
                new M("c-" + rid.get(2), null, List.of("x", "z"), List.of()), new M("c-" + rid.get(3), null, List.of("z"), List.of())));
        }
        System.err.println("kip848 " + version + ": " + lines + " lines");
    }
}
