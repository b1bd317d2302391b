package dev.partwise.streamsapp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;

/**
 * A stream-stream join of two topics keyed by symbol, run under the streams
 * rebalance protocol until the process is stopped. Topics missing from the
 * cluster are created with the counts given, so a test can make the two
 * sources co-partitioned or not.
 *
 * <p>Arguments: BOOTSTRAP APPLICATION_ID LEFT:N RIGHT:M [THREADS [PROTOCOL]], where
 * PROTOCOL is {@code streams} (the default) or {@code classic}; or {@code --describe LEFT
 * RIGHT}, which prints what {@code Topology#describe()} says of the same join and exits.
 */
public final class Join {
  static StreamsBuilder topology(String left, String right) {
    StreamsBuilder b = new StreamsBuilder();
    KStream<String, String> l = b.stream(left);
    KStream<String, String> r = b.stream(right);
    l.join(r, (x, y) -> x + "|" + y, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(5)))
        .foreach((k, v) -> {});
    return b;
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("--describe")) {
      System.out.print(topology(args[1], args[2]).build().describe());
      return;
    }
    if (args.length < 4) {
      System.err.println(
          "usage: Join BOOTSTRAP APPLICATION_ID LEFT:N RIGHT:M [THREADS [PROTOCOL]] | Join --describe LEFT RIGHT");
      System.exit(2);
    }
    String bootstrap = args[0];
    String app = args[1];
    String[] left = args[2].split(":");
    String[] right = args[3].split(":");
    int threads = args.length > 4 ? Integer.parseInt(args[4]) : 2;
    String protocol = args.length > 5 ? args[5] : "streams";

    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(ap)) {
      Set<String> have = admin.listTopics().names().get();
      List<NewTopic> create = new ArrayList<>();
      for (String[] t : new String[][] {left, right}) {
        if (!have.contains(t[0])) {
          create.add(new NewTopic(t[0], Integer.parseInt(t[1]), (short) 1));
        }
      }
      if (!create.isEmpty()) {
        admin.createTopics(create).all().get();
      }
    }

    StreamsBuilder b = topology(left[0], right[0]);

    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    p.put(StreamsConfig.STATE_DIR_CONFIG,
        System.getProperty("java.io.tmpdir") + "/partwise-streams-app-" + app + "-" + ProcessHandle.current().pid());

    KafkaStreams streams = new KafkaStreams(b.build(p), p);
    CountDownLatch done = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      streams.close(Duration.ofSeconds(10));
      done.countDown();
    }));
    streams.setStateListener((now, before) -> System.out.println("state " + now));
    streams.start();
    done.await();
  }
}
