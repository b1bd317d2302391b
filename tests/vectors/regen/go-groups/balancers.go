package main

import (
	"math/rand"
	"sort"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func balancers() []balancer {
	return []balancer{
		{"franz-go", "franz-go:cooperative-sticky", franz(kgo.CooperativeStickyBalancer())},
		{"franz-go", "franz-go:sticky", franz(kgo.StickyBalancer())},
		{"franz-go", "franz-go:range", franz(kgo.RangeBalancer())},
		{"franz-go", "franz-go:roundrobin", franz(kgo.RoundRobinBalancer())},
		{"sarama", "sarama:range", saramaPlan(sarama.NewBalanceStrategyRange())},
		{"sarama", "sarama:roundrobin", saramaPlan(sarama.NewBalanceStrategyRoundRobin())},
		{"kafka-go", "kafka-go:range", kafkaGo(kafkago.RangeGroupBalancer{})},
		{"kafka-go", "kafka-go:roundrobin", kafkaGo(kafkago.RoundRobinGroupBalancer{})},
	}
}

// franz-go's leader (groupConsumer.balanceGroup) sorts the JoinGroup
// members (static members first by instance id, then by member id) before
// MemberBalancer; joinMemberLess is unexported, so its rule is restated here.
func sortJoinMembers(ms []kmsg.JoinGroupResponseMember) {
	sort.Slice(ms, func(i, j int) bool {
		l, r := &ms[i], &ms[j]
		if l.InstanceID != nil {
			if r.InstanceID == nil {
				return true
			}
			return *l.InstanceID < *r.InstanceID
		}
		if r.InstanceID != nil {
			return false
		}
		return l.MemberID < r.MemberID
	})
}

// franz calls a kgo.GroupBalancer as its leader does (the Go maps are the
// leader's own, so their orders are Go's): every member's
// JoinGroup metadata is what that balancer's JoinGroupMetadata writes for
// the member's subscription, claims and generation; MemberBalancer on the
// sorted members; BalanceOrError over the partition counts of the topics it
// names; each member's SyncGroup bytes read back with ParseSyncAssignment.
func franz(bal kgo.GroupBalancer) func(*Group, *rand.Rand) (map[string]map[string][]int32, error) {
	return func(g *Group, rng *rand.Rand) (map[string]map[string][]int32, error) {
		members := make([]kmsg.JoinGroupResponseMember, 0, len(g.Members))
		for i := range g.Members {
			m := &g.Members[i]
			interests := append([]string(nil), m.Subscription...)
			sort.Strings(interests)
			jm := kmsg.NewJoinGroupResponseMember()
			jm.MemberID = m.ID
			jm.InstanceID = m.InstanceID
			jm.ProtocolMetadata = bal.JoinGroupMetadata(interests, m.owned(), m.gen())
			members = append(members, jm)
		}
		sortJoinMembers(members)
		mb, topics, err := bal.MemberBalancer(members)
		if err != nil {
			return nil, err
		}
		// As balanceGroup fills topicPartitionCount: a walk of the
		// balancer's own topic map, keeping the topics that exist.
		exists := map[string]int32{}
		for _, t := range g.Topics {
			exists[t.Name] = t.Partitions
		}
		counts := make(map[string]int32, len(topics))
		for topic := range topics {
			if n, ok := exists[topic]; ok {
				counts[topic] = n
			}
		}
		var into kgo.IntoSyncAssignment
		if be, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
			if into, err = be.BalanceOrError(counts); err != nil {
				return nil, err
			}
		} else {
			into = mb.Balance(counts)
		}
		plan := map[string]map[string][]int32{}
		for _, sa := range into.IntoSyncAssignment() {
			got, err := bal.ParseSyncAssignment(sa.MemberAssignment)
			if err != nil {
				return nil, err
			}
			plan[sa.MemberID] = got
		}
		return plan, nil
	}
}

// saramaPlan calls BalanceStrategy.Plan as Sarama's leader
// (consumerGroup.balance) does: members keyed by id, and every subscribed
// topic with its partitions in ascending order (client.Partitions).
func saramaPlan(s sarama.BalanceStrategy) func(*Group, *rand.Rand) (map[string]map[string][]int32, error) {
	return func(g *Group, rng *rand.Rand) (map[string]map[string][]int32, error) {
		idx := rng.Perm(len(g.Members))
		members := make(map[string]sarama.ConsumerGroupMemberMetadata, len(g.Members))
		for _, i := range idx {
			m := &g.Members[i]
			var owned []*sarama.OwnedPartition
			for t, ps := range m.owned() {
				owned = append(owned, &sarama.OwnedPartition{Topic: t, Partitions: ps})
			}
			members[m.ID] = sarama.ConsumerGroupMemberMetadata{
				Version: 3, Topics: append([]string(nil), m.Subscription...),
				OwnedPartitions: owned, GenerationID: m.gen(),
			}
		}
		topics := map[string][]int32{}
		for _, t := range subscribedTopics(g, rng) {
			ps := make([]int32, t.Partitions)
			for p := range ps {
				ps[p] = int32(p)
			}
			topics[t.Name] = ps
		}
		plan, err := s.Plan(members, topics)
		if err != nil {
			return nil, err
		}
		return plan, nil
	}
}

// kafkaGo calls GroupBalancer.AssignGroups with the members in the
// coordinator's order and the partitions of the subscribed topics, topic by
// topic, in ascending order.
func kafkaGo(b kafkago.GroupBalancer) func(*Group, *rand.Rand) (map[string]map[string][]int32, error) {
	return func(g *Group, rng *rand.Rand) (map[string]map[string][]int32, error) {
		members := make([]kafkago.GroupMember, 0, len(g.Members))
		for _, m := range g.Members {
			members = append(members, kafkago.GroupMember{ID: m.ID, Topics: append([]string(nil), m.Subscription...)})
		}
		want := map[string]bool{}
		for _, m := range g.Members {
			for _, t := range m.Subscription {
				want[t] = true
			}
		}
		var parts []kafkago.Partition
		for _, t := range g.Topics {
			if !want[t.Name] {
				continue
			}
			for p := 0; p < int(t.Partitions); p++ {
				parts = append(parts, kafkago.Partition{Topic: t.Name, ID: p})
			}
		}
		got := b.AssignGroups(members, parts)
		plan := map[string]map[string][]int32{}
		for id, topics := range got {
			plan[id] = map[string][]int32{}
			for t, ps := range topics {
				for _, p := range ps {
					plan[id][t] = append(plan[id][t], int32(p))
				}
			}
		}
		return plan, nil
	}
}
