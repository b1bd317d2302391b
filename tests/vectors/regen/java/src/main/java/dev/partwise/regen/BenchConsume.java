package dev.partwise.regen;

import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Java peer of bench/compare-group: one KafkaConsumer (range assignor)
 * in a fresh group, printing `topic partition offset key` per record to
 * stdout (flushed after every poll, so the reader sees the last record when
 * it is consumed) and `assigned: ...` on stderr from its rebalance listener,
 * as kcat -G does. Runs until SIGTERM.
 */
final class BenchConsume {
    static void run(Map<String, String> flags) {
        Properties p = new Properties();
        p.put("bootstrap.servers", Main.need(flags, "bootstrap"));
        p.put("group.id", Main.need(flags, "group"));
        p.put("partition.assignment.strategy", RangeAssignor.class.getName());
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("group.protocol", "classic");
        p.put("session.timeout.ms", flags.getOrDefault("session-timeout-ms", "45000"));
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p);
        AtomicBoolean stop = new AtomicBoolean();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.set(true);
            c.wakeup();
        }));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.UTF_8);
        c.subscribe(Arrays.asList(Main.need(flags, "topics").split(",")), new ConsumerRebalanceListener() {
            @Override public void onPartitionsRevoked(Collection<TopicPartition> ps) {}
            @Override public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                System.err.println("% Group " + p.get("group.id") + " rebalanced: assigned: " + ps);
                System.err.flush();
            }
        });
        StringBuilder b = new StringBuilder();
        try {
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(100));
                if (rs.isEmpty()) continue;
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    b.setLength(0);
                    b.append(r.topic()).append(' ').append(r.partition()).append(' ').append(r.offset()).append(' ');
                    if (r.key() != null) b.append(new String(r.key(), StandardCharsets.UTF_8));
                    b.append('\n');
                    out.print(b);
                }
                out.flush();
            }
        } catch (WakeupException ignored) {
            // SIGTERM
        } finally {
            out.flush();
            c.close();
        }
    }
}
