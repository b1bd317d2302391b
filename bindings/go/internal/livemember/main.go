// Command livemember is one consumer-group member of a Go client with partwise's copartitioned
// assignor, a separate process for the live mixed-group tests (bindings/kafkajs/tests/live):
// prints one JSON line per assignment ({"event":"assigned","leader":bool,"generation":g,
// "partitions":[[topic,p],...]}) and per record handled ({"event":"record","value":...},
// committed after it is printed); SIGTERM leaves the group cleanly.
//
//	livemember sarama|franzgo|kafkago BOOTSTRAP GROUP CLIENT_ID TOPIC...
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"example.invalid/partwise/bindings/go/franzgo"
	"example.invalid/partwise/bindings/go/kafkago"
	pwsarama "example.invalid/partwise/bindings/go/sarama"
)

var out = struct {
	sync.Mutex
	enc *json.Encoder
}{enc: json.NewEncoder(os.Stdout)}

func say(v map[string]any) {
	out.Lock()
	defer out.Unlock()
	_ = out.enc.Encode(v)
}

func pairs(m map[string][]int32) [][]any {
	var ps [][]any
	for t, list := range m {
		for _, p := range list {
			ps = append(ps, []any{t, p})
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i][0].(string) != ps[j][0].(string) {
			return ps[i][0].(string) < ps[j][0].(string)
		}
		return ps[i][1].(int32) < ps[j][1].(int32)
	})
	if ps == nil {
		ps = [][]any{}
	}
	return ps
}

// led is set when this member's assignor ran as the leader, and read by the next assignment.
var led struct {
	sync.Mutex
	yes bool
}

func markLed() { led.Lock(); led.yes = true; led.Unlock() }
func takeLed() bool {
	led.Lock()
	defer led.Unlock()
	y := led.yes
	led.yes = false
	return y
}

func main() {
	if len(os.Args) < 6 {
		fmt.Fprintln(os.Stderr, "usage: livemember sarama|franzgo|kafkago BOOTSTRAP GROUP CLIENT_ID TOPIC...")
		os.Exit(2)
	}
	client, bootstrap, group, clientID, topics := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5:]
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var err error
	switch client {
	case "sarama":
		err = runSarama(ctx, bootstrap, group, clientID, topics)
	case "franzgo":
		err = runFranz(ctx, bootstrap, group, clientID, topics)
	case "kafkago":
		err = runKafkaGo(ctx, bootstrap, group, clientID, topics)
	default:
		err = fmt.Errorf("unknown client %q", client)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "livemember %s %s: %v\n", client, clientID, err)
		os.Exit(1)
	}
	say(map[string]any{"event": "left"})
}

// Sarama: a ConsumerGroup whose strategy is partwise's, wrapped to note when it plans.
type saramaLeader struct{ sarama.BalanceStrategy }

func (s saramaLeader) Plan(m map[string]sarama.ConsumerGroupMemberMetadata, t map[string][]int32) (sarama.BalanceStrategyPlan, error) {
	markLed()
	return s.BalanceStrategy.Plan(m, t)
}
func (s saramaLeader) SubscriptionUserData(topics []string) ([]byte, error) {
	return s.BalanceStrategy.(sarama.SubscriptionUserDataBalanceStrategy).SubscriptionUserData(topics)
}
func (s saramaLeader) OnAssignment(a *sarama.ConsumerGroupMemberAssignment, g int32) {
	s.BalanceStrategy.(sarama.OnAssignmentBalanceStrategy).OnAssignment(a, g)
}

type handler struct{}

func (handler) Setup(s sarama.ConsumerGroupSession) error {
	say(map[string]any{"event": "assigned", "memberId": s.MemberID(), "generation": s.GenerationID(), "leader": takeLed(), "partitions": pairs(s.Claims())})
	return nil
}
func (handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (handler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		say(map[string]any{"event": "record", "topic": msg.Topic, "partition": msg.Partition, "value": string(msg.Value)})
		s.MarkMessage(msg, "")
	}
	return nil
}

