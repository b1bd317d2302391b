package main

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func fnv32a(b []byte) uint32 {
	h := fnv.New32a()
	h.Write(b)
	return h.Sum32()
}

// franz-go's key partitioners hash any non-nil Key (an empty one included) and
// leave a nil Key to the sticky, random-start partitioner.
func franzGenerators() []generator {
	mk := func(file, name string, p kgo.Partitioner) generator {
		return generator{
			file: file, client: "twmb/franz-go", partition: name,
			nullKey: false, emptyKey: true,
			note: "nil Key: sticky partition (not produced); empty non-nil Key hashed",
			produce: func(ctx context.Context, brokers []string, recs []rec) ([]int32, error) {
				return franzProduce(ctx, brokers, recs, p)
			},
		}
	}
	return []generator{
		// nil p: the client's default, UniformBytesPartitioner(64KiB, true, true, nil),
		// which hashes keyed records with KafkaHasher(murmur2).
		mk("franzgo_default_partitioner.jsonl", "default (UniformBytesPartitioner(64<<10, true, true, nil))", nil),
		mk("franzgo_stickykey_kafkahasher_murmur2.jsonl", "StickyKeyPartitioner(nil) (= KafkaHasher(murmur2))", kgo.StickyKeyPartitioner(nil)),
		mk("franzgo_saramacompathasher_fnv1a.jsonl", "StickyKeyPartitioner(SaramaCompatHasher(fnv32a))", kgo.StickyKeyPartitioner(kgo.SaramaCompatHasher(fnv32a))),
		mk("franzgo_saramahasher_fnv1a_64bit.jsonl", "StickyKeyPartitioner(SaramaHasher(fnv32a)), linux/amd64", kgo.StickyKeyPartitioner(kgo.SaramaHasher(fnv32a))),
		mk("franzgo_saramahasher_crc32_64bit.jsonl", "StickyKeyPartitioner(SaramaHasher(crc32.ChecksumIEEE)), linux/amd64", kgo.StickyKeyPartitioner(kgo.SaramaHasher(crc32.ChecksumIEEE))),
	}
}

func franzProduce(ctx context.Context, brokers []string, recs []rec, p kgo.Partitioner) ([]int32, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(brokers...),
		kgo.ClientID("partwise-vectors-regen"),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedRecords(len(recs) + 1),
	}
	if p != nil {
		opts = append(opts, kgo.RecordPartitioner(p))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	parts := make([]int32, len(recs))
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for i, r := range recs {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: r.topic, Key: r.key, Value: r.value, Context: context.WithValue(ctx, recIndex{}, i)},
			func(got *kgo.Record, err error) {
				defer wg.Done()
				j := got.Context.Value(recIndex{}).(int)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("record %d: %w", j, err))
					return
				}
				parts[j] = got.Partition
			})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return parts, nil
}

type recIndex struct{}

// warmUp writes one record to every partition of the run's topics, which
// franz-go retries until each is accepted: a broker that has just created a
// 1000-partition topic names its leaders in metadata a while before every
// partition takes writes, and Sarama gives up sooner than that.
func warmUp(ctx context.Context, brokers []string, prefix string) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(2*time.Minute),
		kgo.MaxBufferedRecords(4096),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, n := range partitionCounts {
		for p := 0; p < n; p++ {
			recs = append(recs, &kgo.Record{Topic: topicFor(prefix, n), Partition: int32(p), Value: []byte("warm-up")})
		}
	}
	t0 := time.Now()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	fmt.Printf("every partition takes writes (%d warm-up records, %.1fs)\n", len(recs), time.Since(t0).Seconds())
	return nil
}

// consumeBack reads every partition of the run's topics from the start: each
// record of this run (value prefixed with runID) must be stored once, with its
// key, in the partition its produce result named.
func consumeBack(ctx context.Context, brokers []string, prefix, runID string, ledger map[string]ledgerEntry) error {
	var topics []string
	for _, n := range partitionCounts {
		topics = append(topics, topicFor(prefix, n))
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	seen := map[string]bool{}
	var wrong []string
	dups := 0
	nullEmpty := map[string]int{}
	want := runID + ":"
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for len(seen) < len(ledger) {
		fs := cl.PollFetches(cctx)
		if cctx.Err() != nil {
			break
		}
		for _, fe := range fs.Errors() {
			return fmt.Errorf("consume %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := string(r.Value)
			if !strings.HasPrefix(v, want) {
				return // an earlier run's record
			}
			if seen[v] {
				dups++
				return
			}
			seen[v] = true
			e, ok := ledger[v]
			switch {
			case !ok:
				wrong = append(wrong, "unexpected "+v)
			case e.topic != r.Topic || e.partition != r.Partition:
				wrong = append(wrong, fmt.Sprintf("%s in %s/%d, produce result said %s/%d", v, r.Topic, r.Partition, e.topic, e.partition))
			case e.isNull != (r.Key == nil) || string(e.key) != string(r.Key):
				// An empty key stored as a null one (or the reverse) is the
				// client's wire encoding, not a placement: counted, not failed.
				if len(e.key) == 0 && len(r.Key) == 0 {
					nullEmpty[strings.SplitN(v, ":", 3)[1]]++
				} else {
					wrong = append(wrong, fmt.Sprintf("%s stored with key %x, produced with %x", v, r.Key, e.key))
				}
			}
		})
	}
	missing := len(ledger) - len(seen)
	fmt.Printf("consumed back %d of %d produced records: %d missing, %d misplaced or unexpected, %d duplicates\n",
		len(seen), len(ledger), missing, len(wrong), dups)
	for f, c := range nullEmpty {
		fmt.Printf("  %s: %d records produced with an empty key came back with a null one, or the reverse\n", f, c)
	}
	if missing > 0 || len(wrong) > 0 {
		return fmt.Errorf("broker contents disagree with the produce results, e.g. %v", wrong[:min(5, len(wrong))])
	}
	return nil
}
