// partwise's copartitioned assignor for the consumer group protocol of KIP-848: the broker-side
// plug-in (group.consumer.assignors). It adapts the group coordinator's view of a group to
// Copartitioned.assign, the placement every partwise implementation runs, and back.
package dev.partwise;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;
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
 * <p>It runs {@link Copartitioned#assign}, the placement of {@link CopartitionedAssignor} and of
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

    /** A member's target partitions, by topic id. */
    private record Target(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec group, SubscribedTopicDescriber topics) throws PartitionAssignorException {
        Map<String, Uuid> ids = new HashMap<>();
        List<Copartitioned.Member> members = new ArrayList<>();
        for (String id : group.memberIds()) {
            MemberSubscription s = group.memberSubscription(id);
            List<String> subscribed = new ArrayList<>();
            for (Uuid t : s.subscribedTopicIds()) {
                String k = key(t);
                ids.put(k, t);
                subscribed.add(k);
            }
            List<TopicPartition> owned = new ArrayList<>();
            MemberAssignment current = group.memberAssignment(id);
            if (current != null) {
                for (Map.Entry<Uuid, Set<Integer>> e : current.partitions().entrySet()) {
                    String k = key(e.getKey());
                    for (int p : e.getValue()) {
                        owned.add(new TopicPartition(k, p));
                    }
                }
            }
            members.add(new Copartitioned.Member(id, s.instanceId().orElse(null), subscribed, owned));
        }
        // numPartitions is -1 for a topic the metadata no longer has: its subscriptions are ignored.
        Copartitioned.Result r = Copartitioned.assign(members, k -> {
            int n = topics.numPartitions(ids.get(k));
            return n < 0 ? null : n;
        });
        Map<String, MemberAssignment> out = new HashMap<>();
        for (Map.Entry<String, List<TopicPartition>> e : r.partitions().entrySet()) {
            Map<Uuid, Set<Integer>> byTopic = new HashMap<>();
            for (TopicPartition tp : e.getValue()) {
                byTopic.computeIfAbsent(ids.get(tp.topic()), t -> new TreeSet<>()).add(tp.partition());
            }
            out.put(e.getKey(), new Target(byTopic));
        }
        return new GroupAssignment(out);
    }

    /**
     * A topic id as a name for {@link Copartitioned}, which orders topics by code point: 32 hex
     * digits of the two halves with their sign bits flipped, so that the order of the strings is
     * the signed order of {@link Uuid#compareTo}.
     */
    static String key(Uuid id) {
        return String.format("%016x%016x", id.getMostSignificantBits() ^ Long.MIN_VALUE,
                id.getLeastSignificantBits() ^ Long.MIN_VALUE);
    }
}
