package dev.partwise.streams;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Builds topologies of every join shape with kafka-streams' own DSL and
 * writes, per case, what Topology#describe() prints and the co-partition
 * groups the library records for it (the groups its
 * CopartitionedTopicsEnforcer checks at startup): the known answers the
 * describe-text reader of partwise is held to.
 */
public final class Describe {
    private static final Consumed<String, String> STR = Consumed.with(Serdes.String(), Serdes.String());

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Map<String, Consumer<StreamsBuilder>> cases = new LinkedHashMap<>();
        cases.put("stream-stream", b -> {
            KStream<String, String> ticks = b.stream("market-updates", STR);
            KStream<String, String> alerts = b.stream("notifications", STR);
            ticks.join(alerts, (t, a) -> t + a, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(1)))
                .to("alerts-due", Produced.with(Serdes.String(), Serdes.String()));
        });
        cases.put("stream-table", b -> {
            KTable<String, String> rules = b.table("notifications", STR);
            b.stream("market-updates", STR).join(rules, (t, r) -> t + r).to("alerts-due");
        });
        cases.put("table-table", b -> {
            KTable<String, String> a = b.table("prices", STR);
            KTable<String, String> c = b.table("limits", STR);
            a.join(c, (x, y) -> x + y).toStream().to("breaches");
        });
        cases.put("outer-join-three-ways", b -> {
            KStream<String, String> a = b.stream("market-updates", STR);
            KStream<String, String> n = b.stream("notifications", STR);
            KTable<String, String> t = b.table("symbols", STR);
            a.outerJoin(n, (x, y) -> x + y, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofSeconds(30)))
                .leftJoin(t, (x, y) -> x + y)
                .to("enriched");
        });
        cases.put("repartition", b -> {
            KStream<String, String> orders = b.stream("orders", STR).selectKey((k, v) -> v);
            KStream<String, String> payments = b.stream("payments", STR);
            orders.join(payments, (x, y) -> x + y, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(5)))
                .to("paid-orders");
        });
        cases.put("merge-no-join", b -> {
            b.stream("eu-ticks", STR).merge(b.stream("us-ticks", STR)).to("all-ticks");
        });
        cases.put("global-table", b -> {
            GlobalKTable<String, String> g = b.globalTable("instruments", STR);
            b.stream("market-updates", STR).join(g, (k, v) -> k, (x, y) -> x + y).to("alerts-due");
        });
        cases.put("aggregate-and-join", b -> {
            KTable<String, Long> counts = b.stream("clicks", STR).groupByKey().count();
            b.stream("impressions", STR).join(counts, (x, y) -> x + y).to("ctr");
            b.stream("audit", STR).to("audit-copy");
        });
        cases.put("foreign-key", b -> {
            KTable<String, String> orders = b.table("orders", STR);
            KTable<String, String> customers = b.table("customers", STR);
            orders.join(customers, v -> v, (o, c) -> o + c).toStream().to("orders-with-customers");
        });
        cases.put("two-sub-topologies", b -> {
            b.stream("market-updates", STR).join(b.stream("notifications", STR), (x, y) -> x + y,
                JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(1))).to("alerts-due");
            b.stream("trades", STR).join(b.table("accounts", STR), (x, y) -> x + y).to("trades-enriched");
        });

        StringBuilder json = new StringBuilder();
        json.append("{\n  \"kafka_streams\": \"").append(args[1]).append("\",\n  \"cases\": {\n");
        boolean first = true;
        for (Map.Entry<String, Consumer<StreamsBuilder>> c : cases.entrySet()) {
            StreamsBuilder b = new StreamsBuilder();
            c.getValue().accept(b);
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, "app");
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9");
            Topology t = b.build(props);
            String text = t.describe().toString();
            Files.writeString(out.resolve(c.getKey() + ".txt"), text, StandardCharsets.UTF_8);
            List<String> groups = new ArrayList<>();
            for (Set<String> g : copartitionGroups(t)) {
                List<String> names = new ArrayList<>();
                for (String topic : new TreeSet<>(g)) {
                    // describe() prints internal topics without the
                    // application id the builder decorates them with.
                    names.add("\"" + (topic.startsWith("app-") ? topic.substring(4) : topic) + "\"");
                }
                groups.add("[" + String.join(", ", names) + "]");
            }
            groups.sort(String::compareTo);
            json.append(first ? "" : ",\n").append("    \"").append(c.getKey()).append("\": [")
                .append(String.join(", ", groups)).append("]");
            first = false;
        }
        json.append("\n  }\n}\n");
        Files.writeString(out.resolve("copartition.json"), json.toString(), StandardCharsets.UTF_8);
    }

    /** The library's own co-partition groups: InternalTopologyBuilder#copartitionGroups, after the application id is set. */
    @SuppressWarnings("unchecked")
    static Collection<Set<String>> copartitionGroups(Topology t) throws Exception {
        Field f = Topology.class.getDeclaredField("internalTopologyBuilder");
        f.setAccessible(true);
        Object builder = f.get(t);
        builder.getClass().getMethod("setApplicationId", String.class).invoke(builder, "app");
        Method m = builder.getClass().getMethod("copartitionGroups");
        return (Collection<Set<String>>) m.invoke(builder);
    }
}
