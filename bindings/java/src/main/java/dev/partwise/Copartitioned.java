// The co-partitioned placement, ported from the Rust core
// (crates/partwise/src/assign/copartitioned.rs, as partwise-group's leader runs it), and the
// unit-group user data (crates/partwise-wire/src/consumer.rs encode_unit_groups). The
// consistency vectors in tests/vectors/copartitioned/ hold the two to the same output.
package dev.partwise;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import org.apache.kafka.common.TopicPartition;

/**
 * The placement of {@link CopartitionedAssignor}, with no Kafka client state: members,
 * partition counts in, each member's partitions and the unit-group user data out.
 *
 * <p>Each generation it (1) keeps every unit with its previous owner (the member that owned
 * most of the unit's partitions, ties to the member sorted first) if that member still
 * subscribes; (2) hands the other units, in unit order, to the least-loaded subscriber;
 * (3) moves units from the most- to the least-loaded member while that strictly narrows the
 * gap. Every choice is ordered by (load, member rank, unit), ranks in Java's
 * {@code AbstractPartitionAssignor.MemberInfo} order.
 */
public final class Copartitioned {
    private Copartitioned() {}

    private static final byte[] UNITS_MAGIC = {'p', 'w', 'u', 0};
    private static final int NONE = Integer.MAX_VALUE;

    /** One member of the group, as the leader sees it. */
    public record Member(String id, String instanceId, List<String> topics, List<TopicPartition> owned) {}

    /** Each member's partitions (by topic name, then partition) and every member's user data. */
    public record Result(Map<String, List<TopicPartition>> partitions, byte[] userData) {}

    /**
     * Java's String order is UTF-16 code units, the Rust leader's topic map is ordered by
     * code point (UTF-8 bytes): topic indices and unit groups follow the latter.
     */
    static int codePointCompare(String a, String b) {
        int i = 0, j = 0;
        while (i < a.length() && j < b.length()) {
            int x = a.codePointAt(i), y = b.codePointAt(j);
            if (x != y) {
                return Integer.compare(x, y);
            }
            i += Character.charCount(x);
            j += Character.charCount(y);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }

    /** Members with a {@code group.instance.id} first, by it, then the others by member id. */
    static int memberCompare(Member a, Member b) {
        return memberCompare(a.instanceId(), a.id(), b.instanceId(), b.id());
    }

    /** {@link #memberCompare(Member, Member)} on (instance id or null, member id) pairs. */
    static int memberCompare(String instanceA, String idA, String instanceB, String idB) {
        if (instanceA != null && instanceB != null) {
            return instanceA.compareTo(instanceB);
        }
        if (instanceA != null) {
            return -1;
        }
        if (instanceB != null) {
            return 1;
        }
        return idA.compareTo(idB);
    }

    /**
     * Assigns {@code members} over the topics they subscribe to; {@code counts} gives a topic's
     * partition count, null for a topic that does not exist (its subscriptions are ignored).
     */
    public static Result assign(List<Member> members, Function<String, Integer> counts) {
        TreeMap<String, Integer> known = new TreeMap<>(Copartitioned::codePointCompare);
        for (Member m : members) {
            for (String t : m.topics()) {
                if (!known.containsKey(t)) {
                    Integer n = counts.apply(t);
                    if (n != null) {
                        known.put(t, Math.max(n, 0));
                    }
                }
            }
        }
        String[] topics = known.keySet().toArray(new String[0]);
        int[] partitions = new int[topics.length];
        Map<String, Integer> topicIndex = new HashMap<>();
        for (int t = 0; t < topics.length; t++) {
            partitions[t] = known.get(topics[t]);
            topicIndex.put(topics[t], t);
        }
        int n = members.size();
        int[][] subscribed = new int[n][];
        for (int m = 0; m < n; m++) {
            List<String> mine = members.get(m).topics();
            int[] ts = new int[mine.size()];
            int c = 0;
            for (String t : mine) {
                Integer i = topicIndex.get(t);
                if (i != null) {
                    ts[c++] = i;
                }
            }
            subscribed[m] = c == ts.length ? ts : Arrays.copyOf(ts, c);
        }
        Placement pl = new Placement(partitions, subscribed, memberOrder(members));
        for (int m = 0; m < n; m++) {
            for (TopicPartition tp : members.get(m).owned()) {
                Integer t = topicIndex.get(tp.topic());
                if (t != null) {
                    pl.own(m, t, tp.partition());
                }
            }
        }
        pl.place();

        // Each member's partitions by topic name (Java order), then partition.
        Integer[] byName = new Integer[topics.length];
        for (int t = 0; t < topics.length; t++) {
            byName[t] = t;
        }
        Arrays.sort(byName, (x, y) -> topics[x].compareTo(topics[y]));
        int[] groupOfTopic = new int[topics.length];
        Arrays.fill(groupOfTopic, -1);
        for (int g = 0; g < pl.groups.length; g++) {
            for (int t : pl.groups[g]) {
                groupOfTopic[t] = g;
            }
        }
        List<List<Integer>> held = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            held.add(new ArrayList<>());
        }
        for (int u = 0; u < pl.owner.length; u++) {
            held.get(pl.owner[u]).add(u);
        }
        Map<String, List<TopicPartition>> out = new HashMap<>();
        for (int m = 0; m < n; m++) {
            List<Integer> mine = held.get(m);
            List<TopicPartition> list = new ArrayList<>();
            for (int t : byName) {
                int g = groupOfTopic[t];
                if (g < 0) {
                    continue;
                }
                for (int u : mine) {
                    if (pl.unitGroup[u] == g) {
                        list.add(new TopicPartition(topics[t], u - pl.unitBase[g]));
                    }
                }
            }
            out.put(members.get(m).id(), list);
        }
        List<List<String>> named = new ArrayList<>();
        for (int[] g : pl.groups) {
            List<String> names = new ArrayList<>();
            for (int t : g) {
                names.add(topics[t]);
            }
            named.add(names);
        }
        return new Result(out, encodeUnitGroups(named));
    }

