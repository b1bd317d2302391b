package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

func kafkaGoGenerators() []generator {
	mk := func(file, name string, nullKey, emptyKey bool, note string, bal func() kafka.Balancer) generator {
		return generator{
			file: file, client: "segmentio/kafka-go", partition: name,
			nullKey: nullKey, emptyKey: emptyKey, note: note,
			produce: func(ctx context.Context, brokers []string, recs []rec) ([]int32, error) {
				return kafkaGoProduce(ctx, brokers, recs, bal())
			},
		}
	}
	return []generator{
		mk("kafkago_hash_balancer.jsonl", "&Hash{}", false, true,
			"nil Key: RoundRobin (not produced); empty non-nil Key hashed",
			func() kafka.Balancer { return &kafka.Hash{} }),
		mk("kafkago_reference_hash_balancer.jsonl", "&ReferenceHash{}", false, true,
			"nil Key: RoundRobin (not produced); empty non-nil Key hashed",
			func() kafka.Balancer { return &kafka.ReferenceHash{} }),
		mk("kafkago_crc32_balancer.jsonl", "CRC32Balancer{}", false, false,
			"nil and empty Key: random (not produced)",
			func() kafka.Balancer { return kafka.CRC32Balancer{} }),
		mk("kafkago_crc32_balancer_consistent.jsonl", "CRC32Balancer{Consistent: true}", true, true,
			"nil and empty Key hashed as zero bytes (null_key lines)",
			func() kafka.Balancer { return kafka.CRC32Balancer{Consistent: true} }),
		mk("kafkago_murmur2_balancer.jsonl", "Murmur2Balancer{}", false, true,
			"nil Key: random (not produced); empty non-nil Key hashed",
			func() kafka.Balancer { return kafka.Murmur2Balancer{} }),
		mk("kafkago_murmur2_balancer_consistent.jsonl", "Murmur2Balancer{Consistent: true}", true, true,
			"nil Key hashed as zero bytes (null_key lines); empty Key hashed",
			func() kafka.Balancer { return kafka.Murmur2Balancer{Consistent: true} }),
	}
}

// The partition comes from the Writer's Completion callback, which kafka-go
// calls with the messages' Topic/Partition/Offset set from the produce
// response of the partition they were written to.
func kafkaGoProduce(ctx context.Context, brokers []string, recs []rec, bal kafka.Balancer) ([]int32, error) {
	parts := make([]int32, len(recs))
	index := make(map[string]int, len(recs))
	for i, r := range recs {
		index[string(r.value)] = i
	}
	var mu sync.Mutex
	var errs []error
	got := 0
	w := &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Balancer:     bal,
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
		BatchSize:    len(recs),
		Completion: func(msgs []kafka.Message, err error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range msgs {
				i, ok := index[string(m.Value)]
				if !ok {
					errs = append(errs, fmt.Errorf("completion for an unknown message %q", m.Value))
					continue
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("record %d: %w", i, err))
					continue
				}
				parts[i] = int32(m.Partition)
				got++
			}
		},
	}
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		msgs[i] = kafka.Message{Topic: r.topic, Key: r.key, Value: r.value}
	}
	werr := w.WriteMessages(ctx, msgs...)
	cerr := w.Close()
	mu.Lock()
	defer mu.Unlock()
	if err := errors.Join(append(errs, werr, cerr)...); err != nil {
		return nil, err
	}
	if got != len(recs) {
		return nil, fmt.Errorf("%d completions for %d records", got, len(recs))
	}
	return parts, nil
}
