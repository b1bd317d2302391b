// Package sarama plugs partwise's co-partitioned assignor into IBM/sarama consumer groups:
//
//	config.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{partwise.New()}
//
// A Sarama leader then places exactly what a partwise leader in any other runtime places, and
// the group can mix Sarama members with Rust, Java, KafkaJS, franz-go, kafka-go and Python ones
// under the protocol name "copartitioned".
//
// What Sarama does not hand a strategy: the members' group.instance.id. A Sarama leader ranks
// every member by member id, so in a group with static members its placement can differ from
// the other runtimes' (each is still whole units, each partition once).
package sarama

import (
	"sort"
	"sync"

	"github.com/IBM/sarama"

	"example.invalid/partwise/bindings/go/copartitioned"
)

// Strategy is the sarama.BalanceStrategy; it also remembers its member's assignment
// (OnAssignment) and sends it in its next subscription (SubscriptionUserData), so a leader of
// any runtime keeps that member's units with it.
type Strategy struct {
	mu         sync.Mutex
	userData   []byte
	owned      []copartitioned.TopicPartition
	generation int32
}

var (
	_ sarama.SubscriptionUserDataBalanceStrategy = (*Strategy)(nil)
	_ sarama.OnAssignmentBalanceStrategy         = (*Strategy)(nil)
)

// New returns the strategy; give each consumer group its own.
func New() sarama.BalanceStrategy { return &Strategy{generation: -1} }

// Name is the group protocol name, "copartitioned".
func (s *Strategy) Name() string { return copartitioned.Name }

// Members turns Sarama's view of the group into the assignor's: owned partitions from the
// standard field, or when that is empty from the member's `pwo\0` user data.
func Members(members map[string]sarama.ConsumerGroupMemberMetadata) []copartitioned.Member {
	ids := make([]string, 0, len(members))
	for id := range members {
		ids = append(ids, id)
	}
	// A map has no order; ties in the member order (none in a real group) then resolve alike.
	sort.Strings(ids)
	out := make([]copartitioned.Member, 0, len(ids))
	for _, id := range ids {
		meta := members[id]
		m := copartitioned.Member{ID: id, Topics: meta.Topics}
		for _, op := range meta.OwnedPartitions {
			if op == nil {
				continue
			}
			for _, p := range op.Partitions {
				m.Owned = append(m.Owned, copartitioned.TopicPartition{Topic: op.Topic, Partition: p})
			}
		}
		if len(m.Owned) == 0 {
			m.Owned, _, _ = copartitioned.DecodeOwned(meta.UserData)
		}
		out = append(out, m)
	}
	return out
}

// Plan is the leader's placement. Every member gets an entry, also one with no partitions, so
// that Sarama asks AssignmentData for it and it learns the co-partition groups.
func (s *Strategy) Plan(members map[string]sarama.ConsumerGroupMemberMetadata, topics map[string][]int32) (sarama.BalanceStrategyPlan, error) {
	counts := make(map[string]int32, len(topics))
	for t, ps := range topics {
		counts[t] = int32(len(ps))
	}
	r := copartitioned.Assign(Members(members), counts)
	plan := make(sarama.BalanceStrategyPlan, len(r.Partitions))
	for id, tps := range r.Partitions {
		byTopic := map[string][]int32{}
		for _, tp := range tps {
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		plan[id] = byTopic
	}
	s.mu.Lock()
	s.userData = r.UserData
	s.mu.Unlock()
	return plan, nil
}

// AssignmentData is the co-partition groups of the last Plan, the same for every member.
func (s *Strategy) AssignmentData(memberID string, topics map[string][]int32, generationID int32) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userData, nil
}

// SubscriptionUserData is what this member owns, for a leader that reads no owned-partitions
// field.
func (s *Strategy) SubscriptionUserData(topics []string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return copartitioned.EncodeOwned(s.owned, s.generation), nil
}

// OnAssignment remembers this member's partitions for its next subscription.
func (s *Strategy) OnAssignment(a *sarama.ConsumerGroupMemberAssignment, generationID int32) {
	var owned []copartitioned.TopicPartition
	if a != nil {
		for t, ps := range a.Topics {
			for _, p := range ps {
				owned = append(owned, copartitioned.TopicPartition{Topic: t, Partition: p})
			}
		}
	}
	s.mu.Lock()
	s.owned, s.generation = owned, generationID
	s.mu.Unlock()
}
