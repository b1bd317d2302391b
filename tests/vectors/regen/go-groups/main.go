// Command go-groups calls the group balancers of the real Go clients (franz-go,
// Sarama, kafka-go; versions pinned in go.mod/go.sum) on consumer groups with
// fresh members, owned claims, mixed generations, unequal subscriptions and
// static members, and writes one JSON line per (group, balancer): the group
// in partwise's group-file shape and every distinct assignment the balancer
// gave over RUNS calls. No broker: each library's public balancer API is
// called directly, with the inputs its group leader hands it.
//
//	go run . -runs 200 -out ../../assignors/go_group_cases.jsonl
//	go run . -sticky -runs 100 -out ../../assignors/sarama_sticky_cases.jsonl
//
// The maps a leader passes are filled as that leader fills them (franz-go:
// a walk of the balancer's own topic map; Sarama: members in the
// coordinator's order, topics from a map; the harness draws a new order
// for Sarama's maps), and Go randomises every map's iteration: a balancer
// whose answer depends on a map's order gives more than one outcome.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
)

// Topic and member of partwise's group file (`assign --group`).
type Topic struct {
	Name       string `json:"name"`
	Partitions int32  `json:"partitions"`
}

type Member struct {
	ID           string   `json:"id"`
	InstanceID   *string  `json:"instance_id"`
	Subscription []string `json:"subscription"`
	// [[topic, [partitions...]], ...] in topic order.
	Owned      [][2]any `json:"owned_partitions"`
	Generation *int32   `json:"generation"`
}

type Group struct {
	Group   string   `json:"group"`
	Topics  []Topic  `json:"topics"`
	Members []Member `json:"members"`
}

// owned returns a member's claims as topic => partitions.
func (m *Member) owned() map[string][]int32 {
	out := map[string][]int32{}
	for _, o := range m.Owned {
		t := o[0].(string)
		out[t] = append(out[t], o[1].([]int32)...)
	}
	return out
}

func (m *Member) gen() int32 {
	if m.Generation == nil {
		return -1
	}
	return *m.Generation
}

// Assignment: member id => [[topic, partition], ...] sorted by topic, partition.
type Assignment map[string][][2]any

func (a Assignment) key() string {
	ids := make([]string, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var sb strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&sb, "%s=%v;", id, a[id])
	}
	return sb.String()
}

func fromPlan(g *Group, plan map[string]map[string][]int32) Assignment {
	a := Assignment{}
	for _, m := range g.Members {
		a[m.ID] = [][2]any{}
	}
	for id, topics := range plan {
		var names []string
		for t := range topics {
			names = append(names, t)
		}
		sort.Strings(names)
		list := [][2]any{}
		for _, t := range names {
			ps := append([]int32(nil), topics[t]...)
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			for _, p := range ps {
				list = append(list, [2]any{t, p})
			}
		}
		a[id] = list
	}
	return a
}

type Outcome struct {
	Assignment Assignment `json:"assignment"`
	Runs       int        `json:"runs"`
}

type Line struct {
	Client   string    `json:"client"`
	Version  string    `json:"version"`
	Assignor string    `json:"assignor"`
	Case     string    `json:"case"`
	Kind     string    `json:"kind"`
	Group    *Group    `json:"group"`
	Runs     int       `json:"runs"`
	Outcomes []Outcome `json:"outcomes"`
	Error    *string   `json:"error"`
}

type balancer struct {
	client, spec string
	run          func(g *Group, rng *rand.Rand) (map[string]map[string][]int32, error)
}

// shuffledTopics returns the group's subscribed topics in a random order:
// the order a leader's own map walk would fill the balancer's map in.
func subscribedTopics(g *Group, rng *rand.Rand) []Topic {
	want := map[string]bool{}
	for _, m := range g.Members {
		for _, t := range m.Subscription {
			want[t] = true
		}
	}
	var ts []Topic
	for _, t := range g.Topics {
		if want[t.Name] {
			ts = append(ts, t)
		}
	}
	rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	return ts
}

func main() {
	runs := flag.Int("runs", 200, "calls per (group, balancer)")
	out := flag.String("out", "", "output file (JSON lines)")
	sticky := flag.Bool("sticky", false, "Sarama's sticky strategies, each outcome as owners (sarama_sticky_cases.jsonl)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "go-groups: -out FILE is needed")
		os.Exit(2)
	}
	versions := moduleVersions()
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	w := bufio.NewWriter(f)
	cases := allCases()
	rng := rand.New(rand.NewSource(20261203))
	n := 0
	for _, c := range cases {
		bals := balancers()
		if *sticky {
			bals = stickyBalancers()
		}
		for _, b := range bals {
			if c.only != "" && !strings.HasPrefix(b.spec, c.only) {
				continue
			}
			seen := map[string]int{}
			var order []string
			plans := map[string]Assignment{}
			var errText *string
			for r := 0; r < *runs; r++ {
				plan, err := b.run(c.group, rng)
				if err != nil {
					s := err.Error()
					errText = &s
					break
				}
				a := fromPlan(c.group, plan)
				k := a.key()
				if seen[k] == 0 {
					order = append(order, k)
					plans[k] = a
				}
				seen[k]++
			}
			line := Line{
				Client: b.client, Version: versions[b.client], Assignor: b.spec,
				Case: c.name, Kind: c.kind, Group: c.group, Runs: *runs, Error: errText,
				Outcomes: []Outcome{},
			}
			if errText == nil {
				for _, k := range order {
					line.Outcomes = append(line.Outcomes, Outcome{plans[k], seen[k]})
				}
			}
			var buf []byte
			if *sticky {
				sl := StickyLine{
					Client: line.Client, Version: line.Version, Assignor: line.Assignor,
					Case: line.Case, Kind: line.Kind, Group: line.Group, Runs: line.Runs,
					Error: line.Error, Outcomes: []StickyOutcome{},
				}
				for _, o := range line.Outcomes {
					sl.Outcomes = append(sl.Outcomes, StickyOutcome{owners(c.group, o.Assignment), o.Runs})
				}
				buf, err = json.Marshal(sl)
			} else {
				buf, err = json.Marshal(line)
			}
			if err != nil {
				panic(err)
			}
			w.Write(buf)
			w.WriteByte('\n')
			n++
		}
	}
	w.Flush()
	f.Close()
	fmt.Fprintf(os.Stderr, "go-groups: %d cases, %d lines, %d runs each, %s, %v\n", len(cases), n, *runs, runtime.Version(), versions)
}

// moduleVersions reads the pinned versions from the build info.
func moduleVersions() map[string]string {
	v := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	for _, d := range info.Deps {
		switch d.Path {
		case "github.com/twmb/franz-go":
			v["franz-go"] = d.Version
		case "github.com/IBM/sarama":
			v["sarama"] = d.Version
		case "github.com/segmentio/kafka-go":
			v["kafka-go"] = d.Version
		}
	}
	return v
}
