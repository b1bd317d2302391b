// The live Java group test: 1 to 6 LiveMember JVMs over two topics of 6 partitions on a real
// broker, then churn (SIGKILL, join, leave), each step timed from the change to the settled
// group. Exit 1 on a violation.
//   LiveTest BOOTSTRAP CLASSPATH [--mixed PARTWISE_BIN] [--protocol consumer]
// Classic protocol (CopartitionedAssignor; --mixed alternates partwise's Rust members with the
// Java ones): every generation must give whole units (partition p of both topics to one member)
// and each partition to one member. Consumer protocol (KIP-848, the broker's
// BrokerCopartitionedAssignor through group.remote.assignor=copartitioned): every target
// assignment the broker reports (Admin describeConsumerGroups) must be whole units and give
// each partition to one member; a member's current set may hold half a unit while the other
// half waits for its previous owner to revoke it, which is counted, not failed. In both, once
// the group settles every partition is owned once, after a member goes only its units move,
// and every produced record is handled at least once.
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
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;

public final class LiveTest {
    static final int PARTITIONS = 6;
    static final List<String> failures = new ArrayList<>();
    // generation -> partition -> member that reported it
    static final Map<Integer, Map<String, String>> owners = new ConcurrentHashMap<>();
    static final Set<String> handled = ConcurrentHashMap.newKeySet();
    static final Set<String> produced = new HashSet<>();
    static String a, b;
    static boolean consumerProtocol;
    // Consumer protocol: current sets seen holding half a unit, and the target epochs checked.
    static final AtomicInteger transientSplits = new AtomicInteger();
    static final Set<Integer> targetEpochs = ConcurrentHashMap.newKeySet();
    static volatile ConsumerGroupDescription described;
    static final List<String> timings = new ArrayList<>();

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
        volatile String id;
        final String name;

        Member(String name, Process proc) {
            this.name = name;
            this.proc = proc;
            reader = new Thread(this::read);
            reader.setDaemon(true);
            reader.start();
        }

        /** Reads the member's output to its end. */
        final Thread reader;

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
                            id = w[1];
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

