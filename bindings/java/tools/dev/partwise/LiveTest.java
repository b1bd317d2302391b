// The live Java group test: 1 to 6 LiveMember JVMs (kafka-clients, classic protocol,
// CopartitionedAssignor) over two topics of 6 partitions on a real broker, then churn
// (SIGKILL, join, leave). Every generation must give whole units (partition p of both topics
// to one member) and each partition to one member; once the group settles, every partition
// is owned once; every produced record is handled at least once. Exit 1 on a violation.
package dev.partwise;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

public final class LiveTest {
    static final int PARTITIONS = 6;
    static final List<String> failures = new ArrayList<>();
    // generation -> partition -> member that reported it
    static final Map<Integer, Map<String, String>> owners = new ConcurrentHashMap<>();
    static final Set<String> handled = ConcurrentHashMap.newKeySet();
    static final Set<String> produced = new HashSet<>();
    static String a, b;

    static synchronized void fail(String why) {
        if (failures.size() < 20) {
            System.err.println("VIOLATION: " + why);
        }
        failures.add(why);
    }

    static final class Member {
        final Process proc;
        volatile int generation = -1;
        volatile Set<String> parts = Set.of();
        volatile boolean alive = true;
        final String name;

        Member(String name, Process proc) {
            this.name = name;
            this.proc = proc;
            Thread t = new Thread(this::read);
            t.setDaemon(true);
            t.start();
        }

