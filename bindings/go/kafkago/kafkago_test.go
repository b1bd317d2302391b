package kafkago_test

import (
	"testing"

	"github.com/segmentio/kafka-go"

	"example.invalid/partwise/bindings/go/copartitioned"
	"example.invalid/partwise/bindings/go/internal/vectors"
	"example.invalid/partwise/bindings/go/kafkago"
)

// Every case without static members (kafka-go has none), through AssignGroups as kafka-go calls
// it: members with their claims in `pwo\0` user data, the partitions kafka-go read.
func TestVectors(t *testing.T) {
	cases, err := vectors.Load(vectors.Path())
	if err != nil {
		t.Fatal(err)
	}
	b := kafkago.New()
	if b.ProtocolName() != "copartitioned" {
		t.Fatal("protocol")
	}
	replayed, static := 0, 0
	for _, c := range cases {
		var members []kafka.GroupMember
		isStatic := false
		for _, m := range c.Members {
			isStatic = isStatic || m.InstanceID != nil
			members = append(members, kafka.GroupMember{ID: m.ID, Topics: m.Topics, UserData: copartitioned.EncodeOwned(m.Owned, 1)})
		}
		if isStatic {
			static++
			continue
		}
		var partitions []kafka.Partition
		for topic, n := range c.Counts {
			for p := 0; p < int(n); p++ {
				partitions = append(partitions, kafka.Partition{Topic: topic, ID: p})
			}
		}
		out := b.AssignGroups(members, partitions)
		for _, m := range c.Members {
			var got []copartitioned.TopicPartition
			for topic, ps := range out[m.ID] {
				for _, p := range ps {
					got = append(got, copartitioned.TopicPartition{Topic: topic, Partition: int32(p)})
				}
			}
			if vectors.Key(got) != vectors.Key(c.Expect[m.ID]) {
				t.Fatalf("%s member %s: got %v want %v", c.Name, m.ID, got, c.Expect[m.ID])
			}
		}
		replayed++
	}
	if replayed < 300 {
		t.Fatalf("only %d cases replayed", replayed)
	}
	t.Logf("%d cases replayed, %d with static members left to the core's test", replayed, static)
}

func TestRememberIntoUserData(t *testing.T) {
	b := kafkago.New()
	b.Remember(&kafka.Generation{ID: 5, Assignments: map[string][]kafka.PartitionAssignment{"a": {{ID: 2}}, "b": {{ID: 2}}}})
	ud, err := b.UserData()
	if err != nil {
		t.Fatal(err)
	}
	owned, gen, ok := copartitioned.DecodeOwned(ud)
	if !ok || gen != 5 || len(owned) != 2 {
		t.Fatalf("got %v %d %v", owned, gen, ok)
	}
}
