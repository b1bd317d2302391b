// What BrokerCopartitionedAssignor keeps between computations, and the placement's shortcuts,
// checked against the plain computation on random groups:
//   1. Copartitioned.Placement with its shortcuts (one subscription shared by every member;
//      step 2 as a round robin) gives the groups, owners and loads it gives without them;
//   2. one assignor instance shared by every computation of a group's life (members leaving
//      and joining, partition counts and subscriptions changing, the coordinator handing the
//      same map objects again, or new copies of them, or copies where two members swapped a
//      partition, or the maps of a computation whose result it never stored) gives, at every
//      step, what a fresh instance gives;
//   3. Copartitioned.memberOrder, a sort of numbers from a prefix of each id, gives the order
//      of a stable sort by Copartitioned.memberCompare alone, on ids with shared prefixes,
//      NUL and surrogate units, prefixes of each other, instance ids and ties.
// Seeded: a failure replays.
package dev.partwise;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

public final class BrokerStateCheck {
    private BrokerStateCheck() {}

    private record Subscription(Optional<String> rackId, Optional<String> instanceId, Set<Uuid> subscribedTopicIds)
            implements MemberSubscription {}

    private record Current(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}

    /** A group as the coordinator holds it: subscriptions and current targets, by member id. */
    private static final class Spec implements GroupSpec {
        final Map<String, Subscription> subs;
        final Map<String, Map<Uuid, Set<Integer>>> current;

        Spec(Map<String, Subscription> subs, Map<String, Map<Uuid, Set<Integer>>> current) {
            this.subs = subs;
            this.current = current;
        }

        @Override
        public Collection<String> memberIds() {
            return subs.keySet();
        }

        @Override
        public SubscriptionType subscriptionType() {
            return new HashSet<>(subs.values().stream().map(Subscription::subscribedTopicIds).toList()).size() <= 1
                    ? SubscriptionType.HOMOGENEOUS
                    : SubscriptionType.HETEROGENEOUS;
        }

        @Override
        public boolean isPartitionAssigned(Uuid topic, int partition) {
            return current.values().stream().anyMatch(c -> c.getOrDefault(topic, Set.of()).contains(partition));
        }

        @Override
        public boolean isPartitionAssignable(Uuid topic, int partition) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String member) {
            return subs.get(member);
        }

