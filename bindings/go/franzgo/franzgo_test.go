package franzgo_test

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"example.invalid/partwise/bindings/go/copartitioned"
	"example.invalid/partwise/bindings/go/franzgo"
	"example.invalid/partwise/bindings/go/internal/vectors"
)

// Every case, through the balancer as kgo calls it: members' metadata from the balancer's own
// JoinGroupMetadata (owned partitions in the standard field) or, alternately, a v0 subscription
// with the claims only in `pwo\0` user data; the assignments decoded with kmsg.
func TestVectors(t *testing.T) {
	cases, err := vectors.Load(vectors.Path())
	if err != nil {
		t.Fatal(err)
	}
	if b := franzgo.New(); b.ProtocolName() != "copartitioned" || b.IsCooperative() {
		t.Fatal("protocol")
	}
	for i, c := range cases {
		var members []kmsg.JoinGroupResponseMember
		for j, m := range c.Members {
			jm := kmsg.NewJoinGroupResponseMember()
			jm.MemberID, jm.InstanceID = m.ID, m.InstanceID
			if (i+j)%2 == 0 {
				current := map[string][]int32{}
				for _, tp := range m.Owned {
					current[tp.Topic] = append(current[tp.Topic], tp.Partition)
				}
				jm.ProtocolMetadata = franzgo.New().JoinGroupMetadata(m.Topics, current, 1) // each member its own
			} else {
				meta := kmsg.NewConsumerMemberMetadata()
				meta.Topics = m.Topics
				meta.UserData = copartitioned.EncodeOwned(m.Owned, 1)
				jm.ProtocolMetadata = meta.AppendTo(nil)
			}
			members = append(members, jm)
		}
		b := franzgo.New() // this case's leader
		mb, topics, err := b.MemberBalancer(members)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		counts := map[string]int32{}
		for topic := range topics {
			if n, ok := c.Counts[topic]; ok {
				counts[topic] = n
			}
		}
		into, err := mb.(kgo.GroupMemberBalancerOrError).BalanceOrError(counts)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]copartitioned.TopicPartition{}
		for _, sa := range into.IntoSyncAssignment() {
			a, err := franzgo.ParseAssignment(sa.MemberAssignment)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if !bytes.Equal(a.UserData, c.UserData) || a.Version != 3 {
				t.Fatalf("%s member %s: user data %x, want %x", c.Name, sa.MemberID, a.UserData, c.UserData)
			}
			parsed, err := b.ParseSyncAssignment(sa.MemberAssignment)
			if err != nil {
				t.Fatal(err)
			}
			for topic, ps := range parsed {
				for _, p := range ps {
					got[sa.MemberID] = append(got[sa.MemberID], copartitioned.TopicPartition{Topic: topic, Partition: p})
				}
			}
		}
		for _, m := range c.Members {
			if vectors.Key(got[m.ID]) != vectors.Key(c.Expect[m.ID]) {
				t.Fatalf("%s member %s: got %v want %v", c.Name, m.ID, got[m.ID], c.Expect[m.ID])
			}
		}
	}
	t.Logf("%d cases replayed", len(cases))
}

func TestUndecodableMemberIsNamed(t *testing.T) {
	jm := kmsg.NewJoinGroupResponseMember()
	jm.MemberID = "bad-1"
	jm.ProtocolMetadata = []byte{0, 0, 0}
	_, _, err := franzgo.New().MemberBalancer([]kmsg.JoinGroupResponseMember{jm})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("bad-1")) {
		t.Fatalf("error %v", err)
	}
}

// An eager kgo member hands JoinGroupMetadata no current assignment after it revoked: the
// balancer sends the last one it parsed.
func TestRemembersTheLastAssignment(t *testing.T) {
	b := franzgo.New()
	a := kmsg.NewConsumerMemberAssignment()
	at := kmsg.NewConsumerMemberAssignmentTopic()
	at.Topic, at.Partitions = "x", []int32{2, 5}
	a.Topics = append(a.Topics, at)
	if _, err := b.ParseSyncAssignment(a.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	meta := kmsg.NewConsumerMemberMetadata()
	if err := meta.ReadFrom(b.JoinGroupMetadata([]string{"x"}, nil, 3)); err != nil {
		t.Fatal(err)
	}
	if len(meta.OwnedPartitions) != 1 || len(meta.OwnedPartitions[0].Partitions) != 2 {
		t.Fatalf("owned %v", meta.OwnedPartitions)
	}
	if owned, _, ok := copartitioned.DecodeOwned(meta.UserData); !ok || len(owned) != 2 {
		t.Fatalf("user data owned %v", owned)
	}
}
