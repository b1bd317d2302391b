// Harness for the Debian package golang-github-shopify-sarama-dev (Sarama 1.22.1),
// built in GOPATH mode (GO111MODULE=off, GOPATH=<regen>/go:/usr/share/gocode).
// Calls sarama.NewHashPartitioner and sarama.NewReferenceHashPartitioner on every
// key of generated/keys.jsonl and every partition count, and writes
//   generated/sarama_hash_partitioner.jsonl
//   generated/sarama_reference_hash_partitioner.jsonl
// The NULL key goes to a random partition in Sarama, so no NULL-key lines.
//
// usage: sarama-regen <generated dir>
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/Shopify/sarama"
)

var partitionCounts = []int32{1, 2, 3, 6, 7, 8, 12, 100, 1000}

type corpusKey struct {
	KeyHex string  `json:"key_hex"`
	Key    *string `json:"key"`
}

type vector struct {
	KeyHex     string  `json:"key_hex"`
	Key        *string `json:"key"`
	Partitions int32   `json:"partitions"`
	Partition  int32   `json:"partition"`
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sarama-regen <generated dir>")
		os.Exit(2)
	}
	dir := os.Args[1]
	f, err := os.Open(filepath.Join(dir, "keys.jsonl"))
	must(err)
	var keys []corpusKey
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var k corpusKey
		must(json.Unmarshal(sc.Bytes(), &k))
		keys = append(keys, k)
	}
	must(sc.Err())
	f.Close()

	for _, gen := range []struct {
		file string
		ctor sarama.PartitionerConstructor
	}{
		{"sarama_hash_partitioner.jsonl", sarama.NewHashPartitioner},
		{"sarama_reference_hash_partitioner.jsonl", sarama.NewReferenceHashPartitioner},
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		lines := 0
		for _, k := range keys {
			raw, err := hex.DecodeString(k.KeyHex)
			must(err)
			for _, n := range partitionCounts {
				p := gen.ctor("t")
				if !p.RequiresConsistency() {
					must(fmt.Errorf("%s: partitioner not consistent", gen.file))
				}
				msg := &sarama.ProducerMessage{Topic: "t", Key: sarama.ByteEncoder(raw), Value: sarama.StringEncoder("v")}
				part, err := p.Partition(msg, n)
				must(err)
				must(enc.Encode(vector{k.KeyHex, k.Key, n, part}))
				lines++
			}
		}
		out := filepath.Join(dir, gen.file)
		must(os.WriteFile(out, buf.Bytes(), 0o644))
		fmt.Printf("wrote %s (%d lines)\n", out, lines)
	}
}
