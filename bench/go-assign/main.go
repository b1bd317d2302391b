// assign() of partwise's copartitioned assignor through each Go client's interface, beside that
// client's own round-robin, on the same members and partition counts: 1,000 members x 100,000
// partitions (two co-partitioned topics of 50,000). partwise is timed on a fresh group and on
// a sticky round (one member left, the others report what they own). Medians of -runs runs
// after -warm warm-up runs, the peers interleaved run by run; prints JSON (bench/go-assign/run
// writes it to bench/results/go_assign.json).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"example.invalid/partwise/bindings/go/copartitioned"
	"example.invalid/partwise/bindings/go/franzgo"
	"example.invalid/partwise/bindings/go/kafkago"
	pwsarama "example.invalid/partwise/bindings/go/sarama"
)

var topics = []string{"market-updates", "notifications"}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "consumer-" + strconv.Itoa(i) + "-0a1b2c3d-4e5f-6789-abcd-ef0123456789"
	}
	return out
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func timeIt(f func()) float64 {
	start := time.Now()
	f()
	return float64(time.Since(start).Microseconds()) / 1000
}

func main() {
	members := flag.Int("members", 1000, "members")
	partitions := flag.Int("partitions", 100000, "partitions in all (two topics of half each)")
	runs := flag.Int("runs", 7, "timed runs")
	warm := flag.Int("warm", 2, "warm-up runs")
	flag.Parse()
	per := int32(*partitions / 2)
	memberIDs := ids(*members)
	counts := map[string]int32{topics[0]: per, topics[1]: per}

	// The fresh group, and the sticky round: what the fresh group's placement gave everyone, with
	// the last member gone.
	fresh := make([]copartitioned.Member, *members)
	for i, id := range memberIDs {
		fresh[i] = copartitioned.Member{ID: id, Topics: topics}
	}
	first := copartitioned.Assign(fresh, counts)
	sticky := make([]copartitioned.Member, *members-1)
	for i, id := range memberIDs[:*members-1] {
		sticky[i] = copartitioned.Member{ID: id, Topics: topics, Owned: first.Partitions[id]}
	}

	// Sarama: members as its JoinGroup decoding gives them.
	saramaMembers := func(ms []copartitioned.Member) map[string]sarama.ConsumerGroupMemberMetadata {
		out := map[string]sarama.ConsumerGroupMemberMetadata{}
		for _, m := range ms {
			meta := sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: m.Topics}
			byTopic := map[string][]int32{}
			for _, tp := range m.Owned {
				byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
			}
			for t, ps := range byTopic {
				meta.OwnedPartitions = append(meta.OwnedPartitions, &sarama.OwnedPartition{Topic: t, Partitions: ps})
			}
			out[m.ID] = meta
		}
		return out
	}
	saramaTopics := map[string][]int32{}
	for _, t := range topics {
		ps := make([]int32, per)
		for p := range ps {
			ps[p] = int32(p)
		}
		saramaTopics[t] = ps
	}
	// franz-go: JoinGroup members with the balancer's own metadata.
	kgoMembers := func(b kgo.GroupBalancer, ms []copartitioned.Member) []kmsg.JoinGroupResponseMember {
		out := make([]kmsg.JoinGroupResponseMember, len(ms))
		for i, m := range ms {
			current := map[string][]int32{}
			for _, tp := range m.Owned {
				current[tp.Topic] = append(current[tp.Topic], tp.Partition)
			}
			out[i] = kmsg.NewJoinGroupResponseMember()
			out[i].MemberID = m.ID
			out[i].ProtocolMetadata = b.JoinGroupMetadata(m.Topics, current, 1)
		}
		return out
	}
	kgoBalance := func(b kgo.GroupBalancer, jm []kmsg.JoinGroupResponseMember) {
		mb, _, err := b.MemberBalancer(jm)
		if err != nil {
			panic(err)
		}
		if e, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
			if _, err := e.BalanceOrError(counts); err != nil {
				panic(err)
			}
			return
		}
		mb.Balance(counts).IntoSyncAssignment()
	}
	// kafka-go: GroupMembers with `pwo\0` user data, and its partition list.
	kgMembers := func(ms []copartitioned.Member) []kafka.GroupMember {
		out := make([]kafka.GroupMember, len(ms))
		for i, m := range ms {
			out[i] = kafka.GroupMember{ID: m.ID, Topics: m.Topics, UserData: copartitioned.EncodeOwned(m.Owned, 1)}
		}
		return out
	}
	var kgPartitions []kafka.Partition
	for _, t := range topics {
		for p := 0; p < int(per); p++ {
			kgPartitions = append(kgPartitions, kafka.Partition{Topic: t, ID: p})
		}
	}

	type peer struct {
		name string
		run  func()
	}
	sFresh, sSticky := saramaMembers(fresh), saramaMembers(sticky)
	rrKgo := kgo.RoundRobinBalancer()
	fKgo, kgoFresh := franzgo.New(), []kmsg.JoinGroupResponseMember(nil)
	kgoFresh = kgoMembers(fKgo, fresh)
	kgoSticky := kgoMembers(fKgo, sticky)
	rrKgoMembers := kgoMembers(fKgo, fresh) // kgo's round-robin reads the same consumer metadata
	kgFresh, kgSticky := kgMembers(fresh), kgMembers(sticky)
	peers := []peer{
		{"core_fresh", func() { copartitioned.Assign(fresh, counts) }},
		{"core_sticky", func() { copartitioned.Assign(sticky, counts) }},
		{"sarama_copartitioned_fresh", func() { _, _ = pwsarama.New().Plan(sFresh, saramaTopics) }},
		{"sarama_copartitioned_sticky", func() { _, _ = pwsarama.New().Plan(sSticky, saramaTopics) }},
		{"sarama_roundrobin", func() { _, _ = sarama.NewBalanceStrategyRoundRobin().Plan(sFresh, saramaTopics) }},
		{"franzgo_copartitioned_fresh", func() { kgoBalance(fKgo, kgoFresh) }},
		{"franzgo_copartitioned_sticky", func() { kgoBalance(fKgo, kgoSticky) }},
		{"franzgo_roundrobin", func() { kgoBalance(rrKgo, rrKgoMembers) }},
		{"kafkago_copartitioned_fresh", func() { kafkago.New().AssignGroups(kgFresh, kgPartitions) }},
		{"kafkago_copartitioned_sticky", func() { kafkago.New().AssignGroups(kgSticky, kgPartitions) }},
		{"kafkago_roundrobin", func() { kafka.RoundRobinGroupBalancer{}.AssignGroups(kgFresh, kgPartitions) }},
	}
	times := map[string][]float64{}
	for r := 0; r < *warm+*runs; r++ {
		for _, p := range peers {
			runtime.GC()
			ms := timeIt(p.run)
			if r >= *warm {
				times[p.name] = append(times[p.name], ms)
			}
		}
	}
	out := map[string]any{
		"members": *members, "partitions": *partitions, "topics": topics, "runs": *runs, "warm_up": *warm,
		"go": runtime.Version(), "sarama": "1.61.1", "franz-go": "1.22.3", "kafka-go": "0.4.51",
		"cpus": runtime.NumCPU(),
	}
	med := map[string]float64{}
	for _, p := range peers {
		med[p.name+"_ms_median"] = median(times[p.name])
	}
	out["results"] = med
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
