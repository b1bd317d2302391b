package main

import (
	"encoding/binary"
	"math/rand"

	"github.com/IBM/sarama"
)

// stickyBalancers are Sarama's sticky strategies. Their answer follows Go's
// map order at many steps (which member's claim is read first, which
// partition is dealt next, which of several moved partitions moves back),
// so one group gives many outcomes: they are written to their own file, each
// outcome as the owner of every partition (-sticky).
func stickyBalancers() []balancer {
	return []balancer{
		{"sarama", "sarama:sticky", saramaSticky(false)},
		{"sarama", "sarama:cooperative-sticky", saramaSticky(true)},
	}
}

// saramaSticky calls a sticky strategy's Plan as Sarama's leader does:
// members as JoinGroupResponse.GetMembers fills its map (the coordinator's
// order), topics as consumerGroup.balance fills its own (a walk of the
// members, each member's subscription in order). The claims travel as each
// strategy's member sends them: the eager strategy reads only the user data
// its leader handed the member last time (StickyAssignorUserDataV1, written
// by its public AssignmentData; a claim without a generation as the
// version-0 data, which has none); the cooperative one reads the
// subscription's owned partitions and generation (subscription version 2,
// what Sarama sends to Kafka 3.2 and later).
func saramaSticky(cooperative bool) func(*Group, *rand.Rand) (map[string]map[string][]int32, error) {
	return func(g *Group, _ *rand.Rand) (map[string]map[string][]int32, error) {
		var s sarama.BalanceStrategy
		if cooperative {
			s = sarama.NewBalanceStrategyCooperativeSticky()
		} else {
			s = sarama.NewBalanceStrategySticky()
		}
		members := make(map[string]sarama.ConsumerGroupMemberMetadata, len(g.Members))
		for i := range g.Members {
			m := &g.Members[i]
			meta := sarama.ConsumerGroupMemberMetadata{
				Version:      2,
				Topics:       append([]string(nil), m.Subscription...),
				GenerationID: -1,
			}
			if cooperative {
				for _, o := range m.Owned {
					meta.OwnedPartitions = append(meta.OwnedPartitions, &sarama.OwnedPartition{
						Topic: o[0].(string), Partitions: append([]int32(nil), o[1].([]int32)...),
					})
				}
				meta.GenerationID = m.gen()
			} else if m.Generation != nil {
				ud, err := s.AssignmentData(m.ID, m.owned(), *m.Generation)
				if err != nil {
					return nil, err
				}
				meta.UserData = ud
			} else if len(m.Owned) > 0 {
				meta.UserData = stickyUserDataV0(m)
			}
			members[m.ID] = meta
		}
		topics := map[string][]int32{}
		for _, meta := range members {
			for _, t := range meta.Topics {
				topics[t] = nil
			}
		}
		counts := map[string]int32{}
		for _, t := range g.Topics {
			counts[t.Name] = t.Partitions
		}
		for t := range topics {
			ps := make([]int32, counts[t])
			for p := range ps {
				ps[p] = int32(p)
			}
			topics[t] = ps
		}
		return s.Plan(members, topics)
	}
}

// stickyUserDataV0 writes StickyAssignorUserDataV0 (topics and their
// partitions, no generation): Kafka's array and string encoding, big-endian.
func stickyUserDataV0(m *Member) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint32(b, uint32(len(m.Owned)))
	for _, o := range m.Owned {
		t := o[0].(string)
		b = binary.BigEndian.AppendUint16(b, uint16(len(t)))
		b = append(b, t...)
		ps := o[1].([]int32)
		b = binary.BigEndian.AppendUint32(b, uint32(len(ps)))
		for _, p := range ps {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
	}
	return b
}

// StickyOutcome is one distinct assignment as the owner of every partition:
// Owners[t][p] indexes the group's members (-1: nobody, -2: more than one
// member), t its topics.
type StickyOutcome struct {
	Owners [][]int `json:"owners"`
	Runs   int     `json:"runs"`
}

type StickyLine struct {
	Client   string          `json:"client"`
	Version  string          `json:"version"`
	Assignor string          `json:"assignor"`
	Case     string          `json:"case"`
	Kind     string          `json:"kind"`
	Group    *Group          `json:"group"`
	Runs     int             `json:"runs"`
	Outcomes []StickyOutcome `json:"outcomes"`
	Error    *string         `json:"error"`
}

func owners(g *Group, a Assignment) [][]int {
	tindex := map[string]int{}
	out := make([][]int, len(g.Topics))
	for i, t := range g.Topics {
		tindex[t.Name] = i
		out[i] = make([]int, t.Partitions)
		for p := range out[i] {
			out[i][p] = -1
		}
	}
	for mi, m := range g.Members {
		for _, tp := range a[m.ID] {
			t, ok := tindex[tp[0].(string)]
			p := int(tp[1].(int32))
			if !ok || p >= len(out[t]) {
				continue
			}
			if out[t][p] != -1 {
				// Two owners: written as -2, which no simulation gives.
				out[t][p] = -2
				continue
			}
			out[t][p] = mi
		}
	}
	return out
}
