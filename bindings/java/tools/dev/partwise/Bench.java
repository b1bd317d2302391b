// One assign() at 1,000 members x 100,000 partitions (10 topics x 10,000, the shape of
// crates/partwise/benches/assign.rs), CopartitionedAssignor against kafka-clients' own
// CooperativeStickyAssignor, from scratch and after one member leaves (the others' owned
// partitions given), in one JVM: prints the median of the timed runs after warm-up runs.
package dev.partwise;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public final class Bench {
    static final int MEMBERS = 1_000, TOPICS = 10, PARTITIONS = 10_000;

    static double medianMs(ConsumerPartitionAssignor a, Cluster c, GroupSubscription g, int warm, int runs) {
        for (int i = 0; i < warm; i++) {
            a.assign(c, g);
        }
        double[] t = new double[runs];
        for (int i = 0; i < runs; i++) {
            long t0 = System.nanoTime();
            a.assign(c, g);
            t[i] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(t);
        return t[runs / 2];
    }

    public static void main(String[] args) {
        int warm = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        List<String> topics = new ArrayList<>();
        Node node = new Node(0, "localhost", 9092);
        List<PartitionInfo> infos = new ArrayList<>();
        for (int t = 0; t < TOPICS; t++) {
            topics.add("topic-" + t);
            for (int p = 0; p < PARTITIONS; p++) {
                infos.add(new PartitionInfo("topic-" + t, p, node, new Node[] {node}, new Node[] {node}));
            }
        }
        Cluster cluster = new Cluster("bench", List.of(node), infos, Set.of(), Set.of());
        Map<String, Subscription> scratch = new HashMap<>();
        for (int m = 0; m < MEMBERS; m++) {
            scratch.put(String.format("m%04d", m), new Subscription(topics, null, List.of(), -1, Optional.empty()));
        }
        System.out.printf("assign() at %d members x %d partitions (%d topics x %d), Java %s, kafka-clients %s; median of %d runs after %d warm-up%n",
                MEMBERS, TOPICS * PARTITIONS, TOPICS, PARTITIONS, System.getProperty("java.version"),
                org.apache.kafka.common.utils.AppInfoParser.getVersion(), runs, warm);
        for (ConsumerPartitionAssignor a : List.of(new CopartitionedAssignor(), new CooperativeStickyAssignor())) {
            GroupSubscription g = new GroupSubscription(scratch);
            double fresh = medianMs(a, cluster, g, warm, runs);
            Map<String, Assignment> first = a.assign(cluster, g).groupAssignment();
            Map<String, Subscription> left = new HashMap<>();
            for (Map.Entry<String, Subscription> e : scratch.entrySet()) {
                if (!e.getKey().equals(String.format("m%04d", MEMBERS / 2))) {
                    List<TopicPartition> owned = first.get(e.getKey()).partitions();
                    left.put(e.getKey(), new Subscription(topics, null, owned, 1, Optional.empty()));
                }
            }
            GroupSubscription gl = new GroupSubscription(left);
            double leave = medianMs(a, cluster, gl, warm, runs);
            Map<String, Assignment> second = a.assign(cluster, gl).groupAssignment();
            int moved = 0;
            for (Map.Entry<String, Assignment> e : second.entrySet()) {
                List<TopicPartition> before = first.get(e.getKey()).partitions();
                for (TopicPartition tp : e.getValue().partitions()) {
                    if (!before.contains(tp)) {
                        moved++;
                    }
                }
            }
            System.out.printf("%-28s scratch %9.1f ms   one member leaves %9.1f ms   (%d partitions handed to new owners)%n",
                    a.getClass().getSimpleName(), fresh, leave, moved);
        }
    }
}
