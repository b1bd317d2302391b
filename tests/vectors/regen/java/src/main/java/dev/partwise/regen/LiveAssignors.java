package dev.partwise.regen;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * Live classic groups of real KafkaConsumers (one thread each) for every
 * classic assignor of kafka-clients, through join/leave sequences, on equal
 * and unequal subscriptions. Writes tests/vectors/assignors/java_live_<assignor>.jsonl:
 * one line per assign() call of the group leader, with its exact input and
 * output, the generation it made and what every member received.
 */
final class LiveAssignors {
    /** A member: client id, `group.instance.id` (null: dynamic) and topics. */
    record Join(String client, String instance, List<String> topics) {}
    /** An event: members that join and/or leave at once. */
    record Event(String what, List<Join> joins, List<String> leaves) {}
    record Scenario(String name, Map<String, Integer> topics, List<Event> events) {}

    static Event join(String what, Join... js) { return new Event(what, List.of(js), List.of()); }
    static Event leave(String client) { return new Event("leave " + client, List.of(), List.of(client)); }
    static Join m(String client, String... topics) { return new Join(client, null, List.of(topics)); }
    static Join st(String client, String instance, String... topics) { return new Join(client, instance, List.of(topics)); }

    static List<Scenario> scenarios() {
        // Topic names are per scenario; the Join topics name them by suffix.
        List<Scenario> s = new ArrayList<>();
        s.add(new Scenario("equal-6x6", ordered("a", 6, "b", 6), List.of(
                join("start c0 c1 c2", m("c0", "a", "b"), m("c1", "a", "b"), m("c2", "a", "b")),
                leave("c1"),
                join("join c3", m("c3", "a", "b")),
                join("join c4", m("c4", "a", "b")))));
        s.add(new Scenario("counts-4-7-2", ordered("x", 4, "y", 7, "z", 2), List.of(
                join("start c0 c1 c2", m("c0", "x", "y", "z"), m("c1", "x", "y", "z"), m("c2", "x", "y", "z")),
                leave("c0"),
                join("join c3", m("c3", "x", "y", "z")))));
        s.add(new Scenario("unequal-subs", ordered("t1", 4, "t2", 6, "t3", 3), List.of(
                join("start c0 c1 c2", m("c0", "t1", "t2"), m("c1", "t2"), m("c2", "t1", "t2", "t3")),
                leave("c2"),
                join("join c3", m("c3", "t2", "t3")))));
        s.add(new Scenario("unequal-subs-2", ordered("p", 5, "q", 3), List.of(
                join("start c0 c1 c2", m("c0", "p", "q"), m("c1", "q"), m("c2", "p")),
                leave("c0"),
                join("join c3", m("c3", "p", "q")))));
        // Static members (group.instance.id; the assignors order them by it, and
        // the broker makes their member ids from it), instance ids in the reverse
        // order of the client ids. No leave: a static member's close() does not
        // leave the group.
        s.add(new Scenario("static-ids", ordered("s1", 5, "s2", 5), List.of(
                join("start c0 c1 c2", st("c0", "i-z", "s1", "s2"), st("c1", "i-m", "s1", "s2"), st("c2", "i-a", "s1", "s2")),
                join("join c3", st("c3", "i-b", "s1", "s2")))));
        return s;
    }