        @Override
        public MemberAssignment memberAssignment(String member) {
            return new Current(current.getOrDefault(member, Map.of()));
        }
    }

    public static void main(String[] args) {
        Random rng = new Random(args.length > 0 ? Long.parseLong(args[0]) : 20261204L);
        int placements = placements(rng, 20_000);
        int[] steps = lives(rng, 400, 30);
        int orders = orders(rng, 5_000);
        System.out.println("broker assignor state: " + placements + " placements equal with and without the shortcuts; "
                + steps[0] + " computations of " + steps[1] + " group lives equal with the kept state and without; "
                + orders + " member orders equal to a stable sort by memberCompare");
    }

    /** Random member lists ordered by memberOrder and by Arrays.sort with memberCompare. */
    static int orders(Random rng, int cases) {
        char[] units = {'a', 'b', 'm', '-', '0', '9', '\0', '\u00e9', '\ue000', '\uffff', '\ud83d', '\ude00'};
        for (int c = 0; c < cases; c++) {
            int n = rng.nextInt(c % 500 == 0 ? 70_000 : c % 10 == 0 ? 300 : 40);
            String shared = rng.nextBoolean() ? "" : "member-".substring(0, rng.nextInt(8));
            // Ids agreeing well past their common prefix: long runs of equal numbers.
            String run = rng.nextInt(4) == 0 ? "0000" : "";
            String[] instances = new String[n];
            String[] ids = new String[n];
            for (int m = 0; m < n; m++) {
                StringBuilder id = new StringBuilder(shared);
                if (m > 0) {
                    id.append(run);
                }
                int len = rng.nextInt(6);
                for (int i = 0; i < len; i++) {
                    id.append(units[rng.nextInt(units.length)]);
                }
                ids[m] = m > 0 && rng.nextInt(10) == 0 ? ids[rng.nextInt(m)] + id : id.toString();
                if (rng.nextInt(3) == 0) {
                    // Instance ids, some equal to another's (a tie memberCompare leaves to the
                    // sort's stability).
                    instances[m] = m > 0 && rng.nextInt(4) == 0 && instances[m - 1] != null
                            ? instances[m - 1]
                            : shared + units[rng.nextInt(units.length)] + units[rng.nextInt(units.length)];
                }
            }
            Integer[] expected = new Integer[n];
            for (int m = 0; m < n; m++) {
                expected[m] = m;
            }
            Arrays.sort(expected, (x, y) -> Copartitioned.memberCompare(instances[x], ids[x], instances[y], ids[y]));
            int[] got = Copartitioned.memberOrder(instances, ids);
            for (int r = 0; r < n; r++) {
                if (got[r] != expected[r]) {
                    fail("member order case " + c + ": rank " + r + " is member " + got[r] + ", a stable sort by"
                            + " memberCompare puts " + expected[r] + " there");
                }
            }
        }
        return cases;
    }

    /** Random placements, with and without the shortcuts; exits 1 on the first difference. */
    static int placements(Random rng, int cases) {
        for (int c = 0; c < cases; c++) {
            int nt = 1 + rng.nextInt(5);
            int[] partitions = new int[nt];
            for (int t = 0; t < nt; t++) {
                partitions[t] = rng.nextInt(4) == 0 ? partitions[rng.nextInt(t + 1)] : rng.nextInt(13);
            }
            int n = 1 + rng.nextInt(9);
            int[][] subscribed = new int[n][];
            boolean shared = rng.nextBoolean();
            int[] common = someTopics(rng, nt);
            for (int m = 0; m < n; m++) {
                subscribed[m] = shared ? common : someTopics(rng, nt);
            }
            List<Integer> ranks = new ArrayList<>();
            for (int m = 0; m < n; m++) {
                ranks.add(m);
            }
            Collections.shuffle(ranks, rng);
            int[] order = ranks.stream().mapToInt(Integer::intValue).toArray();
            Copartitioned.Placement a = new Copartitioned.Placement(partitions, subscribed, order, true);
            Copartitioned.Placement b = new Copartitioned.Placement(partitions, subscribed, order, false);
            if (!Arrays.deepEquals(a.groups, b.groups) || !Arrays.deepEquals(a.groupMembers, b.groupMembers)
                    || !Arrays.deepEquals(a.memberGroups, b.memberGroups) || !Arrays.equals(a.unitBase, b.unitBase)) {
                fail("placement case " + c + ": the groups differ with the shortcuts");
            }
            // Earlier owners: whole units (as a kept target) and single partitions, some of
            // them out of range or claimed twice.
            int claims = rng.nextInt(3 * (a.unitGroup.length + 1));
            for (int k = 0; k < claims; k++) {
                int m = rng.nextInt(n);
                if (a.unitGroup.length > 0 && rng.nextBoolean()) {
                    int u = rng.nextInt(a.unitGroup.length);
                    a.ownUnit(m, u);
                    b.ownUnit(m, u);
                } else {
                    int t = rng.nextInt(nt);
                    int p = rng.nextInt(partitions[t] + 2) - 1;
                    a.own(m, t, p);
                    b.own(m, t, p);
                }
            }
            a.place();
            b.place();
            if (!Arrays.equals(a.owner, b.owner) || !Arrays.equals(a.load, b.load)) {
                fail("placement case " + c + ": owners " + Arrays.toString(a.owner) + " with the shortcuts, "
                        + Arrays.toString(b.owner) + " without");
            }
        }
        return cases;
    }

    static int[] someTopics(Random rng, int nt) {
        int[] ts = new int[rng.nextInt(nt + 1)];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = rng.nextInt(nt);
        }
        return ts;
    }

    /**
     * Random group lives through one shared assignor instance, each computation compared
     * with a fresh instance's; returns {computations, lives}.
     */
    static int[] lives(Random rng, int lives, int stepsEach) {
        BrokerCopartitionedAssignor shared = new BrokerCopartitionedAssignor();
        int computations = 0;
        // Ids of earlier lives' members: a member id the shared instance placed in another
        // group (its rank, target and instance id there) must count for nothing here.
        List<String> earlier = new ArrayList<>();
        for (int life = 0; life < lives; life++) {
            int nt = 1 + rng.nextInt(4);
            List<Uuid> topics = new ArrayList<>();
            Map<Uuid, Integer> counts = new HashMap<>();
            for (int t = 0; t < nt; t++) {
                Uuid id = new Uuid(rng.nextLong(), rng.nextLong());
                topics.add(id);
                counts.put(id, rng.nextInt(3) == 0 && t > 0 ? counts.get(topics.get(0)) : 1 + rng.nextInt(12));
            }
            SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
                @Override
                public int numPartitions(Uuid topic) {
                    return counts.getOrDefault(topic, -1);
                }

                @Override
                public Set<String> racksForPartition(Uuid topic, int partition) {
                    return Set.of();
                }
            };
            boolean homogeneous = rng.nextBoolean();
            Set<Uuid> all = new HashSet<>(topics);
            Map<String, Subscription> subs = new LinkedHashMap<>();
            Map<String, Map<Uuid, Set<Integer>>> current = new HashMap<>();
            int members = 1 + rng.nextInt(8);
            for (int m = 0; m < members; m++) {
                join(rng, subs, topics, homogeneous ? all : null, life);
            }
            for (int step = 0; step < stepsEach; step++) {
                int event = rng.nextInt(11);
                Map<String, Map<Uuid, Set<Integer>>> handed = current;
                switch (event) {
                    case 0 -> {
                        if (subs.size() > 1) {
                            String gone = new ArrayList<>(subs.keySet()).get(rng.nextInt(subs.size()));
                            subs.remove(gone);
                            current.remove(gone);
                        }
                    }
                    case 1 -> join(rng, subs, topics, homogeneous ? all : null, life);
                    case 7 -> {
                        if (!earlier.isEmpty()) {
                            String id = earlier.get(rng.nextInt(earlier.size()));
                            Optional<String> instance = rng.nextBoolean() ? Optional.of("j" + rng.nextInt(1000)) : Optional.empty();
                            if (!subs.containsKey(id) && subs.values().stream().noneMatch(x -> x.instanceId().equals(instance) && instance.isPresent())) {
                                subs.put(id, new Subscription(Optional.empty(), instance, homogeneous ? all : subset(rng, topics)));
                            }
                        }
                    }
                    case 2 -> {
                        Uuid t = topics.get(rng.nextInt(nt));
                        counts.put(t, Math.max(0, counts.get(t) + rng.nextInt(5) - 2));
                    }
                    case 3 -> handed = copies(current);
                    case 4 -> handed = swapped(rng, copies(current));
                    case 5 -> {
                        String who = new ArrayList<>(subs.keySet()).get(rng.nextInt(subs.size()));
                        Subscription s = subs.get(who);
                        subs.put(who, new Subscription(s.rackId(), s.instanceId(), homogeneous ? all : subset(rng, topics)));
                        homogeneous = false;
                    }
                    case 8 -> {
                        // A member's instance id changes under the same member id (the order
                        // an earlier computation gave is then not this one's).
                        String who = new ArrayList<>(subs.keySet()).get(rng.nextInt(subs.size()));
                        Subscription s = subs.get(who);
                        Optional<String> instance = Optional.of("k" + rng.nextInt(1000));
                        if (subs.values().stream().noneMatch(x -> x.instanceId().equals(instance))) {
                            subs.put(who, new Subscription(s.rackId(), instance, s.subscribedTopicIds()));
                        }
                    }
                    case 6 -> {
                        // The coordinator's members in another order.
                        List<String> ids = new ArrayList<>(subs.keySet());
                        Collections.shuffle(ids, rng);
                        Map<String, Subscription> again = new LinkedHashMap<>();
                        for (String id : ids) {
                            again.put(id, subs.get(id));
                        }
                        subs.clear();
                        subs.putAll(again);
                    }
                    default -> {
                        // Nothing changed: the same maps again.
                    }
                }
                Spec spec = new Spec(new LinkedHashMap<>(subs), handed);
                GroupAssignment got = shared.assign(spec, describer);
                GroupAssignment want = new BrokerCopartitionedAssignor().assign(spec, describer);
                computations++;
                for (Map.Entry<String, MemberAssignment> e : want.members().entrySet()) {
                    MemberAssignment g = got.members().get(e.getKey());
                    if (g == null || !g.partitions().equals(e.getValue().partitions())) {
                        fail("life " + life + " step " + step + " (event " + event + "), member " + e.getKey()
                                + ": the shared instance gives " + (g == null ? "nothing" : g.partitions())
                                + ", a fresh one " + e.getValue().partitions());
                    }
                }
                if (got.members().size() != want.members().size()) {
                    fail("life " + life + " step " + step + ": member counts differ");
                }
                // Most results are stored, as the coordinator stores them: a member whose target
                // is unchanged keeps its map object, the others get a replayed copy. Some are
                // dropped (a write that failed): the next computation is handed the old maps.
                if (rng.nextInt(8) != 0) {
                    Map<String, Map<Uuid, Set<Integer>>> next = new HashMap<>();
                    for (String id : subs.keySet()) {
                        Map<Uuid, Set<Integer>> target = got.members().get(id).partitions();
                        Map<Uuid, Set<Integer>> before = handed.get(id);
                        next.put(id, before != null && before.equals(target) ? before : replay(target));
                    }
                    current.clear();
                    current.putAll(next);
                }
            }
            earlier.addAll(subs.keySet());
        }
        return new int[] {computations, lives};
    }

    static void join(Random rng, Map<String, Subscription> subs, List<Uuid> topics, Set<Uuid> all, int life) {
        String id = "l" + life + "-" + new Uuid(rng.nextLong(), rng.nextLong());
        Optional<String> instance = rng.nextInt(4) == 0 ? Optional.of("i" + rng.nextInt(1000)) : Optional.empty();
        if (instance.isPresent() && subs.values().stream().anyMatch(s -> s.instanceId().equals(instance))) {
            return;
        }
        subs.put(id, new Subscription(Optional.empty(), instance, all != null ? all : subset(rng, topics)));
    }

    static Set<Uuid> subset(Random rng, List<Uuid> topics) {
        Set<Uuid> out = new HashSet<>();
        for (Uuid t : topics) {
            if (rng.nextInt(3) != 0) {
                out.add(t);
            }
        }
        return out;
    }

    /** A target as the coordinator replays its record: a new map of new sets of the same elements. */
    static Map<Uuid, Set<Integer>> replay(Map<Uuid, Set<Integer>> target) {
        Map<Uuid, Set<Integer>> out = new HashMap<>();
        target.forEach((t, ps) -> out.put(t, new HashSet<>(new ArrayList<>(ps))));
        return Collections.unmodifiableMap(out);
    }

    static Map<String, Map<Uuid, Set<Integer>>> copies(Map<String, Map<Uuid, Set<Integer>>> current) {
        Map<String, Map<Uuid, Set<Integer>>> out = new HashMap<>();
        current.forEach((m, a) -> out.put(m, replay(a)));
        return out;
    }

    /** Two members holding one topic swap one partition of it (new maps of the same sizes). */
    static Map<String, Map<Uuid, Set<Integer>>> swapped(Random rng, Map<String, Map<Uuid, Set<Integer>>> current) {
        List<String> ids = new ArrayList<>(current.keySet());
        Collections.shuffle(ids, rng);
        for (int i = 0; i < ids.size(); i++) {
            for (int j = i + 1; j < ids.size(); j++) {
                Map<Uuid, Set<Integer>> a = current.get(ids.get(i)), b = current.get(ids.get(j));
                for (Uuid t : new TreeSet<>(a.keySet())) {
                    if (b.containsKey(t) && !a.get(t).isEmpty() && !b.get(t).isEmpty()) {
                        int pa = a.get(t).iterator().next(), pb = b.get(t).iterator().next();
                        current.put(ids.get(i), swap(a, t, pa, pb));
                        current.put(ids.get(j), swap(b, t, pb, pa));
                        return current;
                    }
                }
            }
        }
        return current;
    }

    static Map<Uuid, Set<Integer>> swap(Map<Uuid, Set<Integer>> m, Uuid t, int out, int in) {
        Map<Uuid, Set<Integer>> c = new HashMap<>(m);
        Set<Integer> ps = new HashSet<>(m.get(t));
        ps.remove(out);
        ps.add(in);
        c.put(t, Collections.unmodifiableSet(ps));
        return Collections.unmodifiableMap(c);
    }

    static void fail(String why) {
        System.err.println("BrokerStateCheck: " + why);
        System.exit(1);
    }
}
