package dev.partwise.regen;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/** Entry point of the harness; `run` passes the repository root first. */
public final class Main {
    public static void main(String[] argv) throws Exception {
        if (argv.length < 2) {
            System.err.println("usage: run partitioner|assignors|member|bench-consume [--flag value]...");
            System.exit(2);
        }
        Path repo = Path.of(argv[0]);
        String cmd = argv[1];
        Map<String, String> flags = flags(Arrays.copyOfRange(argv, 2, argv.length));
        switch (cmd) {
            case "partitioner" -> Partitioners.run(repo, flags);
            case "assignors" -> LiveAssignors.run(repo, flags);
            case "member" -> MemberProcess.run(flags);
            case "bench-consume" -> BenchConsume.run(flags);
            default -> {
                System.err.println("unknown command '" + cmd + "'");
                System.exit(2);
            }
        }
    }

    static Map<String, String> flags(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println("bad argument '" + args[i] + "' (flags are --name value)");
                System.exit(2);
            }
            m.put(args[i].substring(2), args[++i]);
        }
        return m;
    }

    static String need(Map<String, String> flags, String name) {
        String v = flags.get(name);
        if (v == null) {
            System.err.println("--" + name + " is required");
            System.exit(2);
        }
        return v;
    }
}
