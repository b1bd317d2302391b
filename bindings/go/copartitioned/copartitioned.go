// Package copartitioned is partwise's co-partitioned sticky assignor in pure Go, with no Kafka
// client in it: members and partition counts in, each member's partitions and the unit-group
// user data out. It is a port of the Rust core (crates/partwise/src/assign/copartitioned.rs, as
// partwise-group's leader runs it) and of its user data (crates/partwise-wire/src/consumer.rs);
// the consistency vectors in tests/vectors/copartitioned/ hold the two to the same output, so a
// Go leader gives a group exactly what a Rust, Java or KafkaJS leader gives it.
//
// Topics with the same partition count and the same subscribers form a co-partition group;
// partition p of a group's topics is one unit, and units go whole to members. Each generation
// the assignor (1) keeps every unit with its previous owner (the member that owned most of the
// unit's partitions, ties to the member sorted first) if that member still subscribes; (2)
// hands the other units, in unit order, to the least-loaded subscriber; (3) moves units from
// the most- to the least-loaded member while that strictly narrows the gap. Every choice is
// ordered by (load, member rank, unit), ranks in Java's AbstractPartitionAssignor.MemberInfo
// order (static members first by group.instance.id, then by member id, both compared as Java
// compares strings).
//
// The packages sarama, franzgo and kafkago beside this one plug it into those clients.
package copartitioned

import (
	"encoding/binary"
	"errors"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Name is the group protocol name every partwise member announces (Rust, Java, KafkaJS, Go, Python).
const Name = "copartitioned"

// TopicPartition is one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Member is one member of the group as the leader sees it.
type Member struct {
	// ID is the member id the coordinator gave it.
	ID string
	// InstanceID is its group.instance.id; nil for a dynamic member.
	InstanceID *string
	// Topics it subscribes to (repeats allowed).
	Topics []string
	// Owned: the partitions it held in the previous generation (its claims).
	Owned []TopicPartition
}

// Result is each member's partitions and the user data every member gets.
type Result struct {
	// Partitions by member id, every member present (nil for none), each member's list by
	// topic name, then partition.
	Partitions map[string][]TopicPartition
	// UserData is the co-partition groups as the Rust leader writes them (`pwu\0`).
	UserData []byte
}

const none = int32(^uint32(0) >> 1) // math.MaxInt32: no owner

// JavaLess reports whether a sorts before b as java.lang.String.compareTo orders them (UTF-16
// code units), which differs from Go's byte order for characters above U+FFFF against
// U+E000..U+FFFF.
func JavaLess(a, b string) bool { return javaCompare(a, b) < 0 }

func javaCompare(a, b string) int {
	if !high(a) || !high(b) {
		return strings.Compare(a, b)
	}
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return len(x) - len(y)
}

// high: a byte of a character at or above U+E000 (lead byte 0xEE or more), the only case where
// UTF-8 byte order and UTF-16 order disagree.
func high(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xEE {
			return true
		}
	}
	return false
}

func memberCompare(a, b *Member) int {
	switch {
	case a.InstanceID != nil && b.InstanceID != nil:
		return javaCompare(*a.InstanceID, *b.InstanceID)
	case a.InstanceID != nil:
		return -1
	case b.InstanceID != nil:
		return 1
	}
	return javaCompare(a.ID, b.ID)
}