    /** The units p of which a set holds one topic's partition and not the other's. */
    static List<Integer> splitUnits(Set<String> got) {
        List<Integer> split = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            if (got.contains(a + ":" + p) != got.contains(b + ":" + p)) {
                split.add(p);
            }
        }
        return split;
    }

    static void check(String member, int gen, Set<String> got) {
        if (consumerProtocol) {
            // Epochs are per member here and a set may wait for a revocation: targets are checked.
            if (!splitUnits(got).isEmpty()) {
                transientSplits.incrementAndGet();
            }
            return;
        }
        for (int p : splitUnits(got)) {
            fail("generation " + gen + ": " + member + " holds a split unit " + p + ": " + got);
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
        // Signals go through the ProcessHandle: Process.destroy() also closes our end of the
        // member's stdout, which drops the lines it printed last (records it handled and then
        // committed) before the reader gets them.
        if (kill) {
            m.proc.toHandle().destroyForcibly();
        } else if (m.name.startsWith("rust")) {
            m.proc.toHandle().destroy();
        } else {
            m.proc.getOutputStream().close();
        }
        m.proc.waitFor();
        m.reader.join(20_000);
    }

    static Set<String> names(org.apache.kafka.clients.admin.MemberAssignment assignment) {
        Set<String> out = new HashSet<>();
        for (TopicPartition tp : assignment.topicPartitions()) {
            out.add(tp.topic() + ":" + tp.partition());
        }
        return out;
    }

    /**
     * Consumer protocol: reads the group's target assignment every 100 ms while the test runs
     * (an epoch replaced sooner goes unread) and checks each: every member's target whole
     * units, no partition targeted twice.
     */
    static void watchTargets(Admin admin, String group) {
        Integer lastEpoch = null;
        boolean wrongKind = false;
        while (true) {
            ConsumerGroupDescription d;
            try {
                d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            } catch (Exception e) {
                // The coordinator may be loading or moving: the next read will tell.
                sleep(100);
                continue;
            }
            described = d;
            // Said once: the targets' own checks follow every epoch.
            if (!wrongKind && !d.members().isEmpty() && (d.type() != org.apache.kafka.common.GroupType.CONSUMER
                    || !BrokerCopartitionedAssignor.NAME.equals(d.partitionAssignor()))) {
                wrongKind = true;
                fail("the group is a " + d.type() + " group assigned with '" + d.partitionAssignor()
                        + "', not a consumer-protocol group assigned with " + BrokerCopartitionedAssignor.NAME);
            }
            Integer epoch = d.targetAssignmentEpoch().orElse(null);
            if (epoch != null && !epoch.equals(lastEpoch)) {
                lastEpoch = epoch;
                Map<String, String> owner = new HashMap<>();
                for (MemberDescription m : d.members()) {
                    if (m.targetAssignment().isEmpty()) {
                        continue;
                    }
                    Set<String> target = names(m.targetAssignment().get());
                    for (int p : splitUnits(target)) {
                        fail("target epoch " + epoch + ": " + m.consumerId() + " is given a split unit " + p + ": " + target);
                    }
                    for (String tp : target) {
                        String before = owner.putIfAbsent(tp, m.consumerId());
                        if (before != null) {
                            fail("target epoch " + epoch + ": " + tp + " given to " + before + " and " + m.consumerId());
                        }
                    }
                }
                targetEpochs.add(epoch);
            }
            sleep(100);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Consumer protocol: the broker's view agrees with the members': the described members are
     * the live ones, each reconciled (its assignment is its target, and what it printed), the
     * target is the group epoch's, and the targets own each partition once.
     */
    static boolean settledOnBroker(List<Member> members) {
        ConsumerGroupDescription d = described;
        if (d == null || d.groupEpoch().isEmpty() || !d.groupEpoch().equals(d.targetAssignmentEpoch())) {
            return false;
        }
        Map<String, Member> live = new HashMap<>();
        for (Member m : members) {
            if (m.alive) {
                if (m.id == null) {
                    return false;
                }
                live.put(m.id, m);
            }
        }
        if (d.members().size() != live.size()) {
            return false;
        }
        int owned = 0;
        for (MemberDescription md : d.members()) {
            Member m = live.get(md.consumerId());
            if (m == null || md.targetAssignment().isEmpty()) {
                return false;
            }
            Set<String> target = names(md.targetAssignment().get());
            if (!target.equals(names(md.assignment())) || !target.equals(m.parts)) {
                return false;
            }
            owned += target.size();
        }
        return owned == 2 * PARTITIONS;
    }

    /**
     * Waits until every live member is in one generation (classic) or reconciled with the
     * broker's target (consumer protocol), owning each partition once; prints and keeps the
     * time since {@code since}, when the change was made.
     */
    static void settle(List<Member> members, String step, long since) throws Exception {
        long deadline = System.currentTimeMillis() + (consumerProtocol ? 120_000 : 90_000);
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
            boolean once = all.size() == 2 * PARTITIONS && new HashSet<>(all).size() == all.size();
            boolean settled = consumerProtocol
                    ? once && !gens.contains(-1) && settledOnBroker(members)
                    : once && gens.size() == 1 && !gens.contains(-1);
            if (settled) {
                long took = System.currentTimeMillis() - since;
                long live = members.stream().filter(m -> m.alive).count();
                System.out.println("live-test: " + step + ": " + live + " members, "
                        + (consumerProtocol ? "epochs " + new java.util.TreeSet<>(gens) : "generation " + gens.iterator().next())
                        + ", 12 partitions owned once, settled in " + took + " ms");
                timings.add(step + " " + took + " ms");
                return;
            }
            // Both protocols polled alike, so that their times compare.
            Thread.sleep(100);
        }
        fail(step + ": the group did not settle with every partition owned once in time");
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
        String rust = null;
        for (int i = 2; i < args.length; i++) {
            switch (args[i]) {
                case "--mixed" -> rust = args[++i];
                case "--protocol" -> consumerProtocol = switch (args[++i]) {
                    case "consumer" -> true;
                    case "classic" -> false;
                    default -> throw new IllegalArgumentException("--protocol: classic or consumer, not '" + args[i] + "'");
                };
                default -> throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
            }
        }
        String tag = Long.toString(System.currentTimeMillis(), 36);
        a = "pwj-orders-" + tag;
        b = "pwj-payments-" + tag;
        String group = "pwj-group-" + tag;
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        Admin admin = Admin.create(ap);
        admin.createTopics(List.of(new NewTopic(a, PARTITIONS, (short) 1), new NewTopic(b, PARTITIONS, (short) 1))).all().get();
        if (consumerProtocol) {
            // The classic members' 6 s session and 500 ms heartbeat, as this group's broker-side
            // configs, so that the two protocols' times compare. A broker whose minimums
            // (group.consumer.min.session.timeout.ms, ...min.heartbeat.interval.ms) refuse them
            // keeps its defaults: slower, still checked.
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            try {
                admin.incrementalAlterConfigs(Map.of(res, List.of(
                        new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "6000"), AlterConfigOp.OpType.SET),
                        new AlterConfigOp(new ConfigEntry("consumer.heartbeat.interval.ms", "500"), AlterConfigOp.OpType.SET))))
                        .all().get();
            } catch (java.util.concurrent.ExecutionException e) {
                System.out.println("live-test: the broker keeps its own session timeout and heartbeat interval for the group: " + e.getCause());
            }
            Thread watcher = new Thread(() -> watchTargets(admin, group));
            watcher.setDaemon(true);
            watcher.start();
        }
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath, "dev.partwise.LiveMember", bootstrap, group, a + "," + b));
        if (consumerProtocol) {
            cmd.add("consumer");
        }
        // --mixed PARTWISE_BIN: partwise's Rust members (partwise kafka consume) alternate with Java ones.
        List<String> rustCmd = null;
        if (rust != null) {
            rustCmd = new ArrayList<>(List.of(rust, "kafka", "consume", "-b", bootstrap, "-g", group, "-t", a, "-t", b,
                    "--offset-reset", "earliest", "--format", "ndjson", "--commit-interval", "1s"));
            rustCmd.addAll(consumerProtocol
                    ? List.of("--group-protocol", "consumer", "--remote-assignor", BrokerCopartitionedAssignor.NAME)
                    : List.of("--assignor", "copartitioned", "--session-timeout", "6s", "--heartbeat-interval", "500ms"));
        }
        List<String> javaCmd = cmd, rustMember = rustCmd;
        List<Member> members = new ArrayList<>();
        int[] serial = {0};
        java.util.function.IntFunction<Member> spawn = k -> {
            try {
                boolean r = rustMember != null && k % 2 == 1;
                return start(r ? rustMember : javaCmd, (r ? "rust-" : "java-") + serial[0]++);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(pp)) {
            produce(prod, 60);
            for (int k = 1; k <= 6; k++) {
                long since = System.currentTimeMillis();
                members.add(spawn.apply(k - 1));
                settle(members, "join to " + k, since);
                produce(prod, 12);
            }
            // Churn in each runtime: a SIGKILL, a join, a clean leave, another SIGKILL.
            String[] steps = rustCmd == null
                    ? new String[] {"kill java", "join java", "leave java", "kill java"}
                    : new String[] {"kill java", "kill rust", "join java", "join rust", "leave java", "leave rust"};
            for (String step : steps) {
                String[] w = step.split(" ");
                long since = System.currentTimeMillis();
                if (w[0].equals("join")) {
                    members.add(spawn.apply(w[1].equals("rust") ? 1 : 0));
                    settle(members, step, since);
                } else {
                    Member victim = members.stream().filter(m -> m.alive && m.name.startsWith(w[1])).findFirst().orElseThrow();
                    Map<Member, Set<String>> before = snapshot(members);
                    end(victim, w[0].equals("kill"));
                    settle(members, step + " (" + victim.name + ")", since);
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
                        m.proc.toHandle().destroy();
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
        String protocol = consumerProtocol ? "consumer protocol" : "classic protocol";
        System.out.println("live-test: rebalance times (" + protocol + (rust != null ? ", mixed" : "") + "), change to settled: "
                + String.join(", ", timings));
        if (consumerProtocol) {
            if (targetEpochs.isEmpty()) {
                fail("no target assignment was read from the broker");
            }
            System.out.println("live-test: " + targetEpochs.size() + " target assignments checked (whole units, each partition to one member), "
                    + transientSplits.get() + " transient split sets seen while a unit's half waited for its revocation; after each leave only the leaver's units moved; "
                    + produced.size() + " records produced, all handled at least once: " + missing.isEmpty());
        } else {
            System.out.println("live-test: " + owners.size() + " generations checked (whole units, each partition to one member; after each leave only the leaver's units moved), "
                    + produced.size() + " records produced, all handled at least once: " + missing.isEmpty());
        }
        admin.close(java.time.Duration.ofSeconds(5));
        System.exit(failures.isEmpty() ? 0 : 1);
    }
}
