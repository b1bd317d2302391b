// Package franzgo plugs partwise's co-partitioned assignor into franz-go (kgo) consumer groups:
//
//	kgo.NewClient(kgo.ConsumerGroup("g"), kgo.ConsumeTopics("orders", "payments"),
//		kgo.Balancers(franzgo.New()))
//
// A franz-go leader then places exactly what a partwise leader in any other runtime places (kgo
// hands the balancer every member's group.instance.id, so static members rank as elsewhere),
// and writes the co-partition groups in every member's assignment user data.
package franzgo

import (
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"example.invalid/partwise/bindings/go/copartitioned"
)

// SubscriptionVersion is the ConsumerProtocolSubscription version members send (owned
// partitions and generation, as Java and the Rust runtime send).
const SubscriptionVersion = 3

// AssignmentVersion is the ConsumerProtocolAssignment version the leader writes, as the Rust leader.
const AssignmentVersion = 3

// Balancer is the kgo.GroupBalancer. It remembers the last assignment its member parsed: an
// eager kgo member forgets its assignment when it revokes before rejoining, and hands
// JoinGroupMetadata nothing, so the balancer sends what it remembers instead (the leader keeps
// units with their owners only if they say what they own).
type Balancer struct {
	mu   sync.Mutex
	last map[string][]int32
}

var _ kgo.GroupBalancer = (*Balancer)(nil)

// New returns the balancer; give each client its own.
func New() kgo.GroupBalancer { return &Balancer{} }

// ProtocolName is "copartitioned".
func (*Balancer) ProtocolName() string { return copartitioned.Name }

// IsCooperative is false: the leader hands a unit straight to its next owner (eager), as every
// partwise leader does.
func (*Balancer) IsCooperative() bool { return false }

// JoinGroupMetadata is this member's subscription: its topics, what it owns (current, or when
// kgo hands none the last assignment it parsed) in the standard field and again as `pwo\0`
// user data (for leaders that read no owned-partitions field).
func (b *Balancer) JoinGroupMetadata(topics []string, current map[string][]int32, generation int32) []byte {
	if len(current) == 0 {
		b.mu.Lock()
		current = b.last
		b.mu.Unlock()
	}
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version = SubscriptionVersion
	meta.Topics = topics
	meta.Generation = generation
	names := make([]string, 0, len(current))
	for t := range current {
		names = append(names, t)
	}
	sort.Strings(names)
	var owned []copartitioned.TopicPartition
	for _, t := range names {
		op := kmsg.NewConsumerMemberMetadataOwnedPartition()
		op.Topic = t
		op.Partitions = current[t]
		meta.OwnedPartitions = append(meta.OwnedPartitions, op)
		for _, p := range current[t] {
			owned = append(owned, copartitioned.TopicPartition{Topic: t, Partition: p})
		}
	}
	meta.UserData = copartitioned.EncodeOwned(owned, generation)
	return meta.AppendTo(nil)
}

// ParseSyncAssignment reads this member's partitions from the leader's assignment, and
// remembers them for its next subscription.
func (b *Balancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	a, err := ParseAssignment(assignment)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]int32, len(a.Topics))
	last := make(map[string][]int32, len(a.Topics))
	for _, t := range a.Topics {
		out[t.Topic] = append(out[t.Topic], t.Partitions...)
		last[t.Topic] = append(last[t.Topic], t.Partitions...)
	}
	b.mu.Lock()
	b.last = last
	b.mu.Unlock()
	return out, nil
}

// ParseAssignment decodes an assignment; its UserData holds the co-partition groups
// (copartitioned.DecodeUnitGroups) when a partwise leader of any runtime wrote it.
func ParseAssignment(assignment []byte) (kmsg.ConsumerMemberAssignment, error) {
	a := kmsg.NewConsumerMemberAssignment()
	if len(assignment) == 0 {
		return a, nil
	}
	err := a.ReadFrom(assignment)
	return a, err
}

