// Package kafkago plugs partwise's co-partitioned assignor into segmentio/kafka-go consumer
// groups:
//
//	kafka.NewReader(kafka.ReaderConfig{GroupID: "g", GroupTopics: []string{"orders", "payments"},
//		GroupBalancers: []kafka.GroupBalancer{kafkago.New()}})
//
// A kafka-go leader places exactly what a partwise leader in any other runtime places, with two
// limits of kafka-go 0.4's interface, which the Balancer cannot lift:
//
//   - kafka-go writes the leader's assignments itself, with no user data: members led by a
//     kafka-go leader do not receive the co-partition groups (partwise members then work them
//     out from their own subscription);
//   - kafka-go tells a balancer neither its member's assignment nor the members'
//     group.instance.id (kafka-go has no static membership). A member sends what it owns only
//     if told: with kafka.ConsumerGroup call Remember(generation) after each Next; a
//     kafka.Reader member rejoins owning nothing, so a leader keeps the other members' units
//     where they are and may move this one's.
package kafkago

import (
	"sync"

	"github.com/segmentio/kafka-go"

	"example.invalid/partwise/bindings/go/copartitioned"
)

// Balancer is the kafka.GroupBalancer.
type Balancer struct {
	mu         sync.Mutex
	owned      []copartitioned.TopicPartition
	generation int32
}

var _ kafka.GroupBalancer = (*Balancer)(nil)

// New returns the balancer; give each consumer group its own.
func New() *Balancer { return &Balancer{generation: -1} }

// ProtocolName is "copartitioned".
func (b *Balancer) ProtocolName() string { return copartitioned.Name }

// UserData is what this member owns as `pwo\0` user data (kafka-go sends subscriptions of
// version 1 without the owned-partitions field).
func (b *Balancer) UserData() ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return copartitioned.EncodeOwned(b.owned, b.generation), nil
}

// Remember records this member's assignment in gen, to send in its next subscription.
func (b *Balancer) Remember(gen *kafka.Generation) {
	var owned []copartitioned.TopicPartition
	for t, ps := range gen.Assignments {
		for _, p := range ps {
			owned = append(owned, copartitioned.TopicPartition{Topic: t, Partition: int32(p.ID)})
		}
	}
	b.mu.Lock()
	b.owned, b.generation = owned, gen.ID
	b.mu.Unlock()
}

// AssignGroups is the leader's placement. kafka-go gives it the partitions of the topics it
// could load (a missing topic has none, and its subscriptions are ignored).
func (b *Balancer) AssignGroups(members []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	counts := map[string]int32{}
	for _, p := range partitions {
		if int32(p.ID) >= counts[p.Topic] {
			counts[p.Topic] = int32(p.ID) + 1
		}
	}
	ms := make([]copartitioned.Member, 0, len(members))
	for _, gm := range members {
		owned, _, _ := copartitioned.DecodeOwned(gm.UserData)
		ms = append(ms, copartitioned.Member{ID: gm.ID, Topics: gm.Topics, Owned: owned})
	}
	r := copartitioned.Assign(ms, counts)
	out := make(kafka.GroupMemberAssignments, len(r.Partitions))
	for id, tps := range r.Partitions {
		byTopic := map[string][]int{}
		for _, tp := range tps {
			byTopic[tp.Topic] = append(byTopic[tp.Topic], int(tp.Partition))
		}
		out[id] = byTopic
	}
	return out
}
