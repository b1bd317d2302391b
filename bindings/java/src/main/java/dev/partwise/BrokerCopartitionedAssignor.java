// partwise's copartitioned assignor for the consumer group protocol of KIP-848: the broker-side
// plug-in (group.consumer.assignors). It adapts the group coordinator's view of a group to
// Copartitioned.assign, the placement every partwise implementation runs, and back.
package dev.partwise;

import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * Keeps partition p of every co-partitioned topic in one consumer of a consumer-protocol group
 * ({@code group.protocol=consumer}): install it on the brokers with
 * {@code group.consumer.assignors=uniform,range,dev.partwise.BrokerCopartitionedAssignor}
 * (the jar on the broker's class path) and select it in the consumer with
 * {@code group.remote.assignor=copartitioned}.
 *
 * <p>It runs the placement of {@link Copartitioned#assign}, that of {@link CopartitionedAssignor} and of
 * partwise's Rust leader: the same units (topics with the same partition count and the same
 * subscribers, partition p of each), the same stickiness (a unit stays with the member whose
 * current target assignment holds most of its partitions) and the same member order (instance
 * id, then member id). What differs is what the coordinator gives an assignor:
 *
 * <ul>
 *   <li>Topics are known by id, not by name, so they are ordered by {@link Uuid#compareTo}
 *       where the other implementations order them by name. Topic order decides the order of
 *       the co-partition groups, hence the order in which unowned units are handed out and
 *       which group's unit a rebalancing move takes first: with several co-partition groups,
 *       ties between equally loaded members can break differently from a classic group of the
 *       same members, and with unequal subscriptions that can change how many units a member
 *       ends with. Which topics form a unit, and that units go whole, do not change; with the
 *       topic ids in the names' order the result is the Rust leader's exactly (the vectors).
 *   <li>The previous generation is the coordinator's current target assignment
 *       ({@link GroupSpec#memberAssignment}), not what members report owning; a target
 *       assignment never gives a partition twice, so the "claimed twice" tie-break of the
 *       classic path never applies.
 *   <li>There is no user data: the co-partition groups the classic leader sends in each
 *       assignment do not exist in this protocol.
 *   <li>Racks ({@link MemberSubscription#rackId}) are ignored, as by every partwise assignor.
 * </ul>
 *
 * <p>{@link org.apache.kafka.coordinator.group.api.assignor.SubscriptionType} is not read: the
 * placement handles unequal subscriptions itself, and with equal ones it is one case of them.
 */
public final class BrokerCopartitionedAssignor implements ConsumerGroupPartitionAssignor {
    /** The name consumers select with {@code group.remote.assignor}. */
    public static final String NAME = CopartitionedAssignor.NAME;

    /** Current assignments already read (see {@link ReadCache}); shared by every group this instance serves. */
    private final ReadCache reads = new ReadCache();

    /** A member's target partitions, by topic id. */
    private record Target(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec group, SubscribedTopicDescriber topics) throws PartitionAssignorException {
        String[] ids = group.memberIds().toArray(new String[0]);
        int n = ids.length;
        // One pass over the subscriptions (the coordinator's may resolve topic names on each
        // pass): each topic gets a number as first seen, then the numbers are mapped to the
        // placement's topic order, the Uuid order. numPartitions is -1 for a topic the metadata
        // no longer has: its subscriptions are ignored.
        Map<Uuid, Integer> seen = new HashMap<>();
        List<Uuid> seenIds = new ArrayList<>();
        List<Integer> seenCounts = new ArrayList<>();
        int[][] subscribed = new int[n][];
        String[] instances = new String[n];
        for (int m = 0; m < n; m++) {
            MemberSubscription sub = group.memberSubscription(ids[m]);
            Set<Uuid> mine = sub.subscribedTopicIds();
            int[] ts = new int[mine.size()];
            int c = 0;
            for (Uuid t : mine) {
                Integer i = seen.get(t);
                if (i == null) {
                    i = seenIds.size();
                    seen.put(t, i);
                    seenIds.add(t);
                    seenCounts.add(topics.numPartitions(t));
                }
                ts[c++] = i;
            }
            subscribed[m] = c == ts.length ? ts : Arrays.copyOf(ts, c);
            instances[m] = sub.instanceId().orElse(null);
        }
        List<Uuid> known = new ArrayList<>();
        for (int i = 0; i < seenIds.size(); i++) {
            if (seenCounts.get(i) >= 0) {
                known.add(seenIds.get(i));
            }
        }
        Uuid[] byId = known.toArray(new Uuid[0]);
        Arrays.sort(byId);
        int[] partitions = new int[byId.length];
        int[] topicOf = new int[seenIds.size()];
        Arrays.fill(topicOf, -1);
        Map<Uuid, Integer> index = new HashMap<>();
        for (int t = 0; t < byId.length; t++) {
            int i = seen.get(byId[t]);
            topicOf[i] = t;
            partitions[t] = seenCounts.get(i);
            index.put(byId[t], t);
        }
        for (int m = 0; m < n; m++) {
            int[] ts = subscribed[m];
            int c = 0;
            for (int i : ts) {
                if (topicOf[i] >= 0) {
                    ts[c++] = topicOf[i];
                }
            }
            if (c < ts.length) {
                subscribed[m] = Arrays.copyOf(ts, c);
            }
        }
        int[] order = Copartitioned.memberOrder(n, (x, y) -> Copartitioned.memberCompare(
                instances[x], ids[x], instances[y], ids[y]));
        Copartitioned.Placement pl = new Copartitioned.Placement(partitions, subscribed, order);
        // What each member holds now, as units (one entry per partition), to tell afterwards
        // whether its target changed; a member whose current assignment names a partition
        // outside every unit cannot keep it as it is. A unit stays with the member holding most
        // of its partitions, so every partition held counts; the boxed sets are read only for
        // maps no earlier call read (ReadCache), the others come unboxed from there.
        MemberAssignment[] current = new MemberAssignment[n];
        int[] start = new int[n + 1];
        boolean[] changed = new boolean[n];
        int[] units = new int[64];
        reads.expunge();
        for (int m = 0; m < n; m++) {
            current[m] = group.memberAssignment(ids[m]);
            Held held = current[m] == null ? null : reads.held(current[m].partitions());
            units = current(pl, index, m, held, start, changed, units);
        }
        pl.place();
        // Unchanged: every partition it holds is in a unit it keeps, and it holds as many
        // partitions as its units have.
        long[] target = new long[n];
        for (int u = 0; u < pl.owner.length; u++) {
            target[pl.owner[u]] += pl.groups[pl.unitGroup[u]].length;
        }
        for (int m = 0; m < n; m++) {
            if (changed[m]) {
                continue;
            }
            if (start[m + 1] - start[m] != target[m]) {
                changed[m] = true;
                continue;
            }
            for (int i = start[m]; i < start[m + 1]; i++) {
                if (pl.owner[units[i]] != m) {
                    changed[m] = true;
                    break;
                }
            }
        }
        return new GroupAssignment(targets(pl, ids, byId, current, changed));
    }

    /**
     * Reads member m's current assignment into the placement (its claims) and into
     * {@code units[start[m] .. start[m + 1]]} (the unit of each partition it holds); marks it
     * changed when it holds anything outside every unit. Returns {@code units}, grown if needed.
     */
    private static int[] current(Copartitioned.Placement pl, Map<Uuid, Integer> index, int m, Held held,
            int[] start, boolean[] changed, int[] units) {
        int size = start[m];
        if (held == null) {
            changed[m] = true;
            start[m + 1] = size;
            return units;
        }
        for (int i = 0; i < held.topics.length; i++) {
            Integer t = index.get(held.topics[i]);
            int[] ps = held.partitions[i];
            if (t == null || ps.length == 0) {
                changed[m] = true;
                continue;
            }
            if (size + ps.length > units.length) {
                units = Arrays.copyOf(units, Math.max(2 * units.length, size + ps.length));
            }
            for (int p : ps) {
                pl.own(m, t, p);
                int u = pl.unitOf(t, p);
                if (u < 0) {
                    changed[m] = true;
                } else {
                    units[size++] = u;
                }
            }
        }
        start[m + 1] = size;
        return units;
    }

    /** A current assignment unboxed: partitions[i] are the partitions of topics[i]. */
    record Held(Uuid[] topics, int[][] partitions) {
        static Held of(Map<Uuid, Set<Integer>> current) {
            Uuid[] topics = new Uuid[current.size()];
            int[][] partitions = new int[topics.length][];
            int i = 0;
            for (Map.Entry<Uuid, Set<Integer>> e : current.entrySet()) {
                topics[i] = e.getKey();
                int[] ps = new int[e.getValue().size()];
                int c = 0;
                for (int p : e.getValue()) {
                    ps[c++] = p;
                }
                partitions[i++] = c == ps.length ? ps : Arrays.copyOf(ps, c);
            }
            return new Held(topics, partitions);
        }
    }

    /**
     * The current assignments this assignor has already read, by the identity of the map the
     * coordinator hands it, held weakly. The group coordinator keeps a member's target
     * assignment object from one computation to the next as long as the member's target does
     * not change (it writes a record, and replays it into a new object, only for members whose
     * target changed), and never modifies one. So after a leave or a join, most members'
     * current assignments are the very maps an earlier call read: their partitions are taken
     * from here, unboxed, and only the members the last computations changed are read anew.
     * A map read once and dropped by the coordinator is dropped from here by the garbage
     * collector. The placement is the same either way: an entry is what its map holds.
     */
    static final class ReadCache {
        /** A weak key compared by the identity of its referent. */
        private static final class Key extends WeakReference<Object> {
            private final int hash;

            Key(Object o, ReferenceQueue<Object> queue) {
                super(o, queue);
                hash = System.identityHashCode(o);
            }

            @Override
            public int hashCode() {
                return hash;
            }

            @Override
            public boolean equals(Object x) {
                if (this == x) {
                    return true;
                }
                Object a = get();
                return a != null && x instanceof Key k && a == k.get();
            }
        }

        private final ConcurrentHashMap<Key, Held> map = new ConcurrentHashMap<>();
        private final ReferenceQueue<Object> queue = new ReferenceQueue<>();

        /** {@code current} unboxed, from an earlier read of the same map or read now. */
        Held held(Map<Uuid, Set<Integer>> current) {
            Held h = map.get(new Key(current, null));
            if (h == null) {
                h = Held.of(current);
                map.put(new Key(current, queue), h);
            }
            return h;
        }

        /** Forgets the maps the garbage collector has cleared. */
        void expunge() {
            for (Reference<?> r; (r = queue.poll()) != null;) {
                map.remove(r);
            }
        }

        int size() {
            return map.size();
        }
    }

    /**
     * Each member's target: unit u of group g is partition u - unitBase[g] of every topic of g.
     * A member whose target is what it has keeps the coordinator's own map (as Kafka's
     * assignors do); for the others, a member's partitions of one group are one immutable set,
     * shared by the group's topics (they hold the same partitions of each), of partition numbers
     * boxed once per call.
     */
    private static Map<String, MemberAssignment> targets(Copartitioned.Placement pl, String[] ids, Uuid[] byId,
            MemberAssignment[] current, boolean[] changed) {
        int n = ids.length;
        // held[m][j]: member m's units of its j-th group (pl.memberGroups[m][j]).
        int[][] held = new int[n][];
        for (int m = 0; m < n; m++) {
            held[m] = changed[m] ? new int[pl.memberGroups[m].length] : null;
        }
        int most = 0;
        for (int u = 0; u < pl.owner.length; u++) {
            int m = pl.owner[u];
            if (held[m] != null) {
                held[m][Arrays.binarySearch(pl.memberGroups[m], pl.unitGroup[u])]++;
                int g = pl.unitGroup[u];
                most = Math.max(most, u - pl.unitBase[g] + 1);
            }
        }
        Integer[] boxed = new Integer[most];
        for (int i = 0; i < most; i++) {
            boxed[i] = i;
        }
        // partitions[m][j]: member m's partitions of its j-th group, filled in unit order.
        Integer[][][] parts = new Integer[n][][];
        int[][] filled = new int[n][];
        for (int m = 0; m < n; m++) {
            if (held[m] != null) {
                parts[m] = new Integer[held[m].length][];
                filled[m] = new int[held[m].length];
                for (int j = 0; j < held[m].length; j++) {
                    parts[m][j] = new Integer[held[m][j]];
                }
            }
        }
        for (int u = 0; u < pl.owner.length; u++) {
            int m = pl.owner[u];
            if (parts[m] != null) {
                int g = pl.unitGroup[u];
                int j = Arrays.binarySearch(pl.memberGroups[m], g);
                parts[m][j][filled[m][j]++] = boxed[u - pl.unitBase[g]];
            }
        }
        Map<String, MemberAssignment> out = new HashMap<>(capacity(n));
        for (int m = 0; m < n; m++) {
            if (!changed[m]) {
                out.put(ids[m], new Target(current[m].partitions()));
                continue;
            }
            int[] gs = pl.memberGroups[m];
            int topicsHeld = 0;
            for (int j = 0; j < gs.length; j++) {
                if (held[m][j] > 0) {
                    topicsHeld += pl.groups[gs[j]].length;
                }
            }
            Map<Uuid, Set<Integer>> byTopic = new HashMap<>(capacity(topicsHeld));
            for (int j = 0; j < gs.length; j++) {
                if (held[m][j] > 0) {
                    Set<Integer> set = Set.of(parts[m][j]);
                    for (int t : pl.groups[gs[j]]) {
                        byTopic.put(byId[t], set);
                    }
                }
            }
            out.put(ids[m], new Target(byTopic));
        }
        return out;
    }

    /** A HashMap or HashSet capacity that holds {@code k} entries without a resize. */
    private static int capacity(int k) {
        return (int) Math.ceil(k / 0.75) + 1;
    }
}
