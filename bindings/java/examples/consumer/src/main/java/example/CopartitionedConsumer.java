// A Java consumer group over two co-partitioned topics with partwise's assignor, as a Java team
// writes it: two members, every record handled by the member that holds its whole unit
// (partition p of both topics). It checks what it shows and exits 1 when a check fails, so
// bindings/java/examples/test runs it as the packaging test.
//
//   java -cp ... example.CopartitionedConsumer BOOTSTRAP classic    # CopartitionedAssignor (client-side)
//   java -cp ... example.CopartitionedConsumer BOOTSTRAP consumer   # the broker's copartitioned assignor
package example;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class CopartitionedConsumer {
    private static final int PARTITIONS = 6;
    private static final int RECORDS = 1000;

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[1].equals("classic") || args[1].equals("consumer"))) {
            System.err.println("usage: CopartitionedConsumer BOOTSTRAP classic|consumer");
            System.exit(2);
        }
        String bootstrap = args[0], protocol = args[1];
        String run = "pw-example-" + protocol + "-" + System.currentTimeMillis();
        String orders = run + "-orders", payments = run + "-payments";
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
            admin.createTopics(List.of(new NewTopic(orders, PARTITIONS, (short) 1),
                    new NewTopic(payments, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }

        // The consumer's settings: these lines are all partwise asks of an application.
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", run);
        p.put("group.protocol", protocol);
        if (protocol.equals("classic")) {
            p.put("partition.assignment.strategy", "dev.partwise.CopartitionedAssignor");
        } else {
            p.put("group.remote.assignor", "copartitioned");
        }
        p.put("auto.offset.reset", "earliest");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());

        Set<String> handled = ConcurrentHashMap.newKeySet();
        Map<String, Set<TopicPartition>> assigned = new ConcurrentHashMap<>();
        AtomicInteger halfUnitRecords = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> members = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (String name : List.of("member-1", "member-2")) {
            Thread t = new Thread(() -> {
                try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p)) {
                    c.subscribe(List.of(orders, payments));
                    while (!stop.get()) {
                        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                            // The other topic's partition of this record's unit is here too.
                            String other = r.topic().equals(orders) ? payments : orders;
                            if (!c.assignment().contains(new TopicPartition(other, r.partition()))) {
                                halfUnitRecords.incrementAndGet();
                            }
                            handled.add(r.topic() + "/" + r.partition() + "/" + r.offset());
                        }
                        assigned.put(name, Set.copyOf(c.assignment()));
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, name);
            t.start();
            members.add(t);
        }

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String failure = null;
        // Both members hold whole units, every partition once: then produce.
        while (!settled(assigned, orders, payments)) {
            if (System.nanoTime() > deadline || !failures.isEmpty()) {
                failure = "the group did not settle into two members holding whole units: " + assigned;
                break;
            }
            Thread.sleep(50);
        }
        if (failure == null) {
            Properties pp = new Properties();
            pp.put("bootstrap.servers", bootstrap);
            pp.put("key.serializer", StringSerializer.class.getName());
            pp.put("value.serializer", StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
                for (int i = 0; i < RECORDS; i++) {
                    // The same key in both topics: the default partitioner puts it in the same partition.
                    producer.send(new ProducerRecord<>(orders, "customer-" + i, "order " + i));
                    producer.send(new ProducerRecord<>(payments, "customer-" + i, "payment " + i));
                }
            }
            while (handled.size() < 2 * RECORDS && System.nanoTime() < deadline && failures.isEmpty()) {
                Thread.sleep(50);
            }
            if (handled.size() != 2 * RECORDS) {
                failure = "handled " + handled.size() + " of " + 2 * RECORDS + " records";
            } else if (halfUnitRecords.get() > 0) {
                failure = halfUnitRecords.get() + " records were handled by a member without the rest of their unit";
            }
        }
        String assignor = null;
        if (failure == null) {
            try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(run)).all()
                        .get(30, TimeUnit.SECONDS).get(run);
                assignor = d.partitionAssignor();
                if (!"copartitioned".equals(assignor)) {
                    failure = "the broker reports the group's assignor as '" + assignor + "', not copartitioned";
                }
            }
        }
        stop.set(true);
        for (Thread t : members) {
            t.join(30_000);
        }
        if (!failures.isEmpty()) {
            failures.get(0).printStackTrace();
            failure = "a member failed: " + failures.get(0);
        }
        if (failure != null) {
            System.err.println("example (" + protocol + "): FAILED: " + failure);
            System.exit(1);
        }
        System.out.println("example (" + protocol + "): 2 members, assignor " + assignor + ", "
                + handled.size() + " records handled, each by the member holding its whole unit; "
                + "member-1 " + units(assigned.get("member-1"), orders) + ", member-2 "
                + units(assigned.get("member-2"), orders));
    }

    /** Two members, each with whole units (partition p of both topics or of neither), every partition once. */
    static boolean settled(Map<String, Set<TopicPartition>> assigned, String a, String b) {
        if (assigned.size() != 2) {
            return false;
        }
        Set<TopicPartition> all = new HashSet<>();
        for (Set<TopicPartition> mine : assigned.values()) {
            if (mine.isEmpty()) {
                return false;
            }
            for (int q = 0; q < PARTITIONS; q++) {
                if (mine.contains(new TopicPartition(a, q)) != mine.contains(new TopicPartition(b, q))) {
                    return false;
                }
            }
            for (TopicPartition tp : mine) {
                if (!all.add(tp)) {
                    return false;
                }
            }
        }
        return all.size() == 2 * PARTITIONS;
    }

    static String units(Set<TopicPartition> mine, String topic) {
        List<Integer> ps = new ArrayList<>();
        for (TopicPartition tp : mine) {
            if (tp.topic().equals(topic)) {
                ps.add(tp.partition());
            }
        }
        ps.sort(null);
        return "units " + ps;
    }
}
