package dev.partwise.streamsapp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;

/**
 * A stream-stream join of two topics keyed by symbol, run under the streams
 * rebalance protocol until the process is stopped. Topics missing from the
 * cluster are created with the counts given, so a test can make the two
 * sources co-partitioned or not.
 *
 * <p>Arguments: BOOTSTRAP APPLICATION_ID LEFT:N RIGHT:M [THREADS [PROTOCOL [STANDBYS]]], where
 * PROTOCOL is {@code streams} (the default) or {@code classic} and STANDBYS is
 * {@code num.standby.replicas} (0 by default); or {@code --describe LEFT RIGHT}, which prints
 * what {@code Topology#describe()} says of the same join and exits.
 *
 * <p>While running, each time its threads' tasks change it prints what Kafka Streams itself says
 * they hold ({@code KafkaStreams#metadataForLocalThreads}), one line per thread:
 * {@code tasks CONSUMER_CLIENT_ID active T=TOPIC:P,...;... standby T=TOPIC:P,...;...}, the
 * answers the classic group's decoded user data is held to.
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
    int standbys = args.length > 6 ? Integer.parseInt(args[6]) : 0;

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
    p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, standbys);
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
    String last = "";
    while (!done.await(1, TimeUnit.SECONDS)) {
      if (streams.state() != KafkaStreams.State.RUNNING) {
        continue;
      }
      StringBuilder now = new StringBuilder();
      List<ThreadMetadata> threadList = new ArrayList<>(streams.metadataForLocalThreads());
      threadList.sort(Comparator.comparing(ThreadMetadata::consumerClientId));
      for (ThreadMetadata t : threadList) {
        now.append("tasks ").append(t.consumerClientId())
            .append(" active ").append(tasks(t.activeTasks()))
            .append(" standby ").append(tasks(t.standbyTasks())).append('\n');
      }
      if (!now.toString().equals(last)) {
        last = now.toString();
        System.out.print(last);
        System.out.flush();
      }
    }
  }

  /** {@code T=TOPIC:P,...;...} sorted, {@code -} for none. */
  static String tasks(Set<TaskMetadata> tasks) {
    List<String> out = new ArrayList<>();
    for (TaskMetadata t : tasks) {
      List<String> tps = new ArrayList<>();
      for (TopicPartition tp : t.topicPartitions()) {
        tps.add(tp.topic() + ":" + tp.partition());
      }
      tps.sort(null);
      out.add(t.taskId() + "=" + String.join(",", tps));
    }
    out.sort(null);
    return out.isEmpty() ? "-" : String.join(";", out);
  }
}