func runSarama(ctx context.Context, bootstrap, group, clientID string, topics []string) error {
	config := sarama.NewConfig()
	config.ClientID = clientID
	config.Version = sarama.V3_2_0_0
	config.Consumer.Offsets.Initial = sarama.OffsetOldest
	config.Consumer.Offsets.AutoCommit.Interval = 300 * time.Millisecond
	config.Consumer.Group.Session.Timeout = 6 * time.Second
	config.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	config.Consumer.Group.Rebalance.Timeout = 20 * time.Second
	config.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{saramaLeader{pwsarama.New()}}
	cg, err := sarama.NewConsumerGroup([]string{bootstrap}, group, config)
	if err != nil {
		return err
	}
	defer cg.Close()
	for ctx.Err() == nil {
		if err := cg.Consume(ctx, topics, handler{}); err != nil && !errors.Is(err, sarama.ErrClosedConsumerGroup) {
			fmt.Fprintf(os.Stderr, "livemember sarama %s: %v\n", clientID, err)
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// franz-go: a balancer wrapper that notes when it balances.
type franzLeader struct{ kgo.GroupBalancer }

func (b franzLeader) MemberBalancer(m []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	markLed()
	return b.GroupBalancer.MemberBalancer(m)
}

func runFranz(ctx context.Context, bootstrap, group, clientID string, topics []string) error {
	var cl *kgo.Client
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap), kgo.ClientID(clientID), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
		kgo.Balancers(franzLeader{franzgo.New()}), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(500*time.Millisecond), kgo.RebalanceTimeout(20*time.Second),
		kgo.AutoCommitInterval(300*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, c *kgo.Client, assigned map[string][]int32) {
			member, gen := c.GroupMetadata()
			say(map[string]any{"event": "assigned", "memberId": member, "generation": gen, "leader": takeLed(), "partitions": pairs(assigned)})
		}),
	)
	if err != nil {
		return err
	}
	defer func() {
		cl.Close() // leaves the group
	}()
	for ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		fetches.EachRecord(func(r *kgo.Record) {
			say(map[string]any{"event": "record", "topic": r.Topic, "partition": r.Partition, "value": string(r.Value)})
		})
	}
	return nil
}

// kafka-go: a ConsumerGroup (its Generation tells the balancer what this member owns).
type kgLeader struct{ *kafkago.Balancer }

func (b kgLeader) AssignGroups(m []kafka.GroupMember, p []kafka.Partition) kafka.GroupMemberAssignments {
	markLed()
	return b.Balancer.AssignGroups(m, p)
}

func runKafkaGo(ctx context.Context, bootstrap, group, clientID string, topics []string) error {
	b := kafkago.New()
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: group, Brokers: []string{bootstrap}, Topics: topics, GroupBalancers: []kafka.GroupBalancer{kgLeader{b}},
		Dialer: &kafka.Dialer{ClientID: clientID, Timeout: 10 * time.Second}, StartOffset: kafka.FirstOffset,
		SessionTimeout: 6 * time.Second, HeartbeatInterval: 500 * time.Millisecond, RebalanceTimeout: 20 * time.Second,
		JoinGroupBackoff: 200 * time.Millisecond,
	})
	if err != nil {
		return err
	}
	defer cg.Close()
	for ctx.Err() == nil {
		gen, err := cg.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintf(os.Stderr, "livemember kafkago %s: %v\n", clientID, err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		b.Remember(gen)
		assigned := map[string][]int32{}
		for t, ps := range gen.Assignments {
			for _, p := range ps {
				assigned[t] = append(assigned[t], int32(p.ID))
			}
		}
		say(map[string]any{"event": "assigned", "memberId": gen.MemberID, "generation": gen.ID, "leader": takeLed(), "partitions": pairs(assigned)})
		for t, ps := range gen.Assignments {
			for _, p := range ps {
				t, p := t, p
				gen.Start(func(ctx context.Context) {
					r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Topic: t, Partition: p.ID, MaxWait: 200 * time.Millisecond})
					defer r.Close()
					offset := p.Offset
					if offset < 0 {
						offset = kafka.FirstOffset
					}
					_ = r.SetOffset(offset)
					for {
						msg, err := r.ReadMessage(ctx)
						if err != nil {
							return
						}
						say(map[string]any{"event": "record", "topic": t, "partition": p.ID, "value": string(msg.Value)})
						_ = gen.CommitOffsets(map[string]map[int]int64{t: {p.ID: msg.Offset + 1}})
					}
				})
			}
		}
	}
	return nil
}
