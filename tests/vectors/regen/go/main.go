// Command vectors-regen produces every key of tests/vectors/generated/keys.jsonl
// to a live Kafka broker with the partitioners of the real Go clients (Sarama,
// franz-go, kafka-go; versions pinned in go.mod/go.sum) and writes, per
// partitioner, the partition each record's produce result named.
//
//	go run . -bootstrap 127.0.0.1:9092 -broker-version 4.1.1 -out ../../generated
//
// Each partitioner gets ROUNDS fresh producers that must agree; afterwards every
// record of the run is consumed back and must sit in the partition its produce
// result named. Cases the client places at random (a nil key for most
// partitioners, an empty key for kafka-go's CRC32Balancer) are not produced.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

var partitionCounts = []int{1, 2, 3, 6, 7, 8, 12, 100, 1000}

const rounds = 3

// A corpus key: raw bytes plus the verbatim JSON of its "key" field, so the
// output lines carry the text exactly as keys.jsonl (and the Python
// generators) spell it.
type corpusKey struct {
	hex   string
	bytes []byte
	text  json.RawMessage
}

// One produced case: a corpus key, or the nil key (isNull).
type kcase struct {
	isNull bool
	key    corpusKey
}

func (c kcase) recordKey() []byte {
	if c.isNull {
		return nil
	}
	if len(c.key.bytes) == 0 {
		// A zero-length but non-nil key: every client here tells it from nil.
		return []byte{}
	}
	return c.key.bytes
}

// One record to produce and where its result goes.
type rec struct {
	topic string
	key   []byte
	value []byte
	caseI int
	n     int
}

// A partitioner under test. produce sends recs with a fresh producer and
// returns each record's partition as the client's produce result gives it.
type generator struct {
	file      string
	client    string
	partition string // the client's own name for the partitioner
	nullKey   bool   // nil key deterministic: produced, one null_key line per count
	emptyKey  bool   // empty key deterministic: produced
	note      string
	produce   func(ctx context.Context, brokers []string, recs []rec) ([]int32, error)
}

func topicFor(prefix string, n int) string { return fmt.Sprintf("%s-n%d", prefix, n) }