    /** Member indices in {@link #memberCompare} order. */
    static int[] memberOrder(List<Member> members) {
        int n = members.size();
        String[] instances = new String[n];
        String[] ids = new String[n];
        for (int m = 0; m < n; m++) {
            instances[m] = members.get(m).instanceId();
            ids[m] = members.get(m).id();
        }
        return memberOrder(instances, ids);
    }

    /**
     * Member indices 0..n-1 in {@link #memberCompare} order of (instances[m], ids[m]), stably
     * (as Rust's sort_by): equal members keep their index order.
     *
     * <p>The group coordinator hands the member ids in its hash map's order, so this sorts an
     * unordered list on every computation whose order cannot come from an earlier one, and
     * sorts numbers, not strings: each member is one long, from the top: whether it lacks an
     * instance id, as many UTF-16 units of the id it is compared by (its instance id, else its
     * member id) as fit after the prefix all those ids share, and its index. Two members whose
     * numbers differ above the index are in {@link #memberCompare} order (every id agrees
     * before those units; a missing unit counts as 0, below any unit a longer id has there);
     * members whose numbers agree above it (a shared longer prefix, or a NUL unit) come out in
     * index order, a run that is then sorted stably by {@link #memberCompare} itself.
     */
    static int[] memberOrder(String[] instances, String[] ids) {
        int n = ids.length;
        String[] key = new String[n];
        for (int m = 0; m < n; m++) {
            key[m] = instances[m] != null ? instances[m] : ids[m];
        }
        int shared = n == 0 ? 0 : key[0].length();
        for (int m = 1; m < n && shared > 0; m++) {
            String k = key[m];
            int i = 0;
            int most = Math.min(shared, k.length());
            while (i < most && k.charAt(i) == key[0].charAt(i)) {
                i++;
            }
            shared = i;
        }
        int indexBits = 64 - Long.numberOfLeadingZeros(Math.max(n - 1, 1));
        // The sign bit stays clear; one bit for the instance id; whole units in what is left.
        int units = Math.min(3, (62 - indexBits) / 16);
        long[] packed = new long[n];
        for (int m = 0; m < n; m++) {
            String k = key[m];
            long v = instances[m] != null ? 0 : 1;
            for (int i = 0; i < units; i++) {
                v = (v << 16) | (shared + i < k.length() ? k.charAt(shared + i) : 0);
            }
            packed[m] = v << indexBits | m;
        }
        Arrays.sort(packed);
        long mask = (1L << indexBits) - 1;
        int[] order = new int[n];
        for (int r = 0; r < n; r++) {
            order[r] = (int) (packed[r] & mask);
        }
        for (int from = 0; from < n; ) {
            int to = from + 1;
            while (to < n && packed[to] >>> indexBits == packed[from] >>> indexBits) {
                to++;
            }
            if (to - from > 16) {
                // A long run (ids that agree further, as ids chosen to can): a stable sort in
                // n log n, not the insertion sort's n squared.
                Integer[] run = new Integer[to - from];
                for (int i = from; i < to; i++) {
                    run[i - from] = order[i];
                }
                Arrays.sort(run, (x, y) -> memberCompare(instances[x], ids[x], instances[y], ids[y]));
                for (int i = from; i < to; i++) {
                    order[i] = run[i - from];
                }
                from = to;
                continue;
            }
            // Insertion sort: moves a member past greater ones only, so it is stable.
            for (int i = from + 1; i < to; i++) {
                int v = order[i];
                int j = i - 1;
                while (j >= from && memberCompare(instances[order[j]], ids[order[j]], instances[v], ids[v]) > 0) {
                    order[j + 1] = order[j];
                    j--;
                }
                order[j + 1] = v;
            }
            from = to;
        }
        return order;
    }

