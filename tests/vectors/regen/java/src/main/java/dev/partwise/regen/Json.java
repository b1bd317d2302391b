package dev.partwise.regen;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/** Just enough JSON writing for the vector lines (no JSON library on the classpath); the group harness (../java-groups) compiles it in too. */
public final class Json {
    private Json() {}

    public static String str(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    /** Any of: null, String, Number, Boolean, Map (keys as given), Collection, TopicPartition, or a raw `Raw`. */
    public static String of(Object o) {
        if (o == null) return "null";
        if (o instanceof Raw r) return r.json;
        if (o instanceof String s) return str(s);
        if (o instanceof Number || o instanceof Boolean) return o.toString();
        if (o instanceof TopicPartition tp) return "[" + str(tp.topic()) + "," + tp.partition() + "]";
        if (o instanceof Map<?, ?> m) {
            StringBuilder b = new StringBuilder("{");
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) b.append(", ");
                first = false;
                b.append(str(e.getKey().toString())).append(": ").append(of(e.getValue()));
            }
            return b.append('}').toString();
        }
        if (o instanceof Collection<?> c) {
            StringBuilder b = new StringBuilder("[");
            boolean first = true;
            for (Object x : c) {
                if (!first) b.append(", ");
                first = false;
                b.append(of(x));
            }
            return b.append(']').toString();
        }
        throw new IllegalArgumentException("no JSON for " + o.getClass());
    }

    /** Partitions sorted by topic, then partition, as `[[topic, p], ...]`. */
    public static List<TopicPartition> sorted(Collection<TopicPartition> tps) {
        return tps.stream()
                .sorted((a, b) -> a.topic().equals(b.topic())
                        ? Integer.compare(a.partition(), b.partition())
                        : a.topic().compareTo(b.topic()))
                .toList();
    }

    public record Raw(String json) {}
}