        void read() {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                // PARTWISE_LIVE_LOG=DIR keeps every member's raw output (DIR/NAME.log), to read a failed run.
                String logDir = System.getenv("PARTWISE_LIVE_LOG");
                java.io.PrintStream log = logDir == null ? null
                        : new java.io.PrintStream(new java.io.FileOutputStream(logDir + "/" + name + ".log"), true, StandardCharsets.UTF_8);
                while ((line = r.readLine()) != null) {
                    if (log != null) {
                        log.println(line);
                    }
                    if (line.startsWith("{")) {
                        line = fromNdjson(line);
                        if (line == null) {
                            continue;
                        }
                    }
                    String[] w = line.split(" ");
                    if (w[0].equals("record")) {
                        handled.add(w[1] + ":" + w[2] + ":" + w[3]);
                    } else if (w[0].equals("assigned")) {
                        int gen = Integer.parseInt(w[2]);
                        Set<String> got = w[3].equals("-") ? Set.of() : Set.of(w[3].split(","));
                        check(w[1], gen, got);
                        synchronized (this) {
                            parts = got;
                            generation = gen;
                        }
                    }
                }
            } catch (Exception e) {
                // the process died: its last assignment no longer counts
            }
        }
    }

    static final java.util.regex.Pattern FIELD = java.util.regex.Pattern.compile("\"(event|member|topic)\":\"([^\"]*)\"|\"(generation|partition|offset)\":(-?\\d+)");
    static final java.util.regex.Pattern TP = java.util.regex.Pattern.compile("\\[\"([^\"]+)\",(\\d+)\\]");

    /** A partwise kafka consume NDJSON line as LiveMember's text line; null for other events. */
    static String fromNdjson(String line) {
        Map<String, String> f = new HashMap<>();
        java.util.regex.Matcher m = FIELD.matcher(line);
        while (m.find()) {
            f.putIfAbsent(m.group(1) != null ? m.group(1) : m.group(3), m.group(1) != null ? m.group(2) : m.group(4));
        }
        if ("record".equals(f.get("event"))) {
            return "record " + f.get("topic") + " " + f.get("partition") + " " + f.get("offset");
        }
        if ("assigned".equals(f.get("event"))) {
            List<String> parts = new ArrayList<>();
            java.util.regex.Matcher t = TP.matcher(line);
            while (t.find()) {
                parts.add(t.group(1) + ":" + t.group(2));
            }
            return "assigned " + f.get("member") + " " + f.get("generation") + " " + (parts.isEmpty() ? "-" : String.join(",", parts));
        }
        return null;
    }

    static void check(String member, int gen, Set<String> got) {
        for (int p = 0; p < PARTITIONS; p++) {
            if (got.contains(a + ":" + p) != got.contains(b + ":" + p)) {
                fail("generation " + gen + ": " + member + " holds a split unit " + p + ": " + got);
            }
        }
        Map<String, String> gen_owners = owners.computeIfAbsent(gen, k -> new ConcurrentHashMap<>());
        for (String tp : got) {
            String before = gen_owners.putIfAbsent(tp, member);
            if (before != null && !before.equals(member)) {
                fail("generation " + gen + ": " + tp + " given to " + before + " and " + member);
            }
        }
    }

    static Member start(List<String> cmd, String name) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        return new Member(name, p);
    }

    /** Ends a member: SIGKILL, or a clean leave (stdin closed for Java, SIGTERM for partwise). */
    static void end(Member m, boolean kill) throws Exception {
        m.alive = false;
        if (kill) {
            m.proc.destroyForcibly();
        } else if (m.name.startsWith("rust")) {
            m.proc.destroy();
        } else {
            m.proc.getOutputStream().close();
        }
        m.proc.waitFor();
    }

    /** Waits until every live member is in one generation that owns each partition once. */
    static void settle(List<Member> members, String step) throws Exception {
        long deadline = System.currentTimeMillis() + 90_000;
        while (System.currentTimeMillis() < deadline) {
            Set<Integer> gens = new HashSet<>();
            List<String> all = new ArrayList<>();
            for (Member m : members) {
                if (m.alive) {
                    synchronized (m) {
                        gens.add(m.generation);
                        all.addAll(m.parts);
                    }
                }
            }
            if (gens.size() == 1 && !gens.contains(-1) && all.size() == 2 * PARTITIONS && new HashSet<>(all).size() == all.size()) {
                long live = members.stream().filter(m -> m.alive).count();
                System.out.println("live-test: " + step + ": " + live + " members, generation " + gens.iterator().next() + ", 12 partitions owned once");
                return;
            }
            Thread.sleep(200);
        }
        fail(step + ": the group did not settle with every partition owned once within 90s");
        throw new IllegalStateException(step);
    }

    static Map<Member, Set<String>> snapshot(List<Member> members) {
        Map<Member, Set<String>> out = new HashMap<>();
        for (Member m : members) {
            if (m.alive) {
                out.put(m, m.parts);
            }
        }
        return out;
    }

    /** After a member left, only its units moved: every survivor still holds what it held. */
    static void onlyTheirUnitsMoved(Map<Member, Set<String>> before, String step) {
        before.forEach((m, parts) -> {
            if (m.alive && !m.parts.containsAll(parts)) {
                fail(step + ": " + m.name + " lost partitions it held: before " + parts + ", after " + m.parts);
            }
        });
    }

    static void produce(KafkaProducer<String, String> prod, int n) throws Exception {
        List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            for (String t : List.of(a, b)) {
                sent.add(prod.send(new ProducerRecord<>(t, i % PARTITIONS, "k" + i, "v" + i)));
            }
        }
        for (var f : sent) {
            RecordMetadata md = f.get();
            produced.add(md.topic() + ":" + md.partition() + ":" + md.offset());
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String classpath = args[1];
        String tag = Long.toString(System.currentTimeMillis(), 36);
        a = "pwj-orders-" + tag;
        b = "pwj-payments-" + tag;
        String group = "pwj-group-" + tag;
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(a, PARTITIONS, (short) 1), new NewTopic(b, PARTITIONS, (short) 1))).all().get();
        }
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        List<String> cmd = List.of(System.getProperty("java.home") + "/bin/java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath, "dev.partwise.LiveMember", bootstrap, group, a + "," + b);
        // --mixed PARTWISE_BIN: partwise's Rust members (partwise kafka consume) alternate with Java ones.
        String rust = args.length > 3 && args[2].equals("--mixed") ? args[3] : null;
        List<String> rustCmd = rust == null ? null : List.of(rust, "kafka", "consume", "-b", bootstrap, "-g", group, "-t", a, "-t", b,
                "--assignor", "copartitioned", "--offset-reset", "earliest", "--format", "ndjson",
                "--session-timeout", "6s", "--heartbeat-interval", "500ms", "--commit-interval", "1s");
        List<Member> members = new ArrayList<>();
        int[] serial = {0};
        java.util.function.IntFunction<Member> spawn = k -> {
            try {
                boolean r = rustCmd != null && k % 2 == 1;
                return start(r ? rustCmd : cmd, (r ? "rust-" : "java-") + serial[0]++);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(pp)) {
            produce(prod, 60);
            for (int k = 1; k <= 6; k++) {
                members.add(spawn.apply(k - 1));
                settle(members, "join to " + k);
                produce(prod, 12);
            }
            // Churn in each runtime: a SIGKILL, a join, a clean leave, another SIGKILL.
            String[] steps = rustCmd == null
                    ? new String[] {"kill java", "join java", "leave java", "kill java"}
                    : new String[] {"kill java", "kill rust", "join java", "join rust", "leave java", "leave rust"};
            for (String step : steps) {
                String[] w = step.split(" ");
                if (w[0].equals("join")) {
                    members.add(spawn.apply(w[1].equals("rust") ? 1 : 0));
                    settle(members, step);
                } else {
                    Member victim = members.stream().filter(m -> m.alive && m.name.startsWith(w[1])).findFirst().orElseThrow();
                    Map<Member, Set<String>> before = snapshot(members);
                    end(victim, w[0].equals("kill"));
                    settle(members, step + " (" + victim.name + ")");
                    onlyTheirUnitsMoved(before, step);
                }
                produce(prod, 12);
            }
            long deadline = System.currentTimeMillis() + 60_000;
            while (!handled.containsAll(produced) && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
            }
        } finally {
            for (Member m : members) {
                if (m.alive) {
                    if (m.name.startsWith("rust")) {
                        m.proc.destroy();
                    } else {
                        m.proc.getOutputStream().close();
                    }
                }
            }
            for (Member m : members) {
                m.proc.waitFor(20, java.util.concurrent.TimeUnit.SECONDS);
                m.proc.destroyForcibly();
            }
        }
        Set<String> missing = new HashSet<>(produced);
        missing.removeAll(handled);
        if (!missing.isEmpty()) {
            // Which records, and who last held their partitions: what a reader of a failed run needs.
            List<String> sorted = new ArrayList<>(missing);
            java.util.Collections.sort(sorted);
            StringBuilder holders = new StringBuilder();
            for (Member m : members) {
                holders.append("\n  ").append(m.name).append(m.alive ? "" : " (gone)").append(": generation ")
                        .append(m.generation).append(' ').append(new java.util.TreeSet<>(m.parts));
            }
            fail(missing.size() + " of " + produced.size() + " produced records never handled: "
                    + sorted.subList(0, Math.min(20, sorted.size())) + "; last assignments:" + holders);
        }
        System.out.println("live-test: " + owners.size() + " generations checked (whole units, each partition to one member; after each leave only the leaver's units moved), "
                + produced.size() + " records produced, all handled at least once: " + missing.isEmpty());
        System.exit(failures.isEmpty() ? 0 : 1);
    }
}
