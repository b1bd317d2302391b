package dev.partwise.regen;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Utils;

/**
 * Key partitioning of the real kafka-clients jar: BuiltInPartitioner.partitionForKey
 * (toPositive(murmur2(key)) % n) over the generated corpus, and with --bootstrap the
 * same keys produced by a KafkaProducer (default partitioner) to topics of every
 * count, the partition taken from each RecordMetadata.
 */
final class Partitioners {
    static final int[] COUNTS = {1, 2, 3, 6, 7, 8, 12, 100, 1000};
    private static final Pattern LINE = Pattern.compile("^\\{\"key_hex\":\"([0-9a-f]*)\",\"key\":(.*)\\}$");

    record Key(byte[] bytes, String line) {}

    static void run(Path repo, Map<String, String> flags) throws Exception {
        Path vectors = repo.resolve("tests/vectors/generated");
        List<Key> keys = new ArrayList<>();
        for (String l : Files.readAllLines(vectors.resolve("keys.jsonl"), StandardCharsets.UTF_8)) {
            if (l.isBlank()) continue;
            Matcher m = LINE.matcher(l);
            if (!m.matches()) throw new IllegalStateException("keys.jsonl: unexpected line " + l);
            keys.add(new Key(HexFormat.of().parseHex(m.group(1)), l));
        }
        // Utils.murmur2 against the answer of kafka-clients' own UtilsTest.testMurmur2
        // ("21" -> -973932308), so a wrong jar on the classpath cannot pass unnoticed.
        if (Utils.murmur2("21".getBytes(StandardCharsets.UTF_8)) != -973932308) {
            throw new IllegalStateException("Utils.murmur2 disagrees with UtilsTest");
        }
        StringBuilder out = new StringBuilder();
        Map<String, Integer> want = new HashMap<>();
        for (Key k : keys) {
            for (int n : COUNTS) {
                int p = BuiltInPartitioner.partitionForKey(k.bytes, n);
                if (p != Utils.toPositive(Utils.murmur2(k.bytes)) % n) {
                    throw new IllegalStateException("partitionForKey is not toPositive(murmur2) % n");
                }
                want.put(HexFormat.of().formatHex(k.bytes) + "/" + n, p);
                String base = k.line.substring(0, k.line.length() - 1);
                out.append(base).append(",\"partitions\":").append(n).append(",\"partition\":").append(p).append("}\n");
            }
        }
        Path file = vectors.resolve("java_kafka_clients_partitioner.jsonl");
        Files.writeString(file, out.toString(), StandardCharsets.UTF_8);
        System.err.println("wrote " + file + " (" + keys.size() * COUNTS.length + " lines, kafka-clients "
                + AppInfoParser.getVersion() + ")");
        String bootstrap = flags.get("bootstrap");
        if (bootstrap == null) return;
        Map<String, Object> run = endToEnd(bootstrap, keys, want);
        Path runFile = vectors.resolve("java_kafka_clients_run.json");
        Files.writeString(runFile, Json.of(run) + "\n", StandardCharsets.UTF_8);
        System.err.println("wrote " + runFile);
    }

    /** Produces every key to a topic of every count; every RecordMetadata partition must equal partitionForKey. */
    static Map<String, Object> endToEnd(String bootstrap, List<Key> keys, Map<String, Integer> want) throws Exception {
        String prefix = "pwj-part-" + Long.toHexString(System.nanoTime());
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            List<NewTopic> topics = new ArrayList<>();
            for (int n : COUNTS) topics.add(new NewTopic(prefix + "-n" + n, n, (short) 1));
            admin.createTopics(topics).all().get();
        }
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", ByteArraySerializer.class.getName());
        pp.put("value.serializer", ByteArraySerializer.class.getName());
        pp.put("acks", "all");
        pp.put("linger.ms", "5");
        int produced = 0, mismatched = 0;
        List<String> mismatches = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
            for (int n : COUNTS) {
                String topic = prefix + "-n" + n;
                // Metadata first: a keyed record is partitioned over the partition count the producer knows.
                while (producer.partitionsFor(topic).size() != n) Thread.sleep(100);
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (Key k : keys) fs.add(producer.send(new ProducerRecord<>(topic, k.bytes, new byte[0])));
                for (int i = 0; i < keys.size(); i++) {
                    int got = fs.get(i).get().partition();
                    String id = HexFormat.of().formatHex(keys.get(i).bytes) + "/" + n;
                    produced++;
                    if (got != want.get(id)) {
                        mismatched++;
                        mismatches.add(id + " produced to " + got + ", partitionForKey " + want.get(id));
                    }
                }
            }
        }
        if (mismatched > 0) {
            mismatches.forEach(System.err::println);
            throw new IllegalStateException(mismatched + " records landed elsewhere than partitionForKey says");
        }
        System.err.println("end to end: " + produced + " records produced, every partition as partitionForKey");
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("kafka_clients", AppInfoParser.getVersion());
        run.put("java", System.getProperty("java.version"));
        run.put("broker", "Apache Kafka (scripts/kafka-up), 127.0.0.1");
        run.put("partition_counts", java.util.Arrays.stream(COUNTS).boxed().toList());
        run.put("keys", keys.size());
        run.put("records_produced", produced);
        run.put("records_elsewhere", mismatched);
        return run;
    }
}