func loadKeys(path string) ([]corpusKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var keys []corpusKey
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var d struct {
			KeyHex string          `json:"key_hex"`
			Key    json.RawMessage `json:"key"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		b, err := hex.DecodeString(d.KeyHex)
		if err != nil {
			return nil, fmt.Errorf("%s: key_hex %q: %v", path, d.KeyHex, err)
		}
		keys = append(keys, corpusKey{hex: d.KeyHex, bytes: b, text: append(json.RawMessage(nil), d.Key...)})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no keys", path)
	}
	return keys, nil
}

func casesFor(g generator, keys []corpusKey) []kcase {
	var cs []kcase
	if g.nullKey {
		cs = append(cs, kcase{isNull: true})
	}
	for _, k := range keys {
		if len(k.bytes) == 0 && !g.emptyKey {
			continue
		}
		cs = append(cs, kcase{key: k})
	}
	return cs
}

func line(c kcase, n int, p int32) string {
	if c.isNull {
		return fmt.Sprintf(`{"key_hex":null,"key":null,"partitions":%d,"partition":%d,"null_key":true}`, n, p)
	}
	return fmt.Sprintf(`{"key_hex":"%s","key":%s,"partitions":%d,"partition":%d}`, c.key.hex, c.key.text, n, p)
}

type ledgerEntry struct {
	topic     string
	partition int32
	key       []byte
	isNull    bool
}

func run() error {
	bootstrap := flag.String("bootstrap", os.Getenv("PARTWISE_KAFKA_BOOTSTRAP"), "broker list, comma-separated (default $PARTWISE_KAFKA_BOOTSTRAP)")
	brokerVersion := flag.String("broker-version", os.Getenv("PARTWISE_KAFKA_VERSION"), "the broker's Apache Kafka version, recorded in the run file (default $PARTWISE_KAFKA_VERSION)")
	out := flag.String("out", "", "output directory (default: ../../generated, i.e. tests/vectors/generated when run from tests/vectors/regen/go)")
	keysPath := flag.String("keys", "", "key corpus (default: OUT/keys.jsonl)")
	prefix := flag.String("topic-prefix", "pwgo", "topics are PREFIX-n<N>; created with N partitions when missing")
	only := flag.String("only", "", "comma-separated output file stems to generate (default: all)")
	flag.Parse()
	if *bootstrap == "" {
		return usageError{"no broker: pass -bootstrap HOST:PORT or set PARTWISE_KAFKA_BOOTSTRAP"}
	}
	if *out == "" {
		wd, _ := os.Getwd()
		*out = filepath.Join(wd, "..", "..", "generated")
	}
	if *keysPath == "" {
		*keysPath = filepath.Join(*out, "keys.jsonl")
	}
	brokers := strings.Split(*bootstrap, ",")
	if *brokerVersion == "" {
		*brokerVersion = "unknown"
	}
	keys, err := loadKeys(*keysPath)
	if err != nil {
		return usageError{err.Error()}
	}
	versions := moduleVersions()
	fmt.Printf("go %s; %s; broker %s at %s; %d keys\n", runtime.Version(), versionLine(versions), *brokerVersion, *bootstrap, len(keys))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := ensureTopics(ctx, brokers, *prefix); err != nil {
		return fmt.Errorf("topics: %w", err)
	}

	var gens []generator
	gens = append(gens, saramaGenerators()...)
	gens = append(gens, franzGenerators()...)
	gens = append(gens, kafkaGoGenerators()...)
	if *only != "" {
		want := map[string]bool{}
		for _, s := range strings.Split(*only, ",") {
			want[strings.TrimSuffix(s, ".jsonl")] = true
		}
		var kept []generator
		for _, g := range gens {
			if want[strings.TrimSuffix(g.file, ".jsonl")] {
				kept = append(kept, g)
			}
		}
		if len(kept) != len(want) {
			return usageError{fmt.Sprintf("-only %q: unknown file stem", *only)}
		}
		gens = kept
	}

	runID := fmt.Sprintf("%x", time.Now().UnixNano())
	ledger := map[string]ledgerEntry{}
	type fileRecord struct {
		File      string  `json:"file"`
		Client    string  `json:"client"`
		Partition string  `json:"partitioner"`
		Lines     int     `json:"lines"`
		NullKey   bool    `json:"null_key_produced"`
		EmptyKey  bool    `json:"empty_key_produced"`
		Note      string  `json:"note"`
		NilProbe  []int32 `json:"nil_key_probe,omitempty"`
		NilKind   string  `json:"nil_key_probe_looks,omitempty"`
	}
	var files []fileRecord
	for _, g := range gens {
		t0 := time.Now()
		cases := casesFor(g, keys)
		var first []int32
		var recs []rec
		for r := 0; r < rounds; r++ {
			recs = recs[:0]
			for _, n := range partitionCounts {
				for i, c := range cases {
					recs = append(recs, rec{
						topic: topicFor(*prefix, n),
						key:   c.recordKey(),
						value: []byte(fmt.Sprintf("%s:%s:%d:%d:%d", runID, strings.TrimSuffix(g.file, ".jsonl"), r, i, n)),
						caseI: i,
						n:     n,
					})
				}
			}
			parts, err := g.produce(ctx, brokers, recs)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", g.file, r, err)
			}
			if len(parts) != len(recs) {
				return fmt.Errorf("%s round %d: %d results for %d records", g.file, r, len(parts), len(recs))
			}
			for j, p := range parts {
				if p < 0 || int(p) >= recs[j].n {
					return fmt.Errorf("%s round %d: record %d got partition %d of %d", g.file, r, j, p, recs[j].n)
				}
				ledger[string(recs[j].value)] = ledgerEntry{recs[j].topic, p, recs[j].key, recs[j].key == nil}
			}
			if first == nil {
				first = parts
				continue
			}
			var bad []string
			for j := range parts {
				if parts[j] != first[j] {
					bad = append(bad, fmt.Sprintf("case %d n=%d: %d vs %d", recs[j].caseI, recs[j].n, first[j], parts[j]))
				}
			}
			if len(bad) > 0 {
				return fmt.Errorf("%s: round %d disagrees with round 0 on %d cases, e.g. %v", g.file, r, len(bad), bad[:min(5, len(bad))])
			}
		}
		// Same order as the Python generators: per case, every partition count.
		idx := map[[2]int]int32{}
		for j, rc := range recs {
			idx[[2]int{rc.caseI, rc.n}] = first[j]
		}
		var lines []string
		for i, c := range cases {
			for _, n := range partitionCounts {
				lines = append(lines, line(c, n, idx[[2]int{i, n}]))
			}
		}
		path := filepath.Join(*out, g.file)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d cases x %d topics x %d rounds agree (%.1fs) -> %s\n", g.file, len(cases), len(partitionCounts), rounds, time.Since(t0).Seconds(), path)
		fr := fileRecord{File: g.file, Client: g.client, Partition: g.partition, Lines: len(lines), NullKey: g.nullKey, EmptyKey: g.emptyKey, Note: g.note}
		if !g.nullKey {
			// What the client does with nil keys it does not hash, observed: one
			// fresh producer sends probeLen nil-key records in order to the
			// 12-partition topic.
			var probe []rec
			for i := 0; i < probeLen; i++ {
				probe = append(probe, rec{topic: topicFor(*prefix, 12), value: []byte(fmt.Sprintf("%s:%s:probe:%d", runID, strings.TrimSuffix(g.file, ".jsonl"), i)), n: 12})
			}
			parts, err := g.produce(ctx, brokers, probe)
			if err != nil {
				return fmt.Errorf("%s nil-key probe: %w", g.file, err)
			}
			for j, p := range parts {
				ledger[string(probe[j].value)] = ledgerEntry{probe[j].topic, p, nil, true}
			}
			fr.NilProbe, fr.NilKind = parts, probeKind(parts, 12)
			fmt.Printf("  nil keys: %v (%s)\n", parts, fr.NilKind)
		}
		files = append(files, fr)
	}

	if err := consumeBack(ctx, brokers, *prefix, runID, ledger); err != nil {
		return err
	}

	if *only != "" {
		return nil // a partial run does not describe the committed files
	}
	record := map[string]any{
		"broker":           fmt.Sprintf("Apache Kafka %s (scripts/kafka-up, KRaft, 1 node, 127.0.0.1)", *brokerVersion),
		"go":               runtime.Version(),
		"modules":          versions,
		"date":             time.Now().UTC().Format("2006-01-02"),
		"rounds":           rounds,
		"partition_counts": partitionCounts,
		"records_produced": len(ledger),
		"files":            files,
	}
	b, _ := json.MarshalIndent(record, "", " ")
	return os.WriteFile(filepath.Join(*out, "go_clients_run.json"), append(b, '\n'), 0o644)
}

const probeLen = 24

// probeKind names the pattern of a nil-key probe on n partitions.
func probeKind(parts []int32, n int32) string {
	rr, same := true, true
	for i, p := range parts {
		if p != (parts[0]+int32(i))%n {
			rr = false
		}
		if p != parts[0] {
			same = false
		}
	}
	switch {
	case same:
		return "one partition (sticky)"
	case rr && parts[0] == 0:
		return "round-robin from partition 0"
	case rr:
		return "round-robin"
	default:
		return "no fixed pattern (random)"
	}
}

// The versions actually linked into this binary, not what go.mod asks for.
func moduleVersions() map[string]string {
	out := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/IBM/sarama", "github.com/twmb/franz-go", "github.com/segmentio/kafka-go":
			v := d.Version
			if d.Replace != nil {
				v += " => " + d.Replace.Path + " " + d.Replace.Version
			}
			out[d.Path] = v
		}
	}
	return out
}

func versionLine(v map[string]string) string {
	var ks []string
	for k := range v {
		ks = append(ks, k+" "+v[k])
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// usageError is bad input (exit 2), as opposed to a failed run (exit 1).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vectors-regen:", err)
		if _, ok := err.(usageError); ok {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
