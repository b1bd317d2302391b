package dev.partwise.bench;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Properties;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;

/**
 * Counts keys per partition with the Java producer's own keyed-record rule,
 * {@code BuiltInPartitioner.partitionForKey(serializedKey, numPartitions)}
 * from the kafka-clients jar (what {@code KafkaProducer.partition} calls for a
 * record with a key and no explicit partition).
 *
 * <p>Usage: {@code java -cp ... dev.partwise.bench.JavaCount FILE PARTITIONS}
 *
 * <p>Lines are keys: "\n" or "\r\n" endings, an empty line is an empty key, a
 * last line without a newline is a key, nothing after the last "\n" is not.
 * Each key is handed over as its own byte[], as a producer's serializer does.
 * Prints {"partitioner":"java","partitions":N,"counts":[...]} like the other
 * peers and partwise.
 */
public final class JavaCount {
  private static final int CHUNK = 64 << 20;

  private JavaCount() {}

  public static void main(String[] args) throws IOException {
    int n;
    try {
      n = args.length == 2 ? Integer.parseInt(args[1]) : -1;
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 1) {
      System.err.println("usage: JavaCount FILE PARTITIONS (>= 1)");
      System.exit(2);
    }
    long[] counts = new long[n];
    long keys = 0;
    byte[] buf = new byte[CHUNK];
    int have = 0;
    try (InputStream in = new FileInputStream(args[0])) {
      for (;;) {
        if (have == buf.length) { // one line longer than the buffer
          buf = Arrays.copyOf(buf, buf.length * 2);
        }
        int got = in.read(buf, have, buf.length - have);
        if (got < 0) {
          break;
        }
        have += got;
        int start = 0;
        for (int i = start; i < have; i++) {
          if (buf[i] == '\n') {
            int stop = i;
            if (stop > start && buf[stop - 1] == '\r') {
              stop--;
            }
            counts[BuiltInPartitioner.partitionForKey(Arrays.copyOfRange(buf, start, stop), n)]++;
            keys++;
            start = i + 1;
          }
        }
        System.arraycopy(buf, start, buf, 0, have - start);
        have -= start;
      }
    }
    if (have > 0) {
      int stop = have;
      if (buf[stop - 1] == '\r') {
        stop--;
      }
      counts[BuiltInPartitioner.partitionForKey(Arrays.copyOfRange(buf, 0, stop), n)]++;
      keys++;
    }
    StringBuilder out = new StringBuilder("{\"partitioner\":\"java\",\"partitions\":").append(n).append(",\"counts\":[");
    for (int p = 0; p < n; p++) {
      out.append(p == 0 ? "" : ",").append(counts[p]);
    }
    System.out.println(out.append("]}"));
    System.err.println("kafka-clients " + clientsVersion() + " BuiltInPartitioner.partitionForKey: " + keys + " keys");
  }

  // The jar's own version file; AppInfoParser would say the same but logs
  // through SLF4J, which has no backend here.
  static String clientsVersion() throws IOException {
    Properties p = new Properties();
    try (InputStream in = BuiltInPartitioner.class.getResourceAsStream("/kafka/kafka-version.properties")) {
      if (in == null) {
        return "unknown";
      }
      p.load(in);
    }
    return p.getProperty("version", "unknown");
  }
}
