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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
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
        if (a.instanceId() != null && b.instanceId() != null) {
            return a.instanceId().compareTo(b.instanceId());
        }
        if (a.instanceId() != null) {
            return -1;
        }
        if (b.instanceId() != null) {
            return 1;
        }
        return a.id().compareTo(b.id());
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
        Integer[] sorted = new Integer[n];
        for (int i = 0; i < n; i++) {
            sorted[i] = i;
        }
        // Arrays.sort on objects is stable, as Rust's sort_by.
        Arrays.sort(sorted, (x, y) -> memberCompare(members.get(x), members.get(y)));
        int[] order = new int[n];
        int[] rank = new int[n];
        for (int r = 0; r < n; r++) {
            order[r] = sorted[r];
            rank[sorted[r]] = r;
        }
        boolean[][] subs = new boolean[n][topics.length];
        for (int m = 0; m < n; m++) {
            for (String t : members.get(m).topics()) {
                Integer i = topicIndex.get(t);
                if (i != null) {
                    subs[m][i] = true;
                }
            }
        }

        // Co-partition groups: topics by (partition count, subscriber set), in topic order.
        List<String> keys = new ArrayList<>();
        List<List<Integer>> groups = new ArrayList<>();
        Map<String, Integer> groupOfKey = new HashMap<>();
        for (int t = 0; t < topics.length; t++) {
            StringBuilder key = new StringBuilder().append(partitions[t]).append(':');
            boolean any = false;
            for (int m = 0; m < n; m++) {
                key.append(subs[m][t] ? '1' : '0');
                any |= subs[m][t];
            }
            if (!any) {
                continue;
            }
            Integer g = groupOfKey.get(key.toString());
            if (g == null) {
                groupOfKey.put(key.toString(), groups.size());
                keys.add(key.toString());
                groups.add(new ArrayList<>(List.of(t)));
            } else {
                groups.get(g).add(t);
            }
        }
        int ng = groups.size();
        int[][] memberGroups = new int[n][];
        for (int m = 0; m < n; m++) {
            int c = 0;
            int[] mine = new int[ng];
            for (int g = 0; g < ng; g++) {
                if (subs[m][groups.get(g).get(0)]) {
                    mine[c++] = g;
                }
            }
            memberGroups[m] = Arrays.copyOf(mine, c);
        }

        int[] unitBase = new int[ng + 1];
        int units = 0;
        for (int g = 0; g < ng; g++) {
            unitBase[g] = units;
            units += partitions[groups.get(g).get(0)];
        }
        unitBase[ng] = units;
        int[] unitGroup = new int[units];
        for (int g = 0; g < ng; g++) {
            Arrays.fill(unitGroup, unitBase[g], unitBase[g + 1], g);
        }

        // Step 1: previous owners as ranks; a partition claimed twice goes to the member sorted first.
        int[] topicBase = new int[topics.length];
        int total = 0;
        for (int t = 0; t < topics.length; t++) {
            topicBase[t] = total;
            total += partitions[t];
        }
        int[] prev = new int[total];
        Arrays.fill(prev, NONE);
        for (int m = 0; m < n; m++) {
            for (TopicPartition tp : members.get(m).owned()) {
                Integer t = topicIndex.get(tp.topic());
                if (t != null && tp.partition() >= 0 && tp.partition() < partitions[t]) {
                    int slot = topicBase[t] + tp.partition();
                    prev[slot] = Math.min(prev[slot], rank[m]);
                }
            }
        }
        int[] owner = new int[units];
        Arrays.fill(owner, NONE);
        long[] load = new long[n];
        Map<Integer, Integer> tally = new LinkedHashMap<>();
        for (int g = 0; g < ng; g++) {
            List<Integer> ts = groups.get(g);
            int first = ts.get(0);
            for (int u = unitBase[g]; u < unitBase[g + 1]; u++) {
                int i = u - unitBase[g];
                int best = NONE;
                if (ts.size() == 1) {
                    best = prev[topicBase[first] + i];
                } else {
                    tally.clear();
                    for (int t : ts) {
                        int r = prev[topicBase[t] + i];
                        if (r != NONE) {
                            tally.merge(r, 1, Integer::sum);
                        }
                    }
                    int bestCount = 0;
                    for (Map.Entry<Integer, Integer> e : tally.entrySet()) {
                        int r = e.getKey(), c = e.getValue();
                        if (c > bestCount || (c == bestCount && r < best)) {
                            best = r;
                            bestCount = c;
                        }
                    }
                }
                if (best != NONE) {
                    int m = order[best];
                    if (subs[m][first]) {
                        owner[u] = m;
                        load[m]++;
                    }
                }
            }
        }

        // Step 2: unowned units in unit order, each to its group's least-loaded subscriber.
        // Entries go stale when a member's load changes and are dropped when they surface.
        List<PriorityQueue<long[]>> heaps = new ArrayList<>();
        for (int g = 0; g < ng; g++) {
            PriorityQueue<long[]> h = new PriorityQueue<>(Copartitioned::loadRankCompare);
            int first = groups.get(g).get(0);
            for (int m = 0; m < n; m++) {
                if (subs[m][first]) {
                    h.add(new long[] {load[m], rank[m]});
                }
            }
            heaps.add(h);
        }
        for (int u = 0; u < units; u++) {
            if (owner[u] != NONE) {
                continue;
            }
            PriorityQueue<long[]> h = heaps.get(unitGroup[u]);
            while (load[order[(int) h.peek()[1]]] != h.peek()[0]) {
                h.poll();
            }
            int m = order[(int) h.peek()[1]];
            owner[u] = m;
            load[m]++;
            for (int g : memberGroups[m]) {
                heaps.get(g).add(new long[] {load[m], rank[m]});
            }
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

        // Each member's partitions by topic name (Java order), then partition.
        Integer[] byName = new Integer[topics.length];
        for (int t = 0; t < topics.length; t++) {
            byName[t] = t;
        }
        Arrays.sort(byName, (x, y) -> topics[x].compareTo(topics[y]));
        int[] groupOfTopic = new int[topics.length];
        Arrays.fill(groupOfTopic, -1);
        for (int g = 0; g < ng; g++) {
            for (int t : groups.get(g)) {
                groupOfTopic[t] = g;
            }
        }
        List<List<Integer>> held = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            held.add(new ArrayList<>());
        }
        for (int u = 0; u < units; u++) {
            held.get(owner[u]).add(u);
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
                    if (unitGroup[u] == g) {
                        list.add(new TopicPartition(topics[t], u - unitBase[g]));
                    }
                }
            }
            out.put(members.get(m).id(), list);
        }
        List<List<String>> named = new ArrayList<>();
        for (List<Integer> g : groups) {
            List<String> names = new ArrayList<>();
            for (int t : g) {
                names.add(topics[t]);
            }
            named.add(names);
        }
        return new Result(out, encodeUnitGroups(named));
    }

    private static int loadRankCompare(long[] a, long[] b) {
        int c = Long.compare(a[0], b[0]);
        return c != 0 ? c : Long.compare(a[1], b[1]);
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
