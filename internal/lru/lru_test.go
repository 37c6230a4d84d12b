package lru

import (
	"strings"
	"testing"
)

func TestCacheDropsTheLeastRecentlyUsed(t *testing.T) {
	c := New[string, int](2)
	made := 0
	add := func(k string) int { return c.GetOrAdd(k, func() int { made++; return made }) }
	if add("a") != 1 || add("b") != 2 || add("a") != 1 || made != 2 {
		t.Fatal("GetOrAdd made a value for a key it held")
	}
	add("c") // drops b, a was used more recently
	if _, ok := c.Get("b"); ok {
		t.Fatal("b kept")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatal("a dropped")
	}
	c.Put("c", 30)
	c.Put("d", 4) // drops a: c was put after a was read
	if _, ok := c.Get("a"); ok || c.Len() != 2 {
		t.Fatalf("after Put: a kept or %d values", c.Len())
	}
	if v, _ := c.Get("c"); v != 30 {
		t.Fatalf("c = %d, want 30", v)
	}
	c.DeleteFunc(func(k string) bool { return strings.HasPrefix(k, "c") })
	if _, ok := c.Get("c"); ok || c.Len() != 1 {
		t.Fatal("DeleteFunc kept c")
	}
	if New[int, int](0).max != 1 {
		t.Fatal("a cache must hold at least one value")
	}
}
