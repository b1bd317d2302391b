// partwise's copartitioned assignor for classic-protocol Java consumers: the consumer-side
// plug-in (protocol name, subscription user data, what a member remembers of its
// assignment). The placement itself is Copartitioned.java.
package dev.partwise;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

/**
 * Keeps partition p of every co-partitioned topic in one consumer: use it with
 * {@code partition.assignment.strategy=dev.partwise.CopartitionedAssignor}. Topics with the
 * same partition count and the same subscribers form a co-partition group; partition p of a
 * group's topics is one unit, and units go whole to members, sticky across generations. It is
 * a port of the Rust core's assignor, so a Java leader and a partwise (Rust) leader give the
 * same group the same assignment and the same user data.
 *
 * <p>The rebalance protocol is EAGER: Java's coordinator rejects a COOPERATIVE assignor that
 * hands a partition straight to its next owner, and the Rust leader does exactly that. Under
 * EAGER the Java consumer revokes everything before it joins, so its standard owned partitions
 * are empty; the member therefore also sends what it owned in its subscription user data,
 * which the leader reads when the standard field is empty.
 */
public class CopartitionedAssignor implements ConsumerPartitionAssignor {
    /** The group protocol name, shared with partwise's Rust and KafkaJS members. */
    public static final String NAME = "copartitioned";

    /** Marks owned partitions in subscription user data, so foreign bytes are never read as them. */
    private static final byte[] OWNED_MAGIC = {'p', 'w', 'o', 0};

    private volatile List<TopicPartition> owned = List.of();
    private volatile int generation = -1;

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<RebalanceProtocol> supportedProtocols() {
        return List.of(RebalanceProtocol.EAGER);
    }

    @Override
    public ByteBuffer subscriptionUserData(Set<String> topics) {
        return encodeOwned(owned, generation);
    }

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        owned = List.copyOf(assignment.partitions());
        generation = metadata == null ? -1 : metadata.generationId();
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
        List<Copartitioned.Member> members = new ArrayList<>();
        List<String> unreadable = new ArrayList<>();
        for (Map.Entry<String, Subscription> e : groupSubscription.groupSubscription().entrySet()) {
            Subscription s = e.getValue();
            if (unreadable(s)) {
                unreadable.add(e.getKey());
                continue;
            }
            List<TopicPartition> claims = s.ownedPartitions();
            if (claims.isEmpty()) {
                claims = decodeOwned(s.userData());
            }
            members.add(new Copartitioned.Member(
                    e.getKey(), s.groupInstanceId().orElse(null), s.topics(), claims));
        }
        Copartitioned.Result r = Copartitioned.assign(members, metadata::partitionCountForTopic);
        ByteBuffer groups = ByteBuffer.wrap(r.userData());
        Map<String, Assignment> out = new java.util.HashMap<>();
        for (Map.Entry<String, List<TopicPartition>> e : r.partitions().entrySet()) {
            out.put(e.getKey(), new Assignment(e.getValue(), groups.duplicate()));
        }
        for (String id : unreadable) {
            System.err.println("partwise copartitioned assignor: gave member " + id
                    + " nothing: its subscription names a topic that is not UTF-8; the others are"
                    + " assigned as if it were absent. Fix or stop that client");
            out.put(id, new Assignment(List.of(), groups.duplicate()));
        }
        return new GroupAssignment(out);
    }

    /**
     * Whether a member's subscription could not be read. kafka-clients decodes topic names
     * leniently: bytes that are not UTF-8 become U+FFFD, which no legal topic name holds (only
     * letters, digits, '.', '_' and '-'). The Rust leader refuses such bytes and gives that
     * member nothing; so does this one, so both leaders give the group the same assignment.
     */
    static boolean unreadable(Subscription s) {
        for (String t : s.topics()) {
            if (t.indexOf('\uFFFD') >= 0) {
                return true;
            }
        }
        for (TopicPartition tp : s.ownedPartitions()) {
            if (tp.topic().indexOf('\uFFFD') >= 0) {
                return true;
            }
        }
        return false;
    }

    /** The co-partition groups a leader put in {@code assignment}, or null if it put none. */
    public static List<List<String>> unitGroups(Assignment assignment) {
        return Copartitioned.decodeUnitGroups(assignment.userData());
    }

    /** Owned partitions and their generation as subscription user data. */
    static ByteBuffer encodeOwned(List<TopicPartition> parts, int generation) {
        Map<String, List<Integer>> byTopic = new java.util.TreeMap<>();
        for (TopicPartition tp : parts) {
            byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
        }
        int size = OWNED_MAGIC.length + 8;
        for (Map.Entry<String, List<Integer>> e : byTopic.entrySet()) {
            size += 2 + e.getKey().getBytes(StandardCharsets.UTF_8).length + 4 + 4 * e.getValue().size();
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.put(OWNED_MAGIC).putInt(generation).putInt(byTopic.size());
        for (Map.Entry<String, List<Integer>> e : byTopic.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            b.putShort((short) name.length).put(name).putInt(e.getValue().size());
            for (int p : e.getValue()) {
                b.putInt(p);
            }
        }
        return b.flip();
    }

    /** The owned partitions in user data written by {@link #encodeOwned}; empty for anything else. */
    static List<TopicPartition> decodeOwned(ByteBuffer data) {
        if (data == null) {
            return List.of();
        }
        ByteBuffer b = data.duplicate();
        try {
            for (byte m : OWNED_MAGIC) {
                if (b.get() != m) {
                    return List.of();
                }
            }
            b.getInt();
            int topics = b.getInt();
            List<TopicPartition> out = new ArrayList<>();
            for (int t = 0; t < topics; t++) {
                byte[] name = new byte[b.getShort()];
                b.get(name);
                String topic = new String(name, StandardCharsets.UTF_8);
                int n = b.getInt();
                if (n < 0 || n > b.remaining() / 4) {
                    return List.of();
                }
                for (int i = 0; i < n; i++) {
                    out.add(new TopicPartition(topic, b.getInt()));
                }
            }
            return b.hasRemaining() ? List.of() : Collections.unmodifiableList(out);
        } catch (RuntimeException e) {
            // Truncated or foreign bytes: no claims, as if the member owned nothing.
            return List.of();
        }
    }
}
