package main

import (
	"fmt"
	"math/rand"
	"sort"
)

type gcase struct {
	name, kind string
	only       string // a spec prefix the case is for, or "" for every balancer
	group      *Group
}

func i32(v int32) *int32 { return &v }
func str(s string) *string { return &s }

func uniform(n int, topics []Topic, id func(int) string) []Member {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	ms := make([]Member, n)
	for i := range ms {
		ms[i] = Member{ID: id(i), Subscription: append([]string(nil), names...), Owned: [][2]any{}}
	}
	return ms
}

func plainID(i int) string { return fmt.Sprintf("m%02d", i) }

// claim gives member m partition p of topic t.
func claim(m *Member, t string, p int32) {
	for i := range m.Owned {
		if m.Owned[i][0] == t {
			m.Owned[i][1] = append(m.Owned[i][1].([]int32), p)
			return
		}
	}
	m.Owned = append(m.Owned, [2]any{t, []int32{p}})
}

func sortClaims(g *Group) {
	rank := map[string]int{}
	for i, t := range g.Topics {
		rank[t.Name] = i
	}
	for i := range g.Members {
		o := g.Members[i].Owned
		sort.Slice(o, func(a, b int) bool { return rank[o[a][0].(string)] < rank[o[b][0].(string)] })
		for _, c := range o {
			ps := c[1].([]int32)
			sort.Slice(ps, func(a, b int) bool { return ps[a] < ps[b] })
		}
	}
}

var counts = []int32{1, 2, 3, 4, 5, 6, 8, 12}

func randTopics(rng *rand.Rand, k int) []Topic {
	names := []string{"orders", "payments", "market-updates", "notifications", "t", "t-1", "a", "zz"}
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	ts := make([]Topic, k)
	for i := range ts {
		ts[i] = Topic{names[i], counts[rng.Intn(len(counts))]}
	}
	return ts
}

// Member ids whose string order is not their numeric order.
func mixedID(rng *rand.Rand) func(int) string {
	base := rng.Intn(7)
	return func(i int) string { return fmt.Sprintf("c%d-%x", (i*7+base)%13, i) }
}

