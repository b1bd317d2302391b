// Times KIP-848 server assignors through the broker's own plug-in API (kafka-group-coordinator-api
// 4.4.0), side by side in one JVM: Kafka 4.4.0's UniformAssignor and RangeAssignor and partwise's
// BrokerCopartitionedAssignor, given the same GroupSpec and SubscribedTopicDescriber.
//
// One size per run: M members over T topics of P/T partitions each (P partitions in all).
//   homogeneous:   every member subscribes to every topic;
//   heterogeneous: even members subscribe to the first 60% of the topics, odd ones to the last
//                  60% (the middle fifth is shared), so the subscriptions differ.
// Per (subscription, assignor): "scratch" assigns with no current assignment; "leave" assigns
// the members but the first, whose current assignment is the scratch result minus that member.
// W warm-up calls, then R timed calls; each timed call records its wall time, the CPU time of
// the calling thread (ThreadMXBean.getCurrentThreadCpuTime: on a loaded machine the wall time
// also counts the time the thread waited for a core, the CPU time does not) and the bytes it
// allocated (com.sun.management.ThreadMXBean.getThreadAllocatedBytes). Every result is checked (each
// subscribed partition assigned once, to a subscriber; for copartitioned, whole units) and
// summarized by a checksum, so that two builds of an assignor can be compared for equal answers.
//
// "steady" is the same leave given current assignment objects an earlier call was already handed:
// the group coordinator keeps a member's target assignment object from one computation to the
// next until that member's target changes, so in a group where members come and go, the
// computation after a leave is mostly given objects the previous one saw; "leave" is the first
// computation after every member's target was rewritten (new objects throughout).
//
// Before each timed "leave" call, the harness also reads every partition of the current
// assignment the call is given (the CPU time of iterating each member's map and sets, summing
// the partition numbers): the floor of any assignor that reads each partition a member holds,
// as a placement keeping a unit with the member holding most of its partitions must.
//
// Output: one JSON object per line (size, subscription, assignor, scenario, the R wall and CPU
// times in ms, the R allocations in bytes, checksum); bench/broker-assign/run aggregates several runs.
//
//   java -cp ... bench.BrokerAssignBench MEMBERS PARTITIONS [TOPICS [WARMUP [RUNS [ASSIGNOR [SUBSCRIPTION]]]]]
// (ASSIGNOR: only the assignors whose class name contains it, e.g. to profile one;
// SUBSCRIPTION: homogeneous or heterogeneous alone)
package bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

public final class BrokerAssignBench {
    private BrokerAssignBench() {}

    record Sub(Set<Uuid> topics) implements MemberSubscription {
        @Override
        public Optional<String> rackId() {
            return Optional.empty();
        }

        @Override
        public Optional<String> instanceId() {
            return Optional.empty();
        }

        @Override
        public Set<Uuid> subscribedTopicIds() {
            return topics;
        }
    }

    record Asg(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}

    /** The coordinator's view of a group, as its GroupSpecImpl gives it to an assignor. */
    static final class Spec implements GroupSpec {
        final Map<String, Sub> subs;
        final SubscriptionType type;
        final Map<String, Map<Uuid, Set<Integer>>> current;
        final Map<Uuid, Map<Integer, String>> owners = new HashMap<>();
        /**
         * The member ids in the coordinator's order: GroupSpecImpl's are the key set of a
         * HashMap (TargetAssignmentBuilder's member specs), which the target-assignment records
         * of the result follow too (see {@link #copies}).
         */
        final Collection<String> ids;

        Spec(List<String> members, Map<String, Sub> subs, SubscriptionType type,
                Map<String, Map<Uuid, Set<Integer>>> current) {
            Map<String, Boolean> specs = new HashMap<>();
            for (String m : members) {
                specs.put(m, Boolean.TRUE);
            }
            this.ids = Collections.unmodifiableMap(specs).keySet();
            this.subs = subs;
            this.type = type;
            this.current = current;
            current.forEach((m, a) -> a.forEach((t, ps) -> {
                Map<Integer, String> byPartition = owners.computeIfAbsent(t, k -> new HashMap<>());
                for (int p : ps) {
                    byPartition.put(p, m);
                }
            }));
        }

        @Override
        public Collection<String> memberIds() {
            return ids;
        }

        @Override
        public SubscriptionType subscriptionType() {
            return type;
        }