    /**
     * The placement on indices, which both assignors fill and read: topics 0..T-1 in topic
     * order with their partition counts, members 0..n-1 with the topics each subscribes to and
     * their order (ranks). Nothing in it is boxed, hashed or allocated per partition: the
     * broker's group coordinator runs it on every target-assignment computation, where its time
     * delays every group on that coordinator.
     */
    static final class Placement {
        final int[] partitions;
        final int n;
        /** order[r]: the member of rank r. */
        final int[] order;
        /** rank[m]: member m's rank. */
        final int[] rank;
        /** The co-partition groups, each its topics in topic order, ordered by their first topic. */
        int[][] groups;
        /** groupMembers[g]: the members subscribing to group g, ascending. */
        int[][] groupMembers;
        /** memberGroups[m]: the groups member m subscribes to, ascending. */
        int[][] memberGroups;
        /** Group g's units are unitBase[g] .. unitBase[g+1]-1; unit u is partition u - unitBase[g]. */
        int[] unitBase;
        /** unitGroup[u]: the group of unit u. */
        int[] unitGroup;
        /** owner[u]: the member holding unit u, once {@link #place} ran. */
        int[] owner;
        /** load[m]: member m's units, once {@link #place} ran. */
        long[] load;
        private final int[] topicBase;
        /** prev[topicBase[t] + p]: the lowest rank of a member owning partition p of topic t. */
        private final int[] prev;
        /** groupOf[t]: topic t's group, -1 for a topic nobody subscribes to. */
        private int[] groupOf;
        /**
         * wholeClaim[u]: the lowest rank of a member owning every partition of unit u (told by
         * {@link #ownUnit}); partial[u]: some partition of u was told one at a time ({@link #own}).
         * A unit told only whole needs none of its partitions read.
         */
        private int[] wholeClaim;
        private boolean[] partial;

        /**
         * Whether {@link #group} and {@link #place} may take their shortcuts (one subscription
         * shared by every member; step 2 as a round robin); off, they take the general path
         * alone, which the shortcuts must equal (BrokerStateCheck compares the two).
         */
        private final boolean shortcuts;