    static Map<String, Integer> ordered(Object... kv) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], (Integer) kv[i + 1]);
        return m;
    }

    /** partwise spec -> recording class of the real assignor. */
    static final Map<String, Class<?>> ASSIGNORS = new LinkedHashMap<>();
    static {
        ASSIGNORS.put("range", Recording.Range.class);
        ASSIGNORS.put("roundrobin", Recording.RoundRobin.class);
        ASSIGNORS.put("sticky", Recording.Sticky.class);
        ASSIGNORS.put("cooperative-sticky", Recording.CooperativeSticky.class);
    }

    /** What a member's poll loop last saw. */
    record View(String memberId, int generation, Set<TopicPartition> assignment) {}

    static final class Member implements Runnable {
        final String client;
        final List<String> topics;
        final Properties props;
        final AtomicBoolean stop = new AtomicBoolean();
        volatile View view = new View("", -1, Set.of());
        volatile Throwable failed;

        Member(String client, List<String> topics, Properties props) {
            this.client = client;
            this.topics = topics;
            this.props = props;
        }

        public void run() {
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
                c.subscribe(topics);
                while (!stop.get()) {
                    c.poll(Duration.ofMillis(100));
                    view = new View(c.groupMetadata().memberId(), c.groupMetadata().generationId(),
                            new HashSet<>(c.assignment()));
                }
            } catch (Throwable t) {
                failed = t;
            }
        }
    }

    static void run(Path repo, Map<String, String> flags) throws Exception {
        String bootstrap = Main.need(flags, "bootstrap");
        String only = flags.get("only");
        String nonce = Long.toHexString(System.currentTimeMillis());
        // Topics first, shared by every assignor's groups.
        List<Scenario> scenarios = scenarios();
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            List<NewTopic> nts = new ArrayList<>();
            for (Scenario s : scenarios) {
                for (Map.Entry<String, Integer> t : s.topics.entrySet()) {
                    nts.add(new NewTopic(topic(s, t.getKey()), t.getValue(), (short) 1));
                }
            }
            for (NewTopic nt : nts) {
                try {
                    admin.createTopics(List.of(nt)).all().get();
                } catch (java.util.concurrent.ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) throw e;
                }
            }
        }
        ExecutorService pool = Executors.newCachedThreadPool();
        List<Future<String>> runs = new ArrayList<>();
        for (Map.Entry<String, Class<?>> a : ASSIGNORS.entrySet()) {
            if (only != null && !only.equals(a.getKey())) continue;
            runs.add(pool.submit(() -> runAssignor(repo, bootstrap, nonce, a.getKey(), a.getValue(), scenarios)));
        }
        for (Future<String> f : runs) System.err.println(f.get());
        pool.shutdownNow();
        System.exit(0);
    }

    static String topic(Scenario s, String suffix) {
        return "pwj-" + s.name + "-" + suffix;
    }

    static String runAssignor(Path repo, String bootstrap, String nonce, String spec, Class<?> cls,
                              List<Scenario> scenarios) throws Exception {
        StringBuilder out = new StringBuilder();
        int lines = 0;
        for (Scenario s : scenarios) {
            String group = "pwj-" + spec + "-" + s.name + "-" + nonce;
            Map<String, Member> live = new LinkedHashMap<>();
            Map<String, Thread> threads = new ConcurrentHashMap<>();
            int settledGen = -1;
            long seqFrom = 0;
            for (int ei = 0; ei < s.events.size(); ei++) {
                Event e = s.events.get(ei);
                for (String c : e.leaves) {
                    Member m = live.remove(c);
                    m.stop.set(true);
                    threads.get(c).join(30_000);
                }
                for (Join j : e.joins) {
                    Properties p = new Properties();
                    p.put("bootstrap.servers", bootstrap);
                    p.put("group.id", group);
                    // Java member ids are client.id + "-" + UUID: the client ids fix their order.
                    p.put("client.id", "pwj-" + j.client);
                    p.put("partition.assignment.strategy", cls.getName());
                    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
                    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
                    p.put("enable.auto.commit", "false");
                    p.put("auto.offset.reset", "earliest");
                    p.put("heartbeat.interval.ms", "300");
                    p.put("session.timeout.ms", "10000");
                    p.put("group.protocol", "classic");
                    if (j.instance != null) p.put("group.instance.id", j.instance);
                    List<String> topics = j.topics.stream().map(t -> topic(s, t)).toList();
                    Member m = new Member(j.client, topics, p);
                    live.put(j.client, m);
                    Thread t = new Thread(m, group + "-" + j.client);
                    threads.put(j.client, t);
                    t.start();
                }
                settledGen = settle(s, group, live, settledGen, spec);
                // Every leader call of this event, with the generation it made.
                List<Recording.Call> calls;
                synchronized (Recording.class) {
                    final long from = seqFrom;
                    calls = Recording.CALLS.stream().filter(c -> c.group().equals(group) && c.seq() >= from).toList();
                    seqFrom = Recording.CALLS.isEmpty() ? 0 : Recording.CALLS.get(Recording.CALLS.size() - 1).seq() + 1;
                }
                for (int ci = 0; ci < calls.size(); ci++) {
                    Recording.Call c = calls.get(ci);
                    Integer gen = generationOf(group, c);
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("assignor", "java:" + spec);
                    line.put("class", cls.getSuperclass().getName());
                    line.put("scenario", s.name);
                    line.put("event", ei);
                    line.put("what", e.what);
                    line.put("call", ci);
                    line.put("generation", gen);
                    line.put("settled", ci == calls.size() - 1);
                    line.put("topics", c.topics());
                    line.put("members", c.members());
                    line.put("assignment", c.output());
                    if (ci == calls.size() - 1) {
                        // The consumers' own assignment() once the group settled.
                        Map<String, Object> seen = new TreeMap<>();
                        for (Member m : live.values()) seen.put(m.view.memberId(), Json.sorted(m.view.assignment()));
                        line.put("consumers", seen);
                    }
                    line.put("kafka_clients", AppInfoParser.getVersion());
                    line.put("broker", "Apache Kafka 4.1.1 (scripts/kafka-up), 127.0.0.1");
                    out.append(Json.of(line)).append('\n');
                    lines++;
                }
            }
            for (Map.Entry<String, Member> m : live.entrySet()) {
                m.getValue().stop.set(true);
                threads.get(m.getKey()).join(30_000);
            }
        }
        Path file = repo.resolve("tests/vectors/assignors/java_live_" + spec.replace('-', '_') + ".jsonl");
        Files.writeString(file, out.toString(), StandardCharsets.UTF_8);
        return "wrote " + file + " (" + lines + " lines)";
    }

    /** The generation whose onAssignment() calls received exactly this call's output. */
    static Integer generationOf(String group, Recording.Call c) {
        synchronized (Recording.class) {
            Map<Integer, Map<String, List<TopicPartition>>> byGen = new TreeMap<>();
            for (Recording.Received r : Recording.RECEIVED) {
                if (r.group().equals(group)) byGen.computeIfAbsent(r.generation(), g -> new TreeMap<>()).put(r.memberId(), r.partitions());
            }
            for (Map.Entry<Integer, Map<String, List<TopicPartition>>> g : byGen.entrySet()) {
                if (g.getValue().equals(new TreeMap<>(c.output()))) return g.getKey();
            }
            return null;
        }
    }

    /**
     * Waits until every live member polls in one generation newer than `after`,
     * together owning every subscribed partition exactly once, for 1.5 s on end
     * (a cooperative first round leaves partitions out, so it never settles).
     */
    static int settle(Scenario s, String group, Map<String, Member> live, int after, String spec) throws Exception {
        Set<TopicPartition> all = new HashSet<>();
        for (Member m : live.values()) {
            for (String t : m.topics) {
                String suffix = t.substring(("pwj-" + s.name + "-").length());
                for (int p = 0; p < s.topics.get(suffix); p++) all.add(new TopicPartition(t, p));
            }
        }
        long deadline = System.currentTimeMillis() + 90_000;
        long since = -1;
        int gen = -1;
        while (System.currentTimeMillis() < deadline) {
            for (Member m : live.values()) {
                if (m.failed != null) throw new IllegalStateException(group + " " + m.client + " failed", m.failed);
            }
            Set<Integer> gens = new HashSet<>();
            List<TopicPartition> owned = new ArrayList<>();
            for (Member m : live.values()) {
                gens.add(m.view.generation());
                owned.addAll(m.view.assignment());
            }
            boolean ok = gens.size() == 1 && gens.iterator().next() > after
                    && owned.size() == all.size() && new HashSet<>(owned).equals(all);
            if (ok) {
                int g = gens.iterator().next();
                if (g != gen) {
                    gen = g;
                    since = System.currentTimeMillis();
                } else if (System.currentTimeMillis() - since > 1500) {
                    return g;
                }
            } else {
                gen = -1;
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(group + ": did not settle within 90 s");
    }
}