        @Override
        public boolean isPartitionAssigned(Uuid t, int p) {
            Map<Integer, String> s = owners.get(t);
            return s != null && s.containsKey(p);
        }

        @Override
        public boolean isPartitionAssignable(Uuid t, int p) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String m) {
            return subs.get(m);
        }

        @Override
        public MemberAssignment memberAssignment(String m) {
            return new Asg(current.getOrDefault(m, Collections.emptyMap()));
        }
    }

    static final String[] ASSIGNORS = {
        "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
        "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
        "dev.partwise.BrokerCopartitionedAssignor",
    };

    public static void main(String[] a) throws Exception {
        if (a.length < 2) {
            System.err.println("usage: BrokerAssignBench MEMBERS PARTITIONS [TOPICS [WARMUP [RUNS [ASSIGNOR [SUBSCRIPTION]]]]]");
            System.exit(2);
        }
        int m = Integer.parseInt(a[0]);
        int total = Integer.parseInt(a[1]);
        int t = a.length > 2 ? Integer.parseInt(a[2]) : 10;
        int warmup = a.length > 3 ? Integer.parseInt(a[3]) : 5;
        int runs = a.length > 4 ? Integer.parseInt(a[4]) : 11;
        String only = a.length > 5 ? a[5] : "";
        String onlyType = a.length > 6 ? a[6].toUpperCase(java.util.Locale.ROOT) : "";
        if (m < 2 || t < 1 || total % t != 0 || warmup < 0 || runs < 1) {
            System.err.println("BrokerAssignBench: need MEMBERS >= 2, PARTITIONS a multiple of TOPICS");
            System.exit(2);
        }
        int p = total / t;
        Random r = new Random(42);
        Map<Uuid, Integer> counts = new LinkedHashMap<>();
        List<Uuid> ids = new ArrayList<>();
        for (int i = 0; i < t; i++) {
            Uuid id = new Uuid(r.nextLong(), r.nextLong());
            ids.add(id);
            counts.put(id, p);
        }
        SubscribedTopicDescriber d = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid id) {
                return counts.getOrDefault(id, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid id, int part) {
                return Set.of();
            }
        };
        List<String> members = new ArrayList<>();
        for (int i = 0; i < m; i++) {
            members.add("member-" + i + "-" + new Uuid(r.nextLong(), r.nextLong()));
        }
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().getId();

        for (SubscriptionType type : List.of(SubscriptionType.HOMOGENEOUS, SubscriptionType.HETEROGENEOUS)) {
            if (!type.name().contains(onlyType)) {
                continue;
            }
            Map<String, Sub> subs = new HashMap<>();
            Sub all = new Sub(new LinkedHashSet<>(ids));
            int cut = Math.max(1, (t * 3 + 4) / 5);
            Sub first = new Sub(new LinkedHashSet<>(ids.subList(0, cut)));
            Sub last = new Sub(new LinkedHashSet<>(ids.subList(t - cut, t)));
            for (int i = 0; i < m; i++) {
                subs.put(members.get(i), type == SubscriptionType.HOMOGENEOUS ? all : (i % 2 == 0 ? first : last));
            }
            for (String cls : ASSIGNORS) {
                if (!cls.contains(only)) {
                    continue;
                }
                PartitionAssignor as = (PartitionAssignor) Class.forName(cls).getDeclaredConstructor().newInstance();
                double[] scratchMs = new double[runs], leaveMs = new double[runs];
                double[] scratchCpu = new double[runs], leaveCpu = new double[runs], readCpu = new double[runs];
                long[] scratchBytes = new long[runs], leaveBytes = new long[runs];
                double[] steadyMs = new double[runs], steadyCpu = new double[runs];
                long[] steadyBytes = new long[runs];
                GroupAssignment scratch = null, leave = null, steady = null;
                List<String> rest = members.subList(1, members.size());
                for (int w = 0; w < warmup + runs; w++) {
                    Spec fresh = new Spec(members, subs, type, Map.of());
                    long b0 = mx.getThreadAllocatedBytes(thread);
                    long c0 = mx.getCurrentThreadCpuTime();
                    long s0 = System.nanoTime();
                    scratch = as.assign(fresh, d);
                    long s1 = System.nanoTime();
                    long c1 = mx.getCurrentThreadCpuTime();
                    long b1 = mx.getThreadAllocatedBytes(thread);
                    Map<String, Map<Uuid, Set<Integer>>> cur = copies(scratch, fresh);
                    cur.remove(members.get(0));
                    Spec left = new Spec(rest, subs, type, cur);
                    long r0 = mx.getCurrentThreadCpuTime();
                    long sum = read(left);
                    long r1 = mx.getCurrentThreadCpuTime();
                    if (sum == Long.MIN_VALUE) {
                        // Keeps the read from being optimized away.
                        System.err.println(sum);
                    }
                    long b2 = mx.getThreadAllocatedBytes(thread);
                    long c2 = mx.getCurrentThreadCpuTime();
                    long s2 = System.nanoTime();
                    leave = as.assign(left, d);
                    long s3 = System.nanoTime();
                    long c3 = mx.getCurrentThreadCpuTime();
                    long b3 = mx.getThreadAllocatedBytes(thread);
                    // steady: the same leave in a group whose current assignment objects an
                    // earlier computation was already handed (as the coordinator hands a
                    // member's target object again until its target changes): new copies,
                    // one untimed call with every member, then the leave.
                    Map<String, Map<Uuid, Set<Integer>>> kept = copies(scratch, fresh);
                    as.assign(new Spec(members, subs, type, kept), d);
                    kept.remove(members.get(0));
                    Spec steadyLeft = new Spec(rest, subs, type, kept);
                    long b4 = mx.getThreadAllocatedBytes(thread);
                    long c4 = mx.getCurrentThreadCpuTime();
                    long s4 = System.nanoTime();
                    steady = as.assign(steadyLeft, d);
                    long s5 = System.nanoTime();
                    long c5 = mx.getCurrentThreadCpuTime();
                    long b5 = mx.getThreadAllocatedBytes(thread);
                    if (w >= warmup) {
                        steadyMs[w - warmup] = (s5 - s4) / 1e6;
                        steadyCpu[w - warmup] = (c5 - c4) / 1e6;
                        steadyBytes[w - warmup] = b5 - b4;
                        scratchMs[w - warmup] = (s1 - s0) / 1e6;
                        leaveMs[w - warmup] = (s3 - s2) / 1e6;
                        scratchCpu[w - warmup] = (c1 - c0) / 1e6;
                        leaveCpu[w - warmup] = (c3 - c2) / 1e6;
                        readCpu[w - warmup] = (r1 - r0) / 1e6;
                        scratchBytes[w - warmup] = b1 - b0;
                        leaveBytes[w - warmup] = b3 - b2;
                    }
                }
                boolean units = cls.endsWith("CopartitionedAssignor");
                check(cls, "scratch", scratch, members, subs, counts, units);
                check(cls, "leave", leave, rest, subs, counts, units);
                check(cls, "steady", steady, rest, subs, counts, units);
                String size = m + "x" + total;
                print(size, t, type, as.name(), "scratch", scratchMs, scratchCpu, null, scratchBytes, checksum(scratch));
                print(size, t, type, as.name(), "leave", leaveMs, leaveCpu, readCpu, leaveBytes, checksum(leave));
                print(size, t, type, as.name(), "steady", steadyMs, steadyCpu, null, steadyBytes, checksum(steady));
            }
        }
    }

    /**
     * A result as the coordinator holds it once it replayed the result's records: one record a
     * member, in the order of the member ids of the call that computed it (TargetAssignmentBuilder
     * writes them so), each read back as Assignment.fromRecord does (a HashMap of new HashSets,
     * the map unmodifiable).
     */
    static Map<String, Map<Uuid, Set<Integer>>> copies(GroupAssignment result, GroupSpec spec) {
        Map<String, Map<Uuid, Set<Integer>>> cur = new HashMap<>();
        for (String k : spec.memberIds()) {
            Map<Uuid, Set<Integer>> im = new HashMap<>();
            result.members().get(k).partitions().forEach((tt, ps) -> im.put(tt, new HashSet<>(ps)));
            cur.put(k, Collections.unmodifiableMap(im));
        }
        return cur;
    }

    /** Every partition of the members' current assignments, summed, in the spec's member order. */
    static long read(GroupSpec spec) {
        long sum = 0;
        for (String m : spec.memberIds()) {
            for (Map.Entry<Uuid, Set<Integer>> e : spec.memberAssignment(m).partitions().entrySet()) {
                sum += e.getKey().hashCode();
                for (int p : e.getValue()) {
                    sum += p;
                }
            }
        }
        return sum;
    }

    static void print(String size, int topics, SubscriptionType type, String assignor, String scenario,
            double[] ms, double[] cpu, double[] read, long[] bytes, long checksum) {
        StringBuilder b = new StringBuilder();
        b.append("{\"size\":\"").append(size).append("\",\"topics\":").append(topics)
                .append(",\"subscription\":\"").append(type.name().toLowerCase()).append("\",\"assignor\":\"")
                .append(assignor).append("\",\"scenario\":\"").append(scenario).append("\",\"ms\":[");
        for (int i = 0; i < ms.length; i++) {
            b.append(i > 0 ? "," : "").append(String.format("%.4f", ms[i]));
        }
        b.append("],\"cpu_ms\":[");
        for (int i = 0; i < cpu.length; i++) {
            b.append(i > 0 ? "," : "").append(String.format("%.4f", cpu[i]));
        }
        if (read != null) {
            b.append("],\"read_cpu_ms\":[");
            for (int i = 0; i < read.length; i++) {
                b.append(i > 0 ? "," : "").append(String.format("%.4f", read[i]));
            }
        }
        b.append("],\"bytes\":").append(Arrays.toString(bytes).replace(" ", ""))
                .append(",\"checksum\":\"").append(Long.toHexString(checksum)).append("\"}");
        System.out.println(b);
    }

    /** Each subscribed partition exactly once, to a subscriber; with units, partition p of a
     *  member's topics of one count and one subscriber set all with that member. */
    static void check(String cls, String scenario, GroupAssignment g, List<String> members, Map<String, Sub> subs,
            Map<Uuid, Integer> counts, boolean units) {
        Map<Uuid, String[]> owner = new HashMap<>();
        Set<Uuid> subscribed = new HashSet<>();
        for (String m : members) {
            subscribed.addAll(subs.get(m).topics());
        }
        for (Uuid t : subscribed) {
            owner.put(t, new String[counts.get(t)]);
        }
        for (String m : members) {
            MemberAssignment a = g.members().get(m);
            if (a == null) {
                continue;
            }
            for (Map.Entry<Uuid, Set<Integer>> e : a.partitions().entrySet()) {
                if (!subs.get(m).topics().contains(e.getKey())) {
                    fail(cls, scenario, m + " holds a topic it does not subscribe to");
                }
                for (int p : e.getValue()) {
                    String[] o = owner.get(e.getKey());
                    if (o[p] != null) {
                        fail(cls, scenario, "partition " + p + " assigned twice");
                    }
                    o[p] = m;
                }
            }
        }
        for (Map.Entry<Uuid, String[]> e : owner.entrySet()) {
            for (String o : e.getValue()) {
                if (o == null) {
                    fail(cls, scenario, "a subscribed partition is unassigned");
                }
            }
        }
        if (units) {
            // Topics with the same subscribers (all of one count here) form a unit group.
            Map<Set<String>, List<Uuid>> groups = new HashMap<>();
            for (Uuid t : subscribed) {
                Set<String> who = new HashSet<>();
                for (String m : members) {
                    if (subs.get(m).topics().contains(t)) {
                        who.add(m);
                    }
                }
                groups.computeIfAbsent(who, k -> new ArrayList<>()).add(t);
            }
            for (List<Uuid> ts : groups.values()) {
                for (int p = 0; p < counts.get(ts.get(0)); p++) {
                    for (Uuid t : ts) {
                        if (!owner.get(t)[p].equals(owner.get(ts.get(0))[p])) {
                            fail(cls, scenario, "unit " + p + " split");
                        }
                    }
                }
            }
        }
    }

    static void fail(String cls, String scenario, String why) {
        System.err.println("BrokerAssignBench: " + cls + " " + scenario + ": " + why);
        System.exit(1);
    }

    /** Members by id, topics by id, partitions ascending: equal answers, equal checksums. */
    static long checksum(GroupAssignment g) {
        long h = 1;
        for (Map.Entry<String, MemberAssignment> m : new TreeMap<>(g.members()).entrySet()) {
            h = h * 1_000_003 + m.getKey().hashCode();
            for (Map.Entry<Uuid, Set<Integer>> t : new TreeMap<>(m.getValue().partitions()).entrySet()) {
                h = h * 1_000_003 + t.getKey().hashCode();
                int[] ps = t.getValue().stream().mapToInt(Integer::intValue).sorted().toArray();
                for (int p : ps) {
                    h = h * 31 + p;
                }
            }
        }
        return h;
    }
}
