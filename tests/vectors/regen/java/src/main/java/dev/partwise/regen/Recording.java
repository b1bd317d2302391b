package dev.partwise.regen;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor.MemberData;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;

/**
 * The four classic assignors of kafka-clients, unchanged, with only their
 * entry points observed: what the group leader's assign() was given (members
 * in the leader's map order, subscriptions, owned partitions, the sticky
 * assignors' decoded user data, partition counts) and returned, and what each
 * member's onAssignment() received with its generation. Subclassing keeps
 * the protocol name, user data and rebalance protocols the real ones.
 */
final class Recording {
    private Recording() {}

    /** One assign() call of a group leader. */
    record Call(String group, long seq, List<Map<String, Object>> members, Map<String, Integer> topics,
                Map<String, List<TopicPartition>> output) {}

    /** One onAssignment() of a member. */
    record Received(String group, String memberId, int generation, List<TopicPartition> partitions) {}

    static final List<Call> CALLS = new ArrayList<>();
    static final List<Received> RECEIVED = new ArrayList<>();
    private static long seq;

    /** The leader's input, read before the assignor runs (it consumes the user data buffers). */
    record Input(List<Map<String, Object>> members, Map<String, Integer> topics) {}

    static Input input(Cluster metadata, GroupSubscription gs,
                       java.util.function.Function<Subscription, MemberData> memberData) {
        List<Map<String, Object>> members = new ArrayList<>();
        TreeSet<String> topics = new TreeSet<>();
        for (Map.Entry<String, Subscription> e : gs.groupSubscription().entrySet()) {
            Subscription s = e.getValue();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("member_id", e.getKey());
            m.put("instance_id", s.groupInstanceId().orElse(null));
            m.put("topics", new ArrayList<>(new TreeSet<>(s.topics())));
            m.put("owned_partitions", Json.sorted(s.ownedPartitions()));
            m.put("subscription_generation", s.generationId().orElse(null));
            if (memberData != null) {
                // A copy with its own buffer position, so the real assignor still reads it whole.
                Subscription copy = new Subscription(s.topics(),
                        s.userData() == null ? null : s.userData().duplicate(), s.ownedPartitions(),
                        s.generationId().orElse(-1), s.rackId());
                MemberData md = memberData.apply(copy);
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("partitions", Json.sorted(md.partitions));
                d.put("generation", md.generation.orElse(null));
                m.put("member_data", d);
            }
            members.add(m);
            topics.addAll(s.topics());
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String t : topics) {
            Integer n = metadata.partitionCountForTopic(t);
            if (n != null) counts.put(t, n);
        }
        return new Input(members, counts);
    }

    static synchronized void call(String group, Input in, GroupAssignment out) {
        Map<String, List<TopicPartition>> output = new LinkedHashMap<>();
        for (Map.Entry<String, Assignment> e : out.groupAssignment().entrySet()) {
            output.put(e.getKey(), Json.sorted(e.getValue().partitions()));
        }
        CALLS.add(new Call(group, seq++, in.members(), in.topics(), output));
    }

    static synchronized void received(String group, ConsumerGroupMetadata md, Assignment a) {
        RECEIVED.add(new Received(group, md.memberId(), md.generationId(), Json.sorted(a.partitions())));
    }

    static String group(Map<String, ?> configs) {
        Object g = configs.get("group.id");
        return g == null ? "" : g.toString();
    }

    public static final class Range extends RangeAssignor implements Configurable {
        private String group = "";
        @Override public void configure(Map<String, ?> configs) { group = group(configs); }
        @Override public GroupAssignment assign(Cluster metadata, GroupSubscription gs) {
            Input in = input(metadata, gs, null);
            GroupAssignment out = super.assign(metadata, gs);
            call(group, in, out);
            return out;
        }
        @Override public void onAssignment(Assignment a, ConsumerGroupMetadata md) {
            super.onAssignment(a, md);
            received(group, md, a);
        }
    }

    public static final class RoundRobin extends RoundRobinAssignor implements Configurable {
        private String group = "";
        @Override public void configure(Map<String, ?> configs) { group = group(configs); }
        @Override public GroupAssignment assign(Cluster metadata, GroupSubscription gs) {
            Input in = input(metadata, gs, null);
            GroupAssignment out = super.assign(metadata, gs);
            call(group, in, out);
            return out;
        }
        @Override public void onAssignment(Assignment a, ConsumerGroupMetadata md) {
            super.onAssignment(a, md);
            received(group, md, a);
        }
    }

    public static final class Sticky extends StickyAssignor implements Configurable {
        private String group = "";
        @Override public void configure(Map<String, ?> configs) { group = group(configs); }
        @Override public GroupAssignment assign(Cluster metadata, GroupSubscription gs) {
            Input in = input(metadata, gs, this::memberData);
            GroupAssignment out = super.assign(metadata, gs);
            call(group, in, out);
            return out;
        }
        @Override public void onAssignment(Assignment a, ConsumerGroupMetadata md) {
            super.onAssignment(a, md);
            received(group, md, a);
        }
    }

    public static final class CooperativeSticky extends CooperativeStickyAssignor implements Configurable {
        private String group = "";
        @Override public void configure(Map<String, ?> configs) { group = group(configs); }
        @Override public GroupAssignment assign(Cluster metadata, GroupSubscription gs) {
            Input in = input(metadata, gs, this::memberData);
            GroupAssignment out = super.assign(metadata, gs);
            call(group, in, out);
            return out;
        }
        @Override public void onAssignment(Assignment a, ConsumerGroupMetadata md) {
            super.onAssignment(a, md);
            received(group, md, a);
        }
    }
}