// Members decodes the JoinGroup members as the assignor takes them: owned partitions from the
// standard field, or when that is empty from `pwo\0` user data. A member whose metadata does
// not decode is an error naming it (kgo then fails this balance and says so).
func Members(members []kmsg.JoinGroupResponseMember) ([]copartitioned.Member, error) {
	out := make([]copartitioned.Member, 0, len(members))
	for _, jm := range members {
		meta := kmsg.NewConsumerMemberMetadata()
		if err := meta.ReadFrom(jm.ProtocolMetadata); err != nil {
			return nil, &MemberError{MemberID: jm.MemberID, Err: err}
		}
		m := copartitioned.Member{ID: jm.MemberID, InstanceID: jm.InstanceID, Topics: meta.Topics}
		for _, op := range meta.OwnedPartitions {
			for _, p := range op.Partitions {
				m.Owned = append(m.Owned, copartitioned.TopicPartition{Topic: op.Topic, Partition: p})
			}
		}
		if len(m.Owned) == 0 {
			m.Owned, _, _ = copartitioned.DecodeOwned(meta.UserData)
		}
		out = append(out, m)
	}
	return out, nil
}

// MemberError names the member whose subscription could not be decoded.
type MemberError struct {
	MemberID string
	Err      error
}

func (e *MemberError) Error() string {
	return "copartitioned: the subscription of member " + e.MemberID + " does not decode: " + e.Err.Error()
}

func (e *MemberError) Unwrap() error { return e.Err }

// MemberBalancer decodes the members for one balance.
func (*Balancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	ms, err := Members(members)
	if err != nil {
		return nil, nil, err
	}
	topics := map[string]struct{}{}
	for _, m := range ms {
		for _, t := range m.Topics {
			topics[t] = struct{}{}
		}
	}
	return &memberBalancer{members: ms}, topics, nil
}

type memberBalancer struct{ members []copartitioned.Member }

// Balance is never called: kgo calls BalanceOrError.
func (b *memberBalancer) Balance(topics map[string]int32) kgo.IntoSyncAssignment {
	a, _ := b.BalanceOrError(topics)
	return a
}

// BalanceOrError places the members over topics (kgo gives a topic it could not load no entry).
func (b *memberBalancer) BalanceOrError(topics map[string]int32) (kgo.IntoSyncAssignment, error) {
	return Plan(b.members, topics), nil
}

// Plan is the leader's assignment of members over topics (partition counts), as kgo sends it:
// every member in the order given, each with its partitions and the co-partition groups.
func Plan(members []copartitioned.Member, topics map[string]int32) SyncAssignment {
	r := copartitioned.Assign(members, topics)
	out := make(SyncAssignment, 0, len(members))
	seen := map[string]bool{}
	for _, m := range members {
		if seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		a := kmsg.NewConsumerMemberAssignment()
		a.Version = AssignmentVersion
		a.UserData = r.UserData
		byTopic := map[string][]int32{}
		var names []string
		for _, tp := range r.Partitions[m.ID] {
			if _, ok := byTopic[tp.Topic]; !ok {
				names = append(names, tp.Topic)
			}
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		sort.Strings(names)
		for _, t := range names {
			at := kmsg.NewConsumerMemberAssignmentTopic()
			at.Topic = t
			at.Partitions = byTopic[t]
			sort.Slice(at.Partitions, func(i, j int) bool { return at.Partitions[i] < at.Partitions[j] })
			a.Topics = append(a.Topics, at)
		}
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID = m.ID
		sa.MemberAssignment = a.AppendTo(nil)
		out = append(out, sa)
	}
	return out
}

// SyncAssignment is the SyncGroup assignments, as kgo.IntoSyncAssignment.
type SyncAssignment []kmsg.SyncGroupRequestGroupAssignment

// IntoSyncAssignment returns the assignments.
func (s SyncAssignment) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment { return s }