        /** {@code subscribed[m]}: member m's topics (repeats allowed); {@code order}: members by rank. */
        Placement(int[] partitions, int[][] subscribed, int[] order) {
            this(partitions, subscribed, order, true);
        }

        /** As {@link #Placement(int[], int[][], int[])}, with or without the shortcuts. */
        Placement(int[] partitions, int[][] subscribed, int[] order, boolean shortcuts) {
            this.shortcuts = shortcuts;
            this.partitions = partitions;
            this.n = subscribed.length;
            this.order = order;
            this.rank = new int[n];
            for (int r = 0; r < n; r++) {
                rank[order[r]] = r;
            }
            int nt = partitions.length;
            topicBase = new int[nt];
            int total = 0;
            for (int t = 0; t < nt; t++) {
                topicBase[t] = total;
                total += partitions[t];
            }
            prev = new int[total];
            Arrays.fill(prev, NONE);
            group(subscribed);
            wholeClaim = new int[unitGroup.length];
            Arrays.fill(wholeClaim, NONE);
            partial = new boolean[unitGroup.length];
        }

        /** Co-partition groups: topics by (partition count, subscriber set), in topic order. */
        private void group(int[][] subscribed) {
            int nt = partitions.length;
            boolean shared = shortcuts && n > 0;
            for (int m = 1; m < n && shared; m++) {
                shared = subscribed[m] == subscribed[0];
            }
            if (shared) {
                groupShared(subscribed[0]);
                return;
            }
            int[] count = new int[nt];
            int[] last = new int[nt];
            Arrays.fill(last, -1);
            for (int m = 0; m < n; m++) {
                for (int t : subscribed[m]) {
                    if (last[t] != m) {
                        last[t] = m;
                        count[t]++;
                    }
                }
            }
            int[][] subscribers = new int[nt][];
            for (int t = 0; t < nt; t++) {
                subscribers[t] = new int[count[t]];
                count[t] = 0;
            }
            Arrays.fill(last, -1);
            for (int m = 0; m < n; m++) {
                for (int t : subscribed[m]) {
                    if (last[t] != m) {
                        last[t] = m;
                        subscribers[t][count[t]++] = m;
                    }
                }
            }
            // A topic joins the group of the first topic before it with its count and subscribers.
            Map<GroupKey, Integer> groupOfKey = new HashMap<>();
            int[] groupOfTopic = groupOf = new int[nt];
            int[] sizes = new int[nt];
            int ng = 0;
            for (int t = 0; t < nt; t++) {
                groupOfTopic[t] = -1;
                if (subscribers[t].length == 0) {
                    continue;
                }
                Integer g = groupOfKey.putIfAbsent(new GroupKey(partitions[t], subscribers[t]), ng);
                int gi = g == null ? ng++ : g;
                groupOfTopic[t] = gi;
                sizes[gi]++;
            }
            groups = new int[ng][];
            groupMembers = new int[ng][];
            for (int g = 0; g < ng; g++) {
                groups[g] = new int[sizes[g]];
                sizes[g] = 0;
            }
            for (int t = 0; t < nt; t++) {
                int g = groupOfTopic[t];
                if (g >= 0) {
                    if (sizes[g] == 0) {
                        groupMembers[g] = subscribers[t];
                    }
                    groups[g][sizes[g]++] = t;
                }
            }
            memberGroups(ng);
        }

