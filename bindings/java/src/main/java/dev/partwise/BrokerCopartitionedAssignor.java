// partwise's copartitioned assignor for the consumer group protocol of KIP-848: the broker-side
// plug-in (group.consumer.assignors). It adapts the group coordinator's view of a group to
// Copartitioned.assign, the placement every partwise implementation runs, and back.
package dev.partwise;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

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
 * <p>{@link SubscriptionType} spares reading every member's subscription in a homogeneous group;
 * the placement itself handles unequal subscriptions, and equal ones are one case of them.
 */
public final class BrokerCopartitionedAssignor implements ConsumerGroupPartitionAssignor {
    /** The name consumers select with {@code group.remote.assignor}. */
    public static final String NAME = CopartitionedAssignor.NAME;

    /**
     * What this instance knows of each member's current target (see {@link LastTargets});
     * shared by every group it serves.
     */
    private final LastTargets last = new LastTargets();

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
        // In a homogeneous group every member subscribes to the same topics (the coordinator
        // counts each subscribed name's members), so one subscription is read for all, as
        // Kafka's own assignors do; a member whose subscription differs even in size is read.
        boolean homogeneous = group.subscriptionType() == SubscriptionType.HOMOGENEOUS;
        int firstSize = -1;
        for (int m = 0; m < n; m++) {
            MemberSubscription sub = group.memberSubscription(ids[m]);
            instances[m] = sub.instanceId().orElse(null);
            Set<Uuid> mine = sub.subscribedTopicIds();
            if (homogeneous && m > 0 && mine.size() == firstSize) {
                subscribed[m] = subscribed[0];
                continue;
            }
            if (m == 0) {
                firstSize = mine.size();
            }
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
        int[] firstRead = n > 0 ? subscribed[0] : null;
        for (int m = 0; m < n; m++) {
            int[] ts = subscribed[m];
            if (m > 0 && ts == firstRead) {
                // The first member's, remapped once.
                subscribed[m] = subscribed[0];
                continue;
            }
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
        // of its partitions, so every partition held counts; the boxed sets are decoded only
        // for maps that hold neither what an earlier call read nor what it computed
        // (LastTargets), the others come unboxed from there.
        MemberAssignment[] current = new MemberAssignment[n];
        int[] start = new int[n + 1];
        boolean[] changed = new boolean[n];
        int[] units = new int[64];
        Held[] now = new Held[n];
        Kept[] kept = last.get(ids);
        for (int m = 0; m < n; m++) {
            current[m] = group.memberAssignment(ids[m]);
            now[m] = current[m] == null ? null : held(current[m].partitions(), kept[m]);
            units = current(pl, index, m, now[m], start, changed, units);
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
        GroupAssignment out = new GroupAssignment(targets(pl, ids, byId, current, changed, now));
        last.put(ids, kept, current, changed, now);
        return out;
    }

    /**
     * A member's current assignment unboxed: what this instance kept of it when the coordinator
     * hands the very map it read before (the coordinator never modifies one) or a map holding
     * exactly the target it computed ({@link Held#matches}), else read now.
     */
    private static Held held(Map<Uuid, Set<Integer>> current, Kept kept) {
        if (kept != null && (kept.seen == current || kept.held.matches(current))) {
            return kept.held;
        }
        return Held.of(current);
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

        /**
         * Whether {@code current} holds exactly these partitions: as many topics, each of them
         * with as many partitions, every one of them present. A set's size and its contains are
         * all this asks of the coordinator's sets (no iteration), and equal sizes with every
         * partition of this one present make two sets equal (these hold no repeats).
         */
        boolean matches(Map<Uuid, Set<Integer>> current) {
            if (current.size() != topics.length) {
                return false;
            }
            for (int i = 0; i < topics.length; i++) {
                Set<Integer> ps = current.get(topics[i]);
                int[] mine = partitions[i];
                if (ps == null || ps.size() != mine.length) {
                    return false;
                }
                for (int p : mine) {
                    if (!ps.contains(p)) {
                        return false;
                    }
                }
            }
            return true;
        }
    }

    /** A member's target as this instance knows it: its partitions, and the map it read them from (null for none). */
    record Kept(Map<Uuid, Set<Integer>> seen, Held held) {}

    /**
     * Each member's target as this instance left it, by member id (the coordinator's own id
     * strings, held weakly: a member the coordinator forgot is forgotten here by the garbage
     * collector): what it computed for the member, or, for a member whose target it left as
     * it was, that target and the coordinator's map of it.
     *
     * <p>The group coordinator hands an assignor a member's target object again, computation
     * after computation, as long as that member's target does not change (it writes a record,
     * replayed into a new object, only for a member whose target changed), and never modifies
     * one: such a map is known by its identity and not read again. After a computation that
     * changed many targets, the next one is handed new maps, replayed from the records of
     * what this instance computed: such a map is checked against the target kept
     * ({@link Held#matches}: a size a topic and one lookup a partition, no iteration of the
     * coordinator's sets) and, equal, not decoded. Any other map (another assignor's, another
     * broker's, a member this instance never assigned) is read whole. The placement is the
     * same either way: a kept target stands for a map only when the map holds exactly it.
     */
    static final class LastTargets {
        private final Map<String, Kept> map = new WeakHashMap<>();

        /** What is kept of each of {@code ids}, null where nothing is. */
        synchronized Kept[] get(String[] ids) {
            Kept[] out = new Kept[ids.length];
            for (int m = 0; m < ids.length; m++) {
                out[m] = map.get(ids[m]);
            }
            return out;
        }

        /**
         * After a computation: member m's target is {@code now[m]}, read from
         * {@code current[m]} when it did not change, computed otherwise.
         */
        synchronized void put(String[] ids, Kept[] before, MemberAssignment[] current, boolean[] changed, Held[] now) {
            for (int m = 0; m < ids.length; m++) {
                if (now[m] == null) {
                    map.remove(ids[m]);
                    continue;
                }
                Map<Uuid, Set<Integer>> seen = changed[m] ? null : current[m].partitions();
                Kept k = before[m];
                if (k == null || k.seen != seen || k.held != now[m]) {
                    map.put(ids[m], new Kept(seen, now[m]));
                }
            }
        }

        synchronized int size() {
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
            MemberAssignment[] current, boolean[] changed, Held[] now) {
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
        // ints[m][j]: the same, unboxed (the target kept in LastTargets).
        Integer[][][] parts = new Integer[n][][];
        int[][][] ints = new int[n][][];
        int[][] filled = new int[n][];
        for (int m = 0; m < n; m++) {
            if (held[m] != null) {
                parts[m] = new Integer[held[m].length][];
                ints[m] = new int[held[m].length][];
                filled[m] = new int[held[m].length];
                for (int j = 0; j < held[m].length; j++) {
                    parts[m][j] = new Integer[held[m][j]];
                    ints[m][j] = new int[held[m][j]];
                }
            }
        }
        for (int u = 0; u < pl.owner.length; u++) {
            int m = pl.owner[u];
            if (parts[m] != null) {
                int g = pl.unitGroup[u];
                int j = Arrays.binarySearch(pl.memberGroups[m], g);
                int p = u - pl.unitBase[g];
                ints[m][j][filled[m][j]] = p;
                parts[m][j][filled[m][j]++] = boxed[p];
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
            Uuid[] keptTopics = new Uuid[topicsHeld];
            int[][] keptPartitions = new int[topicsHeld][];
            int k = 0;
            for (int j = 0; j < gs.length; j++) {
                if (held[m][j] > 0) {
                    Set<Integer> set = Set.of(parts[m][j]);
                    for (int t : pl.groups[gs[j]]) {
                        byTopic.put(byId[t], set);
                        keptTopics[k] = byId[t];
                        keptPartitions[k++] = ints[m][j];
                    }
                }
            }
            out.put(ids[m], new Target(byTopic));
            now[m] = new Held(keptTopics, keptPartitions);
        }
        return out;
    }

    /** A HashMap or HashSet capacity that holds {@code k} entries without a resize. */
    private static int capacity(int k) {
        return (int) Math.ceil(k / 0.75) + 1;
    }
}
