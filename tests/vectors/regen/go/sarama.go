package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "partwise-vectors-regen"
	cfg.Version = sarama.V4_1_0_0
	return cfg
}

// Sarama's hash partitioners all send a nil Key to NewRandomPartitioner, and
// hash a non-nil empty ByteEncoder like any other key.
func saramaGenerators() []generator {
	mk := func(file, name string, ctor sarama.PartitionerConstructor) generator {
		return generator{
			file: file, client: "IBM/sarama", partition: name,
			nullKey: false, emptyKey: true,
			note: "nil Key: random partition (not produced); empty ByteEncoder hashed",
			produce: func(ctx context.Context, brokers []string, recs []rec) ([]int32, error) {
				return saramaProduce(ctx, brokers, recs, ctor)
			},
		}
	}
	return []generator{
		mk("sarama_hash_partitioner.jsonl", "NewHashPartitioner", sarama.NewHashPartitioner),
		mk("sarama_reference_hash_partitioner.jsonl", "NewReferenceHashPartitioner", sarama.NewReferenceHashPartitioner),
		mk("sarama_consistent_crc_hash_partitioner.jsonl", "NewConsistentCRCHashPartitioner", sarama.NewConsistentCRCHashPartitioner),
		mk("sarama_murmur2_partitioner.jsonl", "NewMurmur2Partitioner", sarama.NewMurmur2Partitioner),
	}
}

func saramaProduce(ctx context.Context, brokers []string, recs []rec, ctor sarama.PartitionerConstructor) ([]int32, error) {
	cfg := saramaConfig()
	cfg.Producer.Partitioner = ctor
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	// A topic just created may not have a leader on every partition yet.
	cfg.Producer.Retry.Max = 20
	cfg.Producer.Retry.Backoff = 250 * time.Millisecond
	p, err := sarama.NewAsyncProducer(brokers, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	parts := make([]int32, len(recs))
	done := make(chan error, 1)
	go func() {
		var errs []error
		for got := 0; got < len(recs); got++ {
			select {
			case m := <-p.Successes():
				parts[m.Metadata.(int)] = m.Partition
			case e := <-p.Errors():
				errs = append(errs, fmt.Errorf("record %v: %w", e.Msg.Metadata, e.Err))
			case <-ctx.Done():
				done <- ctx.Err()
				return
			}
		}
		done <- errors.Join(errs...)
	}()
	for i, r := range recs {
		m := &sarama.ProducerMessage{Topic: r.topic, Value: sarama.ByteEncoder(r.value), Metadata: i}
		if r.key != nil {
			m.Key = sarama.ByteEncoder(r.key)
		}
		select {
		case p.Input() <- m:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err := <-done; err != nil {
		return nil, err
	}
	return parts, nil
}

// ensureTopics creates PREFIX-n<N> with N partitions where missing, refuses
// one with another count, and waits until every partition has a leader and
// takes writes.
func ensureTopics(ctx context.Context, brokers []string, prefix string) error {
	admin, err := sarama.NewClusterAdmin(brokers, saramaConfig())
	if err != nil {
		return err
	}
	defer admin.Close()
	for _, n := range partitionCounts {
		err := admin.CreateTopic(topicFor(prefix, n), &sarama.TopicDetail{NumPartitions: int32(n), ReplicationFactor: 1}, false)
		if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return fmt.Errorf("create %s: %w", topicFor(prefix, n), err)
		}
	}
	client, err := sarama.NewClient(brokers, saramaConfig())
	if err != nil {
		return err
	}
	defer client.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ready, problem := true, ""
		if err := client.RefreshMetadata(); err != nil {
			ready, problem = false, err.Error()
		}
		for _, n := range partitionCounts {
			t := topicFor(prefix, n)
			ps, err := client.Partitions(t)
			if err != nil {
				ready, problem = false, fmt.Sprintf("%s: %v", t, err)
				continue
			}
			if len(ps) != n {
				return fmt.Errorf("topic %s exists with %d partitions, want %d (use another -topic-prefix)", t, len(ps), n)
			}
			for _, p := range ps {
				if l, err := client.Leader(t, p); err != nil || l == nil {
					ready, problem = false, fmt.Sprintf("%s/%d has no leader yet", t, p)
				}
			}
		}
		if ready {
			return warmUp(ctx, brokers, prefix)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topics not ready after 60s: %s", problem)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
