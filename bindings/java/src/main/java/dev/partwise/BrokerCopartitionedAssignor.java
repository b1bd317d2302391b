// partwise's copartitioned assignor for the consumer group protocol of KIP-848: the broker-side
// plug-in (group.consumer.assignors). It adapts the group coordinator's view of a group to
// Copartitioned.assign, the placement every partwise implementation runs, and back.
package dev.partwise;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
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

    /** Partition numbers boxed once for every target this instance writes (see {@link Boxes}). */
    private final Boxes boxes = new Boxes();

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
        int most = 0;
        for (int c : partitions) {
            most = Math.max(most, c);
        }
        Integer[] box = boxes.upTo(most);
        Recall kept = last.get(ids);
        // The member order: from the ranks an earlier computation gave, when every member was
        // in it (then it is that order's restriction), else sorted.
        int[] order = kept.order(instances);
        boolean ties = false;
        if (order == null) {
            order = Copartitioned.memberOrder(instances, ids);
            for (int r = 1; r < n && !ties; r++) {
                int x = order[r - 1], y = order[r];
                ties = Copartitioned.memberCompare(instances[x], ids[x], instances[y], ids[y]) == 0;
            }
        }
        Copartitioned.Placement pl = new Copartitioned.Placement(partitions, subscribed, order);
        // What each member holds now, as units (one entry per partition), to tell afterwards
        // whether its target changed; a member whose current assignment names a partition
        // outside every unit cannot keep it as it is. A unit stays with the member holding most
        // of its partitions, so every partition held counts; the boxed sets are decoded only
        // for maps that hold neither what an earlier call read nor what it computed
        // (LastTargets), the others come unboxed from there.
        // Each member's map, read once: the coordinator's assignment objects are not touched
        // again (in a large group each touch is a cache miss).
        @SuppressWarnings({"unchecked", "rawtypes"})
        Map<Uuid, Set<Integer>>[] current = new Map[n];
        int[] start = new int[n + 1];
        boolean[] changed = new boolean[n];
        int[] units = new int[64];
        Held[] now = new Held[n];
        TopicIndex topicsOf = new TopicIndex(index);
        Groups wholeGroups = new Groups(pl.groups.length);
        long[] count = new long[n];
        for (int m = 0; m < n; m++) {
            MemberAssignment a = group.memberAssignment(ids[m]);
            current[m] = a == null ? null : a.partitions();
            now[m] = current[m] == null ? null : held(current[m], kept.seen[m], kept.held[m], box);
            units = current(pl, topicsOf, wholeGroups, m, now[m], start, count, changed, units);
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
            if (count[m] != target[m]) {
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
        GroupAssignment out = new GroupAssignment(targets(pl, ids, byId, current, changed, now, box));
        last.put(ids, kept.entries, current, changed, now, new Generation(ties), pl.rank, instances);
        return out;
    }

    /**
     * A member's current assignment unboxed: what this instance kept of it when the coordinator
     * hands the very map it read before (the coordinator never modifies one) or a map holding
     * exactly the target it computed ({@link Held#matches}), else read now.
     */
    private static Held held(Map<Uuid, Set<Integer>> current, Object seen, Held kept, Integer[] box) {
        // The identity first: it touches nothing of the coordinator's map.
        if (kept != null && seen == current) {
            return kept;
        }
        if (current.isEmpty()) {
            return Held.EMPTY;
        }
        if (kept != null && kept.matches(current, box)) {
            return kept;
        }
        return Held.of(current);
    }

    /**
     * Reads member m's current assignment into the placement (its claims), into
     * {@code units[start[m] .. start[m + 1]]} (the units it holds partitions of, a unit once
     * per partition, or once when it holds the whole unit) and into {@code count[m]} (the
     * partitions it holds in units); marks it changed when it holds anything outside every
     * unit. Returns {@code units}, grown if needed.
     */
    private static int[] current(Copartitioned.Placement pl, TopicIndex index, Groups seen, int m, Held held,
            int[] start, long[] count, boolean[] changed, int[] units) {
        int size = start[m];
        if (held == null) {
            changed[m] = true;
            start[m + 1] = size;
            return units;
        }
        int[] ts = index.of(held.topics);
        if (seen.whole(pl, m, ts, held)) {
            // Every topic of each of its groups, with one array of partitions: whole units
            // (a target this instance computed), told once a unit.
            for (int k = 0; k < seen.count; k++) {
                int g = seen.groups[k];
                int[] ps = held.partitions[seen.first[g]];
                int t = ts[seen.first[g]];
                int topics = pl.groups[g].length;
                if (size + ps.length > units.length) {
                    units = Arrays.copyOf(units, Math.max(2 * units.length, size + ps.length));
                }
                for (int p : ps) {
                    int u = pl.unitOf(t, p);
                    if (u < 0) {
                        changed[m] = true;
                    } else {
                        pl.ownUnit(m, u);
                        units[size++] = u;
                        count[m] += topics;
                    }
                }
            }
            start[m + 1] = size;
            return units;
        }
        for (int i = 0; i < held.topics.length; i++) {
            int t = ts[i];
            int[] ps = held.partitions[i];
            if (t < 0 || ps.length == 0) {
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
                    count[m]++;
                }
            }
        }
        start[m + 1] = size;
        return units;
    }

    /** Which of the placement's groups a current assignment covers whole (see {@link #whole}). */
    private static final class Groups {
        private final int[] stamp;
        private final int[] topics;
        /** first[g]: the index in the assignment of group g's first topic. */
        final int[] first;
        /** groups[0 .. count]: the groups the assignment names, as first met. */
        final int[] groups;
        int count;

        Groups(int ng) {
            stamp = new int[ng];
            topics = new int[ng];
            first = new int[ng];
            groups = new int[ng];
        }

        /**
         * Whether member m's assignment names, for each group it names, every topic of the
         * group and one array of partitions for all of them (nonempty): then it holds those
         * partitions' units whole. Fills {@link #groups} and {@link #first}.
         */
        boolean whole(Copartitioned.Placement pl, int m, int[] ts, Held held) {
            count = 0;
            for (int i = 0; i < ts.length; i++) {
                int t = ts[i];
                int g = t < 0 ? -1 : pl.groupOfTopic(t);
                if (g < 0 || held.partitions[i].length == 0) {
                    return false;
                }
                if (stamp[g] != m + 1) {
                    stamp[g] = m + 1;
                    topics[g] = 1;
                    first[g] = i;
                    groups[count++] = g;
                } else if (held.partitions[i] != held.partitions[first[g]]) {
                    return false;
                } else {
                    topics[g]++;
                }
            }
            for (int k = 0; k < count; k++) {
                if (topics[groups[k]] != pl.groups[groups[k]].length) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * Topic ids to the placement's topic numbers, an array of ids at a time; the targets this
     * instance computes share one array of ids among the members holding the same topics, so
     * in a group where most members hold every topic it is looked up once.
     */
    private static final class TopicIndex {
        private final Map<Uuid, Integer> index;
        private Uuid[] lastTopics;
        private int[] lastNumbers;

        TopicIndex(Map<Uuid, Integer> index) {
            this.index = index;
        }

        /** Each of {@code topics}' number, -1 for a topic the placement does not have. */
        int[] of(Uuid[] topics) {
            if (topics != lastTopics) {
                int[] out = new int[topics.length];
                for (int i = 0; i < topics.length; i++) {
                    Integer t = index.get(topics[i]);
                    out[i] = t == null ? -1 : t;
                }
                lastTopics = topics;
                lastNumbers = out;
            }
            return lastNumbers;
        }
    }

    /** A current assignment unboxed: partitions[i] are the partitions of topics[i]. */
    record Held(Uuid[] topics, int[][] partitions) {
        static final Held EMPTY = new Held(new Uuid[0], new int[0][]);

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
         *
         * <p>Each partition is looked up by the very object this instance wrote it as
         * ({@link Boxes}): the coordinator's copy of a target it wrote holds those objects, and
         * a hash set that meets the object it is asked for answers on identity, without
         * reading the element it holds. Any other set answers by equality, as ever.
         */
        boolean matches(Map<Uuid, Set<Integer>> current, Integer[] box) {
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
                    if (!ps.contains(p >= 0 && p < box.length ? box[p] : Integer.valueOf(p))) {
                        return false;
                    }
                }
            }
            return true;
        }
    }

    /**
     * A member's target as this instance knows it: its partitions, and the map it read them
     * from (null for none). Changed only under the lock of {@link LastTargets}.
     */
    static final class Kept {
        Map<Uuid, Set<Integer>> seen;
        Held held;
        /** The computation that last placed this member, its rank there and its instance id. */
        Generation generation;
        int rank;
        String instance;

        Kept(Map<Uuid, Set<Integer>> seen, Held held, Generation generation, int rank, String instance) {
            this.seen = seen;
            this.held = held;
            this.generation = generation;
            this.rank = rank;
            this.instance = instance;
        }
    }

    /**
     * One computation, known by its identity, as the members it placed remember it: whether
     * two of its members compared equal (then their order was the coordinator's order of the
     * ids, which a later computation need not repeat, so its ranks do not give the order).
     */
    static final class Generation {
        final boolean ties;

        Generation(boolean ties) {
            this.ties = ties;
        }
    }

    /**
     * What {@link LastTargets#get} copied out for each member (nulls and -1 where nothing is
     * kept): its entry, the coordinator's map it read, its target, and the computation that
     * last placed it with its rank and instance id there.
     */
    static final class Recall {
        final Kept[] entries;
        final Object[] seen;
        final Held[] held;
        final Generation[] generation;
        final int[] rank;
        final String[] instance;

        Recall(int n) {
            entries = new Kept[n];
            seen = new Object[n];
            held = new Held[n];
            generation = new Generation[n];
            rank = new int[n];
            instance = new String[n];
        }

        /**
         * The members in {@link Copartitioned#memberCompare} order, from their ranks, when
         * every member was placed by one earlier computation whose order had no ties, with
         * the instance id it has now: that order, restricted to these members, is theirs
         * (the comparison looks at the instance and member ids alone). Null otherwise.
         */
        int[] order(String[] instances) {
            int n = entries.length;
            if (n == 0 || generation[0] == null || generation[0].ties) {
                return null;
            }
            Generation g = generation[0];
            int top = 0;
            for (int m = 0; m < n; m++) {
                if (generation[m] != g || !java.util.Objects.equals(instance[m], instances[m]) || rank[m] < 0) {
                    return null;
                }
                top = Math.max(top, rank[m]);
            }
            int[] at = new int[top + 1];
            Arrays.fill(at, -1);
            for (int m = 0; m < n; m++) {
                if (at[rank[m]] >= 0) {
                    return null;
                }
                at[rank[m]] = m;
            }
            int[] order = new int[n];
            int r = 0;
            for (int m : at) {
                if (m >= 0) {
                    order[r++] = m;
                }
            }
            return order;
        }
    }

    /**
     * Each member's target as this instance left it, by member id (the coordinator's own id
     * strings, held weakly: a member the coordinator forgot is forgotten here by the garbage
     * collector): what it computed for the member, or, for a member whose target it left as
     * it was, that target and the coordinator's map of it; and the member's rank in that
     * computation.
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

        /** What is kept of each of {@code ids}, copied out under the lock. */
        synchronized Recall get(String[] ids) {
            Recall out = new Recall(ids.length);
            for (int m = 0; m < ids.length; m++) {
                Kept k = map.get(ids[m]);
                if (k == null) {
                    out.rank[m] = -1;
                } else {
                    out.entries[m] = k;
                    out.seen[m] = k.seen;
                    out.held[m] = k.held;
                    out.generation[m] = k.generation;
                    out.rank[m] = k.rank;
                    out.instance[m] = k.instance;
                }
            }
            return out;
        }

        /**
         * After a computation: member m's target is {@code now[m]}, read from
         * {@code current[m]} when it did not change, computed otherwise; its rank
         * {@code rank[m]} in {@code generation}; {@code entries} are what {@link #get} gave.
         */
        synchronized void put(String[] ids, Kept[] entries, Map<Uuid, Set<Integer>>[] current, boolean[] changed, Held[] now,
                Generation generation, int[] rank, String[] instances) {
            for (int m = 0; m < ids.length; m++) {
                if (now[m] == null) {
                    map.remove(ids[m]);
                    continue;
                }
                Map<Uuid, Set<Integer>> seen = changed[m] ? null : current[m];
                // An entry another computation dropped meanwhile is set to no effect: whatever
                // an entry holds, its map (if any) holds its target.
                Kept k = entries[m];
                if (k == null) {
                    map.put(ids[m], new Kept(seen, now[m], generation, rank[m], instances[m]));
                } else {
                    k.seen = seen;
                    k.held = now[m];
                    k.generation = generation;
                    k.rank = rank[m];
                    k.instance = instances[m];
                }
            }
        }

        synchronized int size() {
            return map.size();
        }
    }

    /**
     * Partition numbers boxed once: the Integer objects of every target this instance writes
     * ({@code upTo(n)[p]} is p), so that a computation does not box its partitions anew and
     * the coordinator's copies of the targets hold objects {@link Held#matches} finds by
     * identity. Grown to the largest partition count met, up to {@link #MAX}; published
     * whole (a reader sees an array filled before it was published).
     */
    static final class Boxes {
        /** Partitions beyond this are boxed per call (Integer.valueOf). */
        static final int MAX = 1 << 20;
        private volatile Integer[] boxes = new Integer[0];

        Integer[] upTo(int n) {
            Integer[] b = boxes;
            if (b.length >= Math.min(n, MAX)) {
                return b;
            }
            synchronized (this) {
                b = boxes;
                if (b.length < Math.min(n, MAX)) {
                    int size = Math.min(MAX, Math.max(n, 2 * b.length));
                    Integer[] grown = Arrays.copyOf(b, size);
                    for (int i = b.length; i < size; i++) {
                        grown[i] = i;
                    }
                    boxes = grown;
                    b = grown;
                }
            }
            return b;
        }
    }

    /**
     * Each member's target: unit u of group g is partition u - unitBase[g] of every topic of g.
     * A member whose target is what it has keeps the coordinator's own map (as Kafka's
     * assignors do); for the others, a {@link TopicSets} where a member's partitions of one
     * group are one immutable set, shared by the group's topics (they hold the same partitions
     * of each).
     */
    private static Map<String, MemberAssignment> targets(Copartitioned.Placement pl, String[] ids, Uuid[] byId,
            Map<Uuid, Set<Integer>>[] current, boolean[] changed, Held[] now, Integer[] box) {
        int n = ids.length;
        // held[m][j]: member m's units of its j-th group (pl.memberGroups[m][j]).
        int[][] held = new int[n][];
        for (int m = 0; m < n; m++) {
            held[m] = changed[m] ? new int[pl.memberGroups[m].length] : null;
        }
        for (int u = 0; u < pl.owner.length; u++) {
            int m = pl.owner[u];
            if (held[m] != null) {
                held[m][Arrays.binarySearch(pl.memberGroups[m], pl.unitGroup[u])]++;
            }
        }
        // ints[m][j]: member m's partitions of its j-th group, in unit order (the target kept
        // in LastTargets, boxed below).
        int[][][] ints = new int[n][][];
        int[][] filled = new int[n][];
        for (int m = 0; m < n; m++) {
            if (held[m] != null) {
                ints[m] = new int[held[m].length][];
                filled[m] = new int[held[m].length];
                for (int j = 0; j < held[m].length; j++) {
                    ints[m][j] = new int[held[m][j]];
                }
            }
        }
        for (int u = 0; u < pl.owner.length; u++) {
            int m = pl.owner[u];
            if (ints[m] != null) {
                int g = pl.unitGroup[u];
                int j = Arrays.binarySearch(pl.memberGroups[m], g);
                ints[m][j][filled[m][j]++] = u - pl.unitBase[g];
            }
        }
        int[] groupOfTopic = new int[byId.length];
        for (int g = 0; g < pl.groups.length; g++) {
            for (int t : pl.groups[g]) {
                groupOfTopic[t] = g;
            }
        }
        @SuppressWarnings({"unchecked", "rawtypes"})
        Set<Integer>[] groupSets = new Set[pl.groups.length];
        Map<TopicList, Uuid[]> sharedKeys = new HashMap<>();
        Map<String, MemberAssignment> out = new HashMap<>(capacity(n));
        for (int m = 0; m < n; m++) {
            if (!changed[m]) {
                out.put(ids[m], new Target(current[m]));
                continue;
            }
            int[] gs = pl.memberGroups[m];
            int topicsHeld = 0;
            for (int j = 0; j < gs.length; j++) {
                if (held[m][j] > 0) {
                    topicsHeld += pl.groups[gs[j]].length;
                }
            }
            // The member's topics in id order (topic indices ascend with the ids), each with
            // its group's partitions.
            int[] ts = new int[topicsHeld];
            int k = 0;
            for (int j = 0; j < gs.length; j++) {
                if (held[m][j] > 0) {
                    for (int t : pl.groups[gs[j]]) {
                        ts[k++] = t;
                    }
                }
            }
            Arrays.sort(ts);
            // Members holding the same topics share one array of them.
            Uuid[] keys = sharedKeys.get(new TopicList(ts));
            boolean fresh = keys == null;
            if (fresh) {
                keys = new Uuid[topicsHeld];
                sharedKeys.put(new TopicList(ts), keys);
            }
            @SuppressWarnings({"unchecked", "rawtypes"})
            Set<Integer>[] sets = new Set[topicsHeld];
            int[][] keptPartitions = new int[topicsHeld][];
            Set<Integer>[] ofGroup = groupSets;
            for (int j = 0; j < gs.length; j++) {
                ofGroup[gs[j]] = held[m][j] > 0 ? Set.of(boxed(ints[m][j], box)) : null;
            }
            for (int i = 0; i < topicsHeld; i++) {
                int t = ts[i];
                int g = groupOfTopic[t];
                if (fresh) {
                    keys[i] = byId[t];
                }
                sets[i] = ofGroup[g];
                keptPartitions[i] = ints[m][Arrays.binarySearch(gs, g)];
            }
            out.put(ids[m], new Target(new TopicSets(keys, sets)));
            now[m] = new Held(keys, keptPartitions);
        }
        return out;
    }

    /** Topic numbers, ascending, as a key. */
    private record TopicList(int[] topics) {
        @Override
        public boolean equals(Object o) {
            return o instanceof TopicList k && Arrays.equals(k.topics, topics);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(topics);
        }

        @Override
        public String toString() {
            return Arrays.toString(topics);
        }
    }

    /**
     * A member's target partitions by topic: its topics in id order, each with its
     * partitions (the topics of one co-partition group share one set). Immutable; a lookup is
     * a binary search. Built in one allocation beside the sets, where a HashMap would take a
     * node a topic: a co-partitioned target names every topic of a member's groups.
     */
    static final class TopicSets extends AbstractMap<Uuid, Set<Integer>> {
        private final Uuid[] keys;
        private final Set<Integer>[] sets;

        TopicSets(Uuid[] keys, Set<Integer>[] sets) {
            this.keys = keys;
            this.sets = sets;
        }

        @Override
        public int size() {
            return keys.length;
        }

        @Override
        public boolean containsKey(Object k) {
            return k instanceof Uuid u && Arrays.binarySearch(keys, u) >= 0;
        }

        @Override
        public Set<Integer> get(Object k) {
            if (!(k instanceof Uuid u)) {
                return null;
            }
            int i = Arrays.binarySearch(keys, u);
            return i >= 0 ? sets[i] : null;
        }

        @Override
        public Set<Map.Entry<Uuid, Set<Integer>>> entrySet() {
            return new AbstractSet<>() {
                @Override
                public int size() {
                    return keys.length;
                }

                @Override
                public Iterator<Map.Entry<Uuid, Set<Integer>>> iterator() {
                    return new Iterator<>() {
                        private int i;

                        @Override
                        public boolean hasNext() {
                            return i < keys.length;
                        }

                        @Override
                        public Map.Entry<Uuid, Set<Integer>> next() {
                            if (i >= keys.length) {
                                throw new NoSuchElementException();
                            }
                            Map.Entry<Uuid, Set<Integer>> e = new SimpleImmutableEntry<>(keys[i], sets[i]);
                            i++;
                            return e;
                        }
                    };
                }
            };
        }
    }

    /** {@code ps} as the instance's boxes ({@link Boxes}). */
    private static Integer[] boxed(int[] ps, Integer[] box) {
        Integer[] out = new Integer[ps.length];
        for (int i = 0; i < ps.length; i++) {
            int p = ps[i];
            out[i] = p < box.length ? box[p] : Integer.valueOf(p);
        }
        return out;
    }

    /** A HashMap or HashSet capacity that holds {@code k} entries without a resize. */
    private static int capacity(int k) {
        return (int) Math.ceil(k / 0.75) + 1;
    }
}
