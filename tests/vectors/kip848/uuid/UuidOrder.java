// Known answers for partwise's model of the KIP-848 coordinator's topic
// order: org.apache.kafka.common.Uuid.hashCode and the iteration order of a
// java.util.HashSet<Uuid> filled in a given order. Run by ./run next to this
// file against kafka-clients (the version it names); writes one line per
// set: the ids in insertion order, then the same ids in iteration order,
// then each id's hashCode.
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.Uuid;

public class UuidOrder {
    public static void main(String[] args) {
        Random r = new Random(848);
        for (int n : new int[] {2, 2, 3, 3, 5, 8, 12, 13, 20}) {
            List<Uuid> ids = new ArrayList<>();
            for (int i = 0; i < n; i++) ids.add(new Uuid(r.nextLong(), r.nextLong()));
            HashSet<Uuid> set = new HashSet<>();
            for (Uuid u : ids) set.add(u);
            StringBuilder line = new StringBuilder();
            for (Uuid u : ids) line.append(u).append(' ');
            line.append('|');
            for (Uuid u : set) line.append(' ').append(u);
            line.append(" |");
            for (Uuid u : ids) line.append(' ').append(u.hashCode());
            System.out.println(line);
        }
    }
}
