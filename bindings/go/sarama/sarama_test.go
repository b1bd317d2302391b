package sarama_test

import (
	"bytes"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"example.invalid/partwise/bindings/go/copartitioned"
	"example.invalid/partwise/bindings/go/internal/vectors"
	partwise "example.invalid/partwise/bindings/go/sarama"
)

// subscription: a member's JoinGroup metadata bytes, alternately as a v3 subscription with the
// owned-partitions field (as Sarama 1.61, Java and partwise members send) and as a v0 one with
// the claims in `pwo\0` user data (as kafka-go and aiokafka members send).
func subscription(m copartitioned.Member, k int) []byte {
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = m.Topics
	if k%2 == 0 {
		meta.Version = 3
		meta.Generation = 1
		for _, tp := range m.Owned {
			op := kmsg.NewConsumerMemberMetadataOwnedPartition()
			op.Topic, op.Partitions = tp.Topic, []int32{tp.Partition}
			meta.OwnedPartitions = append(meta.OwnedPartitions, op)
		}
	} else {
		meta.UserData = copartitioned.EncodeOwned(m.Owned, 1)
	}
	return meta.AppendTo(nil)
}

// Every case without static members (Sarama hands a strategy no group.instance.id), through
// Sarama's own decoding of the JoinGroup response and the strategy's Plan and AssignmentData.
func TestVectors(t *testing.T) {
	cases, err := vectors.Load(vectors.Path())
	if err != nil {
		t.Fatal(err)
	}
	replayed, static := 0, 0
	for i, c := range cases {
		if hasStatic(c.Members) {
			static++
			continue
		}
		join := &sarama.JoinGroupResponse{}
		topics := map[string][]int32{}
		for j, m := range c.Members {
			join.Members = append(join.Members, sarama.GroupMember{MemberId: m.ID, Metadata: subscription(m, i+j)})
			for _, t := range m.Topics {
				if n, ok := c.Counts[t]; ok {
					ps := make([]int32, n)
					for p := range ps {
						ps[p] = int32(p)
					}
					topics[t] = ps
				}
			}
		}
		members, err := join.GetMembers()
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		s := partwise.New()
		if s.Name() != "copartitioned" {
			t.Fatalf("name %q", s.Name())
		}
		plan, err := s.Plan(members, topics)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.Members {
			var got []copartitioned.TopicPartition
			byTopic, ok := plan[m.ID]
			if !ok {
				t.Fatalf("%s member %s: not in the plan, so Sarama sends it no user data", c.Name, m.ID)
			}
			for topic, ps := range byTopic {
				for _, p := range ps {
					got = append(got, copartitioned.TopicPartition{Topic: topic, Partition: p})
				}
			}
			if vectors.Key(got) != vectors.Key(c.Expect[m.ID]) {
				t.Fatalf("%s member %s: got %v want %v", c.Name, m.ID, got, c.Expect[m.ID])
			}
			ud, err := s.AssignmentData(m.ID, byTopic, 2)
			if err != nil || !bytes.Equal(ud, c.UserData) {
				t.Fatalf("%s member %s: user data %x, want %x", c.Name, m.ID, ud, c.UserData)
			}
		}
		replayed++
	}
	if replayed < 300 {
		t.Fatalf("only %d cases replayed", replayed)
	}
	t.Logf("%d cases replayed, %d with static members left to the core's test", replayed, static)
}

// What a member remembers goes into its next subscription, which a leader reads back.
func TestOwnedIntoNextSubscription(t *testing.T) {
	s := partwise.New().(sarama.OnAssignmentBalanceStrategy)
	s.OnAssignment(&sarama.ConsumerGroupMemberAssignment{Topics: map[string][]int32{"a": {1, 3}, "b": {1, 3}}}, 7)
	ud, err := s.(sarama.SubscriptionUserDataBalanceStrategy).SubscriptionUserData([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	owned, gen, ok := copartitioned.DecodeOwned(ud)
	if !ok || gen != 7 || len(owned) != 4 {
		t.Fatalf("got %v %d %v", owned, gen, ok)
	}
	ms := partwise.Members(map[string]sarama.ConsumerGroupMemberMetadata{"m": {Topics: []string{"a", "b"}, UserData: ud}})
	if len(ms[0].Owned) != 4 {
		t.Fatalf("leader read %v", ms[0].Owned)
	}
}

func hasStatic(ms []copartitioned.Member) bool {
	for _, m := range ms {
		if m.InstanceID != nil {
			return true
		}
	}
	return false
}