        /**
         * {@link #group} when every member's subscription is one array (a group whose members
         * all subscribe to the same topics): every subscribed topic has all members as its
         * subscribers, so topics group by partition count alone, and every member is in every
         * group. The same groups, in the same order, as the general path; no subscriber set
         * is built or compared.
         */
        private void groupShared(int[] topics) {
            int nt = partitions.length;
            boolean[] subscribedTopic = new boolean[nt];
            for (int t : topics) {
                subscribedTopic[t] = true;
            }
            int[] all = new int[n];
            for (int m = 0; m < n; m++) {
                all[m] = m;
            }
            Map<Integer, Integer> groupOfCount = new HashMap<>();
            int[] groupOfTopic = groupOf = new int[nt];
            int[] sizes = new int[nt];
            int ng = 0;
            for (int t = 0; t < nt; t++) {
                groupOfTopic[t] = -1;
                if (!subscribedTopic[t]) {
                    continue;
                }
                Integer g = groupOfCount.putIfAbsent(partitions[t], ng);
                int gi = g == null ? ng++ : g;
                groupOfTopic[t] = gi;
                sizes[gi]++;
            }
            groups = new int[ng][];
            groupMembers = new int[ng][];
            for (int g = 0; g < ng; g++) {
                groups[g] = new int[sizes[g]];
                groupMembers[g] = all;
                sizes[g] = 0;
            }
            for (int t = 0; t < nt; t++) {
                int g = groupOfTopic[t];
                if (g >= 0) {
                    groups[g][sizes[g]++] = t;
                }
            }
            // Every member in every group: one array of all the groups, shared (never modified).
            int[] every = new int[ng];
            for (int g = 0; g < ng; g++) {
                every[g] = g;
            }
            memberGroups = new int[n][];
            Arrays.fill(memberGroups, every);
            units(ng);
        }

        /** memberGroups from groupMembers, then the units. */
        private void memberGroups(int ng) {
            int[] per = new int[n];
            for (int[] ms : groupMembers) {
                for (int m : ms) {
                    per[m]++;
                }
            }
            memberGroups = new int[n][];
            for (int m = 0; m < n; m++) {
                memberGroups[m] = new int[per[m]];
                per[m] = 0;
            }
            for (int g = 0; g < ng; g++) {
                for (int m : groupMembers[g]) {
                    memberGroups[m][per[m]++] = g;
                }
            }
            units(ng);
        }

        /** unitBase and unitGroup of the ng groups. */
        private void units(int ng) {
            unitBase = new int[ng + 1];
            int units = 0;
            for (int g = 0; g < ng; g++) {
                unitBase[g] = units;
                units += partitions[groups[g][0]];
            }
            unitBase[ng] = units;
            unitGroup = new int[units];
            for (int g = 0; g < ng; g++) {
                Arrays.fill(unitGroup, unitBase[g], unitBase[g + 1], g);
            }
        }

        /** Member m owned partition p of topic t; a partition claimed twice goes to the member sorted first. */
        void own(int m, int t, int p) {
            if (p >= 0 && p < partitions[t]) {
                int slot = topicBase[t] + p;
                prev[slot] = Math.min(prev[slot], rank[m]);
                int u = unitOf(t, p);
                if (u >= 0) {
                    partial[u] = true;
                }
            }
        }

        /** Member m owned every partition of unit u: as {@link #own} of each, in one step. */
        void ownUnit(int m, int u) {
            wholeClaim[u] = Math.min(wholeClaim[u], rank[m]);
        }

        /** Topic t's co-partition group, -1 for none. */
        int groupOfTopic(int t) {
            return groupOf[t];
        }

        /** The unit holding partition p of topic t, -1 for none (no such partition, or nobody subscribes). */
        int unitOf(int t, int p) {
            int g = groupOf[t];
            return g < 0 || p < 0 || p >= partitions[t] ? -1 : unitBase[g] + p;
        }

