// Replays the copartitioned consistency vectors (tests/vectors/copartitioned/vectors.txt, the
// Rust leader's output) through BrokerCopartitionedAssignor, the broker-side assignor, with a
// GroupSpec and SubscribedTopicDescriber built from each case, and fails on the first case
// whose partitions differ from the Rust leader's. The broker knows topics by id only: each
// case's topics get random ids that sort (Uuid.compareTo) as their names sort in the Rust
// leader's order, the one arrangement in which the two must agree exactly. A case's owned
// partitions are the members' current target assignment. The consumer protocol carries no
// user data, so only partitions are compared. Each case runs again with the ids in a shuffled
// order, where ties may break otherwise: units must still go whole, each partition once.
// Every case is assigned twice by one assignor instance shared by all cases, the second call
// given the same current assignment objects (read from what the assignor kept of the first):
// the two answers must be equal. Then the first answer, copied into new maps as the coordinator
// replays the targets it wrote, and the same copies with two members' partitions of one topic
// swapped: the shared instance (which kept the targets it computed) must answer each as a fresh
// instance does.
package dev.partwise;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;

public final class BrokerVectorCheck {
    private record Subscription(Optional<String> rackId, Optional<String> instanceId, Set<Uuid> subscribedTopicIds)
            implements MemberSubscription {}

    private record Current(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}

    /** The coordinator's view of one case, as GroupSpecImpl gives it to an assignor. */
    private static final class Spec implements GroupSpec {
        final Map<String, Subscription> subs = new LinkedHashMap<>();
        final Map<String, Current> current = new HashMap<>();

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
            return current.values().stream().anyMatch(c -> c.partitions().getOrDefault(topic, Set.of()).contains(partition));
        }

