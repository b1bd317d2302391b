// One KafkaConsumer group member for the live tests (LiveTest here, and the three-runtime
// group of bindings/kafkajs/tests/live): prints `assigned MEMBER GENERATION T:P,...` on every
// assignment and `record T P OFFSET KEY_HEX` for every record it handles (committed after
// printing: at least once), and leaves the group when its standard input closes.
//   LiveMember BOOTSTRAP GROUP T1,T2            classic protocol, CopartitionedAssignor; prints
//                                               `led` when it computes a generation's assignment
//   LiveMember BOOTSTRAP GROUP T1,T2 consumer   consumer protocol (KIP-848) with
//                                               group.remote.assignor=copartitioned: the broker
//                                               assigns; GENERATION is the member epoch
package dev.partwise;

import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class LiveMember {
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** CopartitionedAssignor, saying when this member leads (only the leader assigns). */
    public static final class Leading extends CopartitionedAssignor {
        @Override
        public GroupAssignment assign(org.apache.kafka.common.Cluster metadata, GroupSubscription subscription) {
            GroupAssignment a = super.assign(metadata, subscription);
            say("led");
            return a;
        }
    }

    private static String hex(byte[] b) {
        if (b == null) {
            return "-";
        }
        StringBuilder s = new StringBuilder(2 * b.length);
        for (byte x : b) {
            s.append(Character.forDigit((x >> 4) & 15, 16)).append(Character.forDigit(x & 15, 16));
        }
        return s.length() == 0 ? "-" : s.toString();
    }

    private static String assigned(KafkaConsumer<byte[], byte[]> c, Collection<TopicPartition> parts) {
        List<String> names = new ArrayList<>();
        for (TopicPartition tp : parts) {
            names.add(tp.topic() + ":" + tp.partition());
        }
        java.util.Collections.sort(names);
        return "assigned " + c.groupMetadata().memberId() + " " + c.groupMetadata().generationId() + " "
                + (names.isEmpty() ? "-" : String.join(",", names));
    }

    public static void main(String[] args) {
        String bootstrap = args[0], group = args[1];
        List<String> topics = Arrays.asList(args[2].split(","));
        boolean consumerProtocol = args.length > 3 && args[3].equals("consumer");
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        if (consumerProtocol) {
            // The assignor, session timeout and heartbeat interval are the broker's (group configs).
            p.put("group.protocol", "consumer");
            p.put("group.remote.assignor", BrokerCopartitionedAssignor.NAME);
        } else {
            p.put("group.protocol", "classic");
            p.put("partition.assignment.strategy", Leading.class.getName());
            p.put("heartbeat.interval.ms", "500");
            p.put("session.timeout.ms", "6000");
        }
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        AtomicBoolean stop = new AtomicBoolean();
        Thread stdin = new Thread(() -> {
            try (InputStream in = System.in) {
                while (in.read() >= 0) {
                    // only EOF matters
                }
            } catch (Exception ignored) {
                // a closed stdin ends the member the same way
            }
            stop.set(true);
            c.wakeup();
        });
        stdin.setDaemon(true);
        stdin.start();
        c.subscribe(topics, new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> parts) {}

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                // The consumer protocol's callbacks name only what changed: the poll loop prints.
                if (!consumerProtocol) {
                    say(assigned(c, parts));
                }
            }
        });
        String last = null;
        try {
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> rs;
                try {
                    rs = c.poll(Duration.ofMillis(100));
                } catch (WakeupException e) {
                    break;
                }
                if (consumerProtocol) {
                    // The whole set after each poll: a partition arrives only once its previous
                    // owner revoked it, so a set may hold half a unit for a poll or two.
                    String now = assigned(c, c.assignment());
                    if (!now.equals(last) && c.groupMetadata().generationId() >= 0) {
                        say(now);
                        last = now;
                    }
                }
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    say("record " + r.topic() + " " + r.partition() + " " + r.offset() + " " + hex(r.key()));
                }
                if (!rs.isEmpty()) {
                    try {
                        c.commitSync();
                    } catch (WakeupException e) {
                        break;
                    } catch (RuntimeException e) {
                        // A rebalance took the partitions: their records come again to the next owner.
                        System.err.println("commit: " + e);
                    }
                }
            }
        } finally {
            c.close();
        }
        Runtime.getRuntime().halt(0);
    }
}
