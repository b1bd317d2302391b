// Copied unchanged from ../shared/bench/JavaCount.java, the "careful Java program" that
// bench/compare runs as its java-careful tool (source launcher: java JavaCount.java FILE N).
// A careful Java peer for end-to-end key counting: reads the key file whole, cuts lines, hashes each key in place
// with Kafka's murmur2 (same arithmetic as org.apache.kafka.common.utils.Utils.murmur2), masks the sign bit and
// counts per partition. No per-key allocation. Usage: java JavaCount.java FILE N
import java.nio.file.*;
public class JavaCount {
    static int murmur2(byte[] d, int off, int len) {
        final int m = 0x5bd1e995, r = 24;
        int h = 0x9747b28c ^ len;
        int n4 = len >>> 2;
        for (int i = 0; i < n4; i++) {
            int p = off + (i << 2);
            int k = (d[p] & 0xff) + ((d[p + 1] & 0xff) << 8) + ((d[p + 2] & 0xff) << 16) + ((d[p + 3] & 0xff) << 24);
            k *= m; k ^= k >>> r; k *= m; h *= m; h ^= k;
        }
        int t = off + (len & ~3);
        switch (len & 3) {
            case 3: h ^= (d[t + 2] & 0xff) << 16;
            case 2: h ^= (d[t + 1] & 0xff) << 8;
            case 1: h ^= d[t] & 0xff; h *= m;
        }
        h ^= h >>> 13; h *= m; h ^= h >>> 15;
        return h;
    }
    public static void main(String[] a) throws Exception {
        byte[] buf = Files.readAllBytes(Path.of(a[0]));
        int n = Integer.parseInt(a[1]);
        long[] counts = new long[n];
        int start = 0;
        for (int i = 0; i < buf.length; i++) {
            if (buf[i] == '\n') {
                int end = i;
                if (end > start && buf[end - 1] == '\r') end--;
                counts[(murmur2(buf, start, end - start) & 0x7fffffff) % n]++;
                start = i + 1;
            }
        }
        if (start < buf.length) counts[(murmur2(buf, start, buf.length - start) & 0x7fffffff) % n]++;
        StringBuilder sb = new StringBuilder("{\"partitioner\":\"java\",\"partitions\":" + n + ",\"counts\":[");
        for (int i = 0; i < n; i++) sb.append(i == 0 ? "" : ",").append(counts[i]);
        System.out.println(sb.append("]}"));
    }
}
