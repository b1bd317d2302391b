package dev.partwise.regen;

import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One plain KafkaConsumer group member for live tests: prints an NDJSON
 * `assigned` line (member id, generation, partitions) each time its
 * assignment or generation changes, and leaves the group and exits 0 when
 * its standard input closes (or on SIGTERM).
 */
final class MemberProcess {
    static final Map<String, String> STRATEGIES = Map.of(
            "range", RangeAssignor.class.getName(),
            "roundrobin", RoundRobinAssignor.class.getName(),
            "sticky", StickyAssignor.class.getName(),
            "cooperative-sticky", CooperativeStickyAssignor.class.getName());

    static void run(Map<String, String> flags) throws Exception {
        String strategy = flags.getOrDefault("strategy", "range");
        if (flags.getOrDefault("group-protocol", "classic").equals("classic") && !STRATEGIES.containsKey(strategy)) {
            System.err.println("--strategy: one of " + STRATEGIES.keySet());
            System.exit(2);
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", Main.need(flags, "bootstrap"));
        p.put("group.id", Main.need(flags, "group"));
        p.put("client.id", flags.getOrDefault("client-id", "pwj-member"));
        String protocol = flags.getOrDefault("group-protocol", "classic");
        if (protocol.equals("classic")) {
            p.put("partition.assignment.strategy", STRATEGIES.get(strategy));
        } else {
            // KIP-848: the broker assigns; --strategy names its assignor (uniform, range).
            p.put("group.remote.assignor", flags.getOrDefault("strategy", "uniform"));
        }
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("group.protocol", protocol);
        if (protocol.equals("classic")) {
            // The consumer protocol takes both from the broker.
            p.put("heartbeat.interval.ms", flags.getOrDefault("heartbeat-interval-ms", "500"));
            p.put("session.timeout.ms", flags.getOrDefault("session-timeout-ms", "10000"));
        }
        List<String> topics = Arrays.asList(Main.need(flags, "topics").split(","));
        AtomicBoolean stop = new AtomicBoolean();
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        Thread stdin = new Thread(() -> {
            try (InputStream in = System.in) {
                while (in.read() >= 0) { /* only EOF matters */ }
            } catch (Exception ignored) {
                // a closed stdin ends the member the same way
            }
            stop.set(true);
            c.wakeup();
        });
        stdin.setDaemon(true);
        stdin.start();
        Thread hook = new Thread(() -> {
            stop.set(true);
            c.wakeup();
        });
        Runtime.getRuntime().addShutdownHook(hook);
        c.subscribe(topics);
        String last = null;
        try {
            while (!stop.get()) {
                try {
                    c.poll(Duration.ofMillis(100));
                } catch (WakeupException e) {
                    break;
                }
                List<TopicPartition> now = Json.sorted(new ArrayList<>(c.assignment()));
                Map<String, Object> ev = new LinkedHashMap<>();
                ev.put("event", "assigned");
                ev.put("member", c.groupMetadata().memberId());
                ev.put("generation", c.groupMetadata().generationId());
                ev.put("partitions", now);
                String line = Json.of(ev);
                if (c.groupMetadata().generationId() > 0 && !line.equals(last)) {
                    System.out.println(line);
                    System.out.flush();
                    last = line;
                }
            }
        } finally {
            c.close();
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