        /** Steps 1 to 3 of {@link Copartitioned}: fills owner and load. */
        void place() {
            int ng = groups.length;
            int units = unitGroup.length;
            owner = new int[units];
            Arrays.fill(owner, NONE);
            load = new long[n];
            // Step 1: previous owners (most of the unit's partitions, ties to the lower rank),
            // while they still subscribe to the unit's group.
            boolean[] inGroup = new boolean[n];
            int[] ranks = new int[0];
            for (int g = 0; g < ng; g++) {
                int[] ts = groups[g];
                int first = ts[0];
                for (int m : groupMembers[g]) {
                    inGroup[m] = true;
                }
                if (ranks.length < ts.length) {
                    ranks = new int[ts.length];
                }
                for (int u = unitBase[g]; u < unitBase[g + 1]; u++) {
                    int i = u - unitBase[g];
                    int whole = wholeClaim[u];
                    int best;
                    if (!partial[u]) {
                        best = whole;
                    } else if (ts.length == 1) {
                        best = Math.min(prev[topicBase[first] + i], whole);
                    } else {
                        best = mostClaims(ts, i, ranks, whole);
                    }
                    if (best != NONE) {
                        int m = order[best];
                        if (inGroup[m]) {
                            owner[u] = m;
                            load[m]++;
                        }
                    }
                }
                for (int m : groupMembers[g]) {
                    inGroup[m] = false;
                }
            }

            // Step 2: unowned units in unit order, each to its group's least-loaded subscriber.
            if (!shortcuts || ng != 1 || !roundRobin(units)) {
                leastLoaded(ng, units);
            }

            // Step 3: loads within one of each other admit no narrowing move.
            long min = Long.MAX_VALUE, max = 0;
            for (long l : load) {
                min = Math.min(min, l);
                max = Math.max(max, l);
            }
            if (n > 0 && max > min + 1) {
                rebalance(ng, memberGroups, unitBase, unitGroup, order, rank, owner, load);
            }
        }

        /**
         * Step 2 with one group whose members' loads are within one of each other (a group
         * from scratch, or after members left a balanced one): the least-loaded member, ties
         * to the lower rank, is then the members at the lower load in rank order, then every
         * member in rank order, round after round. The heap of {@link #leastLoaded} picks the
         * same members in the same order, one sift a unit. False (nothing done) otherwise.
         */
        private boolean roundRobin(int units) {
            int[] ms = groupMembers[0];
            if (ms.length == 0) {
                return false;
            }
            long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
            for (int m : ms) {
                lo = Math.min(lo, load[m]);
                hi = Math.max(hi, load[m]);
            }
            if (hi > lo + 1) {
                return false;
            }
            int[] byRank = order;
            if (ms.length != n) {
                boolean[] in = new boolean[n];
                for (int m : ms) {
                    in[m] = true;
                }
                byRank = new int[ms.length];
                int k = 0;
                for (int r = 0; r < n; r++) {
                    if (in[order[r]]) {
                        byRank[k++] = order[r];
                    }
                }
            }
            int[] low = new int[byRank.length];
            int lows = 0;
            for (int m : byRank) {
                if (load[m] == lo) {
                    low[lows++] = m;
                }
            }
            int k = 0;
            for (int u = 0; u < units; u++) {
                if (owner[u] != NONE) {
                    continue;
                }
                int m = k < lows ? low[k] : byRank[(k - lows) % byRank.length];
                k++;
                owner[u] = m;
                load[m]++;
            }
            return true;
        }

        /**
         * Step 2 in general: a heap of (load, rank) per group. Entries go stale when a
         * member's load changes and are dropped when they surface.
         */
        private void leastLoaded(int ng, int units) {
            LongHeap[] heaps = new LongHeap[ng];
            for (int g = 0; g < ng; g++) {
                int[] ms = groupMembers[g];
                long[] keys = new long[ms.length];
                for (int j = 0; j < ms.length; j++) {
                    keys[j] = key(load[ms[j]], rank[ms[j]]);
                }
                heaps[g] = new LongHeap(keys);
            }
            for (int u = 0; u < units; u++) {
                if (owner[u] != NONE) {
                    continue;
                }
                LongHeap h = heaps[unitGroup[u]];
                while (load[order[(int) h.peek()]] != h.peek() >>> 32) {
                    h.poll();
                }
                int m = order[(int) h.peek()];
                owner[u] = m;
                load[m]++;
                long k = key(load[m], rank[m]);
                int taken = unitGroup[u];
                for (int g : memberGroups[m]) {
                    if (g == taken) {
                        // m's entry is this heap's top: replaced, not left stale below a new one.
                        heaps[g].replaceTop(k);
                    } else {
                        heaps[g].add(k);
                    }
                }
            }
        }

