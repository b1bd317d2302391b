package copartitioned_test

import (
	"bytes"
	"testing"

	"example.invalid/partwise/bindings/go/copartitioned"
	"example.invalid/partwise/bindings/go/internal/vectors"
)

// Every case of the consistency vectors: the Rust leader's partitions and user data bytes.
func TestVectors(t *testing.T) {
	cases, err := vectors.Load(vectors.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 878 {
		t.Fatalf("%d cases, want the file's 878 or more", len(cases))
	}
	for _, c := range cases {
		r := copartitioned.Assign(c.Members, c.Counts)
		for _, m := range c.Members {
			if got, want := vectors.Key(r.Partitions[m.ID]), vectors.Key(c.Expect[m.ID]); got != want {
				t.Fatalf("%s member %s: got\n%s\nwant\n%s", c.Name, m.ID, got, want)
			}
		}
		if !bytes.Equal(r.UserData, c.UserData) {
			t.Fatalf("%s: user data %x, want %x", c.Name, r.UserData, c.UserData)
		}
		groups, ok := copartitioned.DecodeUnitGroups(r.UserData)
		if !ok || !bytes.Equal(copartitioned.EncodeUnitGroups(groups), r.UserData) {
			t.Fatalf("%s: user data does not read back", c.Name)
		}
	}
	t.Logf("%d cases replayed", len(cases))
}

func TestOwnedRoundTrip(t *testing.T) {
	owned := []copartitioned.TopicPartition{{"b", 3}, {"a", 1}, {"b", 0}, {"日本", 7}}
	b := copartitioned.EncodeOwned(owned, 42)
	got, gen, ok := copartitioned.DecodeOwned(b)
	if !ok || gen != 42 || len(got) != 4 || got[0] != (copartitioned.TopicPartition{"a", 1}) {
		t.Fatalf("got %v %d %v", got, gen, ok)
	}
	for i := 0; i < len(b); i++ {
		if _, _, ok := copartitioned.DecodeOwned(b[:i]); ok {
			t.Fatalf("a truncation to %d bytes read as owned partitions", i)
		}
	}
	if _, _, ok := copartitioned.DecodeOwned(append(b, 0)); ok {
		t.Fatal("trailing bytes read as owned partitions")
	}
	if _, ok := copartitioned.DecodeUnitGroups(b); ok {
		t.Fatal("owned partitions read as unit groups")
	}
}

func TestJavaOrder(t *testing.T) {
	// U+FF61 sorts before U+1F600 in UTF-8 byte order but after it in UTF-16.
	if !copartitioned.JavaLess("\U0001F600", "\uFF61") || copartitioned.JavaLess("\uFF61", "\U0001F600") {
		t.Fatal("not Java's order")
	}
	if !copartitioned.JavaLess("a", "b") || !copartitioned.JavaLess("a", "ab") {
		t.Fatal("not Java's order on ASCII")
	}
}
