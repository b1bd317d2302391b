// Package vectors reads the copartitioned consistency vectors
// (tests/vectors/copartitioned/vectors.txt: what the Rust leader assigns to each case), which
// every package of this module replays through its client's interface.
package vectors

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"example.invalid/partwise/bindings/go/copartitioned"
)

// Case is one group: its topics, its members and what the Rust leader gave them.
type Case struct {
	Name     string
	Counts   map[string]int32
	Members  []copartitioned.Member
	Expect   map[string][]copartitioned.TopicPartition
	UserData []byte
}

// Path is the vectors file: $PARTWISE_VECTORS, else the repository's, found from this source
// file (bindings/go/internal/vectors -> tests/vectors/copartitioned/vectors.txt).
func Path() string {
	if p := os.Getenv("PARTWISE_VECTORS"); p != "" {
		return p
	}
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "..", "tests", "vectors", "copartitioned", "vectors.txt")
}

func list(s string) []string {
	if s == "-" {
		return nil
	}
	return strings.Split(s, ",")
}

func tps(s string) ([]copartitioned.TopicPartition, error) {
	var out []copartitioned.TopicPartition
	for _, x := range list(s) {
		i := strings.LastIndexByte(x, ':')
		if i < 0 {
			return nil, fmt.Errorf("bad partition %q", x)
		}
		p, err := strconv.ParseInt(x[i+1:], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("bad partition %q: %w", x, err)
		}
		out = append(out, copartitioned.TopicPartition{Topic: x[:i], Partition: int32(p)})
	}
	return out, nil
}

// Load reads every case of the file at path.
func Load(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []Case
	var c *Case
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		fs := strings.Split(sc.Text(), " ")
		bad := func(err error) error { return fmt.Errorf("%s line %d: %w", path, line, err) }
		switch fs[0] {
		case "case":
			c = &Case{Name: fs[1], Counts: map[string]int32{}, Expect: map[string][]copartitioned.TopicPartition{}}
		case "topic":
			n, err := strconv.ParseInt(fs[2], 10, 32)
			if err != nil {
				return nil, bad(err)
			}
			c.Counts[fs[1]] = int32(n)
		case "member":
			owned, err := tps(fs[4])
			if err != nil {
				return nil, bad(err)
			}
			m := copartitioned.Member{ID: fs[1], Topics: list(fs[3]), Owned: owned}
			if fs[2] != "-" {
				id := fs[2]
				m.InstanceID = &id
			}
			c.Members = append(c.Members, m)
		case "expect":
			e, err := tps(fs[2])
			if err != nil {
				return nil, bad(err)
			}
			c.Expect[fs[1]] = e
		case "userdata":
			b, err := hex.DecodeString(fs[1])
			if err != nil {
				return nil, bad(err)
			}
			c.UserData = b
		case "end":
			cases = append(cases, *c)
		}
	}
	return cases, sc.Err()
}

// Key is one order for comparing partition lists: only the set matters.
func Key(ps []copartitioned.TopicPartition) string {
	s := make([]string, len(ps))
	for i, tp := range ps {
		s[i] = tp.Topic + "\x00" + strconv.Itoa(int(tp.Partition))
	}
	sort.Strings(s)
	return strings.Join(s, "\n")
}