func allCases() []gcase {
	var cs []gcase
	add := func(name, kind string, g *Group) {
		g.Group = name
		sortClaims(g)
		cs = append(cs, gcase{name: name, kind: kind, group: g})
	}
	two6 := []Topic{{"market-updates", 6}, {"notifications", 6}}
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7} {
		add(fmt.Sprintf("fresh-%d-members-2x6", n), "fresh", &Group{Topics: two6, Members: uniform(n, two6, plainID)})
	}
	two12 := []Topic{{"mu12", 12}, {"mu12b", 12}}
	add("fresh-5-members-2x12", "fresh", &Group{Topics: two12, Members: uniform(5, two12, plainID)})
	add("fresh-12-members-ids-m2-m10", "fresh", &Group{Topics: two12, Members: uniform(12, two12, func(i int) string { return fmt.Sprintf("m%d", i) })})
	three := []Topic{{"a", 4}, {"b", 8}, {"c", 3}}
	add("fresh-3-members-unequal-counts", "fresh", &Group{Topics: three, Members: uniform(3, three, plainID)})

	rng := rand.New(rand.NewSource(35))
	// Fresh groups, random shapes.
	for i := 0; i < 8; i++ {
		ts := randTopics(rng, 1+rng.Intn(3))
		add(fmt.Sprintf("fresh-random-%d", i), "fresh", &Group{Topics: ts, Members: uniform(1+rng.Intn(6), ts, mixedID(rng))})
	}
	// Owned claims: members of one generation rejoin with what they held,
	// some members new (no claims), some partitions unclaimed.
	for i := 0; i < 10; i++ {
		ts := randTopics(rng, 1+rng.Intn(3))
		n := 2 + rng.Intn(5)
		ms := uniform(n, ts, mixedID(rng))
		holders := 1 + rng.Intn(n)
		for h := 0; h < holders; h++ {
			ms[h].Generation = i32(7)
		}
		for _, t := range ts {
			for p := int32(0); p < t.Partitions; p++ {
				if rng.Intn(5) == 0 {
					continue
				}
				claim(&ms[rng.Intn(holders)], t.Name, p)
			}
		}
		rng.Shuffle(len(ms), func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
		add(fmt.Sprintf("owned-%d", i), "owned-claims", &Group{Topics: ts, Members: ms})
	}
	// The 2x6 group after one member left, and with one joining.
	{
		ms := uniform(2, two6, plainID)
		for _, m := range []int{0, 1} {
			ms[m].Generation = i32(3)
		}
		for p := int32(0); p < 6; p++ {
			claim(&ms[p%2], "market-updates", p)
			claim(&ms[(p+1)%2], "notifications", p)
		}
		add("owned-2x6-crossed", "owned-claims", &Group{Topics: two6, Members: ms})
		ms3 := append(uniform(1, two6, func(int) string { return "m02" }), ms...)
		add("owned-2x6-crossed-plus-one", "owned-claims", &Group{Topics: two6, Members: ms3})
	}
	// Mixed generations: a member rejoining with claims of an older
	// generation, some of them now claimed by a newer one too.
	for i := 0; i < 10; i++ {
		ts := randTopics(rng, 1+rng.Intn(3))
		n := 2 + rng.Intn(4)
		ms := uniform(n, ts, mixedID(rng))
		for m := range ms {
			ms[m].Generation = i32(int32(3 + rng.Intn(3)))
		}
		if rng.Intn(3) == 0 {
			ms[rng.Intn(n)].Generation = nil
		}
		for _, t := range ts {
			for p := int32(0); p < t.Partitions; p++ {
				claim(&ms[rng.Intn(n)], t.Name, p)
				if rng.Intn(3) == 0 {
					claim(&ms[rng.Intn(n)], t.Name, p)
				}
			}
		}
		// A claim listed twice by one member is dropped by nobody: keep
		// every member's list free of repeats.
		for m := range ms {
			for c := range ms[m].Owned {
				ps := ms[m].Owned[c][1].([]int32)
				seen := map[int32]bool{}
				out := ps[:0]
				for _, p := range ps {
					if !seen[p] {
						seen[p] = true
						out = append(out, p)
					}
				}
				ms[m].Owned[c][1] = out
			}
		}
		add(fmt.Sprintf("mixed-generations-%d", i), "mixed-generations", &Group{Topics: ts, Members: ms})
	}
	// Unequal subscriptions, fresh and with claims.
	for i := 0; i < 10; i++ {
		ts := randTopics(rng, 2+rng.Intn(3))
		n := 2 + rng.Intn(5)
		ms := uniform(n, ts, mixedID(rng))
		for m := range ms {
			var sub []string
			for _, t := range ts {
				if rng.Intn(3) != 0 {
					sub = append(sub, t.Name)
				}
			}
			if len(sub) == 0 {
				sub = []string{ts[rng.Intn(len(ts))].Name}
			}
			ms[m].Subscription = sub
		}
		if i%2 == 1 {
			for m := range ms {
				ms[m].Generation = i32(9)
			}
			for _, t := range ts {
				for p := int32(0); p < t.Partitions; p++ {
					m := rng.Intn(n)
					if rng.Intn(4) != 0 {
						claim(&ms[m], t.Name, p)
					}
				}
			}
		}
		add(fmt.Sprintf("unequal-subscriptions-%d", i), "unequal-subscriptions", &Group{Topics: ts, Members: ms})
	}
	// Static members: instance ids in an order unlike the member ids, some
	// members dynamic.
	for i := 0; i < 6; i++ {
		ts := randTopics(rng, 1+rng.Intn(3))
		n := 2 + rng.Intn(5)
		ms := uniform(n, ts, mixedID(rng))
		for m := range ms {
			if rng.Intn(4) != 0 {
				ms[m].InstanceID = str(fmt.Sprintf("worker-%d", n-m))
			}
		}
		if i%2 == 1 {
			for m := range ms {
				ms[m].Generation = i32(2)
			}
			for _, t := range ts {
				for p := int32(0); p < t.Partitions; p++ {
					claim(&ms[rng.Intn(n)], t.Name, p)
				}
			}
		}
		add(fmt.Sprintf("static-%d", i), "static-members", &Group{Topics: ts, Members: ms})
	}
	return cs
}