        /**
         * The rank owning most of partition i of topics ts, ties to the lower rank; NONE for
         * none. {@code whole}: the lowest rank owning all of them (NONE for none).
         */
        private int mostClaims(int[] ts, int i, int[] ranks, int whole) {
            int k = 0;
            for (int t : ts) {
                int r = Math.min(prev[topicBase[t] + i], whole);
                if (r != NONE) {
                    ranks[k++] = r;
                }
            }
            if (k == 0) {
                return NONE;
            }
            boolean same = true;
            for (int j = 1; j < k && same; j++) {
                same = ranks[j] == ranks[0];
            }
            if (same) {
                return ranks[0];
            }
            Arrays.sort(ranks, 0, k);
            int best = NONE, bestCount = 0;
            for (int j = 0; j < k;) {
                int e = j;
                while (e < k && ranks[e] == ranks[j]) {
                    e++;
                }
                // Ranks ascend: a later rank wins only with strictly more claims.
                if (e - j > bestCount) {
                    best = ranks[j];
                    bestCount = e - j;
                }
                j = e;
            }
            return best;
        }
    }

    /** A co-partition group's identity: a partition count and a subscriber set (ascending). */
    private record GroupKey(int partitions, int[] subscribers) {
        @Override
        public boolean equals(Object o) {
            return o instanceof GroupKey k && k.partitions == partitions && Arrays.equals(k.subscribers, subscribers);
        }

        @Override
        public int hashCode() {
            return 31 * partitions + Arrays.hashCode(subscribers);
        }

        @Override
        public String toString() {
            return partitions + ":" + Arrays.toString(subscribers);
        }
    }

    /** A binary min-heap of {@link #key} longs, ordered as (load, rank). */
    private static final class LongHeap {
        private long[] a;
        private int size;

        LongHeap(long[] keys) {
            a = keys.length == 0 ? new long[1] : keys;
            size = keys.length;
            for (int i = size / 2 - 1; i >= 0; i--) {
                down(i);
            }
        }

        long peek() {
            return a[0];
        }

        void poll() {
            a[0] = a[--size];
            down(0);
        }

        /** Replaces the smallest key by {@code k}: a poll and an add in one sift. */
        void replaceTop(long k) {
            a[0] = k;
            down(0);
        }

        void add(long k) {
            if (size == a.length) {
                a = Arrays.copyOf(a, size * 2);
            }
            int i = size++;
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (a[parent] <= k) {
                    break;
                }
                a[i] = a[parent];
                i = parent;
            }
            a[i] = k;
        }

