// Command franz-go-group runs N franz-go consumers (kgo's default balancer,
// CooperativeStickyBalancer, unless -balancer names another) in one consumer
// group, all started at once so that the group's first generation has them
// all, waits until the group's partitions are all owned and steady, and
// prints one JSON line: each member's id and the partitions it owns.
//
//	go run . -bootstrap HOST:PORT -group G -topics a,b -members 3
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	bootstrap := flag.String("bootstrap", "", "broker")
	group := flag.String("group", "", "consumer group")
	topics := flag.String("topics", "", "comma-separated topics")
	members := flag.Int("members", 3, "members")
	total := flag.Int("partitions", 0, "partitions over the topics (the group is steady when all are owned)")
	timeout := flag.Duration("timeout", 90*time.Second, "give up after")
	flag.Parse()
	var mu sync.Mutex
	owned := make([]map[string][]int32, *members)
	clients := make([]*kgo.Client, *members)
	for i := range clients {
		i := i
		owned[i] = map[string][]int32{}
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(*bootstrap),
			kgo.ConsumerGroup(*group),
			kgo.ConsumeTopics(strings.Split(*topics, ",")...),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				defer mu.Unlock()
				for t, ps := range m {
					owned[i][t] = append(owned[i][t], ps...)
				}
			}),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				defer mu.Unlock()
				for t, ps := range m {
					keep := owned[i][t][:0]
					for _, p := range owned[i][t] {
						gone := false
						for _, q := range ps {
							gone = gone || p == q
						}
						if !gone {
							keep = append(keep, p)
						}
					}
					owned[i][t] = keep
				}
			}),
		)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		clients[i] = cl
	}
	for _, cl := range clients {
		cl := cl
		go func() {
			for {
				fs := cl.PollFetches(context.Background())
				if fs.IsClientClosed() {
					return
				}
			}
		}()
	}
	deadline := time.Now().Add(*timeout)
	steady := 0
	var last string
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		mu.Lock()
		n := 0
		for _, o := range owned {
			for _, ps := range o {
				n += len(ps)
			}
		}
		snap, _ := json.Marshal(owned)
		mu.Unlock()
		if n == *total && string(snap) == last {
			steady++
		} else {
			steady = 0
		}
		last = string(snap)
		if steady >= 6 {
			break
		}
	}
	out := map[string][][2]any{}
	mu.Lock()
	for i, cl := range clients {
		id, _ := cl.GroupMetadata()
		list := [][2]any{}
		var ts []string
		for t := range owned[i] {
			ts = append(ts, t)
		}
		sort.Strings(ts)
		for _, t := range ts {
			ps := append([]int32(nil), owned[i][t]...)
			sort.Slice(ps, func(a, b int) bool { return ps[a] < ps[b] })
			for _, p := range ps {
				list = append(list, [2]any{t, p})
			}
		}
		out[id] = list
	}
	mu.Unlock()
	if steady < 6 {
		fmt.Fprintln(os.Stderr, "franz-go-group: the group did not settle")
		os.Exit(1)
	}
	buf, _ := json.Marshal(out)
	fmt.Println(string(buf))
	for _, cl := range clients {
		cl.Close()
	}
}