// Assign places members over the topics they subscribe to. counts gives a topic's partition
// count; a topic missing from it does not exist and its subscriptions are ignored.
func Assign(members []Member, counts map[string]int32) Result {
	known := map[string]int32{}
	for _, m := range members {
		for _, t := range m.Topics {
			if n, ok := counts[t]; ok {
				if n < 0 {
					n = 0
				}
				known[t] = n
			}
		}
	}
	// Topic indices in code point order (UTF-8 bytes), as the Rust leader's topic map.
	topics := make([]string, 0, len(known))
	for t := range known {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	partitions := make([]int32, len(topics))
	topicIndex := make(map[string]int, len(topics))
	for i, t := range topics {
		partitions[i] = known[t]
		topicIndex[t] = i
	}
	n := len(members)
	subscribed := make([][]int, n)
	for m := range members {
		for _, t := range members[m].Topics {
			if i, ok := topicIndex[t]; ok {
				subscribed[m] = append(subscribed[m], i)
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		return memberCompare(&members[order[x]], &members[order[y]]) < 0
	})
	pl := newPlacement(partitions, subscribed, order)
	for m := range members {
		for _, tp := range members[m].Owned {
			if t, ok := topicIndex[tp.Topic]; ok {
				pl.own(m, t, tp.Partition)
			}
		}
	}
	pl.place()

	groupOfTopic := make([]int, len(topics))
	for t := range groupOfTopic {
		groupOfTopic[t] = -1
	}
	for g, ts := range pl.groups {
		for _, t := range ts {
			groupOfTopic[t] = g
		}
	}
	held := make([][]int32, n)
	for u, m := range pl.owner {
		held[m] = append(held[m], int32(u))
	}
	out := make(map[string][]TopicPartition, n)
	for m := range members {
		var list []TopicPartition
		for t, name := range topics {
			g := groupOfTopic[t]
			if g < 0 {
				continue
			}
			for _, u := range held[m] {
				if pl.unitGroup[u] == int32(g) {
					list = append(list, TopicPartition{name, u - pl.unitBase[g]})
				}
			}
		}
		out[members[m].ID] = list
	}
	named := make([][]string, len(pl.groups))
	for g, ts := range pl.groups {
		for _, t := range ts {
			named[g] = append(named[g], topics[t])
		}
	}
	return Result{Partitions: out, UserData: EncodeUnitGroups(named)}
}

// placement is the assignor on indices: topics 0..T-1 in topic order, members 0..n-1.
type placement struct {
	partitions   []int32
	n            int
	order, rank  []int32
	groups       [][]int // each group's topics, ascending; groups by first topic
	groupMembers [][]int // each group's subscribers, ascending
	memberGroups [][]int // each member's groups, ascending
	unitBase     []int32 // group g's units are unitBase[g] .. unitBase[g+1]-1
	unitGroup    []int32
	owner        []int32
	load         []int64
	topicBase    []int
	prev         []int32 // lowest rank owning each partition, none for nobody
	groupOf      []int
}

func newPlacement(partitions []int32, subscribed [][]int, order []int) *placement {
	n := len(subscribed)
	pl := &placement{partitions: partitions, n: n, order: make([]int32, n), rank: make([]int32, n)}
	for r, m := range order {
		pl.order[r] = int32(m)
		pl.rank[m] = int32(r)
	}
	nt := len(partitions)
	pl.topicBase = make([]int, nt)
	total := 0
	for t := 0; t < nt; t++ {
		pl.topicBase[t] = total
		total += int(partitions[t])
	}
	pl.prev = make([]int32, total)
	for i := range pl.prev {
		pl.prev[i] = none
	}
	// Each topic's subscribers, ascending, without repeats.
	subscribers := make([][]int, nt)
	last := make([]int, nt)
	for t := range last {
		last[t] = -1
	}
	for m := 0; m < n; m++ {
		for _, t := range subscribed[m] {
			if last[t] != m {
				last[t] = m
				subscribers[t] = append(subscribers[t], m)
			}
		}
	}
	// A topic joins the group of the first topic before it with its count and subscribers.
	groupOfKey := map[string]int{}
	pl.groupOf = make([]int, nt)
	var key []byte
	for t := 0; t < nt; t++ {
		pl.groupOf[t] = -1
		if len(subscribers[t]) == 0 {
			continue
		}
		key = strconv.AppendInt(key[:0], int64(partitions[t]), 10)
		for _, m := range subscribers[t] {
			key = append(key, ',')
			key = strconv.AppendInt(key, int64(m), 10)
		}
		g, ok := groupOfKey[string(key)]
		if !ok {
			g = len(pl.groups)
			groupOfKey[string(key)] = g
			pl.groups = append(pl.groups, nil)
			pl.groupMembers = append(pl.groupMembers, subscribers[t])
		}
		pl.groupOf[t] = g
		pl.groups[g] = append(pl.groups[g], t)
	}
	pl.memberGroups = make([][]int, n)
	for g, ms := range pl.groupMembers {
		for _, m := range ms {
			pl.memberGroups[m] = append(pl.memberGroups[m], g)
		}
	}
	ng := len(pl.groups)
	pl.unitBase = make([]int32, ng+1)
	var units int32
	for g := 0; g < ng; g++ {
		pl.unitBase[g] = units
		units += partitions[pl.groups[g][0]]
	}
	pl.unitBase[ng] = units
	pl.unitGroup = make([]int32, units)
	for g := 0; g < ng; g++ {
		for u := pl.unitBase[g]; u < pl.unitBase[g+1]; u++ {
			pl.unitGroup[u] = int32(g)
		}
	}
	return pl
}

// own: member m owned partition p of topic t; a partition claimed twice goes to the member
// sorted first.
func (pl *placement) own(m, t int, p int32) {
	if p >= 0 && p < pl.partitions[t] {
		slot := pl.topicBase[t] + int(p)
		if pl.rank[m] < pl.prev[slot] {
			pl.prev[slot] = pl.rank[m]
		}
	}
}

func key(load int64, rank int32) uint64 { return uint64(load)<<32 | uint64(uint32(rank)) }

func (pl *placement) place() {
	ng := len(pl.groups)
	units := len(pl.unitGroup)
	pl.owner = make([]int32, units)
	for u := range pl.owner {
		pl.owner[u] = none
	}
	pl.load = make([]int64, pl.n)
	// Step 1: previous owners (most of the unit's partitions, ties to the lower rank), while
	// they still subscribe to the unit's group.
	inGroup := make([]bool, pl.n)
	var ranks []int32
	for g := 0; g < ng; g++ {
		ts := pl.groups[g]
		for _, m := range pl.groupMembers[g] {
			inGroup[m] = true
		}
		for u := pl.unitBase[g]; u < pl.unitBase[g+1]; u++ {
			i := int(u - pl.unitBase[g])
			var best int32
			if len(ts) == 1 {
				best = pl.prev[pl.topicBase[ts[0]]+i]
			} else {
				ranks = ranks[:0]
				for _, t := range ts {
					if r := pl.prev[pl.topicBase[t]+i]; r != none {
						ranks = append(ranks, r)
					}
				}
				best = mostClaims(ranks)
			}
			if best != none {
				m := pl.order[best]
				if inGroup[m] {
					pl.owner[u] = m
					pl.load[m]++
				}
			}
		}
		for _, m := range pl.groupMembers[g] {
			inGroup[m] = false
		}
	}

	// Step 2: unowned units in unit order, each to its group's least-loaded subscriber. Heap
	// entries go stale when a member's load changes and are dropped when they surface.
	heaps := make([]minHeap, ng)
	for g := 0; g < ng; g++ {
		for _, m := range pl.groupMembers[g] {
			heaps[g] = append(heaps[g], key(pl.load[m], pl.rank[m]))
		}
		heaps[g].init()
	}
	for u := 0; u < units; u++ {
		if pl.owner[u] != none {
			continue
		}
		m := pl.lightest(&heaps[pl.unitGroup[u]])
		pl.owner[u] = m
		pl.load[m]++
		for _, g := range pl.memberGroups[m] {
			heaps[g].push(key(pl.load[m], pl.rank[m]))
		}
	}

	// Step 3: loads within one of each other admit no narrowing move.
	if pl.n > 0 {
		min, max := pl.load[0], pl.load[0]
		for _, l := range pl.load {
			if l < min {
				min = l
			}
			if l > max {
				max = l
			}
		}
		if max > min+1 {
			pl.rebalance()
		}
	}
}

// lightest: the member on top of h once stale entries are dropped.
func (pl *placement) lightest(h *minHeap) int32 {
	for {
		k := h.peek()
		m := pl.order[uint32(k)]
		if uint64(pl.load[m]) == k>>32 {
			return m
		}
		h.pop()
	}
}

// mostClaims: the rank owning most partitions of a unit, ties to the lower rank; none for none.
func mostClaims(ranks []int32) int32 {
	if len(ranks) == 0 {
		return none
	}
	same := true
	for _, r := range ranks[1:] {
		if r != ranks[0] {
			same = false
			break
		}
	}
	if same {
		return ranks[0]
	}
	sort.Slice(ranks, func(i, j int) bool { return ranks[i] < ranks[j] })
	best, bestCount := none, 0
	for j := 0; j < len(ranks); {
		e := j
		for e < len(ranks) && ranks[e] == ranks[j] {
			e++
		}
		// Ranks ascend: a later rank wins only with strictly more claims.
		if e-j > bestCount {
			best, bestCount = ranks[j], e-j
		}
		j = e
	}
	return best
}

// rebalance is step 3: from the heaviest member down, the first move of a unit to the lightest
// member of one of its groups that strictly narrows the gap, until none does.
func (pl *placement) rebalance() {
	n := pl.n
	byLoad := make([]minHeap, len(pl.groups))
	for g, ms := range pl.groupMembers {
		for _, m := range ms {
			byLoad[g] = append(byLoad[g], key(pl.load[m], pl.rank[m]))
		}
		byLoad[g].init()
	}
	all := make([]uint64, n)
	for m := 0; m < n; m++ {
		all[m] = key(pl.load[m], pl.rank[m])
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	held := make([][]int32, n) // ascending
	for u, m := range pl.owner {
		held[m] = append(held[m], int32(u))
	}
	heavy := make([]uint64, n)
	for {
		moved := false
		for i := range all {
			heavy[i] = all[n-1-i]
		}
		for _, hk := range heavy {
			la, ra := int64(hk>>32), int32(uint32(hk))
			a := pl.order[ra]
			bestAfter, bestUnit, bestTo := int64(0), int32(-1), int32(-1)
			for _, g := range pl.memberGroups[a] {
				b := pl.lightest(&byLoad[g])
				lb, rb := pl.load[b], pl.rank[b]
				if rb == ra {
					continue
				}
				// Every unit weighs the same: a's highest unit of the group is as good as any,
				// and moving it keeps low indices put.
				hs := held[a]
				j := sort.Search(len(hs), func(k int) bool { return hs[k] >= pl.unitBase[g+1] }) - 1
				if j < 0 || hs[j] < pl.unitBase[g] {
					continue
				}
				if lb+1 < la {
					after := (la - 1) - (lb + 1)
					if after < 0 {
						after = -after
					}
					if bestUnit < 0 || after < bestAfter {
						bestAfter, bestUnit, bestTo = after, hs[j], b
					}
				}
			}
			if bestUnit >= 0 {
				b := bestTo
				held[a] = remove(held[a], bestUnit)
				held[b] = insert(held[b], bestUnit)
				pl.owner[bestUnit] = b
				all = removeKey(all, key(pl.load[a], pl.rank[a]))
				all = removeKey(all, key(pl.load[b], pl.rank[b]))
				pl.load[a]--
				pl.load[b]++
				all = insertKey(all, key(pl.load[a], pl.rank[a]))
				all = insertKey(all, key(pl.load[b], pl.rank[b]))
				for _, m := range []int32{a, b} {
					for _, g := range pl.memberGroups[m] {
						byLoad[g].push(key(pl.load[m], pl.rank[m]))
					}
				}
				moved = true
				break
			}
			// No lighter member can gain from anyone lighter than a.
			if la <= int64(all[0]>>32)+1 {
				break
			}
		}
		if !moved {
			return
		}
	}
}

func remove(s []int32, v int32) []int32 {
	i := sort.Search(len(s), func(k int) bool { return s[k] >= v })
	return append(s[:i], s[i+1:]...)
}

func insert(s []int32, v int32) []int32 {
	i := sort.Search(len(s), func(k int) bool { return s[k] >= v })
	s = append(s, 0)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func removeKey(s []uint64, v uint64) []uint64 {
	i := sort.Search(len(s), func(k int) bool { return s[k] >= v })
	return append(s[:i], s[i+1:]...)
}

func insertKey(s []uint64, v uint64) []uint64 {
	i := sort.Search(len(s), func(k int) bool { return s[k] >= v })
	s = append(s, 0)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// minHeap is a binary min-heap of (load, rank) keys.
type minHeap []uint64

func (h minHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h minHeap) peek() uint64 { return h[0] }

func (h *minHeap) pop() {
	s := *h
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.down(0)
}

func (h *minHeap) push(k uint64) {
	*h = append(*h, k)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= k {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = k
}

func (h minHeap) down(i int) {
	if len(h) == 0 {
		return
	}
	k := h[i]
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if k <= h[c] {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = k
}

var (
	unitsMagic = []byte{'p', 'w', 'u', 0}
	ownedMagic = []byte{'p', 'w', 'o', 0}
)

// EncodeUnitGroups writes the co-partition groups as assignment user data, byte for byte as the
// Rust leader writes them: `pwu\0`, an int32 group count, per group an int32 topic count and
// each name as an int16 length and its UTF-8 bytes (big-endian).
func EncodeUnitGroups(groups [][]string) []byte {
	b := append([]byte(nil), unitsMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(groups)))
	for _, g := range groups {
		b = binary.BigEndian.AppendUint32(b, uint32(len(g)))
		for _, t := range g {
			b = binary.BigEndian.AppendUint16(b, uint16(len(t)))
			b = append(b, t...)
		}
	}
	return b
}

var errNotOurs = errors.New("not partwise user data")

type walk []byte

func (w *walk) int(size int) (int64, error) {
	if len(*w) < size {
		return 0, errNotOurs
	}
	var v int64
	switch size {
	case 2:
		v = int64(int16(binary.BigEndian.Uint16(*w)))
	case 4:
		v = int64(int32(binary.BigEndian.Uint32(*w)))
	}
	*w = (*w)[size:]
	return v, nil
}

// count: an int32 count no larger than the bytes that follow (each item takes at least one).
func (w *walk) count() (int, error) {
	v, err := w.int(4)
	if err != nil || v < 0 || v > int64(len(*w)) {
		return 0, errNotOurs
	}
	return int(v), nil
}

func (w *walk) name() (string, error) {
	l, err := w.int(2)
	if err != nil || l < 0 || l > int64(len(*w)) {
		return "", errNotOurs
	}
	s := string((*w)[:l])
	*w = (*w)[l:]
	return s, nil
}

// DecodeUnitGroups reads user data written by EncodeUnitGroups; ok is false for anything else
// (another assignor's bytes, truncated or trailing bytes).
func DecodeUnitGroups(data []byte) (groups [][]string, ok bool) {
	if len(data) < 4 || string(data[:4]) != string(unitsMagic) {
		return nil, false
	}
	w := walk(data[4:])
	ng, err := w.count()
	if err != nil {
		return nil, false
	}
	groups = make([][]string, 0, ng)
	for g := 0; g < ng; g++ {
		nt, err := w.count()
		if err != nil {
			return nil, false
		}
		var names []string
		for t := 0; t < nt; t++ {
			name, err := w.name()
			if err != nil {
				return nil, false
			}
			names = append(names, name)
		}
		groups = append(groups, names)
	}
	return groups, len(w) == 0
}

// EncodeOwned writes owned partitions and their generation as subscription user data, as the
// Rust, Java and KafkaJS members write them (`pwo\0`): a leader that cannot read the standard
// owned-partitions field (an old subscription version, a client that drops it) reads them here.
func EncodeOwned(owned []TopicPartition, generation int32) []byte {
	byTopic := map[string][]int32{}
	var names []string
	for _, tp := range owned {
		if _, ok := byTopic[tp.Topic]; !ok {
			names = append(names, tp.Topic)
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	sort.Strings(names)
	b := append([]byte(nil), ownedMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(generation))
	b = binary.BigEndian.AppendUint32(b, uint32(len(names)))
	for _, t := range names {
		b = binary.BigEndian.AppendUint16(b, uint16(len(t)))
		b = append(b, t...)
		ps := byTopic[t]
		b = binary.BigEndian.AppendUint32(b, uint32(len(ps)))
		for _, p := range ps {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
	}
	return b
}

// DecodeOwned reads user data written by EncodeOwned; ok is false for anything else.
func DecodeOwned(data []byte) (owned []TopicPartition, generation int32, ok bool) {
	if len(data) < 4 || string(data[:4]) != string(ownedMagic) {
		return nil, 0, false
	}
	w := walk(data[4:])
	gen, err := w.int(4)
	if err != nil {
		return nil, 0, false
	}
	nt, err := w.count()
	if err != nil {
		return nil, 0, false
	}
	for t := 0; t < nt; t++ {
		name, err := w.name()
		if err != nil {
			return nil, 0, false
		}
		np, err := w.count()
		if err != nil {
			return nil, 0, false
		}
		for i := 0; i < np; i++ {
			p, err := w.int(4)
			if err != nil {
				return nil, 0, false
			}
			owned = append(owned, TopicPartition{name, int32(p)})
		}
	}
	if len(w) != 0 {
		return nil, 0, false
	}
	return owned, int32(gen), true
}