        @Override
        public boolean isPartitionAssignable(Uuid topic, int partition) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String member) {
            Subscription s = subs.get(member);
            if (s == null) {
                throw new IllegalArgumentException("no member " + member);
            }
            return s;
        }

        @Override
        public MemberAssignment memberAssignment(String member) {
            return current.getOrDefault(member, new Current(Map.of()));
        }
    }

    /**
     * Ids for every topic name of a case: the case's own topics get ids in their name order
     * (code points, as the Rust leader orders them); names no topic has ("missing") get ids
     * the describer does not know.
     */
    static Map<String, Uuid> topicIds(VectorCheck.Case c, Random rng, boolean shuffled) {
        List<String> names = new ArrayList<>(c.topics().keySet());
        names.sort(Copartitioned::codePointCompare);
        if (shuffled) {
            java.util.Collections.shuffle(names, rng);
        }
        TreeSet<Uuid> ids = new TreeSet<>();
        while (ids.size() < names.size()) {
            Uuid u = new Uuid(rng.nextLong(), rng.nextLong());
            if (!Uuid.RESERVED.contains(u)) {
                ids.add(u);
            }
        }
        Map<String, Uuid> out = new HashMap<>();
        int i = 0;
        for (Uuid u : ids) {
            out.put(names.get(i++), u);
        }
        for (VectorCheck.Member m : c.members()) {
            for (String t : m.topics()) {
                out.computeIfAbsent(t, k -> new Uuid(rng.nextLong(), rng.nextLong()));
            }
            for (TopicPartition tp : m.owned()) {
                out.computeIfAbsent(tp.topic(), k -> new Uuid(rng.nextLong(), rng.nextLong()));
            }
        }
        return out;
    }

    /** One instance for every case, as a broker keeps one for every group. */
    static final BrokerCopartitionedAssignor ASSIGNOR = new BrokerCopartitionedAssignor();

    static String check(VectorCheck.Case c, Random rng, boolean shuffled) {
        Map<String, Uuid> ids = topicIds(c, rng, shuffled);
        Map<Uuid, String> names = new HashMap<>();
        ids.forEach((n, u) -> names.put(u, n));
        Spec spec = new Spec();
        for (VectorCheck.Member m : c.members()) {
            Set<Uuid> subscribed = new HashSet<>();
            for (String t : m.topics()) {
                subscribed.add(ids.get(t));
            }
            spec.subs.put(m.id(), new Subscription(Optional.empty(), Optional.ofNullable(m.instanceId()), subscribed));
            Map<Uuid, Set<Integer>> cur = new HashMap<>();
            for (TopicPartition tp : m.owned()) {
                cur.computeIfAbsent(ids.get(tp.topic()), k -> new HashSet<>()).add(tp.partition());
            }
            spec.current.put(m.id(), new Current(cur));
        }
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topic) {
                Integer n = c.topics().get(names.get(topic));
                return n == null ? -1 : n;
            }

            @Override
            public Set<String> racksForPartition(Uuid topic, int partition) {
                return Set.of();
            }
        };
        GroupAssignment got = ASSIGNOR.assign(spec, describer);
        // The same spec again: every current assignment now comes from what the assignor kept
        // of its earlier read (the coordinator hands an unchanged member's map again); the
        // answer must not change.
        GroupAssignment again = ASSIGNOR.assign(spec, describer);
        for (Map.Entry<String, MemberAssignment> e : got.members().entrySet()) {
            MemberAssignment b = again.members().get(e.getKey());
            if (b == null || !e.getValue().partitions().equals(b.partitions())) {
                return e.getKey() + ": the second call (current assignments read before) gives "
                        + (b == null ? "nothing" : b.partitions()) + ", the first " + e.getValue().partitions();
            }
        }
        String replay = replayed(spec, got, describer);
        if (replay != null) {
            return replay;
        }
        if (got.members().size() != c.expect().size()) {
            return "broker assigned " + got.members().size() + " members, rust " + c.expect().size();
        }
        Map<String, Set<String>> assigned = new HashMap<>();
        for (Map.Entry<String, List<TopicPartition>> e : c.expect().entrySet()) {
            MemberAssignment a = got.members().get(e.getKey());
            if (a == null) {
                return "no assignment for " + e.getKey();
            }
            Set<String> mine = new TreeSet<>();
            int n = 0;
            for (Map.Entry<Uuid, Set<Integer>> t : a.partitions().entrySet()) {
                for (int p : t.getValue()) {
                    mine.add(names.get(t.getKey()) + ":" + p);
                    n++;
                }
            }
            Set<String> want = new TreeSet<>();
            for (TopicPartition tp : e.getValue()) {
                want.add(tp.topic() + ":" + tp.partition());
            }
            if (n != mine.size()) {
                return e.getKey() + ": a partition given twice: " + a.partitions();
            }
            if (!shuffled && !mine.equals(want)) {
                return e.getKey() + ": broker " + mine + ", rust " + want;
            }
            assigned.put(e.getKey(), mine);
        }
        return shuffled ? wholeUnitsOnce(c, assigned) : null;
    }

    /**
     * The coordinator replays the targets it wrote into new maps: given such copies of
     * {@code got}, the shared instance (which kept what it computed) must answer as a fresh
     * one; so must it given copies in which two members swapped a partition of one topic
     * (maps of the kept sizes that no longer hold the kept targets).
     */
    static String replayed(Spec spec, GroupAssignment got, SubscribedTopicDescriber describer) {
        Spec copy = new Spec();
        copy.subs.putAll(spec.subs);
        got.members().forEach((m, a) -> {
            Map<Uuid, Set<Integer>> cur = new HashMap<>();
            a.partitions().forEach((t, ps) -> cur.put(t, java.util.Collections.unmodifiableSet(new HashSet<>(ps))));
            copy.current.put(m, new Current(java.util.Collections.unmodifiableMap(cur)));
        });
        String why = sameAsFresh(copy, describer, "replayed");
        if (why != null) {
            return why;
        }
        // Two members holding one topic swap one partition of it.
        List<String> members = new ArrayList<>(copy.current.keySet());
        for (int i = 0; i < members.size(); i++) {
            for (int j = i + 1; j < members.size(); j++) {
                Map<Uuid, Set<Integer>> a = copy.current.get(members.get(i)).partitions();
                Map<Uuid, Set<Integer>> b = copy.current.get(members.get(j)).partitions();
                for (Uuid t : a.keySet()) {
                    if (b.containsKey(t) && !a.get(t).isEmpty() && !b.get(t).isEmpty()) {
                        int pa = a.get(t).iterator().next(), pb = b.get(t).iterator().next();
                        Spec swapped = new Spec();
                        swapped.subs.putAll(spec.subs);
                        swapped.current.putAll(copy.current);
                        swapped.current.put(members.get(i), new Current(swap(a, t, pa, pb)));
                        swapped.current.put(members.get(j), new Current(swap(b, t, pb, pa)));
                        return sameAsFresh(swapped, describer, "replayed with a swap");
                    }
                }
            }
        }
        return null;
    }

    static Map<Uuid, Set<Integer>> swap(Map<Uuid, Set<Integer>> m, Uuid t, int out, int in) {
        Map<Uuid, Set<Integer>> c = new HashMap<>(m);
        Set<Integer> ps = new HashSet<>(m.get(t));
        ps.remove(out);
        ps.add(in);
        c.put(t, ps);
        return c;
    }

    static String sameAsFresh(Spec spec, SubscribedTopicDescriber describer, String what) {
        GroupAssignment kept = ASSIGNOR.assign(spec, describer);
        GroupAssignment fresh = new BrokerCopartitionedAssignor().assign(spec, describer);
        for (Map.Entry<String, MemberAssignment> e : fresh.members().entrySet()) {
            MemberAssignment k = kept.members().get(e.getKey());
            if (k == null || !e.getValue().partitions().equals(k.partitions())) {
                return e.getKey() + " (" + what + "): the instance that kept its targets gives "
                        + (k == null ? "nothing" : k.partitions()) + ", a fresh one " + e.getValue().partitions();
            }
        }
        return kept.members().size() == fresh.members().size() ? null : what + ": member counts differ";
    }

    /**
     * What no topic order changes (which member gets which unit, and with unequal
     * subscriptions how many, can): each member holds whole units (topics of one partition
     * count and one subscriber set, partition p of each), and every partition of a subscribed
     * topic is held once, by a subscriber.
     */
    static String wholeUnitsOnce(VectorCheck.Case c, Map<String, Set<String>> assigned) {
        Map<String, List<String>> groups = new HashMap<>();
        Map<String, Set<String>> subscribers = new HashMap<>();
        for (String t : c.topics().keySet()) {
            Set<String> subs = new TreeSet<>();
            for (VectorCheck.Member m : c.members()) {
                if (m.topics().contains(t)) {
                    subs.add(m.id());
                }
            }
            if (!subs.isEmpty()) {
                groups.computeIfAbsent(c.topics().get(t) + " " + subs, k -> new ArrayList<>()).add(t);
                subscribers.put(t, subs);
            }
        }
        Map<String, String> holder = new HashMap<>();
        for (Map.Entry<String, Set<String>> e : assigned.entrySet()) {
            for (String tp : e.getValue()) {
                if (holder.put(tp, e.getKey()) != null) {
                    return tp + " held twice";
                }
            }
        }
        for (List<String> g : groups.values()) {
            for (int p = 0; p < c.topics().get(g.get(0)); p++) {
                String first = holder.get(g.get(0) + ":" + p);
                for (String t : g) {
                    String h = holder.get(t + ":" + p);
                    if (h == null || !subscribers.get(t).contains(h)) {
                        return t + ":" + p + " held by " + h + ", not a subscriber";
                    }
                    if (!h.equals(first)) {
                        return "unit " + g + ":" + p + " split between " + first + " and " + h;
                    }
                }
            }
        }
        int total = 0;
        for (List<String> g : groups.values()) {
            total += g.size() * c.topics().get(g.get(0));
        }
        return holder.size() == total ? null : holder.size() + " partitions held, " + total + " subscribed";
    }

    public static void main(String[] args) throws Exception {
        // The cases' user data is not compared: the consumer protocol has none.
        List<VectorCheck.Case> cases = VectorCheck.read(args[0]);
        // A fixed seed: a failure replays with the same ids.
        Random rng = new Random(848);
        int failed = 0, shuffledFailed = 0;
        for (VectorCheck.Case c : cases) {
            String why = check(c, rng, false);
            if (why != null) {
                failed++;
                if (failed <= 10) {
                    System.err.println("MISMATCH " + c.name() + " (broker assignor): " + why);
                }
            }
            why = check(c, rng, true);
            if (why != null) {
                shuffledFailed++;
                if (shuffledFailed <= 10) {
                    System.err.println("MISMATCH " + c.name() + " (broker assignor, topic ids in another order): " + why);
                }
            }
        }
        System.out.println("copartitioned vectors through the broker assignor: " + cases.size() + " cases; topic ids ordered as the names: "
                + (cases.size() - failed) + " equal to the Rust leader, " + failed + " differ; in a shuffled order: "
                + (cases.size() - shuffledFailed) + " with whole units and each partition once, to a subscriber, "
                + shuffledFailed + " not");
        System.exit(failed + shuffledFailed == 0 ? 0 : 1);
    }
}