        private void down(int i) {
            long k = a[i];
            int half = size >>> 1;
            while (i < half) {
                int c = 2 * i + 1;
                if (c + 1 < size && a[c + 1] < a[c]) {
                    c++;
                }
                if (k <= a[c]) {
                    break;
                }
                a[i] = a[c];
                i = c;
            }
            a[i] = k;
        }
    }

    /** (load, rank) as one sortable long: loads and ranks both fit in 31 bits. */
    private static long key(long load, int rank) {
        return (load << 32) | rank;
    }

    private static void rebalance(int ng, int[][] memberGroups, int[] unitBase, int[] unitGroup,
            int[] order, int[] rank, int[] owner, long[] load) {
        int n = load.length;
        List<TreeSet<Long>> byLoad = new ArrayList<>();
        for (int g = 0; g < ng; g++) {
            byLoad.add(new TreeSet<>());
        }
        TreeSet<Long> all = new TreeSet<>();
        for (int m = 0; m < n; m++) {
            for (int g : memberGroups[m]) {
                byLoad.get(g).add(key(load[m], rank[m]));
            }
            all.add(key(load[m], rank[m]));
        }
        List<TreeSet<Integer>> held = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            held.add(new TreeSet<>());
        }
        for (int u = 0; u < owner.length; u++) {
            held.get(owner[u]).add(u);
        }
        while (true) {
            boolean moved = false;
            for (long heavy : all.descendingSet().toArray(new Long[0])) {
                long la = heavy >>> 32;
                int ra = (int) heavy;
                int a = order[ra];
                long bestAfter = Long.MAX_VALUE;
                int bestUnit = -1, bestTo = -1;
                for (int g : memberGroups[a]) {
                    long light = byLoad.get(g).first();
                    long lb = light >>> 32;
                    int rb = (int) light;
                    if (rb == ra) {
                        continue;
                    }
                    // Every unit weighs the same: a's highest unit of the group is as good as any,
                    // and moving it keeps low indices put.
                    Integer u = held.get(a).lower(unitBase[g + 1]);
                    if (u == null || u < unitBase[g]) {
                        continue;
                    }
                    if (lb + 1 < la) {
                        long after = Math.abs((la - 1) - (lb + 1));
                        if (bestUnit < 0 || after < bestAfter) {
                            bestAfter = after;
                            bestUnit = u;
                            bestTo = order[rb];
                        }
                    }
                }
                if (bestUnit >= 0) {
                    int b = bestTo;
                    held.get(a).remove(bestUnit);
                    held.get(b).add(bestUnit);
                    owner[bestUnit] = b;
                    all.remove(key(load[a], rank[a]));
                    all.remove(key(load[b], rank[b]));
                    setLoad(byLoad, memberGroups, load, rank, a, load[a] - 1);
                    setLoad(byLoad, memberGroups, load, rank, b, load[b] + 1);
                    all.add(key(load[a], rank[a]));
                    all.add(key(load[b], rank[b]));
                    moved = true;
                    break;
                }
                // No lighter member can gain from anyone lighter than a.
                if (la <= (all.first() >>> 32) + 1) {
                    break;
                }
            }
            if (!moved) {
                return;
            }
        }
    }

    private static void setLoad(List<TreeSet<Long>> byLoad, int[][] memberGroups, long[] load,
            int[] rank, int m, long now) {
        for (int g : memberGroups[m]) {
            byLoad.get(g).remove(key(load[m], rank[m]));
            byLoad.get(g).add(key(now, rank[m]));
        }
        load[m] = now;
    }

    /**
     * The co-partition groups as assignment user data, byte for byte as the Rust leader writes
     * them: a marker, an i32 group count, per group an i32 topic count and each name as an
     * i16 length and its UTF-8 bytes.
     */
    public static byte[] encodeUnitGroups(List<List<String>> groups) {
        int size = UNITS_MAGIC.length + 4;
        for (List<String> g : groups) {
            size += 4;
            for (String t : g) {
                size += 2 + t.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.put(UNITS_MAGIC).putInt(groups.size());
        for (List<String> g : groups) {
            b.putInt(g.size());
            for (String t : g) {
                byte[] name = t.getBytes(StandardCharsets.UTF_8);
                b.putShort((short) name.length).put(name);
            }
        }
        return b.array();
    }

    /** The groups in user data written by {@link #encodeUnitGroups}; null for anything else. */
    public static List<List<String>> decodeUnitGroups(ByteBuffer data) {
        if (data == null) {
            return null;
        }
        ByteBuffer b = data.duplicate();
        try {
            for (byte m : UNITS_MAGIC) {
                if (b.get() != m) {
                    return null;
                }
            }
            int ng = b.getInt();
            if (ng < 0 || ng > b.remaining()) {
                return null;
            }
            List<List<String>> groups = new ArrayList<>();
            for (int g = 0; g < ng; g++) {
                int nt = b.getInt();
                if (nt < 0 || nt > b.remaining()) {
                    return null;
                }
                List<String> names = new ArrayList<>();
                for (int t = 0; t < nt; t++) {
                    byte[] name = new byte[b.getShort()];
                    b.get(name);
                    names.add(new String(name, StandardCharsets.UTF_8));
                }
                groups.add(names);
            }
            return b.hasRemaining() ? null : groups;
        } catch (RuntimeException e) {
            // Truncated or foreign bytes are not unit groups.
            return null;
        }
    }
}
